//! NumPy's `diff`: the differences of neighbours along an axis, taken `n` times over, each pass
//! one elementwise kernel over two overlapping views (`a[1:] - a[:-1]`).

use ndarray::{Dimension, IxDyn, SliceInfoElem};

use crate::error::Result;
use crate::gpuarray::array::core::{DeviceArray, DeviceArrayBase, Storage};
use crate::gpuarray::array::on_stream::OnStream;
use crate::gpuarray::elements::dtype::DType;
use crate::gpuarray::elements::element::Element;
use crate::gpuarray::reduce::axes::normalize_axes;

impl<S: Storage<Elem: Element>, D: Dimension> DeviceArrayBase<S, D> {
    /// NumPy's `diff(a, n, axis)`: `a[1:] - a[:-1]` along `axis` (negative: from the end),
    /// taken `n` times, each pass one shorter along the axis (never below 0); `n == 0` is a
    /// copy. `bool` elements give `a[1:] != a[:-1]`, integers wrap, as NumPy's. A 0-d array
    /// has no axis: [`ArrayShapeError::AxisOutOfRange`](crate::ArrayShapeError::AxisOutOfRange).
    pub fn diff(&self, n: usize, axis: isize) -> Result<DeviceArray<S::Elem, IxDyn>> {
        OnStream::legacy(self).diff(n, axis)
    }
}

impl<S: Storage<Elem: Element>, D: Dimension> OnStream<'_, &DeviceArrayBase<S, D>> {
    /// [`diff`](DeviceArrayBase::diff) on this stream.
    pub fn diff(&self, n: usize, axis: isize) -> Result<DeviceArray<S::Elem, IxDyn>> {
        let k = normalize_axes(&[axis], self.target.ndim())?[0];
        if n == 0 {
            return Ok(self.copy()?.into_dyn());
        }
        let mut out = self.neighbours(self.target, k)?;
        for _ in 1..n {
            out = self.neighbours(&out, k)?;
        }
        Ok(out)
    }

    /// One pass of `diff` of `a` along `k`, on this stream.
    fn neighbours<S2: Storage<Elem = S::Elem>, D2: Dimension>(
        &self,
        a: &DeviceArrayBase<S2, D2>,
        k: usize,
    ) -> Result<DeviceArray<S::Elem, IxDyn>> {
        let len = a.shape()[k];
        if len <= 1 {
            let mut shape = a.shape().to_vec();
            shape[k] = 0;
            return DeviceArray::empty(a.context(), IxDyn(&shape));
        }
        let along = |start: isize, end: isize| -> Vec<SliceInfoElem> {
            (0..a.ndim())
                .map(|j| SliceInfoElem::Slice {
                    start: if j == k { start } else { 0 },
                    end: (j == k).then_some(end),
                    step: 1,
                })
                .collect()
        };
        let whole = a.view().into_dyn();
        let (hi, lo) = (
            whole.slice(&along(1, len as isize)[..])?,
            whole.slice(&along(0, len as isize - 1)[..])?,
        );
        let e = if S::Elem::DTYPE == DType::Bool {
            // NumPy's `diff` of booleans is `!=` (they have no subtraction).
            hi.expr().ne(&lo).cast::<S::Elem>()
        } else {
            hi.expr() - &lo
        };
        e.eval_stream(self.stream)
    }
}
