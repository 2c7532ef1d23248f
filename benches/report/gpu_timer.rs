//! The GPU time of what a closure queues: the measure of the array sections (gpuarray, math,
//! broadcast, reduce, matmul's `astype` rows), and the figures the array sections share: the
//! best of [`ROUNDS`] as GB/s ([`rate`]), and the copy they are measured against
//! ([`copy_floor`]).

use std::time::Duration;

use gpu_runtime::cudarc::driver::sys;
use gpu_runtime::{Context, DeviceBuffer, Event};

use crate::{best, ok};

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

/// The timed rounds of each array row: its figure is the best of them.
pub const ROUNDS: usize = 9;

/// `bytes` moved in `d`, in GB/s.
pub fn gbs(bytes: usize, d: Duration) -> f64 {
    bytes as f64 / d.as_secs_f64() / 1e9
}

/// The best of [`ROUNDS`] timings of `f`, after one untimed call (its compile and load).
pub fn best_time<T>(
    ctx: &Context,
    f: impl FnMut() -> gpu_runtime::Result<T>,
) -> gpu_runtime::Result<Duration> {
    best_of(ctx, ROUNDS, f)
}

/// The best of `rounds` timings of `f` in milliseconds, after one untimed call.
pub fn best_ms<T>(
    ctx: &Context,
    rounds: usize,
    f: impl FnMut() -> gpu_runtime::Result<T>,
) -> gpu_runtime::Result<f64> {
    Ok(best_of(ctx, rounds, f)?.as_secs_f64() * 1e3)
}

fn best_of<T>(
    ctx: &Context,
    rounds: usize,
    mut f: impl FnMut() -> gpu_runtime::Result<T>,
) -> gpu_runtime::Result<Duration> {
    drop(f()?); // compile and load outside the timings
    let mut times = Vec::new();
    for _ in 0..rounds {
        times.push(timed(ctx, &mut f)?);
    }
    Ok(best(&times))
}

/// [`best_time`] of `f` as GB/s of `bytes`.
pub fn rate<T>(
    ctx: &Context,
    bytes: usize,
    f: impl FnMut() -> gpu_runtime::Result<T>,
) -> gpu_runtime::Result<f64> {
    Ok(gbs(bytes, best_time(ctx, f)?))
}

/// GB/s of a device-to-device copy of `src` (its read and write bytes), best of [`ROUNDS`].
pub fn copy_floor(ctx: &Context, src: &DeviceBuffer<f32>) -> gpu_runtime::Result<f64> {
    let copy = ctx.alloc::<f32>(src.len())?;
    let mut raw = Vec::new();
    for _ in 0..ROUNDS {
        raw.push(timed_copy(ctx, &copy, src)?);
    }
    Ok(gbs(8 * src.len(), best(&raw)))
}
