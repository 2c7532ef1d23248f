//! Preparing a kernel with its parameter types checked against the C declaration, and
//! launching it with [`Arg`]s.

use std::ffi::c_void;
use std::time::Duration;

use super::arg::*;
use super::declared::{resolve, Signature, StructLayouts};
use crate::driver::module::function::Function;
use crate::driver::stream::Stream;
use crate::error::{ArgumentError, Result};
use crate::launch::cluster::LaunchEx;
use crate::launch::dims::Dim3;
use crate::launch::launch_stream::LaunchStream;

/// A kernel with its parameter types checked: launch it with [`Arg`]s.
///
/// ```no_run
/// use gpu_runtime::{launch::Arg, Context, SourceModule, Stream};
/// let ctx = Context::default()?;
/// let module = SourceModule::new(
///     "__global__ void add(float *y, const float *x, int n) {
///          int i = blockIdx.x * blockDim.x + threadIdx.x;
///          if (i < n) y[i] += x[i]; }",
/// )
/// .load(&ctx)?;
/// // The types come from the C declaration: (MutPtr, ConstPtr, I32).
/// let add = module.get_function("add")?.prepare_declared()?;
/// let n = 1 << 20;
/// let x = ctx.to_device(&vec![1.0f32; n])?;
/// let mut y = ctx.alloc_zeros::<f32>(n)?;
/// let args = [Arg::output(&mut y), Arg::input(&x), Arg::I32(n as i32)];
/// let stream = Stream::new(&ctx)?;
/// add.prepared_async_call(n / 256, 256, &stream, &args)?;
/// stream.synchronize()?;
/// let t = add.prepared_timed_call(n / 256, 256, &args)?;
/// println!("add: {t:?}");
/// assert_eq!(y.to_vec()?, vec![2.0; n]);
/// # Ok::<(), gpu_runtime::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct PreparedFunction {
    pub(super) function: Function,
    pub(super) sig: Signature,
    /// How it launches: plainly, or as a programmatic dependent launch.
    pub(super) ex: LaunchEx,
}

impl Function {
    /// The kernel's C declaration, from the module's source.
    pub(super) fn declaration(&self) -> Result<(gpu_cuda_source::KernelDecl, &str)> {
        let base = self.name().split('<').next().unwrap_or("").trim();
        let source = self
            ._module
            .declarations(base)
            .ok_or_else(|| ArgumentError::NoDeclaration {
                kernel: self.name().into(),
            })?;
        let decl = gpu_cuda_source::find_kernel(source, base).map_err(|source| {
            ArgumentError::UnreadableDeclaration {
                kernel: self.name().into(),
                source: Box::new(source),
            }
        })?;
        Ok((decl, source))
    }

    /// The size of parameter `i` in the loaded kernel, as the driver reports it (CUDA 12.4 and
    /// later), for structs passed by value.
    fn driver_param_size(&self, i: usize) -> Option<usize> {
        // cudarc panics on a symbol the driver lacks: ask for the version first.
        if crate::driver::init::driver_version().ok()? < (12, 4) {
            return None;
        }
        self.context().bind().ok()?;
        // SAFETY: a live function, and a driver that has the call (checked above); an index
        // past the last parameter is an error the driver returns. Any error means "unknown"
        // here: the declaration decides alone.
        let (_offset, size) = unsafe { crate::driver::calls::func_get_param_info(self.raw(), i) }.ok()?;
        Some(size)
    }

    fn prepare_checked(&self, given: Option<&[ArgType]>) -> Result<PreparedFunction> {
        let (decl, source) = self.declaration()?;
        let param_size = |i| self.driver_param_size(i);
        let layouts = StructLayouts {
            source,
            param_size: &param_size,
        };
        let sig = resolve(self.name(), &decl, given, &layouts)?;
        Ok(PreparedFunction {
            function: self.clone(),
            sig,
            ex: LaunchEx::default(),
        })
    }

    /// Declares the kernel's parameter types (PyCUDA's `prepare`), after checking them against
    /// the kernel's C declaration in the module's source.
    ///
    /// Scalars and pointers must be the declared ones ([`ArgType::Ptr`] takes the declared
    /// constness). A CUDA vector type must be the declared one ([`ArgType::Vector`]); so must
    /// `cudaTextureObject_t` ([`ArgType::Texture`]) and `cudaSurfaceObject_t`
    /// ([`ArgType::Surface`]). A struct by value ([`ArgType::Struct`]) must have the C struct's
    /// size, which the driver reports for the loaded kernel (CUDA 12.4 and later) or NVRTC
    /// computes from the module's source; with [`StructType::with_fields`](super::StructType::with_fields),
    /// its alignment and field offsets are compared too, compiling the struct's definition
    /// from the source with NVRTC (as [`check_layout`](crate::compiler::layout::check_layout)
    /// does).
    ///
    /// Kernels from an image ([`Module::from_image`](crate::driver::Module::from_image)) have no known
    /// declaration: use [`prepare_args_unchecked`](Self::prepare_args_unchecked).
    ///
    /// ```no_run
    /// use gpu_runtime::{launch::Arg, launch::ArgType, ArgumentError, Context, Error, SourceModule};
    /// let ctx = Context::default()?;
    /// let module = SourceModule::new(
    ///     "__global__ void fill(double *y, double v) { y[threadIdx.x] = v; }",
    /// )
    /// .load(&ctx)?;
    /// let f = module.get_function("fill")?;
    /// // A `float` passed for a `double` would be read as garbage; it is refused here instead.
    /// let wrong = f.prepare_args(&[ArgType::MutPtr, ArgType::F32]);
    /// assert!(matches!(wrong, Err(Error::Argument(ArgumentError::TypeDiffers { index: 1, .. }))));
    /// let fill = f.prepare_args(&[ArgType::MutPtr, ArgType::F64])?;
    /// let mut y = ctx.alloc::<f64>(32)?;
    /// fill.prepared_call(1, 32, &[Arg::output(&mut y), Arg::F64(0.25)])?;
    /// assert_eq!(y.to_vec()?, vec![0.25; 32]);
    /// # Ok::<(), gpu_runtime::Error>(())
    /// ```
    pub fn prepare_args(&self, arg_types: &[ArgType]) -> Result<PreparedFunction> {
        self.prepare_checked(Some(arg_types))
    }

    /// [`prepare_args`](Self::prepare_args) with the types written as a PyCUDA format string:
    /// `func.prepare("PPfi")` in PyCUDA is `func.prepare_format("PPfi")` here, checked against
    /// the C declaration all the same (`P` takes the declared pointer's constness). The
    /// characters are listed at [`ArgType::parse_format`]; one it does not take is an
    /// [`Error::ArgumentFormat`](crate::Error::ArgumentFormat) naming it.
    ///
    /// ```no_run
    /// use gpu_runtime::{launch::Arg, ArgumentError, Context, Error, SourceModule};
    /// let ctx = Context::default()?;
    /// let module = SourceModule::new(
    ///     "__global__ void scale(float *y, const float *x, float a, int n) {
    ///          int i = blockIdx.x * blockDim.x + threadIdx.x;
    ///          if (i < n) y[i] = a * x[i]; }",
    /// )
    /// .load(&ctx)?;
    /// let f = module.get_function("scale")?;
    /// let scale = f.prepare_format("PPfi")?;
    /// // `d` is a double, but the kernel takes a float: refused before any launch.
    /// assert!(matches!(f.prepare_format("PPdi"), Err(Error::Argument(ArgumentError::TypeDiffers { index: 2, .. }))));
    /// let x = ctx.to_device(&[2.0f32; 256])?;
    /// let mut y = ctx.alloc::<f32>(256)?;
    /// scale.prepared_call(1, 256, &[Arg::output(&mut y), Arg::input(&x), Arg::F32(1.5), Arg::I32(256)])?;
    /// assert_eq!(y.to_vec()?, vec![3.0; 256]);
    /// # Ok::<(), gpu_runtime::Error>(())
    /// ```
    pub fn prepare_format(&self, format: &str) -> Result<PreparedFunction> {
        self.prepare_checked(Some(&ArgType::parse_format(format)?))
    }

    /// Prepares the kernel with the parameter types of its C declaration, read from the
    /// module's source: [`prepare_args`](Self::prepare_args) without writing the types out. A
    /// struct parameter then takes any [`Arg::by_value`] of the C struct's size.
    pub fn prepare_declared(&self) -> Result<PreparedFunction> {
        self.prepare_checked(None)
    }

    /// [`prepare_args`](Self::prepare_args) without the declaration check, for kernels loaded from an
    /// image. Arguments are still checked against `arg_types` at each launch.
    ///
    /// # Safety
    /// `arg_types` must match the kernel's parameters one for one, in order and in size:
    /// nothing can check this, and a wrong list makes the kernel read garbage parameters. A
    /// kernel must not write through a [`ConstPtr`](ArgType::ConstPtr) parameter, nor through
    /// a [`Ptr`](ArgType::Ptr) one given an [`Arg::input`].
    pub unsafe fn prepare_args_unchecked(&self, arg_types: &[ArgType]) -> Result<PreparedFunction> {
        Ok(PreparedFunction {
            function: self.clone(),
            sig: Signature::unchecked(self.name(), arg_types)?,
            ex: LaunchEx::default(),
        })
    }
}

impl PreparedFunction {
    /// The kernel.
    pub fn function(&self) -> &Function {
        &self.function
    }

    /// The declared parameter types.
    pub fn arg_types(&self) -> &[ArgType] {
        &self.sig.types
    }

    /// The same prepared kernel launching with `bytes` of dynamic shared memory (PyCUDA's
    /// `shared_size=`; see [`Function::with_shared_mem`]). For one staged call only, see
    /// [`CallOptions::shared_mem`](super::CallOptions::shared_mem).
    pub fn with_shared_mem(mut self, bytes: u32) -> PreparedFunction {
        self.function = self.function.with_shared_mem(bytes);
        self
    }

    /// The same prepared kernel as a programmatic dependent launch (compute capability 9.0,
    /// CUDA 12.3): each launch may start while the kernel before it on the stream is still
    /// running, so that its launch and prologue overlap that kernel's tail
    /// (`CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION`). Refused on older devices
    /// ([`LaunchConfigError::DependentLaunchUnsupported`](crate::LaunchConfigError::DependentLaunchUnsupported))
    /// and drivers ([`Error::Unsupported`](crate::Error::Unsupported)).
    ///
    /// # Safety
    /// The kernel calls `cudaGridDependencySynchronize()` (declared for NVRTC by
    /// `#include <gpu_runtime/graph.h>`) in every thread, before the thread touches any memory
    /// that work queued before it on the stream reads or writes (and before an early `return`):
    /// until then it runs beside the kernel before it, outside the stream ordering this crate
    /// keeps for every buffer. The call waits until that kernel has finished and its writes
    /// are visible.
    pub unsafe fn dependent_launch(mut self) -> Result<PreparedFunction> {
        // SAFETY: the caller's guarantee.
        self.ex = unsafe { self.ex.with_dependent_launch(&self.function) }?;
        Ok(self)
    }

    /// Launches on the legacy default stream.
    pub fn prepared_call(
        &self,
        grid: impl Into<Dim3>,
        block: impl Into<Dim3>,
        args: &[Arg<'_>],
    ) -> Result<()> {
        self.launch(
            grid.into(),
            block.into(),
            crate::launch::buffer_args::legacy_stream(&self.function),
            args,
        )
    }

    /// Launches on `stream`; returns without waiting.
    pub fn prepared_async_call(
        &self,
        grid: impl Into<Dim3>,
        block: impl Into<Dim3>,
        stream: &Stream,
        args: &[Arg<'_>],
    ) -> Result<()> {
        let s = crate::launch::buffer_args::stream_arg(&self.function, stream)?;
        self.launch(grid.into(), block.into(), s, args)
    }

    /// Launches, waits, and returns the GPU time the kernel took.
    pub fn prepared_timed_call(
        &self,
        grid: impl Into<Dim3>,
        block: impl Into<Dim3>,
        args: &[Arg<'_>],
    ) -> Result<Duration> {
        let (grid, block) = (grid.into(), block.into());
        crate::launch::raw::timed(&self.function, || {
            self.launch(
                grid,
                block,
                crate::launch::buffer_args::legacy_stream(&self.function),
                args,
            )
        })
    }

    pub(super) fn launch(
        &self,
        grid: Dim3,
        block: Dim3,
        stream: LaunchStream<'_>,
        args: &[Arg<'_>],
    ) -> Result<()> {
        self.check(args, false)?;
        let mut params = [std::ptr::null_mut::<c_void>(); MAX_ARGS];
        for (slot, a) in params.iter_mut().zip(args) {
            *slot = a.param();
        }
        order_args(args, stream)?;
        // SAFETY: `check` proved one argument per parameter, each of the declared type (which
        // `prepare_args` matched with the C declaration, or the caller of `prepare_args_unchecked`
        // vouched for): by-value ones of the parameter's size, buffers in this context; every
        // argument is borrowed for the call (texture and surface objects borrow their owner),
        // and each buffer's and object's use was ordered on the stream, which keeps them alive
        // until the kernel ran; each param points into `args`, alive until launch_raw returns.
        unsafe {
            self.ex
                .launch_on(&self.function, grid, block, stream, &mut params[..args.len()])
        }
    }

    /// Checks every argument before anything is launched or copied.
    pub(super) fn check(&self, args: &[Arg<'_>], host_allowed: bool) -> Result<()> {
        self.sig.check(self.function.name(), args, host_allowed)?;
        for a in args {
            if let Arg::Ptr(p) = a {
                if !p.ctx.is(self.function.context().raw()) {
                    crate::launch::buffer_args::foreign_arg(self.function.context(), p.ctx)?;
                }
            }
        }
        Ok(())
    }
}

/// Orders each argument's use on `stream`: device buffers, and the memory behind texture and
/// surface objects.
pub(super) fn order_args(args: &[Arg<'_>], stream: LaunchStream<'_>) -> Result<()> {
    args.iter().try_for_each(|a| a.order_on(stream))
}
