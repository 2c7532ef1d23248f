//! NumPy's weighted `average`: `sum(a * w) / sum(w)`, over all elements or along an axis, in
//! NumPy's float type ([`MeanType`]), the sums taken in `f64` (as `mean` takes its sum).
//! Weights that sum to zero are an error, as NumPy's `ZeroDivisionError`, which costs a read
//! of the weights' sums.

use ndarray::{Dimension, IxDyn};

use crate::error::{ArrayShapeError, Result};
use crate::gpuarray::array::axes::normalize_axis;
use crate::gpuarray::array::core::{DeviceArray, DeviceArrayBase, DeviceArrayView, Storage};
use crate::gpuarray::array::on_stream::{on_legacy_stream, OnStream};
use crate::gpuarray::elements::mean_type::MeanType;
use crate::gpuarray::reduce::axis::ReduceAxis;

impl<S: Storage<Elem: MeanType>, D: Dimension> DeviceArrayBase<S, D> {
    on_legacy_stream! {
        /// The average of the elements weighted by `weights` of the same shape (NumPy's
        /// `average(a, weights=w)`): `sum(a * w) / sum(w)`, in [`MeanType`]'s type. Weights of
        /// another shape are [`ArrayShapeError::ShapesDiffer`](crate::ArrayShapeError), weights
        /// summing to zero [`ArrayShapeError::WeightsSumToZero`]. Without weights, NumPy's
        /// `average` is [`mean`](Self::mean).
        ///
        /// ```no_run
        /// use gpu_runtime::gpuarray::DeviceArray;
        /// use gpu_runtime::ndarray::arr1;
        /// let ctx = gpu_runtime::Context::default()?;
        /// let a = DeviceArray::from_ndarray(&ctx, &arr1(&[1.0f64, 2.0, 3.0, 4.0]))?;
        /// let w = DeviceArray::from_ndarray(&ctx, &arr1(&[4.0f64, 3.0, 2.0, 1.0]))?;
        /// assert_eq!(a.average_weighted(&w)?, 2.0);
        /// # Ok::<(), gpu_runtime::Error>(())
        /// ```
        fn average_weighted[S2: Storage<Elem = S::Elem>, D2: Dimension](
            &self,
            weights: &DeviceArrayBase<S2, D2>,
        ) -> Result<<S::Elem as MeanType>::Mean>;

        /// The weighted averages along `axis` (negative: from the end): NumPy's `average(a, axis,
        /// weights=w)`, `w` of the array's shape or 1-d along the axis.
        fn average_weighted_axis[S2: Storage<Elem = S::Elem>, D2: Dimension](
            &self,
            weights: &DeviceArrayBase<S2, D2>,
            axis: isize,
        ) -> Result<DeviceArray<<S::Elem as MeanType>::Mean, IxDyn>>;
    }
}

impl<S: Storage<Elem: MeanType>, D: Dimension> OnStream<'_, &DeviceArrayBase<S, D>> {
    /// [`average_weighted`](DeviceArrayBase::average_weighted) on this stream.
    pub fn average_weighted<S2: Storage<Elem = S::Elem>, D2: Dimension>(
        &self,
        weights: &DeviceArrayBase<S2, D2>,
    ) -> Result<<S::Elem as MeanType>::Mean> {
        const OP: &str = "DeviceArray::average_weighted";
        let a = self.target;
        same_shape(OP, a.shape(), weights.shape())?;
        let (a1, w1) = (self.ravel()?, OnStream::new(weights, self.stream).ravel()?);
        let averages = OnStream::new(&a1, self.stream).weighted(OP, &w1.view().into_dyn(), 0)?;
        averages.item(&[])
    }

    /// [`average_weighted_axis`](DeviceArrayBase::average_weighted_axis) on this stream.
    pub fn average_weighted_axis<S2: Storage<Elem = S::Elem>, D2: Dimension>(
        &self,
        weights: &DeviceArrayBase<S2, D2>,
        axis: isize,
    ) -> Result<DeviceArray<<S::Elem as MeanType>::Mean, IxDyn>> {
        const OP: &str = "DeviceArray::average_weighted_axis";
        let a = self.target;
        let k = normalize_axis(OP, axis, a.ndim())?;
        let mut w = weights.view().into_dyn();
        if w.ndim() == 1 && a.ndim() > 1 {
            // 1-d weights along the axis: give them the array's other axes, of length 1.
            same_shape(OP, &a.shape()[k..=k], w.shape())?;
            for _ in 0..k {
                w = w.expand_dims(0)?;
            }
            while w.ndim() < a.ndim() {
                let end = w.ndim();
                w = w.expand_dims(end)?;
            }
        } else {
            same_shape(OP, a.shape(), w.shape())?;
        }
        self.weighted(OP, &w, k)
    }

    /// `sum(a * w) / sum(w)` along `k`, `w` broadcasting to the array; checks the sums of `w`.
    fn weighted(
        &self,
        operation: &'static str,
        w: &DeviceArrayView<'_, S::Elem, IxDyn>,
        k: usize,
    ) -> Result<DeviceArray<<S::Elem as MeanType>::Mean, IxDyn>> {
        let a = self.target;
        let products = (a.expr().cast::<f64>() * w.expr().cast::<f64>()).eval_stream(self.stream)?;
        let sums = OnStream::new(&products, self.stream).sum_axis(ReduceAxis::from(k))?;
        // The weights' sums along the axis, of the weights as broadcast (1-d weights count once
        // per lane, as NumPy's).
        let w_full = w.broadcast_to(a.shape())?;
        let scale = OnStream::new(&w_full, self.stream).sum_axis_as::<f64>(ReduceAxis::from(k))?;
        let zeros = scale.expr().eq(0.0).eval_stream(self.stream)?;
        let lanes = OnStream::new(&zeros, self.stream).count_nonzero()?;
        if lanes > 0 {
            return Err(ArrayShapeError::WeightsSumToZero { operation, lanes }.into());
        }
        let quotient = (sums.expr() / &scale).cast::<<S::Elem as MeanType>::Mean>();
        quotient.eval_stream(self.stream)
    }
}

/// Checks that the weights' shape is the one they must have.
fn same_shape(operation: &'static str, expected: &[usize], weights: &[usize]) -> Result<()> {
    if expected != weights {
        return Err(ArrayShapeError::ShapesDiffer {
            param: format!("{operation}: weights"),
            shape: weights.to_vec(),
            expected: expected.to_vec(),
        }
        .into());
    }
    Ok(())
}
