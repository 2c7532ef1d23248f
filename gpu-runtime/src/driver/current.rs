//! The calling thread's current context, set only when it is not already the one wanted (one
//! `cuCtxGetCurrent` on the usual path). Below [`context`](super::context): the owners of raw
//! handles (ordering's streams and releases, staged launches, DLPack) bind with it too.

use cudarc::driver::sys;

use crate::driver::calls;
use crate::error::Result;

/// Makes `raw` current on the calling thread, if it is not already. `raw` must be a live
/// context: what [`Context::bind`](crate::Context::bind) does, for owners that hold the handle
/// without the `Context`.
#[inline]
pub(crate) fn bind_raw(raw: sys::CUcontext) -> Result<()> {
    if calls::ctx_get_current()? != raw {
        // SAFETY: the caller holds raw alive.
        unsafe { calls::ctx_set_current(raw) }?;
    }
    Ok(())
}
