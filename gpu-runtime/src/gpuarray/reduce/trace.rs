//! NumPy's `trace`: the sum of a diagonal, in NumPy 2's type ([`SumType`], as `np.trace`
//! sums), read through the diagonal's view with no copy.

use ndarray::{Dimension, IxDyn};

use crate::error::{ArrayShapeError, Result};
use crate::gpuarray::array::core::{DeviceArray, DeviceArrayBase, Storage};
use crate::gpuarray::array::on_stream::{on_legacy_stream, OnStream};
use crate::gpuarray::elements::sum_type::SumType;

impl<S: Storage<Elem: SumType>, D: Dimension> DeviceArrayBase<S, D> {
    on_legacy_stream! {
        /// The sum of a matrix's main diagonal in NumPy 2's type ([`SumType`]: `i64` for
        /// `bool` and the signed integers, `u64` for the unsigned ones), as `np.trace(a)` of a
        /// 2-d array. Another number of axes is [`ArrayShapeError::Dimension`]; an array of
        /// more axes takes [`trace_axes`](Self::trace_axes).
        fn trace(&self) -> Result<<S::Elem as SumType>::Sum>;

        /// The sums of the diagonals `offset` (positive: above the main one) of the planes of
        /// axes `axis1` and `axis2` (negative: from the end), an array of the other axes, as
        /// `np.trace(a, offset, axis1, axis2)` (its defaults are `0, 0, 1`); a diagonal past
        /// the edge sums to 0. Errors as [`diagonal`](Self::diagonal).
        fn trace_axes(&self, offset: isize, axis1: isize, axis2: isize)
            -> Result<DeviceArray<<S::Elem as SumType>::Sum, IxDyn>>;
    }
}

impl<S: Storage<Elem: SumType>, D: Dimension> OnStream<'_, &DeviceArrayBase<S, D>> {
    /// [`trace`](DeviceArrayBase::trace) on this stream (the host waits for the value).
    pub fn trace(&self) -> Result<<S::Elem as SumType>::Sum> {
        let a = self.target;
        if a.ndim() != 2 {
            return Err(ArrayShapeError::Dimension {
                axes: a.ndim(),
                fixed: 2,
            }
            .into());
        }
        let d = a.view().diagonal(0, 0, 1)?;
        OnStream::new(&d, self.stream).sum_np()
    }

    /// [`trace_axes`](DeviceArrayBase::trace_axes) on this stream.
    pub fn trace_axes(
        &self,
        offset: isize,
        axis1: isize,
        axis2: isize,
    ) -> Result<DeviceArray<<S::Elem as SumType>::Sum, IxDyn>> {
        let d = self.target.view().diagonal(offset, axis1, axis2)?;
        let along = d.ndim() - 1;
        OnStream::new(&d, self.stream).sum_axis_np(along)
    }
}
