//! The kernels the array methods use (`fill`, copies, `astype`), defined once per operation
//! and element types and kept for the process: a launch finds its kernel by a small key (the
//! operation and the types), never by building or parsing its text again. Fills and copies
//! are of any [`ElementType`] (CUDA's vector types too); conversions are of numbers.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use crate::error::{Error, Result};
use crate::gpuarray::elements::array_element::ElementType;
use crate::gpuarray::elements::cast;
use crate::gpuarray::kernels::elementwise::ElementwiseKernel;

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

static KERNELS: Mutex<Option<HashMap<Key, Arc<ElementwiseKernel>>>> = Mutex::new(None);

/// The kernel of `op` from elements of `from` to elements of `to` (of numbers for
/// [`Builtin::Convert`], of one type for [`Builtin::Copy`]).
pub(crate) fn kernel(
    op: Builtin,
    from: impl Into<ElementType>,
    to: impl Into<ElementType>,
) -> Result<Arc<ElementwiseKernel>> {
    let key = (op, from.into(), to.into());
    let (from, to) = (key.1, key.2);
    let mut map = KERNELS.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(k) = map.as_ref().and_then(|m| m.get(&key)) {
        return Ok(k.clone());
    }
    let (t, f) = (to.c_name(), from.c_name());
    let k = match op {
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
    };
    let k = Arc::new(k);
    map.get_or_insert_with(HashMap::new).insert(key, k.clone());
    Ok(k)
}
