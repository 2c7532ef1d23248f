//! NumPy's `linalg.det`, `slogdet`, `solve` and `inv` on stacks of square matrices: each
//! matrix factored by one block of a generated kernel, LU with partial pivoting as LAPACK's
//! `getrf` (the pivot the largest magnitude of its column, the first of equals; a zero pivot
//! leaves its column and marks the matrix singular), the right-hand sides (or the identity,
//! for `inv`) carried beside the matrix through the elimination and solved by back
//! substitution in the same block.
//!
//! One block a matrix suits stacks of small matrices (CuPy's batched cuSOLVER calls are in the
//! same range, `guide/performance.md`); from [`BLOCKED_FROM`] rows a matrix is factored
//! blocked over many blocks instead ([`blocked_lu`](super::blocked_lu)), as one large matrix
//! would keep a single SM busy (a 1024 x 1024 `solve` took 150 times cuSOLVER's time so).

use ndarray::{Dimension, Ix1, IxDyn};

use crate::driver::context::core::Context;
use crate::driver::stream::Stream;
use crate::error::{LinAlgError, Result};
use crate::gpuarray::array::core::{DeviceArray, DeviceArrayBase, Storage};
use crate::gpuarray::array::layout::checked_size;
use crate::gpuarray::array::on_stream::{context_fns, OnStream};
use crate::gpuarray::elements::cast::{convert_c, headers_for};
use crate::gpuarray::elements::dtype::DType;
use crate::gpuarray::elements::element::Element;
use crate::gpuarray::elements::linalg_type::LinalgType;
use crate::gpuarray::kernels::broadcast::broadcast_shapes;
use crate::gpuarray::kernels::source_kernels::SourceKernels;
use crate::gpuarray::linalg::blocked_lu::{det_c, factor_blocked, Dims, Factored, Wanted, BLOCKED_FROM};
use crate::gpuarray::linalg::stack::{
    failure_flag, first_failed, lu_helpers_c, real_type, shaped, work_type, Stack, FAILED_C, MATRIX_BLOCK,
};
use crate::launch::Arg;
use crate::types::{Complex32, Complex64};

static KERNELS: SourceKernels<DType> = SourceKernels::new();

/// The most blocks a launch asks for; each loops over the matrices beyond.
const MAX_GRID: usize = 1 << 16;

/// NumPy 2's `SlogdetResult`: the sign and the natural logarithm of the magnitude of each
/// determinant ([`slogdet`]), `det = sign * exp(logabsdet)` without its overflow; `R`, the
/// magnitude's type, is `T` for real matrices and the part type for complex ones.
#[derive(Debug)]
pub struct SlogDet<T: Element, D: Dimension, R: Element = T> {
    /// 1 or -1 for each real matrix of the stack, `det / |det|` (of magnitude 1) for a complex
    /// one, 0 for a singular one.
    pub sign: DeviceArray<T, D>,
    /// `log |det|`, `-inf` for a singular matrix.
    pub logabsdet: DeviceArray<R, D>,
}

/// The dimension type of a stack of matrices of `D` without its last two axes (one value a
/// matrix).
type BatchDim<D> = <<D as Dimension>::Smaller as Dimension>::Smaller;

/// The kernel for element type `t`: its work type `W`, result type `out` (`LinalgType::Out`)
/// and magnitude type `real` (`LinalgType::Real`).
fn source(t: DType, out: DType, real: DType) -> String {
    let w = work_type(t);
    let wr = real_type(w);
    let (tc, wc, oc, rc, rl) = (t.c_name(), w.c_name(), out.c_name(), wr.c_name(), real.c_name());
    let read = |x: &str| convert_c(t, w, x);
    let write = |x: &str| convert_c(w, out, x);
    format!(
        "{headers}{failed}{helpers}\
         extern \"C\" __global__ void gpu_lu(long long count, long long n, const {tc} *__restrict__ a, \
         long long k, const {tc} *__restrict__ b, int wanted, {wc} *work, {oc} *d0, {rl} *d1, {oc} *x, \
         unsigned long long *flag) {{\n\
         __shared__ {rc} best_v[{block}];\n\
         __shared__ long long best_i[{block}];\n\
         const long long w = n + k;\n\
         const unsigned t = threadIdx.x;\n\
         for (long long m = blockIdx.x; m < count; m += gridDim.x) {{\n\
             {wc} *A = work + m * n * w;\n\
             // The matrix beside its right-hand sides (the identity for inv), row by row.\n\
             for (long long e = t; e < n * w; e += blockDim.x) {{\n\
                 const long long r = e / w, c = e % w;\n\
                 {wc} v;\n\
                 if (c < n) v = {a_rc};\n\
                 else if (wanted == 4) v = r == c - n ? ({wc})1 : ({wc})0;\n\
                 else v = {b_rc};\n\
                 A[e] = v;\n\
             }}\n\
             __syncthreads();\n\
             bool singular = false, odd = false;\n\
             for (long long j = 0; j < n; ++j) {{\n\
                 // The pivot: the largest magnitude in column j from row j, the first of equals\n\
                 // (LAPACK's idamax; NaN is never larger, so a column of NaN keeps row j).\n\
                 {rc} bv = ({rc})-1; long long bi = j;\n\
                 for (long long i = j + t; i < n; i += blockDim.x) {{\n\
                     const {rc} v = gpu_lu_mag(A[i * w + j]);\n\
                     if (v > bv) {{ bv = v; bi = i; }}\n\
                 }}\n\
                 best_v[t] = bv; best_i[t] = bi;\n\
                 __syncthreads();\n\
                 for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {{\n\
                     if (t < s && (best_v[t + s] > best_v[t] || (best_v[t + s] == best_v[t] && best_i[t + s] < best_i[t]))) {{\n\
                         best_v[t] = best_v[t + s]; best_i[t] = best_i[t + s];\n\
                     }}\n\
                     __syncthreads();\n\
                 }}\n\
                 const long long p = best_i[0];\n\
                 const {rc} pv = best_v[0];\n\
                 __syncthreads();\n\
                 // A zero pivot (getrf's info > 0): the column stays, the matrix is singular.\n\
                 if (pv == ({rc})0) {{ singular = true; continue; }}\n\
                 if (p != j) {{\n\
                     odd = !odd;\n\
                     for (long long c = t; c < w; c += blockDim.x) {{\n\
                         const {wc} s = A[j * w + c]; A[j * w + c] = A[p * w + c]; A[p * w + c] = s;\n\
                     }}\n\
                     __syncthreads();\n\
                 }}\n\
                 const {wc} piv = A[j * w + j];\n\
                 for (long long i = j + 1 + t; i < n; i += blockDim.x) A[i * w + j] /= piv;\n\
                 __syncthreads();\n\
                 const long long rows = n - j - 1, cols = w - j - 1;\n\
                 for (long long e = t; e < rows * cols; e += blockDim.x) {{\n\
                     const long long r = j + 1 + e / cols, c = j + 1 + e % cols;\n\
                     A[r * w + c] -= A[r * w + j] * A[j * w + c];\n\
                 }}\n\
                 __syncthreads();\n\
             }}\n\
             if (wanted <= 2) {{\n\
                 if (t == 0) {{\n\
                     // The product of the pivots, its sign flipped by each row swap.\n\
                     if (wanted == 1) {{\n\
                         {det}\
                     }}\n\
                 }}\n\
             }} else if (singular) {{\n\
                 if (t == 0) gpu_failed(flag, count, m);\n\
             }} else {{\n\
                 // Back substitution on the k columns beside U, the last row first.\n\
                 for (long long j = n - 1; j >= 0; --j) {{\n\
                     const {wc} u = A[j * w + j];\n\
                     for (long long c = n + t; c < w; c += blockDim.x) A[j * w + c] /= u;\n\
                     __syncthreads();\n\
                     for (long long e = t; e < j * k; e += blockDim.x) {{\n\
                         const long long r = e / k, c = n + e % k;\n\
                         A[r * w + c] -= A[r * w + j] * A[j * w + c];\n\
                     }}\n\
                     __syncthreads();\n\
                 }}\n\
                 for (long long e = t; e < n * k; e += blockDim.x) {{\n\
                     x[m * n * k + e] = {write_x};\n\
                 }}\n\
             }}\n\
             __syncthreads();\n\
         }}\n\
         }}\n",
        headers = headers_for([t, w, out, real]),
        failed = FAILED_C,
        helpers = lu_helpers_c(w),
        block = MATRIX_BLOCK,
        det = det_c(w, out, real, "w"),
        a_rc = read("a[m * n * n + r * n + c]"),
        b_rc = read("b[m * n * k + r * k + (c - n)]"),
        write_x = write("A[(e / k) * w + n + e % k]"),
    )
}

/// Factors the `count` matrices of `n x n` in `a` (C order) beside the right-hand sides `b`
/// (`count` blocks of `n x k`, C order) and gives back what `wanted` asks for; a singular
/// matrix where a solution is wanted is [`LinAlgError::Singular`] (which waits for the
/// kernel to know).
fn factor<T: LinalgType>(
    operation: &'static str,
    ctx: &Context,
    a: &DeviceArrayBase<impl Storage<Elem = T>, IxDyn>,
    b: Option<&DeviceArrayBase<impl Storage<Elem = T>, IxDyn>>,
    dims: Dims,
    stream: Option<&Stream>,
) -> Result<Factored<T::Out, T::Real>> {
    let Dims { count, n, k, wanted } = dims;
    let dets = if matches!(wanted, Wanted::Det | Wanted::SlogDet) {
        count
    } else {
        0
    };
    let solutions = if dets == 0 {
        checked_size(operation, &[count, n, k])?
    } else {
        0
    };
    let mut out = Factored {
        d0: DeviceArray::<T::Out, Ix1>::empty(ctx, dets)?,
        d1: DeviceArray::<T::Real, Ix1>::empty(ctx, if wanted == Wanted::SlogDet { dets } else { 0 })?,
        x: DeviceArray::<T::Out, Ix1>::empty(ctx, solutions)?,
        flag: failure_flag(ctx)?,
    };
    if count == 0 {
        return Ok(out);
    }
    let work_len = checked_size(operation, &[count, n, n + k])?;
    // The workspace in the work type, dropped once the kernels are queued; blocked over many
    // blocks for matrices of `BLOCKED_FROM` rows or more, else one block a matrix.
    macro_rules! factor_in {
        ($w:ty) => {{
            let mut work = DeviceArray::<$w, Ix1>::empty(ctx, work_len)?;
            if n < BLOCKED_FROM {
                launch(ctx, a, b, dims, Arg::output(&mut work), &mut out, stream)?;
            } else {
                let b = if wanted == Wanted::Solve { b } else { None };
                factor_blocked(ctx, a, b, &mut work, &mut out, dims, stream)?;
            }
        }};
    }
    match work_type(T::DTYPE) {
        DType::F32 => factor_in!(f32),
        DType::Complex32 => factor_in!(Complex32),
        DType::Complex64 => factor_in!(Complex64),
        _ => factor_in!(f64),
    }
    if dets == 0 {
        if let Some(matrix) = first_failed(&out.flag, count)? {
            return Err(LinAlgError::Singular { operation, matrix }.into());
        }
    }
    Ok(out)
}

/// One launch of the kernel; `work` is the workspace of the work type.
fn launch<T: LinalgType>(
    ctx: &Context,
    a: &DeviceArrayBase<impl Storage<Elem = T>, IxDyn>,
    b: Option<&DeviceArrayBase<impl Storage<Elem = T>, IxDyn>>,
    dims: Dims,
    work: Arg<'_>,
    out: &mut Factored<T::Out, T::Real>,
    stream: Option<&Stream>,
) -> Result<()> {
    let (t, res, real) = (T::DTYPE, <T::Out as Element>::DTYPE, <T::Real as Element>::DTYPE);
    let f = KERNELS.prepared(ctx, t, "gpu_lu", || source(t, res, real))?;
    let av = a.view();
    let bv = b.map(|b| b.view());
    let args = [
        Arg::I64(dims.count as i64),
        Arg::I64(dims.n as i64),
        Arg::input::<T, _>(&av),
        Arg::I64(dims.k as i64),
        Arg::input::<T, _>(bv.as_ref().unwrap_or(&av)),
        Arg::I32(dims.wanted as i32),
        work,
        Arg::output(&mut out.d0),
        Arg::output(&mut out.d1),
        Arg::output(&mut out.x),
        Arg::output(&mut out.flag),
    ];
    let grid = dims.count.min(MAX_GRID) as u32;
    crate::gpuarray::kernels::registry::launch(&f, grid, MATRIX_BLOCK, stream, &args)
}

context_fns! {
    /// The determinant of each square matrix of `a` (its last two axes; NumPy's and CuPy's
    /// `linalg.det`): an array of the leading axes' shape (0-d for one matrix), in
    /// [`LinalgType`]'s result type (`f64` for integers and `bool`, NumPy's; `f16` and `bf16`
    /// factored in `f32`, as CuPy does, where NumPy refuses them; a complex type itself). Computed as LAPACK's
    /// `getrf` computes it: LU with partial pivoting, the product of the pivots; each small
    /// matrix by one block, one of 128 rows or more blocked over the GPU. The determinant of
    /// a `0 x 0` matrix is 1. Errors: [`LinAlgError::TooFewAxes`],
    /// [`LinAlgError::NotSquare`]. Queued on the stream.
    ///
    /// ```no_run
    /// use gpu_runtime::gpuarray::{self, DeviceArray};
    /// use gpu_runtime::ndarray::arr2;
    /// let ctx = gpu_runtime::Context::default()?;
    /// let a = DeviceArray::from_ndarray(&ctx, &arr2(&[[1.0f64, 2.0], [3.0, 4.0]]))?;
    /// let d = gpuarray::det(&a)?.to_vec()?[0];
    /// assert!((d + 2.0).abs() < 1e-12);
    /// # Ok::<(), gpu_runtime::Error>(())
    /// ```
    fn det[T: LinalgType, S: Storage<Elem = T>, D: Dimension](
        &self, a: &DeviceArrayBase<S, D>
    ) -> Result<DeviceArray<T::Out, BatchDim<D>>> {
        const OP: &str = "det";
        let stack = Stack::square(OP, a.shape())?;
        let ac = OnStream::new(a, self.stream).c_order()?;
        let f = factor(OP, a.context(), &ac.view(), None::<&DeviceArrayBase<S, IxDyn>>, Dims { count: stack.count, n: stack.rows, k: 0, wanted: Wanted::Det }, self.stream)?;
        shaped(f.d0, &stack.batch)
    }

    /// The sign and the logarithm of the magnitude of each determinant of `a` (NumPy's and
    /// CuPy's `linalg.slogdet`), which do not overflow where [`det`] does: `det = sign *
    /// exp(logabsdet)`; a singular matrix gives sign 0 and `-inf`. For a complex matrix the
    /// sign is `det / |det|` (complex, of magnitude 1) and `logabsdet` is of the part type, as
    /// NumPy's. Types, errors and stream as [`det`]'s.
    fn slogdet[T: LinalgType, S: Storage<Elem = T>, D: Dimension](
        &self, a: &DeviceArrayBase<S, D>
    ) -> Result<SlogDet<T::Out, BatchDim<D>, T::Real>> {
        const OP: &str = "slogdet";
        let stack = Stack::square(OP, a.shape())?;
        let ac = OnStream::new(a, self.stream).c_order()?;
        let f = factor(OP, a.context(), &ac.view(), None::<&DeviceArrayBase<S, IxDyn>>, Dims { count: stack.count, n: stack.rows, k: 0, wanted: Wanted::SlogDet }, self.stream)?;
        Ok(SlogDet {
            sign: shaped(f.d0, &stack.batch)?,
            logabsdet: shaped(f.d1, &stack.batch)?,
        })
    }

    /// The inverse of each square matrix of `a` (NumPy's and CuPy's `linalg.inv`), of `a`'s
    /// shape, in [`LinalgType`]'s result type: LU with partial pivoting, then the identity
    /// solved beside it. A singular matrix (a zero pivot) is [`LinAlgError::Singular`],
    /// naming the first; to know, the call waits for the kernel. Other errors as [`det`]'s.
    ///
    /// ```no_run
    /// use gpu_runtime::gpuarray::{self, DeviceArray};
    /// use gpu_runtime::ndarray::arr2;
    /// let ctx = gpu_runtime::Context::default()?;
    /// let a = DeviceArray::from_ndarray(&ctx, &arr2(&[[2.0f32, 0.0], [0.0, 4.0]]))?;
    /// assert_eq!(gpuarray::inv(&a)?.to_vec()?, [0.5, 0.0, 0.0, 0.25]);
    /// # Ok::<(), gpu_runtime::Error>(())
    /// ```
    fn inv[T: LinalgType, S: Storage<Elem = T>, D: Dimension](
        &self, a: &DeviceArrayBase<S, D>
    ) -> Result<DeviceArray<T::Out, D>> {
        const OP: &str = "inv";
        let stack = Stack::square(OP, a.shape())?;
        let ac = OnStream::new(a, self.stream).c_order()?;
        let n = stack.rows;
        let f = factor(OP, a.context(), &ac.view(), None::<&DeviceArrayBase<S, IxDyn>>, Dims { count: stack.count, n, k: n, wanted: Wanted::Inverse }, self.stream)?;
        shaped(f.x, a.shape())
    }

    /// The solution `x` of `a @ x = b` for each square matrix of `a` (NumPy 2's and CuPy's
    /// `linalg.solve`): `b` of one axis, `(n,)`, is one right-hand side (for every matrix of
    /// the stack; the result has `a`'s leading axes and `n`); otherwise `b` is `(..., n, k)`,
    /// `k` right-hand sides a matrix, whose leading axes broadcast against `a`'s (the result
    /// `(..., n, k)` of the broadcast shape). The result has `b`'s dimension type, so a
    /// result with more axes than `b` (a stack of matrices and one `(n,)` or `(n, k)`) needs
    /// `b.into_dyn()` (else [`ArrayShapeError::Dimension`](crate::ArrayShapeError::Dimension)).
    /// LU with partial pivoting and back substitution, each small matrix by one block, a
    /// large one (from 128 rows) blocked over the GPU ([the guide](crate::guide::performance)
    /// measures both against cuSOLVER); a singular matrix is [`LinAlgError::Singular`] (the
    /// call waits for the kernel to know); `b` that does not fit is
    /// [`LinAlgError::RightHandSide`]. `a` and `b` are of one element type.
    ///
    /// ```no_run
    /// use gpu_runtime::gpuarray::{self, DeviceArray};
    /// use gpu_runtime::ndarray::{arr1, arr2};
    /// let ctx = gpu_runtime::Context::default()?;
    /// let a = DeviceArray::from_ndarray(&ctx, &arr2(&[[3.0f64, 1.0], [1.0, 2.0]]))?;
    /// let b = DeviceArray::from_ndarray(&ctx, &arr1(&[9.0f64, 8.0]))?;
    /// let x = gpuarray::solve(&a, &b)?.to_vec()?; // [2, 3]
    /// assert!((x[0] - 2.0).abs() < 1e-12 && (x[1] - 3.0).abs() < 1e-12);
    /// # Ok::<(), gpu_runtime::Error>(())
    /// ```
    fn solve[T: LinalgType, SA: Storage<Elem = T>, DA: Dimension, SB: Storage<Elem = T>, DB: Dimension](
        &self, a: &DeviceArrayBase<SA, DA>, b: &DeviceArrayBase<SB, DB>
    ) -> Result<DeviceArray<T::Out, DB>> {
        const OP: &str = "solve";
        let stack = Stack::square(OP, a.shape())?;
        let n = stack.rows;
        let misfit = || LinAlgError::RightHandSide {
            operation: OP,
            a: a.shape().to_vec(),
            b: b.shape().to_vec(),
        };
        // NumPy 2: `b` is a vector only when it has one axis; it is then one column.
        let vector = b.ndim() == 1;
        let (b_batch, b_rows, k) = if vector {
            (&[][..], b.shape()[0], 1)
        } else if b.ndim() >= 2 {
            let s = b.shape();
            (&s[..s.len() - 2], s[s.len() - 2], s[s.len() - 1])
        } else {
            return Err(misfit().into());
        };
        if b_rows != n {
            return Err(misfit().into());
        }
        let batch = broadcast_shapes(&[&stack.batch, b_batch]).map_err(|_| misfit())?;
        let count = checked_size(OP, &batch)?;
        let a_full: Vec<usize> = batch.iter().copied().chain([n, n]).collect();
        let b_full: Vec<usize> = batch.iter().copied().chain([n, k]).collect();
        let a_b = a.broadcast_to(&a_full)?;
        // A vector as the one column of an `(n, 1)` view.
        let column;
        let b_b = if vector {
            column = b.view().expand_dims(1)?;
            column.broadcast_to(&b_full)?
        } else {
            b.broadcast_to(&b_full)?
        };
        let ac = OnStream::new(&a_b, self.stream).c_order()?;
        let bc = OnStream::new(&b_b, self.stream).c_order()?;
        let f = factor(OP, a.context(), &ac.view(), Some(&bc.view()), Dims { count, n, k, wanted: Wanted::Solve }, self.stream)?;
        let shape = if vector { stack.shape_with(&[n]) } else { b_full };
        shaped(f.x, &shape)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpuarray::kernels::registry;
    use crate::gpuarray::linalg::stack::mean_dtype;

    #[test]
    fn the_kernel_compiles_for_every_element_type() {
        for t in DType::ALL {
            let s = source(t, mean_dtype(t), real_type(mean_dtype(t)));
            assert_eq!(
                gpu_cuda_source::find_kernel(&s, "gpu_lu").unwrap().params.len(),
                11
            );
            if let Err(e) = registry::compile_check(&s, "sm_90") {
                panic!("{t:?}: {e}");
            }
        }
    }
}
