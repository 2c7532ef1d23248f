//! NumPy's `copyto(dst, src, where=mask)`: `src` broadcast to `dst`'s shape (after its
//! leading axes of length 1 beyond `dst`'s are dropped, as NumPy drops them), converted to
//! `dst`'s element type, and written where the mask holds. Without a mask, `assign`'s copy;
//! with one, one elementwise kernel that keeps `dst`'s element where the mask is false.

use std::sync::Arc;

use ndarray::{Dimension, IxDyn};

use crate::driver::stream::Stream;
use crate::error::{ArrayShapeError, Result};
use crate::gpuarray::array::core::{DeviceArrayBase, DeviceArrayView, Storage, StorageMut};
use crate::gpuarray::array::on_stream::OnStream;
use crate::gpuarray::elements::boolean::Bool;
use crate::gpuarray::elements::cast::convert_c;
use crate::gpuarray::elements::dtype::DType;
use crate::gpuarray::elements::element::Element;
use crate::gpuarray::kernels::args::KernelArg;
use crate::gpuarray::kernels::elementwise::ElementwiseKernel;
use crate::gpuarray::kernels::registry::Definitions;

static KERNELS: Definitions<(DType, DType), Arc<ElementwiseKernel>> = Definitions::new();

/// `if (c) dst = src`, converting elements of `from` to `to`.
fn kernel(from: DType, to: DType) -> Result<Arc<ElementwiseKernel>> {
    KERNELS.get_or_try_insert_with((from, to), || {
        Ok(Arc::new(ElementwiseKernel::with_name(
            "gpu_copyto_where",
            &format!(
                "const bool *c, const {} *src, {} *dst",
                from.c_name(),
                to.c_name()
            ),
            &format!("if (c) dst = {}", convert_c(from, to, "src")),
        )?))
    })
}

/// Copies `src` into `dst` (NumPy's `copyto(dst, src)`): `src` broadcasts to `dst`'s shape
/// (leading axes of length 1 beyond `dst`'s are dropped first), and each element is converted
/// to `dst`'s type as C converts it (NumPy's `casting='unsafe'`; NumPy's default refuses a
/// conversion that loses kind, such as float to integer). Shapes that do not broadcast are
/// [`ArrayShapeError::OutputShape`] or [`ArrayShapeError::Broadcast`].
///
/// ```no_run
/// use gpu_runtime::gpuarray::{self, DeviceArray};
/// use gpu_runtime::ndarray::arr2;
/// let ctx = gpu_runtime::Context::default()?;
/// let mut dst = DeviceArray::<f64, _>::zeros(&ctx, (2, 3))?;
/// let row = DeviceArray::from_ndarray(&ctx, &arr2(&[[1i32, 2, 3]]))?;
/// gpuarray::copyto(&mut dst, &row)?;
/// assert_eq!(dst.to_vec()?, [1.0, 2.0, 3.0, 1.0, 2.0, 3.0]);
/// # Ok::<(), gpu_runtime::Error>(())
/// ```
pub fn copyto<S, D, S2, D2>(dst: &mut DeviceArrayBase<S, D>, src: &DeviceArrayBase<S2, D2>) -> Result<()>
where
    S: StorageMut<Elem: Element>,
    D: Dimension,
    S2: Storage<Elem: Element>,
    D2: Dimension,
{
    copyto_stream(dst, src, None, None)
}

/// [`copyto`] of the elements where `mask` (broadcast to `dst`'s shape likewise) is true; the
/// others keep their values (NumPy's `copyto(dst, src, where=mask)`).
pub fn copyto_where<S, D, S2, D2, SM, DM>(
    dst: &mut DeviceArrayBase<S, D>,
    src: &DeviceArrayBase<S2, D2>,
    mask: &DeviceArrayBase<SM, DM>,
) -> Result<()>
where
    S: StorageMut<Elem: Element>,
    D: Dimension,
    S2: Storage<Elem: Element>,
    D2: Dimension,
    SM: Storage<Elem = Bool>,
    DM: Dimension,
{
    copyto_stream(dst, src, Some(mask.view().into_dyn()), None)
}

impl<S: StorageMut<Elem: Element>, D: Dimension> OnStream<'_, &mut DeviceArrayBase<S, D>> {
    /// [`copyto`] into this array, on this stream.
    pub fn copyto<S2: Storage<Elem: Element>, D2: Dimension>(
        &mut self,
        src: &DeviceArrayBase<S2, D2>,
    ) -> Result<()> {
        copyto_stream(self.target, src, None, self.stream)
    }

    /// [`copyto_where`] into this array, on this stream.
    pub fn copyto_where<
        S2: Storage<Elem: Element>,
        D2: Dimension,
        SM: Storage<Elem = Bool>,
        DM: Dimension,
    >(
        &mut self,
        src: &DeviceArrayBase<S2, D2>,
        mask: &DeviceArrayBase<SM, DM>,
    ) -> Result<()> {
        copyto_stream(self.target, src, Some(mask.view().into_dyn()), self.stream)
    }
}

/// `a` without the leading axes of length 1 that make it longer than `ndim` axes (NumPy
/// drops them before broadcasting into `copyto`'s destination).
fn squeezed<'a, T: Element>(
    a: DeviceArrayView<'a, T, IxDyn>,
    ndim: usize,
    dst_shape: &[usize],
) -> Result<DeviceArrayView<'a, T, IxDyn>> {
    let mut a = a;
    while a.ndim() > ndim {
        if a.shape()[0] != 1 {
            return Err(ArrayShapeError::Broadcast {
                shape: dst_shape.to_vec(),
                other: a.shape().to_vec(),
            }
            .into());
        }
        a = a.squeeze_axis(0)?;
    }
    Ok(a)
}

fn copyto_stream<S, D, S2, D2>(
    dst: &mut DeviceArrayBase<S, D>,
    src: &DeviceArrayBase<S2, D2>,
    mask: Option<DeviceArrayView<'_, Bool, IxDyn>>,
    stream: Option<&Stream>,
) -> Result<()>
where
    S: StorageMut<Elem: Element>,
    D: Dimension,
    S2: Storage<Elem: Element>,
    D2: Dimension,
{
    let (nd, shape) = (dst.ndim(), dst.shape().to_vec());
    let src = squeezed(src.view().into_dyn(), nd, &shape)?;
    let Some(mask) = mask else {
        return OnStream::new(dst, stream).assign(&src);
    };
    let mask = squeezed(mask, nd, &shape)?;
    let k = kernel(S2::Elem::DTYPE, S::Elem::DTYPE)?;
    let args = [
        KernelArg::input(&mask),
        KernelArg::input(&src),
        KernelArg::output(dst),
    ];
    OnStream::new(&*k, stream).launch(args)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_masked_copies_compile_from_and_to_every_element_type() {
        // Every type into `f32` and `Complex64`, and from them into every type: each side of
        // the conversion table (`elements/cast.rs`, tested pair by pair there) meets the mask.
        let pairs = DType::ALL.into_iter().flat_map(|t| {
            [
                (t, DType::F32),
                (DType::F32, t),
                (DType::Complex64, t),
                (t, DType::Complex64),
            ]
        });
        for (from, to) in pairs {
            {
                let k = kernel(from, to).unwrap();
                let source = k.source(gpu_cuda_source::elementwise::Variant::Strided(2));
                if let Err(e) = crate::gpuarray::kernels::registry::compile_check(&source, "sm_90") {
                    panic!("copyto {from:?} -> {to:?}: {e}");
                }
            }
        }
    }
}
