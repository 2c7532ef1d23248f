//! [`linear_combination`]: `z = a0*x0 + a1*x1 + ...` in one kernel (PyCUDA's
//! `get_linear_combination_kernel`), with each coefficient a number or a device scalar (an
//! array of one element, read on the device, so a coefficient computed by an earlier kernel
//! never comes back to the host).
//!
//! The kernel is an element-bound [`ElementwiseKernel`] made once per element type and
//! pattern of coefficients (number or device) and kept for the process; the arrays broadcast
//! as in every elementwise launch (a device coefficient is a 0-d array broadcast to all).

use std::fmt::Write as _;
use std::sync::Arc;

use ndarray::{Dimension, IxDyn};

use crate::driver::context::core::Context;
use crate::driver::stream::Stream;
use crate::error::{ArgumentError, Result};
use crate::gpuarray::array::core::{DeviceArrayBase, DeviceArrayView, Storage, StorageMut};
use crate::gpuarray::array::on_stream::OnStream;
use crate::gpuarray::elements::dtype::DType;
use crate::gpuarray::elements::element::Element;
use crate::gpuarray::kernels::args::KernelArg;
use crate::gpuarray::kernels::elementwise::ElementwiseKernel;
use crate::gpuarray::kernels::registry::Definitions;

/// One coefficient of a [`linear_combination`]: a number passed with the launch, or a device
/// scalar (an array read on the device; one element, or any shape that broadcasts).
#[derive(Debug)]
pub enum Coefficient<'a, T: Element> {
    /// A number.
    Value(T),
    /// An array on the device, usually of one element (PyCUDA's device scalar).
    Device(DeviceArrayView<'a, T, IxDyn>),
}

impl<T: Element> From<T> for Coefficient<'_, T> {
    fn from(value: T) -> Self {
        Coefficient::Value(value)
    }
}

impl<'a, T: Element> Coefficient<'a, T> {
    /// A coefficient read from `array` on the device (a 0-d or one-element array).
    pub fn device<S: Storage<Elem = T>, D: Dimension>(array: &'a DeviceArrayBase<S, D>) -> Self {
        Coefficient::Device(array.view().into_dyn())
    }
}

type Key = (DType, Vec<bool>);

static KERNELS: Definitions<Key, Arc<ElementwiseKernel>> = Definitions::new();

/// The kernel of a combination of elements of `T` whose coefficients are on the device where
/// `device` says: arguments `a0, x0, a1, x1, ..., z`, each `ak` a scalar or a `const T *`.
fn kernel<T: Element>(device: &[bool]) -> Result<Arc<ElementwiseKernel>> {
    let key = (T::DTYPE, device.to_vec());
    KERNELS.get_or_try_insert_with(key, || {
        let t = T::c_name();
        let (mut arguments, mut operation) = (String::new(), String::from("z = "));
        for (k, &on_device) in device.iter().enumerate() {
            let coefficient = if on_device { "const " } else { "" };
            let pointer = if on_device { "*" } else { "" };
            let _ = write!(arguments, "{coefficient}{t} {pointer}a{k}, const {t} *x{k}, ");
            let plus = if k == 0 { "" } else { " + " };
            let _ = write!(operation, "{plus}a{k} * x{k}");
        }
        arguments.push_str(&format!("{t} *z"));
        Ok(Arc::new(ElementwiseKernel::with_name(
            "gpu_linear_combination",
            &arguments,
            &operation,
        )?))
    })
}

/// `out = a0*x0 + a1*x1 + ...` over `terms` (coefficient, array), elementwise, in one kernel,
/// on the legacy default stream (PyCUDA's `get_linear_combination_kernel`). The arrays and
/// device coefficients broadcast together; `out` has their broadcast shape. No terms is an
/// error.
///
/// ```no_run
/// use gpu_runtime::gpuarray::{linear_combination, Coefficient, DeviceArray};
/// use gpu_runtime::{ndarray::{arr0, Array1}, Context};
/// let ctx = Context::default()?;
/// let x = DeviceArray::from_ndarray(&ctx, &Array1::<f32>::ones(100))?;
/// let y = DeviceArray::from_ndarray(&ctx, &Array1::<f32>::ones(100))?;
/// let b = DeviceArray::from_ndarray(&ctx, &arr0(3.0f32))?;
/// let mut z = DeviceArray::<f32, _>::zeros(&ctx, 100)?;
/// linear_combination(&[(2.0f32.into(), &x), (Coefficient::device(&b), &y)], &mut z)?;
/// assert_eq!(z.to_ndarray()?[0], 5.0);
/// # Ok::<(), gpu_runtime::Error>(())
/// ```
pub fn linear_combination<
    T: Element,
    S: Storage<Elem = T>,
    D: Dimension,
    SZ: StorageMut<Elem = T>,
    DZ: Dimension,
>(
    terms: &[(Coefficient<'_, T>, &DeviceArrayBase<S, D>)],
    out: &mut DeviceArrayBase<SZ, DZ>,
) -> Result<()> {
    combine(None, terms, out)
}

impl OnStream<'_, &Context> {
    /// [`linear_combination`] on this stream; returns without waiting.
    pub fn linear_combination<
        T: Element,
        S: Storage<Elem = T>,
        D: Dimension,
        SZ: StorageMut<Elem = T>,
        DZ: Dimension,
    >(
        &self,
        terms: &[(Coefficient<'_, T>, &DeviceArrayBase<S, D>)],
        out: &mut DeviceArrayBase<SZ, DZ>,
    ) -> Result<()> {
        combine(self.stream, terms, out)
    }
}

fn combine<T: Element, S: Storage<Elem = T>, D: Dimension, SZ: StorageMut<Elem = T>, DZ: Dimension>(
    stream: Option<&Stream>,
    terms: &[(Coefficient<'_, T>, &DeviceArrayBase<S, D>)],
    out: &mut DeviceArrayBase<SZ, DZ>,
) -> Result<()> {
    if terms.is_empty() {
        return Err(ArgumentError::NoArray {
            kernel: "gpu_linear_combination".into(),
            needs: "a linear combination (one term at least)",
        }
        .into());
    }
    let device: Vec<bool> = terms
        .iter()
        .map(|(c, _)| matches!(c, Coefficient::Device(_)))
        .collect();
    let k = kernel::<T>(&device)?;
    let mut args: Vec<KernelArg<'_>> = Vec::with_capacity(2 * terms.len() + 1);
    for (c, x) in terms {
        args.push(match c {
            Coefficient::Value(v) => KernelArg::scalar(*v),
            Coefficient::Device(a) => KernelArg::input(a),
        });
        args.push(KernelArg::input(*x));
    }
    args.push(KernelArg::output(out));
    OnStream::new(&*k, stream).launch(args)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpuarray::kernels::registry::{check_arch, compile_check};
    use crate::gpuarray::Variant;

    /// The kernels for each pattern of coefficients: numbers are scalars, device ones arrays.
    #[test]
    fn one_kernel_per_pattern() {
        let k = kernel::<f32>(&[false, true]).expect("a kernel");
        let src = k.source(Variant::Contiguous);
        assert!(src.contains("float a0, const float *__restrict__ x0__p"));
        assert!(src.contains("const float *__restrict__ a1__p"));
        assert!(src.contains("z = a0 * x0 + a1 * x1"));
        let again = kernel::<f32>(&[false, true]).expect("a kernel");
        assert!(Arc::ptr_eq(&k, &again));
        assert!(!Arc::ptr_eq(&k, &kernel::<f32>(&[true, true]).expect("a kernel")));
        // Compiled with NVRTC on the host, each variant a launch may run.
        for v in [Variant::Contiguous, Variant::Strided(1), Variant::Strided(2)] {
            let src = kernel::<f64>(&[true, false, true]).expect("a kernel").source(v);
            if let Err(e) = compile_check(&src, check_arch(&src)) {
                panic!("{v:?} does not compile: {e}\n{src}");
            }
        }
    }
}
