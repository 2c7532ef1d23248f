//! NumPy's `unwrap`: phases made continuous along an axis, as NumPy computes them: the
//! neighbours' differences (`diff`), each corrected by whole periods into `[-period/2,
//! period/2)` unless it is below `discont` (one fused kernel), the corrections summed along the
//! axis (`cumsum`) and added to every sample after the first.

use ndarray::{Dimension, IxDyn};

use crate::error::Result;
use crate::gpuarray::array::axes::{normalize_axis, slice_along};
use crate::gpuarray::array::core::{DeviceArray, DeviceArrayBase, Storage};
use crate::gpuarray::array::on_stream::{on_legacy_stream, OnStream};
use crate::gpuarray::elements::promotion::TrueDivide;
use crate::gpuarray::expr::core::{BinOp, Expr};
use crate::gpuarray::expr::math::Float;

const OP: &str = "DeviceArray::unwrap";

/// The type `unwrap` returns for `E`.
type Phase<E> = <E as TrueDivide>::Quotient;

impl<S: Storage<Elem: TrueDivide<Quotient: Float>>, D: Dimension> DeviceArrayBase<S, D> {
    on_legacy_stream! {
        /// The phases along `axis` (negative: from the end) with every jump between neighbours
        /// of `discont` or more (`None`: `period / 2`) replaced by its remainder modulo `period`
        /// (NumPy's `unwrap(p, discont, axis, period=period)`; NumPy's default period is
        /// `2 * std::f64::consts::PI`): an array of this one's shape, in NumPy's type (the type
        /// of `/`: `f64` for integers, the float type itself for floats). A jump of exactly half
        /// a period upward stays upward, as NumPy's.
        ///
        /// ```no_run
        /// use gpu_runtime::gpuarray::DeviceArray;
        /// use gpu_runtime::ndarray::arr1;
        /// let ctx = gpu_runtime::Context::default()?;
        /// let p = DeviceArray::from_ndarray(&ctx, &arr1(&[0.0f64, 1.0, 5.0, 6.0]))?;
        /// let u = p.unwrap(None, -1, 4.0)?; // the jump of 4 is a whole period
        /// assert_eq!(u.to_vec()?, [0.0, 1.0, 1.0, 2.0]);
        /// # Ok::<(), gpu_runtime::Error>(())
        /// ```
        fn unwrap(&self, discont: Option<f64>, axis: isize, period: f64)
            -> Result<DeviceArray<Phase<S::Elem>, IxDyn>>;
    }
}

impl<S: Storage<Elem: TrueDivide<Quotient: Float>>, D: Dimension> OnStream<'_, &DeviceArrayBase<S, D>> {
    /// [`unwrap`](DeviceArrayBase::unwrap) on this stream.
    pub fn unwrap(
        &self,
        discont: Option<f64>,
        axis: isize,
        period: f64,
    ) -> Result<DeviceArray<Phase<S::Elem>, IxDyn>> {
        let stream = self.stream;
        let a = self.target.view().into_dyn();
        let (nd, k) = (a.ndim(), normalize_axis(OP, axis, a.ndim())?);
        let mut up = OnStream::new(&a, stream).astype::<Phase<S::Elem>>()?;
        let n = up.shape()[k];
        if n < 2 || up.is_empty() {
            return Ok(up);
        }
        let dd = OnStream::new(&up, stream).diff(1, k as isize)?;
        // NumPy's numbers are Python floats beside the array: each converted to its type.
        let s = |v: f64| Expr::scalar(v).cast::<Phase<S::Elem>>();
        let (high, low) = (period / 2.0, -period / 2.0);
        let discont = discont.unwrap_or(high);
        let wrapped = || (dd.expr() - s(low)) % s(period) + s(low);
        // A jump of half a period upward lands on `-period/2`: NumPy keeps it at `+period/2`.
        let ambiguous = wrapped().eq(s(low)).logical_and(dd.expr().gt(s(0.0)));
        let corrected = Expr::where_(ambiguous, s(high), wrapped());
        let correction = Expr::where_(dd.expr().abs().lt(s(discont)), s(0.0), corrected - &dd);
        let correction = OnStream::new(correction, stream).eval()?;
        let summed = OnStream::new(&correction, stream).cumsum_axis(k)?;
        let mut rest = up.slice_mut(&slice_along(nd, k, 1, n as isize)[..])?;
        OnStream::new(&mut rest, stream).op_assign(BinOp::Add, &summed)?;
        Ok(up)
    }
}
