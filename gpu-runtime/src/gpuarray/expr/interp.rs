//! NumPy's `interp`: the piecewise-linear interpolant of the points `(xp, fp)` at `x`, in
//! `f64` as NumPy computes it. Each `x` finds its interval by a binary search (`searchsorted`),
//! the interval's ends are gathered, and one fused kernel writes NumPy's formula with its
//! special cases (an `x` on a point gives that point's value; a non-finite slope tries the
//! other end; outside the points, `left` and `right`).

use ndarray::{Array1, Dimension, Ix1};

use crate::error::{counts_error, Result};
use crate::gpuarray::array::core::{DeviceArray, DeviceArrayBase, Storage};
use crate::gpuarray::array::on_stream::{context_fns, OnStream};
use crate::gpuarray::copy::gather::IndexMode;
use crate::gpuarray::elements::element::Element;
use crate::gpuarray::expr::core::Expr;
use crate::gpuarray::sort::ops::Side;

const OP: &str = "interp";

context_fns! {
    /// The values at `x` of the line through the points `(xp[i], fp[i])` (NumPy's `interp(x,
    /// xp, fp, left, right)`): `xp` must increase (not checked, as NumPy does not), `fp` be as
    /// long; below `xp[0]` the value is `left` (default `fp[0]`), above the last point `right`
    /// (default the last `fp`); NaN gives NaN. Computed in `f64`, as NumPy's, into an array of
    /// `x`'s shape. No points, or `fp` of another length, is
    /// [`ArrayShapeError::ElementCounts`](crate::error::ArrayShapeError::ElementCounts). Reads the
    /// first and last points back to the host.
    ///
    /// ```no_run
    /// use gpu_runtime::gpuarray::{self, DeviceArray};
    /// use gpu_runtime::ndarray::arr1;
    /// let ctx = gpu_runtime::Context::default()?;
    /// let xp = DeviceArray::from_ndarray(&ctx, &arr1(&[1.0, 2.0, 3.0]))?;
    /// let fp = DeviceArray::from_ndarray(&ctx, &arr1(&[3.0, 2.0, 0.0]))?;
    /// let x = DeviceArray::from_ndarray(&ctx, &arr1(&[0.0, 1.0, 1.5, 2.5, 3.25]))?;
    /// let y = gpuarray::interp(&x, &xp, &fp, None, None)?;
    /// assert_eq!(y.to_vec()?, [3.0, 3.0, 2.5, 1.0, 0.0]);
    /// # Ok::<(), gpu_runtime::Error>(())
    /// ```
    fn interp[
        T: Element, S1: Storage<Elem = T>, D: Dimension, S2: Storage<Elem = T>,
        S3: Storage<Elem = T>
    ](
        &self, x: &DeviceArrayBase<S1, D>, xp: &DeviceArrayBase<S2, Ix1>,
        fp: &DeviceArrayBase<S3, Ix1>, left: Option<f64>, right: Option<f64>
    ) -> Result<DeviceArray<f64, D>> {
        let n = xp.len();
        if n == 0 || fp.len() != n {
            return Err(counts_error(OP, n, fp.len()));
        }
        let s = self.stream;
        let as_f64 = |e: Expr<'_, T>| e.cast::<f64>().eval_stream(s);
        let x = as_f64(x.expr())?;
        let xp = as_f64(xp.expr())?;
        let fp = as_f64(fp.expr())?;
        let ends = |a: &DeviceArray<f64, _>| -> Result<(f64, f64)> {
            let v = OnStream::new(a, s).take(
                &DeviceArray::from_ndarray(a.context(), &Array1::from(vec![0i64, n as i64 - 1]))?,
                0,
                IndexMode::Clip,
            )?;
            let v = v.to_vec()?;
            Ok((v[0], v[1]))
        };
        let (x_first, x_last) = ends(&xp)?;
        let (f_first, f_last) = ends(&fp)?;
        let xp1 = xp.view().reshape(n)?;
        // The interval [xp[j], xp[j + 1]] of each x (clamped to the first and last).
        let after = OnStream::new(&xp1, s).searchsorted(&x, Side::Right)?;
        let last_start = n.saturating_sub(2) as i64;
        let j = (after.expr() - 1i64).clip(0i64, last_start).eval_stream(s)?;
        let j1 = (j.expr() + i64::from(n > 1)).eval_stream(s)?;
        let take = |a: &DeviceArray<f64, _>, at: &DeviceArray<i64, _>| {
            OnStream::new(a, s).take(at, 0, IndexMode::Clip)
        };
        let (x0, x1, y0, y1) = (take(&xp, &j)?, take(&xp, &j1)?, take(&fp, &j)?, take(&fp, &j1)?);
        // NumPy's loop: the slope's line from the left end; where that is NaN, from the right
        // end; where that is NaN too and the ends agree, their value; an x on the left end
        // takes its value exactly. In three kernels, each within a launch's parameters.
        let slope = ((&y1 - &y0) / (&x1 - &x0)).eval_stream(s)?;
        let from_left = (slope.expr() * (&x - &x0) + &y0).eval_stream(s)?;
        let from_right = (slope.expr() * (&x - &x1) + &y1).eval_stream(s)?;
        let right_or_flat = Expr::where_(
            from_right.expr().isnan().logical_and(y0.expr().eq(&y1)),
            &y0,
            &from_right,
        );
        let inside = Expr::where_(from_left.expr().isnan(), right_or_flat, &from_left);
        let inside = Expr::where_(x.expr().eq(&x0), &y0, inside);
        // NaN first, as NumPy's loop: with one point, or equal ends, the fallbacks above
        // would give the point's value for it.
        let value = Expr::where_(
            x.expr().isnan(),
            &x,
            Expr::where_(
                x.expr().lt(x_first),
                left.unwrap_or(f_first),
                Expr::where_(
                    x.expr().gt(x_last),
                    right.unwrap_or(f_last),
                    Expr::where_(x.expr().eq(x_last), f_last, inside),
                ),
            ),
        );
        value.eval_stream(s)?.into_dimensionality()
    }
}
