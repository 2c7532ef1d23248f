//! Kernel faults. A kernel that writes to a bad address, traps or fails an `assert` leaves the
//! driver failing every later call with the same "sticky" error, in every context and on every
//! device of the process (seen on CUDA 13 / driver 580: another context of the same H100, and
//! the context of a second, NVLinked H200). The first such error is recorded here, once for
//! the process, and from then on every call is refused before it reaches the driver
//! ([`Error::ContextPoisoned`]), also in contexts made afterwards.

use std::sync::OnceLock;

use crate::driver::calls;
use crate::error::Error;

/// A sticky error, as first reported.
#[derive(Clone)]
pub(crate) struct Fault {
    device: usize,
    call: &'static str,
    code: u32,
    name: String,
    description: String,
}

/// The first kernel fault of the process, once there was one.
static PROCESS_FAULT: OnceLock<Fault> = OnceLock::new();

/// The fault that broke the process's contexts, if one did (one atomic load).
#[inline]
pub(crate) fn process_fault() -> Option<&'static Fault> {
    PROCESS_FAULT.get()
}

/// Records a sticky error reported by `call` on the context current on this thread (cold:
/// errors only). Only the first is kept: it is the one every later refusal names.
#[cold]
pub(crate) fn record_fault(call: &'static str, code: u32, name: &str, description: &str) {
    let fault = Fault {
        device: current_device().unwrap_or(0),
        call,
        code,
        name: name.to_owned(),
        description: description.to_owned(),
    };
    let _ = PROCESS_FAULT.set(fault);
}

/// The ordinal of the device of the context current on this thread.
fn current_device() -> Option<usize> {
    // The driver is loaded: a driver call just reported an error.
    let dev = calls::ctx_get_device().ok()?;
    let count = calls::device_get_count().ok()?;
    (0..count).position(|ordinal| calls::device_get(ordinal).is_ok_and(|d| d == dev))
}

impl Fault {
    /// The refusal of a call after this fault.
    #[cold]
    pub(crate) fn error(&self) -> Error {
        Error::ContextPoisoned {
            device: self.device,
            first_call: self.call,
            first_code: self.code,
            first_name: self.name.clone(),
            first_description: self.description.clone(),
        }
    }
}

/// Refuses a call once the process has faulted: the driver would fail it.
#[inline]
pub(crate) fn refuse_after_fault() -> Result<(), Error> {
    match process_fault() {
        Some(f) => Err(f.error()),
        None => Ok(()),
    }
}
