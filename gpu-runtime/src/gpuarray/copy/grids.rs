//! NumPy's `meshgrid`: coordinate arrays from coordinate vectors, each vector broadcast along
//! the other axes (a view) and copied into a new C-order array, as NumPy's default `copy=True`;
//! and `indices`, the grids of the index ranges stacked; and `ix_`, the open mesh (each
//! vector a view with unit axes around its own, to broadcast).

use ndarray::{Dimension, Ix1, IxDyn};

use crate::driver::context::core::Context;
use crate::driver::stream::Stream;
use crate::error::Result;
use crate::gpuarray::array::core::{DeviceArray, DeviceArrayBase, DeviceArrayView, Storage};
use crate::gpuarray::array::layout;
use crate::gpuarray::array::on_stream::OnStream;
use crate::gpuarray::elements::array_element::ArrayElement;

/// How [`meshgrid`] lays out its axes (NumPy's `indexing=`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum MeshIndexing {
    /// Cartesian (`'xy'`, NumPy's default): the first two axes swapped, so the first vector
    /// runs along the columns of each result.
    #[default]
    Xy,
    /// Matrix (`'ij'`): vector `i` runs along axis `i`.
    Ij,
}

/// The shape of the grids of vectors of `lens`, and the axis vector `i` runs along.
pub(crate) fn grid_axes(lens: &[usize], indexing: MeshIndexing) -> (Vec<usize>, Vec<usize>) {
    let mut axes: Vec<usize> = (0..lens.len()).collect();
    if indexing == MeshIndexing::Xy && lens.len() >= 2 {
        axes.swap(0, 1);
    }
    let mut shape = vec![0; lens.len()];
    for (i, &a) in axes.iter().enumerate() {
        shape[a] = lens[i];
    }
    (shape, axes)
}

/// One coordinate array per vector (each array's elements in C order), all of one shape:
/// NumPy's `meshgrid(*xi, indexing=)`. With [`MeshIndexing::Xy`] and vectors of lengths
/// `(n0, n1, n2)` the arrays are `(n1, n0, n2)`; with `Ij`, `(n0, n1, n2)`. No vectors give
/// no arrays.
///
/// ```no_run
/// use gpu_runtime::gpuarray::{meshgrid, DeviceArray, MeshIndexing};
/// let ctx = gpu_runtime::Context::default()?;
/// let x = DeviceArray::<i32, _>::arange(&ctx, 0.0, 2.0, 1.0)?;
/// let y = DeviceArray::<i32, _>::arange(&ctx, 0.0, 3.0, 1.0)?;
/// let g = meshgrid(&[&x, &y], MeshIndexing::Xy)?;
/// assert_eq!(g[0].to_vec()?, [0, 1, 0, 1, 0, 1]);
/// assert_eq!(g[1].to_vec()?, [0, 0, 1, 1, 2, 2]);
/// # Ok::<(), gpu_runtime::Error>(())
/// ```
pub fn meshgrid<S: Storage<Elem: ArrayElement>, D: Dimension>(
    vectors: &[&DeviceArrayBase<S, D>],
    indexing: MeshIndexing,
) -> Result<Vec<DeviceArray<S::Elem, IxDyn>>> {
    grids(vectors, indexing, None)
}

/// The index along each axis of every element of an array of shape `dims`, stacked: an `i64`
/// array of shape `(dims.len(), *dims)` whose `[k]` counts along axis `k` (NumPy's
/// `indices(dimensions)`).
///
/// ```no_run
/// use gpu_runtime::gpuarray;
/// let ctx = gpu_runtime::Context::default()?;
/// let g = gpuarray::indices(&ctx, &[2, 3])?;
/// assert_eq!(g.shape(), [2, 2, 3]);
/// assert_eq!(g.to_vec()?, [0, 0, 0, 1, 1, 1, 0, 1, 2, 0, 1, 2]);
/// # Ok::<(), gpu_runtime::Error>(())
/// ```
pub fn indices(ctx: &Context, dims: &[usize]) -> Result<DeviceArray<i64, IxDyn>> {
    OnStream::legacy(ctx).indices(dims)
}

impl OnStream<'_, &Context> {
    /// [`meshgrid`] with the copies queued on this stream.
    pub fn meshgrid<S: Storage<Elem: ArrayElement>, D: Dimension>(
        &self,
        vectors: &[&DeviceArrayBase<S, D>],
        indexing: MeshIndexing,
    ) -> Result<Vec<DeviceArray<S::Elem, IxDyn>>> {
        grids(vectors, indexing, self.stream)
    }

    /// [`indices`] on this stream.
    pub fn indices(&self, dims: &[usize]) -> Result<DeviceArray<i64, IxDyn>> {
        layout::checked_size("indices", dims)?;
        if dims.is_empty() {
            return DeviceArray::empty(self.target, IxDyn(&[0]));
        }
        let ranges = dims
            .iter()
            .map(|&d| Ok(self.arange::<i64>(0.0, d as f64, 1.0)?.into_dyn()))
            .collect::<Result<Vec<_>>>()?;
        let refs: Vec<_> = ranges.iter().collect();
        let grids = grids(&refs, MeshIndexing::Ij, self.stream)?;
        let refs: Vec<_> = grids.iter().collect();
        self.stack(&refs, 0)
    }
}

fn grids<S: Storage<Elem: ArrayElement>, D: Dimension>(
    vectors: &[&DeviceArrayBase<S, D>],
    indexing: MeshIndexing,
    stream: Option<&Stream>,
) -> Result<Vec<DeviceArray<S::Elem, IxDyn>>> {
    let lens: Vec<usize> = vectors.iter().map(|v| v.len()).collect();
    let (shape, axes) = grid_axes(&lens, indexing);
    layout::checked_size("meshgrid", &shape)?;
    vectors
        .iter()
        .zip(&axes)
        .map(|(v, &axis)| {
            let flat = OnStream::new(*v, stream).c_order()?;
            let mut along = vec![1; shape.len()];
            along[axis] = v.len();
            let column = flat.view().reshape(IxDyn(&along))?;
            let grid = column.broadcast_to(&shape)?;
            OnStream::new(&grid, stream).copy()
        })
        .collect()
}

/// The open mesh of the vectors (NumPy's `ix_(*vectors)` of integer vectors): vector `k` as a
/// view of `n` axes (`n` vectors), all of length 1 but axis `k`, so that the views index or
/// broadcast against one another as the cross product of the vectors (`a.take` along each
/// axis, or `&x + &y` for an outer sum).
///
/// ```no_run
/// use gpu_runtime::gpuarray::{self, DeviceArray};
/// use gpu_runtime::ndarray::arr1;
/// let ctx = gpu_runtime::Context::default()?;
/// let r = DeviceArray::from_ndarray(&ctx, &arr1(&[0i64, 1]))?;
/// let c = DeviceArray::from_ndarray(&ctx, &arr1(&[2i64, 4, 5]))?;
/// let mesh = gpuarray::ix_(&[&r, &c])?;
/// assert_eq!((mesh[0].shape(), mesh[1].shape()), (&[2, 1][..], &[1, 3][..]));
/// # Ok::<(), gpu_runtime::Error>(())
/// ```
pub fn ix_<'a, S: Storage>(
    vectors: &[&'a DeviceArrayBase<S, Ix1>],
) -> Result<Vec<DeviceArrayView<'a, S::Elem, IxDyn>>> {
    let n = vectors.len();
    vectors
        .iter()
        .enumerate()
        .map(|(k, v)| {
            let mut view = v.view().into_dyn();
            for _ in 0..k {
                view = view.expand_dims(0)?;
            }
            for _ in k + 1..n {
                let end = view.ndim();
                view = view.expand_dims(end)?;
            }
            Ok(view)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_grid_shape_is_numpys() {
        assert_eq!(
            grid_axes(&[2, 3, 4], MeshIndexing::Xy),
            (vec![3, 2, 4], vec![1, 0, 2])
        );
        assert_eq!(
            grid_axes(&[2, 3, 4], MeshIndexing::Ij),
            (vec![2, 3, 4], vec![0, 1, 2])
        );
        assert_eq!(grid_axes(&[5], MeshIndexing::Xy), (vec![5], vec![0]));
        assert_eq!(grid_axes(&[], MeshIndexing::Xy), (vec![], vec![]));
    }
}
