//! Loading what the compiler built: [`SourceModule::load`], [`DynamicModule::load`] and the
//! [`LinkedModule`] it returns; and compiling a [`SourceModule`] for the default context's
//! device when it names no architecture. These are methods of the compiler's types, kept here
//! because they need a context, which the compiler never does.

use std::sync::Arc;

use crate::compiler::cache::CacheKey;
use crate::compiler::link::DynamicModule;
use crate::compiler::nvrtc::{CompiledModule, Target};
use crate::compiler::source_module::{CompileReport, SourceModule};
use crate::driver::context::core::Context;
use crate::driver::module::function::Function;
use crate::driver::module::image::JitOptions;
use crate::driver::module::loaded::{LoadInfo, LoadedModule};
use crate::driver::module::user::{Module, ModuleGlobal};
use crate::error::{Error, Result};

impl SourceModule {
    /// Compiles (or finds in the cache) and loads into `ctx`, once per context: a second
    /// `load` of the same source and options, or a `#[kernel]` `prepare` of it, returns the
    /// same module.
    pub fn load(&self, ctx: &Context) -> Result<Module> {
        let plan = self.plan(Some(ctx.compute_capability()))?;
        let loaded = ctx.module_for_plan(&plan)?;
        Ok(Module::new(ctx.clone(), loaded))
    }

    /// Compiles to a cubin (or PTX) without loading it: PyCUDA's `compiler.compile`. Needs no
    /// GPU when [`arch`](Self::arch) is given; without it, the default context's device is
    /// used.
    pub fn compile(&self) -> Result<CompiledModule> {
        self.compile_report().map(|r| r.module)
    }

    /// [`compile`](Self::compile), also saying what the cache did and where the entry is.
    pub fn compile_report(&self) -> Result<CompileReport> {
        self.plan(self.target_device()?)?.build()
    }

    /// The cache key this module compiles under; needs a GPU unless `arch` is given. It names
    /// `LD_LIBRARY_PATH`, along which the loader finds NVRTC (the entry names the file found);
    /// should compiling load another file, or `LD_LIBRARY_PATH` be unset, the entry is stored
    /// under a key naming NVRTC's version instead, which [`CompileReport::key`] gives.
    pub fn cache_key(&self) -> Result<CacheKey> {
        Ok(self.plan(self.target_device()?)?.key)
    }

    /// The compute capability to compile for: none when the architecture was given, else the
    /// default context's device's.
    fn target_device(&self) -> Result<Option<(u32, u32)>> {
        if self.has_target() {
            Ok(None)
        } else {
            Ok(Some(Context::default()?.compute_capability()))
        }
    }
}

impl DynamicModule {
    /// Compiles, links and loads the module into `ctx`, for its device.
    pub fn load(&self, ctx: &Context) -> Result<LinkedModule> {
        let cc = ctx.compute_capability();
        let image = self.link_image(Target::for_device(cc)?, cc)?;
        let kernels = self.kernel_names();
        let mut module = LoadedModule::load(
            ctx,
            &image.image,
            "the linked module",
            kernels
                .iter()
                .map(|k| k.to_string())
                .zip(image.lowered_names.iter().cloned())
                .collect(),
            &JitOptions::default(),
            LoadInfo::default(),
        )?;
        // Kept so that the kernels' launches are checked against their C declarations, as a
        // SourceModule's are.
        module.linked_sources = self.source_texts().map(Arc::from).collect();
        Ok(LinkedModule {
            ctx: ctx.clone(),
            module: Arc::new(module),
            kernels,
        })
    }
}

/// A [`DynamicModule`] loaded into a context.
pub struct LinkedModule {
    ctx: Context,
    module: Arc<LoadedModule>,
    kernels: Vec<&'static str>,
}

impl std::fmt::Debug for LinkedModule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LinkedModule")
            .field("kernels", &self.kernels)
            .finish()
    }
}

impl LinkedModule {
    /// The kernel `name` (one listed in `add_source`). It knows its C declaration, read from
    /// the source that declares it, so it launches with checked arguments as a
    /// [`SourceModule`]'s kernels do: [`Function::call`] with host arrays,
    /// [`Function::prepare_declared`] or [`Function::prepare_args`] with device memory.
    ///
    /// ```no_run
    /// use gpu_runtime::{launch::Arg, Context, compiler::DynamicModule};
    /// let ctx = Context::default()?;
    /// let mut m = DynamicModule::new();
    /// m.add_source("__device__ float twice(float x) { return 2 * x; }", "twice.cu", &[], &[])
    ///  .add_source(r#"
    ///     __device__ float twice(float x);
    ///     extern "C" __global__ void k(float *y, const float *x, int n) {
    ///         int i = blockIdx.x * blockDim.x + threadIdx.x;
    ///         if (i < n) y[i] = twice(x[i]); }"#,
    ///     "k.cu", &["k"], &[]);
    /// let linked = m.load(&ctx)?;
    /// let x = vec![1.5f32; 1000];
    /// let mut y = vec![0f32; 1000];
    /// // Checked against `k`'s declaration: a `&[f32]` for `float *y` would be refused.
    /// linked.get_function("k")?.call(4, 256, &mut [Arg::host_out(&mut y), Arg::host_in(&x), Arg::I32(1000)])?;
    /// assert_eq!(y, vec![3.0; 1000]);
    /// # Ok::<(), gpu_runtime::Error>(())
    /// ```
    pub fn get_function(&self, name: &str) -> Result<Function> {
        self.function(name)
    }

    /// The `__device__` or `__constant__` variable `name` of any of the linked sources: its
    /// address and size (as [`Module::get_global`]).
    pub fn get_global(&self, name: &str) -> Result<ModuleGlobal> {
        Module::new(self.ctx.clone(), self.module.clone()).get_global(name)
    }

    /// The kernel `name` (one listed in `add_source`): the same as
    /// [`get_function`](Self::get_function).
    pub fn function(&self, name: &str) -> Result<Function> {
        let index = self
            .kernels
            .iter()
            .position(|k| *k == name)
            .ok_or_else(|| Error::KernelNotFound {
                name: name.to_owned(),
            })?;
        Function::from_loaded(&self.ctx, self.module.clone(), index, self.kernels[index])
    }
}
