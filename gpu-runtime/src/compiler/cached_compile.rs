//! Building a [`Plan`]: the cache lookup, the compile on a miss (NVRTC, or `nvcc` in a private
//! build directory), and the store of the image under the plan's key.

use std::borrow::Cow;
use std::path::{Path, PathBuf};

use crate::compiler::build_dir::make_build_dir;
use crate::compiler::cache::{self, CacheStatus, KeyMaterial, Lookup};
use crate::compiler::includes::wrap_extern_c;
use crate::compiler::nvcc;
use crate::compiler::nvrtc::{self, CompiledModule, Target};
use crate::compiler::nvrtc_resolution;
use crate::compiler::plan::{nvrtc_version_material, Arch, Plan, TargetRequest};
use crate::compiler::source_module::CompileReport;
use crate::compiler::toolchain;
use crate::error::{Error, Result};

impl Plan<'_> {
    /// The text compiled: the source, in `extern "C"` unless [`SourceModule::no_extern_c`].
    /// Made only to compile: a cache hit needs the source only for its key.
    fn text(&self) -> Cow<'_, str> {
        if self.spec.no_extern_c {
            Cow::Borrowed(&self.spec.source)
        } else {
            Cow::Owned(wrap_extern_c(&self.spec.name, &self.spec.source))
        }
    }

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
        let mut material = Cow::Borrowed(&self.material);
        // Whether the key names the loader's search rather than the compiler: its entry then
        // names the NVRTC file loaded (and, when the search found none, what the search saw),
        // checked at a hit and written at a store.
        let mut by_search = self.by_search();
        // What a store writes as the compiler, when NVRTC was loaded past the search.
        let mut loaded_past_search: Option<Vec<u8>> = None;
        let mut status = CacheStatus::Disabled;
        if let Some(dir) = &self.cache_dir {
            let mut found = self.look_up(dir, &material, by_search);
            if let Err(CacheStatus::Miss | CacheStatus::Replaced) = found {
                // Compiling loads NVRTC. If the file loaded is the one the search finds, or
                // the search found none and the file loaded can be named, the key stays (the
                // entry names the file); else it names NVRTC's version, and another process
                // may have stored that entry.
                match self.compiler_loaded()? {
                    LoadedCompiler::AsKeyed => {}
                    LoadedCompiler::PastSearch(stored) => loaded_past_search = Some(stored),
                    LoadedCompiler::ByVersion(by_version) => {
                        material = Cow::Owned(by_version);
                        by_search = false;
                        found = self.look_up(dir, &material, by_search);
                    }
                }
            }
            match found {
                Ok(module) => {
                    let key = match &material {
                        Cow::Borrowed(_) => self.key,
                        Cow::Owned(by_version) => by_version.key(),
                    };
                    return Ok(CompileReport {
                        module,
                        status: CacheStatus::Hit,
                        key,
                        entry: Some(cache::entry_path(dir, &key)),
                        build_dir: None,
                    });
                }
                Err(s) => status = s,
            }
        }
        let (module, build_dir) = self.compile()?;
        let usable = |s: CacheStatus| !matches!(s, CacheStatus::Unavailable | CacheStatus::Untrusted);
        if let Some(dir) = &self.cache_dir {
            if usable(status) {
                // Searched now, on a miss: NVRTC was loaded and is the file found.
                let compiler = match (loaded_past_search, toolchain::predicted_nvrtc()) {
                    (Some(stored), _) => stored,
                    (None, Some(file)) if by_search => file.to_bytes(),
                    _ => Vec::new(),
                };
                if let Err(e) = cache::store(dir, &material, &module, &compiler) {
                    cache::warn_unusable(dir, &e);
                    status = CacheStatus::Unavailable;
                }
            }
        }
        let key = material.key();
        let entry = self.cache_dir.as_ref().map(|d| cache::entry_path(d, &key));
        Ok(CompileReport {
            module,
            status,
            key,
            entry: entry.filter(|_| usable(status)),
            build_dir,
        })
    }

    /// The entry for `material` in `dir`, or what the cache does instead: `Miss`, `Replaced`
    /// (an invalid entry, or one `by_search` whose NVRTC file is no longer the same),
    /// `Unavailable` or `Untrusted` (each warned about once).
    fn look_up(
        &self,
        dir: &Path,
        material: &KeyMaterial,
        by_search: bool,
    ) -> std::result::Result<CompiledModule, CacheStatus> {
        if self.spec.keep {
            // A kept build compiles again, to leave its files; its entry is replaced.
            return Err(unless_untrusted(dir, CacheStatus::Miss));
        }
        // An entry is trusted on its own (yours, writable by you alone, and holding this key's material):
        // a hit looks at nothing else. The directory is checked before an entry is written.
        // The plan's own material has its key already.
        let key = if std::ptr::eq(material, &self.material) {
            self.key
        } else {
            material.key()
        };
        let missed = match cache::load(dir, &key, material) {
            Lookup::Found(module, compiler)
                if self.fits(&module) && (!by_search || compiler_is_current(&compiler)) =>
            {
                return Ok(module)
            }
            Lookup::Found(..) | Lookup::Invalid => CacheStatus::Replaced,
            Lookup::Absent => CacheStatus::Miss,
            Lookup::Unreadable(e) => {
                cache::warn_unusable(dir, &e);
                return Err(CacheStatus::Unavailable);
            }
            Lookup::Untrusted(why) => {
                cache::warn_untrusted(&why);
                return Err(CacheStatus::Untrusted);
            }
        };
        Err(unless_untrusted(dir, missed))
    }

    /// Whether the key names the loader's search path rather than the compiler.
    pub(crate) fn by_search(&self) -> bool {
        matches!(self.arch, Arch::Nvrtc { by_search: true, .. })
    }

    /// For a key that names the loader's search: NVRTC, loaded now if not before, and how the
    /// key names it (see [`LoadedCompiler`]). `AsKeyed` for any other key.
    fn compiler_loaded(&self) -> Result<LoadedCompiler> {
        let Arch::Nvrtc {
            target,
            by_search: true,
        } = self.arch
        else {
            return Ok(LoadedCompiler::AsKeyed);
        };
        let nvrtc = toolchain::loaded_nvrtc()?;
        if nvrtc.as_predicted {
            return Ok(LoadedCompiler::AsKeyed);
        }
        if let Some(searched) = toolchain::failed_search_surroundings() {
            if let (Some(path), Some(loaded)) =
                (toolchain::library_path(), nvrtc_resolution::loaded_identity())
            {
                let stored = nvrtc_resolution::stored_past_search(&path, searched, &loaded);
                return Ok(LoadedCompiler::PastSearch(stored));
            }
        }
        let target = TargetRequest::Given(target.resolve(nvrtc)?);
        let content = self.material.tail(self.content_start);
        let mut material = nvrtc_version_material(nvrtc, target, content.len() + 128);
        material.fields(content);
        Ok(LoadedCompiler::ByVersion(material))
    }

    /// An entry must name one symbol per requested kernel; anything else is foreign.
    fn fits(&self, m: &CompiledModule) -> bool {
        m.lowered_names.len() == self.spec.kernels.len()
    }

    fn compile(&self) -> Result<(CompiledModule, Option<PathBuf>)> {
        match &self.arch {
            Arch::Nvrtc { target, .. } => {
                let nvrtc = toolchain::loaded_nvrtc()?;
                let target = target.resolve(nvrtc)?;
                let kernels: Vec<&str> = self.spec.kernels.iter().map(|k| k.as_ref()).collect();
                let options: Vec<&str> = self.options.iter().map(String::as_str).collect();
                let headers: Vec<(&str, &[u8])> = self
                    .spec
                    .headers
                    .iter()
                    .map(|(n, c)| (n.as_ref(), c.as_ref()))
                    .collect();
                let result = nvrtc::compile_with(
                    &self.text(),
                    &self.spec.name,
                    &kernels,
                    &options,
                    target,
                    self.spec.prelude,
                    &headers,
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
                    Some(self.keep_nvrtc_build(&module, &nvrtc.label())?)
                } else {
                    None
                };
                Ok((module, build_dir))
            }
            Arch::Nvcc {
                arch,
                code,
                path,
                version,
            } => {
                let job = nvcc::Job {
                    nvcc: path,
                    arch,
                    code: code.as_deref(),
                    source_name: self.spec_name(),
                    text: &self.text(),
                    source: self.spec.source(),
                    options: &self.options,
                    headers: &self.spec.headers,
                    kernels: self.spec.kernel_names(),
                    label: version,
                    keep: self.spec_keep(),
                };
                nvcc::compile(&job)
            }
        }
    }

    fn keep_nvrtc_build(&self, module: &CompiledModule, label: &str) -> Result<PathBuf> {
        let dir = make_build_dir()?;
        let ext = match module.target {
            Target::Cubin { .. } => "cubin",
            Target::Ptx { .. } => "ptx",
        };
        // Names the file, not just the directory, in the error.
        let write = |name: &str, bytes: &[u8]| {
            let file = dir.join(name);
            std::fs::write(&file, bytes).map_err(|source| Error::Io {
                action: "write",
                path: file.display().to_string(),
                source,
            })
        };
        write(self.spec.name.as_ref(), self.text().as_bytes())?;
        if self.spec.prelude {
            let prelude = crate::compiler::headers::NVRTC_PRELUDE;
            write(gpu_cuda_source::NVRTC_PRELUDE_NAME, prelude.as_bytes())?;
        }
        write(&format!("module.{ext}"), &module.image)?;
        let mut info = format!("{label}\noptions:");
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
        write("build.txt", info.as_bytes())?;
        eprintln!("gpu-runtime: build directory kept in {}", dir.display());
        Ok(dir)
    }
}

/// `status` when `dir` is trusted to hold entries, else `Untrusted` (warned about once).
fn unless_untrusted(dir: &Path, status: CacheStatus) -> CacheStatus {
    match cache::trusted_dir(dir) {
        Ok(()) => status,
        Err(why) => {
            cache::warn_untrusted(&why);
            CacheStatus::Untrusted
        }
    }
}

/// How a key that names the loader's search names NVRTC once it is loaded.
enum LoadedCompiler {
    /// The key stands: NVRTC is the file the search finds (and the entry stores its identity),
    /// or the key does not name the search.
    AsKeyed,
    /// The key stands: the search found no NVRTC, and the loader loaded the file named in these
    /// bytes, stored in the entry with what the search saw (see `nvrtc_resolution`).
    PastSearch(Vec<u8>),
    /// The file loaded is not the one the search finds, or cannot be named: the key's material
    /// by NVRTC's version instead.
    ByVersion(KeyMaterial),
}

/// Whether the NVRTC an entry stores is still the one this process would load: its file there,
/// unchanged (one `stat`), and for one loaded past the search, nothing the search and the
/// loader look at changed (a `stat` per directory of the path, and one). A hit of a key that
/// names the loader's search rather than the compiler is a hit only then.
pub(crate) fn compiler_is_current(stored: &[u8]) -> bool {
    match nvrtc_resolution::split_past_search(stored) {
        Some(past) => past.is_current(),
        None => toolchain::stored_library_is_current(stored),
    }
}
