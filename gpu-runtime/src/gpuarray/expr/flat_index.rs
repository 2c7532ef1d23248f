//! NumPy's `unravel_index` and `ravel_multi_index`: flat indices of a C-order shape to their
//! coordinates and back, each one fused kernel of integer arithmetic (`(i // stride) % dim`,
//! `sum(c * stride)`), after a check of the range that waits for its answer (NumPy raises).

use ndarray::{Dimension, IxDyn};

use crate::driver::context::core::Context;
use crate::driver::stream::Stream;
use crate::error::{counts_error, ArrayShapeError, Result};
use crate::gpuarray::array::core::{DeviceArray, DeviceArrayBase, Storage};
use crate::gpuarray::array::layout;
use crate::gpuarray::array::on_stream::{context_fns, OnStream};
use crate::gpuarray::copy::gather::IndexMode;
use crate::gpuarray::elements::element::Element;
use crate::gpuarray::expr::core::Expr;

/// The C-order strides, in elements, of `shape`.
fn strides_of(shape: &[usize]) -> Vec<i64> {
    layout::c_strides(shape).iter().map(|&s| s as i64).collect()
}

context_fns! {
    /// The coordinates in `shape` (C order) of each flat index (NumPy's `unravel_index(indices,
    /// shape)`): one `i64` array of the indices' shape per axis. An index outside `0..size` is
    /// [`ArrayShapeError::IndexOutOfRange`] (NumPy's `ValueError`).
    ///
    /// ```no_run
    /// use gpu_runtime::gpuarray::{self, DeviceArray};
    /// use gpu_runtime::ndarray::arr1;
    /// let ctx = gpu_runtime::Context::default()?;
    /// let i = DeviceArray::from_ndarray(&ctx, &arr1(&[22i64, 41, 37]))?;
    /// let c = gpuarray::unravel_index(&i, &[7, 6])?;
    /// assert_eq!(c[0].to_vec()?, [3, 6, 6]);
    /// assert_eq!(c[1].to_vec()?, [4, 5, 1]);
    /// # Ok::<(), gpu_runtime::Error>(())
    /// ```
    fn unravel_index[S: Storage<Elem: Element>, D: Dimension](
        &self, indices: &DeviceArrayBase<S, D>, shape: &[usize]
    ) -> Result<Vec<DeviceArray<i64, D>>> {
        unravel_stream(indices, shape, self.stream)
    }
}

/// [`ArrayShapeError::IndexOutOfRange`] of `operation` unless every index is in `0..len`
/// (naming the least when it is negative, else the largest); waits for both.
fn in_range<D: Dimension>(
    operation: &'static str,
    indices: &DeviceArray<i64, D>,
    len: i64,
    stream: Option<&Stream>,
) -> Result<()> {
    if !indices.is_empty() {
        let on = OnStream::new(indices, stream);
        let (lo, hi) = (on.min()?, on.max()?);
        if lo < 0 || hi >= len {
            return Err(ArrayShapeError::IndexOutOfRange {
                operation,
                index: if lo < 0 { lo } else { hi },
                len: len as usize,
            }
            .into());
        }
    }
    Ok(())
}

/// [`unravel_index`] on `stream` (`None`: the legacy default stream).
fn unravel_stream<S: Storage<Elem: Element>, D: Dimension>(
    indices: &DeviceArrayBase<S, D>,
    shape: &[usize],
    stream: Option<&Stream>,
) -> Result<Vec<DeviceArray<i64, D>>> {
    const OP: &str = "unravel_index";
    let size = layout::checked_size(OP, shape)? as i64;
    let flat = indices.expr().cast::<i64>().eval_stream(stream)?;
    in_range(OP, &flat, size, stream)?;
    shape
        .iter()
        .zip(strides_of(shape))
        .map(|(&dim, stride)| {
            // Indices are in range, so `/` is floor division and `%` of a non-negative number.
            (flat.expr().floor_divide(stride.max(1)) % (dim.max(1) as i64))
                .eval_stream(stream)?
                .into_dimensionality()
        })
        .collect()
}

/// The flat C-order index in `shape` of each coordinate tuple (NumPy's
/// `ravel_multi_index(multi_index, dims, mode)`): one integer array per axis, broadcast
/// together. `mode` says what a coordinate outside its axis does: [`IndexMode::Raise`]
/// refuses it ([`ArrayShapeError::IndexOutOfRange`], waiting for the check), `Wrap` takes it
/// modulo the axis, `Clip` clamps it. Another number of arrays than axes is
/// [`ArrayShapeError::ElementCounts`].
pub fn ravel_multi_index<S: Storage<Elem: Element>, D: Dimension>(
    multi_index: &[&DeviceArrayBase<S, D>],
    shape: &[usize],
    mode: IndexMode,
) -> Result<DeviceArray<i64, IxDyn>> {
    let Some(first) = multi_index.first() else {
        return Err(counts_error("ravel_multi_index", shape.len(), 0));
    };
    OnStream::legacy(first.context()).ravel_multi_index(multi_index, shape, mode)
}

impl OnStream<'_, &Context> {
    /// [`ravel_multi_index`] on this stream (with [`IndexMode::Raise`], waits for the check).
    pub fn ravel_multi_index<S: Storage<Elem: Element>, D: Dimension>(
        &self,
        multi_index: &[&DeviceArrayBase<S, D>],
        shape: &[usize],
        mode: IndexMode,
    ) -> Result<DeviceArray<i64, IxDyn>> {
        ravel_stream(multi_index, shape, mode, self.stream)
    }
}

/// [`ravel_multi_index`] on `stream`.
fn ravel_stream<S: Storage<Elem: Element>, D: Dimension>(
    multi_index: &[&DeviceArrayBase<S, D>],
    shape: &[usize],
    mode: IndexMode,
    stream: Option<&Stream>,
) -> Result<DeviceArray<i64, IxDyn>> {
    const OP: &str = "ravel_multi_index";
    if multi_index.len() != shape.len() || shape.is_empty() {
        return Err(counts_error(OP, shape.len(), multi_index.len()));
    }
    layout::checked_size(OP, shape)?;
    let mut coords = Vec::with_capacity(shape.len());
    for (&c, &dim) in multi_index.iter().zip(shape) {
        let c = c.expr().cast::<i64>().eval_stream(stream)?;
        let dim = dim as i64;
        let c = match mode {
            IndexMode::Raise => {
                in_range(OP, &c, dim, stream)?;
                c
            }
            // Python's `%`: in 0..dim for any sign.
            IndexMode::Wrap => (c.expr() % dim.max(1)).eval_stream(stream)?,
            IndexMode::Clip => c.expr().clip(0i64, (dim - 1).max(0)).eval_stream(stream)?,
        };
        coords.push(c);
    }
    let mut flat: Option<Expr<'_, i64>> = None;
    for (c, stride) in coords.iter().zip(strides_of(shape)) {
        let term = c.expr() * stride;
        flat = Some(match flat {
            None => term,
            Some(f) => f + term,
        });
    }
    // `shape` is not empty, so there is a first term.
    flat.ok_or(crate::error::Error::Internal {
        operation: OP,
        broken: "no axes",
    })?
    .eval_stream(stream)
}
