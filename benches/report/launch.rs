//! Launch costs: 20,000 back-to-back asynchronous launches of a 1024-element axpy (grid 4,
//! block 256), and launch + synchronize, against `cuLaunchKernel` and cudarc's
//! `launch_builder` on the same context and kernel image.

use std::ffi::c_void;
use std::time::{Duration, Instant};

use gpu_runtime::cudarc::driver::{sys, CudaContext, LaunchConfig, PushKernelArg};
use gpu_runtime::{Context, Stream, Target};

use crate::table::Row;
use crate::{axpy, best, ok};

const LAUNCHES: usize = 20_000;
const ROUNDS: usize = 9;
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
    let raw_launch = |s: sys::CUstream| {
        let (a, x, y, n) = (1.0001f32, xp, yp, N);
        let mut params = [
            &a as *const f32 as *mut c_void,
            &x as *const u64 as *mut c_void,
            &y as *const u64 as *mut c_void,
            &n as *const i32 as *mut c_void,
        ];
        // SAFETY: the parameters match axpy's signature and point to live values.
        ok(unsafe {
            sys::cuLaunchKernel(
                func,
                4,
                1,
                1,
                256,
                1,
                1,
                0,
                s,
                params.as_mut_ptr(),
                std::ptr::null_mut(),
            )
        });
    };

    let (mut ours, mut raw, mut cudarc) = (Vec::new(), Vec::new(), Vec::new());
    for round in 0..ROUNDS {
        stream.synchronize()?;
        let t = Instant::now();
        for _ in 0..LAUNCHES {
            kernel.prepared_async_call(4, 256, &stream, 1.0001, &xd, &mut yd, N)?;
        }
        stream.synchronize()?;
        let t_ours = t.elapsed();

        let t = Instant::now();
        for _ in 0..LAUNCHES {
            raw_launch(raw_stream);
        }
        stream.synchronize()?;
        let t_raw = t.elapsed();

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

    let target = "<= 1.05x cuLaunchKernel";
    Ok(vec![
        Row {
            figure: "async launch (prepared_async_call)",
            raw: "cudarc::driver::sys::cuLaunchKernel",
            ours: per_launch(best(&ours), LAUNCHES),
            theirs: per_launch(best(&raw), LAUNCHES),
            unit: "us",
            higher_is_better: false,
            target,
        },
        Row {
            figure: "async launch (prepared_async_call)",
            raw: "cudarc launch_builder().launch()",
            ours: per_launch(best(&ours), LAUNCHES),
            theirs: per_launch(best(&cudarc), LAUNCHES),
            unit: "us",
            higher_is_better: false,
            target: "",
        },
        Row {
            figure: "launch + synchronize (prepared_call)",
            raw: "cuLaunchKernel + cuCtxSynchronize",
            ours: per_launch(best(&ours_sync), SYNCED),
            theirs: per_launch(best(&raw_sync), SYNCED),
            unit: "us",
            higher_is_better: false,
            target: "",
        },
    ])
}
