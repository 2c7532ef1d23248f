//! The raw communicator handle of one rank, and its end: aborted or destroyed, once.

use std::cell::Cell;

use cudarc::nccl::sys::{self, ncclComm_t, ncclResult_t};

use crate::nccl::error::{NcclError, Result};
use crate::nccl::result::{check, nccl_error, Status};

/// An `ncclComm_t` and its rank; null once aborted or destroyed, after which every use is
/// [`NcclError::Aborted`](crate::nccl::NcclError::Aborted).
///
/// A `Cell`, so that a communicator shared by reference (in a group, or by the ranks of one
/// process) can be aborted by whichever call finds it failed; it makes the owner `!Sync`,
/// which is what NCCL asks: one thread at a time per communicator.
pub(crate) struct Handle {
    raw: Cell<ncclComm_t>,
    rank: usize,
}

impl Handle {
    /// Owns `raw`, a communicator NCCL made (possibly still joining: see `wait`).
    pub(crate) fn new(raw: ncclComm_t, rank: usize) -> Handle {
        Handle {
            raw: Cell::new(raw),
            rank,
        }
    }

    /// The same communicator as another rank: the handle moves into the new value.
    pub(crate) fn with_rank(self, rank: usize) -> Handle {
        Handle::new(self.raw.replace(std::ptr::null_mut()), rank)
    }

    /// The handle, or [`NcclError::Aborted`](crate::nccl::NcclError::Aborted) naming `operation` once it is gone.
    pub(crate) fn get(&self, operation: &'static str) -> Result<ncclComm_t> {
        let raw = self.raw.get();
        if raw.is_null() {
            return Err(NcclError::Aborted {
                operation,
                rank: self.rank,
            });
        }
        Ok(raw)
    }

    /// The handle, or null once it is gone.
    pub(crate) fn raw(&self) -> ncclComm_t {
        self.raw.get()
    }

    /// The rank this handle is.
    pub(crate) fn rank(&self) -> usize {
        self.rank
    }

    /// The communicator's state (`ncclCommGetAsyncError`): done, still in progress (joining,
    /// queuing a call, finalizing), or the error that broke it. Polling it is also what lets a
    /// nonblocking communicator's background work be joined.
    pub(crate) fn state(&self) -> Result<Status> {
        let raw = self.get("ncclCommGetAsyncError")?;
        let mut state = ncclResult_t::ncclSuccess;
        // SAFETY: `raw` is a live communicator; `state` is a valid out-pointer.
        check("ncclCommGetAsyncError", unsafe {
            sys::ncclCommGetAsyncError(raw, &mut state)
        })?;
        match state {
            ncclResult_t::ncclSuccess => Ok(Status::Done),
            ncclResult_t::ncclInProgress => Ok(Status::InProgress),
            code => Err(nccl_error("ncclCommGetAsyncError", code)),
        }
    }

    /// Aborts the communicator (`ncclCommAbort`): NCCL's kernels of it stop, its resources are
    /// freed, and the handle is gone. Nothing to do when it is already gone.
    pub(crate) fn abort(&self) -> Result<()> {
        let raw = self.raw.replace(std::ptr::null_mut());
        if raw.is_null() {
            return Ok(());
        }
        // SAFETY: `raw` is live and, swapped out above, ends here once.
        check("ncclCommAbort", unsafe { sys::ncclCommAbort(raw) }).map(drop)
    }

    /// Destroys a finalized communicator (`ncclCommDestroy`); the handle is gone.
    pub(crate) fn destroy(&self) -> Result<()> {
        let raw = self.raw.replace(std::ptr::null_mut());
        if raw.is_null() {
            return Ok(());
        }
        // SAFETY: `raw` is live and finalized, and, swapped out above, ends here once.
        check("ncclCommDestroy", unsafe { sys::ncclCommDestroy(raw) }).map(drop)
    }
}

impl Drop for Handle {
    /// A handle not ended by its owner (a constructor that failed halfway) is aborted: abort
    /// never waits for other ranks.
    fn drop(&mut self) {
        let _ = self.abort();
    }
}
