//! NumPy's `linalg.cholesky` on stacks of square matrices: `a = L Lᵀ` with `L` lower
//! triangular, each matrix factored by one block of a generated kernel (the right-looking
//! algorithm of LAPACK's unblocked `potf2`), reading only the lower triangle as NumPy does.

use ndarray::{Dimension, Ix1};

use crate::error::{LinAlgError, Result};
use crate::gpuarray::array::core::{DeviceArray, DeviceArrayBase, Storage};
use crate::gpuarray::array::layout::checked_size;
use crate::gpuarray::array::on_stream::{context_fns, OnStream};
use crate::gpuarray::elements::cast::{convert_c, headers_for};
use crate::gpuarray::elements::dtype::DType;
use crate::gpuarray::elements::element::Element;
use crate::gpuarray::elements::mean_type::MeanType;
use crate::gpuarray::kernels::source_kernels::SourceKernels;
use crate::gpuarray::linalg::stack::{
    failure_flag, first_failed, shaped, with_work, work_type, Stack, FAILED_C, MATRIX_BLOCK,
};
use crate::launch::Arg;

static KERNELS: SourceKernels<DType> = SourceKernels::new();

/// The most blocks a launch asks for; each loops over the matrices beyond.
const MAX_GRID: usize = 1 << 16;

/// The kernel for element type `t`, factoring in its work type into `out` (`t`'s `Mean`).
fn source(t: DType, out: DType) -> String {
    let w = work_type(t);
    let (tc, wc, oc) = (t.c_name(), w.c_name(), out.c_name());
    format!(
        "{headers}{failed}\
         extern \"C\" __global__ void gpu_cholesky(long long count, long long n, const {tc} *__restrict__ a, \
         {wc} *work, {oc} *l, unsigned long long *flag) {{\n\
         const unsigned t = threadIdx.x;\n\
         for (long long m = blockIdx.x; m < count; m += gridDim.x) {{\n\
             {wc} *A = work + m * n * n;\n\
             // The lower triangle; the upper one is never read (NumPy's UPLO='L').\n\
             for (long long e = t; e < n * n; e += blockDim.x) {{\n\
                 const long long r = e / n, c = e % n;\n\
                 A[e] = c <= r ? {a_e} : ({wc})0;\n\
             }}\n\
             __syncthreads();\n\
             bool failed = false;\n\
             for (long long j = 0; j < n; ++j) {{\n\
                 const {wc} d = A[j * n + j];\n\
                 // Not positive (or NaN): potrf's info > 0.\n\
                 if (!(d > ({wc})0)) {{ failed = true; break; }}\n\
                 const {wc} root = sqrt(d);\n\
                 __syncthreads();\n\
                 if (t == 0) A[j * n + j] = root;\n\
                 for (long long i = j + 1 + t; i < n; i += blockDim.x) A[i * n + j] /= root;\n\
                 __syncthreads();\n\
                 // The trailing lower triangle less the outer product of column j.\n\
                 const long long rest = n - j - 1;\n\
                 for (long long e = t; e < rest * rest; e += blockDim.x) {{\n\
                     const long long r = j + 1 + e / rest, c = j + 1 + e % rest;\n\
                     if (c <= r) A[r * n + c] -= A[r * n + j] * A[c * n + j];\n\
                 }}\n\
                 __syncthreads();\n\
             }}\n\
             if (failed) {{\n\
                 if (t == 0) gpu_failed(flag, count, m);\n\
             }} else {{\n\
                 for (long long e = t; e < n * n; e += blockDim.x) l[m * n * n + e] = {l_e};\n\
             }}\n\
             __syncthreads();\n\
         }}\n\
         }}\n",
        headers = headers_for([t, w, out]),
        failed = FAILED_C,
        a_e = convert_c(t, w, "a[m * n * n + e]"),
        l_e = convert_c(w, out, "A[e]"),
    )
}

context_fns! {
    /// The lower triangular `L` with `a = L Lᵀ` for each symmetric positive definite matrix
    /// of `a` (NumPy's and CuPy's `linalg.cholesky`), of `a`'s shape, in [`MeanType`]'s result
    /// type (`f64` for integers; `f16`/`bf16` factored in `f32`). Only the lower triangle of
    /// each matrix is read (the upper one is taken as its mirror), and the result's upper
    /// triangle is zero, as NumPy's. A matrix that is not positive definite (a pivot that is
    /// not positive, or NaN) is [`LinAlgError::NotPositiveDefinite`], naming the first; to
    /// know, the call waits for the kernel. Errors also [`LinAlgError::TooFewAxes`] and
    /// [`LinAlgError::NotSquare`].
    ///
    /// ```no_run
    /// use gpu_runtime::gpuarray::{self, DeviceArray};
    /// use gpu_runtime::ndarray::arr2;
    /// let ctx = gpu_runtime::Context::default()?;
    /// let a = DeviceArray::from_ndarray(&ctx, &arr2(&[[4.0f64, 2.0], [2.0, 5.0]]))?;
    /// assert_eq!(gpuarray::cholesky(&a)?.to_vec()?, [2.0, 0.0, 1.0, 2.0]);
    /// # Ok::<(), gpu_runtime::Error>(())
    /// ```
    fn cholesky[T: MeanType, S: Storage<Elem = T>, D: Dimension](
        &self, a: &DeviceArrayBase<S, D>
    ) -> Result<DeviceArray<T::Mean, D>> {
        const OP: &str = "cholesky";
        let stack = Stack::square(OP, a.shape())?;
        let (count, n) = (stack.count, stack.rows);
        let ctx = a.context();
        let len = checked_size(OP, &[count, n, n])?;
        let mut l = DeviceArray::<T::Mean, Ix1>::empty(ctx, len)?;
        if count > 0 {
            let ac = OnStream::new(a, self.stream).c_order()?;
            let av = ac.view();
            let mut flag = failure_flag(ctx)?;
            let (t, out) = (T::DTYPE, <T::Mean as Element>::DTYPE);
            let f = KERNELS.prepared(ctx, t, "gpu_cholesky", || source(t, out))?;
            let grid = count.min(MAX_GRID) as u32;
            with_work(ctx, T::DTYPE, len, |work| {
                let args = [
                    Arg::I64(count as i64),
                    Arg::I64(n as i64),
                    Arg::input::<T, _>(&av),
                    work,
                    Arg::output(&mut l),
                    Arg::output(&mut flag),
                ];
                crate::gpuarray::kernels::registry::launch(&f, grid, MATRIX_BLOCK, self.stream, &args)
            })?;
            if let Some(matrix) = first_failed(&flag, count)? {
                return Err(LinAlgError::NotPositiveDefinite { operation: OP, matrix }.into());
            }
        }
        shaped(l, a.shape())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpuarray::kernels::registry;
    use crate::gpuarray::linalg::stack::mean_dtype;

    #[test]
    fn the_kernel_compiles_for_every_real_element_type() {
        for t in DType::ALL.into_iter().filter(|t| !t.is_complex()) {
            let s = source(t, mean_dtype(t));
            assert_eq!(
                gpu_cuda_source::find_kernel(&s, "gpu_cholesky")
                    .unwrap()
                    .params
                    .len(),
                6
            );
            if let Err(e) = registry::compile_check(&s, "sm_90") {
                panic!("{t:?}: {e}");
            }
        }
    }
}
