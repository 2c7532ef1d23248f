//! NumPy's `gradient`: the derivative of sampled values along an axis by second-order
//! central differences inside, and one-sided differences of first or second order at the two
//! ends, written term for term as NumPy's `gradient` writes them (so the rounding is NumPy's):
//! one fused kernel for the inside and one for each end, over views of the samples (and of
//! the sample points' spacing, when they are given).

use ndarray::{Dimension, Ix1, IxDyn};

use crate::driver::stream::Stream;
use crate::error::{counts_error, ArrayShapeError, Result};
use crate::gpuarray::array::axes::{normalize_axis, slice_along};
use crate::gpuarray::array::core::{DeviceArray, DeviceArrayBase, DeviceArrayView, Storage};
use crate::gpuarray::array::on_stream::{on_legacy_stream, OnStream};
use crate::gpuarray::elements::element::Element;
use crate::gpuarray::elements::inexact::Inexact;
use crate::gpuarray::elements::promotion::TrueDivide;
use crate::gpuarray::expr::core::Expr;

const OP: &str = "DeviceArray::gradient";

/// The type a gradient of `E` is returned in.
type Grad<E> = <E as TrueDivide>::Quotient;

impl<S: Storage<Elem: TrueDivide<Quotient: Inexact>>, D: Dimension> DeviceArrayBase<S, D> {
    on_legacy_stream! {
        /// The derivative along `axis` (negative: from the end) of samples spaced `dx` apart
        /// (NumPy's `gradient(f, dx, axis=axis, edge_order=edge_order)`): central differences
        /// `(f[i+1] - f[i-1]) / 2dx` inside, one-sided differences of order `edge_order` (1 or 2)
        /// at the two ends; an array of this one's shape, in NumPy's type (the type of `/`,
        /// [`TrueDivide`]: `f64` for integers, the float or complex type itself otherwise). An
        /// axis shorter than `edge_order + 1`, or another edge order, is
        /// [`ArrayShapeError::Gradient`].
        ///
        /// ```no_run
        /// use gpu_runtime::gpuarray::DeviceArray;
        /// use gpu_runtime::ndarray::arr1;
        /// let ctx = gpu_runtime::Context::default()?;
        /// let f = DeviceArray::from_ndarray(&ctx, &arr1(&[1.0f64, 2.0, 4.0, 7.0, 11.0, 16.0]))?;
        /// assert_eq!(f.gradient(1.0, 0, 1)?.to_vec()?, [1.0, 1.5, 2.5, 3.5, 4.5, 5.0]);
        /// # Ok::<(), gpu_runtime::Error>(())
        /// ```
        fn gradient(&self, dx: f64, axis: isize, edge_order: usize)
            -> Result<DeviceArray<Grad<S::Elem>, IxDyn>>;

        /// [`gradient`](Self::gradient) at the sample points `x` along the axis (NumPy's
        /// `gradient(f, x, axis=axis)`): a 1-d array as long as the axis (another length is
        /// [`ArrayShapeError::ElementCounts`]), of any element type, converted to the gradient's
        /// type (where NumPy computes in the wider of the two, this computes in the gradient's).
        /// Unequal spacing takes NumPy's second-order formula of three points.
        fn gradient_x[SX: Storage<Elem: Element>](
            &self,
            x: &DeviceArrayBase<SX, Ix1>,
            axis: isize,
            edge_order: usize,
        ) -> Result<DeviceArray<Grad<S::Elem>, IxDyn>>;

        /// The [`gradient`](Self::gradient) along every axis, in order (NumPy's `gradient(f,
        /// *varargs)` without `axis`, which returns one array per axis): `dx` holds no spacing
        /// (1 along every axis), one for every axis, or one per axis (else
        /// [`ArrayShapeError::ElementCounts`]).
        fn gradients(&self, dx: &[f64], edge_order: usize)
            -> Result<Vec<DeviceArray<Grad<S::Elem>, IxDyn>>>;
    }
}

impl<S: Storage<Elem: TrueDivide<Quotient: Inexact>>, D: Dimension> OnStream<'_, &DeviceArrayBase<S, D>> {
    /// [`gradient`](DeviceArrayBase::gradient) on this stream.
    pub fn gradient(
        &self,
        dx: f64,
        axis: isize,
        edge_order: usize,
    ) -> Result<DeviceArray<Grad<S::Elem>, IxDyn>> {
        let f = self.target.view().into_dyn();
        let k = normalize_axis(OP, axis, f.ndim())?;
        along_axis(&f, k, Spacing::Uniform(dx), edge_order, self.stream)
    }

    /// [`gradient_x`](DeviceArrayBase::gradient_x) on this stream.
    pub fn gradient_x<SX: Storage<Elem: Element>>(
        &self,
        x: &DeviceArrayBase<SX, Ix1>,
        axis: isize,
        edge_order: usize,
    ) -> Result<DeviceArray<Grad<S::Elem>, IxDyn>> {
        let f = self.target.view().into_dyn();
        let k = normalize_axis(OP, axis, f.ndim())?;
        let x = OnStream::new(x, self.stream).astype::<Grad<S::Elem>>()?;
        along_axis(&f, k, Spacing::Points(x.view()), edge_order, self.stream)
    }

    /// [`gradients`](DeviceArrayBase::gradients) on this stream.
    pub fn gradients(&self, dx: &[f64], edge_order: usize) -> Result<Vec<DeviceArray<Grad<S::Elem>, IxDyn>>> {
        let f = self.target.view().into_dyn();
        let nd = f.ndim();
        if !(dx.len() <= 1 || dx.len() == nd) {
            return Err(counts_error(OP, nd, dx.len()));
        }
        (0..nd)
            .map(|k| {
                let d = dx.get(k).or(dx.first()).copied().unwrap_or(1.0);
                along_axis(&f, k, Spacing::Uniform(d), edge_order, self.stream)
            })
            .collect()
    }
}

/// How the samples along the axis are spaced.
enum Spacing<'x, M: Element> {
    /// One distance between every two neighbours.
    Uniform(f64),
    /// The sample points.
    Points(DeviceArrayView<'x, M, Ix1>),
}

/// The gradient of `f` along axis `k`.
fn along_axis<E: TrueDivide<Quotient: Inexact>>(
    f: &DeviceArrayView<'_, E, IxDyn>,
    k: usize,
    spacing: Spacing<'_, Grad<E>>,
    edge_order: usize,
    stream: Option<&Stream>,
) -> Result<DeviceArray<Grad<E>, IxDyn>> {
    let (nd, n) = (f.ndim(), f.shape()[k]);
    if !(1..=2).contains(&edge_order) || n < edge_order + 1 {
        return Err(ArrayShapeError::Gradient {
            axis: k,
            len: n,
            edge_order,
        }
        .into());
    }
    let mut out = DeviceArray::<Grad<E>, IxDyn>::empty(f.context(), f.raw_dim())?;
    let dx = match &spacing {
        Spacing::Points(x) if x.len() != n => {
            return Err(counts_error(OP, n, x.len()));
        }
        // The spacing, shaped to broadcast along axis `k` (NumPy's `diff(x)`).
        Spacing::Points(x) => {
            let mut shape = vec![1usize; nd];
            shape[k] = n - 1;
            Some(OnStream::new(x, stream).diff(1, 0)?.reshape(IxDyn(&shape))?)
        }
        Spacing::Uniform(_) => None,
    };
    if out.is_empty() {
        return Ok(out);
    }
    // `f[a..b]` along `k`, and the same of the spacing.
    let part = |a: usize, b: usize| f.slice(&slice_along(nd, k, a as isize, b as isize)[..]);
    let steps = |a: usize, b: usize| -> Result<Option<DeviceArrayView<'_, Grad<E>, IxDyn>>> {
        dx.as_ref()
            .map(|d| d.slice(&slice_along(nd, k, a as isize, b as isize)[..]))
            .transpose()
    };
    let mut write = |a: usize, b: usize, e: Expr<'_, Grad<E>>| -> Result<()> {
        let mut to = out.slice_mut(&slice_along(nd, k, a as isize, b as isize)[..])?;
        OnStream::new(e, stream).eval_into(&mut to)
    };
    // Each kernel reads at most four arrays (a strided kernel passes every array's strides,
    // within a launch's 64 parameters); the weights of unequal spacing are arrays of their
    // own, as NumPy's temporaries are (the rounding is the same).
    let ev = |e: Expr<'_, Grad<E>>| OnStream::new(e, stream).eval();
    let (f0, f1, last, before) = (part(0, 1)?, part(1, 2)?, part(n - 1, n)?, part(n - 2, n - 1)?);
    // Inside: `(f[2:] - f[:-2]) / 2dx`, or NumPy's weights of three unequally spaced points.
    if n >= 3 {
        let (lo, mid, hi) = (part(0, n - 2)?, part(1, n - 1)?, part(2, n)?);
        let (s1, s2) = (steps(0, n - 2)?, steps(1, n - 1)?);
        match (&spacing, &s1, &s2) {
            (Spacing::Uniform(dx), ..) => write(1, n - 1, (m(&hi) - m(&lo)) / c::<E>(2.0 * dx))?,
            (_, Some(dx1), Some(dx2)) => {
                let s = ev(dx1.expr() + dx2)?;
                let a = ev(-dx2.expr() / (dx1.expr() * &s))?;
                let b = ev((dx2.expr() - dx1) / (dx1.expr() * dx2))?;
                let cc = ev(dx1.expr() / (dx2.expr() * &s))?;
                let t = ev(a.expr() * m(&lo) + b.expr() * m(&mid))?;
                write(1, n - 1, t.expr() + cc.expr() * m(&hi))?;
            }
            _ => return unreachable_spacing(),
        }
    }
    if edge_order == 1 {
        let (s0, sn) = (steps(0, 1)?, steps(n - 2, n - 1)?);
        let (first, end) = match (&spacing, &s0, &sn) {
            (Spacing::Uniform(dx), ..) => (
                (m(&f1) - m(&f0)) / c::<E>(*dx),
                (m(&last) - m(&before)) / c::<E>(*dx),
            ),
            (_, Some(d0), Some(dn)) => ((m(&f1) - m(&f0)) / d0.expr(), (m(&last) - m(&before)) / dn.expr()),
            _ => return unreachable_spacing(),
        };
        write(0, 1, first)?;
        write(n - 1, n, end)?;
        return Ok(out);
    }
    let (f2, third) = (part(2, 3)?, part(n - 3, n - 2)?);
    let (s1, s2, e1, e2) = (
        steps(0, 1)?,
        steps(1, 2)?,
        steps(n - 3, n - 2)?,
        steps(n - 2, n - 1)?,
    );
    match (&spacing, &s1, &s2, &e1, &e2) {
        (Spacing::Uniform(dx), ..) => {
            write(
                0,
                1,
                c::<E>(-1.5 / dx) * m(&f0) + c::<E>(2.0 / dx) * m(&f1) + c::<E>(-0.5 / dx) * m(&f2),
            )?;
            write(
                n - 1,
                n,
                c::<E>(0.5 / dx) * m(&third) + c::<E>(-2.0 / dx) * m(&before) + c::<E>(1.5 / dx) * m(&last),
            )?;
        }
        (_, Some(d1), Some(d2), Some(e1), Some(e2)) => {
            let s = ev(d1.expr() + d2)?;
            let a = ev(-(c::<E>(2.0) * d1.expr() + d2) / (d1.expr() * &s))?;
            let b = ev((d1.expr() + d2) / (d1.expr() * d2))?;
            let cc = ev(-d1.expr() / (d2.expr() * &s))?;
            let t = ev(a.expr() * m(&f0) + b.expr() * m(&f1))?;
            write(0, 1, t.expr() + cc.expr() * m(&f2))?;
            let s = ev(e1.expr() + e2)?;
            let a = ev(e2.expr() / (e1.expr() * &s))?;
            let b = ev(-(e2.expr() + e1) / (e1.expr() * e2))?;
            let cc = ev((c::<E>(2.0) * e2.expr() + e1) / (e2.expr() * &s))?;
            let t = ev(a.expr() * m(&third) + b.expr() * m(&before))?;
            write(n - 1, n, t.expr() + cc.expr() * m(&last))?;
        }
        _ => return unreachable_spacing(),
    }
    Ok(out)
}

/// The samples of `v` in the gradient's type.
fn m<'v, E: TrueDivide<Quotient: Inexact>>(v: &'v DeviceArrayView<'_, E, IxDyn>) -> Expr<'v, Grad<E>> {
    v.expr().cast::<Grad<E>>()
}

/// A number in the gradient's type, converted from `f64` in the kernel as NumPy converts a
/// Python float beside an array.
fn c<'v, E: TrueDivide<Quotient: Inexact>>(v: f64) -> Expr<'v, Grad<E>> {
    Expr::scalar(v).cast::<Grad<E>>()
}

/// The spacing's views are there exactly when the points are: a mismatch is this module's bug.
fn unreachable_spacing<T>() -> Result<T> {
    Err(crate::error::Error::Internal {
        operation: OP,
        broken: "the spacing's views",
    })
}
