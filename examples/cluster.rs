//! A sum over thread-block clusters: each block reduces its part in shared memory, and the
//! first block of each cluster adds the other blocks' results straight from their shared
//! memory (distributed shared memory), checked against the CPU.
//!
//! `cargo run --release --example cluster`: needs an NVIDIA GPU of compute capability 9.0 or
//! later (H100). Elsewhere it says why in one sentence and exits with status 1, as it does when
//! the GPU's result differs from the CPU's.

use gpu_runtime::{kernel, Context};

#[kernel(
    cluster = (4, 1, 1),
    r#"
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

__global__ void __launch_bounds__(256) cluster_sum(const float *x, float *out, int n) {
    __shared__ float buf[256];
    __shared__ float partial;
    cg::cluster_group cluster = cg::this_cluster();
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    buf[threadIdx.x] = i < n ? x[i] : 0.0f;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) buf[threadIdx.x] += buf[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0) partial = buf[0];
    cluster.sync();
    if (cluster.block_rank() == 0 && threadIdx.x == 0) {
        float total = 0.0f;
        for (unsigned r = 0; r < cluster.num_blocks(); ++r) total += *cluster.map_shared_rank(&partial, r);
        out[blockIdx.x / cluster.num_blocks()] = total;
    }
    cluster.sync();
}"#
)]
fn cluster_sum(#[len = n] x: &[f32], out: &mut [f32], n: i32);

const CLUSTER: usize = 4;

fn main() -> std::process::ExitCode {
    run_example("cluster", || {
        let ctx = Context::default()?;
        // Checked here: compute capability 9.0, the cluster size, the device's support.
        let kernel = cluster_sum::prepare(&ctx)?;
        let blocks = 4096usize;
        let n = blocks * 256 - 100;
        let mut rng = Rng::new(9);
        let x = rng.vec_f32(n);
        let xd = ctx.to_device(&x)?;
        let mut out = ctx.alloc_zeros::<f32>(blocks / CLUSTER)?;
        let resident = kernel
            .function()
            .max_active_clusters((CLUSTER as u32, 1, 1), 256)?;
        kernel.prepared_call(blocks as u32, 256, &xd, &mut out, n as i32)?;
        let got = out.to_vec()?;
        let want: Vec<f32> = x
            .chunks(CLUSTER * 256)
            .map(|c| c.chunks(256).map(|b| b.iter().sum::<f32>()).sum())
            .collect();
        mismatch_error("cluster sums", &got, &want, 1e-4)?;
        let total: f64 = got.iter().map(|&v| v as f64).sum();
        println!(
            "cluster on {}: {} clusters of {CLUSTER} blocks ({resident} resident at once) summed {n} values to {total:.4}, matching the CPU",
            ctx.device().name()?,
            blocks / CLUSTER,
        );
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
