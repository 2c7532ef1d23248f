//! A 1D convolution whose taps live in `__constant__` memory, written from Rust through the
//! typed accessor the macro generates for each device variable of the source
//! (`convolve::globals::taps(&ctx)?`, a `Global<[f32; 9]>`). Every thread of a warp reads the
//! same tap at the same time, which the constant cache serves in one broadcast; and changing
//! the filter is a 36-byte copy, not a recompile.

use gpu_runtime::{kernel, Context};
use gpu_suite::{mismatch_error, run_example, Rng};

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
