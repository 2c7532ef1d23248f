//! An array cut along one axis into views: NumPy's `split`, `array_split`, `hsplit`, `vsplit`
//! and `dsplit`. No data moves; each piece is a view of the array, as NumPy's are.
//!
//! The bounds of the pieces are the free functions at the top (no device needed,
//! unit-tested); the methods cut the array's layout at them.

use ndarray::Dimension;

use crate::error::{ArrayShapeError, Result};
use crate::gpuarray::array::axes::normalize_axis;
use crate::gpuarray::array::core::{DeviceArrayBase, DeviceArrayView, Storage};

/// The `(start, stop)` of each of `sections` pieces of an axis of `len` (NumPy's
/// `array_split`): the first `len % sections` pieces hold one element more than the others.
/// `equal` refuses sections that do not divide `len` (NumPy's `split`).
pub(crate) fn section_bounds(
    operation: &'static str,
    len: usize,
    sections: usize,
    equal: bool,
) -> Result<Vec<(usize, usize)>> {
    if sections == 0 || (equal && !len.is_multiple_of(sections)) {
        return Err(ArrayShapeError::SplitSections {
            operation,
            len,
            sections,
        }
        .into());
    }
    let (each, extra) = (len / sections, len % sections);
    let mut start = 0;
    Ok((0..sections)
        .map(|k| {
            let stop = start + each + usize::from(k < extra);
            let piece = (start, stop);
            start = stop;
            piece
        })
        .collect())
}

/// The `(start, stop)` of the pieces an axis of `len` is cut into before each of `indices`
/// (NumPy's `split(a, [i, j])`: `a[:i]`, `a[i:j]`, `a[j:]`). Each index reads as a Python
/// slice bound does (negative from the end, clamped to the axis); a piece whose stop comes
/// before its start is empty.
pub(crate) fn index_bounds(len: usize, indices: &[isize]) -> Vec<(usize, usize)> {
    let clamp = |i: isize| -> usize {
        if i < 0 {
            len.saturating_sub(i.unsigned_abs())
        } else {
            i.unsigned_abs().min(len)
        }
    };
    let mut points = Vec::with_capacity(indices.len() + 2);
    points.push(0);
    points.extend(indices.iter().map(|&i| clamp(i)));
    points.push(len);
    points.windows(2).map(|w| (w[0], w[1].max(w[0]))).collect()
}

impl<S: Storage, D: Dimension> DeviceArrayBase<S, D> {
    /// The array cut along `axis` (negative: from the end) into `sections` views of equal
    /// length (NumPy's `split(a, sections, axis)`). Sections that do not divide the axis, or
    /// none, are [`ArrayShapeError::SplitSections`]; [`array_split`](Self::array_split)
    /// allows unequal ones.
    ///
    /// ```no_run
    /// use gpu_runtime::gpuarray::DeviceArray;
    /// let ctx = gpu_runtime::Context::default()?;
    /// let a = DeviceArray::<f32, _>::arange(&ctx, 0.0, 6.0, 1.0)?;
    /// let parts = a.split(3, 0)?;
    /// assert_eq!(parts[1].to_vec()?, [2.0, 3.0]);
    /// let parts = a.split_at_indices(&[1, -2], 0)?;
    /// assert_eq!(parts[1].to_vec()?, [1.0, 2.0, 3.0]);
    /// # Ok::<(), gpu_runtime::Error>(())
    /// ```
    pub fn split(&self, sections: usize, axis: isize) -> Result<Vec<DeviceArrayView<'_, S::Elem, D>>> {
        const OP: &str = "DeviceArray::split";
        let axis = normalize_axis(OP, axis, self.ndim())?;
        let bounds = section_bounds(OP, self.shape()[axis], sections, true)?;
        self.pieces(axis, &bounds)
    }

    /// The array cut along `axis` into `sections` views whose lengths differ by at most one,
    /// the longer first (NumPy's `array_split`).
    pub fn array_split(&self, sections: usize, axis: isize) -> Result<Vec<DeviceArrayView<'_, S::Elem, D>>> {
        const OP: &str = "DeviceArray::array_split";
        let axis = normalize_axis(OP, axis, self.ndim())?;
        let bounds = section_bounds(OP, self.shape()[axis], sections, false)?;
        self.pieces(axis, &bounds)
    }

    /// The array cut along `axis` before each of `indices` (NumPy's `split(a, [i, j], axis)`:
    /// the views `a[:i]`, `a[i:j]`, `a[j:]` along the axis; indices read as slice bounds, so
    /// negative ones count from the end and ones past the end give empty views).
    pub fn split_at_indices(
        &self,
        indices: &[isize],
        axis: isize,
    ) -> Result<Vec<DeviceArrayView<'_, S::Elem, D>>> {
        let axis = normalize_axis("DeviceArray::split_at_indices", axis, self.ndim())?;
        self.pieces(axis, &index_bounds(self.shape()[axis], indices))
    }

    /// [`split`](Self::split) along the second axis, a 1-d array's first (NumPy's `hsplit`).
    pub fn hsplit(&self, sections: usize) -> Result<Vec<DeviceArrayView<'_, S::Elem, D>>> {
        let axis = if self.ndim() == 1 { 0 } else { 1 };
        self.split_needing("DeviceArray::hsplit", 1, sections, axis)
    }

    /// [`split`](Self::split) along the first axis of an array of at least two (NumPy's
    /// `vsplit`).
    pub fn vsplit(&self, sections: usize) -> Result<Vec<DeviceArrayView<'_, S::Elem, D>>> {
        self.split_needing("DeviceArray::vsplit", 2, sections, 0)
    }

    /// [`split`](Self::split) along the third axis of an array of at least three (NumPy's
    /// `dsplit`).
    pub fn dsplit(&self, sections: usize) -> Result<Vec<DeviceArrayView<'_, S::Elem, D>>> {
        self.split_needing("DeviceArray::dsplit", 3, sections, 2)
    }

    /// An equal split along `axis` of an array that must have at least `axes` axes (NumPy's
    /// `hsplit`/`vsplit`/`dsplit` refuse fewer).
    fn split_needing(
        &self,
        operation: &'static str,
        axes: usize,
        sections: usize,
        axis: usize,
    ) -> Result<Vec<DeviceArrayView<'_, S::Elem, D>>> {
        if self.ndim() < axes {
            return Err(ArrayShapeError::NoSuchAxis {
                operation,
                axis: axes - 1,
                axes: self.ndim(),
            }
            .into());
        }
        let bounds = section_bounds(operation, self.shape()[axis], sections, true)?;
        self.pieces(axis, &bounds)
    }

    /// The views of the array between each `(start, stop)` of `bounds` along `axis`.
    fn pieces(&self, axis: usize, bounds: &[(usize, usize)]) -> Result<Vec<DeviceArrayView<'_, S::Elem, D>>> {
        bounds
            .iter()
            .map(|&(start, stop)| {
                let view = self.view();
                let mut shape = view.shape().to_vec();
                shape[axis] = stop - start;
                let strides = view.strides().to_vec();
                // In bounds: rows `start..stop` of the axis are elements of the array; an empty
                // piece keeps the array's own offset.
                let offset = if stop > start {
                    (view.offset as isize + start as isize * strides[axis]) as usize
                } else {
                    view.offset
                };
                DeviceArrayBase::from_parts(view.data, offset, &shape, &strides)
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;

    #[test]
    fn sections_are_numpys() {
        assert_eq!(section_bounds("t", 6, 3, true).unwrap(), [(0, 2), (2, 4), (4, 6)]);
        // array_split: 7 into 3 is 3, 2, 2; 2 into 4 leaves two empty pieces.
        assert_eq!(
            section_bounds("t", 7, 3, false).unwrap(),
            [(0, 3), (3, 5), (5, 7)]
        );
        assert_eq!(
            section_bounds("t", 2, 4, false).unwrap(),
            [(0, 1), (1, 2), (2, 2), (2, 2)]
        );
        assert_eq!(section_bounds("t", 0, 2, true).unwrap(), [(0, 0), (0, 0)]);
        for (len, sections, equal) in [(7, 3, true), (6, 0, true), (6, 0, false)] {
            let e = section_bounds("t", len, sections, equal).unwrap_err();
            assert!(
                matches!(e, Error::Shape(ArrayShapeError::SplitSections { len: l, sections: s, .. }) if l == len && s == sections),
                "{e}"
            );
        }
    }

    #[test]
    fn indices_read_as_slice_bounds() {
        assert_eq!(index_bounds(8, &[3, 5, 6]), [(0, 3), (3, 5), (5, 6), (6, 8)]);
        // Negative from the end, past the end clamped, falling bounds give empty pieces.
        assert_eq!(index_bounds(8, &[-2]), [(0, 6), (6, 8)]);
        assert_eq!(index_bounds(8, &[10, 20]), [(0, 8), (8, 8), (8, 8)]);
        assert_eq!(index_bounds(8, &[5, 2]), [(0, 5), (5, 5), (2, 8)]);
        assert_eq!(index_bounds(8, &[-20]), [(0, 0), (0, 8)]);
        assert_eq!(index_bounds(8, &[]), [(0, 8)]);
    }
}
