//! A sum over thread-block clusters: each block reduces its part in shared memory, and the
//! first block of each cluster adds the other blocks' results straight from their shared
//! memory (distributed shared memory), checked against the CPU.
//!
//! `cargo run --release --example cluster`: needs an NVIDIA GPU of compute capability 9.0 or
//! later (H100). Elsewhere it says why in one sentence and exits with status 1, as it does when
//! the GPU's result differs from the CPU's.

use gpu_runtime::{kernel, Context};
use gpu_suite::{mismatch_error, run_example, Rng};

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
