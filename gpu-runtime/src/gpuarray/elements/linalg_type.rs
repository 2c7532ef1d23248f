//! [`LinalgType`]: the element types `det`, `slogdet`, `inv` and `solve` take, and the types
//! of their results, NumPy's.
//!
//! As [`MeanType`](crate::gpuarray::MeanType) for the real types (NumPy factors `float32` in
//! `float32` and the integers and `bool` in `float64`; `f16` and `bf16`, which NumPy refuses,
//! are factored in `f32` as CuPy does and returned in their own type), and the complex types
//! as they are, with the magnitude (`slogdet`'s `logabsdet`) in their part type. A trait of
//! its own because the functions built on the real-only factorizations (`cholesky`, `eigh`,
//! `svd`, `qr`) keep [`MeanType`](crate::gpuarray::MeanType), which has no complex types.

use half::{bf16, f16};

use crate::gpuarray::elements::boolean::Bool;
use crate::gpuarray::elements::element::Element;
use crate::types::{Complex32, Complex64};

/// An element type of [`det`](crate::gpuarray::det), [`slogdet`](crate::gpuarray::slogdet),
/// [`inv`](crate::gpuarray::inv), [`solve`](crate::gpuarray::solve) (and
/// [`tensorsolve`](crate::gpuarray::tensorsolve), [`tensorinv`](crate::gpuarray::tensorinv)),
/// and the types of their results (NumPy's):
///
/// | element | `Out` (determinants, inverses, solutions, `slogdet`'s sign) | `Real` (`slogdet`'s `logabsdet`) |
/// |---|---|---|
/// | `f32`, `f64`, `half::f16`, `half::bf16` | the same | the same |
/// | `i8` to `u64`, [`Bool`] | `f64` | `f64` |
/// | [`Complex32`] | [`Complex32`] | `f32` |
/// | [`Complex64`] | [`Complex64`] | `f64` |
///
/// ```
/// use gpu_runtime::gpuarray::{DType, Element, LinalgType};
/// use gpu_runtime::types::Complex64;
/// fn types<T: LinalgType>() -> (DType, DType) {
///     (T::Out::DTYPE, T::Real::DTYPE)
/// }
/// assert_eq!(types::<i32>(), (DType::F64, DType::F64));
/// assert_eq!(types::<Complex64>(), (DType::Complex64, DType::F64));
/// ```
pub trait LinalgType: Element {
    /// The type of determinants, inverses and solutions (and of `slogdet`'s sign).
    type Out: Element;
    /// The type of a magnitude: `slogdet`'s `logabsdet`.
    type Real: Element;
}

/// `Out, Real: T, ...;` implements [`LinalgType`] for each `T` with those types.
macro_rules! linalg_type {
    ($($out:ty, $real:ty: $($t:ty),+;)*) => {$($(
        impl LinalgType for $t {
            type Out = $out;
            type Real = $real;
        }
    )+)*};
}

linalg_type!(
    f32, f32: f32;
    f64, f64: f64, i8, u8, i16, u16, i32, u32, i64, u64, Bool;
    f16, f16: f16;
    bf16, bf16: bf16;
    Complex32, f32: Complex32;
    Complex64, f64: Complex64;
);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpuarray::elements::dtype::DType;
    use crate::gpuarray::elements::mean_type::MeanType;

    fn types<T: LinalgType>() -> (DType, DType) {
        (T::Out::DTYPE, T::Real::DTYPE)
    }

    fn mean<T: MeanType>() -> DType {
        T::Mean::DTYPE
    }

    #[test]
    fn the_real_types_are_mean_types_and_the_complex_ones_keep_themselves() {
        assert_eq!(types::<f32>(), (mean::<f32>(), mean::<f32>()));
        assert_eq!(types::<f16>(), (mean::<f16>(), mean::<f16>()));
        assert_eq!(types::<i32>(), (mean::<i32>(), mean::<i32>()));
        assert_eq!(types::<Bool>(), (mean::<Bool>(), mean::<Bool>()));
        assert_eq!(types::<Complex32>(), (DType::Complex32, DType::F32));
        assert_eq!(types::<Complex64>(), (DType::Complex64, DType::F64));
    }
}
