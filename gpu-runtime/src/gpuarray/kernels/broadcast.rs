//! Broadcasting by NumPy's rules: the shape arrays of different shapes meet in
//! ([`broadcast_shapes`]), an array seen in a larger shape ([`DeviceArrayBase::broadcast_to`]),
//! and the launch-time step every [`ElementwiseKernel`](crate::gpuarray::ElementwiseKernel)
//! takes (so fused expressions, `#[elementwise]` fns and in-place operations broadcast too).
//!
//! Shapes are aligned on their last axis; a missing leading axis counts as length 1; on each
//! axis the lengths must be equal or one of them 1, and the result has the other. An axis
//! broadcast from length 1 (or added in front) is read with stride 0: the same element for
//! every index, no copy. Only arrays a kernel reads are broadcast: an array it writes must
//! already have the broadcast shape (as NumPy's `out=`; an in-place operation whose result
//! would be larger than its output is an error), and a written array whose elements overlap
//! each other (a stride 0 on an axis longer than 1) is refused, since two threads would
//! write one element.

use ndarray::{Dimension, IxDyn};

use crate::error::{ArrayShapeError, Result};
use crate::gpuarray::array::core::{DeviceArrayBase, DeviceArrayView, Storage};
use crate::gpuarray::kernels::args::{check_kinds, no_array, ArgKind, KernelArg, Param, MAX_DIMS};

/// The shape arrays of `shapes` broadcast to together (NumPy's `broadcast_shapes`): aligned
/// on the last axis, each axis the length that is not 1 (or 1). Shapes that do not broadcast
/// are an [`ArrayShapeError::Broadcast`] naming the shape of those before and the one that
/// does not fit it.
///
/// ```
/// use gpu_runtime::gpuarray::broadcast_shapes;
/// assert_eq!(broadcast_shapes(&[&[8, 1, 6, 1], &[7, 1, 5]])?, vec![8, 7, 6, 5]);
/// assert_eq!(broadcast_shapes(&[&[5, 4], &[]])?, vec![5, 4]);
/// assert!(broadcast_shapes(&[&[2, 1], &[8, 4, 3]]).is_err());
/// # Ok::<(), gpu_runtime::Error>(())
/// ```
pub fn broadcast_shapes(shapes: &[&[usize]]) -> Result<Vec<usize>> {
    let mut acc: Vec<usize> = Vec::new();
    for &shape in shapes {
        acc = broadcast_pair(&acc, shape).ok_or_else(|| ArrayShapeError::Broadcast {
            shape: acc.clone(),
            other: shape.to_vec(),
        })?;
    }
    Ok(acc)
}

/// The broadcast of two shapes, or `None` when they do not broadcast.
fn broadcast_pair(a: &[usize], b: &[usize]) -> Option<Vec<usize>> {
    let ndim = a.len().max(b.len());
    let axis = |s: &[usize], k: usize| {
        let pad = ndim - s.len();
        if k < pad {
            1
        } else {
            s[k - pad]
        }
    };
    (0..ndim)
        .map(|k| match (axis(a, k), axis(b, k)) {
            (x, y) if x == y => Some(x),
            (1, y) => Some(y),
            (x, 1) => Some(x),
            _ => None,
        })
        .collect()
}

/// The strides that show an array of `shape` and `strides` as an array of shape `to`:
/// stride 0 on the axes added in front and on those broadcast from length 1. `None` when
/// `shape` does not broadcast to `to` (it has more axes, or an axis of another length than 1).
pub(crate) fn broadcast_strides(shape: &[usize], strides: &[isize], to: &[usize]) -> Option<Vec<isize>> {
    let pad = to.len().checked_sub(shape.len())?;
    to.iter()
        .enumerate()
        .map(|(k, &d)| match k.checked_sub(pad) {
            None => Some(0),
            Some(j) if shape[j] == d => Some(strides[j]),
            Some(j) if shape[j] == 1 => Some(0),
            Some(_) => None,
        })
        .collect()
}

/// True when two indices of a layout may name one element: some axis longer than 1 has a
/// stride of 0, or (sorted by the size of their strides) an axis' stride does not step over
/// everything the smaller axes span. A layout made by slicing never overlaps; one from
/// DLPack (a broadcast tensor) may.
pub(crate) fn overlaps_itself(shape: &[usize], strides: &[isize]) -> bool {
    if shape.contains(&0) {
        return false;
    }
    let mut axes: Vec<(usize, usize)> = shape
        .iter()
        .zip(strides)
        .filter(|(&d, _)| d > 1)
        .map(|(&d, &s)| (s.unsigned_abs(), d))
        .collect();
    axes.sort_unstable();
    let mut reach = 0usize;
    for (stride, d) in axes {
        if stride <= reach {
            return true;
        }
        reach = reach.saturating_add(stride.saturating_mul(d - 1));
    }
    false
}

impl<S: Storage, D: Dimension> DeviceArrayBase<S, D> {
    /// A read-only view of the array in the larger `shape` (NumPy's `broadcast_to`): the axes
    /// added in front and those of length 1 repeat their elements with stride 0, without a
    /// copy. An error ([`ArrayShapeError::Broadcast`]) when the array does not broadcast to
    /// `shape`.
    ///
    /// ```no_run
    /// use gpu_runtime::gpuarray::DeviceArray;
    /// use gpu_runtime::{ndarray::array, Context};
    /// let ctx = Context::default()?;
    /// let row = DeviceArray::from_ndarray(&ctx, &array![1.0f32, 2.0, 3.0])?;
    /// let rows = row.broadcast_to(&[4, 3])?;
    /// assert_eq!(rows.strides(), &[0, 1]);
    /// let host = rows.to_contiguous()?.to_ndarray()?;
    /// assert_eq!(host[[3, 2]], 3.0);
    /// # Ok::<(), gpu_runtime::Error>(())
    /// ```
    pub fn broadcast_to(&self, shape: &[usize]) -> Result<DeviceArrayView<'_, S::Elem, IxDyn>> {
        let strides = broadcast_strides(self.shape(), self.strides(), shape).ok_or_else(|| {
            ArrayShapeError::Broadcast {
                shape: self.shape().to_vec(),
                other: shape.to_vec(),
            }
        })?;
        // The broadcast view reads only elements of `self`: in bounds as `self` is.
        DeviceArrayBase::from_parts(self.view().data, self.offset, shape, &strides)
    }
}

/// The arrays broadcast to their common shape, as views (NumPy's `broadcast_arrays(*args)`):
/// stride 0 along each broadcast axis, no copy. Shapes that do not broadcast are
/// [`ArrayShapeError::Broadcast`].
///
/// ```no_run
/// use gpu_runtime::gpuarray::{self, DeviceArray};
/// use gpu_runtime::{ndarray::{arr1, arr2}, Context};
/// let ctx = Context::default()?;
/// let col = DeviceArray::from_ndarray(&ctx, &arr2(&[[1.0f32], [2.0]]))?;
/// let row = DeviceArray::from_ndarray(&ctx, &arr2(&[[10.0f32, 20.0, 30.0]]))?;
/// let both = gpuarray::broadcast_arrays(&[&col, &row])?;
/// assert_eq!((both[0].shape(), both[1].shape()), (&[2, 3][..], &[2, 3][..]));
/// # Ok::<(), gpu_runtime::Error>(())
/// ```
pub fn broadcast_arrays<'a, S: Storage, D: Dimension>(
    arrays: &[&'a DeviceArrayBase<S, D>],
) -> Result<Vec<DeviceArrayView<'a, S::Elem, IxDyn>>> {
    let shapes: Vec<&[usize]> = arrays.iter().map(|a| a.shape()).collect();
    let shape = broadcast_shapes(&shapes)?;
    arrays.iter().map(|a| a.broadcast_to(&shape)).collect()
}

/// The shape the arrays among `args` broadcast to, or `None` when there is none.
pub(crate) fn shape_of_args(args: &[KernelArg<'_>]) -> Result<Option<Vec<usize>>> {
    let shapes: Vec<&[usize]> = args
        .iter()
        .filter_map(|a| match &a.0 {
            ArgKind::Array(x) => Some(x.shape()),
            ArgKind::Scalar(..) => None,
        })
        .collect();
    if shapes.is_empty() {
        return Ok(None);
    }
    broadcast_shapes(&shapes).map(Some)
}

/// Checks `args` against `params` as every launch does, and broadcasts them: returns the
/// broadcast shape, with every array argument's layout rewritten to it (stride 0 on the
/// broadcast axes). An array the kernel writes must have the broadcast shape and must not
/// overlap itself.
pub(crate) fn broadcast_args(
    kernel: &str,
    params: &[Param],
    args: &mut [KernelArg<'_>],
) -> Result<Vec<usize>> {
    check_kinds(kernel, params, args)?;
    let shape = shape_of_args(args)?.ok_or_else(|| no_array(kernel))?;
    for (p, a) in params.iter().zip(args.iter_mut()) {
        let ArgKind::Array(x) = &mut a.0 else { continue };
        if p.mutable {
            if x.shape() != shape.as_slice() {
                return Err(ArrayShapeError::OutputShape {
                    param: p.name.clone(),
                    shape: x.shape().to_vec(),
                    broadcast: shape.clone(),
                }
                .into());
            }
            if overlaps_itself(x.shape(), x.strides()) {
                return Err(ArrayShapeError::OutputOverlapsItself {
                    param: p.name.clone(),
                    shape: x.shape().to_vec(),
                    strides: x.strides().to_vec(),
                }
                .into());
            }
            continue;
        }
        if x.shape() == shape.as_slice() {
            continue;
        }
        // Broadcast by `shape_of_args`, so the strides exist; the error cannot be reached.
        let strides =
            broadcast_strides(x.shape(), x.strides(), &shape).ok_or_else(|| ArrayShapeError::Broadcast {
                shape: x.shape().to_vec(),
                other: shape.clone(),
            })?;
        x.ndim = shape.len();
        x.shape = [0; MAX_DIMS];
        x.strides = [0; MAX_DIMS];
        x.shape[..shape.len()].copy_from_slice(&shape);
        x.strides[..shape.len()].copy_from_slice(&strides);
    }
    Ok(shape)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpuarray::array::layout;
    use ndarray::{Array, ArrayD};

    fn ok(shapes: &[&[usize]]) -> Vec<usize> {
        broadcast_shapes(shapes).unwrap_or_else(|e| panic!("{shapes:?}: {e}"))
    }

    /// NumPy's own examples (the broadcasting page of its user guide, and `broadcast_shapes`'
    /// docstring), with ndarray's broadcasting of the same shapes as a second reference.
    #[test]
    fn numpy_s_examples_broadcast() {
        let cases: [(&[&[usize]], &[usize]); 11] = [
            (&[&[256, 256, 3], &[3]], &[256, 256, 3]),
            (&[&[8, 1, 6, 1], &[7, 1, 5]], &[8, 7, 6, 5]),
            (&[&[5, 4], &[1]], &[5, 4]),
            (&[&[5, 4], &[4]], &[5, 4]),
            (&[&[15, 3, 5], &[15, 1, 5]], &[15, 3, 5]),
            (&[&[15, 3, 5], &[3, 5]], &[15, 3, 5]),
            (&[&[15, 3, 5], &[3, 1]], &[15, 3, 5]),
            (&[&[1, 2], &[3, 1], &[3, 2]], &[3, 2]),
            (&[&[6, 7], &[5, 6, 1], &[7], &[5, 1, 7]], &[5, 6, 7]),
            (&[&[4, 1], &[]], &[4, 1]),
            (&[&[0, 1], &[1, 3], &[0, 3]], &[0, 3]),
        ];
        for (shapes, expect) in cases {
            assert_eq!(ok(shapes), expect, "{shapes:?}");
            for &s in shapes {
                let a = ArrayD::<u8>::zeros(s);
                assert!(
                    a.broadcast(expect).is_some(),
                    "ndarray broadcasts {s:?} to {expect:?}"
                );
            }
        }
        assert_eq!(ok(&[]), Vec::<usize>::new());
        assert_eq!(ok(&[&[], &[]]), Vec::<usize>::new());
        assert_eq!(ok(&[&[0], &[1]]), vec![0]);
    }

    #[test]
    fn shapes_that_do_not_broadcast_name_both() {
        let err = broadcast_shapes(&[&[3], &[4]]).unwrap_err();
        assert!(
            matches!(&err, crate::error::Error::Shape(ArrayShapeError::Broadcast { shape, other }) if shape == &[3] && other == &[4]),
            "{err:?}"
        );
        assert!(err.to_string().contains("[3]") && err.to_string().contains("[4]"));
        // NumPy's: "(2,1) and (8,4,3)" do not broadcast; neither do (0,) and (3,).
        assert!(broadcast_shapes(&[&[2, 1], &[8, 4, 3]]).is_err());
        assert!(broadcast_shapes(&[&[0], &[3]]).is_err());
        // The shape of those before is named: (1, 3) after (2, 1) is (2, 3), which (4,) breaks.
        let err = broadcast_shapes(&[&[2, 1], &[1, 3], &[4]]).unwrap_err();
        assert!(
            matches!(&err, crate::error::Error::Shape(ArrayShapeError::Broadcast { shape, other }) if shape == &[2, 3] && other == &[4]),
            "{err:?}"
        );
    }

    /// Reading every element of a broadcast layout gives ndarray's broadcast view.
    #[test]
    fn broadcast_strides_read_what_ndarray_broadcasts() {
        let cases: [(&[usize], &[usize]); 6] = [
            (&[3], &[4, 3]),
            (&[4, 1], &[4, 5]),
            (&[1, 5], &[2, 4, 5]),
            (&[], &[2, 3]),
            (&[2, 1, 3], &[2, 4, 3]),
            (&[1], &[1]),
        ];
        for (from, to) in cases {
            let n: usize = from.iter().product();
            let a = Array::from_shape_vec(from, (0..n as i64).collect()).expect("a shape");
            let strides = broadcast_strides(a.shape(), a.strides(), to).expect("broadcasts");
            let total: usize = to.iter().product();
            let got: Vec<i64> = (0..total)
                .map(|i| a.as_slice().expect("contiguous")[layout::offset_of(i, to, &strides) as usize])
                .collect();
            let expect: Vec<i64> = a
                .broadcast(to)
                .expect("ndarray broadcasts")
                .iter()
                .copied()
                .collect();
            assert_eq!(got, expect, "{from:?} -> {to:?}");
        }
        assert_eq!(broadcast_strides(&[3], &[1], &[3, 4]), None);
        assert_eq!(broadcast_strides(&[2, 3], &[3, 1], &[3]), None);
        // Reversed and stepped layouts keep their strides on the axes not broadcast.
        assert_eq!(
            broadcast_strides(&[3, 1], &[-2, 7], &[5, 3, 4]),
            Some(vec![0, -2, 0])
        );
    }

    #[test]
    fn overlap_of_a_layout_with_itself() {
        assert!(!overlaps_itself(&[3, 4], &[4, 1]));
        assert!(!overlaps_itself(&[3, 4], &[-1, 3]));
        assert!(!overlaps_itself(&[3, 1], &[1, 0]));
        assert!(!overlaps_itself(&[0, 4], &[0, 0]));
        assert!(!overlaps_itself(&[3, 4], &[8, 2]));
        assert!(overlaps_itself(&[3, 4], &[0, 1]));
        assert!(overlaps_itself(&[2, 2], &[1, 1]));
        assert!(overlaps_itself(&[4, 3], &[2, 1]));
    }
}
