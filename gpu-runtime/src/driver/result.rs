//! Driver results as typed errors: every failed driver call of the crate becomes an [`Error`]
//! through [`driver_error`] (`?` on the [`Failed`] of a thin function of
//! [`calls`](super::calls), cudarc's `result` layer here), which names the call, describes the
//! code in the driver's words, and records a kernel fault ([`fault`](super::fault)).

use cudarc::driver::sys::CUresult;

use crate::driver::calls::{self, Failed};
use crate::driver::fault::record_fault;
use crate::error::{is_sticky, Error};

impl From<Failed> for Error {
    #[cold]
    fn from(f: Failed) -> Error {
        driver_error(f.call, f.code)
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
        calls::get_error_string(code)
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
