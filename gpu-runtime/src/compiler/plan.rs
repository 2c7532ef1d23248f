//! Resolving a [`SourceModule`] into everything its output depends on (options, target,
//! compiler, headers, prelude) and the cache key of that, without loading NVRTC when its
//! library file can be predicted: a cache hit costs no more than reading the entry.

use std::path::PathBuf;

use crate::compiler::cache::{self, CacheKey, KeyMaterial};
use crate::compiler::nvrtc::Target;
use crate::compiler::sha256;
use crate::compiler::source_module::{Compiler, SourceModule};
use crate::compiler::target::{choose_target, no_arch, parse_target};
use crate::compiler::toolchain;
use crate::error::Result;
use gpu_cuda_source::include_scan::{include_dirs_of, included_headers};

/// Everything a compile depends on, resolved: what the cache key is computed from.
pub(crate) struct Plan<'a> {
    pub(crate) spec: &'a SourceModule,
    pub(crate) options: Vec<String>,
    pub(crate) arch: Arch,
    pub(crate) cache_dir: Option<std::borrow::Cow<'a, std::path::Path>>,
    /// Where in `material` what is compiled (source, name, options, kernels, headers,
    /// prelude) starts: the part of the key's material that does not name the compiler.
    pub(super) content_start: usize,
    /// The key's material: the compiler and target, then what is compiled.
    pub(crate) material: KeyMaterial,
    pub(crate) key: CacheKey,
}

/// The compiler and target: for NVRTC what was asked for; for nvcc its `-arch` and `-code` as
/// given, its path and `--version`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Arch {
    Nvrtc {
        target: TargetRequest,
        /// The key names the loader's search path (`LD_LIBRARY_PATH`) rather than NVRTC's
        /// version, and an entry names the library file the search found (see [`toolchain`]).
        by_search: bool,
    },
    Nvcc {
        arch: String,
        code: Option<String>,
        path: PathBuf,
        version: String,
    },
}

/// The NVRTC target asked for. The best one for a device depends on what the NVRTC loaded
/// supports, so it is chosen only when compiling: a cache hit never loads NVRTC.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TargetRequest {
    Given(Target),
    Device((u32, u32)),
}

impl TargetRequest {
    /// The request as key bytes: a tag, then the architecture's major and minor numbers.
    pub(super) fn key_bytes(self) -> [u8; 9] {
        let (tag, major, minor) = match self {
            TargetRequest::Given(Target::Cubin { major, minor }) => (0, major, minor),
            TargetRequest::Given(Target::Ptx { major, minor }) => (1, major, minor),
            TargetRequest::Device((major, minor)) => (2, major, minor),
        };
        let mut b = [tag; 9];
        b[1..5].copy_from_slice(&major.to_le_bytes());
        b[5..].copy_from_slice(&minor.to_le_bytes());
        b
    }

    pub(super) fn resolve(self, nvrtc: &toolchain::LoadedNvrtc) -> Result<Target> {
        match self {
            TargetRequest::Given(t) => Ok(t),
            TargetRequest::Device(cc) => choose_target(cc, &nvrtc.archs),
        }
    }
}

impl SourceModule {
    /// Resolves options, target and compiler, and computes the key. `cc` is the device's
    /// compute capability, for the default architecture. NVRTC stays unloaded when its file
    /// can be predicted, so that a cache hit costs no more than reading the entry.
    pub(crate) fn plan(&self, cc: Option<(u32, u32)>) -> Result<Plan<'_>> {
        let cache_dir = self.cache_dir_setting();
        let mut options = self.options.clone().unwrap_or_else(cache::default_flags);
        for dir in &self.include_dirs {
            options.push(format!("-I{}", dir.display()));
        }
        // The key is built in one buffer: first the compiler and target (so that the content
        // need not be copied into the key after it is made), then the content.
        let capacity = 256
            + self.name.len()
            + self.source.len()
            + self
                .headers
                .iter()
                .map(|(n, c)| n.len() + c.len() + 16)
                .sum::<usize>()
            + options
                .iter()
                .map(|o| o.len() + 8)
                .chain(self.kernels.iter().map(|k| k.len() + 8))
                .sum::<usize>();
        let (arch, mut material) = match &self.compiler {
            Compiler::Nvrtc => {
                let target = match self.code.as_deref().or(self.arch.as_deref()) {
                    Some(a) => TargetRequest::Given(parse_target(a)?),
                    None => TargetRequest::Device(cc.ok_or_else(no_arch)?),
                };
                match toolchain::library_path() {
                    Some(path) => {
                        let material = nvrtc_search_material(&path, target, capacity + path.len());
                        (
                            Arch::Nvrtc {
                                target,
                                by_search: true,
                            },
                            material,
                        )
                    }
                    None => {
                        let nvrtc = toolchain::loaded_nvrtc()?;
                        let target = TargetRequest::Given(target.resolve(nvrtc)?);
                        let material = nvrtc_version_material(nvrtc, target, capacity);
                        (
                            Arch::Nvrtc {
                                target,
                                by_search: false,
                            },
                            material,
                        )
                    }
                }
            }
            Compiler::Nvcc(path) => {
                let path = match path {
                    Some(p) => p.clone(),
                    None => toolchain::find_nvcc()?,
                };
                let version = toolchain::nvcc_version(&path)?;
                let arch = match &self.arch {
                    Some(a) => a.clone(),
                    None => {
                        let (major, minor) = cc.ok_or_else(no_arch)?;
                        format!("sm_{major}{minor}")
                    }
                };
                let code = self.code.clone();
                let mut h = KeyMaterial::with_capacity(capacity + version.len());
                h.field(b"nvcc").field(path.as_os_str().as_encoded_bytes());
                h.field(version.as_bytes());
                h.field(format!("{arch:?} {code:?}").as_bytes());
                let arch = Arch::Nvcc {
                    arch,
                    code,
                    path,
                    version,
                };
                (arch, h)
            }
        };
        let content_start = material.len();
        // The text compiled is a function of these three (see `Plan::text`).
        let wrap: &[u8] = if self.no_extern_c {
            b"as written"
        } else {
            b"in extern C"
        };
        material
            .field(self.name.as_bytes())
            .field(wrap)
            .field(self.source.as_bytes());
        material.list(&options).list(&self.kernels);
        if self.compiler == Compiler::Nvrtc {
            // The built-in headers (the prelude includes some): a new text of one compiles
            // again.
            material.field(b"built-in headers").field(&BUILTIN_DIGEST);
            if self.prelude {
                material.field(b"prelude").field(&PRELUDE_DIGEST);
            }
        }
        // The headers given in memory, by name and contents: an edited header is a new key.
        if !self.headers.is_empty() {
            material.field(b"headers in memory");
            material.field(&(self.headers.len() as u64).to_le_bytes());
            for (name, contents) in &self.headers {
                material.field(name.as_bytes()).field(contents);
            }
        }
        // The include directories are the `-I` options, those of `include_dirs` (added above)
        // and those given as options: a `#[kernel]` passes the directory of its file and its
        // `include_dirs` that way. (Without options there are none, and the scan's code is
        // not even reached: a hit in a new process pays for each page of code it runs first.)
        if !options.is_empty() {
            let dirs = include_dirs_of(&options);
            for (name, contents) in included_headers(&self.source, &dirs) {
                material.field(name.as_bytes()).field(&contents);
            }
        }
        Ok(Plan {
            spec: self,
            options,
            arch,
            cache_dir,
            content_start,
            key: material.key(),
            material,
        })
    }
}

/// The prelude's SHA-256, computed by the compiler: in every key's material in place of its
/// text, which would be most of it.
const PRELUDE_DIGEST: [u8; 32] = sha256::soft_digest(crate::compiler::headers::NVRTC_PRELUDE.as_bytes());

/// A fingerprint of the built-in headers' names and texts (64-bit FNV-1a, each text after its
/// name and length), computed by the compiler: in every NVRTC key's material, so that a new
/// text of one compiles again. Not a defence against collisions made on purpose (the texts are
/// this crate's), only a version of them; SHA-256 of 40 KB is more than the const evaluator
/// runs quickly.
const BUILTIN_DIGEST: [u8; 8] = {
    const fn fnv(mut h: u64, bytes: &[u8]) -> u64 {
        let mut i = 0;
        while i < bytes.len() {
            h ^= bytes[i] as u64;
            h = h.wrapping_mul(0x100000001b3);
            i += 1;
        }
        h
    }
    let mut h = 0xcbf29ce484222325u64;
    let mut i = 0;
    while i < gpu_cuda_source::BUILTIN_HEADERS.len() {
        let (name, text) = gpu_cuda_source::BUILTIN_HEADERS[i];
        h = fnv(h, name.as_bytes());
        h = fnv(h, &(text.len() as u64).to_le_bytes());
        h = fnv(h, text.as_bytes());
        i += 1;
    }
    h.to_le_bytes()
};

/// The start of the key's material for a compile by the NVRTC library that the loader's search
/// along `path` finds, with room for `capacity` bytes in all: the entry stores which file that
/// was, and a hit checks it is still there unchanged ([`toolchain::LibraryIdentity`]). What is
/// compiled follows.
pub(super) fn nvrtc_search_material(
    path: &std::ffi::OsStr,
    target: TargetRequest,
    capacity: usize,
) -> KeyMaterial {
    let mut h = KeyMaterial::with_capacity(capacity);
    h.field(b"nvrtc found along").field(path.as_encoded_bytes());
    h.field(&target.key_bytes());
    h
}

/// The start of the key's material for a compile by an NVRTC known only by its version, with
/// its target chosen, with room for `capacity` bytes in all. What is compiled follows.
pub(super) fn nvrtc_version_material(
    nvrtc: &toolchain::LoadedNvrtc,
    target: TargetRequest,
    capacity: usize,
) -> KeyMaterial {
    let mut h = KeyMaterial::with_capacity(capacity);
    h.field(b"nvrtc version").field(nvrtc.label().as_bytes());
    h.field(&target.key_bytes());
    h
}

#[cfg(test)]
mod tests {
    use crate::compiler::nvrtc::Target;
    use crate::compiler::source_module::SourceModule;
    use crate::error::Error;

    const SRC: &str = "#include \"sub/scale.h\"\n__global__ void k(float *x) { x[0] = SCALE; }\n";

    /// A header given in memory is found by the name its `#include` gives (from the source and
    /// from another header), and its contents are part of the key.
    #[test]
    fn headers_in_memory_are_compiled_and_keyed() {
        let m = |scale: &'static str| {
            SourceModule::new(SRC)
                .arch("compute_75")
                .no_cache()
                .kernels(["k"])
                .header(
                    "sub/scale.h",
                    b"#include \"value.h\"\n#define SCALE VALUE\n".as_slice(),
                )
                .header("value.h", scale.as_bytes())
        };
        let key = |m: SourceModule| m.plan(None).unwrap().key;
        assert_ne!(key(m("#define VALUE 2.0f\n")), key(m("#define VALUE 3.0f\n")));
        assert_eq!(key(m("#define VALUE 2.0f\n")), key(m("#define VALUE 2.0f\n")));
        let ptx = match m("#define VALUE 2.5f\n").compile() {
            Err(Error::NvrtcNotFound) => return eprintln!("skipped: NVRTC not found"),
            r => r.unwrap(),
        };
        assert_eq!(ptx.target, Target::Ptx { major: 7, minor: 5 });
        // 2.5f is 0x40200000, stored as that integer.
        let text = String::from_utf8_lossy(&ptx.image);
        assert!(
            text.contains("1075838976"),
            "the header's value is compiled in:\n{text}"
        );
    }
}
