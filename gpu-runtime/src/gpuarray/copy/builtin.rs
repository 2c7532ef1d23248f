//! The kernels the array methods use (`fill`, copies, `astype`), defined once per operation
//! and element types and kept for the process: a launch finds its kernel by a small key (the
//! operation and the types), never by building or parsing its text again. Fills and copies
//! are of any [`ElementType`] (CUDA's vector types too); conversions are of numbers.

use std::sync::Arc;

use crate::error::{Error, Result};
use crate::gpuarray::elements::array_element::ElementType;
use crate::gpuarray::elements::cast;
use crate::gpuarray::kernels::elementwise::ElementwiseKernel;
use crate::gpuarray::kernels::registry::Definitions;

/// An operation the crate generates a kernel for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Builtin {
    /// `z = v`.
    Fill,
    /// `z = (Z)x`: copies and conversions of numbers.
    Convert,
    /// `z = x`: copies of elements of one type, numbers or not (a vector type has no C
    /// conversion).
    Copy,
}

type Key = (Builtin, ElementType, ElementType);

static KERNELS: Definitions<Key, Arc<ElementwiseKernel>> = Definitions::new();

/// The kernel of `op` from elements of `from` to elements of `to` (of numbers for
/// [`Builtin::Convert`], of one type for [`Builtin::Copy`]).
pub(crate) fn kernel(
    op: Builtin,
    from: impl Into<ElementType>,
    to: impl Into<ElementType>,
) -> Result<Arc<ElementwiseKernel>> {
    let (from, to) = (from.into(), to.into());
    KERNELS.get_or_try_insert_with((op, from, to), || define(op, from, to).map(Arc::new))
}

/// The kernel of `op` from elements of `from` to elements of `to`, written anew.
fn define(op: Builtin, from: ElementType, to: ElementType) -> Result<ElementwiseKernel> {
    let (t, f) = (to.c_name(), from.c_name());
    Ok(match op {
        Builtin::Fill => ElementwiseKernel::with_name("gpu_fill", &format!("{t} v, {t} *z"), "z = v")?,
        Builtin::Convert => {
            let (Some(from), Some(to)) = (from.number(), to.number()) else {
                return Err(Error::Internal {
                    operation: "builtin::kernel",
                    broken: "a conversion between elements that are no numbers",
                });
            };
            ElementwiseKernel::with_name(
                "gpu_convert",
                &format!("const {f} *x, {t} *z"),
                &format!("z = {}", cast::convert_c(from, to, "x")),
            )?
        }
        Builtin::Copy if from == to => {
            ElementwiseKernel::with_name("gpu_copy", &format!("const {f} *x, {t} *z"), "z = x")?
        }
        Builtin::Copy => {
            return Err(Error::Internal {
                operation: "builtin::kernel",
                broken: "a copy between elements of two types",
            })
        }
    })
}
