//! Finding libnccl before the first NCCL call.
//!
//! cudarc binds NCCL dynamically and *panics* on the first call when the library cannot be
//! opened. So every entry point of this module that leads to an NCCL call ([`UniqueId::new`],
//! the communicator constructors, [`version`]) first opens the library here under the names
//! cudarc tries, and returns [`NcclError::NotFound`] when none opens. cudarc opens it by name
//! only (`libnccl.so`, `libnccl.so.13`, ..., never `libnccl.so.2`, NCCL's soname), through the
//! loader's search: `LD_LIBRARY_PATH` as it was when the process started, the `ld.so` cache,
//! `/lib` and `/usr/lib`. Where that fails, the directories NCCL is usually installed in are
//! searched only to say, in the error, what was found and what to do.
//!
//! [`UniqueId::new`]: crate::nccl::UniqueId::new

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use crate::driver::library::{open_checked, Unusable};
use crate::nccl::error::{NcclError, Result};

/// How to install NCCL, for the error.
const INSTALL: &str = "install NCCL: `pip install nvidia-nccl-cu13`, then make a symlink libnccl.so -> libnccl.so.2 in its nvidia/nccl/lib directory and put that directory on LD_LIBRARY_PATH before starting the program (in this repository `source scripts/nvrtc-env.sh` does all of it), or install the system packages (libnccl2 and libnccl-dev)";

/// Every NCCL function this module calls (all there since NCCL 2.18).
const SYMBOLS: &[&str] = &[
    "ncclGetVersion",
    "ncclGetUniqueId",
    "ncclGetErrorString",
    "ncclGetLastError",
    "ncclCommInitRankConfig",
    "ncclCommSplit",
    "ncclCommGetAsyncError",
    "ncclCommUserRank",
    "ncclCommCount",
    "ncclCommFinalize",
    "ncclCommDestroy",
    "ncclCommAbort",
    "ncclGroupStart",
    "ncclGroupEnd",
    "ncclAllReduce",
    "ncclBroadcast",
    "ncclReduce",
    "ncclAllGather",
    "ncclReduceScatter",
    "ncclSend",
    "ncclRecv",
];

/// The outcome of the one search of the process: the error's `tried` and `hint` on failure.
static FOUND: OnceLock<std::result::Result<(), (String, String)>> = OnceLock::new();

/// Ok once libnccl opens under one of the names cudarc tries (searched once per process).
pub(crate) fn ensure_loaded() -> Result<()> {
    FOUND
        .get_or_init(|| find(&cudarc::get_lib_name_candidates("nccl"), &diagnostic_dirs()))
        .clone()
        .map_err(|(tried, hint)| NcclError::NotFound { tried, hint })
}

/// True when NCCL can be loaded: the functions of this module will not fail with
/// [`NcclError::NotFound`].
pub fn is_available() -> bool {
    ensure_loaded().is_ok()
}

/// The version of the NCCL library loaded, as `(major, minor, patch)`, e.g. `(2, 28, 9)`.
pub fn version() -> Result<(u32, u32, u32)> {
    ensure_loaded()?;
    let code = cudarc::nccl::result::get_nccl_version()
        .map_err(|e| crate::nccl::result::nccl_error("ncclGetVersion", e.0))?;
    let code = u32::try_from(code).unwrap_or(0);
    // NCCL_VERSION(X, Y, Z) is X*1000 + Y*100 + Z up to 2.8, X*10000 + Y*100 + Z since 2.9.
    Ok(if code >= 10000 {
        (code / 10000, code / 100 % 100, code % 100)
    } else {
        (code / 1000, code / 100 % 10, code % 100)
    })
}

/// Opens the first of `names` that the loader finds, with every function this module calls
/// ([`open_checked`]). On failure, the `tried` and `hint` of [`NcclError::NotFound`], from what
/// `dirs` hold.
fn find(names: &[String], dirs: &[PathBuf]) -> std::result::Result<(), (String, String)> {
    match open_checked(names, SYMBOLS) {
        Ok(()) => Ok(()),
        // cudarc would panic at the first call of a missing function: an NCCL too old for
        // this module is refused here instead.
        Err(Unusable::Lacks { name, missing }) => {
            let hint = format!(
                "{name} lacks {}, which this module calls: it needs NCCL 2.18 or newer; install a newer NCCL (`pip install nvidia-nccl-cu13`)",
                missing.join(", ")
            );
            Err((name, hint))
        }
        Err(Unusable::NotFound { tried }) => {
            let tried = format!(
                "{} through the loader's search (LD_LIBRARY_PATH, the ld.so cache, /lib and /usr/lib), then looked for libnccl.so* in {}",
                tried.join(", "),
                dirs.iter().map(|d| d.display().to_string()).collect::<Vec<_>>().join(", ")
            );
            Err((tried, hint(dirs)))
        }
    }
}

/// What to do, from what is there: NCCL on the loader's path under its soname only, NCCL in a
/// directory off the loader's path, or no NCCL.
fn hint(dirs: &[PathBuf]) -> String {
    // SAFETY: as in `find`; a library that opens here is closed again right away.
    if unsafe { libloading::Library::new("libnccl.so.2") }.is_ok() {
        return "libnccl.so.2 is on the loader's path, but cudarc opens only the names above: make a symlink libnccl.so -> libnccl.so.2 in a directory on LD_LIBRARY_PATH (in this repository `source scripts/nvrtc-env.sh` does)".to_owned();
    }
    match dirs.iter().find_map(|d| nccl_in(d)) {
        Some(path) => {
            let path = std::fs::canonicalize(&path).unwrap_or(path);
            format!(
                "{} exists but the loader does not search its directory: make a symlink libnccl.so -> {} there (unless it is libnccl.so) and put {} on LD_LIBRARY_PATH before starting the program (the loader reads it at start)",
                path.display(),
                path.file_name().map_or_else(String::new, |n| n.to_string_lossy().into_owned()),
                path.parent().map_or_else(String::new, |p| p.display().to_string())
            )
        }
        None => format!("no libnccl.so* was found; {INSTALL}"),
    }
}

/// A file `libnccl.so*` in `dir`, if any (the real library before links to it).
fn nccl_in(dir: &Path) -> Option<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(dir)
        .ok()?
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("libnccl.so"))
        })
        .collect();
    found.sort_by_key(|p| (p.is_symlink(), p.clone()));
    found.into_iter().next()
}

/// Where NCCL is usually installed: `$NCCL_HOME/lib`, the CUDA toolkit's, the distribution's,
/// the directories of `LD_LIBRARY_PATH` now (which the loader may not have seen), and the PyPI
/// wheel's under `./.nccl` (where this repository's `scripts/nvrtc-env.sh` installs it).
fn diagnostic_dirs() -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    if let Some(home) = std::env::var_os("NCCL_HOME") {
        dirs.push(PathBuf::from(home).join("lib"));
    }
    for var in ["CUDA_HOME", "CUDA_PATH"] {
        if let Some(home) = std::env::var_os(var) {
            dirs.push(PathBuf::from(home).join("lib64"));
        }
    }
    if let Some(path) = std::env::var_os("LD_LIBRARY_PATH") {
        dirs.extend(std::env::split_paths(&path).filter(|p| !p.as_os_str().is_empty()));
    }
    for d in [
        "/usr/local/cuda/lib64",
        "/usr/local/nccl/lib",
        "/usr/lib/x86_64-linux-gnu",
        "/usr/lib64",
        ".nccl/nvidia/nccl/lib",
    ] {
        dirs.push(PathBuf::from(d));
    }
    dirs.dedup();
    dirs
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A missing library is an error that says what was tried and how to install NCCL.
    #[test]
    fn missing_library_is_an_error() {
        let dir = std::env::temp_dir().join(format!("gpu-runtime-nccl-none-{}", std::process::id()));
        let (tried, hint) = find(
            &["libnccl_missing_for_a_test.so".to_owned()],
            std::slice::from_ref(&dir),
        )
        .unwrap_err();
        assert!(
            tried.contains("libnccl_missing_for_a_test.so") && tried.contains(&dir.display().to_string())
        );
        // Unless this machine has NCCL under its soname, the hint is how to install it.
        assert!(
            hint.contains("pip install nvidia-nccl-cu13") || hint.contains("symlink"),
            "{hint}"
        );
    }

    /// A library off the loader's path is named in the hint, with the directory to add.
    #[test]
    fn library_off_the_loader_path_is_named() {
        let dir = std::env::temp_dir().join(format!("gpu-runtime-nccl-off-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let lib = dir.join("libnccl.so.2");
        std::fs::write(&lib, b"not a library").unwrap();
        let hint = hint(&[PathBuf::from("/nonexistent/nccl"), dir.clone()]);
        std::fs::remove_dir_all(&dir).unwrap();
        if !hint.starts_with("libnccl.so.2 is on the loader's path") {
            assert!(hint.contains(&lib.display().to_string()), "{hint}");
            assert!(hint.contains("LD_LIBRARY_PATH"), "{hint}");
        }
    }

    #[test]
    fn error_is_one_sentence_with_both_parts() {
        let e = NcclError::NotFound {
            tried: "libnccl.so".into(),
            hint: "no libnccl.so* was found".into(),
        };
        assert_eq!(
            e.to_string(),
            "NCCL could not be loaded: tried libnccl.so; no libnccl.so* was found"
        );
    }
}
