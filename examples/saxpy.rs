//! y = a·x + y on the GPU, checked against the CPU.
//!
//! `cargo run --release --example saxpy`: needs an NVIDIA GPU. On a machine without one it says
//! so in one sentence and exits with status 1.

use std::process::ExitCode;

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

fn run() -> gpu_runtime::Result<()> {
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

    // Or keep the data on the GPU: prepare once, launch many times with no copies.
    let kernel = saxpy::prepare(&ctx)?;
    let xd = ctx.to_device(&x)?;
    let mut yd = ctx.to_device(&y)?;
    let time = kernel.prepared_timed_call(grid, block, -a, &xd, &mut yd, n as i32)?;
    let back = yd.to_vec()?;

    let bad = y
        .iter()
        .zip(&want)
        .filter(|(g, w)| (*g - *w).abs() > 1e-5 * (1.0 + w.abs()))
        .count();
    let undone = back
        .iter()
        .zip(&x)
        .zip(&want)
        .filter(|((b, x), w)| (**b - (*w - a * *x)).abs() > 1e-4)
        .count();
    let gb = 3.0 * (n * 4) as f64 / 1e9;
    println!(
        "saxpy on {} with {n} elements: {} mismatches; the device-only launch took {:.1} us ({:.0} GB/s), {} mismatches",
        ctx.device().name()?,
        bad,
        time.as_secs_f64() * 1e6,
        gb / time.as_secs_f64(),
        undone
    );
    if bad + undone > 0 {
        return Err(gpu_runtime::Error::InvalidDevice(format!(
            "{} results differ from the CPU",
            bad + undone
        )));
    }
    Ok(())
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("saxpy: {e}");
            ExitCode::FAILURE
        }
    }
}
