//! NumPy's `nancumsum` and `nancumprod`: the running sums and products with each NaN counted
//! as 0 (sums) or 1 (products), as NumPy's `_replace_nan` does: the NaNs replaced in one
//! elementwise pass (`x != x`, so a complex number with a NaN part is one), then the scan. For
//! integer and `bool` arrays, which hold no NaN, they are `cumsum` and `cumprod`.

use ndarray::{Dimension, Ix1, IxDyn};

use crate::error::Result;
use crate::gpuarray::array::core::{DeviceArray, DeviceArrayBase, Storage};
use crate::gpuarray::array::on_stream::{on_legacy_stream, OnStream};
use crate::gpuarray::elements::element::{Element, Kind};
use crate::gpuarray::expr::core::Expr;

impl<S: Storage<Elem: Element>, D: Dimension> DeviceArrayBase<S, D> {
    on_legacy_stream! {
        /// The running sums in C order with each NaN counted as zero (NumPy's `nancumsum(a)`,
        /// `axis=None`), as a 1-D array; see [`cumsum`](Self::cumsum).
        fn nancumsum(&self) -> Result<DeviceArray<S::Elem, Ix1>>;

        /// [`nancumsum`](Self::nancumsum) along `axis` (NumPy's `nancumsum(a, axis)`), a
        /// C-order array of this shape.
        fn nancumsum_axis(&self, axis: usize) -> Result<DeviceArray<S::Elem, IxDyn>>;

        /// The running products in C order with each NaN counted as one (NumPy's
        /// `nancumprod(a)`), as a 1-D array; see [`cumprod`](Self::cumprod).
        fn nancumprod(&self) -> Result<DeviceArray<S::Elem, Ix1>>;

        /// [`nancumprod`](Self::nancumprod) along `axis`.
        fn nancumprod_axis(&self, axis: usize) -> Result<DeviceArray<S::Elem, IxDyn>>;
    }
}

/// The stream forms: `name(args) -> dimension = scan with value;` is the plain form on this
/// stream, `scan` of the array with each NaN replaced by `value` (of the array itself when its
/// elements hold no NaN).
macro_rules! nan_scans {
    ($($name:ident($($arg:ident: $t:ty),*) -> $d:ty = $scan:ident with $value:literal;)*) => {$(
        #[doc = concat!("[`", stringify!($name), "`](DeviceArrayBase::", stringify!($name), ") on this stream.")]
        pub fn $name(&self $(, $arg: $t)*) -> Result<DeviceArray<S::Elem, $d>> {
            match self.nan_replaced($value)? {
                Some(r) => OnStream::new(&r, self.stream).$scan($($arg),*),
                None => self.$scan($($arg),*),
            }
        }
    )*};
}

impl<S: Storage<Elem: Element>, D: Dimension> OnStream<'_, &DeviceArrayBase<S, D>> {
    nan_scans! {
        nancumsum() -> Ix1 = cumsum with 0.0;
        nancumsum_axis(axis: usize) -> IxDyn = cumsum_axis with 0.0;
        nancumprod() -> Ix1 = cumprod with 1.0;
        nancumprod_axis(axis: usize) -> IxDyn = cumprod_axis with 1.0;
    }

    /// The array with each NaN replaced by `value`, in this array's shape; `None` for the
    /// element types that hold no NaN.
    fn nan_replaced(&self, value: f64) -> Result<Option<DeviceArray<S::Elem, IxDyn>>> {
        if !matches!(S::Elem::KIND, Kind::Float | Kind::Complex) {
            return Ok(None);
        }
        let x = || self.target.expr();
        let e = Expr::where_(x().ne(x()), Expr::scalar(value).cast::<S::Elem>(), x());
        Ok(Some(OnStream::new(e, self.stream).eval()?))
    }
}
