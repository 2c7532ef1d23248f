//! [`SourceModule`]: CUDA C built at run time, compiled with NVRTC or `nvcc` through the
//! compile cache, and loaded once per context.

use std::borrow::Cow;
use std::path::{Path, PathBuf};

use crate::compiler::build_dir::make_build_dir;
use crate::compiler::cache::{self, CacheKey, CacheStatus, KeyHasher, Lookup};
use crate::compiler::nvcc;
use crate::compiler::nvrtc::{self, CompiledModule, Target};
use crate::compiler::sha256;
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
/// use gpu_runtime::{Context, SourceModule, launch::Arg, launch::ArgType};
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
    pub(crate) options: Vec<String>,
    pub(crate) arch: Arch,
    pub(crate) cache_dir: Option<PathBuf>,
    /// The digest of what is compiled (source, name, options, kernels, headers, prelude), the
    /// part of the key that does not name the compiler.
    content: [u8; 32],
    pub(crate) key: CacheKey,
}

/// The compiler and target: for NVRTC what was asked for; for nvcc its `-arch` and `-code` as
/// given, its path and `--version`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Arch {
    Nvrtc {
        target: TargetRequest,
        /// The key names NVRTC's library file, predicted without loading it (see
        /// [`toolchain`]), rather than its version.
        by_file: bool,
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
    fn key_bytes(self) -> [u8; 9] {
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

    fn resolve(self, nvrtc: &toolchain::LoadedNvrtc) -> Result<Target> {
        match self {
            TargetRequest::Given(t) => Ok(t),
            TargetRequest::Device(cc) => choose_target(cc, &nvrtc.archs),
        }
    }
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
    /// compute capability, for the default architecture. NVRTC stays unloaded when its file
    /// can be predicted, so that a cache hit costs no more than reading the entry.
    pub(crate) fn plan(&self, cc: Option<(u32, u32)>) -> Result<Plan<'_>> {
        let cache_dir = self.cache_dir_setting();
        let mut options = self.options.clone().unwrap_or_else(cache::default_flags);
        for dir in &self.include_dirs {
            options.push(format!("-I{}", dir.display()));
        }
        let mut content = KeyHasher::new();
        // The text compiled is a function of these three (see `Plan::text`).
        let wrap: &[u8] = if self.no_extern_c {
            b"as written"
        } else {
            b"in extern C"
        };
        content
            .field(self.name.as_bytes())
            .field(wrap)
            .field(self.source.as_bytes());
        content.list(&options).list(&self.kernels);
        if self.prelude && self.compiler == Compiler::Nvrtc {
            content.field(b"prelude").field(&PRELUDE_DIGEST);
        }
        for (name, contents) in included_headers(&self.source, &self.include_dirs) {
            content.field(name.as_bytes()).field(&contents);
        }
        let content = content.finish().0;
        let (arch, key) = match &self.compiler {
            Compiler::Nvrtc => {
                let target = match self.code.as_deref().or(self.arch.as_deref()) {
                    Some(a) => TargetRequest::Given(parse_target(a)?),
                    None => TargetRequest::Device(cc.ok_or_else(no_arch)?),
                };
                match toolchain::predicted_nvrtc() {
                    Some(file) => {
                        let key = nvrtc_file_key(file, target, &content);
                        (
                            Arch::Nvrtc {
                                target,
                                by_file: true,
                            },
                            key,
                        )
                    }
                    None => {
                        let nvrtc = toolchain::loaded_nvrtc()?;
                        let target = TargetRequest::Given(target.resolve(nvrtc)?);
                        let key = nvrtc_version_key(nvrtc, target, &content);
                        (
                            Arch::Nvrtc {
                                target,
                                by_file: false,
                            },
                            key,
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
                let mut h = KeyHasher::new();
                h.field(b"nvcc").field(path.as_os_str().as_encoded_bytes());
                h.field(version.as_bytes());
                h.field(format!("{arch:?} {code:?}").as_bytes()).field(&content);
                let arch = Arch::Nvcc {
                    arch,
                    code,
                    path,
                    version,
                };
                (arch, h.finish())
            }
        };
        Ok(Plan {
            spec: self,
            options,
            arch,
            cache_dir,
            content,
            key,
        })
    }
}

/// The prelude's SHA-256, computed by the compiler: hashing its text into every key is most of
/// the hashing a cache hit does.
const PRELUDE_DIGEST: [u8; 32] = sha256::soft_digest(crate::compiler::headers::NVRTC_PRELUDE.as_bytes());

/// The key of a compile by the NVRTC library file `file` (its identity: path, size, time).
fn nvrtc_file_key(file: &str, target: TargetRequest, content: &[u8; 32]) -> CacheKey {
    let mut h = KeyHasher::new();
    h.field(b"nvrtc file").field(file.as_bytes());
    h.field(&target.key_bytes()).field(content);
    h.finish()
}

/// The key of a compile by an NVRTC known only by its version, with its target chosen.
fn nvrtc_version_key(nvrtc: &toolchain::LoadedNvrtc, target: TargetRequest, content: &[u8; 32]) -> CacheKey {
    let mut h = KeyHasher::new();
    h.field(b"nvrtc version").field(nvrtc.label().as_bytes());
    h.field(&target.key_bytes()).field(content);
    h.finish()
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
        let mut key = self.key;
        let mut status = CacheStatus::Disabled;
        if let Some(dir) = &self.cache_dir {
            let mut found = self.look_up(dir, &key);
            if let Err(CacheStatus::Miss | CacheStatus::Replaced) = found {
                // The key named NVRTC's file as predicted. Compiling loads NVRTC; if the file
                // loaded is another, the key names the version loaded instead, and another
                // process may have stored that one.
                if let Some(by_version) = self.key_by_loaded_version()? {
                    key = by_version;
                    found = self.look_up(dir, &key);
                }
            }
            match found {
                Ok(module) => {
                    return Ok(CompileReport {
                        module,
                        status: CacheStatus::Hit,
                        key,
                        entry: Some(cache::entry_path(dir, &key)),
                        build_dir: None,
                    })
                }
                Err(s) => status = s,
            }
        }
        let (module, build_dir) = self.compile()?;
        let usable = |s: CacheStatus| !matches!(s, CacheStatus::Unavailable | CacheStatus::Untrusted);
        if let Some(dir) = &self.cache_dir {
            if usable(status) {
                if let Err(e) = cache::store(dir, &key, &module) {
                    cache::warn_unusable(dir, &e);
                    status = CacheStatus::Unavailable;
                }
            }
        }
        let entry = self.cache_dir.as_ref().map(|d| cache::entry_path(d, &key));
        Ok(CompileReport {
            module,
            status,
            key,
            entry: entry.filter(|_| usable(status)),
            build_dir,
        })
    }

    /// The entry for `key` in `dir`, or what the cache does instead: `Miss`, `Replaced` (an
    /// invalid entry), `Unavailable` or `Untrusted` (each warned about once).
    fn look_up(&self, dir: &Path, key: &CacheKey) -> std::result::Result<CompiledModule, CacheStatus> {
        if self.spec.keep {
            // A kept build compiles again, to leave its files; its entry is replaced.
            return match cache::trusted_dir(dir) {
                Ok(()) => Err(CacheStatus::Miss),
                Err(why) => {
                    cache::warn_untrusted(&why);
                    Err(CacheStatus::Untrusted)
                }
            };
        }
        // An entry is trusted on its own (yours, writable by you alone, and naming this key):
        // a hit looks at nothing else. The directory is checked before an entry is written.
        let missed = match cache::load(dir, key) {
            Lookup::Found(module) if self.fits(&module) => return Ok(module),
            Lookup::Found(_) | Lookup::Invalid => CacheStatus::Replaced,
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
        match cache::trusted_dir(dir) {
            Ok(()) => Err(missed),
            Err(why) => {
                cache::warn_untrusted(&why);
                Err(CacheStatus::Untrusted)
            }
        }
    }

    /// The key by NVRTC's version, when the key names a predicted library file and the one
    /// loaded (now, if not before) is another.
    fn key_by_loaded_version(&self) -> Result<Option<CacheKey>> {
        let Arch::Nvrtc {
            target,
            by_file: true,
        } = self.arch
        else {
            return Ok(None);
        };
        let nvrtc = toolchain::loaded_nvrtc()?;
        if nvrtc.as_predicted {
            return Ok(None);
        }
        let target = TargetRequest::Given(target.resolve(nvrtc)?);
        Ok(Some(nvrtc_version_key(nvrtc, target, &self.content)))
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
                let result = nvrtc::compile_with(
                    &self.text(),
                    &self.spec.name,
                    &kernels,
                    &options,
                    target,
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
        let io = |e: std::io::Error| Error::Io {
            path: dir.display().to_string(),
            message: e.to_string(),
        };
        std::fs::write(dir.join(self.spec.name.as_ref()), self.text().as_bytes()).map_err(io)?;
        if self.spec.prelude {
            let prelude = crate::compiler::headers::NVRTC_PRELUDE;
            std::fs::write(dir.join(gpu_cdecl::NVRTC_PRELUDE_NAME), prelude).map_err(io)?;
        }
        std::fs::write(dir.join(format!("module.{ext}")), &module.image).map_err(io)?;
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
