//! NumPy's `pad` modes that compute their border rather than copy elements into it: constants
//! per side, `linear_ramp` and the statistics (`maximum`, `minimum`, `mean`, `median`). As
//! NumPy does, the axes are padded in turn: the array grows along one, its elements in the
//! middle, and that axis's two borders are computed from the middle (so a corner holds what
//! the later axis computed from the earlier axis's border).

use std::ops::Range;

use ndarray::{Dimension, IxDyn, SliceInfoElem};

use crate::driver::context::core::Context;
use crate::driver::stream::Stream;
use crate::error::{ArrayShapeError, Result};
use crate::gpuarray::array::axes::slice_along;
use crate::gpuarray::array::core::{DeviceArray, DeviceArrayBase, DeviceArrayView, Storage};
use crate::gpuarray::array::layout;
use crate::gpuarray::array::on_stream::{on_legacy_stream, OnStream};
use crate::gpuarray::elements::dtype::DType;
use crate::gpuarray::elements::element::{Element, Kind};
use crate::gpuarray::elements::mean_type::MeanType;
use crate::gpuarray::expr::core::{undefined_error, Operand};
use crate::gpuarray::expr::pad::{axis_widths, grown};
use crate::gpuarray::reduce::axis::ReduceAxis;

const OP: &str = "DeviceArray::pad";

/// The statistic [`pad_stat`](DeviceArrayBase::pad_stat) fills a border with (NumPy's
/// `mode=`), taken along the padded axis over the elements nearest that border.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PadStat {
    /// `'maximum'`.
    Maximum,
    /// `'minimum'`.
    Minimum,
    /// `'mean'`: for integers rounded to the nearest (ties to even), as NumPy rounds it.
    Mean,
    /// `'median'`: for integers rounded as `Mean`.
    Median,
}

/// The slices of the elements `range` along axis `k` of `nd` axes (all of the others).
fn slab(k: usize, nd: usize, range: Range<usize>) -> Vec<SliceInfoElem> {
    slice_along(nd, k, range.start as isize, range.end as isize)
}

/// `a` padded by `widths` (as [`pad`](DeviceArrayBase::pad) takes them), one axis at a time:
/// the array grown along axis `k` with the elements in the middle, then `fill(grown, k,
/// (before, len, after))` writes its two borders. An empty axis that is padded is refused
/// unless `empty_ok`.
fn grow_each_axis<S: Storage<Elem: Element>, D: Dimension>(
    a: &DeviceArrayBase<S, D>,
    stream: Option<&Stream>,
    widths: &[(usize, usize)],
    empty_ok: bool,
    mut fill: impl FnMut(&mut DeviceArray<S::Elem, IxDyn>, usize, (usize, usize, usize)) -> Result<()>,
) -> Result<DeviceArray<S::Elem, D>> {
    let widths = axis_widths(widths, a.ndim())?;
    let nd = a.ndim();
    let mut cur: Option<DeviceArray<S::Elem, IxDyn>> = None;
    for (k, &(before, after)) in widths.iter().enumerate() {
        if before == 0 && after == 0 {
            continue;
        }
        let src = match &cur {
            Some(c) => c.view(),
            None => a.view().into_dyn(),
        };
        let len = src.shape()[k];
        if len == 0 && !empty_ok {
            return Err(ArrayShapeError::PadEmptyAxis { axis: k }.into());
        }
        let mut shape = src.shape().to_vec();
        shape[k] = grown(len, (before, after), a.shape())?;
        layout::checked_size(OP, &shape)?;
        let mut grown = DeviceArray::<S::Elem, IxDyn>::empty(a.context(), IxDyn(&shape))?;
        let mut middle = grown
            .view_mut()
            .slice_move(&slab(k, nd, before..before + len)[..])?;
        OnStream::new(&mut middle, stream).copy_from(&src)?;
        fill(&mut grown, k, (before, len, after))?;
        cur = Some(grown);
    }
    match cur {
        Some(c) => c.into_dimensionality(),
        None => OnStream::new(a, stream).copy(),
    }
}

/// Writes `value` (of the slab's shape with 1 along the padded axis) into the elements
/// `range` along axis `k` of `grown`, repeated along that axis.
fn write_border<T: Element>(
    grown: &mut DeviceArray<T, IxDyn>,
    k: usize,
    range: Range<usize>,
    value: &DeviceArray<T, IxDyn>,
    stream: Option<&Stream>,
) -> Result<()> {
    let nd = grown.ndim();
    let mut border = grown.view_mut().slice_move(&slab(k, nd, range)[..])?;
    let shape = border.shape().to_vec();
    OnStream::new(&mut border, stream).copy_from(&value.broadcast_to(&shape)?)
}

/// A 0-d-like array of one value, shaped `[1; nd]` to broadcast against any slab, filled on
/// `stream`.
fn one_value<T: Element>(
    ctx: &Context,
    stream: Option<&Stream>,
    v: T,
    nd: usize,
) -> Result<DeviceArray<T, IxDyn>> {
    OnStream::new(ctx, stream).full(IxDyn(&vec![1; nd]), v)
}

/// NumPy's odd reflections, for [`pad`](DeviceArrayBase::pad)'s `ReflectOdd` and `SymmetricOdd`.
impl<S: Storage<Elem: Element>, D: Dimension> OnStream<'_, &DeviceArrayBase<S, D>> {
    /// NumPy's `reflect_type='odd'` of `'reflect'` (`include_edge` false) and `'symmetric'`
    /// (true): each border value is twice the edge less the mirrored one. Padded as NumPy's
    /// `_set_reflect_both` pads, in rounds: each mirrors at most the part already filled (a
    /// whole number of periods) about the current outermost element, so a wide border mirrors
    /// values an earlier round computed, with NumPy's rounding; `2 * edge` is `edge + edge`
    /// (both exact). An axis of one element repeats it (NumPy's legacy rule).
    pub(crate) fn pad_reflect_odd(
        &self,
        widths: &[(usize, usize)],
        include_edge: bool,
    ) -> Result<DeviceArray<S::Elem, D>> {
        let (a, stream) = (self.target, self.stream);
        if S::Elem::DTYPE == DType::Bool {
            // NumPy: "numpy boolean subtract, the `-` operator, is not supported".
            return Err(undefined_error(OP, "reflect_type='odd'", S::Elem::c_name()));
        }
        grow_each_axis(a, stream, widths, false, |grown, k, (before, len, after)| {
            let nd = grown.ndim();
            let total = before + len + after;
            if len == 1 {
                let edge = grown.view().slice_move(&slab(k, nd, before..before + 1)[..])?;
                let edge = OnStream::new(&edge, stream).copy()?;
                if before > 0 {
                    write_border(grown, k, 0..before, &edge, stream)?;
                }
                if after > 0 {
                    write_border(grown, k, before + 1..total, &edge, stream)?;
                }
                return Ok(());
            }
            let (mut left, mut right) = (before, after);
            while left > 0 || right > 0 {
                let filled = total - left - right;
                // NumPy's `old_length`: whole periods of the filled part (less the edge when it
                // is not repeated), and where a chunk starts relative to the edge.
                let (old, edge_offset) = if include_edge {
                    (filled / len * len, 1)
                } else {
                    ((filled - 1) / (len - 1) * (len - 1), 0)
                };
                if left > 0 {
                    let chunk = old.min(left);
                    let lo = left + 1 - edge_offset;
                    let values = mirrored(grown, k, lo..lo + chunk, left, stream)?;
                    write_border(grown, k, left - chunk..left, &values, stream)?;
                    left -= chunk;
                }
                if right > 0 {
                    let chunk = old.min(right);
                    let edge = total - right - 1;
                    let hi = edge + edge_offset;
                    let values = mirrored(grown, k, hi - chunk..hi, edge, stream)?;
                    write_border(grown, k, total - right..total - right + chunk, &values, stream)?;
                    right -= chunk;
                }
            }
            Ok(())
        })
    }
}

/// `2 * grown[edge] - grown[range]` along axis `k`, the range read backwards (its mirror
/// image about the edge), as a new array.
fn mirrored<T: Element>(
    grown: &DeviceArray<T, IxDyn>,
    k: usize,
    range: Range<usize>,
    edge: usize,
    stream: Option<&Stream>,
) -> Result<DeviceArray<T, IxDyn>> {
    let nd = grown.ndim();
    let mut back = slab(k, nd, range);
    if let SliceInfoElem::Slice { step, .. } = &mut back[k] {
        *step = -1;
    }
    let chunk = grown.view().slice_move(&back[..])?;
    let edge = grown.view().slice_move(&slab(k, nd, edge..edge + 1)[..])?;
    OnStream::new((&edge + &edge) - &chunk, stream).eval()
}

/// `m` (a mean or median, in its own type) as the element type, integers rounded to the
/// nearest, ties to even (NumPy's `_round_if_needed`).
fn as_element<M: Element, T: Element>(
    m: &DeviceArray<M, IxDyn>,
    stream: Option<&Stream>,
) -> Result<DeviceArray<T, IxDyn>> {
    if matches!(T::KIND, Kind::Int | Kind::UInt) {
        let f = OnStream::new(m, stream).astype::<f64>()?;
        let r = OnStream::new((&f).into_expr().around(0), stream).eval()?;
        return OnStream::new(&r, stream).astype::<T>();
    }
    OnStream::new(m, stream).astype::<T>()
}

impl<S: Storage<Elem: Element>, D: Dimension> DeviceArrayBase<S, D> {
    on_legacy_stream! {
        /// [`pad`](Self::pad) with [`PadMode::Constant`](crate::gpuarray::PadMode::Constant)
        /// values per side: `values[k]` the values before and after axis `k` (one pair for every
        /// axis, or one per axis; NumPy's `constant_values=((b0, a0), (b1, a1), ...)`). Where
        /// borders meet, the later axis's value is kept, as NumPy's.
        fn pad_constant_values(&self, widths: &[(usize, usize)], values: &[(S::Elem, S::Elem)])
            -> Result<DeviceArray<S::Elem, D>>;

        /// [`pad`](Self::pad) with NumPy's `'linear_ramp'` per side: along each padded axis the
        /// border runs from `end_values[k]`'s value at the outer edge toward the edge element
        /// (NumPy's `linspace(end, edge, width, endpoint=False)`: as NumPy computes it, in
        /// `f64` for one pair, in a float element type for a pair per axis, rounded down for
        /// integers). One pair for every axis, or one per axis;
        /// complex elements are
        /// [`ArgumentError::UndefinedOnElement`](crate::error::ArgumentError::UndefinedOnElement),
        /// an empty padded axis [`ArrayShapeError::PadEmptyAxis`].
        fn pad_linear_ramp(&self, widths: &[(usize, usize)], end_values: &[(S::Elem, S::Elem)])
            -> Result<DeviceArray<S::Elem, D>>;
    }
}

impl<S: Storage<Elem: MeanType>, D: Dimension> DeviceArrayBase<S, D> {
    on_legacy_stream! {
        /// [`pad`](Self::pad) with a statistic of the elements along each padded axis (NumPy's
        /// `mode='maximum'`, `'minimum'`, `'mean'`, `'median'`): each border is the statistic
        /// of the `stat_length` elements nearest it (`stat_length[k]` for the two borders of
        /// axis `k`, one pair for every axis, or none for the whole axis: NumPy's
        /// `stat_length=None`; a length past the axis takes the whole axis). An empty padded
        /// axis is [`ArrayShapeError::PadEmptyAxis`]; `Maximum` and `Minimum` of a length 0
        /// [`ArrayShapeError::EmptyReduction`], as NumPy refuses them.
        ///
        /// ```no_run
        /// use gpu_runtime::gpuarray::{DeviceArray, PadStat};
        /// let ctx = gpu_runtime::Context::default()?;
        /// let a = DeviceArray::<i32, _>::arange(&ctx, 1.0, 6.0, 1.0)?;
        /// let p = a.pad_stat(&[(2, 1)], PadStat::Maximum, &[(2, 3)])?;
        /// assert_eq!(p.to_vec()?, [2, 2, 1, 2, 3, 4, 5, 5]);
        /// # Ok::<(), gpu_runtime::Error>(())
        /// ```
        fn pad_stat(&self, widths: &[(usize, usize)], stat: PadStat, stat_length: &[(usize, usize)])
            -> Result<DeviceArray<S::Elem, D>>;
    }
}

impl<S: Storage<Elem: Element>, D: Dimension> OnStream<'_, &DeviceArrayBase<S, D>> {
    /// [`pad_constant_values`](DeviceArrayBase::pad_constant_values) on this stream.
    pub fn pad_constant_values(
        &self,
        widths: &[(usize, usize)],
        values: &[(S::Elem, S::Elem)],
    ) -> Result<DeviceArray<S::Elem, D>> {
        let a = self.target;
        let (ctx, stream, nd) = (a.context(), self.stream, a.ndim());
        let values = axis_widths(values, nd)?;
        grow_each_axis(a, stream, widths, true, |grown, k, (before, len, after)| {
            let (vb, va) = values[k];
            write_border(grown, k, 0..before, &one_value(ctx, stream, vb, nd)?, stream)?;
            write_border(
                grown,
                k,
                before + len..before + len + after,
                &one_value(ctx, stream, va, nd)?,
                stream,
            )
        })
    }

    /// [`pad_linear_ramp`](DeviceArrayBase::pad_linear_ramp) on this stream.
    pub fn pad_linear_ramp(
        &self,
        widths: &[(usize, usize)],
        end_values: &[(S::Elem, S::Elem)],
    ) -> Result<DeviceArray<S::Elem, D>> {
        let a = self.target;
        if S::Elem::KIND == Kind::Complex {
            return Err(undefined_error("pad", "linear_ramp", S::Elem::c_name()));
        }
        let (ctx, stream, nd) = (a.context(), self.stream, a.ndim());
        // NumPy's `_as_pairs` hands one pair on as NumPy scalars (`linspace` then computes in
        // `f64`) and a pair per axis as Python numbers (in the element type).
        let in_element_type = end_values.len() > 1;
        let ends = axis_widths(end_values, nd)?;
        grow_each_axis(a, stream, widths, false, |grown, k, (before, len, after)| {
            let (eb, ea) = ends[k];
            // The border before, then the one after: each ramps from its edge to its end value.
            let sides = [
                (before, before, eb, false, 0..before),
                (
                    after,
                    before + len - 1,
                    ea,
                    true,
                    before + len..before + len + after,
                ),
            ];
            for (width, edge, end, reversed, border) in sides {
                if width > 0 {
                    let edge = grown.slice(&slab(k, nd, edge..edge + 1)[..])?;
                    let end = one_value(ctx, stream, end, nd)?;
                    let r = ramp(&edge, end, (width, k), reversed, in_element_type, stream)?;
                    write_border(grown, k, border, &r, stream)?;
                }
            }
            Ok(())
        })
    }
}

/// NumPy's `linspace(end, edge, width, endpoint=False, dtype=T, axis=k)` (reversed along `k`
/// for the border after the elements): in `f64` (integers then rounded down), or for a float
/// `in_element_type` in that type, each operation rounded to it (an operation in `f64` then a
/// rounding to a narrower float gives that float's own result). As NumPy, where any step is 0
/// every value is `t / width * (edge - end) + end`, else `t * ((edge - end) / width) + end`.
fn ramp<T: Element>(
    edge: &DeviceArrayView<'_, T, IxDyn>,
    end: DeviceArray<T, IxDyn>,
    (width, k): (usize, usize),
    reversed: bool,
    in_element_type: bool,
    stream: Option<&Stream>,
) -> Result<DeviceArray<T, IxDyn>> {
    let float = T::KIND == Kind::Float;
    // In `T`'s precision: a float's own rounding, or `f64` as it is.
    let rounded = |x: DeviceArray<f64, IxDyn>| -> Result<DeviceArray<f64, IxDyn>> {
        if float && in_element_type {
            let t = OnStream::new(&x, stream).astype::<T>()?;
            OnStream::new(&t, stream).astype::<f64>()
        } else {
            Ok(x)
        }
    };
    let edge = OnStream::new(edge, stream).astype::<f64>()?;
    let end = OnStream::new(&end, stream).astype::<f64>()?;
    let mut shape = vec![1; edge.ndim()];
    shape[k] = width;
    let t = OnStream::new(edge.context(), stream)
        .arange::<f64>(0.0, width as f64, 1.0)?
        .reshape(IxDyn(&shape))?;
    let w = width as f64;
    let delta = rounded(OnStream::new(&edge - &end, stream).eval()?)?;
    let step = rounded(OnStream::new(&delta / w, stream).eval()?)?;
    let zero_step = OnStream::new(
        &OnStream::new((&step).into_expr().eq(0.0), stream).eval()?,
        stream,
    )
    .any()?;
    let y = if zero_step {
        let f = rounded(OnStream::new(&t / w, stream).eval()?)?;
        rounded(OnStream::new(&f * &delta, stream).eval()?)?
    } else {
        rounded(OnStream::new(&t * &step, stream).eval()?)?
    };
    let mut y = rounded(OnStream::new(&y + &end, stream).eval()?)?;
    if reversed {
        let mut back = vec![SliceInfoElem::from(..); y.ndim()];
        back[k] = SliceInfoElem::Slice {
            start: 0,
            end: None,
            step: -1,
        };
        y = OnStream::new(&y.slice(&back[..])?, stream).copy()?;
    }
    if !float {
        y = OnStream::new((&y).into_expr().floor(), stream).eval()?;
    }
    OnStream::new(&y, stream).astype::<T>()
}

impl<S: Storage<Elem: MeanType>, D: Dimension> OnStream<'_, &DeviceArrayBase<S, D>> {
    /// [`pad_stat`](DeviceArrayBase::pad_stat) on this stream.
    pub fn pad_stat(
        &self,
        widths: &[(usize, usize)],
        stat: PadStat,
        stat_length: &[(usize, usize)],
    ) -> Result<DeviceArray<S::Elem, D>> {
        let a = self.target;
        let (stream, nd) = (self.stream, a.ndim());
        let lengths: Vec<(Option<usize>, Option<usize>)> = if stat_length.is_empty() {
            vec![(None, None); nd]
        } else {
            axis_widths(stat_length, nd)?
                .into_iter()
                .map(|(b, f)| (Some(b), Some(f)))
                .collect()
        };
        grow_each_axis(a, stream, widths, false, |grown, k, (before, len, after)| {
            let (lb, la) = lengths[k];
            let (lb, la) = (lb.unwrap_or(len).min(len), la.unwrap_or(len).min(len));
            let of = |grown: &DeviceArray<S::Elem, IxDyn>,
                      range: Range<usize>|
             -> Result<DeviceArray<S::Elem, IxDyn>> {
                let part = grown.slice(&slab(k, nd, range)[..])?;
                let on = OnStream::new(&part, stream);
                match stat {
                    PadStat::Maximum => on.max_axis(ReduceAxis::keepdims(k)),
                    PadStat::Minimum => on.min_axis(ReduceAxis::keepdims(k)),
                    PadStat::Mean => as_element(&on.mean_axis(ReduceAxis::keepdims(k))?, stream),
                    PadStat::Median => {
                        let m = on.median_axis(k as isize)?;
                        let mut shape = m.shape().to_vec();
                        shape.insert(k, 1);
                        as_element(&m.reshape(IxDyn(&shape))?, stream)
                    }
                }
            };
            let first = of(grown, before..before + lb)?;
            // One statistic serves both borders when both take the whole axis, as NumPy's.
            let last = if lb == len && la == len {
                None
            } else {
                Some(of(grown, before + len - la..before + len)?)
            };
            write_border(grown, k, 0..before, &first, stream)?;
            write_border(
                grown,
                k,
                before + len..before + len + after,
                last.as_ref().unwrap_or(&first),
                stream,
            )
        })
    }
}
