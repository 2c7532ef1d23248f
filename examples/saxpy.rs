//! y = a·x + y on the GPU, checked against the CPU.
//!
//! `cargo run --release --example saxpy`: needs an NVIDIA GPU. On a machine without one it says
//! so in one sentence and exits with status 1.

use gpu_runtime::{kernel, Context};

// The CUDA C kernel and its Rust signature: the macro checks at compile time that they agree
// (a `const float *` must be `&[f32]`, an `int` must be `i32`, ...). `#[In]` copies `x` to the
// GPU before the launch; `#[InOut]` copies `y` there and back.
#[kernel(
    r#"
__global__ void saxpy(float a, const float *x, float *y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}"#
)]
fn saxpy(a: f32, #[In] x: &[f32], #[InOut] y: &mut [f32], n: i32);

fn main() -> std::process::ExitCode {
    run_example("saxpy", || {
        let ctx = Context::default()?;
        let n: usize = 1 << 24;
        let a = 2.5f32;
        let x: Vec<f32> = (0..n).map(|i| (i % 1000) as f32 * 1e-3).collect();
        let mut y: Vec<f32> = (0..n).map(|i| (i % 7) as f32).collect();
        let want: Vec<f32> = x.iter().zip(&y).map(|(x, y)| a * x + y).collect();

        // Host data in, host data out: one line.
        let block = 256;
        let grid = (n as u32).div_ceil(block);
        saxpy(&ctx, grid, block, a, &x, &mut y, n as i32)?;
        mismatch_error("saxpy with host data", &y, &want, 1e-5)?;

        // Or keep the data on the GPU: prepare once, launch many times with no copies.
        let kernel = saxpy::prepare(&ctx)?;
        let xd = ctx.to_device(&x)?;
        let mut yd = ctx.to_device(&y)?;
        let time = kernel.prepared_timed_call(grid, block, -a, &xd, &mut yd, n as i32)?;
        let back: Vec<f32> = yd.to_vec()?;
        let undone: Vec<f32> = want.iter().zip(&x).map(|(w, x)| w - a * x).collect();
        mismatch_error("saxpy on device buffers", &back, &undone, 1e-4)?;

        // Or, when the kernel is one expression, let gpuarray write it: `yd` as an array,
        // updated in place by a generated, cached kernel.
        let mut ya = gpu_runtime::gpuarray::DeviceArray::from_ndarray(
            &ctx,
            &gpu_runtime::ndarray::Array1::from(back),
        )?;
        let xa = gpu_runtime::gpuarray::DeviceArray::from_ndarray(
            &ctx,
            &gpu_runtime::ndarray::Array1::from(x.clone()),
        )?;
        ya.add_assign(&xa * a)?;
        mismatch_error("y += a * x on device arrays", &ya.to_vec()?, &want, 1e-4)?;

        let gbytes = 3.0 * (n * 4) as f64 / 1e9;
        println!(
            "saxpy on {} with {n} elements: results match the CPU; the device-only launch took {:.1} us ({:.0} GB/s)",
            ctx.device().name()?,
            time.as_secs_f64() * 1e6,
            gbytes / time.as_secs_f64(),
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
