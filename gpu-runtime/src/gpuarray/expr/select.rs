//! `if_positive` (PyCUDA's) and `vdot` (NumPy's): an elementwise choice between two arrays and
//! the dot product of two arrays read as flat vectors.

use std::sync::Arc;

use crate::gpuarray::elements::dtype::DType;
use ndarray::Dimension;

use crate::error::{check_counts, Result};
use crate::gpuarray::array::core::{DeviceArray, DeviceArrayBase, Storage};
use crate::gpuarray::array::on_stream::{context_fns, OnStream};
use crate::gpuarray::elements::element::Element;
use crate::gpuarray::expr::core::undefined_error;
use crate::gpuarray::kernels::args::KernelArg;
use crate::gpuarray::kernels::elementwise::ElementwiseKernel;
use crate::gpuarray::kernels::registry::Definitions;

/// The kernels by (criterion, element) type.
static KERNELS: Definitions<(DType, DType), Arc<ElementwiseKernel>> = Definitions::new();

/// `z = c > 0 ? a : b` for criteria of `crit` and elements of `elem`, generated once per
/// process. A complex criterion has no sign: a typed error.
fn if_positive_kernel(crit: DType, elem: DType) -> Result<Arc<ElementwiseKernel>> {
    if crit.is_complex() {
        return Err(undefined_error("gpu_if_positive", "if_positive", crit.c_name()));
    }
    KERNELS.get_or_try_insert_with((crit, elem), || {
        let (c, t) = (crit.c_name(), elem.c_name());
        Ok(Arc::new(ElementwiseKernel::with_name(
            "gpu_if_positive",
            &format!("const {c} *c, const {t} *a, const {t} *b, {t} *z"),
            &format!("z = c > ({c})0 ? a : b"),
        )?))
    })
}

context_fns! {
    /// Where `criterion` is positive the element of `then`, elsewhere the one of `otherwise`
    /// (PyCUDA's `if_positive(criterion, then_, else_)`, NumPy's `where(criterion > 0, then,
    /// otherwise)`), in a new array; the three arrays have one shape (any layouts), and a NaN
    /// criterion is not positive. The result is in C order, or Fortran order when `then` is
    /// Fortran- and not C-contiguous.
    fn if_positive[
        C: Storage<Elem: Element>, S1: Storage<Elem: Element>, S2: Storage<Elem = S1::Elem>, D: Dimension
    ](
        &self,
        criterion: &DeviceArrayBase<C, D>,
        then: &DeviceArrayBase<S1, D>,
        otherwise: &DeviceArrayBase<S2, D>,
    ) -> Result<DeviceArray<S1::Elem, D>> {
        let mut out = DeviceArray::<S1::Elem, D>::empty_like(then)?;
        let k = if_positive_kernel(C::Elem::DTYPE, S1::Elem::DTYPE)?;
        let args = [
            KernelArg::input(criterion),
            KernelArg::input(then),
            KernelArg::input(otherwise),
            KernelArg::output(&mut out),
        ];
        OnStream::new(&*k, self.stream).launch(args)?;
        Ok(out)
    }
}

impl<S: Storage<Elem: Element>, D: Dimension> DeviceArrayBase<S, D> {
    /// The dot product of the two arrays read as flat vectors in C order (NumPy's `vdot`):
    /// their shapes may differ, their numbers of elements may not
    /// ([`ArrayShapeError::ElementCounts`](crate::error::ArrayShapeError::ElementCounts)).
    /// Accumulated in the element type, as [`dot`](Self::dot). Arrays of one shape are read in
    /// place; others are first copied into C order. Complex elements of the first array are
    /// conjugated, as NumPy's `vdot` does (and [`dot`](Self::dot) does not).
    pub fn vdot<S2: Storage<Elem = S::Elem>, D2: Dimension>(
        &self,
        other: &DeviceArrayBase<S2, D2>,
    ) -> Result<S::Elem> {
        check_counts("DeviceArray::vdot", self.len(), other.len())?;
        if self.shape() == other.shape() {
            let other = other.view().into_dyn();
            return self.view().into_dyn().conj_dot(&other);
        }
        self.ravel()?.conj_dot(&other.ravel()?)
    }
}
