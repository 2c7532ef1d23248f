//! cuBLAS through cudarc on this crate's buffers, then a kernel of ours on another stream, with
//! no synchronisation and no `unsafe`; and a kernel of ours writing cudarc's own memory, which
//! cudarc then copies back. Checked against the CPU.
//!
//! `cargo run --release --features cublas --example cudarc_cublas`: needs an NVIDIA GPU and
//! libcublas (a CUDA toolkit, or `pip install nvidia-cublas` with its lib/ on
//! LD_LIBRARY_PATH). On a machine without them it says so in one sentence and exits with
//! status 1.

use gpu_runtime::cudarc::cublas::sys::cublasOperation_t::CUBLAS_OP_N;
use gpu_runtime::cudarc::cublas::GemmConfig;
use gpu_runtime::driver::cublas::{cublas_on, gemm};
use gpu_runtime::driver::cudarc_interop::LendMut;
use gpu_runtime::driver::StreamFlags;
use gpu_runtime::{kernel, Context, Stream};

#[kernel(
    r#"
__global__ void relu(const float *x, float *y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = fmaxf(x[i], 0.0f);
}"#
)]
fn relu(x: &[f32], y: &mut [f32], n: i32);

fn main() -> std::process::ExitCode {
    run_example("cudarc_cublas", || {
        let ctx = Context::default()?;
        let (m, n, k) = (256usize, 192usize, 128usize);
        // Column-major, as cuBLAS takes them.
        let a: Vec<f32> = (0..m * k).map(|i| ((i * 7919) % 17) as f32 / 8.0 - 1.0).collect();
        let b: Vec<f32> = (0..k * n)
            .map(|i| ((i * 104729) % 13) as f32 / 6.0 - 1.0)
            .collect();
        let mut want = vec![0f32; m * n];
        for j in 0..n {
            for i in 0..m {
                let s: f64 = (0..k).map(|p| a[i + p * m] as f64 * b[p + j * k] as f64).sum();
                want[i + j * m] = (s as f32).max(0.0);
            }
        }

        let gemm_stream = Stream::with_flags(&ctx, StreamFlags::NonBlocking)?;
        let kernel_stream = Stream::with_flags(&ctx, StreamFlags::NonBlocking)?;
        // cuBLAS on `gemm_stream` (cudarc's handle to it): its uses of our buffers are
        // recorded there, so the kernel on the other stream waits for it on the GPU.
        let blas = cublas_on(&gemm_stream)?;
        let (da, db) = (ctx.to_device(&a)?, ctx.to_device(&b)?);
        let mut dc = ctx.alloc_zeros::<f32>(m * n)?;
        let cfg = GemmConfig {
            transa: CUBLAS_OP_N,
            transb: CUBLAS_OP_N,
            m: m as i32,
            n: n as i32,
            k: k as i32,
            alpha: 1.0f32,
            lda: m as i32,
            ldb: k as i32,
            beta: 0.0f32,
            ldc: m as i32,
        };
        // Checked: a configuration that does not fit the buffers is an error, not a fault.
        gemm(&blas, cfg, &da, &db, &mut dc)?;
        let mut out = ctx.alloc_zeros::<f32>(m * n)?;
        let relu = relu::prepare(&ctx)?;
        let grid = ((m * n) as u32).div_ceil(256);
        relu.prepared_async_call(grid, 256, &kernel_stream, &dc, &mut out, (m * n) as i32)?;
        mismatch_error("cuBLAS then relu", &out.to_vec()?, &want, 1e-4)?;

        // cudarc's own memory in our kernel: lent for the closure, ordered with cudarc's events.
        let cudarc_stream = ctx.cudarc_context()?.new_stream()?;
        let mut theirs = cudarc_stream.alloc_zeros::<f32>(m * n)?;
        theirs.lend_mut(&kernel_stream, |y| {
            relu.prepared_async_call(grid, 256, &kernel_stream, &dc, y, (m * n) as i32)
        })??;
        let back = cudarc_stream.clone_dtoh(&theirs)?;
        mismatch_error("relu into cudarc's slice", &back, &want, 1e-4)?;
        println!(
            "cuBLAS sgemm ({m} x {k} times {k} x {n}) on this crate's buffers, a kernel on another stream, and a kernel writing cudarc's memory: results match the CPU"
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
