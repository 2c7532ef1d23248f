//! Kernel functions: compiled, loaded and looked up once (`prepare`), then launched with no
//! further lookups (`launch`).

use std::borrow::Cow;
use std::fmt;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, OnceLock};

use cudarc::driver::sys::{self, CUfunction_attribute as FuncAttr};

use crate::compiler::source::ModuleSource;
use crate::driver::calls;
use crate::driver::context::core::Context;
use crate::driver::module::loaded::{KernelLimits, LoadedModule};
use crate::driver::ordering::ModuleUses;
use crate::error::{Error, Result};

/// A kernel function compiled, loaded and looked up: what `prepare` returns, ready to launch with no
/// further lookups. The `#[kernel]` macro wraps it in a typed handle.
///
/// A kernel of a [`Module`](crate::driver::Module) built at run time is a `Function` too; its
/// parameter types are declared once with [`prepare_args`](Self::prepare_args):
///
/// ```no_run
/// use gpu_runtime::{launch::Arg, launch::ArgType, Context, SourceModule};
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
    /// Read at the first launch (see [`KernelLimits::query`]).
    limits: OnceLock<KernelLimits>,
    pub(crate) name: Cow<'static, str>,
    pub(crate) shared_mem_bytes: u32,
    /// The dynamic shared memory this function has been allowed so far (beyond the default
    /// 48 KiB a block gets without opting in). Shared by clones: the driver keeps the attribute
    /// per CUfunction, so a clone made for one launch's size (`with_shared_mem`, the generated
    /// `prepared_call_shared`) opts in once for all of them.
    pub(crate) optin_shared: Arc<AtomicU32>,
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
            limits: self.limits.clone(),
            name: self.name.clone(),
            shared_mem_bytes: self.shared_mem_bytes,
            optin_shared: self.optin_shared.clone(),
        }
    }
}

impl Function {
    /// Function `index` of `source` in `ctx`: compiled and loaded on the first call in a context,
    /// a cache lookup afterwards.
    pub fn prepare(ctx: &Context, source: &'static ModuleSource, index: usize) -> Result<Function> {
        let module = ctx.module(source)?;
        let name = source.kernels().get(index).copied().unwrap_or("?");
        Function::from_loaded(ctx, module, index, name)
    }

    /// Function `index` of an already loaded module (one linked at run time).
    pub(crate) fn from_loaded(
        ctx: &Context,
        module: Arc<LoadedModule>,
        index: usize,
        name: &'static str,
    ) -> Result<Function> {
        let &func = module.functions.get(index).ok_or_else(|| Error::KernelNotFound {
            name: name.to_owned(),
        })?;
        Ok(Function {
            ctx: ctx.clone(),
            _module: module,
            func,
            limits: OnceLock::new(),
            name: Cow::Borrowed(name),
            shared_mem_bytes: 0,
            optin_shared: Arc::new(AtomicU32::new(0)),
        })
    }

    pub(crate) fn from_parts(
        ctx: Context,
        module: Arc<LoadedModule>,
        func: sys::CUfunction,
        name: Cow<'static, str>,
    ) -> Function {
        Function {
            ctx,
            _module: module,
            func,
            limits: OnceLock::new(),
            name,
            shared_mem_bytes: 0,
            optin_shared: Arc::new(AtomicU32::new(0)),
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

    /// The most threads a block of this kernel may have, and its static shared memory. The
    /// first call (or launch) asks the driver, which loads the kernel onto the GPU then if it
    /// has not yet: with CUDA's lazy loading, a module's kernels load at their first use.
    pub fn limits(&self) -> Result<KernelLimits> {
        self.kernel_limits().copied()
    }

    /// [`limits`](Self::limits), by reference: what each launch checks its configuration
    /// against.
    #[inline]
    pub(crate) fn kernel_limits(&self) -> Result<&KernelLimits> {
        match self.limits.get() {
            Some(limits) => Ok(limits),
            None => self.read_limits(),
        }
    }

    #[cold]
    fn read_limits(&self) -> Result<&KernelLimits> {
        self.ctx.bind()?;
        let limits = KernelLimits::query(self.func)?;
        Ok(self.limits.get_or_init(|| limits))
    }

    /// The driver's function handle.
    pub fn raw(&self) -> sys::CUfunction {
        self.func
    }

    /// The record of the variables of the kernel's module, which each of its launches uses
    /// (see [`ModuleUses`]).
    #[inline(always)]
    pub(crate) fn module_vars(&self) -> &ModuleUses {
        &self._module.vars
    }

    /// Allows launches with `bytes` of dynamic shared memory, beyond the 48 KiB a block gets
    /// without opting in (cold: once per size).
    #[cold]
    pub(crate) fn opt_in_shared(&self, bytes: u32) -> Result<()> {
        // SAFETY: live function; the attribute takes a byte count.
        unsafe {
            calls::func_set_attribute(
                self.func,
                FuncAttr::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                bytes as i32,
            )
        }?;
        self.optin_shared.fetch_max(bytes, Ordering::Relaxed);
        Ok(())
    }
}
