//! NumPy's `logspace`: `base` raised to evenly spaced exponents, computed as NumPy computes it
//! (`base ** linspace(start, stop)` in `f64`, then converted to the element type).

use ndarray::Ix1;

use crate::driver::context::core::Context;
use crate::error::Result;
use crate::gpuarray::array::core::DeviceArray;
use crate::gpuarray::array::on_stream::OnStream;
use crate::gpuarray::elements::element::Element;
use crate::gpuarray::expr::core::Expr;

impl<T: Element> DeviceArray<T, Ix1> {
    /// `num` values from `base^start` to `base^stop`, their exponents evenly spaced (NumPy's
    /// `logspace(start, stop, num, endpoint, base, dtype=T)`; NumPy's default `base` is 10).
    /// Computed in `f64` and converted to `T` as C converts.
    ///
    /// ```no_run
    /// use gpu_runtime::gpuarray::DeviceArray;
    /// let ctx = gpu_runtime::Context::default()?;
    /// let a = DeviceArray::<f64, _>::logspace(&ctx, 0.0, 2.0, 3, true, 10.0)?;
    /// assert_eq!(a.to_vec()?, [1.0, 10.0, 100.0]);
    /// # Ok::<(), gpu_runtime::Error>(())
    /// ```
    pub fn logspace(
        ctx: &Context,
        start: f64,
        stop: f64,
        num: usize,
        endpoint: bool,
        base: f64,
    ) -> Result<Self> {
        OnStream::legacy(ctx).logspace(start, stop, num, endpoint, base)
    }
}

impl OnStream<'_, &Context> {
    /// [`DeviceArray::logspace`] on this stream.
    pub fn logspace<T: Element>(
        &self,
        start: f64,
        stop: f64,
        num: usize,
        endpoint: bool,
        base: f64,
    ) -> Result<DeviceArray<T, Ix1>> {
        let exponents: DeviceArray<f64, Ix1> = self.linspace(start, stop, num, endpoint)?;
        Expr::scalar(base)
            .pow(&exponents)
            .cast::<T>()
            .eval_stream(self.stream)?
            .into_dimensionality()
    }
}
