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

/// Launches per thread per round.
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
        for round in 0..ROUNDS {
            let time_ours = |outs: &mut [DeviceBuffer<f32>]| {
                at_once(&streams, outs, |i, s, y| {
                    let x = input(i);
                    for _ in 0..LAUNCHES {
                        kernel.prepared_async_call(4, 256, s, 1.0001, x, y, N).unwrap();
                    }
                })
            };
            let time_raw = |outs: &mut [DeviceBuffer<f32>]| {
                at_once(&streams, outs, |i, s, y| {
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
                })
            };
            let (o, r) = if round % 2 == 0 {
                let o = time_ours(&mut outs);
                (o, time_raw(&mut outs))
            } else {
                let r = time_raw(&mut outs);
                (time_ours(&mut outs), r)
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

/// Runs `launch(thread, stream, out)` on one thread per stream, released together, and
/// returns the time from the release until every thread's stream has finished.
fn at_once(
    streams: &[Stream],
    outs: &mut [DeviceBuffer<f32>],
    launch: impl Fn(usize, &Stream, &mut DeviceBuffer<f32>) + Sync,
) -> Duration {
    let barrier = Barrier::new(streams.len() + 1);
    for s in streams {
        s.synchronize().unwrap();
    }
    std::thread::scope(|scope| {
        let handles: Vec<_> = streams
            .iter()
            .zip(outs.iter_mut())
            .enumerate()
            .map(|(i, (s, y))| {
                let (barrier, launch) = (&barrier, &launch);
                scope.spawn(move || {
                    barrier.wait();
                    launch(i, s, y);
                    s.synchronize().unwrap();
                })
            })
            .collect();
        barrier.wait();
        let t = Instant::now();
        for h in handles {
            h.join().unwrap();
        }
        t.elapsed()
    })
}
