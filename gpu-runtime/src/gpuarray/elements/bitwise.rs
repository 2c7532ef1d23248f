//! [`Bitwise`]: the element types of NumPy's bitwise operators (`&`, `|`, `^`, `~`), `bool`
//! and the integers.

use crate::gpuarray::elements::element::Element;

/// An element type of the bitwise operators `&`, `|`, `^` and `!` (NumPy's `bitwise_and`,
/// `bitwise_or`, `bitwise_xor`, `invert`): [`Bool`](crate::gpuarray::Bool) (where `!` is the
/// logical not, as NumPy's `~` on a `bool` array) and the integers `i8` to `u64`. The shifts,
/// `gcd`, `lcm` and `bitwise_count` take the integers only
/// ([`IndexElement`](crate::gpuarray::IndexElement)).
///
/// Sealed: floats and complex numbers have no bits NumPy operates on.
pub trait Bitwise: Element + sealed::Sealed {}

mod sealed {
    pub trait Sealed {}
}

macro_rules! bitwise {
    ($($t:ty),*) => {$(
        impl sealed::Sealed for $t {}
        impl Bitwise for $t {}
    )*};
}
bitwise! { crate::gpuarray::elements::boolean::Bool, i8, u8, i16, u16, i32, u32, i64, u64 }
