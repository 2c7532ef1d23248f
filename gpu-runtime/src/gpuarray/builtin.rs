//! The kernels the array methods use (`fill`, copies, `astype`), defined once per operation
//! and element types and kept for the process: a launch finds its kernel by a small key (the
//! operation and the types), never by building or parsing its text again.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use crate::error::Result;
use crate::gpuarray::cast;
use crate::gpuarray::dtype::DType;
use crate::gpuarray::elementwise::ElementwiseKernel;

/// An operation the crate generates a kernel for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Builtin {
    /// `z = v`.
    Fill,
    /// `z = (Z)x`: copies and conversions.
    Convert,
}

type Key = (Builtin, DType, DType);

static KERNELS: Mutex<Option<HashMap<Key, Arc<ElementwiseKernel>>>> = Mutex::new(None);

/// The kernel of `op` from elements of `from` to elements of `to`.
pub(crate) fn kernel(op: Builtin, from: DType, to: DType) -> Result<Arc<ElementwiseKernel>> {
    let key = (op, from, to);
    let mut map = KERNELS.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(k) = map.as_ref().and_then(|m| m.get(&key)) {
        return Ok(k.clone());
    }
    let (t, f) = (to.c_name(), from.c_name());
    let k = match op {
        Builtin::Fill => ElementwiseKernel::with_name("gpu_fill", &format!("{t} v, {t} *z"), "z = v")?,
        Builtin::Convert => ElementwiseKernel::with_name(
            "gpu_convert",
            &format!("const {f} *x, {t} *z"),
            &format!("z = {}", cast::convert_c(from, to, "x")),
        )?,
    };
    let k = Arc::new(k);
    map.get_or_insert_with(HashMap::new).insert(key, k.clone());
    Ok(k)
}
