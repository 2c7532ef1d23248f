//! A device memory pool (PyCUDA's `DeviceMemoryPool`) under a loop that allocates temporaries
//! of slightly different sizes on every iteration. Freed blocks go back to the pool instead of
//! the driver, and the next iteration's requests are served from them: after the first
//! iteration no `cuMemAlloc` or `cuMemFree` is made, which matters in a hot loop: both cost
//! far more than a pool lookup, and freeing device memory may wait for the GPU.

use gpu_runtime::tools::DeviceMemoryPool;
use gpu_runtime::{kernel, Context};

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
