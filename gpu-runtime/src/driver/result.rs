//! Driver results as typed errors (what cudarc calls its `result` layer): every driver call of
//! the crate goes through [`check`], which names the call, describes the code in the driver's
//! words, and records a kernel fault ([`fault`](super::context::fault)).

use cudarc::driver::sys::CUresult;

use crate::driver::context::fault::record_fault;
use crate::error::{is_sticky, Error, Result};

/// Turns a `CUresult` into `Result<()>`, naming the call that produced it.
#[inline]
pub(crate) fn check(call: &'static str, code: CUresult) -> Result<()> {
    if code == CUresult::CUDA_SUCCESS {
        Ok(())
    } else {
        Err(driver_error(call, code))
    }
}

/// A driver call that failed, before it becomes an [`Error`]: what the thin functions of
/// [`calls`](super::calls) return, so that a caller with its own reading of a code (a capture's
/// failure, an event not ready yet, a query whose failure only means "unknown") sees the code
/// itself. `?` turns it into the [`Error`] [`check`] would have made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Failed {
    /// The call, named as in errors (without the `_v2` of its symbol).
    pub(crate) call: &'static str,
    pub(crate) code: CUresult,
}

impl From<Failed> for Error {
    #[cold]
    fn from(f: Failed) -> Error {
        driver_error(f.call, f.code)
    }
}

/// Turns a `CUresult` into `Result<(), Failed>`, naming the call that produced it; the
/// [`calls`](super::calls) counterpart of [`check`].
#[inline(always)]
pub(crate) fn result(call: &'static str, code: CUresult) -> std::result::Result<(), Failed> {
    if code == CUresult::CUDA_SUCCESS {
        Ok(())
    } else {
        Err(Failed { call, code })
    }
}

/// [`Error::Driver`] for a failed driver call; a sticky error is recorded as the process's
/// fault.
#[cold]
pub(crate) fn driver_error(call: &'static str, code: CUresult) -> Error {
    // The enum's variant name is the driver's symbolic name; asking the driver for its
    // description is only possible when its library can be loaded (a failed call proves it
    // was; errors made up without a call, in tests without a GPU, may come without it).
    let name = format!("{code:?}");
    // SAFETY: only tries to dlopen the library by name.
    let description = if unsafe { cudarc::driver::sys::is_culib_present() } {
        cudarc::driver::DriverError(code)
            .error_string()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|_| "unknown error".to_owned())
    } else {
        "the CUDA driver is not loaded".to_owned()
    };
    if is_sticky(code as u32) {
        record_fault(call, code as u32, &name, &description);
    }
    Error::Driver {
        call,
        code: code as u32,
        name,
        description,
    }
}
