//! NumPy's `axis=` as a tuple, with negative axes, and `keepdims` over any set of axes (all of
//! them too): `sum_axes`, `prod_axes`, `max_axes`, `min_axes`, `nanmax_axes`, `nanmin_axes`,
//! `any_axes`, `all_axes` and `count_nonzero_axes`. Axes are `isize` (`-1` is the last, as NumPy);
//! one out of range is [`ArrayShapeError::AxisOutOfRange`], one given twice
//! [`ArrayShapeError::DuplicateAxis`] (NumPy's `ValueError`s), an empty list reduces nothing
//! (a copy, or for `any`/`all` each element's truth, as NumPy's `axis=()`).
//!
//! The axes are reduced one after the other, the highest first (so the others keep their
//! numbers), each pass through the one-axis reduction: the operations here are those whose
//! result over several axes is their result over each in turn, exactly (integers, `max`,
//! `min`, the truth tests) or up to the rounding of the partial sums and products in the
//! element type (the floats, whose accumulators are as the one-axis forms').

use ndarray::{Dimension, IxDyn};

use crate::error::{ArrayShapeError, Result};
use crate::gpuarray::array::core::{DeviceArray, DeviceArrayBase, Storage};
use crate::gpuarray::array::on_stream::{on_legacy_stream, OnStream};
use crate::gpuarray::elements::boolean::Bool;
use crate::gpuarray::elements::element::Element;

/// `axes` as axes of an array of `ndim` axes, highest first: negative ones counted from the
/// end, each checked to be in range and given once.
pub(crate) fn normalize_axes(axes: &[isize], ndim: usize) -> Result<Vec<usize>> {
    let mut out = Vec::with_capacity(axes.len());
    for &a in axes {
        let k = if a < 0 { a + ndim as isize } else { a };
        if k < 0 || k as usize >= ndim {
            return Err(ArrayShapeError::AxisOutOfRange {
                axis: a.unsigned_abs(),
                axes: ndim,
            }
            .into());
        }
        let k = k as usize;
        if out.contains(&k) {
            return Err(ArrayShapeError::DuplicateAxis { axis: a }.into());
        }
        out.push(k);
    }
    out.sort_unstable_by(|a, b| b.cmp(a));
    Ok(out)
}

/// The shape of a result over `axes` (highest first) of `shape` with `keepdims`: each reduced
/// axis put back with length 1.
fn kept_shape(shape: &[usize], axes: &[usize]) -> Vec<usize> {
    shape
        .iter()
        .enumerate()
        .map(|(k, &d)| if axes.contains(&k) { 1 } else { d })
        .collect()
}

/// The reductions over several axes, on a stream (`a.on(&stream).sum_axes(&[0, -1], false)`).
impl<S: Storage<Elem: Element>, D: Dimension> OnStream<'_, &DeviceArrayBase<S, D>> {
    /// Reduces `axes` one after the other, the highest with `first` (on this array), the
    /// others with `then` (on the result so far); `none` is the result of no axes. Then puts
    /// the axes back with length 1 for `keepdims`.
    fn over_axes<R: Element>(
        &self,
        axes: &[isize],
        keepdims: bool,
        first: impl FnOnce(&Self, usize) -> Result<DeviceArray<R, IxDyn>>,
        then: impl Fn(OnStream<'_, &DeviceArray<R, IxDyn>>, usize) -> Result<DeviceArray<R, IxDyn>>,
        none: impl FnOnce(&Self) -> Result<DeviceArray<R, IxDyn>>,
    ) -> Result<DeviceArray<R, IxDyn>> {
        let shape = self.target.shape().to_vec();
        let axes = normalize_axes(axes, shape.len())?;
        let Some((&top, rest)) = axes.split_first() else {
            return none(self);
        };
        let mut out = first(self, top)?;
        for &k in rest {
            out = then(OnStream::new(&out, self.stream), k)?;
        }
        if keepdims {
            out = out.reshape(IxDyn(&kept_shape(&shape, &axes)))?;
        }
        Ok(out)
    }

    /// [`count_nonzero_axes`](DeviceArrayBase::count_nonzero_axes) on this stream.
    pub fn count_nonzero_axes(&self, axes: &[isize], keepdims: bool) -> Result<DeviceArray<i64, IxDyn>> {
        // The first axis counts; the others add those counts up.
        self.over_axes(
            axes,
            keepdims,
            |a, k| a.count_nonzero_axis(k),
            |a, k| a.sum_axis(k),
            |a| a.target.expr().cast::<Bool>().cast::<i64>().eval_stream(a.stream),
        )
    }

    /// No axes reduced: a copy, as a dynamic-dimensional array.
    fn copy_dyn(&self) -> Result<DeviceArray<S::Elem, IxDyn>> {
        Ok(self.copy()?.into_dyn())
    }

    /// No axes reduced by `any`/`all`: each element's truth.
    fn truth(&self) -> Result<DeviceArray<Bool, IxDyn>> {
        // The conversion to `Bool` is NumPy's truth (nonzero; NaN is true).
        let e = self.target.expr().cast::<Bool>();
        e.eval_stream(self.stream)
    }
}

impl<S: Storage<Elem: Element>, D: Dimension> DeviceArrayBase<S, D> {
    on_legacy_stream! {
        /// The number of nonzero elements over each of `axes` (NumPy's `count_nonzero(a, axis=)`
        /// with a tuple; negative axes count from the end), with NumPy's `keepdims`, as `i64`; no
        /// axes gives each element's truth as 0 or 1. See
        /// [`count_nonzero_axis`](Self::count_nonzero_axis).
        fn count_nonzero_axes(&self, axes: &[isize], keepdims: bool)
            -> Result<DeviceArray<i64, IxDyn>>;
    }
}

macro_rules! axes_methods {
    ($($name:ident $one:ident $out:ty, $none:ident, $doc:literal;)*) => {
        impl<S: Storage<Elem: Element>, D: Dimension> OnStream<'_, &DeviceArrayBase<S, D>> {$(
            #[doc = concat!("[`", stringify!($name), "`](DeviceArrayBase::", stringify!($name), ") on this stream.")]
            pub fn $name(&self, axes: &[isize], keepdims: bool) -> Result<DeviceArray<$out, IxDyn>> {
                self.over_axes(axes, keepdims, |a, k| a.$one(k), |a, k| a.$one(k), |a| a.$none())
            }
        )*}

        impl<S: Storage<Elem: Element>, D: Dimension> DeviceArrayBase<S, D> {$(
            #[doc = concat!($doc, " over each of `axes` (NumPy's `axis=` tuple; negative axes count from the end), with NumPy's `keepdims`; see [`", stringify!($one), "`](Self::", stringify!($one), ").")]
            pub fn $name(&self, axes: &[isize], keepdims: bool) -> Result<DeviceArray<$out, IxDyn>> {
                OnStream::legacy(self).$name(axes, keepdims)
            }
        )*}
    };
}

axes_methods!(
    sum_axes sum_axis S::Elem, copy_dyn, "The sums";
    prod_axes prod_axis S::Elem, copy_dyn, "The products";
    max_axes max_axis S::Elem, copy_dyn, "The largest elements";
    min_axes min_axis S::Elem, copy_dyn, "The smallest elements";
    nanmax_axes nanmax_axis S::Elem, copy_dyn, "The largest elements that are not NaN";
    nanmin_axes nanmin_axis S::Elem, copy_dyn, "The smallest elements that are not NaN";
    any_axes any_axis Bool, truth, "Whether any element is nonzero";
    all_axes all_axis Bool, truth, "Whether every element is nonzero";
);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;

    #[test]
    fn axes_are_normalized_highest_first() {
        assert_eq!(normalize_axes(&[0, -1], 3).unwrap(), vec![2, 0]);
        assert_eq!(normalize_axes(&[-3, 1], 3).unwrap(), vec![1, 0]);
        assert_eq!(normalize_axes(&[], 2).unwrap(), Vec::<usize>::new());
        assert!(matches!(
            normalize_axes(&[3], 3),
            Err(Error::Shape(ArrayShapeError::AxisOutOfRange { axis: 3, axes: 3 }))
        ));
        assert!(matches!(
            normalize_axes(&[-4], 3),
            Err(Error::Shape(ArrayShapeError::AxisOutOfRange { axis: 4, axes: 3 }))
        ));
        assert!(matches!(
            normalize_axes(&[1, -2], 3),
            Err(Error::Shape(ArrayShapeError::DuplicateAxis { axis: -2 }))
        ));
        assert!(matches!(
            normalize_axes(&[0], 0),
            Err(Error::Shape(ArrayShapeError::AxisOutOfRange { .. }))
        ));
        assert_eq!(kept_shape(&[4, 5, 6], &[2, 0]), vec![1, 5, 1]);
    }
}
