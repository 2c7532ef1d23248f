//! [`Module`]: a loaded module's kernels and global symbols, from a [`SourceModule`] or from a
//! PTX, cubin or fatbin image (PyCUDA's `module_from_file` / `module_from_buffer`).
//!
//! [`SourceModule`]: crate::SourceModule

use std::borrow::Cow;
use std::ffi::CString;
use std::fmt;
use std::path::Path;
use std::sync::Arc;

use cudarc::driver::sys::{self};

use crate::compiler::cache::CacheStatus;
use crate::driver::calls::{self, Failed};
use crate::driver::context::core::Context;
use crate::driver::module::function::Function;
use crate::driver::module::image::JitOptions;
use crate::driver::module::loaded::{LoadInfo, LoadedModule};
use crate::driver::ordering::ModuleVars;
use crate::error::{CopyError, Error, Result};
use crate::types::repr::DeviceRepr;

/// A module loaded into a context: PyCUDA's `Module`. Cheap to clone; the module stays loaded
/// while a clone, or a [`Function`] or [`ModuleGlobal`] from it, is alive.
///
/// [`SourceModule::load`](crate::SourceModule::load) makes one from CUDA C; a PTX, cubin or
/// fatbin built elsewhere loads with [`from_file`](Self::from_file):
///
/// ```no_run
/// use gpu_runtime::{launch::Arg, launch::ArgType, Context, driver::JitOptions, driver::Module};
/// let ctx = Context::default()?;
/// // Built by `nvcc -ptx fill.cu` from
/// // `extern "C" __global__ void fill(float *x, float v, int n)`.
/// let module = Module::from_file(&ctx, "fill.ptx", &JitOptions::default())?;
/// let fill = module.get_function("fill")?;
/// let types = [ArgType::MutPtr, ArgType::F32, ArgType::I32];
/// // SAFETY: `types` is fill's parameter list; an image carries no C declaration to check
/// // it against.
/// let fill = unsafe { fill.prepare_args_unchecked(&types)? };
/// let mut x = ctx.alloc::<f32>(256)?;
/// fill.prepared_call(1, 256, &[Arg::output(&mut x), Arg::F32(1.5), Arg::I32(256)])?;
/// assert_eq!(x.to_vec()?, vec![1.5; 256]);
/// # Ok::<(), gpu_runtime::Error>(())
/// ```
#[derive(Clone)]
pub struct Module {
    ctx: Context,
    inner: Arc<LoadedModule>,
}

impl fmt::Debug for Module {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Module")
            .field("kernels", &self.inner.kernels)
            .field("cache_status", &self.inner.info.cache_status)
            .finish()
    }
}

impl Module {
    pub(crate) fn new(ctx: Context, inner: Arc<LoadedModule>) -> Module {
        Module { ctx, inner }
    }

    /// Loads a PTX, cubin or fatbin image (PyCUDA's `module_from_buffer`). PTX need not end in
    /// NUL. The JIT's logs are kept: [`jit_info_log`](Self::jit_info_log).
    ///
    /// ```no_run
    /// use gpu_runtime::{Context, driver::JitOptions, driver::Module, SourceModule};
    /// let ctx = Context::default()?;
    /// // PTX runs on every GPU from compute_75 up: the driver compiles it when loading.
    /// let ptx = SourceModule::new("__global__ void noop() {}").arch("compute_75").compile()?;
    /// let jit = JitOptions::default().max_registers(32).log_verbose(true);
    /// let module = Module::from_image(&ctx, &ptx.image, &jit)?;
    /// println!("{}", module.jit_info_log()); // registers and spills, per kernel
    /// assert!(module.get_function("noop")?.num_regs()? <= 32);
    /// # Ok::<(), gpu_runtime::Error>(())
    /// ```
    pub fn from_image(ctx: &Context, image: &[u8], jit: &JitOptions) -> Result<Module> {
        let loaded = LoadedModule::load(
            ctx,
            image,
            "the module image",
            Vec::new(),
            jit,
            LoadInfo::default(),
        )?;
        Ok(Module::new(ctx.clone(), Arc::new(loaded)))
    }

    /// Loads a PTX, cubin or fatbin file (PyCUDA's `module_from_file`).
    pub fn from_file(ctx: &Context, path: impl AsRef<Path>, jit: &JitOptions) -> Result<Module> {
        let path = path.as_ref();
        let image = std::fs::read(path).map_err(|source| Error::Io {
            action: "read",
            path: path.display().to_string(),
            source,
        })?;
        let what = path.display().to_string();
        let loaded = LoadedModule::load(ctx, &image, &what, Vec::new(), jit, LoadInfo::default())?;
        Ok(Module::new(ctx.clone(), Arc::new(loaded)))
    }

    /// The kernel `name`: a name given to [`SourceModule::kernels`](crate::SourceModule::kernels),
    /// else the symbol itself (the plain name under `extern "C"`, else the mangled one).
    pub fn get_function(&self, name: &str) -> Result<Function> {
        let m = &self.inner;
        let found = match m.kernels.iter().position(|(expr, _)| expr == name) {
            Some(i) => Some(m.functions[i]),
            None => m.lookup(name)?,
        };
        let found = found.ok_or_else(|| Error::KernelNotFound {
            name: name.to_owned(),
        })?;
        Ok(Function::from_parts(
            self.ctx.clone(),
            self.inner.clone(),
            found,
            Cow::Owned(name.to_owned()),
        ))
    }

    /// The `__device__` or `__constant__` variable `name`: its address and size.
    ///
    /// ```no_run
    /// use gpu_runtime::{launch::Arg, Context, SourceModule};
    /// let ctx = Context::default()?;
    /// let module = SourceModule::new(
    ///     "__constant__ float taps[4];
    ///      __global__ void weigh(float *x) { x[threadIdx.x] *= taps[threadIdx.x]; }",
    /// )
    /// .load(&ctx)?;
    /// // Set from the host before the launch; every thread then reads it through the cache.
    /// module.get_global("taps")?.write(&[0.5f32, 1.0, 2.0, 4.0])?;
    /// let mut x = vec![1.0f32; 4];
    /// module.get_function("weigh")?.call(1, 4, &mut [Arg::host_in_out(&mut x)])?;
    /// assert_eq!(x, [0.5, 1.0, 2.0, 4.0]);
    /// # Ok::<(), gpu_runtime::Error>(())
    /// ```
    pub fn get_global(&self, name: &str) -> Result<ModuleGlobal> {
        let not_found = || Error::GlobalNotFound {
            name: name.to_owned(),
        };
        let c_name = CString::new(name).map_err(|_| not_found())?;
        self.ctx.bind()?;
        // SAFETY: live module, whose context is current.
        let (ptr, bytes) = match unsafe { calls::module_get_global(self.inner.raw, &c_name) } {
            Ok(found) => found,
            Err(Failed {
                code: sys::CUresult::CUDA_ERROR_NOT_FOUND,
                ..
            }) => return Err(not_found()),
            Err(e) => return Err(e.into()),
        };
        if self.inner.vars.vars() == ModuleVars::None {
            return Err(crate::driver::module::vars::toolchain_table_error(name));
        }
        Ok(ModuleGlobal {
            ctx: self.ctx.clone(),
            module: self.inner.clone(),
            name: name.to_owned(),
            ptr,
            bytes,
        })
    }

    /// What the disk cache did when this module was built (`None` for an image loaded
    /// directly).
    pub fn cache_status(&self) -> Option<CacheStatus> {
        self.inner.info.cache_status
    }

    /// The build directory kept by [`SourceModule::keep`](crate::SourceModule::keep).
    pub fn build_dir(&self) -> Option<&Path> {
        self.inner.info.build_dir.as_deref()
    }

    /// The compiler's log (warnings) from building this module, empty when there were none.
    pub fn compile_log(&self) -> &str {
        &self.inner.info.compile_log
    }

    /// The driver JIT's information log from loading (e.g. register use with `log_verbose`);
    /// empty for a cubin, which loads without a JIT step.
    pub fn jit_info_log(&self) -> &str {
        &self.inner.info.jit_info_log
    }

    /// The driver JIT's error log from loading (warnings; failures are returned as errors).
    pub fn jit_error_log(&self) -> &str {
        &self.inner.info.jit_error_log
    }

    /// The driver's module handle.
    pub fn raw(&self) -> sys::CUmodule {
        self.inner.raw
    }

    /// The context the module is loaded in.
    pub fn context(&self) -> &Context {
        &self.ctx
    }
}

/// A `__device__` or `__constant__` variable of a loaded module: address and size, with
/// checked copies to and from the host, ordered with the launches of the module's kernels as
/// [`Global`](crate::driver::Global)'s are.
pub struct ModuleGlobal {
    ctx: Context,
    module: Arc<LoadedModule>,
    name: String,
    ptr: sys::CUdeviceptr,
    bytes: usize,
}

impl fmt::Debug for ModuleGlobal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ModuleGlobal")
            .field("name", &self.name)
            .field("ptr", &self.ptr)
            .field("bytes", &self.bytes)
            .finish()
    }
}

impl ModuleGlobal {
    /// The device address.
    pub fn device_ptr(&self) -> sys::CUdeviceptr {
        self.ptr
    }

    /// The size in bytes.
    pub fn size_bytes(&self) -> usize {
        self.bytes
    }

    fn check_size<T>(&self, operation: &'static str, len: usize) -> Result<()> {
        let bytes = len * std::mem::size_of::<T>();
        if bytes != self.bytes {
            return Err(CopyError::GlobalSize {
                operation,
                name: self.name.clone(),
                global_bytes: self.bytes,
                host_bytes: bytes,
                len,
                element_bytes: std::mem::size_of::<T>(),
            }
            .into());
        }
        Ok(())
    }

    /// Copies `data` into the variable; its size must be the variable's. Ordered with the
    /// launches of the module's kernels on every stream, as [`Global::set`] is.
    ///
    /// [`Global::set`]: crate::driver::Global::set
    pub fn write<T: DeviceRepr>(&self, data: &[T]) -> Result<()> {
        self.check_size::<T>("ModuleGlobal::write", data.len())?;
        crate::driver::module::global::write_global(&self.ctx, &self.module, self.ptr, data)
    }

    /// Copies the variable into `out`; its size must be the variable's. Waits for the
    /// launches of the module's kernels that may write it, as [`Global::get`] does.
    ///
    /// [`Global::get`]: crate::driver::Global::get
    pub fn read<T: DeviceRepr>(&self, out: &mut [T]) -> Result<()> {
        self.check_size::<T>("ModuleGlobal::read", out.len())?;
        crate::driver::module::global::read_global(&self.ctx, &self.module, self.ptr, out)
    }
}
