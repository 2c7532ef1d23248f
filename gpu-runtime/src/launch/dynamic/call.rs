//! The staged call (PyCUDA's `Function.__call__` with `drv.In`/`drv.Out`/`drv.InOut`): host
//! arrays copied to the device and back around one launch, on the context's staging stream or
//! the caller's, with the dynamic shared memory given per call.

use std::ffi::c_void;

use cudarc::driver::sys;

use super::arg::*;
use super::prepared::{order_args, PreparedFunction};
use crate::driver::module::function::Function;
use crate::driver::stream::Stream;
use crate::error::Result;
use crate::launch::buffer_args::stream_arg;
use crate::launch::cluster::LaunchEx;
use crate::launch::dims::Dim3;
use crate::launch::staged_call::StagedCall;
use crate::launch::staging::Staging;
use crate::tools::device_pool::PooledBuffer;

/// How one staged call runs (PyCUDA's `stream=` and `shared_size=` keywords of
/// `Function.__call__`): for [`Function::call_with`] and [`PreparedFunction::call_with`].
///
/// The default runs on the context's own staging stream with the kernel's dynamic shared memory
/// ([`Function::with_shared_mem`], 0 unless set).
///
/// ```no_run
/// use gpu_runtime::{launch::Arg, launch::CallOptions, Context, SourceModule, Stream};
/// let ctx = Context::default()?;
/// let module = SourceModule::new(
///     "__global__ void reverse(float *y, const float *x) {
///          extern __shared__ float tile[];
///          int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
///          tile[t] = x[i];
///          __syncthreads();
///          y[i] = tile[blockDim.x - 1 - t]; }",
/// )
/// .load(&ctx)?;
/// let x: Vec<f32> = (0..1024).map(|i| i as f32).collect();
/// let mut y = vec![0f32; 1024];
/// let stream = Stream::new(&ctx)?;
/// module.get_function("reverse")?.call_with(
///     4,
///     256,
///     &mut [Arg::host_out(&mut y), Arg::host_in(&x)],
///     CallOptions::new().stream(&stream).shared_mem(256 * 4),
/// )?;
/// assert_eq!(y[0], 255.0);
/// # Ok::<(), gpu_runtime::Error>(())
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct CallOptions<'s> {
    stream: Option<&'s Stream>,
    shared_mem: Option<u32>,
}

impl<'s> CallOptions<'s> {
    /// The defaults: the context's staging stream, the kernel's own dynamic shared memory.
    pub fn new() -> CallOptions<'s> {
        CallOptions::default()
    }

    /// Runs the copies in, the kernel and the copies out on `stream` (PyCUDA's `stream=`),
    /// after the work queued on it before; the call still waits for the stream before it
    /// returns, since the host arrays are borrowed only for the call. The stream must belong
    /// to the kernel's context.
    pub fn stream(mut self, stream: &'s Stream) -> CallOptions<'s> {
        self.stream = Some(stream);
        self
    }

    /// Launches with `bytes` of dynamic shared memory for `extern __shared__` arrays (PyCUDA's
    /// `shared_size=`), instead of the kernel's own ([`Function::with_shared_mem`]).
    pub fn shared_mem(mut self, bytes: u32) -> CallOptions<'s> {
        self.shared_mem = Some(bytes);
        self
    }
}

impl Function {
    /// Launches with host arrays copied in and out (PyCUDA's `Function.__call__` with
    /// `drv.In`/`drv.Out`/`drv.InOut`), taking the parameter types from the C declaration, and
    /// waits. Each call reads the declaration again; for repeated calls,
    /// [`prepare_declared`](Self::prepare_declared) once and use [`PreparedFunction::call`].
    pub fn call(&self, grid: impl Into<Dim3>, block: impl Into<Dim3>, args: &mut [Arg<'_>]) -> Result<()> {
        self.call_with(grid, block, args, CallOptions::new())
    }

    /// [`call`](Self::call) on a stream of the caller's and/or with dynamic shared memory for
    /// this call ([`CallOptions`]; PyCUDA's `func(..., stream=s, shared=n)`).
    pub fn call_with(
        &self,
        grid: impl Into<Dim3>,
        block: impl Into<Dim3>,
        args: &mut [Arg<'_>],
        options: CallOptions<'_>,
    ) -> Result<()> {
        self.prepare_declared()?.call_with(grid, block, args, options)
    }
}

impl PreparedFunction {
    /// Launches with host arrays ([`Arg::host_in`], [`Arg::host_out`], [`Arg::host_in_out`])
    /// copied to the device before the kernel and back after it, through pinned staging memory
    /// and pooled device memory as the `#[kernel]` convenience call does, and waits (which
    /// reports any error the kernel raised). Device buffers, scalars, vectors, structs and
    /// texture and surface objects may be mixed in.
    pub fn call(&self, grid: impl Into<Dim3>, block: impl Into<Dim3>, args: &mut [Arg<'_>]) -> Result<()> {
        self.call_with(grid, block, args, CallOptions::new())
    }

    /// [`call`](Self::call) on a stream of the caller's and/or with dynamic shared memory for
    /// this call ([`CallOptions`]).
    pub fn call_with(
        &self,
        grid: impl Into<Dim3>,
        block: impl Into<Dim3>,
        args: &mut [Arg<'_>],
        options: CallOptions<'_>,
    ) -> Result<()> {
        let (grid, block) = (grid.into(), block.into());
        self.check(args, true)?;
        // A per-call size launches a copy of the kernel handle that asks for it (the staged
        // call allocates anyway; prepared launches keep theirs allocation-free).
        let resized;
        let function = match options.shared_mem {
            Some(bytes) if bytes != self.function.shared_mem() => {
                resized = self.function.clone().with_shared_mem(bytes);
                &resized
            }
            _ => &self.function,
        };
        let mut staging = staging_for(function, options.stream)?;
        let copies = stage_and_launch(function, &self.ex, &mut staging, grid, block, args)?;
        staging.finish()?;
        drop(copies);
        Ok(())
    }

    /// [`call`](Self::call) for async code: copies the inputs in, launches and queues the
    /// copies back, then returns a future that completes once the outputs are in the host
    /// arrays (with the first error the GPU work raised), without blocking a thread while the
    /// GPU works. Runs on the context's staging stream, or on `stream`.
    ///
    /// The host arrays stay borrowed by the future. Dropping it before it completes waits
    /// (blocking) for the work already queued, then releases everything: see
    /// [`StagedCall`](crate::launch::StagedCall).
    ///
    /// ```no_run
    /// # async fn f() -> gpu_runtime::Result<()> {
    /// use gpu_runtime::{launch::Arg, Context, SourceModule};
    /// let ctx = Context::default()?;
    /// let module = SourceModule::new(
    ///     "__global__ void twice(float *y, const float *x) { y[threadIdx.x] = 2 * x[threadIdx.x]; }",
    /// )
    /// .load(&ctx)?;
    /// let twice = module.get_function("twice")?.prepare_declared()?;
    /// let (x, mut y) = (vec![1.0f32; 256], vec![0.0f32; 256]);
    /// twice.call_future(1, 256, None, &mut [Arg::host_out(&mut y), Arg::host_in(&x)])?.await?;
    /// assert_eq!(y[0], 2.0);
    /// # Ok(()) }
    /// ```
    pub fn call_future<'a>(
        &'a self,
        grid: impl Into<Dim3>,
        block: impl Into<Dim3>,
        stream: Option<&'a Stream>,
        args: &'a mut [Arg<'_>],
    ) -> Result<StagedCall<'a>> {
        let (grid, block) = (grid.into(), block.into());
        self.check(args, true)?;
        let mut staging = staging_for(&self.function, stream)?;
        let copies = stage_and_launch(&self.function, &self.ex, &mut staging, grid, block, args)?;
        staging.finish_future(copies)
    }

    // The name this had before `_async` was kept for PyCUDA's "queued on a stream" alone:
    // code written against it still builds, and no warning is given (a deprecation would fail
    // the builds that deny warnings).
    #[doc(hidden)]
    pub fn call_async<'a>(
        &'a self,
        grid: impl Into<Dim3>,
        block: impl Into<Dim3>,
        stream: Option<&'a Stream>,
        args: &'a mut [Arg<'_>],
    ) -> Result<StagedCall<'a>> {
        self.call_future(grid, block, stream, args)
    }
}

/// The staging of one call of `function`: on `stream`, checked to belong to the kernel's
/// context, or else on the context's own staging stream.
fn staging_for<'a>(function: &'a Function, stream: Option<&'a Stream>) -> Result<Staging<'a>> {
    match stream {
        Some(s) => Staging::on_stream(function, stream_arg(function, s)?),
        None => Staging::new(function),
    }
}

/// Stages the host arguments of `args` (checked) through `staging`, uploads them and launches
/// `function` with each replaced by its device copy; returns the copies, which must live until
/// the staging's stream has finished.
fn stage_and_launch<'a>(
    function: &Function,
    ex: &LaunchEx,
    staging: &mut Staging<'a>,
    grid: Dim3,
    block: Dim3,
    args: &'a mut [Arg<'_>],
) -> Result<Vec<PooledBuffer<u8>>> {
    // The device copies, kept alive until the stream has finished; and their addresses, by
    // argument.
    let mut copies = Vec::new();
    let mut addrs = [0 as sys::CUdeviceptr; MAX_ARGS];
    for (addr, a) in addrs.iter_mut().zip(args.iter_mut()) {
        let Arg::Host(h) = a else { continue };
        let ptr = h.checked_ptr()?;
        // SAFETY: `ptr` and `bytes` describe the slice the argument borrows for its whole
        // lifetime, mutably for Out and InOut, which outlives 'a; `args` is borrowed mutably
        // for 'a, so no other access to it happens while the staging (or call_future's future,
        // which holds it) holds the slice.
        let buf = unsafe {
            match h.direction {
                Direction::In => staging.input::<u8>(std::slice::from_raw_parts(ptr, h.bytes))?,
                Direction::Out => staging.output::<u8>(std::slice::from_raw_parts_mut(ptr, h.bytes))?,
                Direction::InOut => {
                    staging.input_output::<u8>(std::slice::from_raw_parts_mut(ptr, h.bytes))?
                }
            }
        };
        *addr = buf.device_ptr();
        copies.push(buf);
    }
    staging.upload()?;
    let mut params = [std::ptr::null_mut::<c_void>(); MAX_ARGS];
    for ((slot, a), addr) in params.iter_mut().zip(args.iter()).zip(&addrs) {
        *slot = match a {
            Arg::Host(_) => (addr as *const sys::CUdeviceptr).cast_mut().cast(),
            a => a.param(),
        };
    }
    let params = &mut params[..args.len()];
    staging.launch(|stream| {
        // Staged copies were ordered on this stream when staged.
        order_args(args, stream)?;
        // SAFETY: as in `PreparedFunction::launch`; each host argument is replaced by its
        // staged device copy, which lives in `copies` until the stream has finished
        // (`finish` waits for it, `finish_future`'s future keeps them until it has, and
        // `launch` and `upload` wait when they fail). A dependent launch
        // (`dependent_launch`) keeps its attribute here too.
        unsafe { ex.launch_on(function, grid, block, stream, params) }
    })?;
    Ok(copies)
}
