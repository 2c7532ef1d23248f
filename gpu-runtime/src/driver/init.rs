//! Loading the CUDA driver library once, and initialising it.
//!
//! cudarc loads `libcuda.so` lazily and panics when it is missing; every entry point of this
//! crate that talks to the driver goes through [`ensure`] first, which turns a missing library
//! or a machine without devices into an [`Error`] instead.

use std::sync::OnceLock;

use cudarc::driver::sys::{self, CUresult};

use crate::driver::calls::{self, Failed};
use crate::error::{Error, Result};

static INIT: OnceLock<std::result::Result<(), InitFailure>> = OnceLock::new();

#[derive(Clone, Copy, Debug)]
enum InitFailure {
    NotFound,
    NoDevice,
    Failed(CUresult),
}

/// Loads and initialises the driver on first use; later calls cost one atomic load.
pub(crate) fn ensure() -> Result<()> {
    let state = INIT.get_or_init(|| {
        // SAFETY: is_culib_present only tries to dlopen the library by name.
        if !unsafe { sys::is_culib_present() } {
            return Err(InitFailure::NotFound);
        }
        // The library is present, so cudarc's lazy symbol lookup succeeds.
        match calls::init(0) {
            Ok(()) => Ok(()),
            Err(Failed {
                code: CUresult::CUDA_ERROR_NO_DEVICE,
                ..
            }) => Err(InitFailure::NoDevice),
            Err(Failed { code, .. }) => Err(InitFailure::Failed(code)),
        }
    });
    match *state {
        Ok(()) => Ok(()),
        Err(InitFailure::NotFound) => Err(Error::DriverNotFound),
        Err(InitFailure::NoDevice) => Err(Error::NoDevice),
        Err(InitFailure::Failed(code)) => Err(crate::driver::result::driver_error("cuInit", code)),
    }
}

/// The driver's CUDA version as `(major, minor)`, e.g. `(13, 0)`.
pub fn driver_version() -> Result<(u32, u32)> {
    ensure()?;
    let v = calls::driver_get_version()?;
    Ok(((v / 1000) as u32, ((v % 1000) / 10) as u32))
}
