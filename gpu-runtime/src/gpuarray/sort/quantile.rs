//! NumPy's `median`, `quantile` and `percentile` (and their `nan` forms): each lane sorted by
//! the radix sort ([`radix`](crate::gpuarray::sort::radix)), then one thread a lane picks or
//! interpolates (the kernel in [`source`](crate::gpuarray::sort::source)). Every form, one
//! number or a list of `q`, over all axes, one axis or several, goes through one body,
//! `quantiles_over`: the reduced axes are moved last (a copy unless they already are), each
//! lane sorted once, and one launch per `q` writes its slice of the result.

use ndarray::{Dimension, IxDyn};

use crate::error::{ArrayShapeError, Result};
use crate::gpuarray::array::core::{DeviceArray, DeviceArrayBase, Storage};
use crate::gpuarray::array::on_stream::{on_legacy_stream, OnStream};
use crate::gpuarray::elements::element::Element;
use crate::gpuarray::elements::mean_type::MeanType;
use crate::gpuarray::kernels::registry::{self, BLOCK};
use crate::gpuarray::sort::ops::normalize_axis;
use crate::gpuarray::sort::quantile_method::QuantileMethod;
use crate::gpuarray::sort::radix::{self, Indices};
use crate::gpuarray::sort::source;
use crate::launch::Arg;

/// What the quantile kernel computes of each sorted lane: NumPy's `median`, or a quantile by
/// a method.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Rule {
    Median,
    Method(QuantileMethod),
}

impl Rule {
    /// NumPy's default quantile.
    const LINEAR: Rule = Rule::Method(QuantileMethod::Linear);
}

/// The range the numbers given are checked against: fractions (`0..=1`, the quantiles) or
/// percents (`0..=100`).
#[derive(Debug, Clone, Copy)]
enum Scale {
    Fraction,
    Percent,
}

impl Scale {
    /// `q` as a fraction, checked against the range.
    fn check(self, operation: &'static str, q: f64) -> Result<f64> {
        let (scale, range) = match self {
            Scale::Fraction => (1.0, "0..=1"),
            Scale::Percent => (100.0, "0..=100"),
        };
        let f = q / scale;
        if !(0.0..=1.0).contains(&f) {
            return Err(ArrayShapeError::QuantileOutOfRange { operation, q, range }.into());
        }
        Ok(f)
    }
}

impl<S: Storage<Elem: MeanType>, D: Dimension> DeviceArrayBase<S, D> {
    on_legacy_stream! {
        /// The median of all elements (NumPy's `median(a)`): the middle element, or the mean of the
        /// two middle ones, in [`MeanType`]'s type (`f64` for integers); NaN when an element is
        /// NaN or the array is empty.
        fn median(&self) -> Result<<S::Elem as MeanType>::Mean>;

        /// The medians along `axis` (negative: from the end), an array without that axis.
        fn median_axis(&self, axis: isize)
            -> Result<DeviceArray<<S::Elem as MeanType>::Mean, IxDyn>>;

        /// The `q` quantile (`0..=1`) of all elements, NumPy's default `linear` method:
        /// `a[i] + (a[i+1] - a[i]) * f` at `i + f = q * (n - 1)` of the sorted elements; NaN when
        /// an element is NaN. Another `q` is [`ArrayShapeError::QuantileOutOfRange`].
        fn quantile(&self, q: f64) -> Result<<S::Elem as MeanType>::Mean>;

        /// The `q` quantiles along `axis`, an array without that axis.
        fn quantile_axis(&self, q: f64, axis: isize)
            -> Result<DeviceArray<<S::Elem as MeanType>::Mean, IxDyn>>;

        /// The `p` percentile (`0..=100`): [`quantile`](Self::quantile) of `p / 100`.
        fn percentile(&self, p: f64) -> Result<<S::Elem as MeanType>::Mean>;

        /// The `p` percentiles along `axis`.
        fn percentile_axis(&self, p: f64, axis: isize)
            -> Result<DeviceArray<<S::Elem as MeanType>::Mean, IxDyn>>;

        /// [`median`](Self::median) of the elements that are not NaN (NumPy's `nanmedian`); NaN
        /// when every element is (NumPy warns and gives NaN) or the array is empty.
        fn nanmedian(&self) -> Result<<S::Elem as MeanType>::Mean>;

        /// [`nanmedian`](Self::nanmedian) along `axis` (negative: from the end).
        fn nanmedian_axis(&self, axis: isize)
            -> Result<DeviceArray<<S::Elem as MeanType>::Mean, IxDyn>>;

        /// [`quantile`](Self::quantile) of the elements that are not NaN (NumPy's `nanquantile`).
        fn nanquantile(&self, q: f64) -> Result<<S::Elem as MeanType>::Mean>;

        /// [`nanquantile`](Self::nanquantile) along `axis`.
        fn nanquantile_axis(&self, q: f64, axis: isize)
            -> Result<DeviceArray<<S::Elem as MeanType>::Mean, IxDyn>>;

        /// [`percentile`](Self::percentile) of the elements that are not NaN (NumPy's
        /// `nanpercentile`).
        fn nanpercentile(&self, p: f64) -> Result<<S::Elem as MeanType>::Mean>;

        /// [`nanpercentile`](Self::nanpercentile) along `axis`.
        fn nanpercentile_axis(&self, p: f64, axis: isize)
            -> Result<DeviceArray<<S::Elem as MeanType>::Mean, IxDyn>>;

        /// [`quantile`](Self::quantile) by another of NumPy's methods (`quantile(a, q,
        /// method=...)`); the discrete ones give an element, in [`MeanType`]'s type.
        fn quantile_method(&self, q: f64, method: QuantileMethod) -> Result<<S::Elem as MeanType>::Mean>;

        /// [`quantile_axis`](Self::quantile_axis) by `method`.
        fn quantile_axis_method(&self, q: f64, axis: isize, method: QuantileMethod)
            -> Result<DeviceArray<<S::Elem as MeanType>::Mean, IxDyn>>;

        /// [`percentile`](Self::percentile) by `method`.
        fn percentile_method(&self, p: f64, method: QuantileMethod) -> Result<<S::Elem as MeanType>::Mean>;

        /// [`percentile_axis`](Self::percentile_axis) by `method`.
        fn percentile_axis_method(&self, p: f64, axis: isize, method: QuantileMethod)
            -> Result<DeviceArray<<S::Elem as MeanType>::Mean, IxDyn>>;

        /// [`nanquantile`](Self::nanquantile) by `method`.
        fn nanquantile_method(&self, q: f64, method: QuantileMethod) -> Result<<S::Elem as MeanType>::Mean>;

        /// [`nanquantile_axis`](Self::nanquantile_axis) by `method`.
        fn nanquantile_axis_method(&self, q: f64, axis: isize, method: QuantileMethod)
            -> Result<DeviceArray<<S::Elem as MeanType>::Mean, IxDyn>>;

        /// [`nanpercentile`](Self::nanpercentile) by `method`.
        fn nanpercentile_method(&self, p: f64, method: QuantileMethod) -> Result<<S::Elem as MeanType>::Mean>;

        /// [`nanpercentile_axis`](Self::nanpercentile_axis) by `method`.
        fn nanpercentile_axis_method(&self, p: f64, axis: isize, method: QuantileMethod)
            -> Result<DeviceArray<<S::Elem as MeanType>::Mean, IxDyn>>;

        /// The quantiles `q` (each `0..=1`) over `axes` by `method`: NumPy's `quantile(a, q,
        /// axis, method=, keepdims=)` with `q` a list. `None` reduces every axis (NumPy's
        /// `axis=None`), a list those axes (negative: from the end; each once, else
        /// [`ArrayShapeError::DuplicateAxis`]). The result has a leading axis of `q.len()`, then
        /// the axes not reduced, or with `keepdims` every axis, the reduced ones of length 1:
        /// `a.quantile_axes(&[0.25, 0.75], Some(&[0, 2]), false, QuantileMethod::Linear)` of a
        /// `[4, 5, 6]` array is `[2, 5]`. Each lane is sorted once for all of `q`.
        fn quantile_axes(&self, q: &[f64], axes: Option<&[isize]>, keepdims: bool, method: QuantileMethod)
            -> Result<DeviceArray<<S::Elem as MeanType>::Mean, IxDyn>>;

        /// [`quantile_axes`](Self::quantile_axes) of percentiles `p` (each `0..=100`; NumPy's
        /// `percentile(a, p, axis, method=, keepdims=)`).
        fn percentile_axes(&self, p: &[f64], axes: Option<&[isize]>, keepdims: bool, method: QuantileMethod)
            -> Result<DeviceArray<<S::Elem as MeanType>::Mean, IxDyn>>;

        /// [`quantile_axes`](Self::quantile_axes) of the elements that are not NaN (NumPy's
        /// `nanquantile`).
        fn nanquantile_axes(&self, q: &[f64], axes: Option<&[isize]>, keepdims: bool, method: QuantileMethod)
            -> Result<DeviceArray<<S::Elem as MeanType>::Mean, IxDyn>>;

        /// [`percentile_axes`](Self::percentile_axes) of the elements that are not NaN (NumPy's
        /// `nanpercentile`).
        fn nanpercentile_axes(&self, p: &[f64], axes: Option<&[isize]>, keepdims: bool, method: QuantileMethod)
            -> Result<DeviceArray<<S::Elem as MeanType>::Mean, IxDyn>>;

        /// The medians over `axes` (NumPy's `median(a, axis, keepdims=)`): `None` every axis, a
        /// list those axes, as [`quantile_axes`](Self::quantile_axes) but with no axis for `q`.
        fn median_axes(&self, axes: Option<&[isize]>, keepdims: bool)
            -> Result<DeviceArray<<S::Elem as MeanType>::Mean, IxDyn>>;

        /// [`median_axes`](Self::median_axes) of the elements that are not NaN (NumPy's
        /// `nanmedian(a, axis, keepdims=)`).
        fn nanmedian_axes(&self, axes: Option<&[isize]>, keepdims: bool)
            -> Result<DeviceArray<<S::Elem as MeanType>::Mean, IxDyn>>;
    }
}

/// The result of a form of one value: the `Mean` type of the elements of `S`.
type Mean<S> = <<S as Storage>::Elem as MeanType>::Mean;

/// The result of the forms along axes.
type Means<S> = DeviceArray<Mean<S>, IxDyn>;

/// A quantile `q` (`0..=1`) to check.
fn frac(q: f64) -> Option<(f64, Scale)> {
    Some((q, Scale::Fraction))
}

/// A percentile `p` (`0..=100`) to check.
fn pct(p: f64) -> Option<(f64, Scale)> {
    Some((p, Scale::Percent))
}

/// The stream forms of the medians and quantiles, a pair a line: `fn name / nan_name(args) ->
/// result: body(arguments)` defines `pub fn name(&self, args) -> Result<result>` as
/// `self.body("DeviceArray::name", false, arguments)`, and `nan_name` alike with `true` (NaN
/// skipped) (the forms of one number over every axis wait for the value, as their plain forms
/// say).
macro_rules! quantile_forms {
    ($(fn $name:ident / $nan:ident($($arg:ident: $ty:ty),*) -> $ret:ty: $body:ident($($call:expr),*);)*) => {$(
        quantile_forms!(@form $name, false, ($($arg: $ty),*), $ret, $body($($call),*));
        quantile_forms!(@form $nan, true, ($($arg: $ty),*), $ret, $body($($call),*));
    )*};
    (@form $name:ident, $skip_nan:literal, ($($arg:ident: $ty:ty),*), $ret:ty, $body:ident($($call:expr),*)) => {
        #[doc = concat!("[`", stringify!($name), "`](DeviceArrayBase::", stringify!($name), ") on this stream.")]
        pub fn $name(&self, $($arg: $ty),*) -> Result<$ret> {
            self.$body(concat!("DeviceArray::", stringify!($name)), $skip_nan, $($call),*)
        }
    };
}

/// The medians and quantiles on a stream (`a.on(&stream).quantile(0.9)`): each one line over
/// `one` (one value over every axis), `one_over` (one `q` over some axes) or `listed` (a list
/// of `q`), all three over `quantiles_over`.
impl<S: Storage<Elem: MeanType>, D: Dimension> OnStream<'_, &DeviceArrayBase<S, D>> {
    quantile_forms! {
        fn median / nanmedian() -> Mean<S>: one(None, Rule::Median);
        fn median_axis / nanmedian_axis(axis: isize) -> Means<S>:
            one_over(None, Rule::Median, Some(&[axis]), false);
        fn quantile / nanquantile(q: f64) -> Mean<S>: one(frac(q), Rule::LINEAR);
        fn quantile_axis / nanquantile_axis(q: f64, axis: isize) -> Means<S>:
            one_over(frac(q), Rule::LINEAR, Some(&[axis]), false);
        fn percentile / nanpercentile(p: f64) -> Mean<S>: one(pct(p), Rule::LINEAR);
        fn percentile_axis / nanpercentile_axis(p: f64, axis: isize) -> Means<S>:
            one_over(pct(p), Rule::LINEAR, Some(&[axis]), false);
        fn quantile_method / nanquantile_method(q: f64, method: QuantileMethod) -> Mean<S>:
            one(frac(q), Rule::Method(method));
        fn quantile_axis_method / nanquantile_axis_method(q: f64, axis: isize, method: QuantileMethod)
            -> Means<S>: one_over(frac(q), Rule::Method(method), Some(&[axis]), false);
        fn percentile_method / nanpercentile_method(p: f64, method: QuantileMethod) -> Mean<S>:
            one(pct(p), Rule::Method(method));
        fn percentile_axis_method / nanpercentile_axis_method(p: f64, axis: isize, method: QuantileMethod)
            -> Means<S>: one_over(pct(p), Rule::Method(method), Some(&[axis]), false);
        fn quantile_axes / nanquantile_axes(q: &[f64], axes: Option<&[isize]>, keepdims: bool,
            method: QuantileMethod) -> Means<S>:
            listed((q, Scale::Fraction), Rule::Method(method), axes, keepdims);
        fn percentile_axes / nanpercentile_axes(p: &[f64], axes: Option<&[isize]>, keepdims: bool,
            method: QuantileMethod) -> Means<S>:
            listed((p, Scale::Percent), Rule::Method(method), axes, keepdims);
        fn median_axes / nanmedian_axes(axes: Option<&[isize]>, keepdims: bool) -> Means<S>:
            one_over(None, Rule::Median, axes, keepdims);
    }

    fn one(
        &self,
        op: &'static str,
        skip_nan: bool,
        q: Option<(f64, Scale)>,
        rule: Rule,
    ) -> Result<<S::Elem as MeanType>::Mean> {
        let r = self.one_over(op, skip_nan, q, rule, None, false)?;
        r.to_vec().map(|v| v[0])
    }

    /// One quantile (`q` on its scale, or `None` for the median) over `axes`:
    /// `quantiles_over` without the axis of the list.
    fn one_over(
        &self,
        op: &'static str,
        skip_nan: bool,
        q: Option<(f64, Scale)>,
        rule: Rule,
        axes: Option<&[isize]>,
        keepdims: bool,
    ) -> Result<Means<S>> {
        // The kernel does not read the median's `q`.
        let q = match q {
            Some((q, scale)) => scale.check(op, q)?,
            None => 0.5,
        };
        let r = self.quantiles_over(op, &[q], rule, skip_nan, axes, keepdims)?;
        let shape = r.shape()[1..].to_vec();
        r.reshape(IxDyn(&shape))
    }

    /// A list of quantiles (each checked against its scale) over `axes`.
    fn listed(
        &self,
        op: &'static str,
        skip_nan: bool,
        (qs, scale): (&[f64], Scale),
        rule: Rule,
        axes: Option<&[isize]>,
        keepdims: bool,
    ) -> Result<Means<S>> {
        let qs = qs
            .iter()
            .map(|&q| scale.check(op, q))
            .collect::<Result<Vec<f64>>>()?;
        self.quantiles_over(op, &qs, rule, skip_nan, axes, keepdims)
    }

    /// The one body: the quantiles `qs` (fractions, checked) over `axes` (`None`: all, else
    /// each checked and given once), in an array of a leading axis of `qs.len()`, then the
    /// axes not reduced (or all of them, the reduced ones of length 1, for `keepdims`). NaN
    /// where a lane is empty (or, with `skip_nan`, all NaN).
    fn quantiles_over(
        &self,
        op: &'static str,
        qs: &[f64],
        rule: Rule,
        skip_nan: bool,
        axes: Option<&[isize]>,
        keepdims: bool,
    ) -> Result<Means<S>> {
        let x = self.target;
        let ctx = x.context();
        let key = radix::key_of::<S::Elem>(op)?;
        let shape = x.shape().to_vec();
        let nd = shape.len();
        let reduced = match axes {
            None => (0..nd).collect(),
            Some(list) => reduced_axes(op, list, nd)?,
        };
        let kept: Vec<usize> = (0..nd).filter(|k| !reduced.contains(k)).collect();
        // A lane: the elements of the reduced axes, in C order of those axes.
        let m: usize = reduced.iter().map(|&k| shape[k]).product();
        let rows: usize = kept.iter().map(|&k| shape[k]).product();
        let mut out_shape = vec![qs.len()];
        if keepdims {
            out_shape.extend((0..nd).map(|k| if reduced.contains(&k) { 1 } else { shape[k] }));
        } else {
            out_shape.extend(kept.iter().map(|&k| shape[k]));
        }
        let mut out = DeviceArray::<f64, IxDyn>::empty(ctx, IxDyn(&out_shape))?;
        if rows > 0 && !qs.is_empty() {
            let order: Vec<usize> = kept.iter().chain(&reduced).copied().collect();
            let moved = x.view().into_dyn().permuted_axes(&order)?;
            let copy = if moved.is_standard_layout() {
                None
            } else {
                Some(OnStream::new(&moved, self.stream).to_contiguous()?)
            };
            let src = match &copy {
                Some(c) => c.view(),
                None => moved,
            };
            let pool = ctx.device_pool()?;
            let mut sorted = pool.alloc::<S::Elem>(src.len().max(1))?;
            radix::sort_rows::<S::Elem, _, _>(
                ctx,
                self.stream,
                (src.storage(), src.offset() as i64),
                src.len(),
                m,
                Some(&mut sorted),
                Indices::None,
                op,
            )?;
            let dtype = S::Elem::DTYPE;
            let f = radix::kernel(ctx, "gpu_quantile", &["gpu_quantile", dtype.c_name()], 0, || {
                source::quantile_source(key, dtype)
            })?;
            let grid = registry::grid_for(ctx, rows as u64)?;
            let (median, method) = match rule {
                Rule::Median => (1, 0),
                Rule::Method(m) => (0, m as i32),
            };
            // One launch per `q`, each writing its `rows` values after the ones before.
            for (i, &q) in qs.iter().enumerate() {
                registry::launch(
                    &f,
                    grid,
                    BLOCK,
                    self.stream,
                    &[
                        Arg::input::<S::Elem, _>(&sorted),
                        Arg::output::<f64, _>(&mut out.data),
                        Arg::I64((i * rows) as i64),
                        Arg::I64(rows as i64),
                        Arg::I64(m as i64),
                        Arg::F64(q),
                        Arg::I32(median),
                        Arg::I32(skip_nan as i32),
                        Arg::I32(method),
                    ],
                )?;
            }
        }
        OnStream::new(&out, self.stream).astype::<<S::Elem as MeanType>::Mean>()
    }
}

/// `axes` as axes of an array of `ndim` axes, in increasing order: negative ones counted from
/// the end, each checked to be in range and given once.
fn reduced_axes(op: &'static str, axes: &[isize], ndim: usize) -> Result<Vec<usize>> {
    let mut out = Vec::with_capacity(axes.len());
    for &a in axes {
        let k = normalize_axis(op, a, ndim)?;
        if out.contains(&k) {
            return Err(ArrayShapeError::DuplicateAxis { axis: a }.into());
        }
        out.push(k);
    }
    out.sort_unstable();
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_checked_against_their_range_and_axes_once_each() {
        assert!(Scale::Percent.check("t", 101.0).is_err());
        assert!(Scale::Fraction.check("t", f64::NAN).is_err());
        assert!(Scale::Fraction.check("t", -0.1).is_err());
        assert_eq!(Scale::Percent.check("t", 50.0).unwrap(), 0.5);
        assert_eq!(Scale::Fraction.check("t", 1.0).unwrap(), 1.0);
        assert_eq!(reduced_axes("t", &[-1, 0], 3).unwrap(), vec![0, 2]);
        assert!(reduced_axes("t", &[1, -2], 3).is_err());
        assert!(reduced_axes("t", &[3], 3).is_err());
        assert!(reduced_axes("t", &[0], 0).is_err());
        assert_eq!(reduced_axes("t", &[], 2).unwrap(), Vec::<usize>::new());
    }
}
