//! [`MeanType`]: the type `mean`, `var` and `std` return for each element type, NumPy's.
//!
//! NumPy returns the float type of the input: `float32` for `float32`, `float16` for
//! `float16` (computed in `float32`), and `float64` for `float64`, the integers and `bool`.
//! The same here, with `bf16` as `f16`. Whatever the result type, the kernels accumulate in
//! `f64` (the sum of the mean; Welford's running mean and squared deviations, merged by
//! Chan et al.'s rule, for the variance) and round once into the result, so a result is at
//! least as precise as NumPy's (which sums `float32` in `float32`).
//!
//! A trait of its own beside [`Element`] rather than an item of it: the elements that have
//! no mean in this sense (complex numbers' mean is complex, their variance real) are left
//! out by not implementing it.

use half::{bf16, f16};

use crate::gpuarray::elements::boolean::Bool;
use crate::gpuarray::elements::element::Element;

/// An element type with a mean, variance and standard deviation
/// ([`mean`](crate::gpuarray::DeviceArrayBase::mean), [`var`](crate::gpuarray::DeviceArrayBase::var),
/// [`std`](crate::gpuarray::DeviceArrayBase::std) and their `_axis` forms), and the float type
/// they are returned in (NumPy's):
///
/// | element | `Mean` |
/// |---|---|
/// | `f32` | `f32` |
/// | `f64` | `f64` |
/// | `half::f16` | `half::f16` |
/// | `half::bf16` | `half::bf16` |
/// | `i8` to `u64`, [`Bool`] | `f64` |
///
/// Each is accumulated in `f64` and rounded once into `Mean`.
///
/// ```
/// use gpu_runtime::gpuarray::MeanType;
/// fn mean_type<T: MeanType>() -> &'static str {
///     std::any::type_name::<T::Mean>()
/// }
/// assert_eq!(mean_type::<f32>(), "f32");
/// assert_eq!(mean_type::<i32>(), "f64");
/// ```
pub trait MeanType: Element {
    /// The type of the mean, the variance and the standard deviation.
    type Mean: Element;
}

/// `M: T, ...;` implements [`MeanType`] for each `T` with `Mean = M`.
macro_rules! mean_type {
    ($($mean:ty: $($t:ty),+;)*) => {$($(
        impl MeanType for $t {
            type Mean = $mean;
        }
    )+)*};
}

mean_type!(
    f32: f32;
    f64: f64, i8, u8, i16, u16, i32, u32, i64, u64, Bool;
    f16: f16;
    bf16: bf16;
);

#[cfg(test)]
mod tests {
    use gpu_cuda_source::Scalar;

    use super::*;

    fn mean_scalar<T: MeanType>() -> Scalar {
        T::Mean::SCALAR
    }

    #[test]
    fn floats_keep_their_type_and_the_others_are_f64() {
        assert_eq!(mean_scalar::<f32>(), Scalar::F32);
        assert_eq!(mean_scalar::<f16>(), Scalar::F16);
        assert_eq!(mean_scalar::<bf16>(), Scalar::Bf16);
        assert_eq!(mean_scalar::<f64>(), Scalar::F64);
        assert_eq!(mean_scalar::<u8>(), Scalar::F64);
        assert_eq!(mean_scalar::<i64>(), Scalar::F64);
        assert_eq!(mean_scalar::<Bool>(), Scalar::F64);
    }
}
