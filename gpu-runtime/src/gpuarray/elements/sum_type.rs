//! [`SumType`]: the type NumPy 2 gives `sum`, `prod`, `cumsum` and `cumprod` of each element
//! type when no `dtype=` is named.
//!
//! NumPy accumulates the integers narrower than the platform integer in it: `bool`, `int8`,
//! `int16` and `int32` in `int64`, and `uint8`, `uint16` and `uint32` in `uint64` (on Linux,
//! where the platform integer is 64 bits). Every other type keeps its own: the floats (`float16`
//! is summed through `float32` and rounded once, which `sum` here does too), the complex types
//! and the 64-bit integers.
//!
//! A trait of its own beside [`Element`] (as [`MeanType`](crate::gpuarray::MeanType)) rather
//! than a change of `sum`'s return type: `sum()` keeps returning the element type (PyCUDA's
//! `gpuarray.sum`, and every caller written against it), and the `_np` forms
//! ([`sum_np`](crate::gpuarray::DeviceArrayBase::sum_np) and the others) return this one.

use half::{bf16, f16};

use crate::gpuarray::elements::boolean::Bool;
use crate::gpuarray::elements::element::Element;
use crate::types::{Complex32, Complex64};

/// An element type and the type NumPy 2 sums and multiplies it in when no `dtype=` is named
/// ([`sum_np`](crate::gpuarray::DeviceArrayBase::sum_np),
/// [`prod_np`](crate::gpuarray::DeviceArrayBase::prod_np),
/// [`cumsum_np`](crate::gpuarray::DeviceArrayBase::cumsum_np), ...):
///
/// | element | `Sum` |
/// |---|---|
/// | [`Bool`], `i8`, `i16`, `i32`, `i64` | `i64` |
/// | `u8`, `u16`, `u32`, `u64` | `u64` |
/// | the floats, the complex types | the element type |
///
/// ```
/// use gpu_runtime::gpuarray::SumType;
/// fn sum_type<T: SumType>() -> &'static str {
///     std::any::type_name::<T::Sum>()
/// }
/// assert_eq!(sum_type::<i16>(), "i64");
/// assert_eq!(sum_type::<u8>(), "u64");
/// assert_eq!(sum_type::<f32>(), "f32");
/// ```
pub trait SumType: Element {
    /// The accumulator and result type of `sum`, `prod`, `cumsum` and `cumprod`.
    type Sum: Element;
}

/// `S: T, ...;` implements [`SumType`] for each `T` with `Sum = S`.
macro_rules! sum_type {
    ($($sum:ty: $($t:ty),+;)*) => {$($(
        impl SumType for $t {
            type Sum = $sum;
        }
    )+)*};
}

sum_type!(
    i64: Bool, i8, i16, i32, i64;
    u64: u8, u16, u32, u64;
    f16: f16;
    bf16: bf16;
    f32: f32;
    f64: f64;
    Complex32: Complex32;
    Complex64: Complex64;
);

#[cfg(test)]
mod tests {
    use gpu_cuda_source::Scalar;

    use super::*;
    use crate::gpuarray::elements::dtype::DType;

    fn sum_dtype<T: SumType>() -> DType {
        T::Sum::DTYPE
    }

    /// NumPy 2 on Linux: `np.add.reduce(np.zeros(1, t)).dtype` for each type.
    #[test]
    fn small_integers_widen_to_64_bits_and_the_rest_keep_their_type() {
        assert_eq!(sum_dtype::<Bool>(), DType::I64);
        assert_eq!(sum_dtype::<i8>(), DType::I64);
        assert_eq!(sum_dtype::<i16>(), DType::I64);
        assert_eq!(sum_dtype::<i32>(), DType::I64);
        assert_eq!(sum_dtype::<i64>(), DType::I64);
        assert_eq!(sum_dtype::<u8>(), DType::U64);
        assert_eq!(sum_dtype::<u16>(), DType::U64);
        assert_eq!(sum_dtype::<u32>(), DType::U64);
        assert_eq!(sum_dtype::<u64>(), DType::U64);
        assert_eq!(<f16 as SumType>::Sum::SCALAR, Scalar::F16);
        assert_eq!(sum_dtype::<bf16>(), DType::Bf16);
        assert_eq!(sum_dtype::<f32>(), DType::F32);
        assert_eq!(sum_dtype::<f64>(), DType::F64);
        assert_eq!(sum_dtype::<Complex32>(), DType::Complex32);
        assert_eq!(sum_dtype::<Complex64>(), DType::Complex64);
    }
}
