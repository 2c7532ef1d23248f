//! An occupancy report (PyCUDA's `OccupancyRecord`): a kernel's registers and shared memory,
//! how many of its blocks fit on a multiprocessor for several block sizes and what limits them,
//! and the block size that keeps the most warps resident. Every figure is checked against the
//! driver's own calculator, and the kernel is then run with the suggested size.

use gpu_runtime::cudarc::driver::sys;
use gpu_runtime::driver::Function;
use gpu_runtime::tools::DeviceData;
use gpu_runtime::{kernel, Context};

// A 3-point smoother staging its block's inputs, plus a halo, in static shared memory sized
// for the largest block (4104 bytes whatever the block size).
#[kernel(
    r#"
__global__ void smooth3(const float *x, float *y, int n) {
    __shared__ float tile[1024 + 2];
    int i = blockIdx.x * blockDim.x + threadIdx.x, t = threadIdx.x + 1;
    tile[t] = x[min(i, n - 1)];
    if (threadIdx.x == 0) tile[0] = x[max(i - 1, 0)];
    if (threadIdx.x == blockDim.x - 1) tile[t + 1] = x[min(i + 1, n - 1)];
    __syncthreads();
    if (i < n) y[i] = 0.25f * tile[t - 1] + 0.5f * tile[t] + 0.25f * tile[t + 1];
}"#
)]
fn smooth3(x: &[f32], y: &mut [f32], n: i32);

/// Blocks per multiprocessor as the driver computes them, for `f`'s dynamic shared memory.
fn driver_blocks(f: &Function, block: u32) -> Result<i32, Box<dyn std::error::Error>> {
    f.context().bind()?;
    let mut blocks = 0;
    // SAFETY: a valid out-pointer and a live function handle; the context is current.
    let r = unsafe {
        sys::cuOccupancyMaxActiveBlocksPerMultiprocessor(
            &mut blocks,
            f.raw(),
            block as i32,
            f.shared_mem() as usize,
        )
    };
    if r != sys::CUresult::CUDA_SUCCESS {
        return Err(format!("cuOccupancyMaxActiveBlocksPerMultiprocessor failed: {r:?}").into());
    }
    Ok(blocks)
}

fn main() -> std::process::ExitCode {
    run_example("occupancy", || {
        let ctx = Context::default()?;
        let k = smooth3::prepare(&ctx)?;
        let (regs, smem) = k.function().resource_usage()?;
        let d = DeviceData::new(&ctx)?;
        println!(
            "{}: {} warps and {} KiB of shared memory per multiprocessor",
            ctx.device().name()?,
            d.warps_per_mp,
            d.shared_memory / 1024
        );
        println!("smooth3: {regs} registers per thread, {smem} bytes of static shared memory");

        // Also with 40 KB of dynamic shared memory per block: then shared memory is the limit.
        for dynamic in [0, 40_000] {
            let f = k.function().clone().with_shared_mem(dynamic);
            println!(
                "with {dynamic} bytes of dynamic shared memory:\n  block  blocks/MP  occupancy  limited by"
            );
            for block in [32, 64, 128, 192, 256, 512, 768, 1024] {
                let o = f.occupancy(block)?;
                println!(
                    "  {block:5}  {:9}  {:8.0} %  {}",
                    o.tb_per_mp,
                    o.occupancy * 100.0,
                    o.limited_by
                );
                let theirs = driver_blocks(&f, block)?;
                if o.tb_per_mp as i32 != theirs {
                    return Err(format!(
                        "block {block}: {} blocks per multiprocessor computed, {theirs} by the driver",
                        o.tb_per_mp
                    )
                    .into());
                }
            }
        }
        let best = k.function().suggested_block_size()?;
        println!("suggested block size: {best} threads (the driver agrees on every row above)");

        // Launch with it; halo handling must work for any block size, so check the result too.
        let n = 1_000_003;
        let x = Rng::new(5).vec_f32(n);
        let (xd, mut yd) = (ctx.to_device(&x)?, ctx.alloc::<f32>(n)?);
        k.prepared_call((n as u32).div_ceil(best), best, &xd, &mut yd, n as i32)?;
        // Weights are powers of two, so products are exact and the sum matches bit for bit.
        let want: Vec<f32> = (0..n)
            .map(|i| 0.25 * x[i.saturating_sub(1)] + 0.5 * x[i] + 0.25 * x[(i + 1).min(n - 1)])
            .collect();
        mismatch_error("smooth3 at the suggested block size", &yd.to_vec()?, &want, 0.0)?;
        Ok(())
    })
}

// The example's own checking helpers (a copy of this file in another crate needs nothing else).

/// Runs the example's body: on failure (no GPU, a compile error, or results that differ from the
/// CPU reference) prints the error in one sentence and exits with status 1.
fn run_example(
    name: &str,
    body: impl FnOnce() -> Result<(), Box<dyn std::error::Error>>,
) -> std::process::ExitCode {
    match body() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{name}: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

/// An error naming the first element where the GPU's `got` and the CPU's `want` differ by more
/// than `tol * (1 + |want|)` (a NaN differs from everything).
fn mismatch_error(what: &str, got: &[f32], want: &[f32], tol: f32) -> Result<(), Box<dyn std::error::Error>> {
    if got.len() != want.len() {
        return Err(format!(
            "{what}: {} elements on the GPU but {} on the CPU",
            got.len(),
            want.len()
        )
        .into());
    }
    let differs = |(g, w): (&f32, &f32)| {
        let d = (g - w).abs();
        g != w && (d.is_nan() || d >= tol * (1.0 + w.abs()))
    };
    match got.iter().zip(want).position(differs) {
        None => Ok(()),
        Some(i) => Err(format!(
            "{what}: element {i} is {} on the GPU but {} on the CPU",
            got[i], want[i]
        )
        .into()),
    }
}

/// A small seeded xorshift generator: reproducible random data without a dependency.
struct Rng(u64);

impl Rng {
    /// A generator from a seed (any value).
    fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    /// The next 64 random bits.
    fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }

    /// A float uniform in `[-1, 1)`.
    fn f32(&mut self) -> f32 {
        ((self.next_u64() >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
    }

    /// `n` floats uniform in `[-1, 1)`.
    fn vec_f32(&mut self, n: usize) -> Vec<f32> {
        (0..n).map(|_| self.f32()).collect()
    }
}
