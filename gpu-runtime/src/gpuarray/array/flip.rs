//! Views that reverse axes: NumPy's `flip`, `fliplr`, `flipud` and `rot90`. No data moves: an
//! axis reversed is the same memory read from its last element with the stride negated.

use ndarray::Dimension;

use crate::error::{ArrayShapeError, Result};
use crate::gpuarray::array::axes::normalize_axis;
use crate::gpuarray::array::core::{DeviceArrayBase, Storage};

/// The offset and strides of `shape`/`strides` at `offset` with each axis of `axes` reversed:
/// the first element becomes the axis' last, the stride its negation.
pub(crate) fn flipped(
    shape: &[usize],
    strides: &[isize],
    offset: usize,
    axes: &[usize],
) -> (usize, Vec<isize>) {
    let mut strides = strides.to_vec();
    let mut first = offset as isize;
    for &k in axes {
        if shape[k] > 0 {
            first += (shape[k] as isize - 1) * strides[k];
        }
        strides[k] = -strides[k];
    }
    // In range: the new first element is an element of the view.
    (first as usize, strides)
}

impl<S: Storage, D: Dimension> DeviceArrayBase<S, D> {
    /// The array with axis `axis` reversed (NumPy's `flip(a, axis)`; negative axes count from
    /// the end): a view of the same memory.
    ///
    /// ```no_run
    /// use gpu_runtime::gpuarray::DeviceArray;
    /// let ctx = gpu_runtime::Context::default()?;
    /// let a = DeviceArray::<f32, _>::arange(&ctx, 0.0, 6.0, 1.0)?.reshape((2, 3))?;
    /// assert_eq!(a.view().flip(-1)?.to_vec()?, [2.0, 1.0, 0.0, 5.0, 4.0, 3.0]);
    /// # Ok::<(), gpu_runtime::Error>(())
    /// ```
    pub fn flip(self, axis: isize) -> Result<Self> {
        self.flip_axes(&[axis])
    }

    /// The array with each axis of `axes` reversed (NumPy's `flip(a, axis=(j, k))`; an axis
    /// given twice is reversed twice, as NumPy's): a view.
    pub fn flip_axes(self, axes: &[isize]) -> Result<Self> {
        let n = self.ndim();
        let axes: Vec<usize> = axes
            .iter()
            .map(|&a| normalize_axis("DeviceArray::flip", a, n))
            .collect::<Result<_>>()?;
        let (offset, strides) = flipped(self.shape(), self.strides(), self.offset, &axes);
        let shape = self.shape().to_vec();
        DeviceArrayBase::from_parts(self.data, offset, &shape, &strides)
    }

    /// The array with every axis reversed (NumPy's `flip(a)`, `axis=None`): a view.
    pub fn flip_all(mut self) -> Self {
        let axes: Vec<usize> = (0..self.ndim()).collect();
        let (offset, strides) = flipped(self.shape(), self.strides(), self.offset, &axes);
        self.offset = offset;
        for (slot, s) in self.strides.slice_mut().iter_mut().zip(strides) {
            // `ndarray`'s convention: `isize` strides stored as `usize`.
            *slot = s as usize;
        }
        self
    }

    /// The array with its second axis reversed (NumPy's `fliplr`): a view. Fewer than two axes
    /// is [`ArrayShapeError::NoSuchAxis`].
    pub fn fliplr(self) -> Result<Self> {
        if self.ndim() < 2 {
            return Err(no_axis("DeviceArray::fliplr", 1, self.ndim()));
        }
        self.flip(1)
    }

    /// The array with its first axis reversed (NumPy's `flipud`): a view. A 0-d array is
    /// [`ArrayShapeError::NoSuchAxis`].
    pub fn flipud(self) -> Result<Self> {
        if self.ndim() < 1 {
            return Err(no_axis("DeviceArray::flipud", 0, 0));
        }
        self.flip(0)
    }

    /// The array turned `k` quarter turns (negative: the other way) in the plane of `axes`,
    /// from the first axis towards the second (NumPy's `rot90(m, k, axes)`; NumPy's default
    /// `axes` is `(0, 1)`): a view. Fewer than two axes is [`ArrayShapeError::NoSuchAxis`], the
    /// same axis twice [`ArrayShapeError::RepeatedAxis`].
    ///
    /// ```no_run
    /// use gpu_runtime::gpuarray::DeviceArray;
    /// let ctx = gpu_runtime::Context::default()?;
    /// let m = DeviceArray::<i32, _>::arange(&ctx, 1.0, 5.0, 1.0)?.reshape((2, 2))?;
    /// // [[1, 2], [3, 4]] -> [[2, 4], [1, 3]]
    /// assert_eq!(m.view().rot90(1, (0, 1))?.to_vec()?, [2, 4, 1, 3]);
    /// # Ok::<(), gpu_runtime::Error>(())
    /// ```
    pub fn rot90(self, k: isize, axes: (isize, isize)) -> Result<Self> {
        const OP: &str = "DeviceArray::rot90";
        let n = self.ndim();
        if n < 2 {
            return Err(no_axis(OP, 1, n));
        }
        let a = normalize_axis(OP, axes.0, n)?;
        let b = normalize_axis(OP, axes.1, n)?;
        if a == b {
            return Err(ArrayShapeError::RepeatedAxis {
                operation: OP,
                axis: a,
            }
            .into());
        }
        let mut order: Vec<usize> = (0..n).collect();
        order.swap(a, b);
        // NumPy's three cases: a half turn reverses both axes; a quarter turn reverses the
        // second axis and exchanges them; three quarters exchange them, then reverse the second.
        match k.rem_euclid(4) {
            0 => Ok(self),
            1 => self.flip(b as isize)?.permuted_axes(&order),
            2 => self.flip_axes(&[a as isize, b as isize]),
            _ => self.permuted_axes(&order)?.flip(b as isize),
        }
    }
}

fn no_axis(operation: &'static str, axis: usize, axes: usize) -> crate::error::Error {
    ArrayShapeError::NoSuchAxis {
        operation,
        axis,
        axes,
    }
    .into()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpuarray::array::layout::{c_strides, offset_of};

    /// The flat positions (in the memory of `offset`) of a view's elements in C order.
    fn positions(shape: &[usize], strides: &[isize], offset: usize) -> Vec<isize> {
        let n: usize = shape.iter().product();
        (0..n)
            .map(|i| offset as isize + offset_of(i, shape, strides))
            .collect()
    }

    #[test]
    fn a_flipped_axis_reads_its_elements_backwards() {
        let (shape, strides) = ([2usize, 3], c_strides(&[2, 3]));
        let (off, s) = flipped(&shape, &strides, 0, &[1]);
        assert_eq!(positions(&shape, &s, off), [2, 1, 0, 5, 4, 3]);
        let (off, s) = flipped(&shape, &strides, 0, &[0]);
        assert_eq!(positions(&shape, &s, off), [3, 4, 5, 0, 1, 2]);
        let (off, s) = flipped(&shape, &strides, 0, &[0, 1]);
        assert_eq!(positions(&shape, &s, off), [5, 4, 3, 2, 1, 0]);
        // Twice is the identity, from a view that starts elsewhere too.
        let (off, s) = flipped(&shape, &strides, 7, &[1, 1]);
        assert_eq!((off, s), (7, strides.clone()));
        // An empty axis keeps its first element.
        assert_eq!(flipped(&[0, 3], &[3, 1], 4, &[0]).0, 4);
    }
}
