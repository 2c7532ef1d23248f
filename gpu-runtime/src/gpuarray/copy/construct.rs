//! Arrays made filled: `full` (of any [`ArrayElement`], CUDA's vector types too), `ones` and
//! their `_like` forms, `arange` and `linspace` (NumPy's and PyCUDA's names), `eye` and
//! `identity`, each on the
//! legacy default stream or, through [`gpuarray::on`](crate::gpuarray::on), on a stream (each
//! written once, on [`OnStream`]). `empty` and `zeros` are `array/convert.rs`'s.
//!
//! `arange` and `linspace` are computed on the device, element `i` from `i` alone, in `double`
//! and then converted to the element type as C converts (`(T)x`), so that a long range never
//! crosses the bus.

use std::sync::Arc;

use ndarray::{Dimension, Ix1, Ix2, ShapeBuilder};

use crate::driver::context::core::Context;
use crate::error::{ArrayShapeError, Result};
use crate::gpuarray::array::core::{DeviceArray, DeviceArrayBase, Storage};
use crate::gpuarray::array::on_stream::OnStream;
use crate::gpuarray::elements::array_element::ArrayElement;
use crate::gpuarray::elements::cast;
use crate::gpuarray::elements::dtype::DType;
use crate::gpuarray::elements::element::Element;
use crate::gpuarray::kernels::args::KernelArg;
use crate::gpuarray::kernels::elementwise::ElementwiseKernel;
use crate::gpuarray::kernels::registry::Definitions;

/// A kernel that writes each element from its index alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Fill {
    /// `z = (T)1`.
    One,
    /// `z = (T)(start + i * step)`.
    Range,
    /// `linspace`: `Range`, with the last element `stop` itself when `last` is set.
    Linear,
}

static KERNELS: Definitions<(Fill, DType), Arc<ElementwiseKernel>> = Definitions::new();

/// The kernel of `fill` writing elements of `to`, generated once per process. A complex
/// element is C-cast from its real part (`gpu_runtime::complex<float>`'s constructor from one
/// part): the imaginary part is zero.
fn kernel(fill: Fill, to: DType) -> Result<Arc<ElementwiseKernel>> {
    KERNELS.get_or_try_insert_with((fill, to), || {
        let t = to.c_name();
        Ok(Arc::new(match fill {
            Fill::One => {
                ElementwiseKernel::with_name("gpu_ones", &format!("{t} *z"), &format!("z = ({t})1"))?
            }
            Fill::Range => ElementwiseKernel::with_name(
                "gpu_arange",
                &format!("double start, double step, {t} *z"),
                &format!("z = ({t})(start + (double)i * step)"),
            )?,
            Fill::Linear => ElementwiseKernel::with_name(
                "gpu_linspace",
                &format!("double start, double step, double stop, int last, {t} *z"),
                &format!("z = {}", linspace_value(to)),
            )?,
        }))
    })
}

/// The C expression of element `i` of `linspace` as a `to`: computed in `double`, floored for
/// an integer type (NumPy's `linspace` floors before it converts, so `linspace(-10, 8, 9)` of
/// integers is `[-10, -8, ...]`, not truncated toward zero), then converted as `astype` does.
fn linspace_value(to: DType) -> String {
    let value = "(last && i == n - 1 ? stop : start + (double)i * step)";
    let value = if to.is_bool_or_integer() && to != DType::Bool {
        format!("floor{value}")
    } else {
        value.to_owned()
    };
    cast::convert_c(DType::F64, to, &value)
}

/// The number of elements of NumPy's `arange(start, stop, step)`: `ceil((stop - start) /
/// step)`, or 0 when that is not positive. A zero or non-finite step, or a count that does not
/// fit `usize`, is an error.
pub(crate) fn arange_len(start: f64, stop: f64, step: f64) -> Result<usize> {
    if step == 0.0 || !step.is_finite() || !start.is_finite() || !stop.is_finite() {
        return Err(ArrayShapeError::ArangeStep { start, stop, step }.into());
    }
    let count = ((stop - start) / step).ceil();
    if count.is_nan() || count <= 0.0 {
        return Ok(0);
    }
    // `usize::MAX as f64` rounds up to 2^64, which no array reaches anyway.
    if count >= usize::MAX as f64 {
        return Err(ArrayShapeError::ArangeStep { start, stop, step }.into());
    }
    Ok(count as usize)
}

/// NumPy's `linspace` step: `(stop - start) / (num - 1)` with the endpoint, `/ num` without.
pub(crate) fn linspace_step(start: f64, stop: f64, num: usize, endpoint: bool) -> f64 {
    let div = if endpoint { num.saturating_sub(1) } else { num };
    if div == 0 {
        // One element (or none): only `start` is written.
        0.0
    } else {
        (stop - start) / div as f64
    }
}

impl<T: ArrayElement, D: Dimension> DeviceArray<T, D> {
    /// An array of `shape` with every element `value` (NumPy's `full`, PyCUDA's `fill` on a new
    /// array).
    pub fn full<Sh: ShapeBuilder<Dim = D>>(ctx: &Context, shape: Sh, value: T) -> Result<Self> {
        OnStream::legacy(ctx).full(shape, value)
    }

    /// `value` in the shape (and order, as [`empty_like`](Self::empty_like)) of `other`
    /// (NumPy's `full_like`).
    pub fn full_like<S: Storage>(other: &DeviceArrayBase<S, D>, value: T) -> Result<Self> {
        OnStream::legacy(other.context()).full_like(other, value)
    }
}

impl<T: Element, D: Dimension> DeviceArray<T, D> {
    /// An array of `shape` with every element one, `(T)1` (NumPy's `ones`).
    pub fn ones<Sh: ShapeBuilder<Dim = D>>(ctx: &Context, shape: Sh) -> Result<Self> {
        OnStream::legacy(ctx).ones(shape)
    }

    /// Ones in the shape (and order) of `other` (NumPy's `ones_like`).
    pub fn ones_like<S: Storage>(other: &DeviceArrayBase<S, D>) -> Result<Self> {
        OnStream::legacy(other.context()).ones_like(other)
    }
}

impl<T: Element> DeviceArray<T, Ix1> {
    /// `start, start + step, ...` up to `stop` excluded (NumPy's `arange(start, stop, step,
    /// dtype=T)`, PyCUDA's `arange`): `ceil((stop - start) / step)` elements (none when that is
    /// not positive), element `i` being `(T)(start + i * step)` computed in `f64`. The bounds are
    /// `f64`, as NumPy computes them, so integers beyond 2^53 are not exact. A step of zero or a
    /// bound that is not finite is [`ArrayShapeError::ArangeStep`].
    ///
    /// ```no_run
    /// use gpu_runtime::{gpuarray::DeviceArray, ndarray::Ix1, Context};
    /// let ctx = Context::default()?;
    /// let a = DeviceArray::<i32, Ix1>::arange(&ctx, 0.0, 10.0, 3.0)?;
    /// assert_eq!(a.to_vec()?, [0, 3, 6, 9]);
    /// # Ok::<(), gpu_runtime::Error>(())
    /// ```
    pub fn arange(ctx: &Context, start: f64, stop: f64, step: f64) -> Result<Self> {
        OnStream::legacy(ctx).arange(start, stop, step)
    }

    /// `num` evenly spaced values from `start` to `stop` (NumPy's `linspace(start, stop, num,
    /// endpoint, dtype=T)`): with `endpoint`, the last is `stop` itself and the step
    /// `(stop - start) / (num - 1)`; without, `stop` is left out and the step is
    /// `(stop - start) / num`. Computed in `f64`, then converted to `T` as C converts.
    pub fn linspace(ctx: &Context, start: f64, stop: f64, num: usize, endpoint: bool) -> Result<Self> {
        OnStream::legacy(ctx).linspace(start, stop, num, endpoint)
    }
}

impl<T: Element> DeviceArray<T, Ix2> {
    /// An `n` x `m` matrix of zeros with ones on diagonal `k` (NumPy's `eye(n, m, k)`: `0` the
    /// main diagonal, positive above it, negative below).
    ///
    /// ```no_run
    /// use gpu_runtime::{gpuarray::DeviceArray, ndarray::Ix2, Context};
    /// let ctx = Context::default()?;
    /// let e = DeviceArray::<f32, Ix2>::eye(&ctx, 2, 3, 1)?;
    /// assert_eq!(e.to_vec()?, [0.0, 1.0, 0.0, 0.0, 0.0, 1.0]);
    /// # Ok::<(), gpu_runtime::Error>(())
    /// ```
    pub fn eye(ctx: &Context, n: usize, m: usize, k: isize) -> Result<Self> {
        OnStream::legacy(ctx).eye(n, m, k)
    }

    /// The `n` x `n` identity matrix (NumPy's `identity(n)`).
    pub fn identity(ctx: &Context, n: usize) -> Result<Self> {
        OnStream::legacy(ctx).eye(n, n, 0)
    }
}

/// The constructors on a stream, arrays made in its context: the one body of each.
impl OnStream<'_, &Context> {
    /// [`DeviceArray::full`] on this stream.
    pub fn full<T: ArrayElement, D: Dimension, Sh: ShapeBuilder<Dim = D>>(
        &self,
        shape: Sh,
        value: T,
    ) -> Result<DeviceArray<T, D>> {
        self.filled(shape, |mut a| a.fill(value))
    }

    /// [`DeviceArray::full_like`] on this stream (in `other`'s context).
    pub fn full_like<T: ArrayElement, S: Storage, D: Dimension>(
        &self,
        other: &DeviceArrayBase<S, D>,
        value: T,
    ) -> Result<DeviceArray<T, D>> {
        let mut a = DeviceArray::empty_like(other)?;
        OnStream::new(&mut a, self.stream).fill(value)?;
        Ok(a)
    }

    /// [`DeviceArray::ones`] on this stream.
    pub fn ones<T: Element, D: Dimension, Sh: ShapeBuilder<Dim = D>>(
        &self,
        shape: Sh,
    ) -> Result<DeviceArray<T, D>> {
        let mut a = DeviceArray::empty(self.target, shape)?;
        self.launch_fill::<T>(Fill::One, vec![KernelArg::output(&mut a)])?;
        Ok(a)
    }

    /// [`DeviceArray::ones_like`] on this stream (in `other`'s context).
    pub fn ones_like<T: Element, S: Storage, D: Dimension>(
        &self,
        other: &DeviceArrayBase<S, D>,
    ) -> Result<DeviceArray<T, D>> {
        let mut a = DeviceArray::empty_like(other)?;
        self.launch_fill::<T>(Fill::One, vec![KernelArg::output(&mut a)])?;
        Ok(a)
    }

    /// [`DeviceArray::arange`] on this stream.
    pub fn arange<T: Element>(&self, start: f64, stop: f64, step: f64) -> Result<DeviceArray<T, Ix1>> {
        let mut a = DeviceArray::empty(self.target, arange_len(start, stop, step)?)?;
        let args = vec![
            KernelArg::scalar(start),
            KernelArg::scalar(step),
            KernelArg::output(&mut a),
        ];
        self.launch_fill::<T>(Fill::Range, args)?;
        Ok(a)
    }

    /// [`DeviceArray::linspace`] on this stream.
    pub fn linspace<T: Element>(
        &self,
        start: f64,
        stop: f64,
        num: usize,
        endpoint: bool,
    ) -> Result<DeviceArray<T, Ix1>> {
        let mut a = DeviceArray::empty(self.target, num)?;
        let step = linspace_step(start, stop, num, endpoint);
        let last = i32::from(endpoint && num > 1);
        let args = vec![
            KernelArg::scalar(start),
            KernelArg::scalar(step),
            KernelArg::scalar(stop),
            KernelArg::scalar(last),
            KernelArg::output(&mut a),
        ];
        self.launch_fill::<T>(Fill::Linear, args)?;
        Ok(a)
    }

    /// [`DeviceArray::eye`] on this stream (`identity(n)` is `eye(n, n, 0)`).
    pub fn eye<T: Element>(&self, n: usize, m: usize, k: isize) -> Result<DeviceArray<T, Ix2>> {
        let mut a = self.full((n, m), T::zero())?;
        let mut diagonal = a.view_mut().diagonal(k, 0, 1)?;
        if !diagonal.is_empty() {
            self.launch_fill::<T>(Fill::One, vec![KernelArg::output(&mut diagonal)])?;
        }
        Ok(a)
    }

    /// Launches the `fill` kernel writing elements of `T` on this stream.
    fn launch_fill<T: Element>(&self, fill: Fill, args: Vec<KernelArg<'_>>) -> Result<()> {
        OnStream::new(&*kernel(fill, T::DTYPE)?, self.stream).launch(args)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;

    #[test]
    fn arange_counts_as_numpy_does() {
        assert_eq!(arange_len(0.0, 10.0, 3.0).unwrap(), 4);
        assert_eq!(arange_len(0.0, 9.0, 3.0).unwrap(), 3);
        assert_eq!(arange_len(10.0, 0.0, -2.5).unwrap(), 4);
        assert_eq!(arange_len(0.0, 1.0, 0.1).unwrap(), 10);
        // A range that runs the wrong way is empty, not an error.
        assert_eq!(arange_len(5.0, 0.0, 1.0).unwrap(), 0);
        assert_eq!(arange_len(0.0, 0.0, 1.0).unwrap(), 0);
    }

    #[test]
    fn arange_refuses_a_zero_step_and_infinite_bounds() {
        for (start, stop, step) in [
            (0.0, 1.0, 0.0),
            (0.0, f64::INFINITY, 1.0),
            (f64::NAN, 1.0, 1.0),
            (0.0, 1.0, f64::NAN),
        ] {
            let e = arange_len(start, stop, step).unwrap_err();
            assert!(
                matches!(e, Error::Shape(ArrayShapeError::ArangeStep { step: s, .. }) if s.to_bits() == step.to_bits()),
                "{e}"
            );
        }
        // Far more elements than a usize counts.
        assert!(arange_len(0.0, 1e300, 1e-300).is_err());
    }

    #[test]
    fn linspace_steps_as_numpy_does() {
        assert_eq!(linspace_step(0.0, 1.0, 5, true), 0.25);
        assert_eq!(linspace_step(0.0, 1.0, 5, false), 0.2);
        assert_eq!(linspace_step(2.0, 3.0, 1, true), 0.0);
        assert_eq!(linspace_step(2.0, 3.0, 0, false), 0.0);
    }
}
