//! Views that move axes or read the same bytes as another element type: NumPy's `swapaxes`,
//! `moveaxis` (negative axes count from the end) and `a.view(dtype)`; and the axis arithmetic
//! they and the operations along one axis share (`normalize_axis`, `slice_along`, `index_along`). No data moves; the
//! memory and its record of stream uses stay the array's.

use ndarray::{Dimension, IxDyn, SliceInfoElem};

use crate::driver::memory::view::DeviceView;
use crate::error::{ArrayShapeError, Result};
use crate::gpuarray::array::core::{DeviceArrayBase, DeviceArrayView, Storage};
use crate::gpuarray::elements::element::Element;

/// `axis` (negative: counted from the end) as an index into `ndim` axes.
pub(crate) fn normalize_axis(operation: &'static str, axis: isize, ndim: usize) -> Result<usize> {
    let a = if axis < 0 { axis + ndim as isize } else { axis };
    if a < 0 || a as usize >= ndim {
        return Err(ArrayShapeError::NoSuchAxis {
            operation,
            axis: axis.unsigned_abs(),
            axes: ndim,
        }
        .into());
    }
    Ok(a as usize)
}

/// The slices `start..end` along axis `k` of `ndim` axes, whole along the others: the
/// neighbours' views of `diff`, `trapezoid`, `gradient` and `unwrap`, the borders of `pad`.
pub(crate) fn slice_along(ndim: usize, k: usize, start: isize, end: isize) -> Vec<SliceInfoElem> {
    (0..ndim)
        .map(|j| SliceInfoElem::Slice {
            start: if j == k { start } else { 0 },
            end: (j == k).then_some(end),
            step: 1,
        })
        .collect()
}

/// Element `i` of axis `k` of `ndim` axes, whole along the others (the axis dropped): a
/// component of `cross`, a key of `lexsort`.
pub(crate) fn index_along(ndim: usize, k: usize, i: usize) -> Vec<SliceInfoElem> {
    (0..ndim)
        .map(|j| {
            if j == k {
                SliceInfoElem::Index(i as isize)
            } else {
                SliceInfoElem::from(..)
            }
        })
        .collect()
}

/// NumPy's `rollaxis` as a permutation of `ndim` axes: `axis` taken out and put back before
/// the axis that was at `start` (`start` in `-ndim..=ndim`, else
/// [`ArrayShapeError::NoSuchAxis`], NumPy's `AxisError`).
pub(crate) fn rollaxis_order(ndim: usize, axis: isize, start: isize) -> Result<Vec<usize>> {
    const OP: &str = "DeviceArray::rollaxis";
    let axis = normalize_axis(OP, axis, ndim)?;
    let s = if start < 0 { start + ndim as isize } else { start };
    if s < 0 || s as usize > ndim {
        return Err(ArrayShapeError::NoSuchAxis {
            operation: OP,
            axis: start.unsigned_abs(),
            axes: ndim,
        }
        .into());
    }
    let mut s = s as usize;
    if axis < s {
        s -= 1;
    }
    let mut order: Vec<usize> = (0..ndim).filter(|&k| k != axis).collect();
    order.insert(s, axis);
    Ok(order)
}

/// The permutation of `ndim` axes that moves each of `source` to the same place of
/// `destination` and keeps the others in order (NumPy's `moveaxis`).
pub(crate) fn moveaxis_order(ndim: usize, source: &[isize], destination: &[isize]) -> Result<Vec<usize>> {
    const OP: &str = "DeviceArray::moveaxis";
    if source.len() != destination.len() {
        return Err(ArrayShapeError::ElementCounts {
            operation: OP,
            first: source.len(),
            second: destination.len(),
        }
        .into());
    }
    let src: Vec<usize> = source
        .iter()
        .map(|&a| normalize_axis(OP, a, ndim))
        .collect::<Result<_>>()?;
    let dst: Vec<usize> = destination
        .iter()
        .map(|&a| normalize_axis(OP, a, ndim))
        .collect::<Result<_>>()?;
    let repeated = |v: &[usize]| (1..v.len()).any(|i| v[..i].contains(&v[i]));
    if repeated(&src) || repeated(&dst) {
        return Err(ArrayShapeError::NotAPermutation {
            axes_given: if repeated(&src) { src } else { dst },
            axes: ndim,
        }
        .into());
    }
    let mut order: Vec<usize> = (0..ndim).filter(|a| !src.contains(a)).collect();
    let mut pairs: Vec<(usize, usize)> = dst.into_iter().zip(src).collect();
    pairs.sort_unstable();
    for (d, s) in pairs {
        order.insert(d, s);
    }
    Ok(order)
}

/// The shape and strides (in elements of the new type) of a view of `shape`/`strides` (in
/// elements of `from` bytes) as elements of `to` bytes, and the new offset in those elements,
/// by NumPy's rules; or why not.
pub(crate) fn view_layout(
    shape: &[usize],
    strides: &[isize],
    offset_bytes: usize,
    from: usize,
    to: usize,
) -> std::result::Result<(Vec<usize>, Vec<isize>, usize), &'static str> {
    if !offset_bytes.is_multiple_of(to) {
        return Err("the first element is not aligned to the new element size");
    }
    let mut shape = shape.to_vec();
    let mut byte_strides: Vec<isize> = strides.iter().map(|&s| s * from as isize).collect();
    if from != to {
        let Some(last) = shape.len().checked_sub(1) else {
            return Err("a 0-d array keeps its element size");
        };
        if shape[last] != 1 && byte_strides[last] != from as isize {
            return Err("the last axis must be contiguous to change the element size");
        }
        let bytes = shape[last] * from;
        if !bytes.is_multiple_of(to) {
            return Err("the last axis's bytes are no multiple of the new element size");
        }
        shape[last] = bytes / to;
        byte_strides[last] = to as isize;
    }
    if byte_strides.iter().any(|&s| s % to as isize != 0) {
        return Err("a stride is no multiple of the new element size");
    }
    let strides = byte_strides.iter().map(|&s| s / to as isize).collect();
    Ok((shape, strides, offset_bytes / to))
}

impl<S: Storage, D: Dimension> DeviceArrayBase<S, D> {
    /// The array with axes `a` and `b` exchanged (NumPy's `swapaxes`; negative axes count
    /// from the end): a view of the same memory.
    pub fn swapaxes(self, a: isize, b: isize) -> Result<Self> {
        let n = self.ndim();
        let a = normalize_axis("DeviceArray::swapaxes", a, n)?;
        let b = normalize_axis("DeviceArray::swapaxes", b, n)?;
        let mut order: Vec<usize> = (0..n).collect();
        order.swap(a, b);
        self.permuted_axes(&order)
    }

    /// The array with each axis of `source` moved to the same place of `destination`, the
    /// others kept in order (NumPy's `moveaxis`; negative axes count from the end): a view.
    ///
    /// ```no_run
    /// use gpu_runtime::gpuarray::DeviceArray;
    /// let ctx = gpu_runtime::Context::default()?;
    /// let a = DeviceArray::<f32, _>::zeros(&ctx, (3, 4, 5))?;
    /// assert_eq!(a.moveaxis(&[0], &[-1])?.shape(), [4, 5, 3]);
    /// # Ok::<(), gpu_runtime::Error>(())
    /// ```
    pub fn moveaxis(self, source: &[isize], destination: &[isize]) -> Result<Self> {
        let order = moveaxis_order(self.ndim(), source, destination)?;
        self.permuted_axes(&order)
    }

    /// The array with axis `axis` moved to sit before axis `start` (NumPy's older
    /// `rollaxis(a, axis, start)`; negative values count from the end, `start` may be
    /// `ndim`): a view. `moveaxis(&[axis], &[k])` says the same with the place it ends at.
    ///
    /// ```no_run
    /// use gpu_runtime::gpuarray::DeviceArray;
    /// let ctx = gpu_runtime::Context::default()?;
    /// let a = DeviceArray::<f32, _>::zeros(&ctx, (3, 4, 5, 6))?;
    /// assert_eq!(a.view().rollaxis(3, 1)?.shape(), [3, 6, 4, 5]);
    /// assert_eq!(a.view().rollaxis(1, 4)?.shape(), [3, 5, 6, 4]);
    /// # Ok::<(), gpu_runtime::Error>(())
    /// ```
    pub fn rollaxis(self, axis: isize, start: isize) -> Result<Self> {
        let n = self.ndim();
        let order = rollaxis_order(n, axis, start)?;
        self.permuted_axes(&order)
    }
}

impl<S: Storage<Elem: Element>, D: Dimension> DeviceArrayBase<S, D> {
    /// The same bytes read as elements of `U` (NumPy's `a.view(dtype)`): a read-only view.
    /// Of the same size, any layout; of another size, NumPy's rule: the last axis is
    /// contiguous and its length scales by the sizes' ratio (`(3, 4)` `i32` as `i16` is
    /// `(3, 8)`), and this crate's strides count elements, so the other strides and the first
    /// element must also fall on whole elements of `U`; a 0-d array keeps its size. Otherwise
    /// [`ArrayShapeError::ViewElementSize`].
    pub fn view_as<U: Element>(&self) -> Result<DeviceArrayView<'_, U, IxDyn>> {
        let (from, to) = (std::mem::size_of::<S::Elem>(), std::mem::size_of::<U>());
        let all = self.data.device_view();
        let base = all.device_ptr();
        let refuse = |why| ArrayShapeError::ViewElementSize {
            from,
            to,
            why,
            shape: self.shape().to_vec(),
        };
        if base % std::mem::align_of::<U>() as u64 != 0 {
            return Err(refuse("the memory is not aligned to the new element type").into());
        }
        let (shape, strides, offset) =
            view_layout(self.shape(), self.strides(), self.offset * from, from, to).map_err(refuse)?;
        let len = all.len() * from / to;
        let data = match all.uses() {
            Some(uses) => DeviceView::tracked(base, len, all.context(), uses),
            // SAFETY: the same bytes as the untracked view `all`, for its lifetime (the borrow
            // of `self`), read as `U`: every `Element` is plain data valid for any bits, and
            // `len` elements of `U` fit in the view's bytes.
            None => unsafe { DeviceView::from_raw_parts(all.context(), base, len) },
        };
        DeviceArrayBase::from_parts(data, offset, &shape, &strides)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn negative_axes_count_from_the_end() {
        assert_eq!(normalize_axis("t", -1, 3).unwrap(), 2);
        assert_eq!(normalize_axis("t", 2, 3).unwrap(), 2);
        assert!(normalize_axis("t", 3, 3).is_err());
        assert!(normalize_axis("t", -4, 3).is_err());
        assert!(normalize_axis("t", 0, 0).is_err());
    }

    #[test]
    fn rollaxis_is_numpys_order() {
        // np.rollaxis(np.zeros((3, 4, 5, 6)), axis, start).shape, NumPy 2.4.
        let shape = [3, 4, 5, 6];
        let cases: [(isize, isize, [usize; 4]); 8] = [
            (3, 1, [3, 6, 4, 5]),
            (1, 4, [3, 5, 6, 4]),
            (2, 0, [5, 3, 4, 6]),
            (-1, -2, [3, 4, 6, 5]),
            (0, 4, [4, 5, 6, 3]),
            (2, 2, [3, 4, 5, 6]),
            (2, 3, [3, 4, 5, 6]),
            (-4, 0, [3, 4, 5, 6]),
        ];
        for (axis, start, want) in cases {
            let order = rollaxis_order(4, axis, start).unwrap();
            let got: Vec<usize> = order.iter().map(|&k| shape[k]).collect();
            assert_eq!(got, want, "rollaxis({axis}, {start})");
        }
        assert!(rollaxis_order(4, 4, 0).is_err());
        assert!(rollaxis_order(4, 0, 5).is_err());
        assert!(rollaxis_order(4, 0, -5).is_err());
    }

    #[test]
    fn moveaxis_is_numpys_order() {
        // np.moveaxis(np.zeros((3, 4, 5)), 0, -1).shape == (4, 5, 3)
        assert_eq!(moveaxis_order(3, &[0], &[-1]).unwrap(), [1, 2, 0]);
        // np.moveaxis(x, -1, 0): (5, 3, 4)
        assert_eq!(moveaxis_order(3, &[-1], &[0]).unwrap(), [2, 0, 1]);
        // np.moveaxis(x, [0, 1], [-1, -2]): (5, 4, 3)
        assert_eq!(moveaxis_order(3, &[0, 1], &[-1, -2]).unwrap(), [2, 1, 0]);
        // np.moveaxis(np.zeros((2,3,4,5)), [1, 3], [0, 2]) -> axes (1, 0, 3, 2)
        assert_eq!(moveaxis_order(4, &[1, 3], &[0, 2]).unwrap(), [1, 0, 3, 2]);
        assert!(moveaxis_order(3, &[0, 0], &[1, 2]).is_err());
        assert!(moveaxis_order(3, &[0], &[1, 2]).is_err());
        assert!(moveaxis_order(3, &[3], &[0]).is_err());
    }

    #[test]
    fn views_as_other_sizes_follow_numpys_last_axis_rule() {
        // (3, 4) int32 C order as int16: (3, 8), strides (8, 1).
        assert_eq!(
            view_layout(&[3, 4], &[4, 1], 0, 4, 2).unwrap(),
            (vec![3, 8], vec![8, 1], 0)
        );
        // as int64: (3, 2), strides (2, 1).
        assert_eq!(
            view_layout(&[3, 4], &[4, 1], 0, 4, 8).unwrap(),
            (vec![3, 2], vec![2, 1], 0)
        );
        // same size, transposed: any layout.
        assert_eq!(
            view_layout(&[4, 3], &[1, 4], 4, 4, 4).unwrap(),
            (vec![4, 3], vec![1, 4], 1)
        );
        // transposed to another size: the last axis is not contiguous.
        assert!(view_layout(&[4, 3], &[1, 4], 0, 4, 2).is_err());
        // 3 int16 are 6 bytes, no whole int32.
        assert!(view_layout(&[3], &[1], 0, 2, 4).is_err());
        // 0-d keeps its size.
        assert!(view_layout(&[], &[], 0, 4, 2).is_err());
        assert_eq!(view_layout(&[], &[], 0, 4, 4).unwrap(), (vec![], vec![], 0));
        // A start not on a whole element of the new type.
        assert!(view_layout(&[2], &[1], 2, 2, 4).is_err());
        // A row stride of 3 int16 (a slice [:, :2] of a (n, 3) array) is no whole int32.
        assert!(view_layout(&[2, 2], &[3, 1], 0, 2, 4).is_err());
        // Last axis of length 1 with any stride: NumPy allows.
        assert_eq!(
            view_layout(&[3, 1], &[2, 7], 0, 8, 4).unwrap(),
            (vec![3, 2], vec![4, 1], 0)
        );
        // Empty last axis.
        assert_eq!(
            view_layout(&[2, 0], &[0, 1], 0, 4, 2).unwrap(),
            (vec![2, 0], vec![0, 1], 0)
        );
    }
}
