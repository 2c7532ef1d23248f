//! Kernels written the way candle writes them: a header of macros (`candle_style/ops.cuh`)
//! stamps out one kernel per operation and dtype (`candle_style/ops.cu`), each taking
//! `numel`, `num_dims` and an `info` array of the dims then the strides, so that one kernel
//! reads contiguous, transposed and broadcast inputs alike. Checked against the CPU.
//!
//! `cargo run --release --example candle_style`: needs an NVIDIA GPU. On a machine without one
//! it says so in one sentence and exits with status 1.
//!
//! The files travel inside the binary: `ops.cu` and the `ops.cuh` it includes are read at build
//! time and given to NVRTC in memory, so the program runs from any directory, on any machine.

use gpu_runtime::{kernel, Context};

// The kernels are made by C macros, so each is named by a prototype after the `#include`: the
// signature checks read these. (The inline source is compiled as `<inline:ops>`, so including
// `ops.cu` from it is no self-include.) `include_dirs` is where `ops.cu` and `ops.cuh` are,
// relative to this crate's Cargo.toml.
#[kernel(
    r#"#include "ops.cu"
extern "C" __global__ void usqr_f32(const size_t numel, const size_t num_dims, const size_t *info, const float *inp, float *out);
extern "C" __global__ void usqr_f64(const size_t numel, const size_t num_dims, const size_t *info, const double *inp, double *out);
extern "C" __global__ void uneg_i32(const size_t numel, const size_t num_dims, const size_t *info, const int32_t *inp, int32_t *out);
extern "C" __global__ void uexp_f32(const size_t numel, const size_t num_dims, const size_t *info, const float *inp, float *out);
extern "C" __global__ void affine_f32(const size_t numel, const size_t num_dims, const size_t *info, const float *inp, float *out, const float mul, const float add);
"#,
    include_dirs = ["examples/candle_style"]
)]
mod ops {
    fn usqr_f32(
        numel: usize,
        num_dims: usize,
        #[In] info: &[usize],
        #[In] inp: &[f32],
        #[Out] out: &mut [f32],
    );
    fn usqr_f64(
        numel: usize,
        num_dims: usize,
        #[In] info: &[usize],
        #[In] inp: &[f64],
        #[Out] out: &mut [f64],
    );
    fn uneg_i32(
        numel: usize,
        num_dims: usize,
        #[In] info: &[usize],
        #[In] inp: &[i32],
        #[Out] out: &mut [i32],
    );
    fn uexp_f32(
        numel: usize,
        num_dims: usize,
        #[In] info: &[usize],
        #[In] inp: &[f32],
        #[Out] out: &mut [f32],
    );
    fn affine_f32(
        numel: usize,
        num_dims: usize,
        #[In] info: &[usize],
        #[In] inp: &[f32],
        #[Out] out: &mut [f32],
        mul: f32,
        add: f32,
    );
}

/// A 2-D layout as candle's `info` describes it: the dims, then the strides.
fn info(dims: [usize; 2], strides: [usize; 2]) -> [usize; 4] {
    [dims[0], dims[1], strides[0], strides[1]]
}

/// The element at (r, c) of a buffer in the layout of `strides`.
fn at<T: Copy>(x: &[T], strides: [usize; 2], r: usize, c: usize) -> T {
    x[r * strides[0] + c * strides[1]]
}

fn main() -> std::process::ExitCode {
    run_example("candle_style", || {
        let ctx = Context::default()?;
        let (rows, cols) = (300usize, 517usize);
        let n = rows * cols;
        let (grid, block) = ((n as u32).div_ceil(1024), 1024u32);
        let x: Vec<f32> = (0..n).map(|i| ((i * 7919) % 1000) as f32 * 1e-3 - 0.5).collect();

        // Three layouts of the same `rows x cols` view: contiguous, transposed (the buffer
        // holds `cols x rows`), and a row broadcast down the rows (stride 0).
        let layouts = [
            ("contiguous", [cols, 1]),
            ("transposed", [1, rows]),
            ("broadcast row", [0, 1]),
        ];
        for (name, strides) in layouts {
            let info = info([rows, cols], strides);
            let want = |f: &dyn Fn(f32) -> f32| -> Vec<f32> {
                (0..n).map(|i| f(at(&x, strides, i / cols, i % cols))).collect()
            };
            let mut out = vec![0.0f32; n];
            ops::usqr_f32(&ctx, grid, block, n, 2, &info, &x, &mut out)?;
            mismatch_error(&format!("usqr_f32, {name}"), &out, &want(&|v| v * v), 1e-6)?;
            ops::uexp_f32(&ctx, grid, block, n, 2, &info, &x, &mut out)?;
            mismatch_error(&format!("uexp_f32, {name}"), &out, &want(&|v| v.exp()), 1e-5)?;
            ops::affine_f32(&ctx, grid, block, n, 2, &info, &x, &mut out, 1.5, -0.25)?;
            mismatch_error(
                &format!("affine_f32, {name}"),
                &out,
                &want(&|v| v * 1.5 - 0.25),
                1e-6,
            )?;
        }

        // The same macros, other dtypes.
        let info = info([rows, cols], [1, rows]);
        let xd: Vec<f64> = x.iter().map(|&v| v as f64 / 3.0).collect();
        let mut outd = vec![0.0f64; n];
        ops::usqr_f64(&ctx, grid, block, n, 2, &info, &xd, &mut outd)?;
        for (i, got) in outd.iter().enumerate() {
            let v = at(&xd, [1, rows], i / cols, i % cols);
            if (got - v * v).abs() > 1e-15 {
                return Err(format!(
                    "usqr_f64: element {i} is {got} on the GPU but {} on the CPU",
                    v * v
                )
                .into());
            }
        }
        let xi: Vec<i32> = (0..n as i32).map(|i| i % 2001 - 1000).collect();
        let mut outi = vec![0i32; n];
        ops::uneg_i32(&ctx, grid, block, n, 2, &info, &xi, &mut outi)?;
        let wanti: Vec<i32> = (0..n).map(|i| -at(&xi, [1, rows], i / cols, i % cols)).collect();
        if outi != wanti {
            return Err("uneg_i32: the GPU and the CPU differ".into());
        }
        println!(
            "candle-style kernels (macro-made, strided through `info`) on {rows}x{cols}: contiguous, \
             transposed and broadcast layouts in f32, f64 and i32 match the CPU"
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
