//! Profiler control (PyCUDA's `start_profiler` and `stop_profiler`): mark the part of a run
//! that Nsight Systems or Nsight Compute should capture (with `--capture-range=cudaProfilerApi`).

use crate::driver::calls;
use crate::driver::context::core::Context;
use crate::error::Result;

/// Starts profiling in `ctx`'s device. Without a profiler attached, this does nothing.
pub fn start(ctx: &Context) -> Result<()> {
    ctx.bound(calls::profiler_start)
}

/// Stops profiling in `ctx`'s device, flushing what was collected.
pub fn stop(ctx: &Context) -> Result<()> {
    ctx.bound(calls::profiler_stop)
}
