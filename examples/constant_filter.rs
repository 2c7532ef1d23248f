//! A 1D convolution whose taps live in `__constant__` memory, written from Rust through the
//! typed accessor the macro generates for each device variable of the source
//! (`convolve::globals::taps(&ctx)?`, a `Global<[f32; 9]>`). Every thread of a warp reads the
//! same tap at the same time, which the constant cache serves in one broadcast; and changing
//! the filter is a 36-byte copy, not a recompile.

use gpu_runtime::{kernel, Context};

#[kernel(
    r#"
#define RADIUS 4
// The bound is a literal: the macro types the accessor from it (`[f32; 9]`).
__constant__ float taps[9];

__global__ void convolve(const float *x, float *y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float acc = 0.0f;
    for (int j = -RADIUS; j <= RADIUS; ++j) {
        int k = min(max(i + j, 0), n - 1); // edges clamped
        acc += taps[j + RADIUS] * x[k];
    }
    y[i] = acc;
}"#
)]
fn convolve(#[In] x: &[f32], #[Out] y: &mut [f32], n: i32);

const RADIUS: usize = 4;

/// The same sum in the same order; the GPU fuses each multiply-add (one rounding, not two).
fn convolve_cpu(x: &[f32], taps: &[f32; 2 * RADIUS + 1]) -> Vec<f32> {
    let n = x.len() as isize;
    (0..n)
        .map(|i| {
            taps.iter().enumerate().fold(0.0, |acc, (t, w)| {
                acc + w * x[(i + t as isize - RADIUS as isize).clamp(0, n - 1) as usize]
            })
        })
        .collect()
}

fn main() -> std::process::ExitCode {
    run_example("constant_filter", || {
        let ctx = Context::default()?;
        let n = 1 << 20;
        let mut rng = Rng::new(3);
        let x = rng.vec_f32(n);
        let taps_global = convolve::globals::taps(&ctx)?;
        let mut y = vec![0f32; n];

        // Two filters through the same compiled kernel: random taps, then a binomial smoother.
        let random: [f32; 9] = std::array::from_fn(|_| rng.f32());
        let binomial = [1.0, 8.0, 28.0, 56.0, 70.0, 56.0, 28.0, 8.0, 1.0].map(|c: f32| c / 256.0);
        for (what, taps) in [("random taps", random), ("binomial taps", binomial)] {
            taps_global.set(taps)?;
            // Read back: the symbol the kernel sees holds what was written.
            if taps_global.get()? != taps {
                return Err(format!("{what}: the constant memory reads back differently").into());
            }
            convolve(&ctx, (n as u32).div_ceil(256), 256, &x, &mut y, n as i32)?;
            mismatch_error(what, &y, &convolve_cpu(&x, &taps), 1e-5)?;
        }
        println!("constant_filter: a 9-tap convolution of {n} floats with two filters set in __constant__ memory; both match the CPU");
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
