//! NumPy's `linalg.svd` and `svdvals` on stacks of matrices of any shape: each matrix
//! decomposed by one block of a generated kernel with one-sided (Hestenes) Jacobi rotations
//! on the columns of `A` (`M >= N`) or of `Aᵀ` (`M < N`, the roles of `U` and `V` swapped):
//! pairs of columns are rotated until every two are orthogonal to within the work type's
//! epsilon (times the square root of their length, the rounding of their dot product), `V`
//! accumulated from the same rotations; the singular values are then the columns' norms, in
//! descending order, and the normalized columns `U`'s. The `n / 2` disjoint pairs of a round
//! of the circle method ([`eigen`](super::eigen)'s) are rotated at once, one warp a pair.
//!
//! The columns of `U` that the rotated columns do not give (those of zero singular values,
//! and the `M - K` more of a full `U`) are completed to an orthonormal basis: standard basis
//! vectors in turn, each made orthogonal to the columns so far by Gram-Schmidt, twice for
//! stability, and taken when enough of it is left. As [`eigh`](super::eigen), each matrix is
//! first scaled by a power of two, and NaN and infinity refused.

use ndarray::{Dimension, Ix1};

use crate::driver::context::core::Context;
use crate::driver::stream::Stream;
use crate::error::{LinAlgError, Result};
use crate::gpuarray::array::core::{DeviceArray, DeviceArrayBase, DeviceArrayView, Storage};
use crate::gpuarray::array::layout::checked_size;
use crate::gpuarray::array::on_stream::{context_fns, OnStream};
use crate::gpuarray::elements::cast::{convert_c, headers_for};
use crate::gpuarray::elements::dtype::DType;
use crate::gpuarray::elements::element::Element;
use crate::gpuarray::elements::mean_type::MeanType;
use crate::gpuarray::kernels::source_kernels::SourceKernels;
use crate::gpuarray::linalg::eigen::{jacobi_grid, JACOBI_C, MAX_SWEEPS};
use crate::gpuarray::linalg::stack::{
    failure_flag, first_failed, marked_lines, shaped, with_work, work_epsilon, work_type, workspace, Stack,
    FAILED_C, MATRIX_BLOCK,
};
use crate::launch::Arg;

/// The kernels by input element type and whether `U` and `V` are wanted (`svd`) or only the
/// singular values (`svdvals`).
static KERNELS: SourceKernels<(DType, bool)> = SourceKernels::new();

/// The singular value decomposition of a stack of matrices ([`svd`]), NumPy 2's `SVDResult`:
/// for `a` of shape `(..., M, N)` and `K = min(M, N)`, `a = u[..., :, :K] @ diag(s) @
/// vh[..., :K, :]`.
#[derive(Debug)]
pub struct Svd<T: Element, D: Dimension> {
    /// The left singular vectors as orthonormal columns: `(..., M, M)` with `full_matrices`,
    /// else `(..., M, K)`.
    pub u: DeviceArray<T, D>,
    /// The singular values of each matrix, `(..., K)`, non-negative and descending.
    pub s: DeviceArray<T, D::Smaller>,
    /// The right singular vectors as orthonormal rows (`Vᵀ`): `(..., N, N)` with
    /// `full_matrices`, else `(..., K, N)`.
    pub vh: DeviceArray<T, D>,
}

/// The kernel for element type `t` (results in `out`, its `Mean`), with `U` and `V` or
/// without.
fn source(t: DType, out: DType, vectors: bool) -> String {
    let w = work_type(t);
    // Only the vectors' lines of the template are kept for `svd`.
    let body = marked_lines(SVD_C, "@V ", vectors);
    let text = body
        .replace(
            "$UVPARAMS",
            if vectors {
                ", $R *__restrict__ u, $R *__restrict__ vh"
            } else {
                ""
            },
        )
        .replace("$READ", &convert_c(t, DType::F64, "in[e]"))
        .replace("$WRITE_S", &convert_c(DType::F64, out, "ldexp((double)sj, ex)"))
        .replace("$WRITE_G", &convert_c(w, out, "G[e]"))
        .replace("$WRITE_V", &convert_c(w, out, "V[e]"))
        .replace("$EPS", work_epsilon(w))
        .replace("$MAX_SWEEPS", &MAX_SWEEPS.to_string())
        .replace("$BLOCK", &MATRIX_BLOCK.to_string())
        .replace("$T", t.c_name())
        .replace("$W", w.c_name())
        .replace("$R", out.c_name());
    format!("{}{FAILED_C}{JACOBI_C}{text}", headers_for([t, w, out]))
}

/// The kernel: one block a matrix (looping over the matrices beyond the grid), one warp a pair
/// of columns. Lines marked `@V` are only in `svd`'s kernel. `$W` is the work type; the
/// workspace of a block is `G`, the `k` columns being rotated (each of `len` elements,
/// contiguous) and with `full` the `len - k` more of `U` completed, then `sig` (the columns'
/// norms), `rank` (where each goes), `ok` (which columns are unit vectors) and `d` (a
/// Gram-Schmidt step's coefficients), `gcols` each, and with the vectors `V` (`k x k`, by
/// columns).
const SVD_C: &str = r#"
extern "C" __global__ void gpu_svd(long long count, long long rows, long long cols, int full,
    const $T *__restrict__ a, $W *work, long long stride, $R *__restrict__ s$UVPARAMS,
    unsigned long long *flag) {
    __shared__ double red[$BLOCK];
    // The columns of A (rows >= cols) or of A^T (rows < cols): k of len elements each.
    const bool tr = rows < cols;
    const long long len = tr ? cols : rows, k = tr ? rows : cols, mat = rows * cols;
    const long long gcols = full ? len : k, m = k + (k & 1), half = m / 2;
    const long long lane = threadIdx.x % 32, warp = threadIdx.x / 32, warps = blockDim.x / 32;
    // Two columns are orthogonal enough when their computed dot product is within what its
    // rounding can leave: eps * sqrt(len) of the product of their norms (LAPACK's gesvj).
    const double tol = 2.0 * $EPS * sqrt((double)len);
    $W *const G = work + (long long)blockIdx.x * stride;
    $W *const sig = G + len * gcols;
    $W *const rank = sig + gcols;
    $W *const ok = rank + gcols;
    $W *const d = ok + gcols;
@V  $W *const V = d + gcols;
    for (long long b = blockIdx.x; b < count; b += gridDim.x) {
        const $T *const in = a + b * mat;
        double amax = 0.0;
        int bad = 0;
        for (long long e = threadIdx.x; e < mat; e += blockDim.x) {
            const long long r = e / cols, c = e % cols;
            const double x = $READ;
            bad |= !gpu_finite(x);
            amax = fmax(amax, fabs(x));
            G[tr ? r * len + c : c * len + r] = ($W)x;
        }
        bad = __syncthreads_or(bad);
        amax = gpu_block_max(amax, red);
        if (bad) {
            // NaN or infinity: no rotation could converge.
            if (threadIdx.x == 0) gpu_failed(flag, count, b);
            continue;
        }
        // Scaled by 2^-ex (exact) to largest magnitude in [0.5, 1): no square overflows.
        int ex = 0;
        if (amax > 0.0) frexp(amax, &ex);
        for (long long e = threadIdx.x; e < len * k; e += blockDim.x) G[e] = ($W)ldexp((double)G[e], -ex);
@V      for (long long e = threadIdx.x; e < k * k; e += blockDim.x) V[e] = e / k == e % k ? ($W)1 : ($W)0;
        __syncthreads();
        bool done = k < 2;
        int sweeps = 0;
        while (!done && sweeps < $MAX_SWEEPS) {
            ++sweeps;
            int rotated = 0;
            for (long long r = 0; r + 1 < m; ++r) {
                // Each warp a pair: the pairs of a round share no column, so no warp waits for
                // another until the round ends. Every decision is on warp sums, the same in
                // every lane, so the lanes stay together for the shuffles.
                for (long long i = warp; i < half; i += warps) {
                    long long p, q;
                    gpu_jacobi_pair(r, i, m, &p, &q);
                    if (q >= k) continue;
                    $W *const gp = G + p * len;
                    $W *const gq = G + q * len;
                    double al = 0.0, be = 0.0, ga = 0.0;
                    for (long long x = lane; x < len; x += 32) {
                        const double y = gp[x], z = gq[x];
                        al += y * y;
                        be += z * z;
                        ga += y * z;
                    }
                    al = gpu_warp_sum(al);
                    be = gpu_warp_sum(be);
                    ga = gpu_warp_sum(ga);
                    const double scale = sqrt(al) * sqrt(be);
                    if (!(fabs(ga) > tol * scale)) continue;
                    // A column below the rounding of the other (squared norms eps^2 apart) is
                    // zero to the work type: a column of a rank-deficient matrix left parallel
                    // to another only shrinks under rotations, never turning orthogonal.
                    if (fmin(al, be) <= $EPS * $EPS * fmax(al, be)) continue;
                    // A rotation at the level of the rounding (a column of a rank-deficient
                    // matrix that is only rounding noise never gets below `tol` against the
                    // others: each rotation makes new noise) is made but is no reason for
                    // another sweep (LAPACK's gesvj stops on the largest cosine the same way).
                    if (fabs(ga) > 8.0 * tol * scale) rotated = 1;
                    // The rotation that diagonalizes [[al, ga], [ga, be]] = [gp gq]^T [gp gq].
                    double c, sn;
                    gpu_jacobi_rotation(al, be, ga, &c, &sn);
                    for (long long x = lane; x < len; x += 32) {
                        const double y = gp[x], z = gq[x];
                        gp[x] = ($W)(c * y - sn * z);
                        gq[x] = ($W)(sn * y + c * z);
                    }
@V                  $W *const vp = V + p * k;
@V                  $W *const vq = V + q * k;
@V                  for (long long x = lane; x < k; x += 32) {
@V                      const double y = vp[x], z = vq[x];
@V                      vp[x] = ($W)(c * y - sn * z);
@V                      vq[x] = ($W)(sn * y + c * z);
@V                  }
                }
                __syncthreads();
            }
            // Converged when a whole sweep found every pair orthogonal to within the rounding.
            done = !__syncthreads_or(rotated);
        }
        if (!done) {
            if (threadIdx.x == 0) gpu_failed(flag, count, b);
            continue;
        }
        // The singular values: the columns' norms.
        for (long long j = warp; j < k; j += warps) {
            $W *const g = G + j * len;
            double al = 0.0;
            for (long long x = lane; x < len; x += 32) al += (double)g[x] * g[x];
            al = gpu_warp_sum(al);
            if (lane == 0) sig[j] = ($W)sqrt(al);
        }
@V      __syncthreads();
@V      // A column at or below the rounding of the largest (a zero singular value of a
@V      // rank-deficient matrix, left as noise or as a shrunken copy of another column), or
@V      // whose squared norm is not a normal double, is not normalized (it would not be
@V      // orthogonal to the others) but replaced below, as those of zero singular values are.
@V      double top = 0.0;
@V      for (long long i = 0; i < k; ++i) top = fmax(top, (double)sig[i]);
@V      for (long long j = warp; j < k; j += warps) {
@V          $W *const g = G + j * len;
@V          const double norm = sig[j];
@V          const bool usable = norm * norm > 1e-290 && norm > $EPS * top;
@V          for (long long x = lane; x < len; x += 32) g[x] = usable ? ($W)(g[x] / norm) : ($W)0;
@V          if (lane == 0) ok[j] = usable ? ($W)1 : ($W)0;
@V      }
@V      for (long long j = k + threadIdx.x; j < gcols; j += blockDim.x) ok[j] = ($W)0;
        __syncthreads();
        // Descending: each value's rank among them (ties by index), which is where it and its
        // vectors go. The ranks are exact in the work type (k < 2^24).
        for (long long j = threadIdx.x; j < k; j += blockDim.x) {
            const $W sj = sig[j];
            long long rk = 0;
            for (long long i = 0; i < k; ++i) {
                const $W si = sig[i];
                rk += si > sj || (si == sj && i < j);
            }
            rank[j] = ($W)rk;
            s[b * k + rk] = $WRITE_S;
        }
        __syncthreads();
@V      // The columns of U not given: standard basis vectors e_c, c = 0, 1, ..., each made
@V      // orthogonal to the unit columns so far (twice: classical Gram-Schmidt loses
@V      // orthogonality once), taken when its squared norm left is over 1 / (4 len). One always
@V      // is: the squared norms left of all len sum to len minus the columns so far (at least
@V      // 1), those passed over had at most 1 / (4 len) each and only lose more as columns come,
@V      // so those not yet tried hold at least 3/4 among at most len.
@V      long long cand = 0;
@V      for (long long j = 0; j < gcols; ++j) {
@V          if (ok[j] != ($W)0) continue;
@V          $W *const x = G + j * len;
@V          while (cand < len) {
@V              const long long e = cand++;
@V              // x = e_e - sum_c (q_c . e_e) q_c, q_c . e_e being q_c's element e.
@V              for (long long i = threadIdx.x; i < len; i += blockDim.x) {
@V                  double acc = i == e ? 1.0 : 0.0;
@V                  for (long long c = 0; c < gcols; ++c) {
@V                      if (ok[c] != ($W)0) acc -= (double)G[c * len + e] * G[c * len + i];
@V                  }
@V                  x[i] = ($W)acc;
@V              }
@V              __syncthreads();
@V              // Again: d_c = q_c . x, x -= sum_c d_c q_c.
@V              for (long long c = threadIdx.x; c < gcols; c += blockDim.x) {
@V                  double acc = 0.0;
@V                  if (ok[c] != ($W)0) {
@V                      for (long long i = 0; i < len; ++i) acc += (double)G[c * len + i] * x[i];
@V                  }
@V                  d[c] = ($W)acc;
@V              }
@V              __syncthreads();
@V              double left = 0.0;
@V              for (long long i = threadIdx.x; i < len; i += blockDim.x) {
@V                  double acc = x[i];
@V                  for (long long c = 0; c < gcols; ++c) {
@V                      if (ok[c] != ($W)0) acc -= (double)d[c] * G[c * len + i];
@V                  }
@V                  x[i] = ($W)acc;
@V                  left += acc * acc;
@V              }
@V              left = gpu_block_sum(left, red);
@V              if (left > 0.25 / (double)len) {
@V                  const double inv = 1.0 / sqrt(left);
@V                  for (long long i = threadIdx.x; i < len; i += blockDim.x) x[i] = ($W)((double)x[i] * inv);
@V                  if (threadIdx.x == 0) ok[j] = ($W)1;
@V                  __syncthreads();
@V                  break;
@V              }
@V          }
@V      }
@V      // The columns of G (in rank order, the completed ones after) are U's columns, or with
@V      // A^T Vh's rows; V's columns are Vh's rows, or with A^T U's columns.
@V      for (long long e = threadIdx.x; e < len * gcols; e += blockDim.x) {
@V          const long long j = e / len, i = e % len;
@V          const long long c = j < k ? (long long)rank[j] : j;
@V          if (tr) vh[b * len * gcols + c * len + i] = $WRITE_G;
@V          else u[b * len * gcols + i * gcols + c] = $WRITE_G;
@V      }
@V      for (long long e = threadIdx.x; e < k * k; e += blockDim.x) {
@V          const long long j = e / k, i = e % k;
@V          const long long c = (long long)rank[j];
@V          if (tr) u[b * k * k + i * k + c] = $WRITE_V;
@V          else vh[b * k * k + c * k + i] = $WRITE_V;
@V      }
        __syncthreads();
    }
}
"#;

/// The shapes of one matrix's `u` and `vh` for an `m x n` matrix: NumPy's.
fn vector_shapes(m: usize, n: usize, full: bool) -> ([usize; 2], [usize; 2]) {
    let k = m.min(n);
    if full {
        ([m, m], [n, n])
    } else {
        ([m, k], [k, n])
    }
}

/// The workspace elements of one block: `G` (`len x gcols`), four arrays of `gcols`, and with
/// the vectors `V` (`k x k`), for a matrix of `rows x cols`.
fn stride(operation: &'static str, rows: usize, cols: usize, full: bool, vectors: bool) -> Result<usize> {
    let (len, k) = (rows.max(cols), rows.min(cols));
    let gcols = if full && vectors { len } else { k };
    let g = checked_size(operation, &[len, gcols])?;
    let v = if vectors {
        checked_size(operation, &[k, k])?
    } else {
        0
    };
    let total = gcols
        .checked_mul(4)
        .and_then(|x| x.checked_add(g))
        .and_then(|x| x.checked_add(v));
    workspace(operation, [rows, cols], total)
}

/// What one decomposition gives: the singular values (`count * K`), and with the vectors `u`
/// and `vh` (each matrix's in C order, one after another).
struct Decomposed<M: Element> {
    s: DeviceArray<M, Ix1>,
    u: DeviceArray<M, Ix1>,
    vh: DeviceArray<M, Ix1>,
}

/// The singular values and, when `vectors`, `u` and `vh` (`full` or reduced) of the matrices
/// of `stack` in `a` (C order). Waits for the kernel to read its flag: a matrix that did not
/// converge is [`LinAlgError::NoConvergence`].
#[allow(clippy::too_many_arguments)]
fn decompose<T: MeanType>(
    operation: &'static str,
    ctx: &Context,
    a: &DeviceArrayView<'_, T>,
    stack: &Stack,
    full: bool,
    vectors: bool,
    stream: Option<&Stream>,
) -> Result<Decomposed<T::Mean>> {
    let (count, rows, cols) = (stack.count, stack.rows, stack.cols);
    let (len, k) = (rows.max(cols), rows.min(cols));
    let (u_shape, vh_shape) = vector_shapes(rows, cols, full);
    let (u_len, vh_len) = if vectors {
        (
            checked_size(operation, &[count, u_shape[0], u_shape[1]])?,
            checked_size(operation, &[count, vh_shape[0], vh_shape[1]])?,
        )
    } else {
        (0, 0)
    };
    let mut s = DeviceArray::<T::Mean, Ix1>::empty(ctx, checked_size(operation, &[count, k])?)?;
    let mut u = DeviceArray::<T::Mean, Ix1>::empty(ctx, u_len)?;
    let mut vh = DeviceArray::<T::Mean, Ix1>::empty(ctx, vh_len)?;
    // Nothing to write: no matrices, or K = 0 without a full U or Vh (a full one of an empty
    // matrix is the identity, which the kernel's completion writes).
    if count == 0 || len == 0 || (k == 0 && !(vectors && full)) {
        return Ok(Decomposed { s, u, vh });
    }
    let stride = stride(operation, rows, cols, full, vectors)?;
    let grid = jacobi_grid(count, stride);
    let work_len = checked_size(operation, &[grid, stride])?;
    let mut flag = failure_flag(ctx)?;
    let (t, out) = (T::DTYPE, <T::Mean as Element>::DTYPE);
    let f = KERNELS.prepared(ctx, (t, vectors), "gpu_svd", || source(t, out, vectors))?;
    with_work(ctx, T::DTYPE, work_len, |work| {
        let mut args = vec![
            Arg::I64(count as i64),
            Arg::I64(rows as i64),
            Arg::I64(cols as i64),
            Arg::I32(i32::from(full && vectors)),
            Arg::input::<T, _>(a),
            work,
            Arg::I64(stride as i64),
            Arg::output(&mut s),
        ];
        if vectors {
            args.push(Arg::output(&mut u));
            args.push(Arg::output(&mut vh));
        }
        args.push(Arg::output(&mut flag));
        crate::gpuarray::kernels::registry::launch(&f, grid as u32, MATRIX_BLOCK, stream, &args)
    })?;
    if let Some(matrix) = first_failed(&flag, count)? {
        return Err(LinAlgError::NoConvergence {
            operation,
            matrix,
            sweeps: MAX_SWEEPS,
        }
        .into());
    }
    Ok(Decomposed { s, u, vh })
}

context_fns! {
    /// The singular value decomposition of each matrix of `a` (its last two axes; NumPy's and
    /// CuPy's `linalg.svd(a, full_matrices)`, always with `compute_uv=True`; [`svdvals`] is
    /// the values alone): for `a` of shape `(..., M, N)` and `K = min(M, N)`, an [`Svd`] of
    /// `u` (`(..., M, M)` with `full_matrices`, else `(..., M, K)`) with orthonormal columns,
    /// the singular values `s` (`(..., K)`, non-negative, descending) and `vh` (`(..., N, N)`
    /// with `full_matrices`, else `(..., K, N)`) with orthonormal rows, such that `a =
    /// u[..., :, :K] @ diag(s) @ vh[..., :K, :]`.
    ///
    /// Results in [`MeanType`]'s type: `f64` for `f64`, the integers and `bool` (NumPy's);
    /// `f32` for `f32`; `f16` and `bf16` computed in `f32` and rounded (NumPy refuses them).
    /// Complex matrices are not taken. Computed by one-sided Jacobi rotations, each matrix by
    /// one block, until every two columns are orthogonal to within the work type's epsilon
    /// (times the square root of their length); a column at or below the rounding of another
    /// (a zero singular value of a rank-deficient matrix) is taken as zero, so singular values
    /// below epsilon times the largest are only that small, not accurate (NumPy's are
    /// rounding too). The vectors of a repeated singular value are some orthonormal basis of
    /// their space and each pair's sign arbitrary (as LAPACK's), and the columns of `u` (rows
    /// of `vh`) beyond the nonzero singular values some orthonormal completion. Empty stacks, and matrices
    /// with `M` or `N` zero, give empty results of NumPy's shapes (a full `u` or `vh` of an
    /// empty matrix the identity).
    ///
    /// Errors: [`LinAlgError::TooFewAxes`] (fewer than 2 axes), and
    /// [`LinAlgError::NoConvergence`] naming the first matrix (in C order over the leading
    /// axes) that holds NaN or infinity or did not converge; to know, the call reads the
    /// kernel's flag back, so it waits for the stream.
    ///
    /// ```no_run
    /// use gpu_runtime::gpuarray::{self, DeviceArray};
    /// use gpu_runtime::ndarray::arr2;
    /// let ctx = gpu_runtime::Context::default()?;
    /// let a = DeviceArray::from_ndarray(&ctx, &arr2(&[[3.0f64, 2.0, 2.0], [2.0, 3.0, -2.0]]))?;
    /// let r = gpuarray::svd(&a, false)?;
    /// assert_eq!((r.u.shape(), r.s.shape(), r.vh.shape()), (&[2, 2][..], &[2][..], &[2, 3][..]));
    /// let s = r.s.to_vec()?; // [5, 3]
    /// assert!((s[0] - 5.0).abs() < 1e-12 && (s[1] - 3.0).abs() < 1e-12);
    /// # Ok::<(), gpu_runtime::Error>(())
    /// ```
    fn svd[T: MeanType, S: Storage<Elem = T>, D: Dimension](
        &self, a: &DeviceArrayBase<S, D>, full_matrices: bool
    ) -> Result<Svd<T::Mean, D>> {
        const OP: &str = "svd";
        let stack = Stack::of(OP, a.shape())?;
        let ac = OnStream::new(a, self.stream).c_order()?;
        let r = decompose::<T>(OP, a.context(), &ac.view(), &stack, full_matrices, true, self.stream)?;
        let (u_shape, vh_shape) = vector_shapes(stack.rows, stack.cols, full_matrices);
        Ok(Svd {
            u: shaped(r.u, &stack.shape_with(&u_shape))?,
            s: shaped(r.s, &stack.shape_with(&[stack.rows.min(stack.cols)]))?,
            vh: shaped(r.vh, &stack.shape_with(&vh_shape))?,
        })
    }

    /// The singular values of each matrix of `a`, `(..., K)` for `(..., M, N)` and `K =
    /// min(M, N)`, non-negative and descending (NumPy 2's `linalg.svdvals`, NumPy's
    /// `svd(a, compute_uv=False)`): [`svd`] without the vectors (not accumulated, so less
    /// work). Types, errors and waiting as [`svd`]'s.
    ///
    /// ```no_run
    /// use gpu_runtime::gpuarray::{self, DeviceArray};
    /// use gpu_runtime::ndarray::arr2;
    /// let ctx = gpu_runtime::Context::default()?;
    /// let a = DeviceArray::from_ndarray(&ctx, &arr2(&[[0.0f32, 2.0], [-3.0, 0.0]]))?;
    /// assert_eq!(gpuarray::svdvals(&a)?.to_vec()?, [3.0, 2.0]);
    /// # Ok::<(), gpu_runtime::Error>(())
    /// ```
    fn svdvals[T: MeanType, S: Storage<Elem = T>, D: Dimension](
        &self, a: &DeviceArrayBase<S, D>
    ) -> Result<DeviceArray<T::Mean, D::Smaller>> {
        const OP: &str = "svdvals";
        let stack = Stack::of(OP, a.shape())?;
        let ac = OnStream::new(a, self.stream).c_order()?;
        let r = decompose::<T>(OP, a.context(), &ac.view(), &stack, false, false, self.stream)?;
        shaped(r.s, &stack.shape_with(&[stack.rows.min(stack.cols)]))
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
            for vectors in [true, false] {
                let s = source(t, mean_dtype(t), vectors);
                assert!(
                    !s.contains('$') && !s.contains("@V"),
                    "{t:?}: a placeholder is left"
                );
                let params = gpu_cuda_source::find_kernel(&s, "gpu_svd").unwrap().params.len();
                assert_eq!(params, if vectors { 11 } else { 9 }, "{t:?}");
                if let Err(e) = registry::compile_check(&s, "sm_90") {
                    panic!("{t:?} vectors {vectors}: {e}");
                }
            }
        }
    }

    #[test]
    fn the_values_kernel_has_no_vectors() {
        let without = source(DType::F32, DType::F32, false);
        assert!(!without.contains("vh[") && !without.contains("cand") && !without.contains("V["));
        let with = source(DType::I32, DType::F64, true);
        assert!(with.contains("double *__restrict__ vh") && with.contains("const int *__restrict__ a"));
    }

    #[test]
    fn the_shapes_are_numpys() {
        // (M, N) -> u, vh, full and reduced.
        assert_eq!(vector_shapes(5, 3, true), ([5, 5], [3, 3]));
        assert_eq!(vector_shapes(5, 3, false), ([5, 3], [3, 3]));
        assert_eq!(vector_shapes(3, 5, true), ([3, 3], [5, 5]));
        assert_eq!(vector_shapes(3, 5, false), ([3, 3], [3, 5]));
        assert_eq!(vector_shapes(4, 4, false), ([4, 4], [4, 4]));
        assert_eq!(vector_shapes(0, 3, true), ([0, 0], [3, 3]));
        assert_eq!(vector_shapes(0, 3, false), ([0, 0], [0, 3]));
        assert_eq!(vector_shapes(4, 0, false), ([4, 0], [0, 0]));
    }

    #[test]
    fn the_workspace_holds_the_columns_the_values_and_v() {
        // len 5, k 3: G 5 x 3 (reduced) or 5 x 5 (full), 4 arrays of gcols, V 3 x 3.
        assert_eq!(stride("svd", 5, 3, false, true).unwrap(), 15 + 12 + 9);
        assert_eq!(stride("svd", 3, 5, true, true).unwrap(), 25 + 20 + 9);
        // svdvals: no completion, no V.
        assert_eq!(stride("svdvals", 3, 5, true, false).unwrap(), 15 + 12);
        assert!(stride("svd", usize::MAX / 2, 3, true, true).is_err());
    }
}
