//! NumPy's (and CuPy's) `polyfit`: the least-squares polynomial through points, as NumPy
//! computes it (the Vandermonde matrix of `x`, rows weighted by `w`, each column scaled to
//! norm 1, solved by the singular values with NumPy's `rcond` cut, the solution scaled back),
//! the work on the points on the device: one block builds the scaled matrix beside the
//! right-hand sides and reduces it by Householder reflections to the triangle `R` and `Qᵀy`
//! (every point read once per column), which the host solves through the singular value
//! decomposition of `R` (one-sided Jacobi; `R` has `deg + 1` columns, the same singular
//! values as the matrix and the same least-squares solution).

use ndarray::{Dimension, Ix1, IxDyn};

use crate::driver::context::core::Context;
use crate::driver::stream::Stream;
use crate::error::{check_counts, ArrayShapeError, Result};
use crate::gpuarray::array::core::{DeviceArray, DeviceArrayBase, DeviceArrayView, Storage};
use crate::gpuarray::array::on_stream::{context_fns, OnStream};
use crate::gpuarray::elements::cast::{convert_c, headers_for};
use crate::gpuarray::elements::dtype::DType;
use crate::gpuarray::elements::element::Element;
use crate::gpuarray::expr::core::{dimension_error, empty_error, undefined_error};
use crate::gpuarray::kernels::source_kernels::SourceKernels;
use crate::launch::{Arg, PreparedFunction};

/// The threads of the one block (a power of two: its sums halve it).
const ONE_BLOCK: u32 = 256;

static KERNELS: SourceKernels<DType> = SourceKernels::new();

/// A least-squares fit with NumPy's `full=True` diagnostics ([`polyfit_full`]).
#[derive(Debug)]
pub struct PolyFit<D: Dimension> {
    /// The coefficients, highest power first: `deg + 1` of them, or `(deg + 1, k)` for `k`
    /// columns of `y`.
    pub coeffs: DeviceArray<f64, D>,
    /// The sum of squared residuals of each column of `y` (weighted), as NumPy gives them:
    /// empty unless the fit has full rank and more points than coefficients.
    pub residuals: Vec<f64>,
    /// The rank of the scaled Vandermonde matrix: its singular values above `rcond` times
    /// the largest. Below `deg + 1` (NumPy warns `RankWarning`), the fit is the solution of
    /// least norm.
    pub rank: usize,
    /// The singular values of the scaled Vandermonde matrix, largest first: `min(len(x),
    /// deg + 1)` of them, as NumPy's.
    pub singular_values: Vec<f64>,
    /// The cut used: `len(x) * f64::EPSILON` unless given.
    pub rcond: f64,
}

fn source(t: DType) -> String {
    let tc = t.c_name();
    let read = |x: &str| convert_c(t, DType::F64, x);
    format!(
        "{headers}__device__ double gpu_block_sum(double v, double *red) {{\n\
             red[threadIdx.x] = v;\n\
             __syncthreads();\n\
             for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {{\n\
                 if (threadIdx.x < s) red[threadIdx.x] += red[threadIdx.x + s];\n\
                 __syncthreads();\n\
             }}\n\
             const double r = red[0];\n\
             __syncthreads();\n\
             return r;\n\
         }}\n\
         extern \"C\" __global__ void gpu_polyfit(long long m, const {tc} *__restrict__ x, const {tc} *__restrict__ y, \
         const {tc} *__restrict__ w, int weighted, long long n, long long k, double *a, double *out) {{\n\
         __shared__ double red[{block}];\n\
         const long long cols = n + k;\n\
         // The weighted Vandermonde matrix (highest power first) and right-hand sides, by columns.\n\
         for (long long i = threadIdx.x; i < m; i += blockDim.x) {{\n\
             const double xv = {xi}, wv = weighted ? {wi} : 1.0;\n\
             double p = wv;\n\
             for (long long c = n - 1; c >= 0; --c) {{ a[c * m + i] = p; p *= xv; }}\n\
             for (long long j = 0; j < k; ++j) a[(n + j) * m + i] = {yij} * wv;\n\
         }}\n\
         __syncthreads();\n\
         // Each column scaled to norm 1 (NumPy's `scale`; a zero column stays, as of rank 0).\n\
         for (long long c = 0; c < n; ++c) {{\n\
             double s = 0.0;\n\
             for (long long i = threadIdx.x; i < m; i += blockDim.x) s += a[c * m + i] * a[c * m + i];\n\
             const double norm = sqrt(gpu_block_sum(s, red));\n\
             if (threadIdx.x == 0) out[n * cols + k + c] = norm;\n\
             const double d = norm > 0.0 ? norm : 1.0;\n\
             for (long long i = threadIdx.x; i < m; i += blockDim.x) a[c * m + i] /= d;\n\
         }}\n\
         __syncthreads();\n\
         // Householder reflections: column c below the diagonal becomes v (v_c = 1 implied).\n\
         for (long long c = 0; c < n && c < m; ++c) {{\n\
             double s = 0.0;\n\
             for (long long i = c + threadIdx.x; i < m; i += blockDim.x) s += a[c * m + i] * a[c * m + i];\n\
             const double norm = sqrt(gpu_block_sum(s, red));\n\
             if (norm == 0.0) continue;\n\
             const double alpha = a[c * m + c];\n\
             const double beta = alpha >= 0.0 ? -norm : norm;\n\
             const double v0 = alpha - beta, tau = (beta - alpha) / beta;\n\
             __syncthreads();\n\
             for (long long i = c + 1 + threadIdx.x; i < m; i += blockDim.x) a[c * m + i] /= v0;\n\
             __syncthreads();\n\
             for (long long j = c + 1; j < cols; ++j) {{\n\
                 double dot = 0.0;\n\
                 for (long long i = c + threadIdx.x; i < m; i += blockDim.x) dot += (i == c ? 1.0 : a[c * m + i]) * a[j * m + i];\n\
                 const double f = tau * gpu_block_sum(dot, red);\n\
                 for (long long i = c + threadIdx.x; i < m; i += blockDim.x) a[j * m + i] -= f * (i == c ? 1.0 : a[c * m + i]);\n\
             }}\n\
             __syncthreads();\n\
             if (threadIdx.x == 0) a[c * m + c] = beta;\n\
             __syncthreads();\n\
         }}\n\
         // R and Q^T y (rows 0..n), then each right-hand side's squared residual (rows n..m).\n\
         for (long long e = threadIdx.x; e < n * cols; e += blockDim.x) {{\n\
             const long long r = e / cols, c = e % cols;\n\
             out[e] = (c < n && r > c) || r >= m ? 0.0 : a[c * m + r];\n\
         }}\n\
         for (long long j = 0; j < k; ++j) {{\n\
             double s = 0.0;\n\
             for (long long i = n + threadIdx.x; i < m; i += blockDim.x) s += a[(n + j) * m + i] * a[(n + j) * m + i];\n\
             const double total = gpu_block_sum(s, red);\n\
             if (threadIdx.x == 0) out[n * cols + j] = total;\n\
         }}\n\
         }}\n",
        headers = headers_for([t]),
        block = ONE_BLOCK,
        xi = read("x[i]"),
        wi = read("w[i]"),
        yij = read("y[i * k + j]"),
    )
}

fn prepared(ctx: &Context, t: DType) -> Result<PreparedFunction> {
    KERNELS.prepared(ctx, t, "gpu_polyfit", || source(t))
}

context_fns! {
    /// The coefficients, highest power first, of the polynomial of degree `deg` that fits the
    /// points `(x, y)` best in least squares (NumPy's `polyfit(x, y, deg)`), in `f64` as NumPy
    /// gives them: `deg + 1` of them for a 1-d `y`, `(deg + 1, k)` for the `k` columns of a 2-d
    /// `y` (one fit each). A fit of deficient rank (NumPy warns `RankWarning`) is the solution
    /// of least norm; [`polyfit_full`] says the rank. Every input is converted to `f64` and the
    /// default `rcond` is `f64`'s (NumPy works in `float32` for `float32` points, with its `eps`,
    /// and refuses `float16`); a column of only zeros (every `x` 0, or every weight) gets the
    /// coefficient 0 where NumPy's gives NaN. Complex points are refused
    /// ([`ArgumentError::UndefinedOnElement`](crate::error::ArgumentError::UndefinedOnElement);
    /// NumPy takes them). Waits for the fit.
    ///
    /// ```no_run
    /// use gpu_runtime::gpuarray::{self, DeviceArray};
    /// use gpu_runtime::ndarray::arr1;
    /// let ctx = gpu_runtime::Context::default()?;
    /// let x = DeviceArray::from_ndarray(&ctx, &arr1(&[0.0f64, 1.0, 2.0, 3.0]))?;
    /// let y = DeviceArray::from_ndarray(&ctx, &arr1(&[1.0f64, 3.0, 5.0, 7.0]))?;
    /// let c = gpuarray::polyfit(&x, &y, 1)?.to_vec()?; // y = 2x + 1
    /// assert!((c[0] - 2.0).abs() < 1e-12 && (c[1] - 1.0).abs() < 1e-12);
    /// # Ok::<(), gpu_runtime::Error>(())
    /// ```
    fn polyfit[T: Element, SX: Storage<Elem = T>, SY: Storage<Elem = T>, D: Dimension](
        &self, x: &DeviceArrayBase<SX, Ix1>, y: &DeviceArrayBase<SY, D>, deg: usize
    ) -> Result<DeviceArray<f64, D>> {
        fit(x, y, deg, None, None, self.stream).map(|f| f.coeffs)
    }

    /// [`polyfit`] with each point's residual weighted by `w` (NumPy's `polyfit(x, y, deg,
    /// w=w)`: `1/sigma` for Gaussian errors), one weight a point.
    fn polyfit_weighted[
        T: Element, SX: Storage<Elem = T>, SY: Storage<Elem = T>, SW: Storage<Elem = T>,
        D: Dimension
    ](
        &self, x: &DeviceArrayBase<SX, Ix1>, y: &DeviceArrayBase<SY, D>, deg: usize,
        w: &DeviceArrayBase<SW, Ix1>
    ) -> Result<DeviceArray<f64, D>> {
        fit(x, y, deg, Some(w.view()), None, self.stream).map(|f| f.coeffs)
    }

    /// [`polyfit`] with NumPy's `full=True` diagnostics (residuals, rank, singular values,
    /// `rcond`), optional weights and NumPy's `rcond=` (`None`: `len(x) * f64::EPSILON`).
    fn polyfit_full[T: Element, SX: Storage<Elem = T>, SY: Storage<Elem = T>, D: Dimension](
        &self, x: &DeviceArrayBase<SX, Ix1>, y: &DeviceArrayBase<SY, D>, deg: usize,
        w: Option<DeviceArrayView<'_, T, Ix1>>, rcond: Option<f64>
    ) -> Result<PolyFit<D>> {
        fit(x, y, deg, w, rcond, self.stream)
    }
}

/// `polyfit` on a stream (`gpuarray::on(&stream).polyfit(&x, &y, deg)`).
fn fit<T, SX, SY, D>(
    x: &DeviceArrayBase<SX, Ix1>,
    y: &DeviceArrayBase<SY, D>,
    deg: usize,
    w: Option<DeviceArrayView<'_, T, Ix1>>,
    rcond: Option<f64>,
    stream: Option<&Stream>,
) -> Result<PolyFit<D>>
where
    T: Element,
    SX: Storage<Elem = T>,
    SY: Storage<Elem = T>,
    D: Dimension,
{
    const OP: &str = "polyfit";
    if T::DTYPE.is_complex() {
        return Err(undefined_error(OP, "polyfit", T::c_name()));
    }
    if y.ndim() == 0 || y.ndim() > 2 {
        return Err(dimension_error(y.ndim(), 2));
    }
    let m = x.len();
    if m == 0 {
        return Err(empty_error(OP, "x"));
    }
    check_counts(OP, m, y.shape()[0])?;
    if let Some(w) = &w {
        check_counts(OP, m, w.len())?;
    }
    let too_many = || ArrayShapeError::ElementsOverflow {
        operation: OP,
        shape: vec![m, deg, y.len()],
    };
    let n = deg.checked_add(1).ok_or_else(too_many)?;
    let k = if y.ndim() == 2 { y.shape()[1] } else { 1 };
    let ctx = x.context();
    let cols = n.checked_add(k).ok_or_else(too_many)?;
    let out_len = n
        .checked_mul(cols)
        .and_then(|e| e.checked_add(k + n))
        .filter(|&e| i64::try_from(e).is_ok())
        .ok_or_else(too_many)?;
    let mut a =
        DeviceArray::<f64, Ix1>::empty(ctx, crate::gpuarray::array::layout::checked_size(OP, &[m, cols])?)?;
    let mut out = DeviceArray::<f64, Ix1>::empty(ctx, out_len)?;
    let xc = OnStream::new(x, stream).c_order()?;
    let yc = OnStream::new(y, stream).c_order()?;
    let wc = match &w {
        Some(w) => Some(OnStream::new(w, stream).c_order()?),
        None => None,
    };
    let (xv, yv) = (xc.view(), yc.view());
    let wv = wc.as_ref().map(|w| w.view());
    let f = prepared(ctx, T::DTYPE)?;
    let args = [
        Arg::I64(m as i64),
        Arg::input::<T, _>(&xv),
        Arg::input::<T, _>(&yv),
        Arg::input::<T, _>(wv.as_ref().unwrap_or(&xv)),
        Arg::I32(wv.is_some() as i32),
        Arg::I64(n as i64),
        Arg::I64(k as i64),
        Arg::output(&mut a),
        Arg::output(&mut out),
    ];
    crate::gpuarray::kernels::registry::launch(&f, 1, ONE_BLOCK, stream, &args)?;
    let host = out.to_vec()?;
    let rcond = rcond.unwrap_or(m as f64 * f64::EPSILON);
    let solved = solve(&host, n, k, m, rcond);
    let shape: Vec<usize> = if y.ndim() == 2 { vec![n, k] } else { vec![n] };
    let coeffs = ndarray::Array::from_shape_vec(IxDyn(&shape), solved.coeffs)
        .and_then(|c| c.into_dimensionality::<D>())
        .map_err(|source| ArrayShapeError::Ndarray {
            operation: OP,
            source,
        })?;
    Ok(PolyFit {
        coeffs: DeviceArray::from_ndarray(ctx, &coeffs)?,
        residuals: solved.residuals,
        rank: solved.rank,
        singular_values: solved.singular_values,
        rcond,
    })
}

/// The host's part of a fit.
#[derive(Debug)]
struct Solved {
    /// `n x k`, row-major.
    coeffs: Vec<f64>,
    residuals: Vec<f64>,
    rank: usize,
    singular_values: Vec<f64>,
}

/// Solves `R c = Qᵀy` through the singular values of `R`, as NumPy's `lstsq` solves the
/// scaled matrix: `out` holds `R` beside `Qᵀy` (`n` rows of `n + k`), then the `k` squared
/// residuals, then the `n` column scales.
fn solve(out: &[f64], n: usize, k: usize, m: usize, rcond: f64) -> Solved {
    let cols = n + k;
    let r = |i: usize, j: usize| out[i * cols + j];
    let (u, sigma, v) = jacobi_svd(n, r);
    let largest = sigma.iter().copied().fold(0.0, f64::max);
    let kept: Vec<bool> = sigma.iter().map(|&s| s > rcond * largest).collect();
    let rank = kept.iter().filter(|&&k| k).count();
    let scales = &out[n * cols + k..];
    let mut coeffs = vec![0.0; n * k];
    for col in 0..k {
        for j in (0..n).filter(|&j| kept[j]) {
            // (u_j . b) / sigma_j, u_j the j-th column of U, which holds sigma_j u_j.
            let ub: f64 = (0..n).map(|i| u[i * n + j] * r(i, n + col)).sum::<f64>() / (sigma[j] * sigma[j]);
            for i in 0..n {
                coeffs[i * k + col] += ub * v[i * n + j];
            }
        }
        for i in 0..n {
            if scales[i] > 0.0 {
                coeffs[i * k + col] /= scales[i];
            }
        }
    }
    let residuals = if rank == n && m > n {
        out[n * cols..n * cols + k].to_vec()
    } else {
        Vec::new()
    };
    // NumPy's `lstsq` gives `min(m, n)` of them: with fewer points than coefficients, the
    // others are zeros of the padding.
    let mut singular_values = sigma;
    singular_values.sort_by(|a, b| b.total_cmp(a));
    singular_values.truncate(m.min(n));
    Solved {
        coeffs,
        residuals,
        rank,
        singular_values,
    }
}

/// The one-sided Jacobi SVD of the `n x n` matrix `r(i, j)`: `(U Σ, σ, V)` with `U Σ` and
/// `V` row-major, the columns of `U Σ` orthogonal with norms `σ`.
fn jacobi_svd(n: usize, r: impl Fn(usize, usize) -> f64) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
    let mut u: Vec<f64> = (0..n * n).map(|e| r(e / n, e % n)).collect();
    let mut v: Vec<f64> = (0..n * n)
        .map(|e| if e / n == e % n { 1.0 } else { 0.0 })
        .collect();
    for _sweep in 0..100 {
        let mut rotated = false;
        for p in 0..n {
            for q in p + 1..n {
                let (mut alpha, mut beta, mut gamma) = (0.0, 0.0, 0.0);
                for i in 0..n {
                    let (a, b) = (u[i * n + p], u[i * n + q]);
                    alpha += a * a;
                    beta += b * b;
                    gamma += a * b;
                }
                if gamma == 0.0 || gamma.abs() <= f64::EPSILON * (alpha * beta).sqrt() {
                    continue;
                }
                rotated = true;
                let zeta = (beta - alpha) / (2.0 * gamma);
                let t = zeta.signum() / (zeta.abs() + (1.0 + zeta * zeta).sqrt());
                let c = 1.0 / (1.0 + t * t).sqrt();
                let s = c * t;
                for m in [&mut u, &mut v] {
                    for i in 0..n {
                        let (a, b) = (m[i * n + p], m[i * n + q]);
                        m[i * n + p] = c * a - s * b;
                        m[i * n + q] = s * a + c * b;
                    }
                }
            }
        }
        if !rotated {
            break;
        }
    }
    let sigma = (0..n)
        .map(|j| (0..n).map(|i| u[i * n + j] * u[i * n + j]).sum::<f64>().sqrt())
        .collect();
    (u, sigma, v)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpuarray::kernels::registry;

    #[test]
    fn the_kernel_compiles_for_every_real_element_type() {
        for t in DType::ALL.into_iter().filter(|t| !t.is_complex()) {
            let s = source(t);
            assert_eq!(
                gpu_cuda_source::find_kernel(&s, "gpu_polyfit")
                    .unwrap()
                    .params
                    .len(),
                9
            );
            if let Err(e) = registry::compile_check(&s, "sm_90") {
                panic!("{t:?}: {e}");
            }
        }
    }

    #[test]
    fn the_singular_values_of_a_known_matrix() {
        // [[3, 2, 2], [2, 3, -2]] padded to 3 x 3 by a zero row: singular values 5, 3, 0.
        let m = [[3.0, 2.0, 2.0], [2.0, 3.0, -2.0], [0.0, 0.0, 0.0]];
        let (_, mut s, v) = jacobi_svd(3, |i, j| m[i][j]);
        s.sort_by(|a, b| b.total_cmp(a));
        assert!(
            (s[0] - 5.0).abs() < 1e-12 && (s[1] - 3.0).abs() < 1e-12 && s[2].abs() < 1e-12,
            "{s:?}"
        );
        // V is orthogonal.
        for p in 0..3 {
            for q in 0..3 {
                let d: f64 = (0..3).map(|i| v[i * 3 + p] * v[i * 3 + q]).sum();
                assert!((d - f64::from(p == q)).abs() < 1e-12);
            }
        }
    }

    #[test]
    fn a_triangle_is_solved_and_scaled_back() {
        // R = [[2, 1], [0, 4]], Qᵀy = [4, 8] (so c = [1, 2] scaled), residual 9, scales
        // [2, 0.5]: the coefficients are [0.5, 4].
        let out = [2.0, 1.0, 4.0, 0.0, 4.0, 8.0, 9.0, 2.0, 0.5];
        let s = solve(&out, 2, 1, 5, 1e-15);
        assert_eq!(s.rank, 2);
        assert!(
            (s.coeffs[0] - 0.5).abs() < 1e-12 && (s.coeffs[1] - 4.0).abs() < 1e-12,
            "{s:?}"
        );
        assert_eq!(s.residuals, [9.0]);
        // Rank 1: R = [[1, 1], [0, 0]], b = [2, 0]: the least-norm solution [1, 1].
        let out = [1.0, 1.0, 2.0, 0.0, 0.0, 0.0, 0.0, 1.0, 1.0];
        let s = solve(&out, 2, 1, 5, 1e-10);
        assert_eq!(s.rank, 1);
        assert!(
            (s.coeffs[0] - 1.0).abs() < 1e-12 && (s.coeffs[1] - 1.0).abs() < 1e-12,
            "{s:?}"
        );
        assert!(s.residuals.is_empty());
    }
}
