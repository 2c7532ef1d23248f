//! Launch overhead: 20,000 back-to-back asynchronous launches of axpy (n = 1024, grid 4,
//! block 256) through `prepared_async_call`, through raw cudarc (`launch_builder`) and through
//! `cudarc::driver::sys::cuLaunchKernel`, all in this process on the same context, kernel
//! image and stream kind. Rounds are interleaved so that clock and thermal drift hit all three
//! alike; the best round of each is reported, with the ratios.
//!
//! Run on a GPU machine: `cargo bench --bench launch`.

use std::ffi::c_void;
use std::time::{Duration, Instant};

use cudarc::driver::{CudaContext, LaunchConfig, PushKernelArg};
use gpu_runtime::{kernel, Context, Stream};

#[kernel(
    r#"
__global__ void axpy(float a, const float *x, float *y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}"#
)]
fn axpy(a: f32, #[In] x: &[f32], #[InOut] y: &mut [f32], n: i32);

const LAUNCHES: usize = 20_000;
const ROUNDS: usize = 9;
const N: i32 = 1024;

fn time(mut launch: impl FnMut(), sync: impl Fn()) -> Duration {
    sync();
    let start = Instant::now();
    for _ in 0..LAUNCHES {
        launch();
    }
    sync();
    start.elapsed()
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let ctx = match Context::default() {
        Ok(ctx) => ctx,
        Err(e) => {
            eprintln!("launch bench skipped: {e}");
            std::process::exit(1);
        }
    };
    let x: Vec<f32> = (0..N).map(|i| i as f32 * 0.5).collect();
    let y: Vec<f32> = (0..N).map(|i| 1.0 - i as f32).collect();

    // Ours.
    let kernel = axpy::prepare(&ctx)?;
    let stream = Stream::new(&ctx)?;
    let xd = ctx.to_device(&x)?;
    let mut yd = ctx.to_device(&y)?;

    // Raw cudarc, on the same (primary) context and the same compiled image.
    let image = axpy::source().compile(gpu_runtime::Target::for_device(ctx.compute_capability())?)?;
    let cctx = CudaContext::new(ctx.device().ordinal())?;
    let cstream = cctx.new_stream()?;
    let module = cctx.load_module(cudarc::nvrtc::Ptx::from_binary(image.image.clone()))?;
    let cfunc = module.load_function(&image.lowered_names[0])?;
    let cx = cstream.clone_htod(&x)?;
    let mut cy = cstream.clone_htod(&y)?;
    let cfg = LaunchConfig {
        grid_dim: (4, 1, 1),
        block_dim: (256, 1, 1),
        shared_mem_bytes: 0,
    };

    // The bare driver call, with the function and stream of ours.
    let raw_func = kernel.function().raw();
    let raw_stream = stream.raw();
    let (xp, yp) = (
        gpu_runtime::DeviceRead::device_ptr(&xd),
        gpu_runtime::DeviceRead::device_ptr(&yd),
    );

    let a = 1.0001f32;
    let mut best = [Duration::MAX; 3];
    for round in 0..ROUNDS {
        let t_ours = time(
            || {
                kernel
                    .prepared_async_call(4, 256, &stream, a, &xd, &mut yd, N)
                    .unwrap()
            },
            || stream.synchronize().unwrap(),
        );
        let t_cudarc = time(
            || {
                let mut b = cstream.launch_builder(&cfunc);
                b.arg(&a).arg(&cx).arg(&mut cy).arg(&N);
                // SAFETY: the arguments match the kernel's parameters in order and type.
                unsafe { b.launch(cfg) }.unwrap();
            },
            || cstream.synchronize().unwrap(),
        );
        let t_raw = time(
            || {
                let (a, x, y, n) = (a, xp, yp, N);
                let mut params = [
                    &a as *const f32 as *mut c_void,
                    &x as *const u64 as *mut c_void,
                    &y as *const u64 as *mut c_void,
                    &n as *const i32 as *mut c_void,
                ];
                // SAFETY: the parameters match axpy's signature and point to live values.
                let r = unsafe {
                    cudarc::driver::sys::cuLaunchKernel(
                        raw_func,
                        4,
                        1,
                        1,
                        256,
                        1,
                        1,
                        0,
                        raw_stream,
                        params.as_mut_ptr(),
                        std::ptr::null_mut(),
                    )
                };
                assert_eq!(r, cudarc::driver::sys::CUresult::CUDA_SUCCESS);
            },
            || stream.synchronize().unwrap(),
        );
        if round > 0 {
            // Round 0 warms up all three paths.
            for (b, t) in best.iter_mut().zip([t_ours, t_cudarc, t_raw]) {
                *b = (*b).min(t);
            }
        }
    }
    let per = |d: Duration| d.as_secs_f64() * 1e6 / LAUNCHES as f64;
    let (ours, cudarc, raw) = (per(best[0]), per(best[1]), per(best[2]));
    println!("GPU: {}", ctx.device().name()?);
    println!(
        "{LAUNCHES} back-to-back async launches of axpy (n = {N}, grid 4, block 256), best of {} rounds:",
        ROUNDS - 1
    );
    println!("  gpu_runtime prepared_async_call   {ours:8.3} us/launch");
    println!("  cudarc launch_builder             {cudarc:8.3} us/launch");
    println!("  cudarc::driver::sys::cuLaunchKernel {raw:6.3} us/launch");
    println!("ratio prepared_async_call / cuLaunchKernel: {:.3}", ours / raw);
    println!(
        "ratio prepared_async_call / cudarc launch_builder: {:.3}",
        ours / cudarc
    );
    Ok(())
}
