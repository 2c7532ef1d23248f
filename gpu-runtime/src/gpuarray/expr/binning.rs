//! Values and bins: NumPy's `digitize`, the bin of each element among monotonic bins, through
//! `searchsorted` (falling bins searched reversed, the positions counted from the other end);
//! and `histogram(..., density=True)`'s normalization of a histogram by its bins' widths.

use ndarray::{s, Dimension, Ix1};

use crate::driver::stream::Stream;
use crate::error::{check_counts, ArrayShapeError, Result};
use crate::gpuarray::array::core::{DeviceArray, DeviceArrayBase, Storage};
use crate::gpuarray::array::on_stream::{on_legacy_stream, OnStream};
use crate::gpuarray::elements::boolean::Bool;
use crate::gpuarray::elements::element::Element;
use crate::gpuarray::expr::core::Expr;
use crate::gpuarray::sort::ops::Side;
use crate::gpuarray::sort::radix::key_of;

impl<S: Storage<Elem: Element>, D: Dimension> DeviceArrayBase<S, D> {
    on_legacy_stream! {
        /// NumPy's `digitize(x, bins, right)` of this array `x`: for rising `bins`, the `i` with
        /// `bins[i-1] <= x < bins[i]` (`bins[i-1] < x <= bins[i]` with `right`), for falling ones
        /// `bins[i-1] > x >= bins[i]` (`bins[i-1] >= x > bins[i]`); `0` below every bin and
        /// `bins.len()` above, as `i64`, of this array's shape. Bins that rise and fall are
        /// [`ArrayShapeError::BinsNotMonotonic`]; complex elements
        /// [`ArgumentError::UndefinedOnElement`](crate::error::ArgumentError::UndefinedOnElement),
        /// as NumPy refuses both. NaN sorts last, as in [`searchsorted`](Self::searchsorted). Waits
        /// for the bins' direction.
        fn digitize[SB: Storage<Elem = S::Elem>](&self, bins: &DeviceArrayBase<SB, Ix1>, right: bool)
            -> Result<DeviceArray<i64, D>>;
    }
}

impl<S: Storage<Elem: Element>, D: Dimension> OnStream<'_, &DeviceArrayBase<S, D>> {
    /// [`digitize`](DeviceArrayBase::digitize) on this stream.
    pub fn digitize<SB: Storage<Elem = S::Elem>>(
        &self,
        bins: &DeviceArrayBase<SB, Ix1>,
        right: bool,
    ) -> Result<DeviceArray<i64, D>> {
        // Complex elements have no order: refused as `searchsorted` refuses them, before the
        // bins' comparisons.
        key_of::<S::Elem>("DeviceArray::digitize")?;
        let side = if right { Side::Left } else { Side::Right };
        let n = bins.len();
        // NumPy's test: after any leading equal edges, the first step's direction holds
        // throughout; so bins rise unless one edge is below the one before it.
        let falls = n > 1 && {
            let (next, last) = (bins.slice(s![1..])?, bins.slice(s![..n - 1])?);
            let fell = any_on(self.stream, next.expr().lt(&last))?;
            if fell && any_on(self.stream, next.expr().gt(&last))? {
                return Err(ArrayShapeError::BinsNotMonotonic.into());
            }
            fell
        };
        if !falls {
            return OnStream::new(bins, self.stream).searchsorted(self.target, side);
        }
        let reversed = bins.slice(s![..;-1])?;
        let from_end = OnStream::new(&reversed, self.stream).searchsorted(self.target, side)?;
        let e = (n as i64) - &from_end;
        e.eval_stream(self.stream)?.into_dimensionality::<D>()
    }
}

/// Whether any element of `e` is true, evaluated and reduced on `stream`.
fn any_on(stream: Option<&Stream>, e: Expr<'_, Bool>) -> Result<bool> {
    let truth = e.eval_stream(stream)?;
    OnStream::new(&truth, stream).any()
}

/// A histogram as a probability density (NumPy's `histogram(..., density=True)`): each bin's
/// count or weight sum over the total and the bin's width, `hist / diff(edges) / hist.sum()`,
/// in `f64`, so that it integrates to 1 over the edges. `hist` and `edges` are what
/// [`histogram`](DeviceArrayBase::histogram) or
/// [`histogram_weighted`](DeviceArrayBase::histogram_weighted) return (`edges` one longer,
/// else [`ArrayShapeError::ElementCounts`]). A total of 0 gives NaN, as NumPy's. Waits for the
/// total.
pub fn histogram_density<SH, SE>(
    hist: &DeviceArrayBase<SH, Ix1>,
    edges: &DeviceArrayBase<SE, Ix1>,
) -> Result<DeviceArray<f64, Ix1>>
where
    SH: Storage<Elem: Element>,
    SE: Storage<Elem = f64>,
{
    check_counts("gpuarray::histogram_density", hist.len() + 1, edges.len())?;
    let h = hist.astype::<f64>()?;
    let total = h.sum()?;
    let widths = edges.diff(1, 0)?;
    (&h / &widths / total).eval()?.into_dimensionality::<Ix1>()
}
