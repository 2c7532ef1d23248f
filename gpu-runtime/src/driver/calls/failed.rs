//! What every thin function returns: the call and its code when the driver refuses.

use cudarc::driver::sys::CUresult;

/// A driver call that failed, before it becomes an [`Error`](crate::error::Error): what the
/// thin functions of [`calls`](super) return, so that a caller with its own reading of a code
/// (a capture's failure, an event not ready yet, a query whose failure only means "unknown")
/// sees the code itself. `?` turns it into the error
/// [`driver_error`](crate::driver::result::driver_error) makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Failed {
    /// The call, named as in errors (without the `_v2` of its symbol).
    pub(crate) call: &'static str,
    pub(crate) code: CUresult,
}

/// Turns a `CUresult` into `Result<(), Failed>`, naming the call that produced it.
#[inline(always)]
pub(crate) fn result(call: &'static str, code: CUresult) -> std::result::Result<(), Failed> {
    if code == CUresult::CUDA_SUCCESS {
        Ok(())
    } else {
        Err(Failed { call, code })
    }
}

/// Calls the driver with a pointer to an out-value that starts as `init`, and returns what it
/// wrote there: the shape of every thin function that turns an out-pointer into its result.
#[inline(always)]
pub(crate) fn out<T>(
    call: &'static str,
    init: T,
    f: impl FnOnce(&mut T) -> CUresult,
) -> std::result::Result<T, Failed> {
    let mut value = init;
    result(call, f(&mut value))?;
    Ok(value)
}
