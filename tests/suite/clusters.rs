//! Thread-block clusters and cooperative launches, on a GPU: a reduction through distributed
//! shared memory across each cluster, `__cluster_dims__` respected and a conflicting shape
//! refused, shapes over the limits refused before the launch, and a cooperative grid-wide
//! sync, each checked against a CPU reference on random data.
//!
//! `cargo test --test suite -- --ignored clusters::` on a GPU machine; the cluster tests need compute
//! capability 9.0 (H100), and check the typed refusal on older GPUs instead.

use gpu_runtime::launch::{Capture, GraphBuffer, GraphInput};
use gpu_runtime::{kernel, Context, Error, LaunchConfigError, Stream};
use gpu_suite::{assert_close, Rng};

use crate::common::ctx;

fn has_clusters(ctx: &Context) -> bool {
    ctx.compute_capability().0 >= 9
}

/// On a GPU without clusters, what a test of them can still check: the typed refusal.
fn clusters_are_refused(ctx: &Context) {
    let e = k::cluster_sum::prepare(ctx)
        .unwrap()
        .with_cluster((2, 1, 1))
        .unwrap_err();
    assert!(
        matches!(
            e,
            Error::InvalidLaunch(LaunchConfigError::ClustersUnsupported { .. })
        ),
        "{e}"
    );
}

#[kernel(
    r#"
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

// Each block sums its 256 elements in shared memory; block 0 of each cluster then adds the
// other blocks' sums, read from their shared memory (distributed shared memory).
__device__ void cluster_reduce(const float *x, float *out, int n) {
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
    // Keep every block's shared memory alive until block 0 has read it.
    cluster.sync();
}

__global__ void __launch_bounds__(256) cluster_sum(const float *x, float *out, int n) {
    cluster_reduce(x, out, n);
}

__global__ void __cluster_dims__(2, 1, 1) __launch_bounds__(256) pair_sum(const float *x, float *out, int n) {
    cluster_reduce(x, out, n);
}

// Every block adds its part into partial[blockIdx.x]; after a grid-wide sync, block 0 sums
// the partials and scales x by the total (which needs every block's part first).
__global__ void coop_normalize(const float *x, float *partial, float *y, int n) {
    cg::grid_group grid = cg::this_grid();
    __shared__ float buf[256];
    float s = 0.0f;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) s += x[i];
    buf[threadIdx.x] = s;
    __syncthreads();
    for (int k = blockDim.x / 2; k > 0; k >>= 1) {
        if (threadIdx.x < k) buf[threadIdx.x] += buf[threadIdx.x + k];
        __syncthreads();
    }
    if (threadIdx.x == 0) partial[blockIdx.x] = buf[0];
    grid.sync();
    float total = 0.0f;
    for (unsigned b = 0; b < gridDim.x; ++b) total += partial[b];
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) y[i] = x[i] / total;
}
"#
)]
mod k {
    fn cluster_sum(x: &[f32], out: &mut [f32], n: i32);
    fn pair_sum(x: &[f32], out: &mut [f32], n: i32);
    fn coop_normalize(x: &[f32], partial: &mut [f32], y: &mut [f32], n: i32);
}

/// The sum of each run of `cluster * 256` elements.
fn cluster_sums(x: &[f32], cluster: usize) -> Vec<f32> {
    x.chunks(cluster * 256)
        .map(|c| c.chunks(256).map(|b| b.iter().sum::<f32>()).sum())
        .collect()
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_cluster_reduction_through_distributed_shared_memory_matches_the_cpu() {
    let ctx = ctx();
    let base = k::cluster_sum::prepare(&ctx).unwrap();
    if !has_clusters(&ctx) {
        let e = base.with_cluster((2, 1, 1)).unwrap_err();
        assert!(
            matches!(
                e,
                Error::InvalidLaunch(LaunchConfigError::ClustersUnsupported { .. })
            ),
            "{e}"
        );
        return;
    }
    let mut rng = Rng::new(11);
    for cluster in [1usize, 2, 4, 8] {
        let blocks = 64 * cluster;
        let n = blocks * 256 - 17;
        let x = rng.vec_f32(n);
        let xd = ctx.to_device(&x).unwrap();
        let mut out = ctx.alloc_zeros::<f32>(blocks / cluster).unwrap();
        let kern = base.with_cluster((cluster as u32, 1, 1)).unwrap();
        assert!(
            kern.function()
                .max_active_clusters((cluster as u32, 1, 1), 256)
                .unwrap()
                > 0
        );
        kern.prepared_call(blocks as u32, 256, &xd, &mut out, n as i32)
            .unwrap();
        assert_close(&out.to_vec().unwrap(), &cluster_sums(&x, cluster), 1e-4);
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_captured_cluster_launch_keeps_its_cluster_shape() {
    let ctx = ctx();
    if !has_clusters(&ctx) {
        clusters_are_refused(&ctx);
        return;
    }
    let kern = k::cluster_sum::prepare(&ctx)
        .unwrap()
        .with_cluster((4, 1, 1))
        .unwrap();
    let mut rng = Rng::new(12);
    let (blocks, cluster) = (128usize, 4usize);
    let x = rng.vec_f32(blocks * 256);
    let xd = ctx.to_device(&x).unwrap();
    let mut out = ctx.alloc_zeros::<f32>(blocks / cluster).unwrap();
    {
        let xg = GraphInput::new(&xd);
        let mut outg = GraphBuffer::new(&mut out);
        let mut cap = Capture::begin(&ctx).unwrap();
        kern.capture(&mut cap, blocks as u32, 256, &xg, &mut outg, x.len() as i32)
            .unwrap();
        let mut exec = cap.end().unwrap().instantiate().unwrap();
        let stream = Stream::new(&ctx).unwrap();
        for _ in 0..3 {
            exec.launch(&stream).unwrap();
        }
    }
    assert_close(&out.to_vec().unwrap(), &cluster_sums(&x, cluster), 1e-4);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn cluster_dims_in_the_source_are_respected_and_a_conflicting_shape_is_refused() {
    let ctx = ctx();
    if !has_clusters(&ctx) {
        clusters_are_refused(&ctx);
        return;
    }
    let pair = k::pair_sum::prepare(&ctx).unwrap();
    assert_eq!(pair.function().cluster_dims().unwrap(), Some([2, 1, 1]));
    let e = pair.with_cluster((4, 1, 1)).unwrap_err();
    assert!(
        matches!(
            e,
            Error::InvalidLaunch(LaunchConfigError::ClusterConflict {
                compiled: [2, 1, 1],
                ..
            })
        ),
        "{e}"
    );
    let kern = pair.with_cluster((2, 1, 1)).unwrap();
    let mut rng = Rng::new(13);
    let x = rng.vec_f32(96 * 256);
    let xd = ctx.to_device(&x).unwrap();
    let mut out = ctx.alloc_zeros::<f32>(48).unwrap();
    // An odd grid is not whole clusters: refused before the driver sees it.
    let e = kern
        .prepared_call(95, 256, &xd, &mut out, x.len() as i32)
        .unwrap_err();
    assert!(
        matches!(
            e,
            Error::InvalidLaunch(LaunchConfigError::ClusterNotDivisible {
                grid: 95,
                cluster: 2,
                ..
            })
        ),
        "{e}"
    );
    kern.prepared_call(96, 256, &xd, &mut out, x.len() as i32)
        .unwrap();
    assert_close(&out.to_vec().unwrap(), &cluster_sums(&x, 2), 1e-4);
    // The plain handle launches the compiled shape too (the driver applies it).
    let mut out2 = ctx.alloc_zeros::<f32>(48).unwrap();
    pair.prepared_call(96, 256, &xd, &mut out2, x.len() as i32)
        .unwrap();
    assert_close(&out2.to_vec().unwrap(), &cluster_sums(&x, 2), 1e-4);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn clusters_over_the_limits_are_refused_before_launch() {
    let ctx = ctx();
    if !has_clusters(&ctx) {
        clusters_are_refused(&ctx);
        return;
    }
    let kern = k::cluster_sum::prepare(&ctx).unwrap();
    for (shape, limit) in [
        ((32u32, 1u32, 1u32), 16u32),
        ((16, 1, 1), 8),
        ((4, 4, 1), 8),
        ((3, 3, 1), 8),
    ] {
        let e = kern.with_cluster(shape).unwrap_err();
        assert!(
            matches!(e, Error::InvalidLaunch(LaunchConfigError::ClusterTooLarge { limit: l, .. }) if l == limit),
            "{shape:?}: {e}"
        );
    }
    let e = kern.with_cluster((0, 1, 1)).unwrap_err();
    assert!(
        matches!(
            e,
            Error::InvalidLaunch(LaunchConfigError::ZeroDimension {
                which: "cluster.x",
                ..
            })
        ),
        "{e}"
    );
    // Allowed past 8 once the kernel opts in to non-portable sizes (16 on H100).
    kern.function().allow_non_portable_cluster_size().unwrap();
    let big = kern.with_cluster((16, 1, 1)).unwrap();
    let mut rng = Rng::new(14);
    let x = rng.vec_f32(64 * 256);
    let xd = ctx.to_device(&x).unwrap();
    let mut out = ctx.alloc_zeros::<f32>(4).unwrap();
    match big.prepared_call(64, 256, &xd, &mut out, x.len() as i32) {
        Ok(()) => assert_close(&out.to_vec().unwrap(), &cluster_sums(&x, 16), 1e-4),
        // A GPU whose SM groups cannot hold 16 blocks says so before launching.
        Err(e) => assert!(
            matches!(
                e,
                Error::InvalidLaunch(LaunchConfigError::ClusterNotResident { .. })
            ),
            "{e}"
        ),
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_cooperative_grid_sync_matches_the_cpu_and_a_grid_too_large_is_refused() {
    let ctx = ctx();
    let kern = k::coop_normalize::prepare(&ctx).unwrap().cooperative().unwrap();
    let sms = ctx
        .device()
        .attribute(
            gpu_runtime::cudarc::driver::sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
        )
        .unwrap() as u32;
    let mut rng = Rng::new(15);
    let n = 1_000_003;
    let x: Vec<f32> = (0..n).map(|_| rng.f32() + 1.5).collect();
    let xd = ctx.to_device(&x).unwrap();
    let blocks = sms * 2;
    let mut partial = ctx.alloc_zeros::<f32>(blocks as usize).unwrap();
    let mut y = ctx.alloc_zeros::<f32>(n).unwrap();
    kern.prepared_call(blocks, 256, &xd, &mut partial, &mut y, n as i32)
        .unwrap();
    let total: f64 = x.iter().map(|&v| v as f64).sum();
    let want: Vec<f32> = x.iter().map(|&v| (v as f64 / total) as f32).collect();
    assert_close(&y.to_vec().unwrap(), &want, 1e-3);
    // Far more blocks than can be resident: refused, rather than hanging in grid.sync().
    let mut partial = ctx.alloc_zeros::<f32>(100_000).unwrap();
    let e = kern
        .prepared_call(100_000, 256, &xd, &mut partial, &mut y, n as i32)
        .unwrap_err();
    assert!(
        matches!(
            e,
            Error::InvalidLaunch(LaunchConfigError::NotCoResident { units: 100_000, .. })
        ),
        "{e}"
    );
}
