//! Issue 46's `linalg` (`linalg` section): batches of small matrices as CuPy users factor them
//! (4096 systems of 16 unknowns solved, their determinants, inverses and Cholesky factors;
//! the eigenvalues and vectors of 512 symmetric 32 x 32 matrices; the singular values of 512
//! matrices of 32 x 32), and one 1024 x 1024 matrix (a system solved, its inverse and its
//! determinant: the blocked factorization), each the best of [`ROUNDS`] in
//! milliseconds in `f64`, next to the same call through CuPy (cuSOLVER's batched and
//! single-matrix solvers) in a subprocess in the same run, when CuPy is importable. Each call
//! allocates its results inside the timed region and, like CuPy's, waits for the solver's
//! status where it has one (`solve`, `inv`, `cholesky`, `eigh`, `svdvals`).

use gpu_runtime::gpuarray::{self, DeviceArray, Uplo};
use gpu_runtime::ndarray::{Array, Dimension, IxDyn};
use gpu_runtime::Context;

use crate::gpu_timer::best_ms;
use crate::table::Row;

const ROUNDS: usize = 20;

/// The rows' operations through CuPy, in milliseconds, in the rows' order.
fn cupy() -> Option<Vec<f64>> {
    let body = r#"cp.random.seed(46)
a = cp.random.random((4096, 16, 16)) + 4 * cp.eye(16)
b = cp.random.random((4096, 16, 1))
spd = a @ a.transpose(0, 2, 1) + cp.eye(16)
s = cp.random.random((512, 32, 32)); s = s + s.transpose(0, 2, 1)
big = cp.random.random((1024, 1024)) + 32 * cp.eye(1024); bb = cp.random.random(1024)
fs = (lambda: cp.linalg.solve(a, b), lambda: cp.linalg.det(a), lambda: cp.linalg.inv(a),
      lambda: cp.linalg.cholesky(spd), lambda: cp.linalg.eigh(s), lambda: cp.linalg.svd(s, compute_uv=False),
      lambda: cp.linalg.solve(big, bb), lambda: cp.linalg.inv(big), lambda: cp.linalg.det(big))
print(*[1e3 * t(f) for f in fs])
"#;
    crate::cupy::timed_figures(ROUNDS, body, FIGURES.len())
}

const FIGURES: [&str; 9] = [
    "solve of 4096 f64 systems of 16 (ms, best of 20)",
    "det of 4096 f64 16 x 16 (ms, best of 20)",
    "inv of 4096 f64 16 x 16 (ms, best of 20)",
    "cholesky of 4096 f64 16 x 16 (ms, best of 20)",
    "eigh of 512 f64 symmetric 32 x 32 (ms, best of 20)",
    "svdvals of 512 f64 32 x 32 (ms, best of 20)",
    "solve of one f64 1024 x 1024 system (ms, best of 20)",
    "inv of one f64 1024 x 1024 (ms, best of 20)",
    "det of one f64 1024 x 1024 (ms, best of 20)",
];

/// `shape`'s elements from a fixed sequence in `[0, 1)`, plus `diagonal` on the diagonal of
/// each matrix (its last two axes).
fn matrices(ctx: &Context, shape: &[usize], diagonal: f64) -> gpu_runtime::Result<DeviceArray<f64, IxDyn>> {
    let n = shape[shape.len() - 1];
    let mut state = 46u64;
    let host = Array::from_shape_fn(IxDyn(shape), |i| {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let i = i.slice();
        let k = i.len();
        let on_diagonal = k >= 2 && n == shape[k - 2] && i[k - 1] == i[k - 2];
        (state >> 11) as f64 / (1u64 << 53) as f64 + if on_diagonal { diagonal } else { 0.0 }
    });
    DeviceArray::from_ndarray(ctx, &host)
}

pub fn rows(ctx: &Context) -> Result<Vec<Row>, Box<dyn std::error::Error>> {
    let a = matrices(ctx, &[4096, 16, 16], 4.0)?;
    let b = matrices(ctx, &[4096, 16, 1], 0.0)?;
    // Symmetric positive definite: diagonally dominant with a symmetric part only.
    let sym = matrices(ctx, &[512, 32, 32], 0.0)?;
    let sym = (sym.expr() + &sym.view().permuted_axes(&[0, 2, 1])?).eval()?;
    let spd = (a.expr() + &a.view().permuted_axes(&[0, 2, 1])?).eval()?;
    let spd = (spd.expr() + &DeviceArray::<f64, _>::eye(ctx, 16, 16, 0)?.into_dyn() * 64.0).eval()?;
    let big = matrices(ctx, &[1024, 1024], 32.0)?;
    let bb = matrices(ctx, &[1024], 0.0)?;
    let ours = [
        best_ms(ctx, ROUNDS, || gpuarray::solve(&a, &b))?,
        best_ms(ctx, ROUNDS, || gpuarray::det(&a))?,
        best_ms(ctx, ROUNDS, || gpuarray::inv(&a))?,
        best_ms(ctx, ROUNDS, || gpuarray::cholesky(&spd))?,
        best_ms(ctx, ROUNDS, || gpuarray::eigh(&sym, Uplo::L))?,
        best_ms(ctx, ROUNDS, || gpuarray::svdvals(&sym))?,
        best_ms(ctx, ROUNDS, || gpuarray::solve(&big, &bb))?,
        best_ms(ctx, ROUNDS, || gpuarray::inv(&big))?,
        best_ms(ctx, ROUNDS, || gpuarray::det(&big))?,
    ];
    let mut rows = Vec::new();
    match cupy() {
        Some(c) => {
            for ((&figure, o), theirs) in FIGURES.iter().zip(ours).zip(c) {
                println!("linalg vs CuPy: {figure}: ours {o:.3} ms, CuPy {theirs:.3} ms");
                rows.push(Row::cupy(
                    figure,
                    "CuPy (subprocess), same operation",
                    o,
                    theirs,
                    "ms",
                ));
            }
        }
        None => {
            println!("linalg: CuPy rows skipped: `python3 -c \"import cupy\"` failed here; ours only");
            for (figure, o) in FIGURES.iter().zip(ours) {
                println!("linalg: {figure}: ours {o:.3} ms");
            }
        }
    }
    Ok(rows)
}
