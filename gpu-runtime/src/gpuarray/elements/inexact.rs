//! [`Inexact`]: the element types of the math functions defined on real and complex numbers
//! alike (re-exported by [`math`](crate::gpuarray::math), which defines them).

use crate::gpuarray::elements::element::Element;
use crate::gpuarray::elements::promotion::TrueDivide;

/// NumPy's inexact types: the floats `f16`, `bf16` (computed in `float` and rounded once, as
/// NumPy computes `float16`), `f32` and `f64` and the complex numbers
/// [`Complex32`](crate::types::Complex32) and [`Complex64`](crate::types::Complex64), on
/// which `exp`, `log`, `log10`, `sqrt`, `sin`, `cos`, `tan`, `sinh`, `cosh` and `tanh` are
/// defined (the complex ones from `<gpu_runtime/complex.h>`).
///
/// Sealed: each type's C functions are named in the crate's table. Their true division
/// (`/`) stays in the type.
pub trait Inexact: Element + TrueDivide<Quotient = Self> + sealed::Sealed {}

impl Inexact for half::f16 {}
impl Inexact for half::bf16 {}
impl Inexact for f32 {}
impl Inexact for f64 {}
impl Inexact for crate::types::Complex32 {}
impl Inexact for crate::types::Complex64 {}

/// An element type the math functions of [`Inexact`] elements take (`exp`, `log`, `sqrt`,
/// `sin`, ..., `isnan`), and the [`Inexact`] type NumPy 2 computes them in: an inexact type
/// itself; `bool` and the 8-bit integers `f16`; the 16-bit integers `f32`; the 32- and 64-bit
/// integers `f64` (`exp` of an `i32` array is an `f64` array, as `np.exp` gives). The
/// integers' rows are in [`math`](crate::gpuarray::math), beside `ToFloat`'s.
pub trait ToInexact: Element {
    /// The type the function computes in and returns.
    type Inexact: Inexact;
}

impl<T: Inexact> ToInexact for T {
    type Inexact = T;
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for half::f16 {}
    impl Sealed for half::bf16 {}
    impl Sealed for f32 {}
    impl Sealed for f64 {}
    impl Sealed for crate::types::Complex32 {}
    impl Sealed for crate::types::Complex64 {}
}
