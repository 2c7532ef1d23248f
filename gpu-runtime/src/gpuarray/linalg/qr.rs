//! NumPy's `linalg.qr` on stacks of matrices of any shape: each matrix factored by one block of
//! a generated kernel with Householder reflections, as LAPACK's unblocked `geqr2` and `org2r`
//! (which NumPy's `geqrf` and `orgqr` come down to for small matrices). Column `c` of `K =
//! min(M, N)` is mapped onto its diagonal by the reflection `H_c = I - tau_c v_c v_cᵀ` of
//! LAPACK's `larfg` (the diagonal becomes `-sign(alpha) * norm`, so NumPy's signs), applied
//! to the columns right of it, and `v_c` kept below the diagonal; `R` is then the upper
//! triangle, and `Q = H_0 H_1 ... H_(K-1)` applied to the first `K` (or `M`) columns of the
//! identity, the last reflection first (each touches only the columns from its own on).
//!
//! The column norm of each step is a block sum; the dot products of a step's reflection with
//! the columns it is applied to are warp sums, one warp a column, so a step is one pass of the
//! whole block. Each matrix is first scaled by a power of two (exact) to largest magnitude in
//! `[0.5, 1)`, as [`eigh`](super::eigen) and [`svd`](super::svd) are, so that no sum of
//! squares overflows or underflows, and `R` scaled back; `Q` does not depend on the scale.
//! NaN and infinity are not refused: they propagate into the matrix's results, as LAPACK's.

use ndarray::{Dimension, Ix1};

use crate::driver::context::core::Context;
use crate::driver::stream::Stream;
use crate::error::Result;
use crate::gpuarray::array::core::{DeviceArray, DeviceArrayBase, DeviceArrayView, Storage};
use crate::gpuarray::array::layout::checked_size;
use crate::gpuarray::array::on_stream::{context_fns, OnStream};
use crate::gpuarray::elements::cast::{convert_c, headers_for};
use crate::gpuarray::elements::dtype::DType;
use crate::gpuarray::elements::element::Element;
use crate::gpuarray::elements::mean_type::MeanType;
use crate::gpuarray::kernels::source_kernels::SourceKernels;
use crate::gpuarray::linalg::eigen::{jacobi_grid, JACOBI_C};
use crate::gpuarray::linalg::stack::{
    marked_lines, shaped, with_work, work_type, workspace, Stack, MATRIX_BLOCK,
};
use crate::launch::Arg;

/// The kernels by input element type and whether `Q` is wanted (every mode but
/// [`QrMode::R`]).
static KERNELS: SourceKernels<(DType, bool)> = SourceKernels::new();

/// What [`qr`] returns, NumPy's `mode`. For `a` of shape `(..., M, N)` and `K = min(M, N)`:
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum QrMode {
    /// `q` of `(..., M, K)` and `r` of `(..., K, N)` (NumPy's default, `mode='reduced'`).
    #[default]
    Reduced,
    /// `q` of `(..., M, M)` and `r` of `(..., M, N)` (`mode='complete'`): `q` a whole
    /// orthogonal matrix, its columns beyond `K` an orthonormal completion, and the rows of `r`
    /// beyond `K` zero.
    Complete,
    /// `r` alone, `(..., K, N)` (`mode='r'`): `Q` is not formed, so less work. NumPy returns
    /// the array itself; here it is a [`Qr`] whose `q` is `None`.
    R,
}

/// The QR factorization of a stack of matrices ([`qr`]), NumPy 2's `QRResult`: `a = q @ r`
/// with `q`'s columns orthonormal and `r` upper triangular.
#[derive(Debug)]
pub struct Qr<T: Element, D: Dimension> {
    /// The orthonormal columns, `(..., M, K)` ([`QrMode::Reduced`]) or `(..., M, M)`
    /// ([`QrMode::Complete`]); `None` for [`QrMode::R`], which does not form it.
    pub q: Option<DeviceArray<T, D>>,
    /// The upper triangular factor (zeros below the diagonal), `(..., K, N)` or with
    /// [`QrMode::Complete`] `(..., M, N)`. Its diagonal may be negative (LAPACK's signs).
    pub r: DeviceArray<T, D>,
}

/// The kernel for element type `t` (results in `out`, its `Mean`), with `Q` or without.
fn source(t: DType, out: DType, with_q: bool) -> String {
    let w = work_type(t);
    // Only the Q lines of the template are kept when Q is wanted.
    let body = marked_lines(QR_C, "@Q ", with_q);
    // The `$WRITE_*` and `$READ` placeholders go before `$W` and `$R`, their prefixes.
    let text = body
        .replace("$QPARAM", if with_q { ", $R *__restrict__ q" } else { "" })
        .replace("$READ", &convert_c(t, DType::F64, "in[e]"))
        .replace("$WRITE_R", &convert_c(DType::F64, out, "x"))
        .replace("$WRITE_Q", &convert_c(w, out, "Q[j * rows + i]"))
        .replace("$BLOCK", &MATRIX_BLOCK.to_string())
        .replace("$T", t.c_name())
        .replace("$W", w.c_name())
        .replace("$R", out.c_name());
    format!("{}{JACOBI_C}{text}", headers_for([t, w, out]))
}

/// The kernel: one block a matrix (looping over the matrices beyond the grid). Lines marked
/// `@Q` are only in the kernel that forms `Q`. `$W` is the work type; the workspace of a block
/// is `A` (the matrix by columns: element `(i, c)` at `c * rows + i`, so a column is
/// contiguous), `tau` (`k`) and with `Q` the `rows x qcols` of `Q`, also by columns. Each
/// step's arithmetic is in `double`, rounded to the work type where it is stored.
const QR_C: &str = r#"
extern "C" __global__ void gpu_qr(long long count, long long rows, long long cols, long long rrows,
    long long qcols, const $T *__restrict__ a, $W *work, long long stride, $R *__restrict__ r$QPARAM) {
    __shared__ double red[$BLOCK];
    const long long k = rows < cols ? rows : cols, mat = rows * cols;
    const long long lane = threadIdx.x % 32, warp = threadIdx.x / 32, warps = blockDim.x / 32;
    $W *const A = work + (long long)blockIdx.x * stride;
    $W *const tau = A + mat;
@Q  $W *const Q = tau + k;
    for (long long b = blockIdx.x; b < count; b += gridDim.x) {
        const $T *const in = a + b * mat;
        double amax = 0.0;
        for (long long e = threadIdx.x; e < mat; e += blockDim.x) {
            const long long i = e / cols, c = e % cols;
            const double x = $READ;
            amax = fmax(amax, fabs(x));
            A[c * rows + i] = ($W)x;
        }
        // Also the barrier after which every thread sees the whole matrix.
        amax = gpu_block_max(amax, red);
        // Scaled by 2^-ex (exact) to largest magnitude in [0.5, 1): no square overflows. An
        // infinite one is left unscaled (frexp's exponent of it is unspecified), to propagate
        // as NaN does (which fmax passes over).
        int ex = 0;
        if (amax > 0.0 && amax <= 1.7976931348623157e308) frexp(amax, &ex);
        for (long long e = threadIdx.x; e < mat; e += blockDim.x) A[e] = ($W)ldexp((double)A[e], -ex);
        __syncthreads();
        for (long long c = 0; c < k; ++c) {
            $W *const ac = A + c * rows;
            // LAPACK's larfg: the reflection that maps column c from the diagonal down onto
            // (beta, 0, ..., 0), beta = -sign(alpha) |x| (the sign that adds, no cancellation),
            // with v = (1, x[c+1..] / (alpha - beta)) and tau = (beta - alpha) / beta. Nothing
            // below the diagonal (s == 0; a NaN s is not) is the identity, tau = 0.
            const double alpha = ac[c];
            double s = 0.0;
            for (long long i = c + 1 + threadIdx.x; i < rows; i += blockDim.x) s += (double)ac[i] * ac[i];
            // Also the barrier after which alpha is read by every thread and can be replaced.
            s = gpu_block_sum(s, red);
            double t = 0.0;
            if (s != 0.0) {
                const double norm = sqrt(alpha * alpha + s);
                const double beta = alpha >= 0.0 ? -norm : norm;
                t = (beta - alpha) / beta;
                // |alpha - beta| = |alpha| + norm > 0.
                const double scale = 1.0 / (alpha - beta);
                for (long long i = c + 1 + threadIdx.x; i < rows; i += blockDim.x)
                    ac[i] = ($W)((double)ac[i] * scale);
                if (threadIdx.x == 0) ac[c] = ($W)beta;
                __syncthreads();
                // H applied to the columns right of c, one warp a column: a_j -= tau (v . a_j) v.
                for (long long j = c + 1 + warp; j < cols; j += warps) {
                    $W *const aj = A + j * rows;
                    double d = 0.0;
                    for (long long i = c + lane; i < rows; i += 32)
                        d += (i == c ? 1.0 : (double)ac[i]) * aj[i];
                    d = gpu_warp_sum(d) * t;
                    for (long long i = c + lane; i < rows; i += 32)
                        aj[i] = ($W)((double)aj[i] - d * (i == c ? 1.0 : (double)ac[i]));
                }
                __syncthreads();
            }
            if (threadIdx.x == 0) tau[c] = ($W)t;
        }
        __syncthreads();
        // R: the upper triangle of the first rrows rows, scaled back; zeros below.
        for (long long e = threadIdx.x; e < rrows * cols; e += blockDim.x) {
            const long long i = e / cols, j = e % cols;
            const double x = i <= j ? ldexp((double)A[j * rows + i], ex) : 0.0;
            r[b * rrows * cols + e] = $WRITE_R;
        }
@Q      // LAPACK's org2r: Q = H_0 ... H_(k-1) I[:, :qcols], the last reflection applied first.
@Q      // Columns j < c are still e_j when H_c comes (every H applied so far starts below row
@Q      // j), which H_c leaves alone, so it is applied to the columns from c on.
@Q      for (long long e = threadIdx.x; e < rows * qcols; e += blockDim.x)
@Q          Q[e] = e / rows == e % rows ? ($W)1 : ($W)0;
@Q      __syncthreads();
@Q      for (long long c = k - 1; c >= 0; --c) {
@Q          const double t = tau[c];
@Q          if (t == 0.0) continue;
@Q          const $W *const v = A + c * rows;
@Q          for (long long j = c + warp; j < qcols; j += warps) {
@Q              $W *const qj = Q + j * rows;
@Q              double d = 0.0;
@Q              for (long long i = c + lane; i < rows; i += 32) d += (i == c ? 1.0 : (double)v[i]) * qj[i];
@Q              d = gpu_warp_sum(d) * t;
@Q              for (long long i = c + lane; i < rows; i += 32)
@Q                  qj[i] = ($W)((double)qj[i] - d * (i == c ? 1.0 : (double)v[i]));
@Q          }
@Q          __syncthreads();
@Q      }
@Q      for (long long e = threadIdx.x; e < rows * qcols; e += blockDim.x) {
@Q          const long long i = e / qcols, j = e % qcols;
@Q          q[b * rows * qcols + e] = $WRITE_Q;
@Q      }
        // The next matrix overwrites A and Q, which this one's last writes read.
        __syncthreads();
    }
}
"#;

/// The shapes of one matrix's `q` (`None` without it) and `r` for an `m x n` matrix in
/// `mode`: NumPy's.
fn factor_shapes(m: usize, n: usize, mode: QrMode) -> (Option<[usize; 2]>, [usize; 2]) {
    let k = m.min(n);
    match mode {
        QrMode::Reduced => (Some([m, k]), [k, n]),
        QrMode::Complete => (Some([m, m]), [m, n]),
        QrMode::R => (None, [k, n]),
    }
}

/// The workspace elements of one block for an `m x n` matrix: `A` (`m x n`), `tau` (`K`)
/// and, with `Q`, `m x qcols`.
fn stride(operation: &'static str, m: usize, n: usize, qcols: Option<usize>) -> Result<usize> {
    let a = checked_size(operation, &[m, n])?;
    let q = match qcols {
        Some(c) => checked_size(operation, &[m, c])?,
        None => 0,
    };
    workspace(
        operation,
        [m, n],
        a.checked_add(m.min(n)).and_then(|x| x.checked_add(q)),
    )
}

/// What one factorization gives, each matrix's in C order one after another: `q` (`None`
/// for [`QrMode::R`]) and `r`.
struct Factored<M: Element> {
    q: Option<DeviceArray<M, Ix1>>,
    r: DeviceArray<M, Ix1>,
}

/// `q` and `r` of the matrices of `stack` in `a` (C order) in `mode`, queued on `stream`.
fn factor<T: MeanType>(
    operation: &'static str,
    ctx: &Context,
    a: &DeviceArrayView<'_, T>,
    stack: &Stack,
    mode: QrMode,
    stream: Option<&Stream>,
) -> Result<Factored<T::Mean>> {
    let (count, rows, cols) = (stack.count, stack.rows, stack.cols);
    let (q_shape, r_shape) = factor_shapes(rows, cols, mode);
    let r_len = checked_size(operation, &[count, r_shape[0], r_shape[1]])?;
    let q_len = match q_shape {
        Some([m, c]) => Some(checked_size(operation, &[count, m, c])?),
        None => None,
    };
    let mut r = DeviceArray::<T::Mean, Ix1>::empty(ctx, r_len)?;
    let mut q = match q_len {
        Some(len) => Some(DeviceArray::<T::Mean, Ix1>::empty(ctx, len)?),
        None => None,
    };
    // Nothing to write: no matrices, or K = 0 without a complete Q (that of an M x 0 matrix
    // is the identity, which the kernel writes with no reflection to apply).
    if r_len == 0 && q_len.unwrap_or(0) == 0 {
        return Ok(Factored { q, r });
    }
    let qcols = q_shape.map(|[_, c]| c);
    let stride = stride(operation, rows, cols, qcols)?;
    let grid = jacobi_grid(count, stride);
    let work_len = checked_size(operation, &[grid, stride])?;
    let (t, out, with_q) = (T::DTYPE, <T::Mean as Element>::DTYPE, q.is_some());
    let f = KERNELS.prepared(ctx, (t, with_q), "gpu_qr", || source(t, out, with_q))?;
    with_work(ctx, T::DTYPE, work_len, |work| {
        let mut args = vec![
            Arg::I64(count as i64),
            Arg::I64(rows as i64),
            Arg::I64(cols as i64),
            Arg::I64(r_shape[0] as i64),
            Arg::I64(qcols.unwrap_or(0) as i64),
            Arg::input::<T, _>(a),
            work,
            Arg::I64(stride as i64),
            Arg::output(&mut r),
        ];
        if let Some(q) = q.as_mut() {
            args.push(Arg::output(q));
        }
        crate::gpuarray::kernels::registry::launch(&f, grid as u32, MATRIX_BLOCK, stream, &args)
    })?;
    Ok(Factored { q, r })
}

context_fns! {
    /// The QR factorization of each matrix of `a` (its last two axes; NumPy's and CuPy's
    /// `linalg.qr(a, mode)`): for `a` of shape `(..., M, N)` and `K = min(M, N)`, a [`Qr`] of
    /// `q` with orthonormal columns and `r` upper triangular (zeros below the diagonal) such
    /// that `a = q @ r`. [`QrMode`] gives NumPy's shapes: [`QrMode::Reduced`] (NumPy's default)
    /// `q` `(..., M, K)` and `r` `(..., K, N)`; [`QrMode::Complete`] `q` `(..., M, M)` and `r`
    /// `(..., M, N)`; [`QrMode::R`] only `r`, `(..., K, N)` (`q` is `None`). NumPy's `'raw'`
    /// mode (LAPACK's reflections and `tau`) is not offered.
    ///
    /// Results in [`MeanType`]'s type: `f64` for `f64`, the integers and `bool` (NumPy's);
    /// `f32` for `f32`; `f16` and `bf16` computed in `f32` and rounded (NumPy refuses them).
    /// Complex matrices are not taken. Computed by Householder reflections, each matrix by one
    /// block, with LAPACK's choice of each reflection: the diagonal of `r` may be negative,
    /// and for a matrix of full rank it has NumPy's signs up to rounding (where a column's
    /// diagonal element is within rounding of zero, its sign may differ); the factors of a
    /// rank-deficient matrix are some valid ones, as LAPACK's. Empty stacks, and matrices with
    /// `M` or `N` zero, give empty results of NumPy's shapes (the complete `q` of an `M x 0`
    /// matrix the identity). NaN and infinity are not refused (nor flagged): they propagate
    /// into the factors of their own matrix, as LAPACK's, and into no other matrix's.
    ///
    /// Errors: [`LinAlgError::TooFewAxes`](crate::LinAlgError::TooFewAxes) (fewer than 2
    /// axes). Nothing is read back: the call returns once the kernel is queued.
    ///
    /// ```no_run
    /// use gpu_runtime::gpuarray::{self, DeviceArray, QrMode};
    /// use gpu_runtime::ndarray::arr2;
    /// let ctx = gpu_runtime::Context::default()?;
    /// let a = DeviceArray::from_ndarray(&ctx, &arr2(&[[1.0f64, 2.0], [3.0, 4.0]]))?;
    /// let f = gpuarray::qr(&a, QrMode::Reduced)?;
    /// // NumPy's: r = [[-3.1623, -4.4272], [0, -0.6325]], q = [[-0.3162, -0.9487], [-0.9487, 0.3162]].
    /// let r = f.r.to_vec()?;
    /// assert!((r[0] + 10f64.sqrt()).abs() < 1e-12 && r[2] == 0.0);
    /// let q = f.q.expect("the reduced mode forms q").to_vec()?;
    /// assert!((q[0] + 0.1f64.sqrt()).abs() < 1e-12);
    /// // Only r, (K, N):
    /// assert_eq!(gpuarray::qr(&a, QrMode::R)?.r.shape(), &[2, 2]);
    /// # Ok::<(), gpu_runtime::Error>(())
    /// ```
    fn qr[T: MeanType, S: Storage<Elem = T>, D: Dimension](
        &self, a: &DeviceArrayBase<S, D>, mode: QrMode
    ) -> Result<Qr<T::Mean, D>> {
        const OP: &str = "qr";
        let stack = Stack::of(OP, a.shape())?;
        let ac = OnStream::new(a, self.stream).c_order()?;
        let f = factor::<T>(OP, a.context(), &ac.view(), &stack, mode, self.stream)?;
        let (q_shape, r_shape) = factor_shapes(stack.rows, stack.cols, mode);
        let q = match (f.q, q_shape) {
            (Some(q), Some(shape)) => Some(shaped(q, &stack.shape_with(&shape))?),
            _ => None,
        };
        Ok(Qr {
            q,
            r: shaped(f.r, &stack.shape_with(&r_shape))?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpuarray::kernels::registry;
    use crate::gpuarray::linalg::stack::mean_dtype;

    #[test]
    fn the_kernels_compile_for_every_real_element_type() {
        for t in DType::ALL.into_iter().filter(|t| !t.is_complex()) {
            for with_q in [true, false] {
                let s = source(t, mean_dtype(t), with_q);
                assert!(
                    !s.contains('$') && !s.contains("@Q"),
                    "{t:?}: a placeholder is left"
                );
                let params = gpu_cuda_source::find_kernel(&s, "gpu_qr").unwrap().params.len();
                assert_eq!(params, if with_q { 10 } else { 9 }, "{t:?}");
                if let Err(e) = registry::compile_check(&s, "sm_90") {
                    panic!("{t:?} with q {with_q}: {e}");
                }
            }
        }
    }

    #[test]
    fn the_r_kernel_forms_no_q() {
        let without = source(DType::F32, DType::F32, false);
        assert!(!without.contains("Q[") && !without.contains("q[") && !without.contains("org2r"));
        let with = source(DType::I32, DType::F64, true);
        assert!(
            with.contains("double *__restrict__ q") && with.contains("const int *__restrict__ a"),
            "{with}"
        );
        // f16 is factored in float and written back rounded once.
        let half = source(DType::F16, DType::F16, true);
        assert!(
            half.contains("float *work") && half.contains("__half *__restrict__ r"),
            "{half}"
        );
    }

    #[test]
    fn the_shapes_are_numpys() {
        // (M, N), mode -> q, r.
        assert_eq!(factor_shapes(5, 3, QrMode::Reduced), (Some([5, 3]), [3, 3]));
        assert_eq!(factor_shapes(5, 3, QrMode::Complete), (Some([5, 5]), [5, 3]));
        assert_eq!(factor_shapes(5, 3, QrMode::R), (None, [3, 3]));
        assert_eq!(factor_shapes(3, 5, QrMode::Reduced), (Some([3, 3]), [3, 5]));
        assert_eq!(factor_shapes(3, 5, QrMode::Complete), (Some([3, 3]), [3, 5]));
        assert_eq!(factor_shapes(3, 5, QrMode::R), (None, [3, 5]));
        assert_eq!(factor_shapes(4, 4, QrMode::Reduced), (Some([4, 4]), [4, 4]));
        assert_eq!(factor_shapes(1, 1, QrMode::Complete), (Some([1, 1]), [1, 1]));
        // Empty matrices: only a complete q of M x 0 holds anything (the identity).
        assert_eq!(factor_shapes(0, 3, QrMode::Reduced), (Some([0, 0]), [0, 3]));
        assert_eq!(factor_shapes(0, 3, QrMode::Complete), (Some([0, 0]), [0, 3]));
        assert_eq!(factor_shapes(4, 0, QrMode::Reduced), (Some([4, 0]), [0, 0]));
        assert_eq!(factor_shapes(4, 0, QrMode::Complete), (Some([4, 4]), [4, 0]));
        assert_eq!(factor_shapes(4, 0, QrMode::R), (None, [0, 0]));
    }

    #[test]
    fn the_mode_defaults_to_numpys_reduced() {
        assert_eq!(QrMode::default(), QrMode::Reduced);
    }

    #[test]
    fn the_workspace_holds_the_matrix_tau_and_q() {
        // 5 x 3: A 15, tau 3, Q 5 x 3 (reduced) or 5 x 5 (complete), none for r.
        assert_eq!(stride("qr", 5, 3, Some(3)).unwrap(), 15 + 3 + 15);
        assert_eq!(stride("qr", 5, 3, Some(5)).unwrap(), 15 + 3 + 25);
        assert_eq!(stride("qr", 3, 5, None).unwrap(), 15 + 3);
        assert_eq!(stride("qr", 4, 0, Some(4)).unwrap(), 16);
        assert!(stride("qr", usize::MAX / 2, 3, Some(3)).is_err());
        assert!(stride("qr", 1 << 32, 1 << 31, None).is_err());
        // A and Q each fit, their sum does not.
        assert!(stride("qr", 1 << 31, 1 << 31, Some(1 << 31)).is_err());
    }

    #[test]
    fn a_vector_is_too_few_axes() {
        assert!(matches!(
            Stack::of("qr", &[4]),
            Err(crate::error::Error::LinAlg(
                crate::error::LinAlgError::TooFewAxes {
                    operation: "qr",
                    axes: 1
                }
            ))
        ));
    }
}
