//! Two CUDA sources linked into one module, where a kernel launches a kernel (dynamic
//! parallelism). The data is cut into segments of uneven, data-dependent lengths; the parent
//! kernel gives each segment its own child grid sized on the GPU, which no single host launch
//! could size well. The child and its helper live in the second source; the link (relocatable
//! device code, with the device runtime `cudadevrt`) resolves the parent's reference to them.

use gpu_runtime::{kernel, Context};

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
