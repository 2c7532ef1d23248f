//! The diagonal as a view: NumPy's `diagonal(a, offset, axis1, axis2)`. No data moves: the
//! diagonal of two axes is one axis whose stride is the sum of theirs.

use ndarray::{Dimension, IxDyn};

use crate::error::{ArrayShapeError, Result};
use crate::gpuarray::array::axes::normalize_axis;
use crate::gpuarray::array::core::{DeviceArrayBase, Storage};

/// The layout of the diagonal `offset` (above the main one when positive) of axes `a1` and
/// `a2` of `shape`/`strides` (NumPy's): the other axes in order, then the diagonal's; and the
/// offset of its first element from the array's.
pub(crate) fn diagonal_layout(
    shape: &[usize],
    strides: &[isize],
    offset: isize,
    a1: usize,
    a2: usize,
) -> (Vec<usize>, Vec<isize>, isize) {
    // The first element is at (0, offset) above the main diagonal, (-offset, 0) below it.
    let (r0, c0) = if offset >= 0 {
        (0, offset.unsigned_abs())
    } else {
        (offset.unsigned_abs(), 0)
    };
    let len = shape[a1].saturating_sub(r0).min(shape[a2].saturating_sub(c0));
    let first = if len > 0 {
        r0 as isize * strides[a1] + c0 as isize * strides[a2]
    } else {
        0
    };
    let (mut out_shape, mut out_strides): (Vec<usize>, Vec<isize>) = shape
        .iter()
        .zip(strides)
        .enumerate()
        .filter(|&(k, _)| k != a1 && k != a2)
        .map(|(_, (&d, &s))| (d, s))
        .unzip();
    out_shape.push(len);
    out_strides.push(strides[a1] + strides[a2]);
    (out_shape, out_strides, first)
}

impl<S: Storage, D: Dimension> DeviceArrayBase<S, D> {
    /// The diagonal `offset` (positive: above the main one, negative: below) of the plane of
    /// axes `axis1` and `axis2` (negative: from the end), as a view whose last axis runs along
    /// it and whose other axes are the array's others (NumPy's `diagonal(a, offset, axis1,
    /// axis2)`; its defaults are `0, 0, 1`). A view of a writable array is writable: NumPy's
    /// `fill_diagonal` is `a.view_mut().diagonal(0, 0, 1)?.fill(v)`, its `trace` is
    /// `a.diagonal(0, 0, 1)?.sum()`. Fewer than two axes is [`ArrayShapeError::NoSuchAxis`],
    /// one axis twice [`ArrayShapeError::RepeatedAxis`].
    ///
    /// ```no_run
    /// use gpu_runtime::gpuarray::DeviceArray;
    /// let ctx = gpu_runtime::Context::default()?;
    /// let a = DeviceArray::<f32, _>::arange(&ctx, 0.0, 9.0, 1.0)?.reshape((3, 3))?;
    /// assert_eq!(a.view().diagonal(0, 0, 1)?.to_vec()?, [0.0, 4.0, 8.0]);
    /// assert_eq!(a.view().diagonal(1, 0, 1)?.to_vec()?, [1.0, 5.0]);
    /// assert_eq!(a.view().diagonal(-2, 0, 1)?.to_vec()?, [6.0]);
    /// # Ok::<(), gpu_runtime::Error>(())
    /// ```
    pub fn diagonal(self, offset: isize, axis1: isize, axis2: isize) -> Result<DeviceArrayBase<S, IxDyn>> {
        const OP: &str = "DeviceArray::diagonal";
        let n = self.ndim();
        if n < 2 {
            return Err(ArrayShapeError::NoSuchAxis {
                operation: OP,
                axis: 1,
                axes: n,
            }
            .into());
        }
        let a1 = normalize_axis(OP, axis1, n)?;
        let a2 = normalize_axis(OP, axis2, n)?;
        if a1 == a2 {
            return Err(ArrayShapeError::RepeatedAxis {
                operation: OP,
                axis: a1,
            }
            .into());
        }
        let (shape, strides, first) = diagonal_layout(self.shape(), self.strides(), offset, a1, a2);
        // In range: `first` is an element of the array (or 0 for an empty diagonal).
        let start = (self.offset as isize + first) as usize;
        DeviceArrayBase::from_parts(self.data, start, &shape, &strides)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpuarray::array::layout::{c_strides, offset_of};

    fn positions(shape: &[usize], strides: &[isize], first: isize) -> Vec<isize> {
        let n: usize = shape.iter().product();
        (0..n).map(|i| first + offset_of(i, shape, strides)).collect()
    }

    #[test]
    fn diagonals_are_numpys() {
        // A 3 x 4 matrix in C order: element (i, j) at 4i + j.
        let s = c_strides(&[3, 4]);
        let (shape, strides, first) = diagonal_layout(&[3, 4], &s, 0, 0, 1);
        assert_eq!(positions(&shape, &strides, first), [0, 5, 10]);
        let (shape, strides, first) = diagonal_layout(&[3, 4], &s, 1, 0, 1);
        assert_eq!(positions(&shape, &strides, first), [1, 6, 11]);
        let (shape, strides, first) = diagonal_layout(&[3, 4], &s, 2, 0, 1);
        assert_eq!(positions(&shape, &strides, first), [2, 7]);
        let (shape, strides, first) = diagonal_layout(&[3, 4], &s, -1, 0, 1);
        assert_eq!(positions(&shape, &strides, first), [4, 9]);
        // Past the corner: empty.
        assert_eq!(diagonal_layout(&[3, 4], &s, 4, 0, 1).0, [0]);
        assert_eq!(diagonal_layout(&[3, 4], &s, -3, 0, 1).0, [0]);
        // Axes the other way round: the transpose's diagonal.
        let (shape, strides, first) = diagonal_layout(&[3, 4], &s, 1, 1, 0);
        assert_eq!(positions(&shape, &strides, first), [4, 9]);
        // Of a 2 x 3 x 3 stack along the last two axes: one diagonal per matrix.
        let s = c_strides(&[2, 3, 3]);
        let (shape, strides, first) = diagonal_layout(&[2, 3, 3], &s, 0, 1, 2);
        assert_eq!(shape, [2, 3]);
        assert_eq!(positions(&shape, &strides, first), [0, 4, 8, 9, 13, 17]);
    }
}
