//! Histograms of several variables: NumPy's `histogramdd(sample, bins, range, density,
//! weights)` and `histogram2d(x, y, ...)`, written as NumPy writes them over the lower rooms:
//! each variable's bin by `searchsorted` of its edges (a value on the last edge counted in the
//! last bin), the bins' flat index, one `bincount` over it with a bin of outliers at each end
//! of each axis, and the core of that count cut out.

use ndarray::{Dimension, Ix1, Ix2, IxDyn, SliceInfoElem};

use crate::driver::stream::Stream;
use crate::error::{check_counts, counts_error, ArrayShapeError, Result};
use crate::gpuarray::array::core::{DeviceArray, DeviceArrayBase, DeviceArrayView, Storage};
use crate::gpuarray::array::layout::checked_size;
use crate::gpuarray::array::on_stream::{context_fns, OnStream};
use crate::gpuarray::elements::dtype::DType;
use crate::gpuarray::elements::element::Element;
use crate::gpuarray::expr::core::{empty_error, undefined_error, Expr};
use crate::gpuarray::reduce::histogram::{check_edges, uniform_edges, Bins};
use crate::gpuarray::sort::ops::Side;

/// A multidimensional histogram: the counts (or sums of weights, or densities) by bin, `f64`,
/// one axis per variable, and each variable's edges.
pub type HistogramDd = (DeviceArray<f64, IxDyn>, Vec<DeviceArray<f64, Ix1>>);

context_fns! {
    /// The histogram of `sample`'s `D` variables (NumPy's `histogramdd(sample, bins, range=,
    /// density=)`): `sample` is `(N, D)`, one row per point (a 1-d array is `D = 1`); `bins` has
    /// one [`Bins`] per variable, or one for all of them (NumPy's `bins=int`); a `range` is
    /// [`Bins::Count`]'s. The result has one axis per variable, of its bins' count, and holds
    /// `f64` counts as NumPy's (with `density`, counts over the total and each bin's volume, as
    /// [`histogram_density`](crate::gpuarray::histogram_density) in one variable); with it the
    /// edges of each variable (equal bins over the range given in `f64`, or over the variable's
    /// minimum and maximum rounded as NumPy's `linspace` of the data's type rounds them). Points
    /// outside the edges, and NaN, are not counted; each last bin includes its right edge.
    /// Numbers are compared as `f64`. Errors: more than two axes is
    /// [`ArrayShapeError::TooManyAxes`]; a count of `bins` other than 1 or `D`
    /// [`ArrayShapeError::ElementCounts`]; no bins, or a range that is not finite and rising,
    /// [`ArrayShapeError::HistogramRange`]; edges out of order [`ArrayShapeError::HistogramEdges`];
    /// complex points
    /// [`ArgumentError::UndefinedOnElement`](crate::error::ArgumentError::UndefinedOnElement).
    /// Waits for each variable's minimum and maximum when its range is not given, and for the total
    /// with `density`.
    ///
    /// ```no_run
    /// use gpu_runtime::gpuarray::{self, Bins, DeviceArray};
    /// use gpu_runtime::ndarray::arr2;
    /// let ctx = gpu_runtime::Context::default()?;
    /// let points = DeviceArray::from_ndarray(&ctx, &arr2(&[[0.0f64, 0.0], [1.0, 0.5], [1.0, 1.0]]))?;
    /// let bins = Bins::Count { bins: 2, range: Some((0.0, 1.0)) };
    /// let (hist, edges) = gpuarray::histogramdd(&points, &[bins], false)?;
    /// assert_eq!(hist.to_vec()?, [1.0, 0.0, 0.0, 2.0]);
    /// assert_eq!(edges[1].to_vec()?, [0.0, 0.5, 1.0]);
    /// # Ok::<(), gpu_runtime::Error>(())
    /// ```
    fn histogramdd[S: Storage<Elem: Element>, D: Dimension](
        &self, sample: &DeviceArrayBase<S, D>, bins: &[Bins<'_>], density: bool
    ) -> Result<HistogramDd> {
        unweighted(&columns_of(sample)?, bins, density, self.stream)
    }

    /// [`histogramdd`] with a weight per point (NumPy's `weights=`, `(N,)`, any real type, summed
    /// in `f64`; another length is [`ArrayShapeError::ElementCounts`], complex weights
    /// [`ArgumentError::UndefinedOnElement`](crate::error::ArgumentError::UndefinedOnElement)).
    fn histogramdd_weighted[
        S: Storage<Elem: Element>, D: Dimension, SW: Storage<Elem: Element>, DW: Dimension
    ](
        &self, sample: &DeviceArrayBase<S, D>, bins: &[Bins<'_>], weights: &DeviceArrayBase<SW, DW>,
        density: bool
    ) -> Result<HistogramDd> {
        let columns = columns_of(sample)?;
        dd::<S::Elem, SW::Elem, _>(&columns, bins, Some(weights), density, self.stream)
    }

    /// The histogram of the points `(x[i], y[i])` (NumPy's `histogram2d(x, y, bins, range=,
    /// density=)`): [`histogramdd`] of the two variables, `x` along the result's first axis; the
    /// counts and the edges of `x` and of `y`.
    fn histogram2d[
        S: Storage<Elem: Element>, D: Dimension, SY: Storage<Elem = S::Elem>, DY: Dimension
    ](
        &self, x: &DeviceArrayBase<S, D>, y: &DeviceArrayBase<SY, DY>, bins: [Bins<'_>; 2],
        density: bool
    ) -> Result<Histogram2d> {
        two(unweighted(&pair(x, y)?, &bins, density, self.stream)?)
    }

    /// [`histogram2d`] with a weight per point, as [`histogramdd_weighted`].
    fn histogram2d_weighted[
        S: Storage<Elem: Element>, D: Dimension, SY: Storage<Elem = S::Elem>, DY: Dimension,
        SW: Storage<Elem: Element>, DW: Dimension
    ](
        &self, x: &DeviceArrayBase<S, D>, y: &DeviceArrayBase<SY, DY>, bins: [Bins<'_>; 2],
        weights: &DeviceArrayBase<SW, DW>, density: bool
    ) -> Result<Histogram2d> {
        let columns = pair(x, y)?;
        two(dd::<S::Elem, SW::Elem, _>(&columns, &bins, Some(weights), density, self.stream)?)
    }
}

/// A histogram of two variables: the counts (`x`'s bins along the first axis), `x`'s edges and
/// `y`'s.
pub type Histogram2d = (
    DeviceArray<f64, Ix2>,
    DeviceArray<f64, Ix1>,
    DeviceArray<f64, Ix1>,
);

/// The variables of a sample `(N, D)` (or `(N,)`: one), each a view of `N` points.
fn columns_of<S: Storage<Elem: Element>, D: Dimension>(
    sample: &DeviceArrayBase<S, D>,
) -> Result<Vec<DeviceArrayView<'_, S::Elem, Ix1>>> {
    match sample.ndim() {
        1 => Ok(vec![sample.view().into_dimensionality::<Ix1>()?]),
        2 => (0..sample.shape()[1])
            .map(|i| {
                let column = [SliceInfoElem::from(..), SliceInfoElem::Index(i as isize)];
                sample
                    .view()
                    .into_dyn()
                    .slice_move(column.as_slice())?
                    .into_dimensionality::<Ix1>()
            })
            .collect(),
        axes => Err(ArrayShapeError::TooManyAxes {
            operation: "histogramdd",
            axes,
            most: 2,
        }
        .into()),
    }
}

/// `x` and `y` as the two variables of [`histogram2d`]: 1-d, of one length.
fn pair<'v, T: Element, S, D, SY, DY>(
    x: &'v DeviceArrayBase<S, D>,
    y: &'v DeviceArrayBase<SY, DY>,
) -> Result<Vec<DeviceArrayView<'v, T, Ix1>>>
where
    S: Storage<Elem = T>,
    D: Dimension,
    SY: Storage<Elem = T>,
    DY: Dimension,
{
    let x = x.view().into_dimensionality::<Ix1>()?;
    let y = y.view().into_dimensionality::<Ix1>()?;
    check_counts("histogram2d", x.len(), y.len())?;
    Ok(vec![x, y])
}

/// [`histogramdd`]'s result of two variables as [`histogram2d`]'s.
fn two((hist, mut edges): HistogramDd) -> Result<Histogram2d> {
    let internal = |broken| crate::error::Error::Internal {
        operation: "histogram2d",
        broken,
    };
    let y_edges = edges.pop().ok_or_else(|| internal("the edges of y"))?;
    let x_edges = edges.pop().ok_or_else(|| internal("the edges of x"))?;
    Ok((hist.into_dimensionality::<Ix2>()?, x_edges, y_edges))
}

/// [`dd`] without weights.
fn unweighted<T: Element>(
    columns: &[DeviceArrayView<'_, T, Ix1>],
    bins: &[Bins<'_>],
    density: bool,
    stream: Option<&Stream>,
) -> Result<HistogramDd> {
    dd::<T, f64, _>(columns, bins, None::<&DeviceArray<f64, Ix1>>, density, stream)
}

/// NumPy's `histogramdd` of the variables `columns` (each `N` points of `T`).
fn dd<T: Element, W: Element, SW: Storage<Elem = W>>(
    columns: &[DeviceArrayView<'_, T, Ix1>],
    bins: &[Bins<'_>],
    weights: Option<&DeviceArrayBase<SW, impl Dimension>>,
    density: bool,
    stream: Option<&Stream>,
) -> Result<HistogramDd> {
    const OP: &str = "histogramdd";
    if T::DTYPE.is_complex() {
        return Err(undefined_error(OP, OP, T::c_name()));
    }
    let Some(first) = columns.first() else {
        return Err(empty_error(OP, "sample"));
    };
    let (ctx, n, d) = (first.context().clone(), first.len(), columns.len());
    if bins.len() != 1 && bins.len() != d {
        return Err(counts_error(OP, d, bins.len()));
    }
    if let Some(w) = weights {
        if w.len() != n || w.ndim() != 1 {
            return Err(counts_error(OP, n, w.len()));
        }
    }
    // Each variable as `f64` (exact for the floats; NumPy's `searchsorted` converts integers to
    // the `float64` of the edges too), its edges, and its bins with the two of outliers.
    let mut values = Vec::with_capacity(d);
    let mut edges = Vec::with_capacity(d);
    let mut edge_types = Vec::with_capacity(d);
    for (i, column) in columns.iter().enumerate() {
        let v = OnStream::new(column, stream).astype::<f64>()?;
        let (e, edge_type) = edges_of(&v, T::DTYPE, bins[if bins.len() == 1 { 0 } else { i }], stream)?;
        values.push(v);
        edges.push(e);
        edge_types.push(edge_type);
    }
    let nbin: Vec<usize> = edges.iter().map(|e| e.len() + 1).collect();
    let total = checked_size(OP, &nbin)?;
    // The flat index of each point's bin (C order over `nbin`), a variable at a time.
    let mut flat = DeviceArray::<i64, Ix1>::zeros(&ctx, n)?;
    let mut stride = total;
    for ((v, e), &nb) in values.iter().zip(&edges).zip(&nbin) {
        stride /= nb;
        let e_d = DeviceArray::from_ndarray(&ctx, &ndarray::Array1::from_vec(e.clone()))?;
        let at = OnStream::new(&e_d, stream).searchsorted(v, Side::Right)?;
        let last = e[e.len() - 1];
        // A point on the last edge belongs to the last bin, not the outliers past it.
        let bin = Expr::where_(v.expr().eq(last), at.expr() - 1i64, &at);
        let sum = (&flat + bin * stride as i64).eval_stream(stream)?;
        flat = sum.into_dimensionality::<Ix1>()?;
    }
    let counts = match weights {
        None => {
            let c = OnStream::new(&flat, stream).bincount(total)?;
            OnStream::new(&c, stream).astype::<f64>()?
        }
        Some(w) => OnStream::new(&flat, stream).bincount_weighted(w, total)?,
    };
    // The core: each axis without its two bins of outliers.
    let full = counts.reshape(IxDyn(&nbin))?;
    let core: Vec<SliceInfoElem> = nbin
        .iter()
        .map(|&nb| SliceInfoElem::from(1..nb as isize - 1))
        .collect();
    let mut hist = OnStream::new(&full.slice(core.as_slice())?, stream).copy()?;
    if density {
        let sum = OnStream::new(&hist, stream).sum()?;
        for (i, (e, &edge_type)) in edges.iter().zip(&edge_types).enumerate() {
            // NumPy's `diff` of the edges, in their type.
            let widths: Vec<f64> = e.windows(2).map(|w| round_to(edge_type, w[1] - w[0])).collect();
            let mut shape = vec![1; d];
            shape[i] = widths.len();
            let w_d = DeviceArray::from_ndarray(&ctx, &ndarray::Array1::from_vec(widths))?
                .reshape(IxDyn(&shape))?;
            hist = (&hist / &w_d).eval_stream(stream)?;
        }
        hist = (&hist / sum).eval_stream(stream)?;
    }
    let edges = edges
        .into_iter()
        .map(|e| DeviceArray::from_ndarray(&ctx, &ndarray::Array1::from_vec(e)))
        .collect::<Result<Vec<_>>>()?;
    Ok((hist, edges))
}

/// `v` rounded to the float type `t` (itself for other types).
fn round_to(t: DType, v: f64) -> f64 {
    match t {
        DType::F32 => v as f32 as f64,
        DType::F16 => half::f16::from_f64(v).to_f64(),
        DType::Bf16 => half::bf16::from_f64(v).to_f64(),
        _ => v,
    }
}

/// The edges of one variable `v` (the points of type `t` as `f64`), as NumPy's `histogramdd`
/// makes them, and their type: given ones checked (`f64`); equal bins over a given range in
/// `f64`, or over the variable's minimum and maximum in its own type (widened by 0.5 each way
/// when equal; an integer type's in `f64`).
fn edges_of(
    v: &DeviceArray<f64, Ix1>,
    t: DType,
    bins: Bins<'_>,
    stream: Option<&Stream>,
) -> Result<(Vec<f64>, DType)> {
    match bins {
        Bins::Edges(e) => {
            check_edges(e)?;
            Ok((e.to_vec(), DType::F64))
        }
        Bins::Count { bins, range } => {
            let (lo, hi) = match range {
                Some(r) => r,
                None if v.is_empty() => (0.0, 1.0),
                None => {
                    let on = OnStream::new(v, stream);
                    (on.min()?, on.max()?)
                }
            };
            if bins == 0 || lo > hi || !lo.is_finite() || !hi.is_finite() {
                return Err(ArrayShapeError::HistogramRange {
                    bins,
                    low: lo,
                    high: hi,
                }
                .into());
            }
            // NumPy's `linspace` of `float64` ends for a given range (and `0, 1` of no
            // points), of the data's type else.
            let (t, in_data_type) = if range.is_some() || v.is_empty() {
                (DType::F64, false)
            } else {
                (t, true)
            };
            let (lo, hi) = if lo == hi {
                let r = |x: f64| uniform_edges(x, x, 1, t, in_data_type)[0];
                (r(lo - 0.5), r(hi + 0.5))
            } else {
                (lo, hi)
            };
            let edge_type = match t {
                DType::F32 | DType::F16 | DType::Bf16 => t,
                _ => DType::F64,
            };
            Ok((uniform_edges(lo, hi, bins, t, in_data_type), edge_type))
        }
    }
}
