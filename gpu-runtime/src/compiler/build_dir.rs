//! Build directories for compiles whose files are kept or that run a compiler program.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::error::{Error, Result};

/// A fresh directory under the system's temporary directory.
pub(crate) fn make_build_dir() -> Result<PathBuf> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let base = std::env::temp_dir();
    loop {
        let dir = base.join(format!(
            "gpu-runtime-build-{}-{}",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        ));
        match std::fs::create_dir(&dir) {
            Ok(()) => return Ok(dir),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(source) => {
                return Err(Error::Io {
                    action: "create the build directory",
                    path: dir.display().to_string(),
                    source,
                })
            }
        }
    }
}
