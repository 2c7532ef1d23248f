//! CuPy beside the array rows: each section runs its own script in a `python3` subprocess,
//! when CuPy is importable on the machine.

use std::process::Command;

/// Whether `python3 -c "import cupy"` succeeds here.
pub fn importable() -> bool {
    Command::new("python3")
        .args(["-c", "import cupy"])
        .output()
        .is_ok_and(|probe| probe.status.success())
}
