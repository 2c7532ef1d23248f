//! NumPy's functions that add or remove elements (its "adding and removing elements"
//! routines): `append`, `delete`, `resize` and `trim_zeros`. Each is a join, a gather through
//! an index array made on the host, or a view; the kept indices and the lengths are worked out
//! on the host (free functions, unit-tested).

use ndarray::{Array1, Dimension, Ix1, IxDyn};

use crate::error::{ArrayShapeError, Result};
use crate::gpuarray::array::axes::normalize_axis;
use crate::gpuarray::array::core::{DeviceArray, DeviceArrayBase, DeviceArrayView, Storage};
use crate::gpuarray::array::layout;
use crate::gpuarray::array::on_stream::{context_fns, on_legacy_stream, OnStream};
use crate::gpuarray::copy::gather::IndexMode;
use crate::gpuarray::elements::element::Element;

/// The indices of an axis of `len` that `delete` keeps: all but those in `remove` (negative
/// from the end; repeats allowed, as NumPy's), or the first index outside `-len..len`.
pub(crate) fn kept_indices(len: usize, remove: &[isize]) -> std::result::Result<Vec<i64>, isize> {
    let mut keep = vec![true; len];
    for &i in remove {
        let j = if i < 0 { i + len as isize } else { i };
        if j < 0 || j as usize >= len {
            return Err(i);
        }
        keep[j as usize] = false;
    }
    Ok((0..len).filter(|&j| keep[j]).map(|j| j as i64).collect())
}

/// The `start..end` that `trim_zeros` keeps of an axis whose first and last nonzero elements
/// are at `first` and `last` (`None`: all zero, nothing kept), trimming the front and/or back.
pub(crate) fn trimmed(
    len: usize,
    nonzero: Option<(usize, usize)>,
    front: bool,
    back: bool,
) -> (usize, usize) {
    match nonzero {
        None => (0, 0),
        Some((first, last)) => (if front { first } else { 0 }, if back { last + 1 } else { len }),
    }
}

context_fns! {
    /// `values` joined after `arr` (NumPy's `append(arr, values, axis)`): with `axis: None` both
    /// are taken in C order into one 1-d array; with an axis (negative: from the end) they join
    /// along it and must agree on the other axes ([`ArrayShapeError::JoinShapes`]).
    ///
    /// ```no_run
    /// use gpu_runtime::gpuarray::{self, DeviceArray};
    /// let ctx = gpu_runtime::Context::default()?;
    /// let a = DeviceArray::<i32, _>::arange(&ctx, 1.0, 3.0, 1.0)?;
    /// let b = DeviceArray::<i32, _>::arange(&ctx, 3.0, 5.0, 1.0)?.reshape((1, 2))?;
    /// assert_eq!(gpuarray::append(&a, &b, None)?.to_vec()?, [1, 2, 3, 4]);
    /// # Ok::<(), gpu_runtime::Error>(())
    /// ```
    fn append[
        T: Element, S1: Storage<Elem = T>, D1: Dimension, S2: Storage<Elem = T>, D2: Dimension
    ](
        &self, arr: &DeviceArrayBase<S1, D1>, values: &DeviceArrayBase<S2, D2>, axis: Option<isize>
    ) -> Result<DeviceArray<T, IxDyn>> {
        let (a, v) = (arr.view().into_dyn(), values.view().into_dyn());
        match axis {
            None => {
                let a = OnStream::new(&a, self.stream).ravel()?.into_dyn();
                let v = OnStream::new(&v, self.stream).ravel()?.into_dyn();
                self.concatenate(&[&a, &v], 0)
            }
            Some(axis) => {
                let k = normalize_axis("append", axis, a.ndim())?;
                self.concatenate(&[&a, &v], k)
            }
        }
    }

    /// The elements of `a` repeated in C order, over and over, to fill `shape` (NumPy's
    /// `resize(a, new_shape)`; an empty `a` gives zeros, as NumPy 2's). For the same number of
    /// elements, [`reshape`](DeviceArrayBase::reshape) needs no copy.
    fn resize[T: Element, S: Storage<Elem = T>, D: Dimension](
        &self, a: &DeviceArrayBase<S, D>, shape: &[usize]
    ) -> Result<DeviceArray<T, IxDyn>> {
        let total = layout::checked_size("resize", shape)?;
        if a.is_empty() || total == 0 {
            return OnStream::new(a.context(), self.stream).full(IxDyn(shape), T::zero());
        }
        let src = OnStream::new(a, self.stream).c_order()?;
        let flat = src.view().reshape(a.len())?;
        // Index i of the result reads element i mod len: `take` wraps them.
        let indices = OnStream::new(a.context(), self.stream).arange::<i64>(0.0, total as f64, 1.0)?;
        OnStream::new(&flat, self.stream)
            .take(&indices, 0, IndexMode::Wrap)?
            .reshape(IxDyn(shape))
    }
}

impl<S: Storage<Elem: Element>, D: Dimension> DeviceArrayBase<S, D> {
    on_legacy_stream! {
        /// A copy without the elements at `indices` along `axis` (NumPy's `delete(arr, obj,
        /// axis)`; negative indices count from the end, an index named twice is deleted once);
        /// `axis: None` deletes from the elements in C order and gives a 1-d array. An index
        /// outside the axis is [`ArrayShapeError::IndexOutOfRange`] (NumPy's `IndexError`).
        fn delete(&self, indices: &[isize], axis: Option<isize>)
            -> Result<DeviceArray<S::Elem, IxDyn>>;
    }
}

impl<S: Storage<Elem: Element>, D: Dimension> OnStream<'_, &DeviceArrayBase<S, D>> {
    /// [`delete`](DeviceArrayBase::delete) on this stream.
    pub fn delete(&self, indices: &[isize], axis: Option<isize>) -> Result<DeviceArray<S::Elem, IxDyn>> {
        const OP: &str = "DeviceArray::delete";
        let a = self.target;
        let src = OnStream::new(a, self.stream).c_order()?;
        let (view, k): (DeviceArrayView<'_, S::Elem, IxDyn>, usize) = match axis {
            None => (src.view().reshape(IxDyn(&[a.len()]))?, 0),
            Some(axis) => (a.view().into_dyn(), normalize_axis(OP, axis, a.ndim())?),
        };
        let len = view.shape()[k];
        let kept = kept_indices(len, indices).map_err(|index| ArrayShapeError::IndexOutOfRange {
            operation: OP,
            index: index as i64,
            len,
        })?;
        let kept = DeviceArray::from_ndarray(a.context(), &Array1::from(kept))?;
        OnStream::new(&view, self.stream).take(&kept, k, IndexMode::Clip)
    }
}

impl<S: Storage<Elem: Element>> DeviceArrayBase<S, Ix1> {
    /// A view without the leading (`front`) and/or trailing (`back`) zeros (NumPy's
    /// `trim_zeros(filt, trim)`: `"fb"` is both); all zeros give an empty view. Finds the
    /// nonzero elements on the device and waits for their first and last index.
    ///
    /// ```no_run
    /// use gpu_runtime::gpuarray::DeviceArray;
    /// use gpu_runtime::ndarray::arr1;
    /// let ctx = gpu_runtime::Context::default()?;
    /// let a = DeviceArray::from_ndarray(&ctx, &arr1(&[0, 0, 1, 0, 2, 0]))?;
    /// assert_eq!(a.trim_zeros(true, true)?.to_vec()?, [1, 0, 2]);
    /// assert_eq!(a.trim_zeros(true, false)?.to_vec()?, [1, 0, 2, 0]);
    /// # Ok::<(), gpu_runtime::Error>(())
    /// ```
    pub fn trim_zeros(&self, front: bool, back: bool) -> Result<DeviceArrayView<'_, S::Elem, Ix1>> {
        let nonzero = self.flatnonzero()?;
        let ends = match nonzero.len() {
            0 => None,
            n => {
                let first = nonzero.view().slice(ndarray::s![0..1])?.to_vec()?[0];
                let last = nonzero.view().slice(ndarray::s![n - 1..n])?.to_vec()?[0];
                Some((first as usize, last as usize))
            }
        };
        let (start, end) = trimmed(self.len(), ends, front, back);
        self.slice(ndarray::s![start..end])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delete_keeps_numpys_indices() {
        assert_eq!(kept_indices(5, &[1, 1, 3]).unwrap(), [0, 2, 4]);
        assert_eq!(kept_indices(3, &[0, -1]).unwrap(), [1]);
        assert_eq!(kept_indices(3, &[]).unwrap(), [0, 1, 2]);
        assert_eq!(kept_indices(5, &[7]).unwrap_err(), 7);
        assert_eq!(kept_indices(5, &[-6]).unwrap_err(), -6);
        assert_eq!(kept_indices(0, &[]).unwrap(), Vec::<i64>::new());
    }

    #[test]
    fn trimming_keeps_numpys_range() {
        assert_eq!(trimmed(6, Some((2, 4)), true, true), (2, 5));
        assert_eq!(trimmed(6, Some((2, 4)), true, false), (2, 6));
        assert_eq!(trimmed(6, Some((2, 4)), false, true), (0, 5));
        assert_eq!(trimmed(6, Some((2, 4)), false, false), (0, 6));
        assert_eq!(trimmed(3, None, true, true), (0, 0));
    }
}
