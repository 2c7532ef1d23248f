//! Version queries and explicit initialisation (PyCUDA's `get_version`, `get_driver_version`
//! and `init`).

use cudarc::driver::sys;

use crate::error::Result;

/// This crate's version, e.g. `"0.1.0"`.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// This crate's version as `(major, minor, patch)`.
pub fn version() -> (u32, u32, u32) {
    let mut parts = VERSION.split('.').map(|p| {
        p.split(|c: char| !c.is_ascii_digit())
            .next()
            .unwrap_or("0")
            .parse()
            .unwrap_or(0)
    });
    let mut next = || parts.next().unwrap_or(0);
    (next(), next(), next())
}

/// The CUDA version whose driver API this crate is built against, as `(major, minor)`: what
/// PyCUDA's `get_version` reports. The installed driver must be at least this new
/// ([`driver_version`](crate::driver::driver_version)).
pub fn cuda_version() -> (u32, u32) {
    (sys::CUDA_VERSION / 1000, (sys::CUDA_VERSION % 1000) / 10)
}

/// Loads and initialises the CUDA driver (PyCUDA's `init`).
///
/// Optional: every function that needs the driver initialises it on first use. Calling it
/// early turns a missing driver or GPU into an error at a time of your choosing.
pub fn init() -> Result<()> {
    crate::driver::init::ensure()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_come_from_the_manifest_and_the_bindings() {
        let (major, minor, patch) = version();
        assert_eq!(
            format!("{major}.{minor}.{patch}"),
            format!(
                "{}.{}.{}",
                env!("CARGO_PKG_VERSION_MAJOR"),
                env!("CARGO_PKG_VERSION_MINOR"),
                env!("CARGO_PKG_VERSION_PATCH")
            )
        );
        assert_eq!(cuda_version(), (13, 0));
    }
}
