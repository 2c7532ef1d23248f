//! NumPy's and CuPy's `apply_along_axis`: a function of 1-d arrays applied to each lane of an
//! array along one axis, its results stacked where the axis was. As CuPy does it: one call
//! of the function a lane, from the host, each result copied into its place in the output.

use ndarray::{Ix1, IxDyn, SliceInfoElem};

use crate::error::{ArrayShapeError, Result};
use crate::gpuarray::array::axes::normalize_axis;
use crate::gpuarray::array::core::{DeviceArray, DeviceArrayBase, DeviceArrayView, Storage};
use crate::gpuarray::array::layout::checked_size;
use crate::gpuarray::array::on_stream::{context_fns, OnStream};
use crate::gpuarray::elements::array_element::ArrayElement;

/// The multi-index of the `flat`-th position of `shape` in C order, as slice elements.
fn lane_index(mut flat: usize, shape: &[usize]) -> Vec<SliceInfoElem> {
    let mut index = vec![SliceInfoElem::Index(0); shape.len()];
    for (i, &len) in shape.iter().enumerate().rev() {
        index[i] = SliceInfoElem::Index((flat % len) as isize);
        flat /= len;
    }
    index
}

/// Lane `k` (in C order over the other axes) of `lanes`, whose last axis is the lanes'.
fn lane<'a, T: ArrayElement>(
    lanes: &'a DeviceArrayView<'_, T, IxDyn>,
    k: usize,
) -> Result<DeviceArrayView<'a, T, Ix1>> {
    let mut index = lane_index(k, &lanes.shape()[..lanes.ndim() - 1]);
    index.push(ALL);
    lanes.slice(&index[..])?.into_dimensionality::<Ix1>()
}

/// Every element of an axis.
const ALL: SliceInfoElem = SliceInfoElem::Slice {
    start: 0,
    end: None,
    step: 1,
};

context_fns! {
    /// `f` applied to each 1-d lane of `a` along `axis` (negative counts from the end), the
    /// results stacked in place of that axis (NumPy's and CuPy's `apply_along_axis(f, axis,
    /// a)`): for `a` of shape `(..., n, ...)` with the axis at `n`, and results of shape
    /// `r`, the result has shape `(..., *r, ...)`; a 0-d result removes the axis. `f` is
    /// called once a lane, in C order of the other axes, with a view of the lane (strided
    /// unless the axis is the last of a C-ordered array); it may launch anything. Each result
    /// is copied into its place on this stream (the result's axes come after the copies as a
    /// view of them: it may not be C-ordered). Errors: `f`'s own (the first stops the
    /// calls); [`ArrayShapeError::NoLanes`] when the other axes hold no element (NumPy's
    /// `ValueError`: `f` would never be called); [`ArrayShapeError::LaneShapes`] when a result
    /// differs in shape from the first; the axis out of range.
    ///
    /// ```no_run
    /// use gpu_runtime::gpuarray::{self, DeviceArray};
    /// use gpu_runtime::ndarray::{arr0, Array2};
    /// let ctx = gpu_runtime::Context::default()?;
    /// let a = DeviceArray::from_ndarray(&ctx, &Array2::from_shape_fn((3, 4), |(i, j)| (i * 4 + j) as f32))?;
    /// // Each column's sum, as a 0-d array: the axis goes away.
    /// let sums = gpuarray::apply_along_axis(&a, 0, |col| DeviceArray::from_ndarray(&ctx, &arr0(col.sum()?)))?;
    /// assert_eq!(sums.to_vec()?, [12.0, 15.0, 18.0, 21.0]);
    /// # Ok::<(), gpu_runtime::Error>(())
    /// ```
    fn apply_along_axis[T: ArrayElement, S: Storage<Elem = T>, D: ndarray::Dimension, U: ArrayElement, E: ndarray::Dimension, F](
        &self, a: &DeviceArrayBase<S, D>, axis: isize, f: F
    ) -> Result<DeviceArray<U, IxDyn>>
    where [F: FnMut(DeviceArrayView<'_, T, Ix1>) -> Result<DeviceArray<U, E>>]
    {
        const OP: &str = "apply_along_axis";
        let mut f = f;
        let axis = normalize_axis(OP, axis, a.ndim())?;
        // The lanes' axis last: the other axes, in order, count the lanes.
        let lanes = a.view().into_dyn().moveaxis(&[axis as isize], &[-1])?;
        let outer = &lanes.shape()[..lanes.ndim() - 1];
        let count = checked_size(OP, outer)?;
        if count == 0 {
            return Err(ArrayShapeError::NoLanes {
                operation: OP,
                shape: a.shape().to_vec(),
                axis,
            }
            .into());
        }
        let first = f(lane(&lanes, 0)?)?;
        let r = first.shape().to_vec();
        let out_shape: Vec<usize> = outer.iter().chain(&r).copied().collect();
        let mut out = DeviceArray::<U, IxDyn>::empty(a.context(), IxDyn(&out_shape))?;
        let mut put = |k: usize, result: &DeviceArray<U, E>| -> Result<()> {
            if result.shape() != r.as_slice() {
                return Err(ArrayShapeError::LaneShapes {
                    operation: OP,
                    first: r.clone(),
                    other: result.shape().to_vec(),
                    lane: k,
                }
                .into());
            }
            let mut index = lane_index(k, outer);
            index.extend(r.iter().map(|_| ALL));
            let mut place = out.slice_mut(&index[..])?;
            OnStream::new(&mut place, self.stream).copy_from(result)
        };
        put(0, &first)?;
        for k in 1..count {
            let result = f(lane(&lanes, k)?)?;
            put(k, &result)?;
        }
        // The result's axes where `axis` was: outer[..axis], r, outer[axis..].
        let (o, rn) = (outer.len(), r.len());
        let order: Vec<usize> = (0..axis).chain(o..o + rn).chain(axis..o).collect();
        out.permuted_axes(&order)
    }
}
