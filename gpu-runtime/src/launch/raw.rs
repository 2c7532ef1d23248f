//! The launch itself: the configuration checked against the device's and the kernel's limits,
//! large dynamic shared memory opted in to, and `cuLaunchKernel`; and timing one launch.

use std::ffi::c_void;
use std::sync::atomic::Ordering;
use std::time::Duration;

use cudarc::driver::sys;

use crate::driver::calls::launch as calls;
use crate::driver::module::function::Function;
use crate::driver::stream::Event;
use crate::error::{Error, Result};
use crate::launch::dims::{self, Dim3};

impl Function {
    /// Launches with a prepared parameter array, after checking the configuration.
    ///
    /// # Safety
    /// `params` must hold one pointer per kernel parameter, in order, each pointing to a value
    /// of exactly the C parameter's type; every device pointer and handle among them must stay
    /// valid until the kernel has finished, and be ordered with other streams' uses of what it
    /// points to (the `#[kernel]` macro's generated code does both for this crate's memory).
    /// When the kernel's module has `__device__` or `__constant__` variables, the launch must
    /// also be ordered with the copies to and from them ([`Global`](crate::driver::Global)'s
    /// `set` and `get`, [`ModuleGlobal`](crate::driver::ModuleGlobal)'s `write` and `read`) and,
    /// for `__device__` ones, with the module's launches on other streams: the crate's own
    /// launches are, through the module's record; this one, given a bare stream handle, is not.
    #[doc(hidden)]
    #[inline]
    pub unsafe fn launch_raw(
        &self,
        grid: Dim3,
        block: Dim3,
        stream: sys::CUstream,
        params: &mut [*mut c_void],
    ) -> Result<()> {
        let ctx = self.context();
        let limits = self.kernel_limits()?;
        let cfg = dims::validate(grid, block, self.shared_mem_bytes, ctx.limits(), limits)?;
        ctx.bind()?;
        if cfg.shared_mem_bytes > self.optin_shared.load(Ordering::Relaxed)
            && cfg.shared_mem_bytes + limits.static_shared_bytes > ctx.limits().max_shared_memory_per_block
        {
            self.opt_in_shared(cfg.shared_mem_bytes)?;
        }
        // SAFETY: the function is live and its context current; the configuration was
        // validated; the caller guarantees the stream and the parameters.
        unsafe {
            calls::launch_kernel(
                self.raw(),
                cfg.grid,
                cfg.block,
                cfg.shared_mem_bytes,
                stream,
                params.as_mut_ptr(),
            )
        }
        .map_err(Error::from)
    }
}

/// Runs `launch` between two events on the legacy default stream of `f`'s context and returns
/// the GPU time between them (PyCUDA's `prepared_timed_call`). Waits for the kernel to finish.
/// When an argument was last used on another stream, the wait for that work is queued between
/// the two events, and timed with the kernel.
pub(crate) fn timed(f: &Function, launch: impl FnOnce() -> Result<()>) -> Result<Duration> {
    let start = Event::new(f.context())?;
    let end = Event::new(f.context())?;
    start.record_raw(std::ptr::null_mut())?;
    launch()?;
    end.record_raw(std::ptr::null_mut())?;
    end.synchronize()?;
    end.time_since(&start)
}
