//! NumPy's `trapezoid` (`trapz`): the integral along an axis by the trapezoidal rule, as
//! NumPy writes it: `sum(d * (y[1:] + y[:-1]) / 2)` along the axis, `d` the spacing (one
//! number, or the differences of the sample points `x`). One fused kernel for the terms, one
//! sum.

use ndarray::{Dimension, IxDyn};

use crate::error::{counts_error, Result};
use crate::gpuarray::array::axes::{normalize_axis, slice_along};
use crate::gpuarray::array::core::{DeviceArray, DeviceArrayBase, Storage};
use crate::gpuarray::array::on_stream::{on_legacy_stream, OnStream};
use crate::gpuarray::expr::core::Expr;
use crate::gpuarray::expr::math::Float;

const OP: &str = "DeviceArray::trapezoid";

impl<S: Storage<Elem: Float>, D: Dimension> DeviceArrayBase<S, D> {
    on_legacy_stream! {
        /// The integral of the samples along `axis` (negative: from the end) spaced `dx` apart,
        /// by the trapezoidal rule (NumPy's `trapezoid(y, dx=dx, axis=axis)`): an array of the
        /// other axes (0-d for a 1-d array); an axis of fewer than two samples gives zeros.
        ///
        /// ```no_run
        /// use gpu_runtime::gpuarray::DeviceArray;
        /// use gpu_runtime::ndarray::arr1;
        /// let ctx = gpu_runtime::Context::default()?;
        /// let y = DeviceArray::from_ndarray(&ctx, &arr1(&[1.0f64, 2.0, 3.0]))?;
        /// assert_eq!(y.trapezoid(1.0, -1)?.to_vec()?, [4.0]);
        /// # Ok::<(), gpu_runtime::Error>(())
        /// ```
        fn trapezoid(&self, dx: f64, axis: isize) -> Result<DeviceArray<S::Elem, IxDyn>>;

        /// [`trapezoid`](Self::trapezoid) at the sample points `x`: a 1-d array as long as the
        /// axis, or an array of this one's shape (NumPy's `trapezoid(y, x, axis=axis)`); other
        /// shapes are
        /// [`ArrayShapeError::ElementCounts`](crate::error::ArrayShapeError::ElementCounts) (the
        /// axis' length against `x`'s).
        fn trapezoid_x[S2: Storage<Elem = S::Elem>, D2: Dimension](
            &self,
            x: &DeviceArrayBase<S2, D2>,
            axis: isize,
        ) -> Result<DeviceArray<S::Elem, IxDyn>>;
    }
}

impl<S: Storage<Elem: Float>, D: Dimension> OnStream<'_, &DeviceArrayBase<S, D>> {
    /// [`trapezoid`](DeviceArrayBase::trapezoid) on this stream.
    pub fn trapezoid(&self, dx: f64, axis: isize) -> Result<DeviceArray<S::Elem, IxDyn>> {
        let y = self.target.view().into_dyn();
        let k = normalize_axis(OP, axis, y.ndim())?;
        let n = y.shape()[k] as isize;
        let (hi, lo) = (
            y.slice(&slice_along(y.ndim(), k, n.min(1), n)[..])?,
            y.slice(&slice_along(y.ndim(), k, 0, (n - 1).max(0))[..])?,
        );
        let half = Expr::scalar(dx / 2.0).cast::<S::Elem>();
        let terms = ((hi.expr() + &lo) * half).eval_stream(self.stream)?;
        OnStream::new(&terms, self.stream).sum_axis(k)
    }

    /// [`trapezoid_x`](DeviceArrayBase::trapezoid_x) on this stream.
    pub fn trapezoid_x<S2: Storage<Elem = S::Elem>, D2: Dimension>(
        &self,
        x: &DeviceArrayBase<S2, D2>,
        axis: isize,
    ) -> Result<DeviceArray<S::Elem, IxDyn>> {
        let y = self.target.view().into_dyn();
        let nd = y.ndim();
        let k = normalize_axis(OP, axis, nd)?;
        let n = y.shape()[k] as isize;
        // The spacing along the axis, shaped to broadcast against the terms.
        let x = x.view().into_dyn();
        let spacing = if x.ndim() == 1 && x.len() == y.shape()[k] {
            let mut shape = vec![1usize; nd];
            shape[k] = (n - 1).max(0) as usize;
            let d = OnStream::new(&x, self.stream).diff(1, 0)?;
            d.reshape(IxDyn(&shape))?
        } else if x.shape() == y.shape() {
            OnStream::new(&x, self.stream).diff(1, k as isize)?
        } else {
            return Err(counts_error(OP, y.shape()[k], x.len()));
        };
        let (hi, lo) = (
            y.slice(&slice_along(nd, k, n.min(1), n)[..])?,
            y.slice(&slice_along(nd, k, 0, (n - 1).max(0))[..])?,
        );
        let half = Expr::scalar(0.5).cast::<S::Elem>();
        let terms = (spacing.expr() * ((hi.expr() + &lo) * half)).eval_stream(self.stream)?;
        OnStream::new(&terms, self.stream).sum_axis(k)
    }
}
