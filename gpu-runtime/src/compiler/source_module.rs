//! [`SourceModule`]: CUDA C built at run time, compiled with NVRTC or `nvcc` through the
//! compile cache, and loaded once per context.

use std::borrow::Cow;
use std::path::{Path, PathBuf};

use crate::compiler::build_dir::make_build_dir;
use crate::compiler::cache::{self, CacheKey, CacheStatus, KeyHasher, Lookup};
use crate::compiler::nvcc;
use crate::compiler::nvrtc::{self, CompiledModule, Target};
use crate::compiler::source::ModuleSource;
use crate::compiler::target::{choose_target, no_arch, parse_target};
use crate::compiler::toolchain;
use crate::error::{Error, Result};

/// Which compiler turns CUDA C into a module image.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Compiler {
    /// NVRTC, the runtime compiler library: no external program, no temporary files.
    #[default]
    Nvrtc,
    /// The `nvcc` program: found on `PATH` (then `$CUDA_HOME/bin`, `/usr/local/cuda/bin`)
    /// when `None`, else the given path.
    Nvcc(Option<PathBuf>),
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum CacheSetting {
    Default,
    Dir(PathBuf),
    Off,
}

/// CUDA C source compiled at run time: PyCUDA's `SourceModule` and `compile`.
///
/// A builder: set options, then [`load`](SourceModule::load) it into a context (compiled and
/// loaded once per context, whoever asks: see [`Context::clear_module_cache`](crate::Context::clear_module_cache)) or
/// [`compile`](SourceModule::compile) it to an image without a GPU. Compiles go through the
/// on-disk cache described in [`cache`](crate::compiler::cache).
///
/// ```no_run
/// use gpu_runtime::{Context, SourceModule, Arg, ArgType};
/// # fn main() -> gpu_runtime::Result<()> {
/// let ctx = Context::default()?;
/// let n = 256;
/// let src = format!("__global__ void fill(float *y) {{ y[threadIdx.x] = {n}.0f; }}");
/// let module = SourceModule::new(src).options(["-use_fast_math"]).load(&ctx)?;
/// let fill = module.get_function("fill")?.prepare_args(&[ArgType::MutPtr])?;
/// let mut y = ctx.alloc_zeros::<f32>(n)?;
/// fill.prepared_call(1, n as u32, &[Arg::output(&mut y)])?;
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct SourceModule {
    source: Cow<'static, str>,
    name: Cow<'static, str>,
    compiler: Compiler,
    options: Option<Vec<String>>,
    keep: bool,
    no_extern_c: bool,
    arch: Option<String>,
    code: Option<String>,
    include_dirs: Vec<PathBuf>,
    cache: CacheSetting,
    kernels: Vec<Cow<'static, str>>,
    prelude: bool,
}

/// The result of [`SourceModule::compile_report`]: the image and what the cache did.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct CompileReport {
    /// The compiled image and kernel symbols.
    pub module: CompiledModule,
    /// Hit, miss, ...
    pub status: CacheStatus,
    /// The cache key of this compile.
    pub key: CacheKey,
    /// The cache entry's file, when caching is on.
    pub entry: Option<PathBuf>,
    /// The build directory kept by [`SourceModule::keep`].
    pub build_dir: Option<PathBuf>,
}

/// Everything a compile depends on, resolved: what the cache key is computed from.
pub(crate) struct Plan<'a> {
    pub(crate) spec: &'a SourceModule,
    pub(crate) text: Cow<'a, str>,
    pub(crate) options: Vec<String>,
    pub(crate) arch: Arch,
    pub(crate) compiler_label: String,
    pub(crate) nvcc: Option<PathBuf>,
    pub(crate) cache_dir: Option<PathBuf>,
    pub(crate) key: CacheKey,
}

/// The target: for NVRTC one [`Target`]; for nvcc its `-arch` and `-code` as given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Arch {
    Nvrtc(Target),
    Nvcc { arch: String, code: Option<String> },
}

impl SourceModule {
    /// A module built from `source`, named `kernel.cu` in compiler messages.
    pub fn new(source: impl Into<Cow<'static, str>>) -> SourceModule {
        SourceModule {
            source: source.into(),
            name: Cow::Borrowed("kernel.cu"),
            compiler: Compiler::Nvrtc,
            options: None,
            keep: false,
            no_extern_c: false,
            arch: None,
            code: None,
            include_dirs: Vec::new(),
            cache: CacheSetting::Default,
            kernels: Vec::new(),
            prelude: true,
        }
    }

    /// The module a `#[kernel]` source compiles to: the same key, so the same compile, as
    /// the macro's own `prepare`.
    pub fn from_static(source: &'static ModuleSource) -> SourceModule {
        let mut m = SourceModule::new(source.source())
            .name(source.name())
            .no_extern_c(true)
            .prelude(source.prelude());
        m.kernels = source.kernels().iter().map(|k| Cow::Borrowed(*k)).collect();
        if !source.options().is_empty() {
            m.options = Some(source.options().iter().map(|o| o.to_string()).collect());
        }
        m
    }

    /// The file name compiler messages report lines against (default `kernel.cu`).
    pub fn name(mut self, name: impl Into<Cow<'static, str>>) -> Self {
        self.name = name.into();
        self
    }

    /// Chooses the compiler (default [`Compiler::Nvrtc`]).
    pub fn compiler(mut self, compiler: Compiler) -> Self {
        self.compiler = compiler;
        self
    }

    /// Compiles with `nvcc` found on `PATH` (PyCUDA's default).
    pub fn nvcc(self) -> Self {
        self.compiler(Compiler::Nvcc(None))
    }

    /// Compiler options. Without this call the options come from
    /// `GPU_RUNTIME_DEFAULT_NVRTC_FLAGS` (whitespace-separated), PyCUDA's `DEFAULT_NVCC_FLAGS`.
    pub fn options<I, S>(mut self, options: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.options = Some(options.into_iter().map(Into::into).collect());
        self
    }

    /// Keeps the build directory (source, options, image, log; for nvcc its whole work
    /// directory) and prints where it is on standard error. A kept build always compiles, so
    /// that the directory is complete; the result is still cached.
    pub fn keep(mut self, keep: bool) -> Self {
        self.keep = keep;
        self
    }

    /// Leaves the source as it is instead of wrapping its code in `extern "C" { … }` (the
    /// leading `#include`s and other preprocessor lines are always left outside, so C++ headers
    /// such as `cuda_fp16.h` work either way); C++ kernels are then found by the names given
    /// to [`kernels`](Self::kernels) (NVRTC), or by their mangled names.
    pub fn no_extern_c(mut self, yes: bool) -> Self {
        self.no_extern_c = yes;
        self
    }

    /// Whether NVRTC includes the [`NVRTC_PRELUDE`](crate::compiler::NVRTC_PRELUDE) before the source
    /// (default `true`): the typedefs nvcc's host headers give every kernel (`uint`, `ushort`,
    /// `ulong`, `u_int`, ...), so that kernels written for nvcc compile unchanged. Turn it off
    /// for a source that declares one of those names as another type. It is part of the cache
    /// key; nvcc, which has the host headers, never gets it.
    pub fn prelude(mut self, yes: bool) -> Self {
        self.prelude = yes;
        self
    }

    /// The target architecture: `sm_XY` (a cubin) or `compute_XY` (PTX, compiled by the
    /// driver when loaded). Default: the context's device. For nvcc this is `-arch`.
    pub fn arch(mut self, arch: impl Into<String>) -> Self {
        self.arch = Some(arch.into());
        self
    }

    /// nvcc's `-code`. With NVRTC it replaces `arch` as the target (`sm_XY` or `compute_XY`).
    pub fn code(mut self, code: impl Into<String>) -> Self {
        self.code = Some(code.into());
        self
    }

    /// Adds a directory to search for `#include`d headers. The headers the source includes
    /// from these directories, and the headers those include in turn, are part of the cache
    /// key, so editing any of them compiles anew (an include whose name is a macro is not
    /// followed).
    pub fn include_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.include_dirs.push(dir.into());
        self
    }

    /// Adds several include directories.
    pub fn include_dirs<I: IntoIterator<Item = P>, P: Into<PathBuf>>(mut self, dirs: I) -> Self {
        self.include_dirs.extend(dirs.into_iter().map(Into::into));
        self
    }

    /// The on-disk cache directory; `None` disables the cache for this module. Default:
    /// [`default_cache_dir`](crate::compiler::cache::default_cache_dir). `GPU_RUNTIME_DISABLE_CACHE`
    /// overrides this.
    pub fn cache_dir(mut self, dir: Option<impl Into<PathBuf>>) -> Self {
        self.cache = match dir {
            Some(d) => CacheSetting::Dir(d.into()),
            None => CacheSetting::Off,
        };
        self
    }

    /// Compiles without the on-disk cache, neither reading nor writing it (PyCUDA's
    /// `SourceModule(source, cache_dir=False)`): `cache_dir(None)` without its type annotation.
    ///
    /// ```no_run
    /// use gpu_runtime::{Context, SourceModule};
    /// let ctx = Context::default()?;
    /// let module = SourceModule::new("__global__ void nop() {}").no_cache().load(&ctx)?;
    /// # Ok::<(), gpu_runtime::Error>(())
    /// ```
    pub fn no_cache(mut self) -> Self {
        self.cache = CacheSetting::Off;
        self
    }

    /// Kernel names (NVRTC name expressions, e.g. `"scale<float>"`) to resolve at compile
    /// time, for C++ kernels under [`no_extern_c`](Self::no_extern_c): `get_function` then
    /// finds them by these names.
    pub fn kernels<I, S>(mut self, names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.kernels = names.into_iter().map(|s| Cow::Owned(s.into())).collect();
        self
    }

    /// The source as written.
    pub fn source(&self) -> &str {
        &self.source
    }

    pub(crate) fn kernel_names(&self) -> &[Cow<'static, str>] {
        &self.kernels
    }

    /// The architecture was given ([`arch`](Self::arch) or [`code`](Self::code)): compiling
    /// needs no device to pick one.
    pub(crate) fn has_target(&self) -> bool {
        self.arch.is_some() || self.code.is_some()
    }

    fn cache_dir_setting(&self) -> Option<PathBuf> {
        if cache::cache_disabled_by_env() {
            return None;
        }
        match &self.cache {
            CacheSetting::Default => cache::default_cache_dir(),
            CacheSetting::Dir(d) => Some(d.clone()),
            CacheSetting::Off => None,
        }
    }

    /// Resolves options, target and compiler, and computes the key. `cc` is the device's
    /// compute capability, for the default architecture.
    pub(crate) fn plan(&self, cc: Option<(u32, u32)>) -> Result<Plan<'_>> {
        let cache_dir = self.cache_dir_setting();
        let text: Cow<'_, str> = if self.no_extern_c {
            Cow::Borrowed(&self.source)
        } else {
            Cow::Owned(wrap_extern_c(&self.name, &self.source))
        };
        let mut options = self.options.clone().unwrap_or_else(cache::default_flags);
        for dir in &self.include_dirs {
            options.push(format!("-I{}", dir.display()));
        }
        let mut h = KeyHasher::new();
        let (arch, compiler_label, nvcc) = match &self.compiler {
            Compiler::Nvrtc => {
                let info = toolchain::nvrtc(cache_dir.as_deref())?;
                let target = match self.code.as_deref().or(self.arch.as_deref()) {
                    Some(a) => parse_target(a)?,
                    None => {
                        let cc = cc.ok_or_else(no_arch)?;
                        choose_target(cc, &info.archs)?
                    }
                };
                h.field(b"nvrtc").field(info.identity.as_bytes());
                if self.prelude {
                    h.field(b"prelude")
                        .field(crate::compiler::headers::NVRTC_PRELUDE.as_bytes());
                }
                (Arch::Nvrtc(target), info.label(), None)
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
                h.field(b"nvcc").field(path.as_os_str().as_encoded_bytes());
                let code = self.code.clone();
                (Arch::Nvcc { arch, code }, version, Some(path))
            }
        };
        h.field(compiler_label.as_bytes());
        h.field(format!("{arch:?}").as_bytes());
        h.field(self.name.as_bytes()).field(text.as_bytes());
        h.list(&options).list(&self.kernels);
        for (name, contents) in included_headers(&self.source, &self.include_dirs) {
            h.field(name.as_bytes()).field(&contents);
        }
        Ok(Plan {
            spec: self,
            text,
            options,
            arch,
            compiler_label,
            nvcc,
            cache_dir,
            key: h.finish(),
        })
    }
}

/// `source` with its code in `extern "C" { … }`, so that kernels keep their C names. The
/// leading preprocessor lines (includes, defines, comments) stay outside the block: C++ headers
/// such as `cuda_fp16.h` do not compile with C linkage. `#line` keeps the compiler's line
/// numbers those of the source as written.
fn wrap_extern_c(name: &str, source: &str) -> String {
    let mut prologue = 0; // bytes of leading preprocessor lines
    let mut lines = 0;
    let mut continued = false;
    for line in source.split_inclusive('\n') {
        let t = line.trim();
        let directive = continued || t.is_empty() || t.starts_with('#') || t.starts_with("//");
        if !directive {
            break;
        }
        continued = t.starts_with('#') && t.ends_with('\\') || continued && t.ends_with('\\');
        prologue += line.len();
        lines += 1;
    }
    let (head, body) = source.split_at(prologue);
    let newline = if head.is_empty() || head.ends_with('\n') {
        ""
    } else {
        "\n"
    };
    format!(
        "#line 1 \"{name}\"\n{head}{newline}extern \"C\" {{\n#line {} \"{name}\"\n{body}\n}}\n",
        lines + 1
    )
}

/// The most header files [`included_headers`] reads for one key: far more than real code
/// includes, and a bound on the work an include directory like a whole toolkit's can cause.
const MAX_HASHED_HEADERS: usize = 4096;

/// `(path, contents)` of every header `source` pulls in from `dirs`, directly or through other
/// such headers, in a deterministic order, so that editing any of them changes the cache key.
/// A quoted include is also looked for beside the header that includes it, as the compiler
/// does. It over-approximates (an `#include` in `#if 0` counts too) and cannot follow an
/// include whose name is a macro.
fn included_headers(source: &str, dirs: &[PathBuf]) -> Vec<(String, Vec<u8>)> {
    if dirs.is_empty() {
        return Vec::new();
    }
    let mut found: Vec<(String, Vec<u8>)> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    // Files still to scan: their text and the directory they are in (none for the source).
    let mut pending: Vec<(String, Option<PathBuf>)> = vec![(source.to_owned(), None)];
    while let Some((text, here)) = pending.pop() {
        let mut next = Vec::new();
        for (name, quoted) in include_names(&text) {
            let beside = here.as_ref().filter(|_| quoted).map(|h| h.join(name));
            for path in beside.into_iter().chain(dirs.iter().map(|d| d.join(name))) {
                let Ok(contents) = std::fs::read(&path) else {
                    continue;
                };
                let id = path.canonicalize().unwrap_or_else(|_| path.clone());
                if found.len() >= MAX_HASHED_HEADERS || !seen.insert(id) {
                    continue;
                }
                next.push((
                    String::from_utf8_lossy(&contents).into_owned(),
                    path.parent().map(Path::to_path_buf),
                ));
                found.push((path.display().to_string(), contents));
            }
        }
        // Scanned depth first, in the order the includes appear.
        pending.extend(next.into_iter().rev());
    }
    found
}

/// The header names of the `#include` lines in `text`, each with whether it was quoted.
fn include_names(text: &str) -> Vec<(&str, bool)> {
    let mut names = Vec::new();
    for line in text.lines() {
        let Some(rest) = line.trim_start().strip_prefix('#') else {
            continue;
        };
        let Some(rest) = rest.trim_start().strip_prefix("include") else {
            continue;
        };
        let rest = rest.trim();
        if let Some(name) = rest.strip_prefix('"').and_then(|r| r.split('"').next()) {
            names.push((name, true));
        } else if let Some(name) = rest.strip_prefix('<').and_then(|r| r.split('>').next()) {
            names.push((name, false));
        }
    }
    names
}

impl Plan<'_> {
    pub(crate) fn spec_keep(&self) -> bool {
        self.spec.keep
    }

    pub(crate) fn spec_name(&self) -> &str {
        &self.spec.name
    }

    /// The C source to read kernel declarations from (as written, without the wrapper).
    pub(crate) fn declarations(&self) -> &str {
        &self.spec.source
    }

    /// Finds the image in the disk cache, or compiles and stores it.
    pub(crate) fn build(&self) -> Result<CompileReport> {
        let entry = self.cache_dir.as_ref().map(|d| cache::entry_path(d, &self.key));
        let mut status = CacheStatus::Disabled;
        if let Some(dir) = &self.cache_dir {
            status = CacheStatus::Miss;
            if !self.spec.keep {
                match cache::load(dir, &self.key) {
                    Lookup::Found(module) if self.fits(&module) => {
                        return Ok(CompileReport {
                            module,
                            status: CacheStatus::Hit,
                            key: self.key,
                            entry,
                            build_dir: None,
                        })
                    }
                    Lookup::Found(_) | Lookup::Invalid => status = CacheStatus::Replaced,
                    Lookup::Absent => {}
                    Lookup::Unreadable(e) => {
                        cache::warn_unusable(dir, &e);
                        status = CacheStatus::Unavailable;
                    }
                    Lookup::Untrusted(why) => {
                        cache::warn_untrusted(&why);
                        status = CacheStatus::Untrusted;
                    }
                }
            } else if let Err(why) = cache::trusted_dir(dir) {
                cache::warn_untrusted(&why);
                status = CacheStatus::Untrusted;
            }
        }
        let (module, build_dir) = self.compile()?;
        let usable = |s: CacheStatus| !matches!(s, CacheStatus::Unavailable | CacheStatus::Untrusted);
        if let Some(dir) = &self.cache_dir {
            if usable(status) {
                if let Err(e) = cache::store(dir, &self.key, &module) {
                    cache::warn_unusable(dir, &e);
                    status = CacheStatus::Unavailable;
                }
            }
        }
        Ok(CompileReport {
            module,
            status,
            key: self.key,
            entry: entry.filter(|_| usable(status)),
            build_dir,
        })
    }

    /// An entry must name one symbol per requested kernel; anything else is foreign.
    fn fits(&self, m: &CompiledModule) -> bool {
        m.lowered_names.len() == self.spec.kernels.len()
    }

    fn compile(&self) -> Result<(CompiledModule, Option<PathBuf>)> {
        match &self.arch {
            Arch::Nvrtc(target) => {
                let kernels: Vec<&str> = self.spec.kernels.iter().map(|k| k.as_ref()).collect();
                let options: Vec<&str> = self.options.iter().map(String::as_str).collect();
                let result = nvrtc::compile_with(
                    &self.text,
                    &self.spec.name,
                    &kernels,
                    &options,
                    *target,
                    self.spec.prelude,
                );
                let module = result.map_err(|e| match e {
                    Error::Compile(mut c) => {
                        // The log's line numbers are the source's (see `#line` in `plan`).
                        c.source_code = self.spec.source.to_string();
                        Error::Compile(c)
                    }
                    other => other,
                })?;
                let build_dir = if self.spec.keep {
                    Some(self.keep_nvrtc_build(&module)?)
                } else {
                    None
                };
                Ok((module, build_dir))
            }
            Arch::Nvcc { arch, code } => {
                let job = nvcc::Job {
                    nvcc: self.nvcc.as_deref().unwrap_or(Path::new("nvcc")),
                    arch,
                    code: code.as_deref(),
                    source_name: self.spec_name(),
                    text: &self.text,
                    source: self.spec.source(),
                    options: &self.options,
                    kernels: self.spec.kernel_names(),
                    label: &self.compiler_label,
                    keep: self.spec_keep(),
                };
                nvcc::compile(&job)
            }
        }
    }

    fn keep_nvrtc_build(&self, module: &CompiledModule) -> Result<PathBuf> {
        let dir = make_build_dir()?;
        let ext = match module.target {
            Target::Cubin { .. } => "cubin",
            Target::Ptx { .. } => "ptx",
        };
        let io = |e: std::io::Error| Error::Io {
            path: dir.display().to_string(),
            message: e.to_string(),
        };
        std::fs::write(dir.join(self.spec.name.as_ref()), self.text.as_bytes()).map_err(io)?;
        if self.spec.prelude {
            let prelude = crate::compiler::headers::NVRTC_PRELUDE;
            std::fs::write(dir.join(gpu_cdecl::NVRTC_PRELUDE_NAME), prelude).map_err(io)?;
        }
        std::fs::write(dir.join(format!("module.{ext}")), &module.image).map_err(io)?;
        let mut info = format!("{}\noptions:", self.compiler_label);
        if self.spec.prelude {
            info.push(' ');
            info.push_str(&crate::compiler::headers::prelude_option());
        }
        for o in &self.options {
            info.push(' ');
            info.push_str(o);
        }
        info.push_str(&format!("\ntarget: {:?}\nkernels:", module.target));
        for (k, l) in self.spec.kernels.iter().zip(&module.lowered_names) {
            info.push_str(&format!("\n  {k} -> {l}"));
        }
        info.push_str(&format!("\nlog:\n{}\n", module.log));
        std::fs::write(dir.join("build.txt"), info).map_err(io)?;
        eprintln!("gpu-runtime: build directory kept in {}", dir.display());
        Ok(dir)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leading_preprocessor_lines_stay_outside_extern_c() {
        let src = "// halves\n#include <cuda_fp16.h>\n#define SCALE(x) \\\n  (2 * (x))\n\n__global__ void k(__half *x) {}\n#include \"late.h\"\n";
        let w = wrap_extern_c("k.cu", src);
        assert_eq!(
            w,
            "#line 1 \"k.cu\"\n// halves\n#include <cuda_fp16.h>\n#define SCALE(x) \\\n  (2 * (x))\n\nextern \"C\" {\n#line 6 \"k.cu\"\n__global__ void k(__half *x) {}\n#include \"late.h\"\n\n}\n"
        );
        // No preprocessor lines: everything is inside, numbered from 1.
        assert_eq!(
            wrap_extern_c("a.cu", "__global__ void k() {}"),
            "#line 1 \"a.cu\"\nextern \"C\" {\n#line 1 \"a.cu\"\n__global__ void k() {}\n}\n"
        );
        // Only preprocessor lines, without a final newline.
        assert_eq!(
            wrap_extern_c("b.cu", "#define A 1"),
            "#line 1 \"b.cu\"\n#define A 1\nextern \"C\" {\n#line 2 \"b.cu\"\n\n}\n"
        );
    }

    #[test]
    fn headers_included_from_include_dirs_are_found() {
        let dir = std::env::temp_dir().join(format!("gpu-rt-hdr-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("a.h"), "#define A 1").unwrap();
        let src = "#include \"a.h\"\n  #  include <missing.h>\nint x;";
        let found = included_headers(src, std::slice::from_ref(&dir));
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].1, b"#define A 1");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn headers_included_by_headers_are_found_once_even_in_a_cycle() {
        let dir = std::env::temp_dir().join(format!("gpu-rt-hdr-nested-{}", std::process::id()));
        let other = dir.with_extension("other");
        std::fs::create_dir_all(dir.join("sub")).unwrap();
        std::fs::create_dir_all(&other).unwrap();
        // a.h -> sub/b.h -> (beside it) c.h -> <d.h> in the second directory -> a.h again.
        std::fs::write(dir.join("a.h"), "#include \"sub/b.h\"\n").unwrap();
        std::fs::write(dir.join("sub/b.h"), "#pragma once\n#include \"c.h\"\n").unwrap();
        std::fs::write(dir.join("sub/c.h"), "#include <d.h>\n").unwrap();
        std::fs::write(other.join("d.h"), "#include \"a.h\"\n#define D 4\n").unwrap();
        let dirs = [dir.clone(), other.clone()];
        let found = included_headers("#include \"a.h\"\n", &dirs);
        let names: Vec<String> = found
            .iter()
            .map(|(p, _)| Path::new(p).file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, ["a.h", "b.h", "c.h", "d.h"]);
        assert_eq!(found[3].1, b"#include \"a.h\"\n#define D 4\n");
        std::fs::remove_dir_all(&dir).unwrap();
        std::fs::remove_dir_all(&other).unwrap();
    }
}
