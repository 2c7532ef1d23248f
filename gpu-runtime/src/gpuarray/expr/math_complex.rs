//! The functions of complex arrays alone (NumPy's `conj`, `real`, `imag`, `angle`, and `abs`
//! of a complex array, which gives its part type), as steps of an [`Expr`] and as array
//! functions, re-exported by [`math`](crate::gpuarray::math).
//!
//! `real` and `imag` give new arrays of the part type (NumPy gives views; a device array of
//! one element type cannot view another's storage here). The magnitude is
//! [`complex_abs`]: [`math::abs`](crate::gpuarray::math::abs) keeps its element type, so on
//! a complex array it is refused with a typed error when evaluated, as are the comparisons
//! other than `==` and `!=`, `maximum`/`minimum`, `sign`, `%`, `//` and the float-only
//! functions (`floor`, `fmod`, ...).
//!
//! ```no_run
//! use gpu_runtime::gpuarray::{math, DeviceArray};
//! use gpu_runtime::types::Complex32;
//! use gpu_runtime::{ndarray::Array1, Context};
//! let ctx = Context::default()?;
//! let z = DeviceArray::from_ndarray(&ctx, &Array1::from(vec![Complex32::new(3.0, 4.0)]))?;
//! assert_eq!(math::complex_abs(&z)?.to_vec()?, vec![5.0f32]);
//! assert_eq!(math::conj(&z)?.to_vec()?, vec![Complex32::new(3.0, -4.0)]);
//! let rotated = (&z * Complex32::new(0.0, 1.0)).exp().eval()?;
//! # Ok::<(), gpu_runtime::Error>(())
//! ```

use ndarray::{Dimension, IxDyn};

use crate::error::Result;
use crate::gpuarray::array::core::{DeviceArray, DeviceArrayBase, StorageMut};
use crate::gpuarray::expr::core::{Expr, Operand};
use crate::gpuarray::expr::func::Func;

pub use crate::gpuarray::elements::complex::ComplexElement;

impl<'a, T: ComplexElement> Expr<'a, T> {
    /// The complex conjugate of each element, as a step of this expression.
    pub fn conj(self) -> Expr<'a, T> {
        Expr::call(Func::Conj, vec![self.untyped()])
    }

    /// The real part of each element.
    pub fn real(self) -> Expr<'a, T::Part> {
        Expr::call(Func::Real, vec![self.untyped()])
    }

    /// The imaginary part of each element.
    pub fn imag(self) -> Expr<'a, T::Part> {
        Expr::call(Func::Imag, vec![self.untyped()])
    }

    /// The angle of each element in radians, `atan2(im, re)` (NumPy's `angle`).
    pub fn angle(self) -> Expr<'a, T::Part> {
        Expr::call(Func::Angle, vec![self.untyped()])
    }

    /// The magnitude of each element, `hypot(re, im)` (NumPy's `abs` of a complex array):
    /// infinite when either part is, even with a NaN other part.
    pub fn complex_abs(self) -> Expr<'a, T::Part> {
        Expr::call(Func::ComplexAbs, vec![self.untyped()])
    }
}

/// The array forms of each function (see [`math`](crate::gpuarray::math)).
macro_rules! complex_fns {
    ($($name:ident $into:ident => $out:ty, $doc:literal;)*) => {$(
        #[doc = concat!($doc, " of each element of a complex array, into a new array, on the legacy default stream (on a stream: `a.expr().", stringify!($name), "().on(&stream).eval()`).")]
        pub fn $name<'a, T: ComplexElement>(x: impl Operand<'a, T>) -> Result<DeviceArray<$out, IxDyn>> {
            x.into_expr().$name().eval()
        }
        #[doc = concat!("[`", stringify!($name), "`] into `out` (of `x`'s shape, any layout; NumPy's `out=`).")]
        pub fn $into<'a, T: ComplexElement, S: StorageMut<Elem = $out>, D: Dimension>(
            x: impl Operand<'a, T>,
            out: &mut DeviceArrayBase<S, D>,
        ) -> Result<()> {
            x.into_expr().$name().eval_into(out)
        }
    )*};
}

complex_fns!(
    conj conj_into => T, "The complex conjugate";
    real real_into => T::Part, "The real part";
    imag imag_into => T::Part, "The imaginary part";
    angle angle_into => T::Part, "The angle (`atan2(im, re)`)";
    complex_abs complex_abs_into => T::Part, "The magnitude (NumPy's `abs` on complex)";
);
