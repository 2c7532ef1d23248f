//! [`Module`]: a loaded module's kernels and global symbols, from a [`SourceModule`] or from a
//! PTX, cubin or fatbin image (PyCUDA's `module_from_file` / `module_from_buffer`).
//!
//! [`SourceModule`]: crate::SourceModule

use std::borrow::Cow;
use std::ffi::{c_void, CString};
use std::fmt;
use std::path::Path;
use std::sync::Arc;

use cudarc::driver::sys::{self, CUjit_option};

use crate::cache::CacheStatus;
use crate::context::Context;
use crate::error::{check, Error, Result};
use crate::module::{Function, LoadInfo, LoadedModule};
use crate::repr::DeviceRepr;

/// Options for the driver's JIT when loading PTX (PyCUDA's `jit_options`).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct JitOptions {
    /// `CU_JIT_MAX_REGISTERS`: the most registers a thread may use.
    pub max_registers: Option<u32>,
    /// `CU_JIT_OPTIMIZATION_LEVEL`, 0 to 4.
    pub optimization_level: Option<u32>,
    /// `CU_JIT_GENERATE_LINE_INFO`.
    pub generate_line_info: bool,
    /// `CU_JIT_GENERATE_DEBUG_INFO`.
    pub generate_debug_info: bool,
    /// `CU_JIT_LOG_VERBOSE`.
    pub log_verbose: bool,
    /// Room for each of the info and error logs, in bytes.
    pub log_size: u32,
}

impl Default for JitOptions {
    fn default() -> Self {
        JitOptions {
            max_registers: None,
            optimization_level: None,
            generate_line_info: false,
            generate_debug_info: false,
            log_verbose: false,
            log_size: 8192,
        }
    }
}

impl JitOptions {
    /// Sets `max_registers`.
    pub fn max_registers(mut self, n: u32) -> Self {
        self.max_registers = Some(n);
        self
    }

    /// Sets `optimization_level`.
    pub fn optimization_level(mut self, level: u32) -> Self {
        self.optimization_level = Some(level);
        self
    }

    /// Sets `log_verbose`.
    pub fn log_verbose(mut self, yes: bool) -> Self {
        self.log_verbose = yes;
        self
    }
}

/// Loads an image with `cuModuleLoadDataEx`, returning the module and the JIT's info and
/// error logs. The context must be current.
pub(crate) fn load_image(
    image: &[u8],
    what: &str,
    jit: &JitOptions,
) -> Result<(sys::CUmodule, String, String)> {
    let ptx_without_nul = image_kind(image) == Kind::Ptx && image.last() != Some(&0);
    let owned;
    let image = if ptx_without_nul {
        owned = [image, &[0]].concat();
        &owned[..]
    } else {
        image
    };
    if image.is_empty() || image == [0] {
        return Err(Error::ModuleLoad {
            what: what.to_owned(),
            code: sys::CUresult::CUDA_ERROR_INVALID_IMAGE as u32,
            name: "CUDA_ERROR_INVALID_IMAGE".into(),
            log: "the image is empty".into(),
        });
    }
    if let Some(level) = jit.optimization_level.filter(|&l| l > 4) {
        return Err(Error::InvalidCompileOption {
            option: "optimization_level",
            detail: format!("{level} is not a JIT optimization level: use 0 to 4"),
        });
    }
    let size = jit.log_size.max(1) as usize;
    let mut info = vec![0u8; size];
    let mut error = vec![0u8; size];
    // The driver reads each option's value from the pointer-sized slot itself.
    let mut opts: Vec<CUjit_option> = vec![
        CUjit_option::CU_JIT_INFO_LOG_BUFFER,
        CUjit_option::CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES,
        CUjit_option::CU_JIT_ERROR_LOG_BUFFER,
        CUjit_option::CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
    ];
    let mut vals: Vec<*mut c_void> = vec![
        info.as_mut_ptr().cast(),
        size as *mut c_void,
        error.as_mut_ptr().cast(),
        size as *mut c_void,
    ];
    let mut push = |o, v: usize| {
        opts.push(o);
        vals.push(v as *mut c_void);
    };
    if let Some(n) = jit.max_registers {
        push(CUjit_option::CU_JIT_MAX_REGISTERS, n as usize);
    }
    if let Some(l) = jit.optimization_level {
        push(CUjit_option::CU_JIT_OPTIMIZATION_LEVEL, l as usize);
    }
    if jit.generate_line_info {
        push(CUjit_option::CU_JIT_GENERATE_LINE_INFO, 1);
    }
    if jit.generate_debug_info {
        push(CUjit_option::CU_JIT_GENERATE_DEBUG_INFO, 1);
    }
    if jit.log_verbose {
        push(CUjit_option::CU_JIT_LOG_VERBOSE, 1);
    }
    let mut raw = std::ptr::null_mut();
    // SAFETY: the image is non-empty and, for PTX, NUL-terminated; opts and vals have the same
    // length and the log buffers have the sizes passed and outlive the call.
    let r = unsafe {
        sys::cuModuleLoadDataEx(
            &mut raw,
            image.as_ptr().cast(),
            opts.len() as u32,
            opts.as_mut_ptr(),
            vals.as_mut_ptr(),
        )
    };
    let text = |b: &[u8]| {
        let end = b.iter().position(|&c| c == 0).unwrap_or(b.len());
        String::from_utf8_lossy(&b[..end]).trim_end().to_owned()
    };
    if r != sys::CUresult::CUDA_SUCCESS {
        return Err(Error::ModuleLoad {
            what: what.to_owned(),
            code: r as u32,
            name: format!("{r:?}"),
            log: text(&error),
        });
    }
    Ok((raw, text(&info), text(&error)))
}

#[derive(PartialEq, Eq)]
enum Kind {
    Elf,
    Fatbin,
    Ptx,
}

fn image_kind(image: &[u8]) -> Kind {
    if image.starts_with(b"\x7fELF") {
        Kind::Elf
    } else if image.starts_with(&0xBA55_ED50u32.to_le_bytes())
        || image.starts_with(&0x466243B1u32.to_le_bytes())
    {
        Kind::Fatbin
    } else {
        Kind::Ptx
    }
}

/// A module loaded into a context: PyCUDA's `Module`. Cheap to clone; the module stays loaded
/// while a clone, or a [`Function`] or [`ModuleGlobal`] from it, is alive.
///
/// [`SourceModule::load`](crate::SourceModule::load) makes one from CUDA C; a PTX, cubin or
/// fatbin built elsewhere loads with [`from_file`](Self::from_file):
///
/// ```no_run
/// use gpu_runtime::{Arg, ArgType, Context, JitOptions, Module};
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
    /// use gpu_runtime::{Context, JitOptions, Module, SourceModule};
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
        let image = std::fs::read(path).map_err(|e| Error::Io {
            path: path.display().to_string(),
            message: e.to_string(),
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
    /// use gpu_runtime::{Arg, Context, SourceModule};
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
        let (mut ptr, mut bytes) = (0, 0);
        // SAFETY: valid out-pointers, live module, NUL-terminated name.
        let r = unsafe { sys::cuModuleGetGlobal_v2(&mut ptr, &mut bytes, self.inner.raw, c_name.as_ptr()) };
        if r == sys::CUresult::CUDA_ERROR_NOT_FOUND {
            return Err(not_found());
        }
        check("cuModuleGetGlobal", r)?;
        Ok(ModuleGlobal {
            ctx: self.ctx.clone(),
            _module: self.inner.clone(),
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

    /// The driver JIT's information log from loading (e.g. register use with `log_verbose`).
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
/// checked copies to and from the host.
pub struct ModuleGlobal {
    ctx: Context,
    _module: Arc<LoadedModule>,
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
            return Err(Error::SizeMismatch {
                operation,
                detail: format!(
                    "the global `{}` has {} bytes but the host data has {bytes} ({len} elements of {} bytes)",
                    self.name,
                    self.bytes,
                    std::mem::size_of::<T>()
                ),
            });
        }
        Ok(())
    }

    /// Copies `data` into the variable; its size must be the variable's. Waits for all the
    /// context's work before, and for the copy after (see [`Global`](crate::Global)).
    pub fn write<T: DeviceRepr>(&self, data: &[T]) -> Result<()> {
        self.check_size::<T>("ModuleGlobal::write", data.len())?;
        crate::global::write_global(&self.ctx, self.ptr, data)
    }

    /// Copies the variable into `out`; its size must be the variable's. Waits for all the
    /// context's work first.
    pub fn read<T: DeviceRepr>(&self, out: &mut [T]) -> Result<()> {
        self.check_size::<T>("ModuleGlobal::read", out.len())?;
        crate::global::read_global(&self.ctx, self.ptr, out)
    }
}
