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

use crate::error::{ArrayShapeError, Result};
use crate::gpuarray::array::core::{DeviceArray, DeviceArrayBase, Storage, StorageMut};
use crate::gpuarray::array::on_stream::{context_fns, on_legacy_stream, OnStream};
use crate::gpuarray::elements::dtype::DType;
use crate::gpuarray::elements::element::Element;
use crate::gpuarray::expr::core::{call_steps, Expr, Operand};
use crate::gpuarray::expr::func::Func;

pub use crate::gpuarray::elements::complex::ComplexElement;

impl<'a, T: ComplexElement> Expr<'a, T> {
    call_steps! {
        /// The complex conjugate of each element, as a step of this expression.
        conj() -> T = Func::Conj;
        /// The real part of each element.
        real() -> T::Part = Func::Real;
        /// The imaginary part of each element.
        imag() -> T::Part = Func::Imag;
        /// The angle of each element in radians, `atan2(im, re)` (NumPy's `angle`).
        angle() -> T::Part = Func::Angle;
        /// The magnitude of each element, `hypot(re, im)` (NumPy's `abs` of a complex array):
        /// infinite when either part is, even with a NaN other part.
        complex_abs() -> T::Part = Func::ComplexAbs;
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

context_fns! {
    /// The real parts of `a` if every imaginary part is within `tol` of zero, else `None` (the
    /// complex array stays the answer; NumPy's `real_if_close(a, tol)`, which returns `a`
    /// itself then). `tol` above 1 counts machine epsilons of the part type (NumPy's default is
    /// 100), otherwise it is absolute. Waits for the check.
    ///
    /// ```no_run
    /// use gpu_runtime::gpuarray::{math, DeviceArray};
    /// use gpu_runtime::types::Complex64;
    /// use gpu_runtime::{ndarray::Array1, Context};
    /// let ctx = Context::default()?;
    /// let z = DeviceArray::from_ndarray(&ctx, &Array1::from(vec![Complex64::new(2.1, 4e-14)]))?;
    /// assert_eq!(math::real_if_close(&z, 1000.0)?.map(|r| r.to_vec()).transpose()?, Some(vec![2.1]));
    /// assert!(math::real_if_close(&z, 1.0e-15)?.is_none());
    /// # Ok::<(), gpu_runtime::Error>(())
    /// ```
    fn real_if_close[T: ComplexElement, S: Storage<Elem = T>, D: Dimension](
        &self, a: &DeviceArrayBase<S, D>, tol: f64
    ) -> Result<Option<DeviceArray<T::Part, D>>> {
        let eps = match <T::Part as Element>::DTYPE {
            DType::F32 => f64::from(f32::EPSILON),
            _ => f64::EPSILON,
        };
        let tol = if tol > 1.0 { tol * eps } else { tol };
        // NumPy's `tol` is a scalar of the part type: compared in it.
        let limit = Expr::scalar(tol).cast::<T::Part>();
        let close = a.expr().imag().abs().lt(limit);
        let close = OnStream::new(close, self.stream).eval()?;
        if !OnStream::new(&close, self.stream).all()? {
            return Ok(None);
        }
        let real = OnStream::new(a.expr().real(), self.stream).eval()?;
        Ok(Some(real.into_dimensionality()?))
    }
}

impl<T: ComplexElement, S: Storage<Elem = T>, D: Dimension> DeviceArrayBase<S, D> {
    on_legacy_stream! {
        /// The elements sorted along the last axis by real part, then imaginary part (NumPy's
        /// `sort_complex(a)`), NaN parts last as NumPy orders them (`R + Rj`, `R + nanj`,
        /// `nan + Rj`, `nan + nanj`), in a new array of this shape; stable. A 0-d array has no
        /// axis ([`ArrayShapeError::ZeroDimensional`]). (NumPy also takes real arrays and returns
        /// them complex: `a.sort()` and `astype` do that here.)
        ///
        /// ```no_run
        /// use gpu_runtime::gpuarray::DeviceArray;
        /// use gpu_runtime::types::Complex64;
        /// use gpu_runtime::{ndarray::arr1, Context};
        /// let ctx = Context::default()?;
        /// let z = [(1.0, 2.0), (2.0, -1.0), (1.0, -1.0), (3.0, 0.0)].map(|(r, i)| Complex64::new(r, i));
        /// let a = DeviceArray::from_ndarray(&ctx, &arr1(&z))?;
        /// let s = a.sort_complex()?.to_vec()?;
        /// assert_eq!(s, [(1.0, -1.0), (1.0, 2.0), (2.0, -1.0), (3.0, 0.0)].map(|(r, i)| Complex64::new(r, i)));
        /// # Ok::<(), gpu_runtime::Error>(())
        /// ```
        fn sort_complex(&self) -> Result<DeviceArray<T, IxDyn>>;
    }
}

impl<T: ComplexElement, S: Storage<Elem = T>, D: Dimension> OnStream<'_, &DeviceArrayBase<S, D>> {
    /// [`sort_complex`](DeviceArrayBase::sort_complex) on this stream.
    pub fn sort_complex(&self) -> Result<DeviceArray<T, IxDyn>> {
        let a = self.target;
        if a.ndim() == 0 {
            return Err(ArrayShapeError::ZeroDimensional {
                operation: "DeviceArray::sort_complex",
            }
            .into());
        }
        // `lexsort` sorts by its last key first: the real parts, ties by the imaginary ones,
        // each key's NaNs last.
        let imag = OnStream::new(a.expr().imag(), self.stream).eval()?;
        let real = OnStream::new(a.expr().real(), self.stream).eval()?;
        let keys = OnStream::new(a.context(), self.stream).stack(&[&imag, &real], 0)?;
        let order = OnStream::new(&keys, self.stream).lexsort()?;
        OnStream::new(a, self.stream).take_along_axis(&order, -1)
    }
}
