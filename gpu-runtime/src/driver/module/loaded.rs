//! A compiled image loaded into a context, with its kernels looked up once.

use std::ffi::CString;
use std::sync::Arc;

use cudarc::driver::sys::{self, CUfunction_attribute as FuncAttr};

use crate::driver::calls::{self, Failed};
use crate::driver::context::core::Context;
use crate::driver::ordering::ModuleUses;
use crate::error::{Error, Result};

/// Per-kernel limits, read from the driver once per [`Function`](crate::driver::Function), at its
/// first launch or [`limits`](crate::driver::Function::limits) call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KernelLimits {
    /// `CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK`: may be below the device's because of registers.
    pub max_threads_per_block: u32,
    /// `CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES`: static shared memory.
    pub static_shared_bytes: u32,
}

/// A compiled module loaded into a context, with its kernels looked up once.
pub(crate) struct LoadedModule {
    pub(crate) raw: sys::CUmodule,
    ctx_raw: sys::CUcontext,
    /// The requested kernels (name expressions), in order, with their lowered names.
    pub(crate) kernels: Vec<(String, String)>,
    pub(crate) functions: Vec<sys::CUfunction>,
    /// The CUDA C source, when known: where `Function::prepare` reads declarations from.
    pub(crate) source: Option<Arc<str>>,
    /// For a module linked from several CUDA C sources, each one's text: a kernel's
    /// declaration is read from the source that declares it (see [`Self::declarations`]).
    pub(crate) linked_sources: Vec<Arc<str>>,
    pub(crate) info: LoadInfo,
    /// The stream-ordering record of the module's `__device__` and `__constant__` variables,
    /// which every launch of one of its kernels uses (found in the image at load: see
    /// `vars.rs`), and `Global::set`/`get` copy to and from.
    pub(crate) vars: ModuleUses,
}

/// What happened while building and loading a module.
#[derive(Debug, Clone, Default)]
pub(crate) struct LoadInfo {
    pub(crate) cache_status: Option<crate::compiler::cache::CacheStatus>,
    pub(crate) build_dir: Option<std::path::PathBuf>,
    pub(crate) compile_log: String,
    pub(crate) jit_info_log: String,
    pub(crate) jit_error_log: String,
}

// SAFETY: module and function handles may be used from any thread of the process.
unsafe impl Send for LoadedModule {}
// SAFETY: as above; the struct is immutable after construction but for `vars`, whose record
// and gate are thread-safe.
unsafe impl Sync for LoadedModule {}

impl LoadedModule {
    /// The driver's module handle.
    pub(crate) fn raw(&self) -> sys::CUmodule {
        self.raw
    }

    /// The CUDA C source to read the declaration of `kernel` (its C name) from: the module's
    /// source; for a linked module, the first of its sources that declares it (the first
    /// source when none does, whose lookup then says what it declares). `None` for an image.
    pub(crate) fn declarations(&self, kernel: &str) -> Option<&str> {
        if let Some(s) = &self.source {
            return Some(s);
        }
        crate::compiler::link::declaring_source(&self.linked_sources, kernel)
    }

    /// Loads `image` into `ctx` (current on this thread) and looks up each kernel.
    pub(crate) fn load(
        ctx: &Context,
        image: &[u8],
        what: &str,
        kernels: Vec<(String, String)>,
        jit: &crate::driver::module::image::JitOptions,
        mut info: LoadInfo,
    ) -> Result<LoadedModule> {
        ctx.bind()?;
        let (raw, info_log, error_log) = crate::driver::module::image::load_image(image, what, jit)?;
        info.jit_info_log = info_log;
        info.jit_error_log = error_log;
        let mut module = LoadedModule {
            raw,
            ctx_raw: ctx.raw(),
            kernels: Vec::new(),
            functions: Vec::new(),
            source: None,
            linked_sources: Vec::new(),
            info,
            vars: ModuleUses::new(crate::driver::module::vars::module_vars(image)),
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

    /// The function whose symbol is `symbol`; `None` when there is none.
    pub(crate) fn lookup(&self, symbol: &str) -> Result<Option<sys::CUfunction>> {
        let Ok(c_name) = CString::new(symbol) else {
            return Ok(None);
        };
        // SAFETY: live module.
        match unsafe { calls::module_get_function(self.raw, &c_name) } {
            Ok(f) => Ok(Some(f)),
            Err(Failed {
                code: sys::CUresult::CUDA_ERROR_NOT_FOUND,
                ..
            }) => Ok(None),
            Err(e) => Err(e.into()),
        }
    }
}

impl KernelLimits {
    /// Reads the limits of `f`, whose context must be current. With lazy loading (the driver's
    /// default since CUDA 12.2) this loads the kernel onto the GPU, which `cuModuleGetFunction`
    /// leaves to the first use: so it is done at the first launch, not when a module is loaded.
    pub(crate) fn query(f: sys::CUfunction) -> Result<KernelLimits> {
        let attr = |a| -> Result<u32> {
            // SAFETY: live function.
            let v = unsafe { calls::func_get_attribute(f, a) }?;
            Ok(v.max(0) as u32)
        };
        Ok(KernelLimits {
            max_threads_per_block: attr(FuncAttr::CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK)?,
            static_shared_bytes: attr(FuncAttr::CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES)?,
        })
    }
}

impl Drop for LoadedModule {
    fn drop(&mut self) {
        // SAFETY: the context outlives its modules (ContextInner drops its cache before
        // releasing the context, and kernels hold the context); the module is unloaded once.
        unsafe {
            if calls::ctx_set_current(self.ctx_raw).is_ok() {
                let _ = calls::module_unload(self.raw);
            }
        }
    }
}
