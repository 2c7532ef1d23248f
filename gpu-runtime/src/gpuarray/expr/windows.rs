//! NumPy's window functions (`bartlett`, `blackman`, `hamming`, `hanning`, `kaiser`): `m`
//! points of a taper, in `f64`, each one expression over NumPy's `n` (`arange(1 - m, m, 2)`,
//! or `arange(0, m)` for `kaiser`) in NumPy's order of operations. No points for `m < 1`
//! (NumPy's too), one point of 1 for `m == 1`.

use std::f64::consts::PI;

use ndarray::Ix1;

use crate::driver::context::core::Context;
use crate::error::Result;
use crate::gpuarray::array::core::DeviceArray;
use crate::gpuarray::array::on_stream::OnStream;
use crate::gpuarray::expr::core::{Expr, Operand};

/// Which window ([`OnStream::window`]'s one body).
#[derive(Debug, Clone, Copy)]
enum Window {
    Bartlett,
    Blackman,
    Hamming,
    Hanning,
    Kaiser(f64),
}

/// Each window's two forms: `DeviceArray::name(ctx, m, ..)` with its docs, on the legacy default
/// stream, and `gpuarray::on(&stream).name(m, ..)`, both [`OnStream::window`] of `w`.
macro_rules! windows {
    ($($(#[$doc:meta])* $name:ident($($arg:ident: $t:ty),*) => $w:expr;)*) => {
        impl DeviceArray<f64, Ix1> {$(
            $(#[$doc])*
            pub fn $name(ctx: &Context, m: i64 $(, $arg: $t)*) -> Result<Self> {
                OnStream::legacy(ctx).$name(m $(, $arg)*)
            }
        )*}

        impl OnStream<'_, &Context> {$(
            #[doc = concat!("[`DeviceArray::", stringify!($name), "`] on this stream.")]
            pub fn $name(&self, m: i64 $(, $arg: $t)*) -> Result<DeviceArray<f64, Ix1>> {
                self.window(m, $w)
            }
        )*}
    };
}

windows! {
    /// The triangular window of `m` points (NumPy's `bartlett(M)`): `1 - |n| / (m - 1)` for
    /// `n` in `1 - m, 3 - m, ..., m - 1`; empty for `m < 1`, `[1]` for `m == 1`.
    ///
    /// ```no_run
    /// use gpu_runtime::gpuarray::DeviceArray;
    /// let ctx = gpu_runtime::Context::default()?;
    /// assert_eq!(DeviceArray::bartlett(&ctx, 5)?.to_vec()?, [0.0, 0.5, 1.0, 0.5, 0.0]);
    /// # Ok::<(), gpu_runtime::Error>(())
    /// ```
    bartlett() => Window::Bartlett;
    /// The Blackman window (NumPy's `blackman(M)`): `0.42 + 0.5 cos(π n / (m - 1)) + 0.08
    /// cos(2π n / (m - 1))`, `n` as [`bartlett`](Self::bartlett)'s.
    blackman() => Window::Blackman;
    /// The Hamming window (NumPy's `hamming(M)`): `0.54 + 0.46 cos(π n / (m - 1))`.
    hamming() => Window::Hamming;
    /// The Hann window (NumPy's `hanning(M)`): `0.5 + 0.5 cos(π n / (m - 1))`.
    hanning() => Window::Hanning;
    /// The Kaiser window with shape `beta` (NumPy's `kaiser(M, beta)`): `i0(beta sqrt(1 -
    /// ((n - a) / a)^2)) / i0(beta)` for `n` in `0..m`, `a = (m - 1) / 2`.
    kaiser(beta: f64) => Window::Kaiser(beta);
}

impl OnStream<'_, &Context> {
    fn window(&self, m: i64, w: Window) -> Result<DeviceArray<f64, Ix1>> {
        if m < 1 {
            return DeviceArray::empty(self.target, 0);
        }
        if m == 1 {
            return self.full(1, 1.0);
        }
        let (mf, last) = (m as f64, (m - 1) as f64);
        let n: DeviceArray<f64, Ix1> = match w {
            Window::Kaiser(_) => self.arange(0.0, mf, 1.0)?,
            _ => self.arange(1.0 - mf, mf, 2.0)?,
        };
        let cos = |k: f64| (Expr::scalar(k * PI) * &n / last).cos();
        let e = match w {
            Window::Bartlett => 1.0 - (&n).into_expr().fabs() / last,
            Window::Blackman => 0.42 + 0.5 * cos(1.0) + 0.08 * cos(2.0),
            Window::Hamming => 0.54 + 0.46 * cos(1.0),
            Window::Hanning => 0.5 + 0.5 * cos(1.0),
            Window::Kaiser(beta) => {
                let alpha = last / 2.0;
                let r = || ((&n).into_expr() - alpha) / alpha;
                ((1.0 - r() * r()).sqrt() * beta).i0() / Expr::scalar(beta).i0()
            }
        };
        OnStream::new(e, self.stream).eval()?.into_dimensionality()
    }
}
