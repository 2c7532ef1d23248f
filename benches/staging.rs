//! Where the time of the staged In/InOut convenience call goes: the axpy call at 2^20 floats
//! from `Vec`s under several staging settings (chunk size, copy threads), the DMA floor with no
//! host copies, and one thread's host copy into pinned memory. The headline figures, next to
//! raw cudarc, are in `cargo bench --bench report`.
//!
//! Run on a GPU machine: `cargo bench --bench staging`.

use std::ffi::c_void;
use std::time::{Duration, Instant};

use gpu_runtime::cudarc::driver::sys;
use gpu_runtime::{kernel, Context};

#[path = "common/dma_floor.rs"]
mod dma_floor;
use dma_floor::DmaFloor;

#[kernel(
    r#"
__global__ void axpy(float a, const float *x, float *y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}"#
)]
fn axpy(a: f32, #[In] x: &[f32], #[InOut] y: &mut [f32], n: i32);

const ROUNDS: usize = 7;

fn ok(r: sys::CUresult) {
    assert_eq!(r, sys::CUresult::CUDA_SUCCESS);
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let ctx = match Context::default() {
        Ok(ctx) => ctx,
        Err(e) => {
            eprintln!("tools bench skipped: {e}");
            std::process::exit(1);
        }
    };
    println!("device: {}", ctx.device().name()?);

    // The convenience call at 2^20 floats from Vecs (its headline figure is in the report).
    const N: usize = 1 << 20;
    const CALLS: usize = 20;
    let x: Vec<f32> = (0..N).map(|i| (i % 1000) as f32 * 0.001).collect();
    let mut y: Vec<f32> = (0..N).map(|i| 1.0 - (i % 777) as f32 * 0.002).collect();
    let k = axpy::prepare(&ctx)?;
    let (grid, block) = ((N as u32).div_ceil(256), 256u32);
    for _ in 0..3 {
        k.call(grid, block, 0.0, &x, &mut y, N as i32)?;
    }
    // 2b. What the staged call is made of, to see where its time goes.
    let median_call = |k: &axpy::Kernel, y: &mut [f32]| -> Result<Duration, Box<dyn std::error::Error>> {
        let mut best_round = Duration::MAX;
        for _ in 0..ROUNDS {
            let mut times = Vec::new();
            for _ in 0..CALLS {
                let t = Instant::now();
                k.call(grid, block, 1e-7, &x, y, N as i32)?;
                times.push(t.elapsed());
            }
            times.sort();
            best_round = best_round.min(times[CALLS / 2]);
        }
        Ok(best_round)
    };
    println!("  staging settings (largest chunk KiB, threads): median call, best round");
    for (chunk_kib, threads) in [
        (1024, 8),
        (1024, 12),
        (2048, 6),
        (2048, 8),
        (2048, 10),
        (2048, 12),
        (2048, 15),
        (4096, 12),
        (2048, 1),
    ] {
        gpu_runtime::__testing::set_staging_tuning(chunk_kib << 10, threads);
        let t = median_call(&k, &mut y)?;
        println!(
            "    {chunk_kib:5} KiB, {threads:2} threads        {:8.1} us",
            t.as_secs_f64() * 1e6
        );
    }
    gpu_runtime::__testing::set_staging_tuning(0, 0);
    {
        // Phases of the default call.
        let (mut stage, mut up, mut launch, mut fin) = (vec![], vec![], vec![], vec![]);
        for _ in 0..CALLS * ROUNDS {
            let t0 = Instant::now();
            let mut st = gpu_runtime::__testing::Staging::new(k.function())?;
            let xd = st.input(&x)?;
            let yd = st.input_output(&mut y)?;
            let t1 = Instant::now();
            st.upload()?;
            let t2 = Instant::now();
            let (mut a, mut n) = (1e-7f32, N as i32);
            let (mut xp, mut yp) = (xd.device_ptr(), yd.device_ptr());
            // SAFETY: the parameters match the kernel's signature; buffers hold N floats.
            unsafe {
                let mut params: [*mut c_void; 4] = [
                    (&mut a as *mut f32).cast(),
                    (&mut xp as *mut u64).cast(),
                    (&mut yp as *mut u64).cast(),
                    (&mut n as *mut i32).cast(),
                ];
                ok(sys::cuLaunchKernel(
                    k.function().raw(),
                    grid,
                    1,
                    1,
                    block,
                    1,
                    1,
                    0,
                    st.stream(),
                    params.as_mut_ptr(),
                    std::ptr::null_mut(),
                ));
            }
            let t3 = Instant::now();
            st.finish()?;
            let t4 = Instant::now();
            drop((xd, yd));
            stage.push(t1 - t0);
            up.push(t2 - t1);
            launch.push(t3 - t2);
            fin.push(t4 - t3);
        }
        let med = |v: &mut Vec<Duration>| {
            v.sort();
            v[v.len() / 2].as_secs_f64() * 1e6
        };
        println!(
            "  default call's phases (medians): stage {:.1} us, upload {:.1} us, launch {:.1} us, finish {:.1} us",
            med(&mut stage),
            med(&mut up),
            med(&mut launch),
            med(&mut fin)
        );
    }
    {
        let dma_floor = DmaFloor::new(&ctx, k.function().raw(), &x, &y, grid, block)?;
        let mut floor = Vec::new();
        let mut copy = Vec::new();
        for _ in 0..CALLS * ROUNDS {
            floor.push(dma_floor.run());
            let t = Instant::now();
            // SAFETY: the pinned copy of x holds N floats, as x does.
            unsafe { std::ptr::copy_nonoverlapping(x.as_ptr().cast::<u8>(), dma_floor.pinned_x(), N * 4) };
            copy.push(t.elapsed());
        }
        drop(dma_floor);
        floor.sort();
        copy.sort();
        println!(
            "  DMA floor (pinned, no host copies: 2 x 4 MiB in, kernel, 4 MiB out) {:8.1} us",
            floor[floor.len() / 2].as_secs_f64() * 1e6
        );
        println!(
            "  one thread's memcpy of 4 MiB, Vec -> pinned        {:8.1} us",
            copy[copy.len() / 2].as_secs_f64() * 1e6
        );
    }

    Ok(())
}
