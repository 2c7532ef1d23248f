//! What NumPy's `linalg` functions share: an array read as a stack of matrices (its last two
//! axes; the leading ones count the matrices), the type a matrix is factored in, and the
//! flag word a factorization kernel writes back (the first matrix it could not factor).

use ndarray::{Dimension, Ix1, IxDyn};

use crate::driver::context::core::Context;
use crate::driver::memory::buffer::DeviceBuffer;
use crate::error::{ArrayShapeError, LinAlgError, Result};
use crate::gpuarray::array::core::DeviceArray;
use crate::gpuarray::array::layout::checked_size;
use crate::gpuarray::elements::dtype::DType;
use crate::gpuarray::elements::element::Element;
use crate::launch::Arg;

/// The threads of the one block that factors one matrix (a power of two: block sums halve it).
pub(crate) const MATRIX_BLOCK: u32 = 256;

/// C: `gpu_failed(flag, count, m)` records that matrix `m` of `count` could not be factored.
/// The flag (one zeroed `u64`) keeps the first such matrix, as `count - m` by `atomicMax`, so
/// that zero means every matrix was factored and no order of blocks changes the answer.
pub(crate) const FAILED_C: &str =
    "__device__ void gpu_failed(unsigned long long *flag, long long count, long long m) {\n\
    atomicMax(flag, (unsigned long long)(count - m));\n\
}\n";

/// `total`, the elements of one block's workspace for a matrix of `shape` (`None` where their
/// sum overflowed): [`ArrayShapeError::ElementsOverflow`] unless it is at most `isize::MAX`.
pub(crate) fn workspace(operation: &'static str, shape: [usize; 2], total: Option<usize>) -> Result<usize> {
    total.filter(|&x| x <= isize::MAX as usize).ok_or_else(|| {
        ArrayShapeError::ElementsOverflow {
            operation,
            shape: shape.to_vec(),
        }
        .into()
    })
}

/// A zeroed flag for [`FAILED_C`].
pub(crate) fn failure_flag(ctx: &Context) -> Result<DeviceBuffer<u64>> {
    DeviceBuffer::zeros(ctx, 1)
}

/// The first matrix of `count` that the kernel recorded in `flag` as not factored, if any.
/// Reads the flag back, so waits for the kernel.
pub(crate) fn first_failed(flag: &DeviceBuffer<u64>, count: usize) -> Result<Option<usize>> {
    let v = flag.to_vec()?;
    Ok(v.first()
        .copied()
        .filter(|&f| f > 0)
        .map(|f| count.saturating_sub(f as usize)))
}

/// An array's shape as a stack of `count` matrices of `rows x cols` each.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Stack {
    /// The leading axes (NumPy's batch shape), which count the matrices.
    pub(crate) batch: Vec<usize>,
    /// The matrices: the product of `batch`.
    pub(crate) count: usize,
    /// The rows of each matrix.
    pub(crate) rows: usize,
    /// The columns of each matrix.
    pub(crate) cols: usize,
}

impl Stack {
    /// `shape` as a stack of matrices: at least two axes (else [`LinAlgError::TooFewAxes`]).
    pub(crate) fn of(operation: &'static str, shape: &[usize]) -> Result<Stack> {
        let axes = shape.len();
        if axes < 2 {
            return Err(LinAlgError::TooFewAxes { operation, axes }.into());
        }
        let batch = shape[..axes - 2].to_vec();
        Ok(Stack {
            count: checked_size(operation, &batch)?,
            batch,
            rows: shape[axes - 2],
            cols: shape[axes - 1],
        })
    }

    /// `shape` as a stack of square matrices (else [`LinAlgError::NotSquare`]).
    pub(crate) fn square(operation: &'static str, shape: &[usize]) -> Result<Stack> {
        let stack = Stack::of(operation, shape)?;
        if stack.rows != stack.cols {
            return Err(LinAlgError::NotSquare {
                operation,
                shape: shape.to_vec(),
            }
            .into());
        }
        Ok(stack)
    }

    /// The batch shape followed by `tail` (the shape of a result of this stack).
    pub(crate) fn shape_with(&self, tail: &[usize]) -> Vec<usize> {
        self.batch.iter().chain(tail).copied().collect()
    }
}

/// The type a matrix of `t` is factored in: `double` for `f64`, the integers and `bool` (whose
/// results are `f64`, NumPy's), `float` for `f32`, `f16` and `bf16` (NumPy refuses the half
/// types; CuPy computes them in `float32`, as here); a complex type in itself (only the LU
/// functions take one).
pub(crate) fn work_type(t: DType) -> DType {
    match t {
        DType::F32 | DType::F16 | DType::Bf16 => DType::F32,
        DType::Complex32 | DType::Complex64 => t,
        _ => DType::F64,
    }
}

/// Runs `launch` with a workspace of `len` elements of the real work type of `t` ([`work_type`]:
/// `f32` or `f64`), dropped once the launch is queued.
pub(crate) fn with_work(
    ctx: &Context,
    t: DType,
    len: usize,
    launch: impl FnOnce(Arg<'_>) -> Result<()>,
) -> Result<()> {
    if work_type(t) == DType::F32 {
        let mut work = DeviceArray::<f32, Ix1>::empty(ctx, len)?;
        launch(Arg::output(&mut work))
    } else {
        let mut work = DeviceArray::<f64, Ix1>::empty(ctx, len)?;
        launch(Arg::output(&mut work))
    }
}

/// A kernel template's lines with those marked `marker` kept (without the mark) only when
/// `keep`, each ended by a newline.
pub(crate) fn marked_lines(template: &str, marker: &str, keep: bool) -> String {
    template
        .lines()
        .filter_map(|l| match l.trim_start().strip_prefix(marker) {
            Some(rest) => keep.then(|| format!("{}{rest}", &l[..l.len() - l.trim_start().len()])),
            None => Some(l.to_owned()),
        })
        .map(|l| l + "\n")
        .collect()
}

/// The part type of a complex type, and a real type itself: the type of a magnitude of `t`.
pub(crate) fn real_type(t: DType) -> DType {
    match t {
        DType::Complex32 => DType::F32,
        DType::Complex64 => DType::F64,
        real => real,
    }
}

/// C for the LU kernels of the work type `w` (real or complex), so that one kernel text
/// serves both: `gpu_lu_mag(x)`, the magnitude a pivot is chosen by (LAPACK's: `|x|`, and
/// `|re| + |im|` for a complex `x`, as `izamax`), of the part type; `gpu_lu_shfl(v, lane)`,
/// a warp shuffle of a value of `w`; `gpu_lu_slog(u, sign, logabs)`, a pivot `u` taken into
/// `slogdet`'s sign (of `w`: `±1`, or `u / |u|` multiplied in for a complex `u`) and the
/// logarithm of the magnitude (of the part type).
pub(crate) fn lu_helpers_c(w: DType) -> String {
    let (wc, rc) = (w.c_name(), real_type(w).c_name());
    if w.is_complex() {
        format!(
            "__device__ __forceinline__ {rc} gpu_lu_mag(const {wc} &x) {{ return fabs(x.real()) + fabs(x.imag()); }}\n\
             __device__ __forceinline__ {wc} gpu_lu_shfl(const {wc} &v, int lane) {{\n\
                 return {wc}(__shfl_sync(0xffffffffu, v.real(), lane), __shfl_sync(0xffffffffu, v.imag(), lane));\n\
             }}\n\
             __device__ __forceinline__ void gpu_lu_slog(const {wc} &u, {wc} &sign, {rc} &logabs) {{\n\
                 const {rc} a = abs(u); sign *= u / a; logabs += log(a);\n\
             }}\n"
        )
    } else {
        format!(
            "__device__ __forceinline__ {rc} gpu_lu_mag({wc} x) {{ return fabs(x); }}\n\
             __device__ __forceinline__ {wc} gpu_lu_shfl({wc} v, int lane) {{ return __shfl_sync(0xffffffffu, v, lane); }}\n\
             __device__ __forceinline__ void gpu_lu_slog({wc} u, {wc} &sign, {rc} &logabs) {{\n\
                 if (u < 0) sign = -sign; logabs += log(fabs(u));\n\
             }}\n"
        )
    }
}

/// The machine epsilon of the work type `w`, spelled for C.
pub(crate) fn work_epsilon(w: DType) -> &'static str {
    if w == DType::F32 {
        "1.1920928955078125e-07f"
    } else {
        "2.220446049250313e-16"
    }
}

/// `flat` (a result in C order) as an array of `shape` and the dimension type `D`.
pub(crate) fn shaped<T: Element, D: Dimension>(
    flat: DeviceArray<T, Ix1>,
    shape: &[usize],
) -> Result<DeviceArray<T, D>> {
    flat.reshape(IxDyn(shape))?.into_dimensionality::<D>()
}

/// The [`MeanType`](crate::gpuarray::MeanType) result type of `t` (for tests that build a
/// kernel from a `DType`).
#[cfg(test)]
pub(crate) fn mean_dtype(t: DType) -> DType {
    match t {
        DType::F32 | DType::F16 | DType::Bf16 | DType::Complex32 | DType::Complex64 => t,
        _ => DType::F64,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shape_is_read_as_a_stack_of_matrices() {
        let s = Stack::of("det", &[2, 3, 4, 5]).unwrap();
        assert_eq!((s.batch.clone(), s.count, s.rows, s.cols), (vec![2, 3], 6, 4, 5));
        assert_eq!(s.shape_with(&[4]), [2, 3, 4]);
        let one = Stack::square("det", &[3, 3]).unwrap();
        assert_eq!((one.count, one.batch.len()), (1, 0));
        let none = Stack::square("det", &[0, 2, 2]).unwrap();
        assert_eq!(none.count, 0);
        assert!(matches!(
            Stack::of("det", &[4]),
            Err(crate::error::Error::LinAlg(LinAlgError::TooFewAxes {
                axes: 1,
                ..
            }))
        ));
        assert!(matches!(
            Stack::square("inv", &[2, 3]),
            Err(crate::error::Error::LinAlg(LinAlgError::NotSquare { .. }))
        ));
    }

    #[test]
    fn the_work_type_is_f32_for_the_small_floats_and_f64_else() {
        assert_eq!(work_type(DType::F16), DType::F32);
        assert_eq!(work_type(DType::Bf16), DType::F32);
        assert_eq!(work_type(DType::F32), DType::F32);
        assert_eq!(work_type(DType::I8), DType::F64);
        assert_eq!(work_type(DType::F64), DType::F64);
    }
}
