//! Several kernels from one CUDA source, compiled into one module: `#[kernel]` on a `mod`.
//! The kernels share a `__device__` helper and a `#define`; the module is compiled and loaded
//! once per context however many of its kernels are prepared.

use gpu_runtime::{kernel, Context};

#[kernel(
    r#"
#define SCALE 0.5f
__device__ float clamp01(float v) { return fminf(fmaxf(v, 0.0f), 1.0f); }

__global__ void normalize(float *v, float lo, float hi, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) v[i] = clamp01((v[i] - lo) / (hi - lo));
}

__global__ void halve_into(const float *v, float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = SCALE * v[i];
}
"#
)]
mod image_ops {
    /// Maps `[lo, hi]` to `[0, 1]`, clamping.
    fn normalize(v: &mut [f32], lo: f32, hi: f32, n: i32);
    /// `out = v / 2`.
    fn halve_into(v: &[f32], out: &mut [f32], n: i32);
}

fn main() -> std::process::ExitCode {
    run_example("module", || {
        let ctx = Context::default()?;
        let n = 100_000;
        let host: Vec<f32> = Rng::new(5).vec_f32(n).iter().map(|v| v * 3.0).collect();

        let normalize = image_ops::normalize::prepare(&ctx)?;
        let halve = image_ops::halve_into::prepare(&ctx)?;
        let mut v = ctx.to_device(&host)?;
        let mut out = ctx.alloc::<f32>(n)?;
        let grid = (n as u32).div_ceil(256);
        normalize.prepared_call(grid, 256, &mut v, -1.0, 1.0, n as i32)?;
        halve.prepared_call(grid, 256, &v, &mut out, n as i32)?;

        let want: Vec<f32> = host
            .iter()
            .map(|x| 0.5 * ((x + 1.0) / 2.0).clamp(0.0, 1.0))
            .collect();
        mismatch_error("normalize then halve", &out.to_vec()?, &want, 1e-6)?;
        println!("module: two kernels from one module, {n} elements, match the CPU");
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
