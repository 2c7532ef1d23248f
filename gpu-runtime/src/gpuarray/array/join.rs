//! Arrays joined into a new C-order array: along an existing axis (`concatenate`, and NumPy's
//! `hstack`, `vstack`, `dstack`, `column_stack`, which first give each array the axes they join
//! along) or a new one (`stack`). Each array is copied into its rows of the result.

use ndarray::{Dimension, IxDyn};

use crate::driver::context::core::Context;
use crate::driver::stream::Stream;
use crate::error::{ArrayShapeError, Error, Result};
use crate::gpuarray::array::core::{dim_of, DeviceArray, DeviceArrayBase, DeviceArrayView, Storage};
use crate::gpuarray::array::layout;
use crate::gpuarray::array::on_stream::OnStream;
use crate::gpuarray::elements::array_element::ArrayElement;

/// The shape of `shapes` joined along `axis` (`concatenate`): every shape has the same
/// number of axes, and the same lengths but along `axis`.
fn joined_shape(operation: &'static str, shapes: &[&[usize]], axis: usize) -> Result<Vec<usize>> {
    let Some(&first) = shapes.first() else {
        return Err(ArrayShapeError::NoArrays { operation }.into());
    };
    if axis >= first.len() {
        return Err(ArrayShapeError::NoSuchAxis {
            operation,
            axis,
            axes: first.len(),
        }
        .into());
    }
    let mut out = first.to_vec();
    out[axis] = 0;
    for (index, &shape) in shapes.iter().enumerate() {
        let agrees = shape.len() == first.len()
            && shape
                .iter()
                .zip(first)
                .enumerate()
                .all(|(k, (a, b))| k == axis || a == b);
        if !agrees {
            return Err(ArrayShapeError::JoinShapes {
                operation,
                axis,
                first: first.to_vec(),
                index,
                shape: shape.to_vec(),
            }
            .into());
        }
        out[axis] = out[axis]
            .checked_add(shape[axis])
            .ok_or_else(|| ArrayShapeError::ElementsOverflow {
                operation,
                shape: shape.to_vec(),
            })?;
    }
    layout::checked_size(operation, &out)?;
    Ok(out)
}

/// The arrays joined along an existing axis, in a new C-order array (NumPy's `concatenate`):
/// each must have the same number of axes and the same lengths but along `axis`; element types
/// agree. A 0-d array has no axis to join along ([`ArrayShapeError::NoSuchAxis`]).
///
/// ```no_run
/// use gpu_runtime::gpuarray::{concatenate, DeviceArray};
/// let ctx = gpu_runtime::Context::default()?;
/// let a = DeviceArray::<f32, _>::ones(&ctx, (2, 3))?;
/// let b = DeviceArray::<f32, _>::zeros(&ctx, (4, 3))?;
/// assert_eq!(concatenate(&[&a, &b], 0)?.shape(), [6, 3]);
/// # Ok::<(), gpu_runtime::Error>(())
/// ```
pub fn concatenate<S: Storage, D: Dimension>(
    arrays: &[&DeviceArrayBase<S, D>],
    axis: usize,
) -> Result<DeviceArray<S::Elem, D>> {
    join(arrays, axis, None, "concatenate")
}

/// The arrays, all of one shape, stacked along a new axis `axis` (0 to their number of axes)
/// in a new C-order array (NumPy's `stack`).
pub fn stack<S: Storage, D: Dimension>(
    arrays: &[&DeviceArrayBase<S, D>],
    axis: usize,
) -> Result<DeviceArray<S::Elem, IxDyn>> {
    stack_stream(arrays, axis, None)
}

impl OnStream<'_, &Context> {
    /// [`concatenate`] with the copies queued on this stream.
    pub fn concatenate<S: Storage, D: Dimension>(
        &self,
        arrays: &[&DeviceArrayBase<S, D>],
        axis: usize,
    ) -> Result<DeviceArray<S::Elem, D>> {
        join(arrays, axis, self.stream, "concatenate")
    }

    /// [`stack`] with the copies queued on this stream.
    pub fn stack<S: Storage, D: Dimension>(
        &self,
        arrays: &[&DeviceArrayBase<S, D>],
        axis: usize,
    ) -> Result<DeviceArray<S::Elem, IxDyn>> {
        stack_stream(arrays, axis, self.stream)
    }
}

fn stack_stream<S: Storage, D: Dimension>(
    arrays: &[&DeviceArrayBase<S, D>],
    axis: usize,
    stream: Option<&Stream>,
) -> Result<DeviceArray<S::Elem, IxDyn>> {
    if let Some(first) = arrays.first() {
        // Shapes must be equal, not only along the other axes: check before expanding.
        for (index, a) in arrays.iter().enumerate() {
            if a.shape() != first.shape() {
                return Err(ArrayShapeError::JoinShapes {
                    operation: "stack",
                    axis,
                    first: first.shape().to_vec(),
                    index,
                    shape: a.shape().to_vec(),
                }
                .into());
            }
        }
    }
    let views = arrays
        .iter()
        .map(|a| a.view().into_dyn().expand_dims(axis))
        .collect::<Result<Vec<DeviceArrayView<'_, S::Elem, IxDyn>>>>()
        .map_err(|e| match e {
            Error::Shape(ArrayShapeError::NoSuchAxis { axis, axes, .. }) => ArrayShapeError::NoSuchAxis {
                operation: "stack",
                axis,
                axes,
            }
            .into(),
            other => other,
        })?;
    let refs: Vec<_> = views.iter().collect();
    join(&refs, axis, stream, "stack")
}

fn join<S: Storage, D: Dimension>(
    arrays: &[&DeviceArrayBase<S, D>],
    axis: usize,
    stream: Option<&Stream>,
    operation: &'static str,
) -> Result<DeviceArray<S::Elem, D>> {
    let shapes: Vec<&[usize]> = arrays.iter().map(|a| a.shape()).collect();
    let shape = joined_shape(operation, &shapes, axis)?;
    let ctx = arrays[0].context();
    let dim: D = dim_of(shape.iter().copied())?;
    let mut out = DeviceArray::<S::Elem, D>::empty(ctx, dim)?;
    let strides = out.strides().to_vec();
    let mut start = 0usize;
    for a in arrays {
        let mut part_shape = shape.clone();
        part_shape[axis] = a.shape()[axis];
        let offset = start * strides[axis] as usize;
        start += a.shape()[axis];
        // In bounds: the part is rows `start..start + len` of `axis` of a dense C-order array.
        let view = out.view_mut();
        let mut part = DeviceArrayBase::<_, D>::from_parts(view.data, offset, &part_shape, &strides)?;
        OnStream::new(&mut part, stream).copy_from(*a)?;
    }
    Ok(out)
}

/// Declares each of NumPy's stacking functions: the function, and its form on a stream
/// ([`OnStream<&Context>`](OnStream)), one body (`stacked`).
macro_rules! stacking_forms {
    ($($(#[$doc:meta])* $name:ident => $how:ident;)*) => {$(
        $(#[$doc])*
        pub fn $name<S: Storage, D: Dimension>(
            arrays: &[&DeviceArrayBase<S, D>],
        ) -> Result<DeviceArray<S::Elem, IxDyn>> {
            stacked(arrays, Stacking::$how, None)
        }

        impl OnStream<'_, &Context> {
            #[doc = concat!("[`", stringify!($name), "`] with the copies queued on this stream.")]
            pub fn $name<S: Storage, D: Dimension>(
                &self,
                arrays: &[&DeviceArrayBase<S, D>],
            ) -> Result<DeviceArray<S::Elem, IxDyn>> {
                stacked(arrays, Stacking::$how, self.stream)
            }
        }
    )*};
}

stacking_forms! {
    /// The arrays joined along their second axis, a 1-d (or 0-d) array's first (NumPy's `hstack`:
    /// 1-d arrays are laid end to end, matrices side by side).
    ///
    /// ```no_run
    /// use gpu_runtime::gpuarray::{hstack, vstack, DeviceArray};
    /// let ctx = gpu_runtime::Context::default()?;
    /// let a = DeviceArray::<f32, _>::ones(&ctx, 3)?;
    /// let b = DeviceArray::<f32, _>::zeros(&ctx, 3)?;
    /// assert_eq!(hstack(&[&a, &b])?.shape(), [6]);
    /// assert_eq!(vstack(&[&a, &b])?.shape(), [2, 3]);
    /// # Ok::<(), gpu_runtime::Error>(())
    /// ```
    hstack => Horizontal;

    /// The arrays joined along their first axis, each 0-d or 1-d array first made a row
    /// (NumPy's `vstack`, `row_stack`).
    vstack => Vertical;

    /// The arrays joined along their third axis, each first given three axes as
    /// [`atleast_3d`](DeviceArrayBase::atleast_3d) does (NumPy's `dstack`).
    dstack => Depth;

    /// The arrays joined as the columns of a matrix: a 1-d array of `n` elements is one column
    /// (`n x 1`), a 0-d array a `1 x 1`, others join along their second axis (NumPy's
    /// `column_stack`).
    column_stack => Columns;
}

/// Which of NumPy's stacking functions, each a `concatenate` after giving every array the
/// axes it joins along.
#[derive(Clone, Copy)]
enum Stacking {
    Horizontal,
    Vertical,
    Depth,
    Columns,
}

impl Stacking {
    fn name(self) -> &'static str {
        match self {
            Stacking::Horizontal => "hstack",
            Stacking::Vertical => "vstack",
            Stacking::Depth => "dstack",
            Stacking::Columns => "column_stack",
        }
    }
}

fn stacked<S: Storage, D: Dimension>(
    arrays: &[&DeviceArrayBase<S, D>],
    how: Stacking,
    stream: Option<&Stream>,
) -> Result<DeviceArray<S::Elem, IxDyn>> {
    let views = arrays
        .iter()
        .map(|a| {
            let v = a.view().into_dyn();
            match how {
                Stacking::Horizontal => v.atleast_1d(),
                Stacking::Vertical => v.atleast_2d(),
                Stacking::Depth => v.atleast_3d(),
                // NumPy: `array(a, ndmin=2).T` for fewer than two axes, a column.
                Stacking::Columns if v.ndim() < 2 => v.atleast_1d()?.expand_dims(1),
                Stacking::Columns => Ok(v),
            }
        })
        .collect::<Result<Vec<DeviceArrayView<'_, S::Elem, IxDyn>>>>()?;
    let axis = match how {
        Stacking::Horizontal if views.first().is_some_and(|v| v.ndim() == 1) => 0,
        Stacking::Horizontal | Stacking::Columns => 1,
        Stacking::Vertical => 0,
        Stacking::Depth => 2,
    };
    let refs: Vec<_> = views.iter().collect();
    join(&refs, axis, stream, how.name())
}

/// An entry of [`block`]'s nested lists: an array, or a list of entries (NumPy's nested
/// Python lists).
#[derive(Debug)]
pub enum Block<'a, T: ArrayElement> {
    /// An array (any number of axes).
    Array(DeviceArrayView<'a, T, IxDyn>),
    /// A list of entries, joined along the axis of its depth.
    List(Vec<Block<'a, T>>),
}

impl<'a, T: ArrayElement> Block<'a, T> {
    /// An array as an entry.
    pub fn array<S: Storage<Elem = T>, D: Dimension>(a: &'a DeviceArrayBase<S, D>) -> Self {
        Block::Array(a.view().into_dyn())
    }

    /// A list of entries.
    pub fn list(entries: impl IntoIterator<Item = Block<'a, T>>) -> Self {
        Block::List(entries.into_iter().collect())
    }

    /// The depth of lists above the arrays (all the same), the most axes of an array, and
    /// the first array.
    fn depths(&self) -> Result<(usize, usize, &DeviceArrayView<'a, T, IxDyn>)> {
        match self {
            Block::Array(a) => Ok((0, a.ndim(), a)),
            Block::List(entries) => {
                let mut found: Option<(usize, usize, &DeviceArrayView<'a, T, IxDyn>)> = None;
                for e in entries {
                    let (d, n, a) = e.depths()?;
                    found = match found {
                        Some((d0, _, _)) if d0 != d => {
                            return Err(ArrayShapeError::BlockLists {
                                problem: format!(
                                    "an array under {} lists and another under {}",
                                    d0 + 1,
                                    d + 1
                                ),
                            }
                            .into())
                        }
                        Some((d0, n0, a0)) => Some((d0, n0.max(n), a0)),
                        None => Some((d, n, a)),
                    };
                }
                let (d, n, a) = found.ok_or_else(|| ArrayShapeError::BlockLists {
                    problem: "an empty list".into(),
                })?;
                Ok((d + 1, n, a))
            }
        }
    }
}

/// Assembles an array from nested lists of blocks (NumPy's and CuPy's `block`): the
/// innermost lists are joined along the last axis, the lists of those along the one before,
/// and so on; each array first gets leading axes of length 1 up to the result's axes (the
/// most of the depth of lists and the arrays' axes). `block(&Block::list([Block::list([a,
/// b]), Block::list([c, d])]))` is `[[a, b], [c, d]]` as a block matrix. Errors: arrays at
/// different depths or an empty list ([`ArrayShapeError::BlockLists`]), and shapes that do
/// not join ([`ArrayShapeError::JoinShapes`]). One copy a level of lists.
///
/// ```no_run
/// use gpu_runtime::gpuarray::{block, Block, DeviceArray};
/// let ctx = gpu_runtime::Context::default()?;
/// let a = DeviceArray::<f32, _>::ones(&ctx, (2, 2))?;
/// let z = DeviceArray::<f32, _>::zeros(&ctx, (2, 3))?;
/// let b = block(&Block::list([Block::list([Block::array(&a), Block::array(&z)]), Block::list([Block::array(&z.t()), Block::array(&a.t())])]));
/// # let _ = b;
/// # Ok::<(), gpu_runtime::Error>(())
/// ```
pub fn block<T: ArrayElement>(blocks: &Block<'_, T>) -> Result<DeviceArray<T, IxDyn>> {
    let (_, _, first) = blocks.depths()?;
    let ctx = first.context().clone();
    OnStream::legacy(&ctx).block(blocks)
}

impl OnStream<'_, &Context> {
    /// [`block`] with the copies queued on this stream.
    pub fn block<T: ArrayElement>(&self, blocks: &Block<'_, T>) -> Result<DeviceArray<T, IxDyn>> {
        let (depth, axes, _) = blocks.depths()?;
        let ndim = depth.max(axes);
        block_level(blocks, depth, ndim, self.stream)
    }
}

/// `a` with leading axes of length 1 up to `ndim` axes (NumPy's `atleast_nd`).
fn with_axes<'v, T: ArrayElement>(
    a: &'v DeviceArrayView<'_, T, IxDyn>,
    ndim: usize,
) -> Result<DeviceArrayView<'v, T, IxDyn>> {
    let mut v = a.view();
    while v.ndim() < ndim {
        v = v.expand_dims(0)?;
    }
    Ok(v)
}

/// The entry `b` with `depth` levels of lists left above its arrays, as an array of `ndim`
/// axes.
fn block_level<T: ArrayElement>(
    b: &Block<'_, T>,
    depth: usize,
    ndim: usize,
    stream: Option<&Stream>,
) -> Result<DeviceArray<T, IxDyn>> {
    match b {
        Block::Array(a) => OnStream::new(&with_axes(a, ndim)?, stream).to_contiguous(),
        Block::List(entries) => {
            let axis = ndim - depth;
            // The arrays of the innermost lists are joined as views, without a copy first.
            if depth == 1 {
                let mut views = Vec::with_capacity(entries.len());
                for e in entries {
                    if let Block::Array(a) = e {
                        views.push(with_axes(a, ndim)?);
                    }
                }
                let refs: Vec<_> = views.iter().collect();
                return join(&refs, axis, stream, "block");
            }
            let parts = entries
                .iter()
                .map(|e| block_level(e, depth - 1, ndim, stream))
                .collect::<Result<Vec<_>>>()?;
            let refs: Vec<_> = parts.iter().collect();
            join(&refs, axis, stream, "block")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn joined_shapes_agree_but_along_the_axis() {
        assert_eq!(
            joined_shape("concatenate", &[&[2, 3], &[4, 3], &[0, 3]], 0).unwrap(),
            [6, 3]
        );
        assert_eq!(
            joined_shape("concatenate", &[&[2, 3], &[2, 1]], 1).unwrap(),
            [2, 4]
        );
        let e = joined_shape("concatenate", &[&[2, 3], &[2, 4]], 0).unwrap_err();
        assert!(
            matches!(
                &e,
                Error::Shape(ArrayShapeError::JoinShapes {
                    index: 1,
                    axis: 0,
                    ..
                })
            ),
            "{e}"
        );
        let e = joined_shape("concatenate", &[&[2, 3], &[2, 3, 1]], 0).unwrap_err();
        assert!(
            matches!(&e, Error::Shape(ArrayShapeError::JoinShapes { index: 1, .. })),
            "{e}"
        );
        let e = joined_shape("concatenate", &[&[], &[]], 0).unwrap_err();
        assert!(
            matches!(
                &e,
                Error::Shape(ArrayShapeError::NoSuchAxis { axis: 0, axes: 0, .. })
            ),
            "{e}"
        );
        let e = joined_shape("stack", &[], 0).unwrap_err();
        assert!(
            matches!(&e, Error::Shape(ArrayShapeError::NoArrays { operation: "stack" })),
            "{e}"
        );
    }
}
