//! [`SourceModule`]: the builder of CUDA C compiled at run time (its options, compiler, target
//! and cache). `plan.rs` resolves it into everything the output depends on and the cache key;
//! `cached_compile.rs` looks the key up, compiles on a miss and stores the image;
//! `includes.rs` is the preprocessing both need.

use std::borrow::Cow;
use std::path::PathBuf;

use crate::compiler::cache::{self, CacheKey, CacheStatus};
use crate::compiler::nvrtc::CompiledModule;
use crate::compiler::source::ModuleSource;

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

/// A header given to the compiler in memory: the name an `#include` gives it, and its bytes.
pub(crate) type MemoryHeader = (Cow<'static, str>, Cow<'static, [u8]>);

#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum CacheSetting {
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
    pub(super) source: Cow<'static, str>,
    pub(super) name: Cow<'static, str>,
    pub(super) compiler: Compiler,
    pub(super) options: Option<Vec<String>>,
    pub(super) keep: bool,
    pub(super) no_extern_c: bool,
    pub(super) arch: Option<String>,
    pub(super) code: Option<String>,
    pub(super) include_dirs: Vec<PathBuf>,
    pub(super) cache: CacheSetting,
    pub(super) kernels: Vec<Cow<'static, str>>,
    pub(super) prelude: bool,
    /// Headers given to NVRTC in memory.
    pub(super) headers: Vec<MemoryHeader>,
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
            headers: Vec::new(),
        }
    }

    /// The module a `#[kernel]` source compiles to: the same key, so the same compile, as
    /// the macro's own `prepare` when it compiles (the text and headers embedded at build time;
    /// `GPU_RUNTIME_SOURCE_DIR`, which makes `prepare` read them from disk, does not apply here).
    pub fn from_static(source: &'static ModuleSource) -> SourceModule {
        let mut m = SourceModule::new(source.source())
            .name(source.name())
            .no_extern_c(true)
            .prelude(source.prelude());
        m.kernels = source.kernels().iter().map(|k| Cow::Borrowed(*k)).collect();
        m.headers = source
            .headers()
            .iter()
            .map(|h| (Cow::Borrowed(h.name()), Cow::Borrowed(h.contents())))
            .collect();
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

    /// Gives NVRTC a header in memory: an `#include "name"` (or `<name>`) of the source, or of
    /// another header, reads `contents`, before any include directory is searched. The name is
    /// matched as the `#include` writes it (`"sub/common.h"` is a header of that name, found
    /// from any file that includes it so). Headers are part of the cache key. This is how a
    /// `#[kernel]` compiles the headers it read at build time.
    pub fn header(
        mut self,
        name: impl Into<Cow<'static, str>>,
        contents: impl Into<Cow<'static, [u8]>>,
    ) -> Self {
        self.headers.push((name.into(), contents.into()));
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

    /// The cache directory, borrowed when it was given (a hit need not copy it).
    pub(super) fn cache_dir_setting(&self) -> Option<Cow<'_, std::path::Path>> {
        if cache::cache_disabled_by_env() {
            return None;
        }
        match &self.cache {
            CacheSetting::Default => cache::default_cache_dir().map(Cow::Owned),
            CacheSetting::Dir(d) => Some(Cow::Borrowed(d)),
            CacheSetting::Off => None,
        }
    }
}
