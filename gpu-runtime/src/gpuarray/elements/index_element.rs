//! [`IndexElement`]: the integer types an index array may hold (NumPy takes any integer array
//! as indices, not only `intp`), and how a generated kernel reads one as a signed 64-bit index.

use crate::gpuarray::elements::dtype::DType;
use crate::gpuarray::elements::element::{Element, Kind};

/// An integer element type whose arrays index other arrays (`take`, `put`,
/// `take_along_axis`, ...) or count into bins (`bincount`): `i8` to `i64` and `u8` to `u64`.
///
/// Sealed: the kernels read each type through [`c_to_index`](Self::c_to_index).
pub trait IndexElement: Element + sealed::Sealed {
    /// The value, exactly.
    fn to_i128(self) -> i128;

    /// The C expression of `x` (of this type) as a `long long` index. A `u64` above
    /// `i64::MAX` reads as `i64::MAX`, out of range of every axis, rather than wrapping to a
    /// negative index that would count from the end.
    fn c_to_index(x: &str) -> String {
        if Self::KIND == Kind::UInt && std::mem::size_of::<Self>() == 8 {
            format!("(({x}) > 9223372036854775807ull ? 9223372036854775807ll : (long long)({x}))")
        } else {
            format!("((long long)({x}))")
        }
    }
}

pub(super) mod sealed {
    /// Implemented only in this crate: see [`IndexElement`](super::IndexElement).
    pub trait Sealed {}
}

macro_rules! index_element {
    ($($t:ty),*) => {$(
        impl sealed::Sealed for $t {}
        impl IndexElement for $t {
            fn to_i128(self) -> i128 {
                self as i128
            }
        }
    )*};
}

index_element!(i8, u8, i16, u16, i32, u32, i64, u64);

/// The C expression of element `x` of an index array of type `index`, as the `long long` that
/// `gather`'s `INDEX_FN` takes (see [`IndexElement::c_to_index`]: a `u64` clamped, the rest as `i64`).
pub(crate) fn read_index(index: DType, x: &str) -> String {
    match index {
        DType::U64 => u64::c_to_index(x),
        _ => i64::c_to_index(x),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_u64_is_clamped() {
        assert_eq!(i32::c_to_index("x"), "((long long)(x))");
        assert_eq!(u32::c_to_index("x"), "((long long)(x))");
        assert!(u64::c_to_index("x").contains("9223372036854775807ll"));
    }
}
