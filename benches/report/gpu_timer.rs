//! The GPU time of what a closure queues: the measure of the array sections (gpuarray, math,
//! broadcast, reduce, matmul's `astype` rows).

use std::time::Duration;

use gpu_runtime::cudarc::driver::sys;
use gpu_runtime::{Context, DeviceBuffer, Event};

use crate::ok;

/// The GPU time of what `f` queues on the legacy default stream; what it returns is dropped
/// after the end event has completed, so that freeing it is not timed.
pub fn timed<T>(ctx: &Context, f: impl FnOnce() -> gpu_runtime::Result<T>) -> gpu_runtime::Result<Duration> {
    let (start, end) = (Event::new(ctx)?, Event::new(ctx)?);
    start.record(None)?;
    let kept = f()?;
    end.record(None)?;
    end.synchronize()?;
    drop(kept);
    end.time_since(&start)
}

/// A device-to-device copy of `src` into `dst`, timed as [`timed`] times: the copy floor the
/// array rows are measured against.
pub fn timed_copy(
    ctx: &Context,
    dst: &DeviceBuffer<f32>,
    src: &DeviceBuffer<f32>,
) -> gpu_runtime::Result<Duration> {
    timed_copies(ctx, dst, src, 1)
}

/// `times` device-to-device copies of `src` into `dst`, queued back to back and timed
/// together as [`timed`] times.
pub fn timed_copies(
    ctx: &Context,
    dst: &DeviceBuffer<f32>,
    src: &DeviceBuffer<f32>,
    times: usize,
) -> gpu_runtime::Result<Duration> {
    let bytes = src.len().min(dst.len()) * 4;
    timed(ctx, || {
        ctx.bind()?;
        for _ in 0..times {
            // SAFETY: both allocations hold at least `bytes`; the context is current; the
            // copies are waited for (by the end event) before either buffer can be dropped, as
            // both outlive this call.
            unsafe { ok(sys::cuMemcpyDtoD_v2(dst.device_ptr(), src.device_ptr(), bytes)) };
        }
        Ok(())
    })
}
