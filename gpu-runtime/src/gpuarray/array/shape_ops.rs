//! Shape changes without a copy (`squeeze`, `expand_dims`, `atleast_1d`/`2d`/`3d`,
//! `reshape_infer`) and with one (`ravel`): NumPy's functions of those names.
//!
//! The layout arithmetic is the free functions at the top (no device needed, unit-tested);
//! the methods below apply it to an array's storage, or copy into a new array with `assign`.

use ndarray::{Dimension, Ix1, IxDyn, Order};

use crate::error::{ArrayShapeError, Error, Result};
use crate::gpuarray::array::core::{DeviceArray, DeviceArrayBase, Storage};
use crate::gpuarray::array::layout;
use crate::gpuarray::array::on_stream::{on_legacy_stream, OnStream};

/// `shape` and `strides` without their axes of length 1.
pub(crate) fn squeezed(shape: &[usize], strides: &[isize]) -> (Vec<usize>, Vec<isize>) {
    shape
        .iter()
        .zip(strides)
        .filter(|(&d, _)| d != 1)
        .map(|(&d, &s)| (d, s))
        .unzip()
}

/// `shape` and `strides` with a new axis of length 1 at `axis` (0 to `shape.len()`). Its
/// stride is the one a dense array would give it, so that a contiguous array stays contiguous.
pub(crate) fn expanded(shape: &[usize], strides: &[isize], axis: usize) -> Result<(Vec<usize>, Vec<isize>)> {
    if axis > shape.len() {
        return Err(ArrayShapeError::NoSuchAxis {
            operation: "DeviceArray::expand_dims",
            axis,
            axes: shape.len() + 1,
        }
        .into());
    }
    // Length-1 axes take any stride; this one is what a dense C-order array would give it.
    let stride = if axis < shape.len() {
        strides[axis].saturating_mul(shape[axis].max(1) as isize)
    } else {
        1
    };
    let mut shape = shape.to_vec();
    let mut strides = strides.to_vec();
    shape.insert(axis, 1);
    strides.insert(axis, stride);
    Ok((shape, strides))
}

/// The shape `spec` names for `elements` elements, its one `None` (if any) inferred (NumPy's
/// `-1`).
pub(crate) fn inferred_shape(spec: &[Option<usize>], elements: usize) -> Result<Vec<usize>> {
    let bad = || -> Error {
        ArrayShapeError::ReshapeInfer {
            shape: spec.to_vec(),
            elements,
        }
        .into()
    };
    let unknown = spec.iter().filter(|d| d.is_none()).count();
    let known = spec
        .iter()
        .flatten()
        .try_fold(1usize, |acc, &d| acc.checked_mul(d))
        .ok_or_else(bad)?;
    match unknown {
        0 if known == elements => Ok(spec.iter().map(|d| d.unwrap_or(0)).collect()),
        1 if known != 0 && elements.is_multiple_of(known) => {
            let missing = elements / known;
            Ok(spec.iter().map(|d| d.unwrap_or(missing)).collect())
        }
        // NumPy also refuses to infer an axis beside a zero-length one: any length would do.
        _ => Err(bad()),
    }
}

impl<S: Storage, D: Dimension> DeviceArrayBase<S, D> {
    /// The array without its axes of length 1 (NumPy's `squeeze()`); no data moves.
    pub fn squeeze(self) -> Result<DeviceArrayBase<S, IxDyn>> {
        let (shape, strides) = squeezed(self.shape(), self.strides());
        DeviceArrayBase::from_parts(self.data, self.offset, &shape, &strides)
    }

    /// The array without axis `axis`, which must have length 1 (NumPy's `squeeze(axis=)`).
    pub fn squeeze_axis(self, axis: usize) -> Result<DeviceArrayBase<S, IxDyn>> {
        match self.shape().get(axis) {
            None => Err(ArrayShapeError::NoSuchAxis {
                operation: "DeviceArray::squeeze_axis",
                axis,
                axes: self.ndim(),
            }
            .into()),
            Some(&len) if len != 1 => Err(ArrayShapeError::SqueezeLength { axis, len }.into()),
            Some(_) => {
                let (mut shape, mut strides) = (self.shape().to_vec(), self.strides().to_vec());
                shape.remove(axis);
                strides.remove(axis);
                DeviceArrayBase::from_parts(self.data, self.offset, &shape, &strides)
            }
        }
    }

    /// The array with a new axis of length 1 before axis `axis` (`axis == ndim()` appends
    /// it): NumPy's `expand_dims(a, axis)`; no data moves.
    pub fn expand_dims(self, axis: usize) -> Result<DeviceArrayBase<S, IxDyn>> {
        let (shape, strides) = expanded(self.shape(), self.strides(), axis)?;
        DeviceArrayBase::from_parts(self.data, self.offset, &shape, &strides)
    }

    /// The array with at least one axis: a 0-d array becomes one of shape `[1]`, others are
    /// unchanged (NumPy's `atleast_1d`); no data moves.
    pub fn atleast_1d(self) -> Result<DeviceArrayBase<S, IxDyn>> {
        match self.ndim() {
            0 => self.expand_dims(0),
            _ => Ok(self.into_dyn()),
        }
    }

    /// The array with at least two axes: 0-d becomes `[1, 1]`, a 1-d array of `n` elements a
    /// row `[1, n]` (NumPy's `atleast_2d`); no data moves.
    pub fn atleast_2d(self) -> Result<DeviceArrayBase<S, IxDyn>> {
        match self.ndim() {
            0 | 1 => self.atleast_1d()?.expand_dims(0),
            _ => Ok(self.into_dyn()),
        }
    }

    /// The array with at least three axes: 0-d becomes `[1, 1, 1]`, `[n]` becomes `[1, n, 1]`
    /// and `[m, n]` becomes `[m, n, 1]` (NumPy's `atleast_3d`, as `dstack` uses it); no data
    /// moves.
    ///
    /// ```no_run
    /// use gpu_runtime::gpuarray::DeviceArray;
    /// let ctx = gpu_runtime::Context::default()?;
    /// let a = DeviceArray::<f32, _>::zeros(&ctx, 4)?;
    /// assert_eq!(a.view().atleast_2d()?.shape(), [1, 4]);
    /// assert_eq!(a.view().atleast_3d()?.shape(), [1, 4, 1]);
    /// # Ok::<(), gpu_runtime::Error>(())
    /// ```
    pub fn atleast_3d(self) -> Result<DeviceArrayBase<S, IxDyn>> {
        match self.ndim() {
            0 | 1 => self.atleast_2d()?.expand_dims(2),
            2 => self.expand_dims(2),
            _ => Ok(self.into_dyn()),
        }
    }

    /// The same elements under `shape`, where one axis may be `None` and is inferred from the
    /// others (NumPy's `reshape((2, -1), order=)`: `reshape_infer(&[Some(2), None], Order::C)`),
    /// read in `order`: `Order::C` (row-major) needs a C-contiguous array, `Order::F`
    /// (column-major) a Fortran-contiguous one, since no data moves
    /// ([`to_contiguous`](Self::to_contiguous) first otherwise: NumPy copies there).
    pub fn reshape_infer(self, shape: &[Option<usize>], order: Order) -> Result<DeviceArrayBase<S, IxDyn>> {
        let new_shape = inferred_shape(shape, self.len())?;
        let strides = if order.is_column_major() {
            if !layout::is_f_contiguous(self.shape(), self.strides()) {
                return Err(Error::NotContiguous {
                    what: "DeviceArray::reshape_infer in Fortran order of an array not contiguous in Fortran order",
                });
            }
            layout::f_strides(&new_shape)
        } else {
            layout::reshape(self.shape(), self.strides(), &new_shape)?
        };
        DeviceArrayBase::from_parts(self.data, self.offset, &new_shape, &strides)
    }

    on_legacy_stream! {
        /// The elements in C order as a new 1-D array (NumPy's `ravel`, which copies when the
        /// array is not contiguous; for a view of a contiguous array, `view().reshape(len())`).
        fn ravel(&self) -> Result<DeviceArray<S::Elem, Ix1>>;
    }
}

impl<S: Storage, D: Dimension> OnStream<'_, &DeviceArrayBase<S, D>> {
    /// [`ravel`](DeviceArrayBase::ravel) on this stream.
    pub fn ravel(&self) -> Result<DeviceArray<S::Elem, Ix1>> {
        let n = self.target.len();
        self.to_contiguous()?.reshape(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn squeeze_drops_every_axis_of_length_one() {
        assert_eq!(squeezed(&[1, 3, 1, 2], &[6, 2, 2, 1]), (vec![3, 2], vec![2, 1]));
        assert_eq!(squeezed(&[1, 1], &[1, 1]), (vec![], vec![]));
        assert_eq!(squeezed(&[], &[]), (vec![], vec![]));
    }

    #[test]
    fn a_new_axis_keeps_a_dense_array_dense() {
        let (shape, strides) = expanded(&[3, 4], &[4, 1], 0).unwrap();
        assert_eq!(
            (shape.as_slice(), layout::is_c_contiguous(&shape, &strides)),
            (&[1, 3, 4][..], true)
        );
        let (shape, strides) = expanded(&[3, 4], &[4, 1], 1).unwrap();
        assert_eq!(shape, [3, 1, 4]);
        assert!(layout::is_c_contiguous(&shape, &strides));
        let (shape, strides) = expanded(&[3, 4], &[4, 1], 2).unwrap();
        assert_eq!(shape, [3, 4, 1]);
        assert!(layout::is_c_contiguous(&shape, &strides));
        // A 0-d array becomes 1-d.
        assert_eq!(expanded(&[], &[], 0).unwrap().0, [1]);
        let e = expanded(&[3, 4], &[4, 1], 3).unwrap_err();
        assert!(
            matches!(
                e,
                Error::Shape(ArrayShapeError::NoSuchAxis { axis: 3, axes: 3, .. })
            ),
            "{e}"
        );
    }

    #[test]
    fn one_axis_is_inferred_as_numpy_infers_minus_one() {
        assert_eq!(inferred_shape(&[Some(2), None], 12).unwrap(), [2, 6]);
        assert_eq!(inferred_shape(&[None, Some(3), Some(2)], 12).unwrap(), [2, 3, 2]);
        assert_eq!(inferred_shape(&[Some(3), Some(4)], 12).unwrap(), [3, 4]);
        assert_eq!(inferred_shape(&[None], 0).unwrap(), [0]);
        assert_eq!(inferred_shape(&[], 1).unwrap(), Vec::<usize>::new());
        for bad in [
            &[None, None][..],
            &[Some(5), None][..],
            &[Some(0), None][..],
            &[Some(3), Some(3)][..],
        ] {
            let e = inferred_shape(bad, 12).unwrap_err();
            assert!(
                matches!(&e, Error::Shape(ArrayShapeError::ReshapeInfer { shape, elements: 12 }) if shape == bad),
                "{e}"
            );
        }
    }
}
