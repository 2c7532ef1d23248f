//! Profiler control (PyCUDA's `start_profiler` and `stop_profiler`): mark the part of a run
//! that Nsight Systems or Nsight Compute should capture (with `--capture-range=cudaProfilerApi`).

use cudarc::driver::sys;

use crate::driver::context::core::Context;
use crate::driver::result::check;
use crate::error::Result;

/// Starts profiling in `ctx`'s device. Without a profiler attached, this does nothing.
pub fn start(ctx: &Context) -> Result<()> {
    ctx.bind()?;
    // SAFETY: a context is current.
    check("cuProfilerStart", unsafe { sys::cuProfilerStart() })
}

/// Stops profiling in `ctx`'s device, flushing what was collected.
pub fn stop(ctx: &Context) -> Result<()> {
    ctx.bind()?;
    // SAFETY: a context is current.
    check("cuProfilerStop", unsafe { sys::cuProfilerStop() })
}
