//! Launches from several threads at once, each on a stream of its own, writing a private buffer
//! and reading either one buffer shared by all or a private one: launches per second, ours
//! against the same threads calling raw `cuLaunchKernel`. Reads never wait for reads, so the
//! shared buffer must cost nothing once each stream has read it; and with private buffers the
//! threads share nothing of ours but the kernel, so any lock or shared cache line they fight
//! over shows as a ratio that falls with the thread count.

use std::sync::Barrier;
use std::time::{Duration, Instant};

use gpu_runtime::cudarc::driver::sys;
use gpu_runtime::driver::StreamFlags;
use gpu_runtime::{Context, DeviceBuffer, Stream};

use crate::table::Row;
use crate::{axpy, raw_axpy};

/// Launches per thread per round and side.
const LAUNCHES: usize = 4_000;
/// Rounds, ours and raw back to back; the first warms up and is not counted.
const ROUNDS: usize = 25;
const N: i32 = 1024;
const COUNTS: [(usize, &str); 5] = [
    (1, "1 thread, one shared read buffer, launches/s"),
    (2, "2 threads, one shared read buffer, launches/s"),
    (4, "4 threads, one shared read buffer, launches/s"),
    (8, "8 threads, one shared read buffer, launches/s"),
    (16, "16 threads, one shared read buffer, launches/s"),
];
const PRIVATE_COUNTS: [(usize, &str); 5] = [
    (1, "1 thread, private buffers, launches/s"),
    (2, "2 threads, private buffers, launches/s"),
    (4, "4 threads, private buffers, launches/s"),
    (8, "8 threads, private buffers, launches/s"),
    (16, "16 threads, private buffers, launches/s"),
];

pub fn rows(ctx: &Context) -> Result<Vec<Row>, Box<dyn std::error::Error>> {
    let mut rows = rows_of(ctx, true, &COUNTS, "ours >= 0.9x raw (ratio <= 1.11)")?;
    rows.extend(rows_of(
        ctx,
        false,
        &PRIVATE_COUNTS,
        "ours >= 0.97x raw (ratio <= 1.031)",
    )?);
    Ok(rows)
}

/// One row per thread count: every thread reads one buffer when `shared`, else its own.
fn rows_of(
    ctx: &Context,
    shared: bool,
    counts: &[(usize, &'static str)],
    target: &'static str,
) -> Result<Vec<Row>, Box<dyn std::error::Error>> {
    let kernel = axpy::prepare(ctx)?;
    // The handle as an integer: raw pointers are not Sync, and the raw side's threads share it.
    let func = kernel.function().raw() as usize;
    let mut rows = Vec::new();
    for &(threads, figure) in counts {
        let streams: Vec<Stream> = (0..threads)
            .map(|_| Stream::with_flags(ctx, StreamFlags::NonBlocking))
            .collect::<Result<_, _>>()?;
        let mut outs: Vec<DeviceBuffer<f32>> = (0..threads)
            .map(|_| ctx.alloc_zeros::<f32>(N as usize))
            .collect::<Result<_, _>>()?;
        let ins: Vec<DeviceBuffer<f32>> = (0..if shared { 1 } else { threads })
            .map(|_| ctx.to_device(&vec![0.5f32; N as usize]))
            .collect::<Result<_, _>>()?;
        let input = |i: usize| &ins[if shared { 0 } else { i }];
        let (mut ours, mut raw) = (Vec::new(), Vec::new());
        let launch_ours = |i: usize, s: &Stream, y: &mut DeviceBuffer<f32>| {
            let x = input(i);
            for _ in 0..LAUNCHES {
                kernel.prepared_async_call(4, 256, s, 1.0001, x, y, N).unwrap();
            }
        };
        let launch_raw = |i: usize, s: &Stream, y: &mut DeviceBuffer<f32>| {
            ctx.bind().unwrap();
            let x = input(i);
            for _ in 0..LAUNCHES {
                raw_axpy(
                    func as sys::CUfunction,
                    s.raw(),
                    1.0001,
                    x.device_ptr(),
                    y.device_ptr(),
                    N,
                );
            }
        };
        for round in 0..ROUNDS {
            let (o, r) = if round % 2 == 0 {
                let [o, r] = at_once(&streams, &mut outs, [&launch_ours, &launch_raw]);
                (o, r)
            } else {
                let [r, o] = at_once(&streams, &mut outs, [&launch_raw, &launch_ours]);
                (o, r)
            };
            if round > 0 {
                ours.push(o);
                raw.push(r);
            }
        }
        let rate = |t: &[Duration]| {
            let mut t = t.to_vec();
            t.sort();
            (threads * LAUNCHES) as f64 / t[t.len() / 2].as_secs_f64() / 1e6
        };
        rows.push(Row {
            figure,
            raw: "cuLaunchKernel from the same threads",
            ours: rate(&ours),
            theirs: rate(&raw),
            unit: "M/s",
            higher_is_better: true,
            target,
            rounds: ours
                .iter()
                .zip(&raw)
                .map(|(o, r)| o.as_secs_f64() / r.as_secs_f64())
                .collect(),
        });
    }
    Ok(rows)
}

/// A side's launches from one thread: `(thread, stream, out)`.
type Launches<'a> = &'a (dyn Fn(usize, &Stream, &mut DeviceBuffer<f32>) + Sync);

/// Runs each of `sides` in turn on one thread per stream, the threads released together for
/// each side, and returns for each the time from the release until every thread's stream has
/// finished. The same threads run both sides, so that each side's launches come from the
/// same CPUs: when each side had threads of its own, the one-thread ratio moved from run to
/// run by more than the launch path's whole cost (0.93 to 1.07 in five runs on an H200's
/// virtual machine, where one launch costs 1.01 to 1.02 of `cuLaunchKernel`); with the same
/// threads, 1.002 to 1.034 in eight runs.
fn at_once(streams: &[Stream], outs: &mut [DeviceBuffer<f32>], sides: [Launches<'_>; 2]) -> [Duration; 2] {
    let barrier = Barrier::new(streams.len() + 1);
    for s in streams {
        s.synchronize().unwrap();
    }
    std::thread::scope(|scope| {
        for (i, (s, y)) in streams.iter().zip(outs.iter_mut()).enumerate() {
            let barrier = &barrier;
            scope.spawn(move || {
                // A side that panics still meets every barrier (or the others would wait for
                // it forever); the panic goes on once all sides are done, and the scope
                // passes it to the caller.
                let mut failed = None;
                for launch in sides {
                    barrier.wait();
                    if failed.is_none() {
                        let run = std::panic::AssertUnwindSafe(|| {
                            launch(i, s, y);
                            s.synchronize().unwrap();
                        });
                        failed = std::panic::catch_unwind(run).err();
                    }
                    barrier.wait();
                }
                if let Some(panic) = failed {
                    std::panic::resume_unwind(panic);
                }
            });
        }
        sides.map(|_| {
            barrier.wait();
            let t = Instant::now();
            barrier.wait();
            t.elapsed()
        })
    })
}
