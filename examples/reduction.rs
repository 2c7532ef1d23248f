//! A parallel sum: each block reduces its slice in shared memory (a tree of halving steps),
//! writes one partial sum, and the kernel runs again on the partial sums until one is left.
//! The buffers stay on the GPU between passes. At the end, the sum a user would write when the
//! kernel itself is not the point: `DeviceArray::sum` (gpuarray's generated reduction).

use gpu_runtime::{kernel, Context};

#[kernel(
    r#"
__global__ void block_sum(const float *in, float *out, int n) {
    extern __shared__ float part[];
    unsigned int t = threadIdx.x;
    unsigned int i = blockIdx.x * blockDim.x * 2 + t;
    float v = 0.0f;
    if (i < n) v += in[i];
    if (i + blockDim.x < n) v += in[i + blockDim.x];
    part[t] = v;
    __syncthreads();
    for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (t < s) part[t] += part[t + s];
        __syncthreads();
    }
    if (t == 0) out[blockIdx.x] = part[0];
}"#
)]
fn block_sum(input: &[f32], output: &mut [f32], n: i32);

fn main() -> std::process::ExitCode {
    run_example("reduction", || {
        let ctx = Context::default()?;
        let n = 10_000_019usize;
        let data = Rng::new(3).vec_f32(n);
        let block = 512u32;
        // Each thread adds two elements, so a block covers 2 * block of them.
        let kernel = block_sum::prepare(&ctx)?.with_shared_mem(block * 4);

        let mut current = ctx.to_device(&data)?;
        let mut len = n;
        while len > 1 {
            let blocks = len.div_ceil(2 * block as usize);
            let mut partial = ctx.alloc::<f32>(blocks)?;
            kernel.prepared_call(blocks as u32, block, &current, &mut partial, len as i32)?;
            current = partial;
            len = blocks;
        }
        let gpu = current.to_vec()?[0] as f64;
        let cpu: f64 = data.iter().map(|&v| v as f64).sum();
        if (gpu - cpu).abs() > 1e-3 * (1.0 + cpu.abs()) {
            return Err(format!("the GPU sum {gpu} differs from the CPU sum {cpu}").into());
        }
        // Without writing a kernel: the same sum on a device array.
        let array = gpu_runtime::gpuarray::DeviceArray::from_ndarray(
            &ctx,
            &gpu_runtime::ndarray::Array1::from(data),
        )?;
        let by_array = array.sum()? as f64;
        if (by_array - cpu).abs() > 1e-3 * (1.0 + cpu.abs()) {
            return Err(format!("DeviceArray::sum gives {by_array}, the CPU {cpu}").into());
        }
        println!(
            "reduction: sum of {n} floats = {gpu:.4} (DeviceArray::sum {by_array:.4}; CPU, in f64: {cpu:.4})"
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
