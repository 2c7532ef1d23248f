//! NumPy's `diff`: the differences of neighbours along an axis, taken `n` times over, each pass
//! one elementwise kernel over two overlapping views (`a[1:] - a[:-1]`); and `ediff1d`, the
//! differences of the elements in C order with values before and after.

use ndarray::{Array1, Dimension, Ix1, IxDyn};

use crate::error::Result;
use crate::gpuarray::array::axes::slice_along;
use crate::gpuarray::array::core::{DeviceArray, DeviceArrayBase, Storage};
use crate::gpuarray::array::on_stream::{on_legacy_stream, OnStream};
use crate::gpuarray::elements::dtype::DType;
use crate::gpuarray::elements::element::Element;
use crate::gpuarray::reduce::axes::normalize_axes;

impl<S: Storage<Elem: Element>, D: Dimension> DeviceArrayBase<S, D> {
    on_legacy_stream! {
        /// NumPy's `diff(a, n, axis)`: `a[1:] - a[:-1]` along `axis` (negative: from the end),
        /// taken `n` times, each pass one shorter along the axis (never below 0); `n == 0` is a
        /// copy. `bool` elements give `a[1:] != a[:-1]`, integers wrap, as NumPy's. A 0-d array
        /// has no axis: [`ArrayShapeError::AxisOutOfRange`](crate::ArrayShapeError::AxisOutOfRange).
        fn diff(&self, n: usize, axis: isize) -> Result<DeviceArray<S::Elem, IxDyn>>;

        /// The differences of neighbouring elements in C order, after `to_begin` and before
        /// `to_end` (NumPy's `ediff1d(ary, to_end, to_begin)`), as a 1-d array.
        ///
        /// ```no_run
        /// use gpu_runtime::gpuarray::DeviceArray;
        /// use gpu_runtime::ndarray::arr1;
        /// let ctx = gpu_runtime::Context::default()?;
        /// let a = DeviceArray::from_ndarray(&ctx, &arr1(&[1, 2, 4, 7]))?;
        /// assert_eq!(a.ediff1d(&[100], &[88, 99])?.to_vec()?, [100, 1, 2, 3, 88, 99]);
        /// # Ok::<(), gpu_runtime::Error>(())
        /// ```
        fn ediff1d(&self, to_begin: &[S::Elem], to_end: &[S::Elem])
            -> Result<DeviceArray<S::Elem, Ix1>>;
    }
}

impl<S: Storage<Elem: Element>, D: Dimension> OnStream<'_, &DeviceArrayBase<S, D>> {
    /// [`ediff1d`](DeviceArrayBase::ediff1d) on this stream.
    pub fn ediff1d(&self, to_begin: &[S::Elem], to_end: &[S::Elem]) -> Result<DeviceArray<S::Elem, Ix1>> {
        let a = self.target;
        let src = OnStream::new(a, self.stream).c_order()?;
        let flat = src.view().reshape(IxDyn(&[a.len()]))?;
        let steps = if a.is_empty() {
            DeviceArray::empty(a.context(), IxDyn(&[0]))?
        } else {
            self.neighbours(&flat, 0)?
        };
        if to_begin.is_empty() && to_end.is_empty() {
            return steps.into_dimensionality();
        }
        let ctx = OnStream::new(a.context(), self.stream);
        let begin = DeviceArray::from_ndarray(a.context(), &Array1::from(to_begin.to_vec()))?.into_dyn();
        let end = DeviceArray::from_ndarray(a.context(), &Array1::from(to_end.to_vec()))?.into_dyn();
        ctx.concatenate(&[&begin, &steps, &end], 0)?.into_dimensionality()
    }

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
        let whole = a.view().into_dyn();
        let (hi, lo) = (
            whole.slice(&slice_along(a.ndim(), k, 1, len as isize)[..])?,
            whole.slice(&slice_along(a.ndim(), k, 0, len as isize - 1)[..])?,
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
