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

impl<S: Storage<Elem: Element>, D: Dimension> OnStream<'_, &DeviceArrayBase<S, D>> {
    /// [`nancumsum`](DeviceArrayBase::nancumsum) on this stream.
    pub fn nancumsum(&self) -> Result<DeviceArray<S::Elem, Ix1>> {
        match self.nan_replaced(0.0)? {
            Some(r) => OnStream::new(&r, self.stream).cumsum(),
            None => self.cumsum(),
        }
    }

    /// [`nancumsum_axis`](DeviceArrayBase::nancumsum_axis) on this stream.
    pub fn nancumsum_axis(&self, axis: usize) -> Result<DeviceArray<S::Elem, IxDyn>> {
        match self.nan_replaced(0.0)? {
            Some(r) => OnStream::new(&r, self.stream).cumsum_axis(axis),
            None => self.cumsum_axis(axis),
        }
    }

    /// [`nancumprod`](DeviceArrayBase::nancumprod) on this stream.
    pub fn nancumprod(&self) -> Result<DeviceArray<S::Elem, Ix1>> {
        match self.nan_replaced(1.0)? {
            Some(r) => OnStream::new(&r, self.stream).cumprod(),
            None => self.cumprod(),
        }
    }

    /// [`nancumprod_axis`](DeviceArrayBase::nancumprod_axis) on this stream.
    pub fn nancumprod_axis(&self, axis: usize) -> Result<DeviceArray<S::Elem, IxDyn>> {
        match self.nan_replaced(1.0)? {
            Some(r) => OnStream::new(&r, self.stream).cumprod_axis(axis),
            None => self.cumprod_axis(axis),
        }
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
