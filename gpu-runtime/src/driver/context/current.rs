//! The calling thread's current context, set only when it is not already the one wanted (one
//! `cuCtxGetCurrent` on the usual path).

use cudarc::driver::sys;

use crate::driver::result::check;
use crate::error::Result;

/// Makes `raw` current on the calling thread, if it is not already. `raw` must be a live
/// context: what [`Context::bind`] does, for owners that hold the handle without the `Context`.
#[inline]
pub(crate) fn bind_raw(raw: sys::CUcontext) -> Result<()> {
    let mut current = std::ptr::null_mut();
    // SAFETY: valid out-pointer.
    check("cuCtxGetCurrent", unsafe { sys::cuCtxGetCurrent(&mut current) })?;
    if current != raw {
        // SAFETY: the caller holds raw alive.
        check("cuCtxSetCurrent", unsafe { sys::cuCtxSetCurrent(raw) })?;
    }
    Ok(())
}
