//! NumPy's functions that add or remove elements (its "adding and removing elements"
//! routines): `append`, `insert`, `delete`, `resize` and `trim_zeros`. Each is a join, a gather through
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

/// Where NumPy's `insert` puts new slices along an axis of `len`: `at` (negative from the
/// end, each in `0..=len`) with `count` new slices (for one index, all of them there; else
/// one an index, those of equal indices in the order given). Returns, for each position of
/// the result's axis, the index it reads from the old axis followed by the new slices
/// (`len + j` for new slice `j`), or the first index outside `-len..=len`.
pub(crate) fn insert_sources(len: usize, at: &[isize], count: usize) -> std::result::Result<Vec<i64>, isize> {
    let mut at_norm = Vec::with_capacity(at.len());
    for &i in at {
        let j = if i < 0 { i + len as isize } else { i };
        if j < 0 || j as usize > len {
            return Err(i);
        }
        at_norm.push(j as usize);
    }
    // The final position of each new slice: NumPy sorts the indices stably and shifts the
    // k-th of them by k.
    let mut new_at = vec![0usize; count];
    if let [one] = at_norm[..] {
        for (j, p) in new_at.iter_mut().enumerate() {
            *p = one + j;
        }
    } else {
        let mut order: Vec<usize> = (0..at_norm.len()).collect();
        order.sort_by_key(|&j| at_norm[j]);
        for (k, &j) in order.iter().enumerate() {
            new_at[j] = at_norm[j] + k;
        }
    }
    let total = len + count;
    let mut sources = vec![-1i64; total];
    for (j, &p) in new_at.iter().enumerate() {
        sources[p] = (len + j) as i64;
    }
    for (s, old) in sources.iter_mut().filter(|s| **s < 0).zip(0i64..) {
        *s = old;
    }
    Ok(sources)
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

        /// A copy with `values` inserted before index `index` along `axis` (NumPy's
        /// `insert(arr, index, values, axis)` of one index; negative counts from the end,
        /// `len` appends): `values` is given the array's axes (leading ones of length 1), its
        /// first axis moved to `axis`, and broadcast against the array's other axes; all its
        /// slices along `axis` go in at `index`. `axis: None` inserts into the elements in C
        /// order and gives a 1-d array. Errors: an index outside `-len..=len`
        /// ([`ArrayShapeError::IndexOutOfRange`], NumPy's `IndexError`), `values` that do not
        /// broadcast ([`ArrayShapeError::Broadcast`]).
        ///
        /// ```no_run
        /// use gpu_runtime::gpuarray::DeviceArray;
        /// use gpu_runtime::ndarray::{arr1, arr2};
        /// let ctx = gpu_runtime::Context::default()?;
        /// let a = DeviceArray::from_ndarray(&ctx, &arr2(&[[1, 1], [2, 2], [3, 3]]))?;
        /// let v = DeviceArray::from_ndarray(&ctx, &arr1(&[5, 6, 7]))?;
        /// // np.insert(a, 1, [5, 6, 7], axis=1): a new column.
        /// assert_eq!(a.insert(1, &v, Some(1))?.to_vec()?, [1, 5, 1, 2, 6, 2, 3, 7, 3]);
        /// # Ok::<(), gpu_runtime::Error>(())
        /// ```
        fn insert[SV: Storage<Elem = S::Elem>, DV: Dimension](&self, index: isize, values: &DeviceArrayBase<SV, DV>, axis: Option<isize>)
            -> Result<DeviceArray<S::Elem, IxDyn>>;

        /// A copy with one slice of `values` inserted before each of `indices` along `axis`
        /// (NumPy's `insert(arr, [i, j, ...], values, axis)`): slices for equal indices go in
        /// the order given, every index counts positions of the original array; `values` is
        /// given the array's axes (leading ones of length 1) and broadcast to `indices.len()`
        /// slices (its first axis is not moved, unlike [`insert`](Self::insert)'s). One index
        /// is NumPy's sequence of one: all slices of `values` along `axis` go in there.
        /// `axis: None` works on the elements in C order. Errors as [`insert`](Self::insert)'s.
        fn insert_each[SV: Storage<Elem = S::Elem>, DV: Dimension](&self, indices: &[isize], values: &DeviceArrayBase<SV, DV>, axis: Option<isize>)
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

    /// [`insert`](DeviceArrayBase::insert) on this stream.
    pub fn insert<SV: Storage<Elem = S::Elem>, DV: Dimension>(
        &self,
        index: isize,
        values: &DeviceArrayBase<SV, DV>,
        axis: Option<isize>,
    ) -> Result<DeviceArray<S::Elem, IxDyn>> {
        self.insert_at(&[index], true, values, axis)
    }

    /// [`insert_each`](DeviceArrayBase::insert_each) on this stream.
    pub fn insert_each<SV: Storage<Elem = S::Elem>, DV: Dimension>(
        &self,
        indices: &[isize],
        values: &DeviceArrayBase<SV, DV>,
        axis: Option<isize>,
    ) -> Result<DeviceArray<S::Elem, IxDyn>> {
        self.insert_at(indices, false, values, axis)
    }

    /// NumPy's `insert`: `one` for a scalar index (whose values' first axis moves to `axis`).
    /// The array and the broadcast values are joined along the axis, then gathered in the
    /// result's order (one copy each).
    fn insert_at<SV: Storage<Elem = S::Elem>, DV: Dimension>(
        &self,
        at: &[isize],
        one: bool,
        values: &DeviceArrayBase<SV, DV>,
        axis: Option<isize>,
    ) -> Result<DeviceArray<S::Elem, IxDyn>> {
        const OP: &str = "DeviceArray::insert";
        let a = self.target;
        let src = OnStream::new(a, self.stream).c_order()?;
        let (view, k): (DeviceArrayView<'_, S::Elem, IxDyn>, usize) = match axis {
            None => (src.view().reshape(IxDyn(&[a.len()]))?, 0),
            Some(axis) => (a.view().into_dyn(), normalize_axis(OP, axis, a.ndim())?),
        };
        let len = view.shape()[k];
        // NumPy's `array(values, ndmin=arr.ndim)`, then for one index its first axis at `axis`.
        let mut v = values.view().into_dyn();
        while v.ndim() < view.ndim() {
            v = v.expand_dims(0)?;
        }
        if one {
            v = v.moveaxis(&[0], &[k as isize])?;
        }
        let count = if at.len() == 1 {
            v.shape().get(k).copied().unwrap_or(1)
        } else {
            at.len()
        };
        let mut target = view.shape().to_vec();
        target[k] = count;
        let v = v.broadcast_to(&target)?;
        let sources = insert_sources(len, at, count).map_err(|index| ArrayShapeError::IndexOutOfRange {
            operation: OP,
            index: index as i64,
            len,
        })?;
        let joined = OnStream::new(a.context(), self.stream).concatenate(&[&view, &v], k)?;
        let sources = DeviceArray::from_ndarray(a.context(), &Array1::from(sources))?;
        OnStream::new(&joined, self.stream).take(&sources, k, IndexMode::Clip)
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
    fn insert_puts_slices_where_numpy_does() {
        // np.insert(np.arange(5), 2, [10, 11]) -> [0, 1, 10, 11, 2, 3, 4]
        assert_eq!(insert_sources(5, &[2], 2).unwrap(), [0, 1, 5, 6, 2, 3, 4]);
        // np.insert(np.arange(5), [3, 1, 3], [10, 11, 12]) -> [0, 11, 1, 2, 10, 12, 3, 4]
        assert_eq!(
            insert_sources(5, &[3, 1, 3], 3).unwrap(),
            [0, 6, 1, 2, 5, 7, 3, 4]
        );
        // Negative and end indices; none.
        assert_eq!(insert_sources(3, &[-1, 3], 2).unwrap(), [0, 1, 3, 2, 4]);
        assert_eq!(insert_sources(3, &[], 0).unwrap(), [0, 1, 2]);
        assert_eq!(insert_sources(0, &[0], 1).unwrap(), [0]);
        assert_eq!(insert_sources(3, &[4], 1), Err(4));
        assert_eq!(insert_sources(3, &[-4], 1), Err(-4));
    }

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
