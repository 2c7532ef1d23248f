//! Launch costs: rounds of 5,000 back-to-back asynchronous launches of a 1024-element axpy
//! (grid 4, block 256), and launch + synchronize, against `cuLaunchKernel` and cudarc's
//! `launch_builder` on the same context and kernel image; and a producer/consumer chain on two
//! streams, ordered by the crate against the same chain ordered by hand with events.

use std::time::{Duration, Instant};

use gpu_runtime::compiler::Target;
use gpu_runtime::cudarc::driver::{sys, CudaContext, LaunchConfig, PushKernelArg};
use gpu_runtime::driver::{EventFlags, StreamFlags};
use gpu_runtime::{Context, Event, Stream};

use crate::table::Row;
use crate::{axpy, best, ok, raw_axpy};

const LAUNCHES: usize = 5_000;
/// Rounds of each figure, ours and raw back to back; the first warms up and is not counted.
/// Many short rounds rather than a few long ones: a hiccup of the machine spoils one round,
/// and the median of forty paired ratios hardly moves.
const ROUNDS: usize = 41;
const SYNCED: usize = 2_000;
const N: i32 = 1024;

fn per_launch(d: Duration, count: usize) -> f64 {
    d.as_secs_f64() * 1e6 / count as f64
}

pub fn rows(ctx: &Context) -> Result<Vec<Row>, Box<dyn std::error::Error>> {
    let x: Vec<f32> = (0..N).map(|i| i as f32 * 0.5).collect();
    let y: Vec<f32> = (0..N).map(|i| 1.0 - i as f32).collect();
    let kernel = axpy::prepare(ctx)?;
    let stream = Stream::new(ctx)?;
    let xd = ctx.to_device(&x)?;
    let mut yd = ctx.to_device(&y)?;

    // cudarc on the same primary context, loading the same compiled image.
    let image = axpy::source().compile(Target::for_device(ctx.compute_capability())?)?;
    let cctx = CudaContext::new(ctx.device().ordinal())?;
    let cstream = cctx.new_stream()?;
    let module = cctx.load_module(gpu_runtime::cudarc::nvrtc::Ptx::from_binary(image.image.clone()))?;
    let cfunc = module.load_function(&image.lowered_names[0])?;
    let cx = cstream.clone_htod(&x)?;
    let mut cy = cstream.clone_htod(&y)?;
    let cfg = LaunchConfig {
        grid_dim: (4, 1, 1),
        block_dim: (256, 1, 1),
        shared_mem_bytes: 0,
    };

    let (func, raw_stream) = (kernel.function().raw(), stream.raw());
    let (xp, yp) = (xd.device_ptr(), yd.device_ptr());
    let raw_launch = |s: sys::CUstream| raw_axpy(func, s, 1.0001, xp, yp, N);

    let (mut ours, mut raw, mut cudarc) = (Vec::new(), Vec::new(), Vec::new());
    for round in 0..ROUNDS {
        let mut time_ours = || -> Result<Duration, Box<dyn std::error::Error>> {
            stream.synchronize()?;
            let t = Instant::now();
            for _ in 0..LAUNCHES {
                kernel.prepared_async_call(4, 256, &stream, 1.0001, &xd, &mut yd, N)?;
            }
            stream.synchronize()?;
            Ok(t.elapsed())
        };
        let time_raw = || -> Result<Duration, Box<dyn std::error::Error>> {
            stream.synchronize()?;
            let t = Instant::now();
            for _ in 0..LAUNCHES {
                raw_launch(raw_stream);
            }
            stream.synchronize()?;
            Ok(t.elapsed())
        };
        // Taking turns going first, so that whatever the first of a pair pays (a drained
        // queue, a clock ramping up) falls on each side equally often.
        let (t_ours, t_raw) = if round % 2 == 0 {
            let o = time_ours()?;
            (o, time_raw()?)
        } else {
            let r = time_raw()?;
            (time_ours()?, r)
        };

        cstream.synchronize()?;
        let t = Instant::now();
        for _ in 0..LAUNCHES {
            let mut b = cstream.launch_builder(&cfunc);
            b.arg(&1.0001f32).arg(&cx).arg(&mut cy).arg(&N);
            // SAFETY: the arguments match the kernel's parameters in order and type.
            unsafe { b.launch(cfg) }?;
        }
        cstream.synchronize()?;
        let t_cudarc = t.elapsed();
        // Round 0 warms all three paths up.
        if round > 0 {
            ours.push(t_ours);
            raw.push(t_raw);
            cudarc.push(t_cudarc);
        }
    }

    // Launch + wait, one at a time.
    let (mut ours_sync, mut raw_sync) = (Vec::new(), Vec::new());
    for _ in 0..5 {
        let t = Instant::now();
        for _ in 0..SYNCED {
            kernel.prepared_call(4, 256, 1.0001, &xd, &mut yd, N)?;
            ctx.synchronize()?;
        }
        ours_sync.push(t.elapsed());
        ctx.bind()?;
        let t = Instant::now();
        for _ in 0..SYNCED {
            raw_launch(std::ptr::null_mut());
            // SAFETY: the context is current.
            ok(unsafe { sys::cuCtxSynchronize() });
        }
        raw_sync.push(t.elapsed());
    }

    let chain = producer_consumer(ctx, &kernel, func)?;

    Ok(vec![
        Row {
            figure: "async launch (prepared_async_call)",
            raw: "cudarc::driver::sys::cuLaunchKernel",
            ours: per_launch(median_time(&ours), LAUNCHES),
            theirs: per_launch(median_time(&raw), LAUNCHES),
            unit: "us",
            higher_is_better: false,
            target: "median <= 1.02x",
            rounds: paired(&ours, &raw),
        },
        Row {
            figure: "async launch (prepared_async_call)",
            raw: "cudarc launch_builder().launch()",
            ours: per_launch(median_time(&ours), LAUNCHES),
            theirs: per_launch(median_time(&cudarc), LAUNCHES),
            unit: "us",
            higher_is_better: false,
            target: "",
            rounds: paired(&ours, &cudarc),
        },
        Row {
            figure: "launch + synchronize (prepared_call)",
            raw: "cuLaunchKernel + cuCtxSynchronize",
            ours: per_launch(best(&ours_sync), SYNCED),
            theirs: per_launch(best(&raw_sync), SYNCED),
            unit: "us",
            higher_is_better: false,
            target: "",
            rounds: Vec::new(),
        },
        chain,
    ])
}

/// The median of `times`.
fn median_time(times: &[Duration]) -> Duration {
    let mut t = times.to_vec();
    t.sort();
    t.get(t.len() / 2).copied().unwrap_or_default()
}

/// Each round's ratio of ours to theirs, the two measured back to back.
fn paired(ours: &[Duration], theirs: &[Duration]) -> Vec<f64> {
    ours.iter()
        .zip(theirs)
        .map(|(o, t)| o.as_secs_f64() / t.as_secs_f64())
        .collect()
}

const PAIRS: usize = 2_000;

/// A producer stream writing a buffer and a consumer stream reading it, `PAIRS` times: each
/// consumer launch must wait for the producer's write (read after write), and each producer
/// launch for the consumer's read (write after read). Ours orders them by itself; the raw side
/// launches the same kernels with `cuLaunchKernel` and orders them by hand, one
/// `cuEventRecord` + `cuStreamWaitEvent` per change of stream. Both streams are non-blocking.
fn producer_consumer(
    ctx: &Context,
    kernel: &axpy::Kernel,
    func: sys::CUfunction,
) -> Result<Row, Box<dyn std::error::Error>> {
    let (p, c) = (
        Stream::with_flags(ctx, StreamFlags::NonBlocking)?,
        Stream::with_flags(ctx, StreamFlags::NonBlocking)?,
    );
    let src = ctx.to_device(&vec![1.0f32; N as usize])?;
    let mut buf = ctx.alloc_zeros::<f32>(N as usize)?;
    let mut out = ctx.alloc_zeros::<f32>(N as usize)?;
    let (ev_p, ev_c) = (
        Event::with_flags(ctx, EventFlags::DISABLE_TIMING)?,
        Event::with_flags(ctx, EventFlags::DISABLE_TIMING)?,
    );
    let (srcp, bufp, outp) = (src.device_ptr(), buf.device_ptr(), out.device_ptr());
    let launch = |s: sys::CUstream, x: u64, y: u64| raw_axpy(func, s, 0.5, x, y, N);
    let (mut ours, mut raw) = (Vec::new(), Vec::new());
    for round in 0..ROUNDS {
        ctx.synchronize()?;
        let t = Instant::now();
        for _ in 0..PAIRS {
            kernel.prepared_async_call(4, 256, &p, 0.5, &src, &mut buf, N)?;
            kernel.prepared_async_call(4, 256, &c, 0.5, &buf, &mut out, N)?;
        }
        ctx.synchronize()?;
        let t_ours = t.elapsed();

        let t = Instant::now();
        for _ in 0..PAIRS {
            // The producer waits for the consumer's last read, the consumer for the write.
            p.wait_for_event(&ev_c)?;
            launch(p.raw(), srcp, bufp);
            ev_p.record(Some(&p))?;
            c.wait_for_event(&ev_p)?;
            launch(c.raw(), bufp, outp);
            ev_c.record(Some(&c))?;
        }
        ctx.synchronize()?;
        let t_raw = t.elapsed();
        if round > 0 {
            ours.push(t_ours);
            raw.push(t_raw);
        }
    }
    Ok(Row {
        figure: "producer/consumer on 2 streams, per pair",
        raw: "cuLaunchKernel + events by hand",
        ours: per_launch(median_time(&ours), PAIRS),
        theirs: per_launch(median_time(&raw), PAIRS),
        unit: "us",
        higher_is_better: false,
        target: "median <= 1.05x",
        rounds: paired(&ours, &raw),
    })
}
