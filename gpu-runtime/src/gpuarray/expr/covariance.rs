//! NumPy's `cov` and `corrcoef`, step for step as NumPy computes them: the variables (rows)
//! converted to the result type (`f64`, or `Complex64` for complex data; NumPy's `dtype=` with
//! `cov_as`), their (weighted) means subtracted, then one kernel for the matrix of products, a
//! thread per pair of variables summing over the observations (`dot(X, (X * w).T.conj()) * (1
//! / fact)`; `f16` and `bf16` summed in `float`, as NumPy's `float16` dot), and for `corrcoef`
//! one more dividing by the standard deviations and clipping to `[-1, 1]`.

use ndarray::{Dimension, Ix1, IxDyn};

use crate::driver::context::core::Context;
use crate::driver::stream::Stream;
use crate::error::{check_counts, ArrayShapeError, Result};
use crate::gpuarray::array::core::{DeviceArray, DeviceArrayBase, DeviceArrayView, Storage};
use crate::gpuarray::array::on_stream::{context_fns, OnStream};
use crate::gpuarray::elements::cast::{convert_c, headers_for};
use crate::gpuarray::elements::dtype::DType;
use crate::gpuarray::elements::element::Element;
use crate::gpuarray::elements::inexact::Inexact;
use crate::gpuarray::elements::promotion::Promote;
use crate::gpuarray::expr::core::Expr;
use crate::gpuarray::kernels::codegen::Arith;
use crate::gpuarray::kernels::registry::{self, BLOCK};
use crate::gpuarray::kernels::source_kernels::SourceKernels;
use crate::launch::{Arg, PreparedFunction};

/// The type `cov` and `corrcoef` return for data of `T`: NumPy's `result_type(T, float64)`.
pub type CovType<T> = <T as Promote<f64>>::Output;

/// How [`cov`] reads its data and weighs it (NumPy's keyword arguments); `Cov::default()`
/// is NumPy's defaults.
#[derive(Debug)]
pub struct Cov<'w> {
    /// Each row a variable, each column an observation (`true`, NumPy's default); `false`:
    /// the transpose.
    pub rowvar: bool,
    /// Normalize by the number of observations `N` (or the weights' sum) rather than `N - 1`.
    pub bias: bool,
    /// The divisor's `N - ddof`, overriding `bias` (NumPy's `ddof`).
    pub ddof: Option<i64>,
    /// How many times each observation counts (NumPy's `fweights`, non-negative integers).
    pub fweights: Option<DeviceArrayView<'w, i64, Ix1>>,
    /// How important each observation is (NumPy's `aweights`, non-negative).
    pub aweights: Option<DeviceArrayView<'w, f64, Ix1>>,
}

impl Default for Cov<'_> {
    fn default() -> Self {
        Cov {
            rowvar: true,
            bias: false,
            ddof: None,
            fweights: None,
            aweights: None,
        }
    }
}

/// The kernels: the products of the centred variables, and `corrcoef`'s normalization.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Kernel {
    Products,
    Normalize,
}

impl Kernel {
    fn name(self) -> &'static str {
        match self {
            Kernel::Products => "gpu_cov_products",
            Kernel::Normalize => "gpu_corrcoef_normalize",
        }
    }
}

static KERNELS: SourceKernels<(Kernel, DType)> = SourceKernels::new();

/// The source of `k` for results of `r` (any inexact type for the products, `F64` or
/// `Complex64` for the normalization).
fn source(k: Kernel, r: DType) -> String {
    let rc = r.c_name();
    let complex = r.is_complex();
    // The products are summed in `acc` (`float` for the 16-bit floats), scaled in `wide`.
    let acc = Arith::of(r).acc;
    let wide = if complex { DType::Complex64 } else { DType::F64 };
    let grid =
        "for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < len;\n\
                     i += (unsigned long long)gridDim.x * blockDim.x)";
    let body = match k {
        // c[a, b] = sum_k x[a, k] * conj(x[b, k] * w[k]) * inv, as NumPy's dot of `X` with
        // `(X * w).T.conj()` then `*= 1 / fact` (the scale a float64, as NumPy's).
        Kernel::Products => {
            let other = if complex { "gpu_runtime::conj(t)" } else { "t" };
            let ac = acc.c_name();
            let scaled = format!(
                "{} * {}",
                convert_c(acc, wide, "s"),
                convert_c(DType::F64, wide, "inv")
            );
            format!(
                "extern \"C\" __global__ void {name}(unsigned long long len, const {rc} *__restrict__ x, \
                 const double *__restrict__ w, {rc} *__restrict__ c, long long p, long long n, double inv, int weighted) {{\n\
                 {grid} {{\n\
                     const long long a = (long long)i / p, b = (long long)i % p;\n\
                     {ac} s = {zero};\n\
                     for (long long k = 0; k < n; ++k) {{\n\
                         {ac} t = {xb};\n\
                         if (weighted) t = t * {wk};\n\
                         s = s + {xa} * {other};\n\
                     }}\n\
                     c[i] = {write};\n\
                 }}\n}}\n",
                name = k.name(),
                zero = convert_c(DType::I32, acc, "0"),
                xb = convert_c(r, acc, "x[b * n + k]"),
                xa = convert_c(r, acc, "x[a * n + k]"),
                wk = convert_c(DType::F64, acc, "w[k]"),
                write = convert_c(wide, r, &format!("({scaled})")),
            )
        }
        // c[a, b] / sd[a] / sd[b], sd the square roots of the diagonal's real parts, each part
        // clipped to [-1, 1] (NaN stays NaN, as NumPy's `clip`).
        Kernel::Normalize => {
            let (re, clip) = if complex {
                (
                    "(c[d].re)",
                    "v.re = v.re < -1.0 ? -1.0 : (v.re > 1.0 ? 1.0 : v.re); v.im = v.im < -1.0 ? -1.0 : (v.im > 1.0 ? 1.0 : v.im);",
                )
            } else {
                ("(c[d])", "v = v < -1.0 ? -1.0 : (v > 1.0 ? 1.0 : v);")
            };
            let sd = |at: &str| format!("{{ const long long d = {at} * p + {at}; sd = sqrt({re}); }}");
            format!(
                "extern \"C\" __global__ void {name}(unsigned long long len, const {rc} *__restrict__ c, \
                 {rc} *__restrict__ out, long long p, int single) {{\n\
                 {grid} {{\n\
                     const long long a = (long long)i / p, b = (long long)i % p;\n\
                     double sd;\n\
                     {rc} v = c[i];\n\
                     if (single) {{ out[i] = v / v; continue; }}\n\
                     {sa} v = v / {sdr};\n\
                     {sb} v = v / {sdr};\n\
                     {clip}\n\
                     out[i] = v;\n\
                 }}\n}}\n",
                name = k.name(),
                sa = sd("a"),
                sb = sd("b"),
                sdr = convert_c(DType::F64, r, "sd"),
            )
        }
    };
    format!("{}{body}", headers_for([r, acc, wide]))
}

fn prepared(ctx: &Context, k: Kernel, r: DType) -> Result<PreparedFunction> {
    KERNELS.prepared(ctx, (k, r), k.name(), || source(k, r))
}

context_fns! {
    /// The covariance matrix of the variables of `m` (NumPy's `cov(m, rowvar=, bias=, ddof=,
    /// fweights=, aweights=)`, `options` holding the keywords): `m` has one or two axes (a 1-d
    /// array is one variable; more axes are [`ArrayShapeError::TooManyAxes`]), the result
    /// `p x p` for `p` variables, or 0-d for one, in NumPy's type ([`CovType`]: `f64`, or
    /// `Complex64` for complex data). No variables give a `0 x 0` array. A divisor `N - ddof` (or
    /// the weights' version of it) at or below zero gives infinities and NaN, as NumPy's (which
    /// warns). Weights of another length than the observations are
    /// [`ArrayShapeError::ElementCounts`]; negative ones [`ArrayShapeError::NegativeValue`].
    /// Waits for the weights' sums. With NumPy's `y`: [`cov_xy`]; with its `dtype=`: [`cov_as`].
    ///
    /// ```no_run
    /// use gpu_runtime::gpuarray::{self, Cov, DeviceArray};
    /// use gpu_runtime::ndarray::arr2;
    /// let ctx = gpu_runtime::Context::default()?;
    /// let m = DeviceArray::from_ndarray(&ctx, &arr2(&[[0.0f32, 1.0, 2.0], [2.0, 1.0, 0.0]]))?;
    /// let c = gpuarray::cov(&m, &Cov::default())?;
    /// assert_eq!(c.to_vec()?, [1.0f64, -1.0, -1.0, 1.0]);
    /// # Ok::<(), gpu_runtime::Error>(())
    /// ```
    fn cov[T: Promote<f64, Output: Inexact>, S: Storage<Elem = T>, D: Dimension](
        &self, m: &DeviceArrayBase<S, D>, options: &Cov<'_>
    ) -> Result<DeviceArray<CovType<T>, IxDyn>> {
        covariance(m.view().into_dyn(), None::<DeviceArrayView<'_, u8, IxDyn>>, options, self.stream)
    }

    /// [`cov`] computed in and returned as `R` (NumPy's `cov(m, ..., dtype=R)`): the data
    /// converted to `R` (any element type; a complex one to a real `R` keeps the real parts,
    /// as NumPy's, which warns), the means, the products and the result in `R` (`f16` and
    /// `bf16` products summed in `float`, as NumPy's `float16` dot); `R` is a float or complex
    /// type ([`Inexact`]: NumPy refuses integer ones). The weights too are converted to `R`,
    /// so the result is an `R` array with them as well (NumPy's weights are `float64`, which
    /// makes its weighted result `float64`, or `complex128`, whatever `dtype`). Options and
    /// errors as [`cov`]'s. With NumPy's `y`: [`cov_xy_as`].
    ///
    /// ```no_run
    /// use gpu_runtime::gpuarray::{self, Cov, DeviceArray};
    /// use gpu_runtime::ndarray::arr2;
    /// let ctx = gpu_runtime::Context::default()?;
    /// let m = DeviceArray::from_ndarray(&ctx, &arr2(&[[0i32, 1, 2], [2, 1, 0]]))?;
    /// let c = gpuarray::cov_as::<f32>(&m, &Cov::default())?;
    /// assert_eq!(c.to_vec()?, [1.0f32, -1.0, -1.0, 1.0]);
    /// # Ok::<(), gpu_runtime::Error>(())
    /// ```
    fn cov_as[R: Inexact](
        &self, m: &DeviceArrayBase<impl Storage<Elem: Element>, impl Dimension>, options: &Cov<'_>
    ) -> Result<DeviceArray<R, IxDyn>> {
        covariance(m.view().into_dyn(), None::<DeviceArrayView<'_, u8, IxDyn>>, options, self.stream)
    }

    /// [`cov`] of the variables of `m` and then those of `y` (NumPy's `cov(m, y)`: `y` read as
    /// `m` is, its variables appended).
    fn cov_xy[
        T: Promote<f64, Output: Inexact>, S: Storage<Elem = T>, D: Dimension, SY: Storage<Elem = T>,
        DY: Dimension
    ](
        &self, m: &DeviceArrayBase<S, D>, y: &DeviceArrayBase<SY, DY>, options: &Cov<'_>
    ) -> Result<DeviceArray<CovType<T>, IxDyn>> {
        covariance(
            m.view().into_dyn(),
            Some(y.view().into_dyn()),
            options,
            self.stream,
        )
    }

    /// [`cov_as`] of the variables of `m` and then those of `y` (NumPy's `cov(m, y,
    /// dtype=R)`); `m` and `y` may be of different element types, each converted to `R`.
    fn cov_xy_as[R: Inexact](
        &self, m: &DeviceArrayBase<impl Storage<Elem: Element>, impl Dimension>,
        y: &DeviceArrayBase<impl Storage<Elem: Element>, impl Dimension>, options: &Cov<'_>
    ) -> Result<DeviceArray<R, IxDyn>> {
        covariance(
            m.view().into_dyn(),
            Some(y.view().into_dyn()),
            options,
            self.stream,
        )
    }

    /// The correlation coefficients of the variables of `x` (NumPy's `corrcoef(x, rowvar=)`):
    /// [`cov`] divided by the standard deviations of both variables, each part clipped to
    /// `[-1, 1]`; one variable gives `c / c` (1, or NaN), as NumPy's. With NumPy's `y`:
    /// [`corrcoef_xy`].
    fn corrcoef[T: Promote<f64, Output: Inexact>, S: Storage<Elem = T>, D: Dimension](
        &self, x: &DeviceArrayBase<S, D>, rowvar: bool
    ) -> Result<DeviceArray<CovType<T>, IxDyn>> {
        correlation(x.view().into_dyn(), None, rowvar, self.stream)
    }

    /// [`corrcoef`] of the variables of `x` and then those of `y` (NumPy's `corrcoef(x, y)`).
    fn corrcoef_xy[
        T: Promote<f64, Output: Inexact>, S: Storage<Elem = T>, D: Dimension, SY: Storage<Elem = T>,
        DY: Dimension
    ](
        &self, x: &DeviceArrayBase<S, D>, y: &DeviceArrayBase<SY, DY>, rowvar: bool
    ) -> Result<DeviceArray<CovType<T>, IxDyn>> {
        correlation(
            x.view().into_dyn(),
            Some(y.view().into_dyn()),
            rowvar,
            self.stream,
        )
    }
}

/// `corrcoef` of `x` (and `y`).
fn correlation<T: Promote<f64, Output: Inexact>>(
    x: DeviceArrayView<'_, T, IxDyn>,
    y: Option<DeviceArrayView<'_, T, IxDyn>>,
    rowvar: bool,
    stream: Option<&Stream>,
) -> Result<DeviceArray<CovType<T>, IxDyn>> {
    let options = Cov {
        rowvar,
        ..Cov::default()
    };
    let c: DeviceArray<CovType<T>, IxDyn> = covariance(x, y, &options, stream)?;
    // One variable: NumPy's `c / c` (1, or NaN), not a division by two square roots.
    let single = c.ndim() == 0;
    let p = if single { 1 } else { c.shape()[0] };
    let mut out = DeviceArray::<CovType<T>, IxDyn>::empty(c.context(), c.raw_dim())?;
    let len = (p * p) as u64;
    if len > 0 {
        let ctx = c.context().clone();
        let f = prepared(&ctx, Kernel::Normalize, CovType::<T>::DTYPE)?;
        let args = [
            Arg::U64(len),
            Arg::input::<CovType<T>, _>(&c),
            Arg::output(&mut out),
            Arg::I64(p as i64),
            Arg::I32(i32::from(single)),
        ];
        registry::launch(&f, registry::grid_for(&ctx, len)?, BLOCK, stream, &args)?;
    }
    Ok(out)
}

/// `a` as a C-order matrix of variables (rows) by observations, in `R`: a 1-d array is one
/// variable; `rowvar == false` transposes (a single row stays one variable, as NumPy's).
fn variables<R: Element, S: Storage<Elem: Element>, D: Dimension>(
    a: &DeviceArrayBase<S, D>,
    rowvar: bool,
    stream: Option<&Stream>,
) -> Result<DeviceArray<R, IxDyn>> {
    let v = a.view().into_dyn();
    let v = match v.ndim() {
        0 => v.reshape(IxDyn(&[1, 1]))?,
        1 => v.expand_dims(0)?,
        2 => v,
        axes => {
            return Err(ArrayShapeError::TooManyAxes {
                operation: "cov",
                axes,
                most: 2,
            }
            .into())
        }
    };
    let v = if !rowvar && v.shape()[0] != 1 {
        v.reversed_axes()
    } else {
        v
    };
    let mut out = DeviceArray::<R, IxDyn>::empty(a.context(), v.raw_dim())?;
    OnStream::new(&mut out, stream).assign(&v)?;
    Ok(out)
}

/// `cov` of `m` (and `y`), computed in and returned as `R`.
fn covariance<R: Inexact, T: Element, U: Element>(
    m: DeviceArrayView<'_, T, IxDyn>,
    y: Option<DeviceArrayView<'_, U, IxDyn>>,
    options: &Cov<'_>,
    stream: Option<&Stream>,
) -> Result<DeviceArray<R, IxDyn>> {
    let ctx = m.context().clone();
    let mut x = variables::<R, _, _>(&m, options.rowvar, stream)?;
    if x.shape()[0] == 0 {
        return DeviceArray::empty(&ctx, IxDyn(&[0, 0]));
    }
    if let Some(y) = y {
        let y = variables::<R, _, _>(&y, options.rowvar, stream)?;
        x = OnStream::new(&ctx, stream).concatenate(&[&x, &y], 0)?;
    }
    let (p, n) = (x.shape()[0], x.shape()[1]);
    let ddof = options.ddof.unwrap_or(if options.bias { 0 } else { 1 });
    // The weights (NumPy's `w = fweights * aweights`), and the divisor.
    let weights = weights(options, n, stream)?;
    let fact = match (&weights, &options.aweights) {
        (None, _) => n as f64 - ddof as f64,
        (Some((_, w_sum)), _) if ddof == 0 => *w_sum,
        (Some((_, w_sum)), None) => w_sum - ddof as f64,
        (Some((w, w_sum)), Some(aw)) => {
            let product = (w.expr() * aw).eval_stream(stream)?;
            let wa = OnStream::new(&product, stream).sum()?;
            w_sum - ddof as f64 * wa / w_sum
        }
    };
    let fact = fact.max(0.0);
    // The means along the observations: sum(x * w) / sum(w), NumPy's `average`.
    let (mean, count) = match &weights {
        None => (OnStream::new(&x, stream).sum_axis(1)?, n as f64),
        Some((w, w_sum)) => {
            let scaled = (x.expr() * w.expr().cast::<R>()).eval_stream(stream)?;
            (OnStream::new(&scaled, stream).sum_axis(1)?, *w_sum)
        }
    };
    let mean = mean.reshape(IxDyn(&[p, 1]))?;
    let centred = (x.expr() - (mean.expr() / Expr::scalar(count).cast::<R>())).eval_stream(stream)?;
    let mut c = DeviceArray::<R, IxDyn>::empty(&ctx, IxDyn(&[p, p]))?;
    let ones;
    let w = match &weights {
        Some((w, _)) => w,
        None => {
            ones = DeviceArray::<f64, Ix1>::empty(&ctx, 1)?;
            &ones
        }
    };
    let f = prepared(&ctx, Kernel::Products, R::DTYPE)?;
    let len = (p * p) as u64;
    let args = [
        Arg::U64(len),
        Arg::input::<R, _>(&centred),
        Arg::input::<f64, _>(w),
        Arg::output(&mut c),
        Arg::I64(p as i64),
        Arg::I64(n as i64),
        Arg::F64(1.0 / fact),
        Arg::I32(i32::from(weights.is_some())),
    ];
    registry::launch(&f, registry::grid_for(&ctx, len)?, BLOCK, stream, &args)?;
    if p == 1 {
        return c.reshape(IxDyn(&[]));
    }
    Ok(c)
}

/// NumPy's `w` of `cov` (the frequency weights times the analytic ones, as `f64`) and its
/// sum, or `None` without weights; each checked for its length and sign.
fn weights(
    options: &Cov<'_>,
    n: usize,
    stream: Option<&Stream>,
) -> Result<Option<(DeviceArray<f64, Ix1>, f64)>> {
    let check = |len: usize, min: f64, which: &'static str| -> Result<()> {
        check_counts(which, n, len)?;
        if min < 0.0 {
            return Err(ArrayShapeError::NegativeValue {
                operation: which,
                value: min.floor() as i64,
            }
            .into());
        }
        Ok(())
    };
    let f = match &options.fweights {
        Some(fw) => {
            let min = if fw.is_empty() {
                0
            } else {
                OnStream::new(fw, stream).min()?
            };
            check(fw.len(), min as f64, "cov (fweights)")?;
            Some(OnStream::new(fw, stream).astype::<f64>()?)
        }
        None => None,
    };
    let w = match (&options.aweights, f) {
        (None, None) => return Ok(None),
        (Some(aw), f) => {
            let min = if aw.is_empty() {
                0.0
            } else {
                OnStream::new(aw, stream).min()?
            };
            check(aw.len(), min, "cov (aweights)")?;
            match f {
                Some(f) => (f.expr() * aw).eval_stream(stream)?.into_dimensionality()?,
                None => OnStream::new(aw, stream).copy()?,
            }
        }
        (None, Some(f)) => f,
    };
    let sum = if w.is_empty() {
        0.0
    } else {
        OnStream::new(&w, stream).sum()?
    };
    Ok(Some((w, sum)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kernels_compile_in_every_result_type() {
        let inexact = [
            DType::F16,
            DType::Bf16,
            DType::F32,
            DType::F64,
            DType::Complex32,
            DType::Complex64,
        ];
        for r in inexact {
            for k in [Kernel::Products, Kernel::Normalize] {
                // corrcoef normalizes NumPy's types only.
                if k == Kernel::Normalize && !matches!(r, DType::F64 | DType::Complex64) {
                    continue;
                }
                let s = source(k, r);
                let want = if k == Kernel::Products { 8 } else { 5 };
                assert_eq!(
                    gpu_cuda_source::find_kernel(&s, k.name()).unwrap().params.len(),
                    want
                );
                if let Err(e) = registry::compile_check(&s, "sm_90") {
                    panic!("{k:?} of {r:?}: {e}");
                }
            }
        }
    }
}
