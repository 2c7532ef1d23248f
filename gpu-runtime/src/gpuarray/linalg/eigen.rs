//! NumPy's `linalg.eigh` and `eigvalsh` on stacks of symmetric matrices: each matrix
//! diagonalized by one block of a generated kernel with cyclic Jacobi rotations (classical
//! two-sided Jacobi, the `n / 2` disjoint pairs of a round of the circle method rotated at
//! once, so a round is three passes over the matrix by the whole block), the eigenvector
//! matrix accumulated beside it. Also the C the one-sided Jacobi of `svd` shares with it
//! ([`JACOBI_C`], [`jacobi_grid`]).
//!
//! Each matrix is first scaled by a power of two (exact) to largest magnitude in `[0.5, 1)`,
//! so that no sum of squares overflows or underflows whatever the input's range; the
//! eigenvalues are scaled back. A matrix holding NaN or infinity is refused before any
//! rotation (it could never converge), as one that has not converged in [`MAX_SWEEPS`]
//! sweeps: [`LinAlgError::NoConvergence`].

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
use crate::gpuarray::linalg::stack::{
    failure_flag, first_failed, marked_lines, shaped, with_work, work_epsilon, work_type, Stack, FAILED_C,
    MATRIX_BLOCK,
};
use crate::launch::Arg;

/// The sweeps (each rotates every pair once) after which a matrix that has not converged is
/// [`LinAlgError::NoConvergence`]. Jacobi converges quadratically: a matrix of a few hundred
/// rows takes about ten.
pub(crate) const MAX_SWEEPS: u32 = 60;

/// The most blocks a launch asks for; each loops over the matrices beyond.
const MAX_GRID: usize = 1 << 16;

/// The most elements of workspace a launch asks for (while one block's share fits): each
/// block keeps its matrix and rotations there, so the grid is cut to fit.
const WORK_BUDGET: usize = 1 << 26;

/// The kernels by input element type and whether the vectors are wanted (`eigh`) or only the
/// values (`eigvalsh`).
static KERNELS: SourceKernels<(DType, bool)> = SourceKernels::new();

/// Which triangle of each matrix `eigh` and `eigvalsh` read (NumPy's `UPLO`): the other is
/// taken as its mirror image and never read, so it may hold anything.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Uplo {
    /// The lower triangle and the diagonal (NumPy's default, `UPLO='L'`).
    #[default]
    L,
    /// The upper triangle and the diagonal (`UPLO='U'`).
    U,
}

/// The eigenvalues and eigenvectors of a stack of symmetric matrices ([`eigh`]), NumPy 2's
/// `EighResult`: for `a` of shape `(..., n, n)`, `eigenvalues` of shape `(..., n)` in
/// ascending order and `eigenvectors` of shape `(..., n, n)` whose column `i` is the unit
/// eigenvector of eigenvalue `i`: `a @ v[..., :, i] = w[..., i] * v[..., :, i]`.
#[derive(Debug)]
pub struct Eigh<T: Element, D: Dimension> {
    /// The eigenvalues of each matrix, ascending (NumPy's `eigenvalues`, `w`).
    pub eigenvalues: DeviceArray<T, D::Smaller>,
    /// The orthonormal eigenvectors of each matrix as its columns, in the eigenvalues' order
    /// (NumPy's `eigenvectors`, `v`).
    pub eigenvectors: DeviceArray<T, D>,
}

/// C shared by the Jacobi kernels of `eigh` and `svd` (all in `double`, whatever the work type):
/// block and warp sums, the pairs of a round, the rotation, and the finiteness test.
pub(crate) const JACOBI_C: &str = r#"
// The sum of v over the block (blockDim.x a power of two, red of blockDim.x), in every thread.
__device__ double gpu_block_sum(double v, double *red) {
    red[threadIdx.x] = v;
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) red[threadIdx.x] += red[threadIdx.x + s];
        __syncthreads();
    }
    const double r = red[0];
    __syncthreads();
    return r;
}
// The largest v over the block, in every thread.
__device__ double gpu_block_max(double v, double *red) {
    red[threadIdx.x] = v;
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) red[threadIdx.x] = fmax(red[threadIdx.x], red[threadIdx.x + s]);
        __syncthreads();
    }
    const double r = red[0];
    __syncthreads();
    return r;
}
// The sum of v over the 32 lanes of a warp. Each lane adds its partner's value to its own, and
// a + b == b + a exactly, so every lane ends with the same bits: the warp decides as one.
__device__ double gpu_warp_sum(double v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}
// Whether x is neither NaN nor infinite (NaN compares false).
__device__ bool gpu_finite(double x) {
    return fabs(x) <= 1.7976931348623157e308;
}
// Pair i (p < q) of round r of the circle method over m (even) indices: the m / 2 pairs of a
// round are disjoint, and the m - 1 rounds pair every index with every other once. With m one
// more than the indices, the pair holding index m - 1 is skipped.
__device__ void gpu_jacobi_pair(long long r, long long i, long long m, long long *p, long long *q) {
    long long x, y;
    if (i == 0) {
        x = r;
        y = m - 1;
    } else {
        x = (r + i) % (m - 1);
        y = (r + m - 1 - i) % (m - 1);
    }
    *p = x < y ? x : y;
    *q = x < y ? y : x;
}
// The rotation J = [[c, s], [-s, c]] for which J^T [[app, apq], [apq, aqq]] J is diagonal, by
// the smaller angle (Golub and Van Loan's symmetric Schur step; apq != 0). A huge theta (apq
// negligible) overflows theta * theta to infinity and gives t = 0: no rotation.
__device__ void gpu_jacobi_rotation(double app, double aqq, double apq, double *c, double *s) {
    const double theta = (aqq - app) / (2.0 * apq);
    const double t = (theta >= 0.0 ? 1.0 : -1.0) / (fabs(theta) + sqrt(1.0 + theta * theta));
    *c = 1.0 / sqrt(1.0 + t * t);
    *s = *c * t;
}
"#;

/// The blocks of a launch over `count` matrices whose workspace is `stride` elements a block:
/// at least one, at most one a matrix, [`MAX_GRID`], and what [`WORK_BUDGET`] holds.
pub(crate) fn jacobi_grid(count: usize, stride: usize) -> usize {
    let fits = (WORK_BUDGET / stride.max(1)).max(1);
    count.min(MAX_GRID).min(fits).max(1)
}

/// The kernel for element type `t` (results in `out`, its `Mean`), with the eigenvectors or
/// without.
fn source(t: DType, out: DType, vectors: bool) -> String {
    let w = work_type(t);
    // Only the vectors' lines of the template are kept for `eigh`.
    let body = marked_lines(EIGH_C, "@V ", vectors);
    let text = body
        .replace("$VPARAM", if vectors { ", $R *__restrict__ v" } else { "" })
        .replace("$READ", &convert_c(t, DType::F64, "in[src]"))
        .replace("$WRITE_W", &convert_c(DType::F64, out, "ldexp((double)d, ex)"))
        .replace("$WRITE_V", &convert_c(w, out, "V[e]"))
        .replace("$EPS", work_epsilon(w))
        .replace("$MAX_SWEEPS", &MAX_SWEEPS.to_string())
        .replace("$BLOCK", &MATRIX_BLOCK.to_string())
        .replace("$T", t.c_name())
        .replace("$W", w.c_name())
        .replace("$R", out.c_name());
    format!("{}{FAILED_C}{JACOBI_C}{text}", headers_for([t, w, out]))
}

/// The kernel: one block a matrix (looping over the matrices beyond the grid). Lines marked
/// `@V` are only in `eigh`'s kernel. `$W` is the work type; the workspace of a block is the
/// matrix `A` (`n * n`), `cs` (`n + 1`: a round's rotations `(c, s)`, later the ranks) and,
/// with the vectors, `V` (`n * n`), all in C order.
const EIGH_C: &str = r#"
extern "C" __global__ void gpu_eigh(long long count, long long n, int lower, const $T *__restrict__ a,
    $W *work, long long stride, $R *__restrict__ w$VPARAM, unsigned long long *flag) {
    __shared__ double red[$BLOCK];
    const long long nn = n * n, m = n + (n & 1), half = m / 2;
    $W *const A = work + (long long)blockIdx.x * stride;
    $W *const cs = A + nn;
@V  $W *const V = cs + n + 1;
    for (long long b = blockIdx.x; b < count; b += gridDim.x) {
        const $T *const in = a + b * nn;
        // The chosen triangle and its mirror, and the largest magnitude.
        double amax = 0.0;
        int bad = 0;
        for (long long e = threadIdx.x; e < nn; e += blockDim.x) {
            const long long i = e / n, j = e % n;
            const long long src = (lower ? i >= j : i <= j) ? e : j * n + i;
            const double x = $READ;
            bad |= !gpu_finite(x);
            amax = fmax(amax, fabs(x));
            A[e] = ($W)x;
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
        for (long long e = threadIdx.x; e < nn; e += blockDim.x) {
            A[e] = ($W)ldexp((double)A[e], -ex);
@V          V[e] = e / n == e % n ? ($W)1 : ($W)0;
        }
        __syncthreads();
        bool done = false;
        int sweeps = 0;
        for (;;) {
            // Converged when the off-diagonal's Frobenius norm is within eps of the matrix's.
            double off = 0.0, total = 0.0;
            for (long long e = threadIdx.x; e < nn; e += blockDim.x) {
                const double x = A[e];
                total += x * x;
                if (e / n != e % n) off += x * x;
            }
            off = gpu_block_sum(off, red);
            total = gpu_block_sum(total, red);
            if (off <= ($EPS * $EPS) * total) {
                done = true;
                break;
            }
            if (sweeps == $MAX_SWEEPS) break;
            ++sweeps;
            for (long long r = 0; r + 1 < m; ++r) {
                // The rotation of each pair of the round, from the matrix as the last round left it.
                for (long long i = threadIdx.x; i < half; i += blockDim.x) {
                    long long p, q;
                    gpu_jacobi_pair(r, i, m, &p, &q);
                    double c = 1.0, s = 0.0;
                    if (q < n && A[p * n + q] != ($W)0)
                        gpu_jacobi_rotation(A[p * n + p], A[q * n + q], A[p * n + q], &c, &s);
                    cs[2 * i] = ($W)c;
                    cs[2 * i + 1] = ($W)s;
                }
                __syncthreads();
                // A <- J^T A: rows p and q of each pair (the pairs' rows are disjoint).
                for (long long e = threadIdx.x; e < half * n; e += blockDim.x) {
                    const long long i = e / n, k = e % n;
                    const $W s = cs[2 * i + 1];
                    if (s == ($W)0) continue;
                    const $W c = cs[2 * i];
                    long long p, q;
                    gpu_jacobi_pair(r, i, m, &p, &q);
                    const $W x = A[p * n + k], y = A[q * n + k];
                    A[p * n + k] = c * x - s * y;
                    A[q * n + k] = s * x + c * y;
                }
                __syncthreads();
                // A <- A J and V <- V J: columns p and q. The element each rotation annihilates
                // is set to zero rather than left as rounding, which (n / 2 of them a round,
                // each of the diagonal's size times eps) would keep the off-diagonal norm above
                // eps times the matrix's.
                for (long long e = threadIdx.x; e < n * half; e += blockDim.x) {
                    const long long k = e / half, i = e % half;
                    const $W s = cs[2 * i + 1];
                    if (s == ($W)0) continue;
                    const $W c = cs[2 * i];
                    long long p, q;
                    gpu_jacobi_pair(r, i, m, &p, &q);
                    const $W x = A[k * n + p], y = A[k * n + q];
                    A[k * n + p] = c * x - s * y;
                    A[k * n + q] = s * x + c * y;
                    if (k == p) A[p * n + q] = ($W)0;
                    if (k == q) A[q * n + p] = ($W)0;
@V                  const $W vx = V[k * n + p], vy = V[k * n + q];
@V                  V[k * n + p] = c * vx - s * vy;
@V                  V[k * n + q] = s * vx + c * vy;
                }
                __syncthreads();
            }
        }
        if (!done) {
            if (threadIdx.x == 0) gpu_failed(flag, count, b);
            continue;
        }
        // The eigenvalues ascending: each one's rank among them (ties by index), which is where
        // it and its vector go. The ranks are kept in cs, exact in the work type (n < 2^24).
        for (long long i = threadIdx.x; i < n; i += blockDim.x) {
            const $W d = A[i * n + i];
            long long rank = 0;
            for (long long j = 0; j < n; ++j) {
                const $W dj = A[j * n + j];
                rank += dj < d || (dj == d && j < i);
            }
            cs[i] = ($W)rank;
            w[b * n + rank] = $WRITE_W;
        }
        __syncthreads();
@V      for (long long e = threadIdx.x; e < nn; e += blockDim.x) {
@V          v[b * nn + (e / n) * n + (long long)cs[e % n]] = $WRITE_V;
@V      }
        __syncthreads();
    }
}
"#;

/// What one decomposition gives, in C order before it is shaped: the eigenvalues (`count *
/// n`) and the eigenvectors (`count * n * n`, empty without them).
struct Decomposed<M: Element> {
    w: DeviceArray<M, Ix1>,
    v: DeviceArray<M, Ix1>,
}

/// The eigenvalues (`count * n`, C order) and, when `vectors`, the eigenvectors (`count * n *
/// n`) of the `count` matrices `n x n` of `a` (C order), reading the triangle `uplo`. Waits
/// for the kernel to read its flag: a matrix that did not converge is
/// [`LinAlgError::NoConvergence`].
#[allow(clippy::too_many_arguments)]
fn decompose<T: MeanType>(
    operation: &'static str,
    ctx: &Context,
    a: &DeviceArrayView<'_, T>,
    count: usize,
    n: usize,
    uplo: Uplo,
    vectors: bool,
    stream: Option<&Stream>,
) -> Result<Decomposed<T::Mean>> {
    let mut w = DeviceArray::<T::Mean, Ix1>::empty(ctx, checked_size(operation, &[count, n])?)?;
    let v_len = if vectors {
        checked_size(operation, &[count, n, n])?
    } else {
        0
    };
    let mut v = DeviceArray::<T::Mean, Ix1>::empty(ctx, v_len)?;
    if count == 0 || n == 0 {
        return Ok(Decomposed { w, v });
    }
    // A, the rotations (n + 1), and V: checked_size bounds n * n, so these cannot overflow
    // unless the sum does, which checked_size's own bound catches below.
    let nn = checked_size(operation, &[n, n])?;
    let stride = nn
        .checked_add(n + 1)
        .and_then(|s| s.checked_add(if vectors { nn } else { 0 }))
        .ok_or(crate::error::ArrayShapeError::ElementsOverflow {
            operation,
            shape: vec![count, n, n],
        })?;
    let grid = jacobi_grid(count, stride);
    let work_len = checked_size(operation, &[grid, stride])?;
    let mut flag = failure_flag(ctx)?;
    let out = <T::Mean as Element>::DTYPE;
    let f = KERNELS.prepared(ctx, (T::DTYPE, vectors), "gpu_eigh", || {
        source(T::DTYPE, out, vectors)
    })?;
    with_work(ctx, T::DTYPE, work_len, |work| {
        let mut args = vec![
            Arg::I64(count as i64),
            Arg::I64(n as i64),
            Arg::I32(i32::from(uplo == Uplo::L)),
            Arg::input::<T, _>(a),
            work,
            Arg::I64(stride as i64),
            Arg::output(&mut w),
        ];
        if vectors {
            args.push(Arg::output(&mut v));
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
    Ok(Decomposed { w, v })
}

context_fns! {
    /// The eigenvalues and eigenvectors of each real symmetric matrix of `a` (its last two
    /// axes; NumPy's and CuPy's `linalg.eigh(a, UPLO)`): an [`Eigh`] of the eigenvalues in
    /// ascending order, shape `(..., n)`, and the orthonormal eigenvectors as the columns of
    /// `(..., n, n)`, `a @ v[..., :, i] = w[..., i] * v[..., :, i]`. Only the triangle `uplo`
    /// of each matrix is read ([`Uplo::L`] is NumPy's default), the other taken as its mirror.
    ///
    /// Results in [`MeanType`]'s type: `f64` for `f64`, the integers and `bool` (NumPy's);
    /// `f32` for `f32`; `f16` and `bf16` computed in `f32` and rounded (NumPy refuses them).
    /// Complex (Hermitian) matrices are not taken. Computed by cyclic Jacobi rotations, each
    /// matrix by one block, to an off-diagonal norm within the work type's epsilon of the
    /// matrix's norm: as accurate as LAPACK's `syevd`, the eigenvectors of a repeated
    /// eigenvalue being some orthonormal basis of its space (as LAPACK's are), and the sign
    /// of each vector arbitrary. A stack of no matrices or of `0 x 0` ones gives empty results.
    ///
    /// Errors: [`LinAlgError::TooFewAxes`] (fewer than 2 axes), [`LinAlgError::NotSquare`],
    /// and [`LinAlgError::NoConvergence`] naming the first matrix (in C order over the leading
    /// axes) that holds NaN or infinity in its triangle or did not converge; to know, the call
    /// reads the kernel's flag back, so it waits for the stream.
    ///
    /// ```no_run
    /// use gpu_runtime::gpuarray::{self, DeviceArray, Uplo};
    /// use gpu_runtime::ndarray::arr2;
    /// let ctx = gpu_runtime::Context::default()?;
    /// let a = DeviceArray::from_ndarray(&ctx, &arr2(&[[2.0f64, 1.0], [1.0, 2.0]]))?;
    /// let r = gpuarray::eigh(&a, Uplo::L)?;
    /// let w = r.eigenvalues.to_vec()?; // [1, 3]
    /// assert!((w[0] - 1.0).abs() < 1e-12 && (w[1] - 3.0).abs() < 1e-12);
    /// let v = r.eigenvectors.to_vec()?; // columns ±[1, -1] / √2 and ±[1, 1] / √2
    /// assert!((v[0].abs() - 0.5f64.sqrt()).abs() < 1e-12);
    /// # Ok::<(), gpu_runtime::Error>(())
    /// ```
    fn eigh[T: MeanType, S: Storage<Elem = T>, D: Dimension](
        &self, a: &DeviceArrayBase<S, D>, uplo: Uplo
    ) -> Result<Eigh<T::Mean, D>> {
        const OP: &str = "eigh";
        let stack = Stack::square(OP, a.shape())?;
        let ac = OnStream::new(a, self.stream).c_order()?;
        let (count, n) = (stack.count, stack.rows);
        let Decomposed { w, v } =
            decompose::<T>(OP, a.context(), &ac.view(), count, n, uplo, true, self.stream)?;
        Ok(Eigh {
            eigenvalues: shaped(w, &stack.shape_with(&[stack.rows]))?,
            eigenvectors: shaped(v, a.shape())?,
        })
    }

    /// The eigenvalues of each real symmetric matrix of `a`, ascending, shape `(..., n)`
    /// (NumPy's and CuPy's `linalg.eigvalsh(a, UPLO)`): [`eigh`] without the eigenvectors
    /// (not accumulated, so less work). Types, triangle, errors and waiting as [`eigh`]'s.
    ///
    /// ```no_run
    /// use gpu_runtime::gpuarray::{self, DeviceArray, Uplo};
    /// use gpu_runtime::ndarray::arr2;
    /// let ctx = gpu_runtime::Context::default()?;
    /// // Only the upper triangle is read: the 7 is never looked at.
    /// let a = DeviceArray::from_ndarray(&ctx, &arr2(&[[2i32, 1], [7, 2]]))?;
    /// let w: Vec<f64> = gpuarray::eigvalsh(&a, Uplo::U)?.to_vec()?;
    /// assert!((w[0] - 1.0).abs() < 1e-12 && (w[1] - 3.0).abs() < 1e-12);
    /// # Ok::<(), gpu_runtime::Error>(())
    /// ```
    fn eigvalsh[T: MeanType, S: Storage<Elem = T>, D: Dimension](
        &self, a: &DeviceArrayBase<S, D>, uplo: Uplo
    ) -> Result<DeviceArray<T::Mean, D::Smaller>> {
        const OP: &str = "eigvalsh";
        let stack = Stack::square(OP, a.shape())?;
        let ac = OnStream::new(a, self.stream).c_order()?;
        let (count, n) = (stack.count, stack.rows);
        let Decomposed { w, .. } =
            decompose::<T>(OP, a.context(), &ac.view(), count, n, uplo, false, self.stream)?;
        shaped(w, &stack.shape_with(&[stack.rows]))
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
                let params = gpu_cuda_source::find_kernel(&s, "gpu_eigh").unwrap().params.len();
                assert_eq!(params, if vectors { 9 } else { 8 }, "{t:?}");
                if let Err(e) = registry::compile_check(&s, "sm_90") {
                    panic!("{t:?} vectors {vectors}: {e}");
                }
            }
        }
    }

    #[test]
    fn the_vectors_lines_are_only_in_eighs_kernel() {
        let with = source(DType::F64, DType::F64, true);
        let without = source(DType::F64, DType::F64, false);
        assert!(with.contains("V[k * n + p] = c * vx - s * vy;"));
        assert!(!without.contains("vx") && !without.contains("$R *__restrict__ v"));
        // f16 is read through float and written back rounded once.
        let half = source(DType::F16, DType::F16, true);
        assert!(
            half.contains("float *work") && half.contains("__half *__restrict__ w"),
            "{half}"
        );
    }

    /// The circle method as the kernel computes it, on the host.
    fn pair(r: usize, i: usize, m: usize) -> (usize, usize) {
        let (x, y) = if i == 0 {
            (r, m - 1)
        } else {
            ((r + i) % (m - 1), (r + m - 1 - i) % (m - 1))
        };
        (x.min(y), x.max(y))
    }

    #[test]
    fn the_rounds_pair_every_index_with_every_other_once() {
        for m in (2..=40).step_by(2) {
            let mut seen = vec![0u32; m * m];
            for r in 0..m - 1 {
                let mut used = vec![false; m];
                for i in 0..m / 2 {
                    let (p, q) = pair(r, i, m);
                    assert!(p < q && !used[p] && !used[q], "m {m} round {r}: pairs overlap");
                    used[p] = true;
                    used[q] = true;
                    seen[p * m + q] += 1;
                }
            }
            for p in 0..m {
                for q in p + 1..m {
                    assert_eq!(seen[p * m + q], 1, "m {m}: ({p}, {q})");
                }
            }
        }
    }

    #[test]
    fn the_grid_fits_the_workspace_budget() {
        assert_eq!(jacobi_grid(1, 10), 1);
        assert_eq!(jacobi_grid(1_000_000, 10), MAX_GRID);
        assert_eq!(
            jacobi_grid(1000, 2 * 200 * 200 + 201),
            WORK_BUDGET / (2 * 200 * 200 + 201)
        );
        // One block even where one matrix alone is over the budget.
        assert_eq!(jacobi_grid(5, WORK_BUDGET * 3), 1);
    }

    #[test]
    fn uplo_defaults_to_numpys_lower() {
        assert_eq!(Uplo::default(), Uplo::L);
    }
}
