//! NCCL results as this crate's errors.

use std::ffi::CStr;

use cudarc::nccl::sys::{self, ncclResult_t};

use crate::nccl::error::{NcclError, Result};

/// What a successful NCCL call says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Status {
    /// Done: the work is queued on its stream (or the communicator is ready).
    Done,
    /// Still being done by NCCL's own thread, as a nonblocking communicator's calls may be:
    /// poll `ncclCommGetAsyncError` until it says otherwise (see `wait`).
    InProgress,
}

/// The result of the NCCL call `call`.
pub(crate) fn check(call: &'static str, result: ncclResult_t) -> Result<Status> {
    match result {
        ncclResult_t::ncclSuccess => Ok(Status::Done),
        ncclResult_t::ncclInProgress => Ok(Status::InProgress),
        code => Err(nccl_error(call, code)),
    }
}

/// [`NcclError::Call`] for `code`, returned by `call`: the code's name, NCCL's description of it,
/// and NCCL's last detailed message on this thread.
pub(crate) fn nccl_error(call: &'static str, code: ncclResult_t) -> NcclError {
    // SAFETY: NCCL is loaded (every path here starts from a loaded library); both return
    // static or thread-local strings, NUL-terminated, or null.
    let (description, last) = unsafe {
        (
            c_text(sys::ncclGetErrorString(code)),
            c_text(sys::ncclGetLastError(std::ptr::null_mut())),
        )
    };
    let mut message = format!("{}: {description}", name(code));
    if !last.is_empty() {
        message.push_str("; NCCL's last message: ");
        message.push_str(last.trim_end());
    }
    NcclError::Call {
        call,
        code: code as u32,
        message,
    }
}

/// The text of a C string NCCL returned, empty for null.
///
/// # Safety
/// `p` is null or a NUL-terminated string that lives through this call.
unsafe fn c_text(p: *const std::ffi::c_char) -> String {
    if p.is_null() {
        return String::new();
    }
    // SAFETY: the caller promises a live NUL-terminated string.
    unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
}

/// The name of an `ncclResult_t`, as NCCL's header spells it.
pub(crate) fn name(code: ncclResult_t) -> &'static str {
    match code {
        ncclResult_t::ncclSuccess => "ncclSuccess",
        ncclResult_t::ncclUnhandledCudaError => "ncclUnhandledCudaError",
        ncclResult_t::ncclSystemError => "ncclSystemError",
        ncclResult_t::ncclInternalError => "ncclInternalError",
        ncclResult_t::ncclInvalidArgument => "ncclInvalidArgument",
        ncclResult_t::ncclInvalidUsage => "ncclInvalidUsage",
        ncclResult_t::ncclRemoteError => "ncclRemoteError",
        ncclResult_t::ncclInProgress => "ncclInProgress",
        ncclResult_t::ncclTimeout => "ncclTimeout",
        ncclResult_t::ncclNumResults => "ncclNumResults",
    }
}
