//! Where the CUDA headers (`cuda_fp16.h`, `cuda_bf16.h`, `cooperative_groups.h`, `cuda/std/…`)
//! are looked for: one search, shared by the run-time compile (`gpu_runtime::compiler`) and the
//! `#[kernel]` build-time check, so that both see the same headers.
//!
//! The first of: the directory in `GPU_RUNTIME_CUDA_INCLUDE`, `$CUDA_PATH/include`,
//! `$CUDA_HOME/include`, `/usr/local/cuda/include` that holds `cuda_fp16.h`. Without one, the
//! callers install the headers NVRTC (13.1 and later) carries inside itself into
//! [`bundled_headers_dir`], which both share too.

use std::path::{Path, PathBuf};

/// The variable naming a CUDA include directory to use before any other.
pub const CUDA_INCLUDE_VAR: &str = "GPU_RUNTIME_CUDA_INCLUDE";
/// The variable naming the directory NVRTC's bundled headers are installed into.
pub const HEADER_CACHE_VAR: &str = "GPU_RUNTIME_HEADER_CACHE";

/// Every environment variable the search reads, so that a build that depends on the result can
/// be redone when one of them changes.
pub const CUDA_INCLUDE_ENV: &[&str] = &[
    CUDA_INCLUDE_VAR,
    "CUDA_PATH",
    "CUDA_HOME",
    HEADER_CACHE_VAR,
    "XDG_CACHE_HOME",
    "HOME",
];

/// The first toolkit include directory that holds `cuda_fp16.h`; every directory looked at is
/// pushed to `searched` (for a message naming them when a header is missing).
pub fn toolkit_include(searched: &mut Vec<String>) -> Option<PathBuf> {
    let mut candidates: Vec<PathBuf> = Vec::new();
    if let Some(d) = std::env::var_os(CUDA_INCLUDE_VAR) {
        candidates.push(d.into());
    }
    for var in ["CUDA_PATH", "CUDA_HOME"] {
        if let Some(d) = std::env::var_os(var) {
            candidates.push(PathBuf::from(d).join("include"));
        }
    }
    candidates.push("/usr/local/cuda/include".into());
    candidates.into_iter().find(|d| {
        searched.push(d.display().to_string());
        d.join("cuda_fp16.h").is_file()
    })
}

/// The `-I` options for a CUDA include directory: the directory, and its `cccl/` (CUDA 13 keeps
/// libcu++, `cuda/std/…`, there) when it has one.
pub fn include_options(dir: &Path) -> Vec<String> {
    let mut options = vec![format!("-I{}", dir.display())];
    let cccl = dir.join("cccl");
    if cccl.is_dir() {
        options.push(format!("-I{}", cccl.display()));
    }
    options
}

/// Where NVRTC `major.minor`'s bundled headers are installed: `nvrtc-headers-X.Y` in
/// `GPU_RUNTIME_HEADER_CACHE`, else in `$XDG_CACHE_HOME/gpu-runtime` or
/// `~/.cache/gpu-runtime`.
pub fn bundled_headers_dir(major: i32, minor: i32) -> PathBuf {
    header_cache_dir().join(format!("nvrtc-headers-{major}.{minor}"))
}

fn header_cache_dir() -> PathBuf {
    if let Some(d) = std::env::var_os(HEADER_CACHE_VAR) {
        return d.into();
    }
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".cache")))
        .unwrap_or_else(std::env::temp_dir);
    base.join("gpu-runtime")
}

/// Whether `dir` holds an installed set of CUDA headers.
pub fn holds_cuda_headers(dir: &Path) -> bool {
    dir.join("cuda_fp16.h").is_file()
}
