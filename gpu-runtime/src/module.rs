//! Modules (compiled CUDA sources loaded into a context) and prepared kernels.

use std::borrow::Cow;
use std::ffi::{c_void, CString};
use std::fmt;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;

use cudarc::driver::sys::{self, CUfunction_attribute as FuncAttr};

use crate::compiler::{self, Target};
use crate::context::Context;
use crate::embedded::EmbeddedImage;
use crate::error::{check, Error, Result};
use crate::launch::{self, Dim3, KernelLimits};
use crate::memory::{DeviceView, DeviceViewMut};
use crate::ordering::LaunchStream;
use crate::stream::{Event, Stream};

/// A CUDA C source known at compile time, and the kernels to take from it.
///
/// The `#[kernel]` macro emits one `static` of this type per source; its address identifies the
/// module in each context's cache, so preparing a kernel never hashes the source.
#[derive(Debug)]
pub struct ModuleSource {
    name: &'static str,
    source: &'static str,
    kernels: &'static [&'static str],
    options: &'static [&'static str],
    /// For a module linked from several sources: the sources (`source` is then empty).
    parts: &'static [SourcePart],
    /// Images compiled at build time (`embed = [...]`), tried before compiling.
    images: &'static [EmbeddedImage],
}

/// One source of a module linked from several (see [`ModuleSource::linked`]).
#[derive(Debug)]
pub struct SourcePart {
    name: &'static str,
    source: &'static str,
    kernels: &'static [&'static str],
}

impl SourcePart {
    /// A source named `name`, its text, and the kernels of the module it declares.
    pub const fn new(
        name: &'static str,
        source: &'static str,
        kernels: &'static [&'static str],
    ) -> SourcePart {
        SourcePart {
            name,
            source,
            kernels,
        }
    }
}

impl ModuleSource {
    /// A source named `name` (used in compiler messages, e.g. `axpy.cu`), its text, the
    /// `__global__` functions to load from it, and extra NVRTC options.
    pub const fn new(
        name: &'static str,
        source: &'static str,
        kernels: &'static [&'static str],
        options: &'static [&'static str],
    ) -> ModuleSource {
        ModuleSource {
            name,
            source,
            kernels,
            options,
            parts: &[],
            images: &[],
        }
    }

    /// A module linked from several sources compiled as relocatable device code (with the
    /// device runtime `cudadevrt` when it is found, for kernels that launch kernels). `kernels`
    /// lists every kernel of the module in order; each part lists those it declares, in the
    /// same order.
    pub const fn linked(
        name: &'static str,
        parts: &'static [SourcePart],
        kernels: &'static [&'static str],
        options: &'static [&'static str],
    ) -> ModuleSource {
        ModuleSource {
            name,
            source: "",
            kernels,
            options,
            parts,
            images: &[],
        }
    }

    /// The same source with images compiled ahead of time (`#[kernel(…, embed = […])]`):
    /// loading picks the best one for the device and compiles the source only when none fits.
    pub const fn with_images(self, images: &'static [EmbeddedImage]) -> ModuleSource {
        ModuleSource { images, ..self }
    }

    /// The images embedded ahead of time, if any.
    pub fn images(&self) -> &'static [EmbeddedImage] {
        self.images
    }

    /// The CUDA C source text.
    pub fn source(&self) -> &'static str {
        self.source
    }

    /// The kernels taken from the source, in the order `Function::prepare` indexes them.
    pub fn kernels(&self) -> &'static [&'static str] {
        self.kernels
    }

    /// The file name compiler messages use, e.g. `axpy.cu`.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// The extra compiler options given with the source.
    pub fn options(&self) -> &'static [&'static str] {
        self.options
    }

    /// True when the module is linked from several sources (`#[kernel(files = [...])]`).
    pub(crate) fn is_linked(&self) -> bool {
        !self.parts.is_empty()
    }

    /// Compiles the source for `target` without loading it: needs NVRTC, not a GPU.
    pub fn compile(&self, target: Target) -> Result<compiler::CompiledModule> {
        if self.parts.is_empty() {
            return compiler::compile(self.source, self.name, self.kernels, self.options, target);
        }
        let cc = match target {
            Target::Cubin { major, minor } | Target::Ptx { major, minor } => (major, minor),
        };
        let mut m = crate::link::DynamicModule::new();
        for p in self.parts {
            m.add_source(p.source, p.name, p.kernels, self.options);
        }
        // Only kernels that launch kernels need the device runtime; without it they fail to
        // link with a message that says so.
        let _ = m.add_stdlib("cudadevrt");
        let mut compiled = m.link_image(target, cc)?;
        // Put the lowered names in the order of `kernels`.
        let order: Vec<&str> = self
            .parts
            .iter()
            .flat_map(|p| p.kernels.iter().copied())
            .collect();
        let mut lowered = Vec::with_capacity(self.kernels.len());
        for k in self.kernels {
            let i = order
                .iter()
                .position(|o| o == k)
                .ok_or_else(|| Error::KernelNotFound {
                    name: (*k).to_owned(),
                })?;
            lowered.push(compiled.lowered_names[i].clone());
        }
        compiled.lowered_names = lowered;
        Ok(compiled)
    }
}

/// A compiled module loaded into a context, with its kernels looked up once.
pub(crate) struct LoadedModule {
    pub(crate) raw: sys::CUmodule,
    ctx_raw: sys::CUcontext,
    /// The requested kernels (name expressions), in order, with their lowered names.
    pub(crate) kernels: Vec<(String, String)>,
    pub(crate) functions: Vec<(sys::CUfunction, KernelLimits)>,
    /// The CUDA C source, when known: where `Function::prepare` reads declarations from.
    pub(crate) source: Option<Arc<str>>,
    pub(crate) info: LoadInfo,
}

/// What happened while building and loading a module.
#[derive(Debug, Clone, Default)]
pub(crate) struct LoadInfo {
    pub(crate) cache_status: Option<crate::cache::CacheStatus>,
    pub(crate) build_dir: Option<std::path::PathBuf>,
    pub(crate) compile_log: String,
    pub(crate) jit_info_log: String,
    pub(crate) jit_error_log: String,
}

// SAFETY: module and function handles may be used from any thread of the process.
unsafe impl Send for LoadedModule {}
// SAFETY: as above; the struct is immutable after construction.
unsafe impl Sync for LoadedModule {}

impl LoadedModule {
    /// The driver's module handle.
    pub(crate) fn raw(&self) -> sys::CUmodule {
        self.raw
    }

    /// Loads `image` into `ctx` (current on this thread) and looks up each kernel.
    pub(crate) fn load(
        ctx: &Context,
        image: &[u8],
        what: &str,
        kernels: Vec<(String, String)>,
        jit: &crate::user_module::JitOptions,
        mut info: LoadInfo,
    ) -> Result<LoadedModule> {
        ctx.bind()?;
        let (raw, info_log, error_log) = crate::user_module::load_image(image, what, jit)?;
        info.jit_info_log = info_log;
        info.jit_error_log = error_log;
        let mut module = LoadedModule {
            raw,
            ctx_raw: ctx.raw(),
            kernels: Vec::new(),
            functions: Vec::new(),
            source: None,
            info,
        };
        for (name, lowered) in &kernels {
            let found = module
                .lookup(lowered)?
                .ok_or_else(|| Error::KernelNotFound { name: name.clone() })?;
            module.functions.push(found);
        }
        module.kernels = kernels;
        Ok(module)
    }

    /// The function whose symbol is `symbol`, with its limits; `None` when there is none.
    pub(crate) fn lookup(&self, symbol: &str) -> Result<Option<(sys::CUfunction, KernelLimits)>> {
        let Ok(c_name) = CString::new(symbol) else {
            return Ok(None);
        };
        let mut f = std::ptr::null_mut();
        // SAFETY: valid out-pointer, live module, NUL-terminated name.
        let r = unsafe { sys::cuModuleGetFunction(&mut f, self.raw, c_name.as_ptr()) };
        if r == sys::CUresult::CUDA_ERROR_NOT_FOUND {
            return Ok(None);
        }
        check("cuModuleGetFunction", r)?;
        let attr = |a| -> Result<u32> {
            let mut v = 0;
            // SAFETY: valid out-pointer and live function.
            check("cuFuncGetAttribute", unsafe {
                sys::cuFuncGetAttribute(&mut v, a, f)
            })?;
            Ok(v.max(0) as u32)
        };
        let limits = KernelLimits {
            max_threads_per_block: attr(FuncAttr::CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK)?,
            static_shared_bytes: attr(FuncAttr::CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES)?,
        };
        Ok(Some((f, limits)))
    }
}

impl Drop for LoadedModule {
    fn drop(&mut self) {
        // SAFETY: the context outlives its modules (ContextInner drops its cache before
        // releasing the context, and kernels hold the context); the module is unloaded once.
        unsafe {
            if sys::cuCtxSetCurrent(self.ctx_raw) == sys::CUresult::CUDA_SUCCESS {
                sys::cuModuleUnload(self.raw);
            }
        }
    }
}

/// A kernel function compiled, loaded and looked up: what `prepare` returns, ready to launch with no
/// further lookups. The `#[kernel]` macro wraps it in a typed handle.
///
/// A kernel of a [`Module`](crate::Module) built at run time is a `Function` too; its
/// parameter types are declared once with [`prepare_args`](Self::prepare_args):
///
/// ```no_run
/// use gpu_runtime::{Arg, ArgType, Context, SourceModule};
/// let ctx = Context::default()?;
/// let module = SourceModule::new(
///     "__global__ void scale(float *x, float a, int n) {
///          int i = blockIdx.x * blockDim.x + threadIdx.x;
///          if (i < n) x[i] *= a; }",
/// )
/// .load(&ctx)?;
/// let f = module.get_function("scale")?;
/// // Checked against the C declaration once, so each launch only checks the arguments.
/// let scale = f.prepare_args(&[ArgType::MutPtr, ArgType::F32, ArgType::I32])?;
/// let mut x = ctx.to_device(&[1.0f32; 1000])?;
/// scale.prepared_call(4, 256, &[Arg::output(&mut x), Arg::F32(3.0), Arg::I32(1000)])?;
/// assert_eq!(x.to_vec()?, vec![3.0; 1000]);
/// # Ok::<(), gpu_runtime::Error>(())
/// ```
pub struct Function {
    pub(crate) ctx: Context,
    pub(crate) _module: Arc<LoadedModule>,
    pub(crate) func: sys::CUfunction,
    pub(crate) limits: KernelLimits,
    pub(crate) name: Cow<'static, str>,
    shared_mem_bytes: u32,
    /// The dynamic shared memory this function has been allowed so far (beyond the default
    /// 48 KiB a block gets without opting in).
    optin_shared: AtomicU32,
}

// SAFETY: a CUfunction may be launched from any thread; the rest is plain data or atomics.
unsafe impl Send for Function {}
// SAFETY: as above.
unsafe impl Sync for Function {}

impl fmt::Debug for Function {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Function")
            .field("name", &self.name)
            .field("limits", &self.limits)
            .field("shared_mem_bytes", &self.shared_mem_bytes)
            .finish()
    }
}

impl Clone for Function {
    fn clone(&self) -> Self {
        Function {
            ctx: self.ctx.clone(),
            _module: self._module.clone(),
            func: self.func,
            limits: self.limits,
            name: self.name.clone(),
            shared_mem_bytes: self.shared_mem_bytes,
            optin_shared: AtomicU32::new(self.optin_shared.load(Ordering::Relaxed)),
        }
    }
}

impl Function {
    /// Function `index` of `source` in `ctx`: compiled and loaded on the first call in a context,
    /// a cache lookup afterwards.
    pub fn prepare(ctx: &Context, source: &'static ModuleSource, index: usize) -> Result<Function> {
        let module = ctx.module(source)?;
        let name = source.kernels.get(index).copied().unwrap_or("?");
        Function::from_loaded(ctx, module, index, name)
    }

    /// Function `index` of an already loaded module (one linked at run time).
    pub(crate) fn from_loaded(
        ctx: &Context,
        module: Arc<LoadedModule>,
        index: usize,
        name: &'static str,
    ) -> Result<Function> {
        let &(func, limits) = module.functions.get(index).ok_or_else(|| Error::KernelNotFound {
            name: name.to_owned(),
        })?;
        Ok(Function {
            ctx: ctx.clone(),
            _module: module,
            func,
            limits,
            name: Cow::Borrowed(name),
            shared_mem_bytes: 0,
            optin_shared: AtomicU32::new(0),
        })
    }

    pub(crate) fn from_parts(
        ctx: Context,
        module: Arc<LoadedModule>,
        (func, limits): (sys::CUfunction, KernelLimits),
        name: Cow<'static, str>,
    ) -> Function {
        Function {
            ctx,
            _module: module,
            func,
            limits,
            name,
            shared_mem_bytes: 0,
            optin_shared: AtomicU32::new(0),
        }
    }

    /// The same kernel launching with `bytes` of dynamic shared memory (for `extern __shared__`
    /// arrays). More than 48 KiB is allowed up to the device's opt-in limit; the kernel is
    /// opted in automatically at launch.
    pub fn with_shared_mem(mut self, bytes: u32) -> Function {
        self.shared_mem_bytes = bytes;
        self
    }

    /// The dynamic shared memory each launch asks for, in bytes.
    pub fn shared_mem(&self) -> u32 {
        self.shared_mem_bytes
    }

    /// The kernel's name in the CUDA source.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The context the kernel is loaded in.
    pub fn context(&self) -> &Context {
        &self.ctx
    }

    /// The most threads a block of this kernel may have, and its static shared memory.
    pub fn limits(&self) -> KernelLimits {
        self.limits
    }

    /// The driver's function handle.
    pub fn raw(&self) -> sys::CUfunction {
        self.func
    }

    /// The device address of a buffer argument the kernel reads, after checking it lives in
    /// this kernel's context or in a peer this context was given access to
    /// ([`Context::enable_peer_access`]), and ordering the read on `stream` after the buffer's
    /// last write.
    #[doc(hidden)]
    #[inline(always)]
    pub fn read_arg<T>(&self, arg: &DeviceView<'_, T>, stream: LaunchStream<'_>) -> Result<sys::CUdeviceptr> {
        self.check_arg_context(arg.context(), arg.device_ptr())?;
        arg.read_on(stream.inner())?;
        Ok(arg.device_ptr())
    }

    /// [`read_arg`](Self::read_arg) for a buffer the kernel may write: ordered after every
    /// use of the buffer.
    #[doc(hidden)]
    #[inline(always)]
    pub fn write_arg<T>(
        &self,
        arg: &DeviceViewMut<'_, T>,
        stream: LaunchStream<'_>,
    ) -> Result<sys::CUdeviceptr> {
        self.check_arg_context(arg.context(), arg.device_ptr())?;
        arg.write_on(stream.inner())?;
        Ok(arg.device_ptr())
    }

    #[inline(always)]
    fn check_arg_context(&self, owner: &Context, ptr: sys::CUdeviceptr) -> Result<()> {
        if owner.is(self.ctx.raw()) {
            Ok(())
        } else {
            foreign_arg(&self.ctx, owner, ptr).map(|_| ())
        }
    }

    /// `stream`, after checking it belongs to this kernel's context.
    #[doc(hidden)]
    #[inline]
    pub fn stream_arg<'s>(&self, stream: &'s Stream) -> Result<LaunchStream<'s>> {
        if stream.context().is(self.ctx.raw()) {
            Ok(LaunchStream(stream.inner()))
        } else {
            Err(Error::WrongContext { what: "the stream" })
        }
    }

    /// The legacy default stream of this kernel's context, where `prepared_call` launches.
    #[doc(hidden)]
    #[inline(always)]
    pub fn legacy_stream(&self) -> LaunchStream<'_> {
        LaunchStream(self.ctx.legacy())
    }

    /// Launches with a prepared parameter array, after checking the configuration.
    ///
    /// # Safety
    /// `params` must hold one pointer per kernel parameter, in order, each pointing to a value
    /// of exactly the C parameter's type; every device pointer and handle among them must stay
    /// valid until the kernel has finished, and be ordered with other streams' uses of what it
    /// points to ([`read_arg`](Self::read_arg), [`write_arg`](Self::write_arg) and
    /// `KernelParam::order_on` do both for this crate's memory). The `#[kernel]` macro
    /// generates calls that satisfy this.
    #[doc(hidden)]
    #[inline]
    pub unsafe fn launch_raw(
        &self,
        grid: Dim3,
        block: Dim3,
        stream: sys::CUstream,
        params: &mut [*mut c_void],
    ) -> Result<()> {
        let cfg = launch::validate(
            grid,
            block,
            self.shared_mem_bytes,
            self.ctx.limits(),
            &self.limits,
        )?;
        self.ctx.bind()?;
        if cfg.shared_mem_bytes > self.optin_shared.load(Ordering::Relaxed)
            && cfg.shared_mem_bytes + self.limits.static_shared_bytes
                > self.ctx.limits().max_shared_memory_per_block
        {
            self.opt_in_shared(cfg.shared_mem_bytes)?;
        }
        // SAFETY: the configuration was validated; the caller guarantees the parameters.
        check("cuLaunchKernel", unsafe {
            sys::cuLaunchKernel(
                self.func,
                cfg.grid[0],
                cfg.grid[1],
                cfg.grid[2],
                cfg.block[0],
                cfg.block[1],
                cfg.block[2],
                cfg.shared_mem_bytes,
                stream,
                params.as_mut_ptr(),
                std::ptr::null_mut(),
            )
        })
    }

    #[cold]
    fn opt_in_shared(&self, bytes: u32) -> Result<()> {
        // SAFETY: live function; the attribute takes a byte count.
        check("cuFuncSetAttribute", unsafe {
            sys::cuFuncSetAttribute(
                self.func,
                FuncAttr::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                bytes as i32,
            )
        })?;
        self.optin_shared.fetch_max(bytes, Ordering::Relaxed);
        Ok(())
    }

    /// Runs `launch` between two events on the legacy default stream and returns the GPU time
    /// between them (PyCUDA's `prepared_timed_call`). Waits for the kernel to finish. When an
    /// argument was last used on another stream, the wait for that work is queued between the
    /// two events, and timed with the kernel.
    #[doc(hidden)]
    pub fn timed(&self, launch: impl FnOnce() -> Result<()>) -> Result<Duration> {
        let start = Event::new(&self.ctx)?;
        let end = Event::new(&self.ctx)?;
        start.record_raw(std::ptr::null_mut())?;
        launch()?;
        end.record_raw(std::ptr::null_mut())?;
        end.synchronize()?;
        end.time_since(&start)
    }
}

/// A buffer of another context passed to a kernel: allowed when the kernel's context was given
/// peer access to it (cold: the usual argument lives in the kernel's own context).
#[cold]
pub(crate) fn foreign_arg(
    kernel: &Context,
    owner: &Context,
    ptr: sys::CUdeviceptr,
) -> Result<sys::CUdeviceptr> {
    if kernel.has_peer_access(owner) {
        Ok(ptr)
    } else {
        Err(Error::WrongContext {
            what: "a device buffer argument",
        })
    }
}
