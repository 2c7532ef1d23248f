//! Modules (compiled CUDA sources loaded into a context) and prepared kernels.

use std::ffi::{c_void, CString};
use std::fmt;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;

use cudarc::driver::sys::{self, CUfunction_attribute as FuncAttr};

use crate::compiler::{self, Target};
use crate::context::Context;
use crate::embedded::{pick_embedded, EmbeddedImage, ImageKind};
use crate::error::{check, Error, Result};
use crate::launch::{self, Dim3, KernelLimits};
use crate::memory::DeviceRead;
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
    images: &'static [EmbeddedImage],
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

    /// Compiles the source for `target` without loading it: needs NVRTC, not a GPU.
    pub fn compile(&self, target: Target) -> Result<compiler::CompiledModule> {
        compiler::compile(self.source, self.name, self.kernels, self.options, target)
    }
}

/// A compiled module loaded into a context, with its kernels looked up once.
pub(crate) struct LoadedModule {
    raw: sys::CUmodule,
    ctx_raw: sys::CUcontext,
    functions: Vec<(sys::CUfunction, KernelLimits)>,
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

    pub(crate) fn build(ctx: &Context, source: &'static ModuleSource) -> Result<LoadedModule> {
        let mut ptx_error = None;
        if let Some(image) = pick_embedded(source.images, ctx.compute_capability()) {
            match Self::from_image(ctx, source, image.bytes(), image.lowered_names()) {
                Ok(m) => return Ok(m),
                // PTX of an ISA newer than the driver (built with a newer NVRTC): compile the
                // source instead.
                Err(e) if image.kind() == ImageKind::Ptx => ptx_error = Some(e),
                Err(e) => return Err(e),
            }
        }
        let compiled = match (
            Target::for_device(ctx.compute_capability()).and_then(|t| source.compile(t)),
            ptx_error,
        ) {
            // Without NVRTC, why the embedded PTX did not load says more than "no NVRTC".
            (Err(Error::NvrtcNotFound), Some(e)) => return Err(e),
            (r, _) => r?,
        };
        Self::from_image(ctx, source, &compiled.image, &compiled.lowered_names)
    }

    /// Loads a cubin, or PTX ending in NUL, and looks up each kernel by its lowered name.
    fn from_image(
        ctx: &Context,
        source: &'static ModuleSource,
        image: &[u8],
        lowered_names: &[impl AsRef<str>],
    ) -> Result<LoadedModule> {
        // The driver reads cubins as ELF, which wants 8-byte alignment; an embedded byte
        // string has none, so it is copied (once per context) when misaligned.
        let aligned: Vec<u64>;
        let ptr = if image.as_ptr().align_offset(8) == 0 {
            image.as_ptr()
        } else {
            let mut words = vec![0u64; image.len().div_ceil(8)];
            // SAFETY: `words` has at least image.len() bytes; the regions do not overlap.
            unsafe { std::ptr::copy_nonoverlapping(image.as_ptr(), words.as_mut_ptr().cast(), image.len()) };
            aligned = words;
            aligned.as_ptr().cast()
        };
        ctx.bind()?;
        let mut raw = std::ptr::null_mut();
        // SAFETY: the image is a complete cubin, or PTX ending in NUL, as NVRTC produced it.
        check("cuModuleLoadData", unsafe {
            sys::cuModuleLoadData(&mut raw, ptr.cast())
        })?;
        let mut module = LoadedModule {
            raw,
            ctx_raw: ctx.raw(),
            functions: Vec::new(),
        };
        for (name, lowered) in source.kernels.iter().zip(lowered_names) {
            let c_name = CString::new(lowered.as_ref()).map_err(|_| Error::KernelNotFound {
                name: (*name).to_owned(),
            })?;
            let mut f = std::ptr::null_mut();
            // SAFETY: valid out-pointer, live module, NUL-terminated name.
            let r = unsafe { sys::cuModuleGetFunction(&mut f, module.raw, c_name.as_ptr()) };
            if r == sys::CUresult::CUDA_ERROR_NOT_FOUND {
                return Err(Error::KernelNotFound {
                    name: (*name).to_owned(),
                });
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
            module.functions.push((f, limits));
        }
        Ok(module)
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
pub struct Function {
    ctx: Context,
    _module: Arc<LoadedModule>,
    func: sys::CUfunction,
    limits: KernelLimits,
    name: &'static str,
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
            name: self.name,
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
        let &(func, limits) = module.functions.get(index).ok_or_else(|| Error::KernelNotFound {
            name: name.to_owned(),
        })?;
        Ok(Function {
            ctx: ctx.clone(),
            _module: module,
            func,
            limits,
            name,
            shared_mem_bytes: 0,
            optin_shared: AtomicU32::new(0),
        })
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
    pub fn name(&self) -> &'static str {
        self.name
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

    /// The device address of a buffer argument, after checking it lives in this kernel's context.
    #[doc(hidden)]
    #[inline]
    pub fn device_arg<T, A: DeviceRead<T> + ?Sized>(&self, arg: &A) -> Result<sys::CUdeviceptr> {
        if arg.context().is(self.ctx.raw()) {
            Ok(arg.device_ptr())
        } else {
            Err(Error::WrongContext {
                what: "a device buffer argument",
            })
        }
    }

    /// The handle of a stream, after checking it belongs to this kernel's context.
    #[doc(hidden)]
    #[inline]
    pub fn stream_arg(&self, stream: &Stream) -> Result<sys::CUstream> {
        if stream.context().is(self.ctx.raw()) {
            Ok(stream.raw())
        } else {
            Err(Error::WrongContext { what: "the stream" })
        }
    }

    /// Launches with a prepared parameter array, after checking the configuration.
    ///
    /// # Safety
    /// `params` must hold one pointer per kernel parameter, in order, each pointing to a value
    /// of exactly the C parameter's type, and every device pointer among them must stay valid
    /// until the kernel has finished. The `#[kernel]` macro generates calls that satisfy this.
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
    /// between them (PyCUDA's `prepared_timed_call`). Waits for the kernel to finish.
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
