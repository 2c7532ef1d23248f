//! A device memory pool (PyCUDA's `DeviceMemoryPool`) under a loop that allocates temporaries
//! of slightly different sizes on every iteration. Freed blocks go back to the pool instead of
//! the driver, and the next iteration's requests are served from them: after the first
//! iteration no `cuMemAlloc` or `cuMemFree` is made, which matters in a hot loop: both cost
//! far more than a pool lookup, and freeing device memory may wait for the GPU.

use gpu_runtime::tools::DeviceMemoryPool;
use gpu_runtime::{kernel, Context};
use gpu_suite::{mismatch_error, run_example, Rng};

#[kernel(
    r#"
__global__ void square_minus(const float *x, float *y, float s, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] * x[i] - s;
}"#
)]
fn square_minus(x: &[f32], y: &mut [f32], s: f32, n: i32);

fn main() -> std::process::ExitCode {
    run_example("pool", || {
        let ctx = Context::default()?;
        let pool = DeviceMemoryPool::new(&ctx);
        let k = square_minus::prepare(&ctx)?;
        let mut rng = Rng::new(7);
        let base = 1 << 20;

        for step in 0..10 {
            // Sizes vary by under 1/16: the pool rounds requests up to classes at most a
            // quarter apart, so a block freed by one iteration fits the next one's request.
            let n = base - (rng.next_u64() % (base as u64 / 16)) as usize;
            let (x, s) = (rng.vec_f32(n), rng.f32());
            let xd = pool.to_device(&x)?;
            let mut yd = pool.alloc::<f32>(n)?;
            k.prepared_call((n as u32).div_ceil(256), 256, &xd, &mut yd, s, n as i32)?;
            let (active, held) = (pool.active_blocks(), pool.held_blocks());

            // The GPU may fuse `x * x - s` into one FMA: a tolerance of a few roundings.
            let want: Vec<f32> = x.iter().map(|v| v * v - s).collect();
            mismatch_error(&format!("iteration {step}"), &yd.to_vec()?, &want, 1e-6)?;
            drop((xd, yd)); // both blocks back to the pool, not to the driver
            println!(
                "iteration {step}: {n} elements; while in use {active} blocks active, {held} held; after: {} active, {} held ({} KiB)",
                pool.active_blocks(),
                pool.held_blocks(),
                pool.held_bytes() / 1024
            );
        }
        // Had any iteration needed a new block, the pool would now hold more than two.
        if pool.held_blocks() != 2 {
            return Err(format!(
                "the pool holds {} blocks, not the 2 that every iteration reused",
                pool.held_blocks()
            )
            .into());
        }
        pool.free_held(); // give the memory back to the driver now, rather than at drop
        println!("pool: 10 iterations served by the same 2 blocks, results match the CPU; after free_held: {} held", pool.held_blocks());
        Ok(())
    })
}
