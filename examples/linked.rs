//! Two CUDA sources linked into one module, where a kernel launches a kernel (dynamic
//! parallelism). The data is cut into segments of uneven, data-dependent lengths; the parent
//! kernel gives each segment its own child grid sized on the GPU, which no single host launch
//! could size well. The child and its helper live in the second source; the link (relocatable
//! device code, with the device runtime `cudadevrt`) resolves the parent's reference to them.

use gpu_runtime::{kernel, Context};
use gpu_suite::{mismatch_error, run_example, Rng};

#[kernel(sources = [r#"
extern "C" __global__ void scale_segment(float *x, float k, int n);
extern "C" __global__ void scale_segments(float *x, const float *factors, const int *starts, int segments) {
    int s = blockIdx.x * blockDim.x + threadIdx.x;
    if (s >= segments) return;
    int begin = starts[s], len = starts[s + 1] - begin;
    if (len > 0) scale_segment<<<(len + 255) / 256, 256>>>(x + begin, factors[s], len);
}"#, r#"
__device__ float affine(float v, float k) { return v * k + 1.0f; }
extern "C" __global__ void scale_segment(float *x, float k, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = affine(x[i], k);
}"#])]
mod segments {
    /// One thread per segment, each launching a child grid over its segment.
    fn scale_segments(x: &mut [f32], factors: &[f32], starts: &[i32], segments: i32);
    /// `x = x * k + 1` over one segment.
    fn scale_segment(x: &mut [f32], k: f32, n: i32);
}

fn main() -> std::process::ExitCode {
    run_example("linked", || {
        let ctx = Context::default()?;
        let mut rng = Rng::new(8);
        // 200 segments of 0 to 20,000 elements: empty ones included, to exercise `len > 0`.
        let mut starts = vec![0i32];
        for _ in 0..200 {
            starts.push(starts.last().unwrap() + (rng.next_u64() % 20_001) as i32);
        }
        let (segs, n) = (starts.len() - 1, *starts.last().unwrap() as usize);
        let (x, factors) = (rng.vec_f32(n), rng.vec_f32(segs));

        let parent = segments::scale_segments::prepare(&ctx)?;
        let mut xd = ctx.to_device(&x)?;
        let (fd, sd) = (ctx.to_device(&factors)?, ctx.to_device(&starts)?);
        // A child grid finishes before its parent counts as finished, so the copy back (which
        // waits for the parent) sees every segment done.
        parent.prepared_call((segs as u32).div_ceil(64), 64, &mut xd, &fd, &sd, segs as i32)?;

        let mut want = x.clone();
        for (s, k) in factors.iter().enumerate() {
            let range = starts[s] as usize..starts[s + 1] as usize;
            want[range].iter_mut().for_each(|v| *v = *v * k + 1.0);
        }
        // The GPU may fuse `v * k + 1.0f` into one FMA (one rounding, not two).
        mismatch_error("segments scaled by child grids", &xd.to_vec()?, &want, 1e-6)?;

        // The child is an ordinary kernel of the same module: the host may launch it too.
        let child = segments::scale_segment::prepare(&ctx)?;
        child.prepared_call((n as u32).div_ceil(256), 256, &mut xd, 2.0, n as i32)?;
        want.iter_mut().for_each(|v| *v = *v * 2.0 + 1.0);
        mismatch_error("the child launched from the host", &xd.to_vec()?, &want, 1e-6)?;
        println!("linked: {n} elements in {segs} segments, one child grid per segment launched on the GPU; matches the CPU");
        Ok(())
    })
}
