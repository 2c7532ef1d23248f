//! The GPU time of what a closure queues: the measure of the array sections (gpuarray, math,
//! broadcast, reduce, matmul's `astype` rows).

use std::time::Duration;

use gpu_runtime::{Context, Event};

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
