//! Naming the compiler in cache keys: its version and the file it comes from.
//!
//! Loading NVRTC costs about 10 ms (it is a 100 MB library), twenty times the budget of a
//! cache hit. So the library is identified without loading it: the file that `dlopen` will pick
//! (the first of cudarc's candidate names found on `LD_LIBRARY_PATH`), with its size and
//! modification time. Its version and supported architectures are read once from NVRTC and
//! remembered in the cache directory under that identity; later processes read them from
//! there. A replaced or upgraded library has another identity, so its entries are new ones.
//! When the file cannot be predicted, or turns out not to be the one loaded, NVRTC is loaded
//! and the key names its version only.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, OnceLock};
use std::time::UNIX_EPOCH;

use crate::compiler::cache::{self, KeyHasher};
use crate::compiler::nvrtc;
use crate::error::{Error, Result};

/// What a cache key needs to know about NVRTC.
#[derive(Debug, Clone)]
pub(crate) struct NvrtcInfo {
    pub(crate) version: (u32, u32),
    pub(crate) archs: Vec<u32>,
    /// The library file's path, size and modification time, when known.
    pub(crate) identity: String,
}

impl NvrtcInfo {
    pub(crate) fn label(&self) -> String {
        format!("NVRTC {}.{}", self.version.0, self.version.1)
    }
}

static NVRTC: OnceLock<NvrtcInfo> = OnceLock::new();

/// NVRTC's version, architectures and identity, read from the cache directory's record when
/// there is one (NVRTC stays unloaded), else from NVRTC itself.
pub(crate) fn nvrtc(cache_dir: Option<&Path>) -> Result<&'static NvrtcInfo> {
    if let Some(info) = NVRTC.get() {
        return Ok(info);
    }
    let file = predicted_nvrtc().map(|(_, identity)| identity);
    if let (Some(dir), Some(identity)) = (cache_dir, &file) {
        if let Some((version, archs)) = read_record(dir, identity) {
            return Ok(NVRTC.get_or_init(|| NvrtcInfo {
                version,
                archs,
                identity: identity.clone(),
            }));
        }
    }
    let version = nvrtc::nvrtc_version()?;
    let archs = nvrtc::supported_archs()?;
    let verified = file.filter(|_| loaded_nvrtc_matches_prediction());
    if let (Some(dir), Some(identity)) = (cache_dir, &verified) {
        write_record(dir, identity, version, &archs);
    }
    Ok(NVRTC.get_or_init(|| NvrtcInfo {
        version,
        archs,
        identity: verified.unwrap_or_default(),
    }))
}

fn record_path(dir: &Path, identity: &str) -> PathBuf {
    let mut h = KeyHasher::new();
    h.field(identity.as_bytes());
    dir.join("compilers")
        .join(format!("nvrtc-{}", &h.finish().to_hex()[..32]))
}

fn read_record(dir: &Path, identity: &str) -> Option<((u32, u32), Vec<u32>)> {
    // The record picks the cache key's compiler version: only one no other user wrote counts.
    let path = record_path(dir, identity);
    let text = String::from_utf8(cache::read_trusted(path.parent()?, &path)?).ok()?;
    let mut lines = text.lines();
    if lines.next()? != identity {
        return None;
    }
    let mut v = lines.next()?.split('.');
    let version = (v.next()?.parse().ok()?, v.next()?.parse().ok()?);
    let archs = lines
        .next()?
        .split_whitespace()
        .map(|a| a.parse().ok())
        .collect::<Option<Vec<u32>>>()?;
    (lines.next() == Some("end")).then_some((version, archs))
}

fn write_record(dir: &Path, identity: &str, version: (u32, u32), archs: &[u32]) {
    let archs: Vec<String> = archs.iter().map(u32::to_string).collect();
    let text = format!(
        "{identity}\n{}.{}\n{}\nend\n",
        version.0,
        version.1,
        archs.join(" ")
    );
    let path = record_path(dir, identity);
    if let Some(parent) = path.parent() {
        // A failure here only costs the next process a load of NVRTC.
        let _ = cache::write_atomic(parent, &path, text.as_bytes());
    }
}

/// The NVRTC library file `dlopen` will load and its identity, `path size mtime`, when it lies
/// on `LD_LIBRARY_PATH` (where `dlopen` looks first).
fn predicted_nvrtc() -> Option<(PathBuf, String)> {
    let dirs = std::env::var_os(if cfg!(windows) { "PATH" } else { "LD_LIBRARY_PATH" })?;
    let dirs: Vec<PathBuf> = std::env::split_paths(&dirs)
        .filter(|d| !d.as_os_str().is_empty())
        .collect();
    for name in cudarc::get_lib_name_candidates("nvrtc") {
        for dir in &dirs {
            let path = dir.join(&name);
            // `metadata` follows links, so the size and time are the library's own; the path
            // stays as found (resolving it costs a system call per component, on the path of
            // every cache hit in a new process).
            if let Ok(meta) = std::fs::metadata(&path) {
                let mtime = meta
                    .modified()
                    .ok()
                    .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
                    .map_or(0, |d| d.as_nanos());
                let identity = format!("{} {} {mtime}", path.display(), meta.len());
                return Some((path, identity));
            }
        }
    }
    None
}

/// After NVRTC is loaded: whether the file loaded is the one predicted.
fn loaded_nvrtc_matches_prediction() -> bool {
    let Some((path, _)) = predicted_nvrtc() else {
        return false;
    };
    // The loader's map names the file with its links resolved.
    let Ok(real) = std::fs::canonicalize(path) else {
        return false;
    };
    if !cfg!(target_os = "linux") {
        return true;
    }
    let Ok(maps) = std::fs::read_to_string("/proc/self/maps") else {
        return false;
    };
    let loaded: Vec<&str> = maps
        .lines()
        .filter_map(|l| l.split_whitespace().nth(5))
        .filter(|p| {
            let file = p.rsplit('/').next().unwrap_or(p);
            file.starts_with("libnvrtc") && !file.starts_with("libnvrtc-builtins")
        })
        .collect();
    !loaded.is_empty() && loaded.iter().all(|p| Path::new(p) == real)
}

/// `nvcc --version` of the given nvcc, remembered per path for the process.
pub(crate) fn nvcc_version(nvcc: &Path) -> Result<String> {
    static SEEN: Mutex<Vec<(PathBuf, String)>> = Mutex::new(Vec::new());
    let mut seen = SEEN.lock().unwrap_or_else(|p| p.into_inner());
    if let Some((_, v)) = seen.iter().find(|(p, _)| p == nvcc) {
        return Ok(v.clone());
    }
    let out = Command::new(nvcc)
        .arg("--version")
        .output()
        .map_err(|e| Error::CompilerNotFound {
            compiler: nvcc.display().to_string(),
            reason: e.to_string(),
        })?;
    if !out.status.success() {
        return Err(Error::CompilerNotFound {
            compiler: nvcc.display().to_string(),
            reason: format!("`nvcc --version` exited with {}", out.status),
        });
    }
    let v = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    seen.push((nvcc.to_path_buf(), v.clone()));
    Ok(v)
}

/// Finds `nvcc` on `PATH`, then in `$CUDA_HOME/bin`, then `/usr/local/cuda/bin`.
pub(crate) fn find_nvcc() -> Result<PathBuf> {
    let exe = if cfg!(windows) { "nvcc.exe" } else { "nvcc" };
    let mut dirs: Vec<PathBuf> = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect())
        .unwrap_or_default();
    for var in ["CUDA_HOME", "CUDA_PATH"] {
        if let Some(home) = std::env::var_os(var) {
            dirs.push(PathBuf::from(home).join("bin"));
        }
    }
    dirs.push(PathBuf::from("/usr/local/cuda/bin"));
    dirs.iter()
        .map(|d| d.join(exe))
        .find(|p| p.is_file())
        .ok_or_else(|| Error::CompilerNotFound {
            compiler: "nvcc".into(),
            reason: "it is not on PATH, in $CUDA_HOME/bin or in /usr/local/cuda/bin".into(),
        })
}
