//! [`Complex32`] and [`Complex64`] as array elements: `gpu_runtime::complex<float>` and
//! `gpu_runtime::complex<double>` in C, from `<gpu_runtime/complex.h>` (built into every
//! compile), which generated kernels include when one of their elements is complex.
//!
//! A complex number is passed to a kernel by value as the CUDA vector of its two parts
//! (`float2`, `double2`: the same size and alignment), an owned [`Arg`] that a launch accepts
//! for a parameter of a C struct type of that size.

use gpu_cuda_source::Scalar;

use crate::gpuarray::elements::dtype::DType;
use crate::gpuarray::elements::element::{sealed, Element, Kind};
use crate::launch::Arg;
use crate::types::{Complex32, Complex64, Double2, Float2};

/// Complex numbers have no order: the limits that are `max`'s and `min`'s neutral elements
/// are NaN parts, and the reductions that need an order refuse complex arrays before this is
/// ever used.
const NO_ORDER_F32: &str =
    "gpu_runtime::complex<float>(__int_as_float(0x7fc00000), __int_as_float(0x7fc00000))";
const NO_ORDER_F64: &str = "gpu_runtime::complex<double>(__longlong_as_double(0x7ff8000000000000ll), __longlong_as_double(0x7ff8000000000000ll))";

/// `Element` (and [`ComplexElement`]) for the complex type `$t` of parts `$part` (`$part_ty`,
/// C's `$c`), passed as the CUDA vector `$vector` of its parts.
macro_rules! complex_element {
    ($t:ident, $part:ident, $part_ty:ty, $c:literal, $vector:ident, $no_order:expr) => {
        impl sealed::Sealed for $t {}
        impl ComplexElement for $t {
            type Part = $part_ty;
        }
        impl Element for $t {
            const SCALAR: Scalar = Scalar::$part;
            const DTYPE: DType = DType::$t;
            const KIND: Kind = Kind::Complex;
            const C_LOWEST: &'static str = $no_order;
            const C_HIGHEST: &'static str = $no_order;
            fn to_arg(self) -> Arg<'static> {
                Arg::vector($vector::new(self.re, self.im))
            }
            fn c_literal(self) -> String {
                // The bits of each part, so that every value (NaN, infinities, -0) round-trips.
                format!(
                    concat!("gpu_runtime::complex<", $c, ">({}, {})"),
                    self.re.c_literal(),
                    self.im.c_literal()
                )
            }
            fn zero() -> Self {
                $t::new(0.0, 0.0)
            }
        }
    };
}

complex_element!(Complex32, F32, f32, "float", Float2, NO_ORDER_F32);
complex_element!(Complex64, F64, f64, "double", Double2, NO_ORDER_F64);

/// A complex element type: [`Complex32`] (parts `f32`) or [`Complex64`] (parts `f64`).
///
/// Sealed, through [`Inexact`](crate::gpuarray::elements::inexact::Inexact).
pub trait ComplexElement: crate::gpuarray::elements::inexact::Inexact {
    /// The type of the real and imaginary parts (`f32`, `f64`).
    type Part: Element;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn c_names_literals_and_layout() {
        assert_eq!(Complex32::c_name(), "gpu_runtime::complex<float>");
        assert_eq!(Complex64::c_name(), "gpu_runtime::complex<double>");
        assert_eq!(
            Complex32::new(1.0, -0.0).c_literal(),
            "gpu_runtime::complex<float>(__int_as_float(0x3f800000), __int_as_float(0x80000000))"
        );
        assert_eq!(std::mem::size_of::<Complex64>(), std::mem::size_of::<Double2>());
        assert_eq!(std::mem::size_of::<Complex32>(), std::mem::size_of::<Float2>());
        assert_eq!(Complex32::DTYPE.size(), 8);
    }
}
