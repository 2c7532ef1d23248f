//! NumPy's `linalg.tensorsolve` and `linalg.tensorinv`: an array read as one square matrix, its
//! leading axes flattened into the rows and the others into the columns, then `solve` or `inv`
//! of that matrix (`lu`), the result reshaped to the axes it stands for.

use ndarray::{Dimension, IxDyn};

use crate::error::{LinAlgError, Result};
use crate::gpuarray::array::core::{DeviceArray, DeviceArrayBase, Storage};
use crate::gpuarray::array::layout::checked_size;
use crate::gpuarray::array::on_stream::{context_fns, OnStream};
use crate::gpuarray::elements::linalg_type::LinalgType;

/// `shape` as a square matrix of its first `leading` axes (at most all of them) by the others:
/// its side, else [`LinAlgError::NotSquareTensor`].
fn square_side(operation: &'static str, shape: &[usize], leading: usize) -> Result<usize> {
    let split = leading.min(shape.len());
    let rows = checked_size(operation, &shape[..split])?;
    let cols = checked_size(operation, &shape[split..])?;
    if rows != cols {
        return Err(LinAlgError::NotSquareTensor {
            operation,
            shape: shape.to_vec(),
            leading,
            rows,
            cols,
        }
        .into());
    }
    Ok(rows)
}

/// NumPy's `allaxes` of `tensorsolve`: the axes of an array of `ndim` axes with each of `axes`
/// in turn removed and put last (an axis named twice ends where its last mention puts it).
fn moved_last(ndim: usize, axes: &[usize]) -> Result<Vec<usize>> {
    let mut all: Vec<usize> = (0..ndim).collect();
    for &k in axes {
        if k >= ndim {
            return Err(crate::error::ArrayShapeError::NoSuchAxis {
                operation: "tensorsolve",
                axis: k,
                axes: ndim,
            }
            .into());
        }
        all.retain(|&x| x != k);
        all.push(k);
    }
    Ok(all)
}

context_fns! {
    /// The solution `x` of `tensordot(a, x, x.ndim) = b` (NumPy's and CuPy's
    /// `linalg.tensorsolve(a, b, axes)`): the axes of `a` named in `axes` (if any) are first
    /// moved to the end, in that order; then `a`'s first `b.ndim()` axes, flattened, are the
    /// rows of one square matrix and its other axes its columns, [`solve`](crate::gpuarray::solve)d
    /// against `b` flattened, and `x` has the shape of `a`'s other axes (CuPy's
    /// `a.shape[b.ndim:]`), in [`LinalgType`]'s result type. Errors: `a` that is not square that
    /// way, [`LinAlgError::NotSquareTensor`]; `b` of other than that many elements,
    /// [`LinAlgError::RightHandSide`] naming the flattened shapes; an axis `a` does not have,
    /// [`ArrayShapeError::NoSuchAxis`](crate::ArrayShapeError::NoSuchAxis); a singular matrix,
    /// [`LinAlgError::Singular`] (the call waits for the kernel to know). The matrix is
    /// factored as `solve` factors one (blocked over the GPU from 128 rows).
    ///
    /// ```no_run
    /// use gpu_runtime::gpuarray::{self, DeviceArray};
    /// use gpu_runtime::ndarray::Array;
    /// let ctx = gpu_runtime::Context::default()?;
    /// // NumPy's example: a of shape (6, 4, 24) with an identity in it, b of shape (6, 4).
    /// let eye = Array::from_shape_fn((24, 24), |(i, j)| if i == j { 1.0f64 } else { 0.0 });
    /// let a = DeviceArray::from_ndarray(&ctx, &eye.into_shape_with_order((6, 4, 24)).unwrap())?;
    /// let b = DeviceArray::from_ndarray(&ctx, &Array::from_shape_fn((6, 4), |(i, j)| (i * 4 + j) as f64))?;
    /// let x = gpuarray::tensorsolve(&a, &b, None)?;
    /// assert_eq!(x.shape(), [24]);
    /// assert_eq!(x.to_vec()?, (0..24).map(f64::from).collect::<Vec<_>>());
    /// # Ok::<(), gpu_runtime::Error>(())
    /// ```
    fn tensorsolve[
        T: LinalgType, SA: Storage<Elem = T>, DA: Dimension, SB: Storage<Elem = T>, DB: Dimension
    ](
        &self, a: &DeviceArrayBase<SA, DA>, b: &DeviceArrayBase<SB, DB>, axes: Option<&[usize]>
    ) -> Result<DeviceArray<T::Out, IxDyn>> {
        const OP: &str = "tensorsolve";
        let mut at = a.view().into_dyn();
        if let Some(axes) = axes {
            at = at.permuted_axes(&moved_last(a.ndim(), axes)?)?;
        }
        let n = square_side(OP, at.shape(), b.ndim())?;
        if b.len() != n {
            return Err(LinAlgError::RightHandSide {
                operation: OP,
                a: vec![n, n],
                b: vec![b.len()],
            }
            .into());
        }
        let x_shape = at.shape()[b.ndim().min(at.ndim())..].to_vec();
        let ac = OnStream::new(&at, self.stream).c_order()?;
        let bc = OnStream::new(b, self.stream).c_order()?;
        let matrix = ac.view().reshape(IxDyn(&[n, n]))?;
        let rhs = bc.view().reshape(IxDyn(&[n]))?;
        self.solve(&matrix, &rhs)?.reshape(IxDyn(&x_shape))
    }

    /// The inverse of `a` with respect to `tensordot(.., .., ind)` (NumPy's and CuPy's
    /// `linalg.tensorinv(a, ind)`; NumPy's default `ind` is 2): `a`'s first `ind` axes,
    /// flattened, are the rows of one square matrix and its other axes its columns; the
    /// [`inv`](crate::gpuarray::inv)erse of that matrix is returned of shape `a.shape[ind:] +
    /// a.shape[:ind]`, in [`LinalgType`]'s result type, so that `tensordot(tensorinv(a, ind), a,
    /// ind)` is the identity of the shape `a.shape[ind:] + a.shape[ind:]`. `ind` past `a`'s axes
    /// counts as all of them, as NumPy's. Errors: `ind = 0` or `a` that is not square that way,
    /// [`LinAlgError::NotSquareTensor`]; a singular matrix, [`LinAlgError::Singular`] (the call
    /// waits for the kernel to know).
    ///
    /// ```no_run
    /// use gpu_runtime::gpuarray::{self, DeviceArray};
    /// use gpu_runtime::ndarray::Array;
    /// let ctx = gpu_runtime::Context::default()?;
    /// // NumPy's example: a of shape (4, 6, 8, 3) with an identity in it.
    /// let eye = Array::from_shape_fn((24, 24), |(i, j)| if i == j { 1.0f32 } else { 0.0 });
    /// let a = DeviceArray::from_ndarray(&ctx, &eye.into_shape_with_order((4, 6, 8, 3)).unwrap())?;
    /// assert_eq!(gpuarray::tensorinv(&a, 2)?.shape(), [8, 3, 4, 6]);
    /// # Ok::<(), gpu_runtime::Error>(())
    /// ```
    fn tensorinv[T: LinalgType, S: Storage<Elem = T>, D: Dimension](
        &self, a: &DeviceArrayBase<S, D>, ind: usize
    ) -> Result<DeviceArray<T::Out, IxDyn>> {
        const OP: &str = "tensorinv";
        let shape = a.shape();
        if ind == 0 {
            // NumPy's "Invalid ind argument", whatever the shape.
            return Err(LinAlgError::NotSquareTensor {
                operation: OP,
                shape: shape.to_vec(),
                leading: 0,
                rows: 1,
                cols: checked_size(OP, shape)?,
            }
            .into());
        }
        let n = square_side(OP, shape, ind)?;
        let split = ind.min(shape.len());
        let inv_shape: Vec<usize> = shape[split..].iter().chain(&shape[..split]).copied().collect();
        let ac = OnStream::new(a, self.stream).c_order()?;
        let matrix = ac.view().reshape(IxDyn(&[n, n]))?;
        self.inv(&matrix)?.reshape(IxDyn(&inv_shape))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::{ArrayShapeError, Error};

    #[test]
    fn arrays_are_read_as_square_matrices_as_numpys() {
        // NumPy's examples: tensorsolve of a (6, 4, 24) against b (6, 4), tensorinv of
        // (4, 6, 8, 3) with ind 2 and of (24, 8, 3) with ind 1.
        assert_eq!(square_side("tensorsolve", &[6, 4, 24], 2).unwrap(), 24);
        assert_eq!(square_side("tensorinv", &[4, 6, 8, 3], 2).unwrap(), 24);
        assert_eq!(square_side("tensorinv", &[24, 8, 3], 1).unwrap(), 24);
        // Past the axes: all of them are the rows, none the columns (1 element).
        assert_eq!(square_side("tensorinv", &[1, 1], 5).unwrap(), 1);
        match square_side("tensorinv", &[4, 6, 8, 3], 1).unwrap_err() {
            Error::LinAlg(LinAlgError::NotSquareTensor {
                operation,
                shape,
                leading,
                rows,
                cols,
            }) => {
                assert_eq!(
                    (operation, shape, leading, rows, cols),
                    ("tensorinv", vec![4, 6, 8, 3], 1, 4, 144)
                );
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn tensorsolve_moves_the_named_axes_last_as_numpys() {
        // NumPy: allaxes of 4 axes with axes=(0, 2) is [1, 3, 0, 2]; a repeated axis ends last.
        assert_eq!(moved_last(4, &[0, 2]).unwrap(), [1, 3, 0, 2]);
        assert_eq!(moved_last(3, &[2, 0]).unwrap(), [1, 2, 0]);
        assert_eq!(moved_last(3, &[0, 0]).unwrap(), [1, 2, 0]);
        assert_eq!(moved_last(3, &[]).unwrap(), [0, 1, 2]);
        assert!(matches!(
            moved_last(3, &[3]).unwrap_err(),
            Error::Shape(ArrayShapeError::NoSuchAxis { axis: 3, axes: 3, .. })
        ));
    }
}
