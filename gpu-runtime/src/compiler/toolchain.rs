//! Naming the compiler in cache keys: the file it comes from, or its version.
//!
//! Loading NVRTC costs about 10 ms (it is a 100 MB library), a hundred times a cache hit. So
//! the library is identified without loading it: the file that `dlopen` will pick (the first
//! of cudarc's candidate names found on `LD_LIBRARY_PATH`), with its size, modification time
//! and (on Unix) status-change time, device and inode ([`LibraryIdentity`]). The search costs a `stat` per name and directory tried, more
//! than the rest of a hit in a new process, so a hit does not search: its key names
//! `LD_LIBRARY_PATH` as set, the entry remembers the file the search found when it was
//! stored, and the hit checks that file with one `stat`. A replaced or upgraded library has
//! another identity, so its entries are compiled again and replaced.
//!
//! The prediction is checked whenever NVRTC is loaded to compile: when the file loaded is not
//! the one predicted (or none could be predicted), the key names NVRTC's version instead, and
//! the entry is stored under that key. Such a setup loads NVRTC in each process, as it must to
//! learn the version.
//!
//! One such setup is common: a system CUDA install, whose NVRTC the loader finds past
//! `LD_LIBRARY_PATH`, through `/etc/ld.so.cache`. There the search finds no file, but what the
//! loader loads stays the same while `LD_LIBRARY_PATH`, its directories and the loader's cache
//! do. So on Linux the entry keyed by search stores the file loaded (named by
//! [`loaded_nvrtc_path`]) with the stamps of those, taken before the search, and a hit checks
//! them and the file with a `stat` each: no search, no NVRTC loaded (see `nvrtc_resolution`).
//! An unset `LD_LIBRARY_PATH` is the empty path there.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use crate::compiler::nvrtc;
use crate::error::{Error, Result};
use crate::sync::{LockRank, Mutex};

/// NVRTC as loaded: its version and architectures, and whether it is the predicted file.
#[derive(Debug, Clone)]
pub(crate) struct LoadedNvrtc {
    pub(crate) version: (u32, u32),
    pub(crate) archs: Vec<u32>,
    /// The library loaded is the file [`predicted_nvrtc`] names.
    pub(crate) as_predicted: bool,
}

impl LoadedNvrtc {
    pub(crate) fn label(&self) -> String {
        format!("NVRTC {}.{}", self.version.0, self.version.1)
    }
}

/// A library file as the loader's search found it: its path, and the metadata that changes
/// when the file is replaced or upgraded ([`Stamp`]). A replaced or upgraded library has
/// another identity.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LibraryIdentity {
    path: PathBuf,
    stamp: Stamp,
}

/// What identifies a file's contents without reading them, as `ccache` does for compilers: its
/// size and modification time and, on Unix, its status-change time, device and inode. A file
/// replaced in place has another (a copy keeping the time, `cp -p`, still gets a new
/// status-change time and inode; a file written in place, a new modification time).
pub(crate) type Stamp = [u8; STAMP_LEN];

/// Size, modification time (seconds, nanoseconds), status-change time (the same), device, inode:
/// eight bytes each.
pub(crate) const STAMP_LEN: usize = 7 * 8;

/// The [`Stamp`] of the file `meta` describes.
pub(crate) fn stamp_of(meta: &std::fs::Metadata) -> Stamp {
    #[cfg(unix)]
    let words: [u64; 7] = {
        use std::os::unix::fs::MetadataExt;
        [
            meta.size(),
            meta.mtime() as u64,
            meta.mtime_nsec() as u64,
            meta.ctime() as u64,
            meta.ctime_nsec() as u64,
            meta.dev(),
            meta.ino(),
        ]
    };
    #[cfg(not(unix))]
    let words: [u64; 7] = {
        let modified = meta
            .modified()
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .unwrap_or_default();
        [
            meta.len(),
            modified.as_secs(),
            u64::from(modified.subsec_nanos()),
            0,
            0,
            0,
            0,
        ]
    };
    let mut stamp = [0u8; STAMP_LEN];
    for (bytes, word) in stamp.chunks_exact_mut(8).zip(words) {
        bytes.copy_from_slice(&word.to_le_bytes());
    }
    stamp
}

impl LibraryIdentity {
    /// The file at `path` now, following links (the stamp is the library's own; the path
    /// stays as found, since resolving it costs a system call per component).
    pub(crate) fn of(path: PathBuf) -> Option<LibraryIdentity> {
        let meta = std::fs::metadata(&path).ok()?;
        Some(LibraryIdentity {
            stamp: stamp_of(&meta),
            path,
        })
    }

    /// As stored in a cache entry: the path's length and bytes, then the stamp.
    pub(crate) fn to_bytes(&self) -> Vec<u8> {
        let path = self.path.as_os_str().as_encoded_bytes();
        let mut b = Vec::with_capacity(8 + path.len() + STAMP_LEN);
        b.extend_from_slice(&(path.len() as u64).to_le_bytes());
        b.extend_from_slice(path);
        b.extend_from_slice(&self.stamp);
        b
    }
}

/// Whether `stored` (what [`LibraryIdentity::to_bytes`] wrote) names a file that is still
/// there, unchanged: one `stat`, and nothing allocated (the path is used where it lies in the
/// entry). `false` for anything else.
pub(crate) fn stored_library_is_current(stored: &[u8]) -> bool {
    let Some((path, stamp)) = split_stored(stored) else {
        return false;
    };
    std::fs::metadata(path).is_ok_and(|meta| stamp_of(&meta)[..] == *stamp)
}

/// The path and stamp of a stored identity, borrowed from it.
pub(crate) fn split_stored(b: &[u8]) -> Option<(&Path, &[u8])> {
    let len = usize::try_from(u64::from_le_bytes(b.get(..8)?.try_into().ok()?)).ok()?;
    let (path, stamp) = b.get(8..)?.split_at_checked(len)?;
    if stamp.len() != STAMP_LEN {
        return None;
    }
    #[cfg(unix)]
    let path = Path::new(<std::ffi::OsStr as std::os::unix::ffi::OsStrExt>::from_bytes(
        path,
    ));
    // Elsewhere `OsStr`'s bytes are not a stable format: only UTF-8 paths round-trip.
    #[cfg(not(unix))]
    let path = Path::new(std::str::from_utf8(path).ok()?);
    Some((path, stamp))
}

/// The directories the loader searches first (`LD_LIBRARY_PATH`, `PATH` on Windows), as set:
/// what a cache key by search names, so that a hit needs no search (see [`predicted_nvrtc`]).
/// On Linux an unset `LD_LIBRARY_PATH` is the empty path (as it is to the loader): the search
/// finds nothing, and the file the loader loads past it is stored in entries as for any path
/// (see `nvrtc_resolution`); elsewhere `None`, and keys name NVRTC's version.
pub(crate) fn library_path() -> Option<std::ffi::OsString> {
    let set = std::env::var_os(if cfg!(windows) { "PATH" } else { "LD_LIBRARY_PATH" });
    if cfg!(target_os = "linux") {
        return Some(set.unwrap_or_default());
    }
    set.filter(|p| !p.is_empty())
}

/// What the search along [`library_path`] found, once per process.
struct Prediction {
    found: Option<LibraryIdentity>,
    /// When it found nothing: what it looked at, stamped before it looked (see
    /// [`surroundings`]), for entries to store with the file loaded instead.
    searched: Option<Vec<u8>>,
}

fn prediction() -> &'static Prediction {
    static PREDICTION: OnceLock<Prediction> = OnceLock::new();
    PREDICTION.get_or_init(|| {
        let Some(dirs) = library_path() else {
            return Prediction {
                found: None,
                searched: None,
            };
        };
        // Stamped first: a library added during the search is either found by it or changes
        // a stamp the entries store, so that a later process searches again.
        let searched = surroundings(&dirs, Path::new(LOADER_CACHE));
        let found = find_nvrtc_file(&dirs);
        Prediction {
            searched: searched.filter(|_| found.is_none()),
            found,
        }
    })
}

/// The loader's cache, whose contents decide what it loads when `LD_LIBRARY_PATH` has nothing.
pub(crate) const LOADER_CACHE: &str = "/etc/ld.so.cache";

/// What decides, with `library_path` as set, that the search along it finds no NVRTC and what
/// the loader loads instead, stamped now: the loader's cache, then each directory of the path
/// in its order (an empty entry in a path is the working directory, to the loader), a byte
/// saying whether it is there and its stamp. A directory's stamp changes when a file is added
/// to it, removed or renamed (its modification time), so equal stamps mean the search still
/// finds nothing, without the search. `None` without a loader cache.
pub(crate) fn surroundings(library_path: &std::ffi::OsStr, loader_cache: &Path) -> Option<Vec<u8>> {
    let meta = std::fs::metadata(loader_cache).ok()?;
    let mut s = Vec::with_capacity(STAMP_LEN * 4);
    s.extend_from_slice(&stamp_of(&meta));
    // An empty path is no directory at all (the loader ignores it), not the working one.
    let dirs = std::env::split_paths(library_path).filter(|_| !library_path.is_empty());
    for dir in dirs {
        let dir = if dir.as_os_str().is_empty() {
            Path::new(".")
        } else {
            &dir
        };
        match std::fs::metadata(dir) {
            Ok(meta) => {
                s.push(1);
                s.extend_from_slice(&stamp_of(&meta));
            }
            Err(_) => {
                s.push(0);
                s.extend_from_slice(&[0; STAMP_LEN]);
            }
        }
    }
    Some(s)
}

/// The NVRTC library file `dlopen` will load, when it lies on [`library_path`] (where `dlopen`
/// looks first); searched once per process, as the library is loaded once per process. A
/// cache entry keyed by the search stores this, and a hit checks it with one `stat`.
pub(crate) fn predicted_nvrtc() -> Option<&'static LibraryIdentity> {
    prediction().found.as_ref()
}

/// When the search along [`library_path`] found no NVRTC: the stamps of what it looked at,
/// taken before it looked.
pub(crate) fn failed_search_surroundings() -> Option<&'static [u8]> {
    prediction().searched.as_deref()
}

/// What [`loaded_nvrtc`] learnt, once it has run.
static LOADED: OnceLock<LoadedNvrtc> = OnceLock::new();

/// Whether this process has asked NVRTC for its version (which loads it), as a compile or a
/// lookup keyed by version does and a hit keyed by a library file does not. For the suite's
/// tests, where NVRTC may be mapped whether asked or not (preloaded with `LD_PRELOAD`).
pub fn nvrtc_was_asked() -> bool {
    LOADED.get().is_some()
}

/// NVRTC's version and architectures, loading it; once per process.
pub(crate) fn loaded_nvrtc() -> Result<&'static LoadedNvrtc> {
    if let Some(info) = LOADED.get() {
        return Ok(info);
    }
    // Searched before NVRTC is loaded, so that what the search saw is what the loader saw.
    let predicted = predicted_nvrtc();
    let version = nvrtc::nvrtc_version()?;
    let archs = nvrtc::supported_archs()?;
    let as_predicted = predicted.is_some_and(|id| loaded_is(&id.path));
    Ok(LOADED.get_or_init(|| LoadedNvrtc {
        version,
        archs,
        as_predicted,
    }))
}

/// The names `dlopen` is tried with, in cudarc's order, less those that do not name a library
/// outside Windows (cudarc lists Windows' `nvrtc64_…` names everywhere, as `libnvrtc64_….so`):
/// each costs a `stat` per directory of `LD_LIBRARY_PATH` on the path of every cache hit in a
/// new process.
fn candidate_names() -> Vec<String> {
    let all = cudarc::get_lib_name_candidates("nvrtc");
    if cfg!(windows) {
        return all;
    }
    all.into_iter()
        .filter(|n| {
            n.strip_prefix(UNVERSIONED_NAME)
                .is_some_and(|rest| rest.is_empty() || rest.starts_with('.'))
        })
        .collect()
}

fn find_nvrtc_file(dirs: &std::ffi::OsStr) -> Option<LibraryIdentity> {
    let find = |name: &str| {
        std::env::split_paths(dirs)
            .filter(|d| !d.as_os_str().is_empty())
            .find_map(|dir| LibraryIdentity::of(dir.join(name)))
    };
    // cudarc tries the unversioned name first (a toolkit's `lib64` has it), then the one of
    // its CUDA major version (the PyPI wheel's): both are looked for before the rest of the
    // list is made, which costs more than the search (seventeen names formatted).
    FIRST_NAMES.iter().find_map(|n| find(n)).or_else(|| {
        candidate_names()
            .iter()
            .filter(|n| !FIRST_NAMES.contains(&n.as_str()))
            .find_map(|n| find(n))
    })
}

/// The first names of [`candidate_names`], in its order (a test checks it): on Linux the
/// unversioned name and `libnvrtc.so.13`, the name of cudarc's CUDA major version (its
/// `cuda-13000` feature); elsewhere the unversioned name.
#[cfg(target_os = "linux")]
const FIRST_NAMES: &[&str] = &[UNVERSIONED_NAME, "libnvrtc.so.13"];
#[cfg(not(target_os = "linux"))]
const FIRST_NAMES: &[&str] = &[UNVERSIONED_NAME];

/// `libnvrtc.so` (`nvrtc.dll`, `libnvrtc.dylib`): the first name cudarc tries.
const UNVERSIONED_NAME: &str = if cfg!(windows) {
    "nvrtc.dll"
} else if cfg!(target_os = "macos") {
    "libnvrtc.dylib"
} else {
    "libnvrtc.so"
};

/// After NVRTC is loaded: whether the file loaded is `path`.
fn loaded_is(path: &Path) -> bool {
    // The loader's map names the file with its links resolved.
    let Ok(real) = std::fs::canonicalize(path) else {
        return false;
    };
    if !cfg!(target_os = "linux") {
        return true;
    }
    loaded_nvrtc_path().is_some_and(|loaded| loaded == real)
}

/// After NVRTC is loaded: the file the loader loaded it from, with its links resolved, as the
/// loader's map (`/proc/self/maps`) names it; `None` where there is no such map, or where it
/// names no NVRTC or more than one.
pub(crate) fn loaded_nvrtc_path() -> Option<PathBuf> {
    if !cfg!(target_os = "linux") {
        return None;
    }
    let maps = std::fs::read_to_string("/proc/self/maps").ok()?;
    let mut loaded = maps
        .lines()
        .filter_map(|l| l.split_whitespace().nth(5))
        .filter(|p| {
            let file = p.rsplit('/').next().unwrap_or(p);
            file.starts_with("libnvrtc") && !file.starts_with("libnvrtc-builtins")
        });
    let first = loaded.next()?;
    loaded.all(|p| p == first).then(|| PathBuf::from(first))
}

/// `nvcc --version` of the given nvcc, remembered per path for the process.
pub(crate) fn nvcc_version(nvcc: &Path) -> Result<String> {
    static SEEN: Mutex<Vec<(PathBuf, String)>> = Mutex::new(LockRank::NvccVersions, Vec::new());
    let mut seen = SEEN.lock();
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_unversioned_name_is_the_first_cudarc_tries() {
        let all = cudarc::get_lib_name_candidates("nvrtc");
        assert_eq!(all.first(), Some(&UNVERSIONED_NAME.to_string()));
    }

    #[test]
    fn a_stored_library_identity_notices_a_change() {
        let dir = std::env::temp_dir().join(format!("gpu-runtime-identity-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("libnvrtc.so");
        std::fs::write(&file, b"one").unwrap();
        let id = LibraryIdentity::of(file.clone()).unwrap();
        let bytes = id.to_bytes();
        assert_eq!(split_stored(&bytes), Some((file.as_path(), &id.stamp[..])));
        assert!(stored_library_is_current(&bytes));
        std::fs::write(&file, b"three").unwrap();
        assert!(!stored_library_is_current(&bytes), "another size");
        let rewritten = LibraryIdentity::of(file.clone()).unwrap().to_bytes();
        assert!(stored_library_is_current(&rewritten));
        // The same size, contents and modification time, as `cp -p` leaves: another inode.
        let modified = std::fs::metadata(&file).unwrap().modified().unwrap();
        let copy = dir.join("copy");
        std::fs::write(&copy, b"three").unwrap();
        std::fs::File::options()
            .write(true)
            .open(&copy)
            .unwrap()
            .set_modified(modified)
            .unwrap();
        std::fs::rename(&copy, &file).unwrap();
        assert_eq!(std::fs::metadata(&file).unwrap().modified().unwrap(), modified);
        assert!(
            !stored_library_is_current(&rewritten),
            "replaced by a file of the same size and time"
        );
        std::fs::remove_file(&file).unwrap();
        assert!(!stored_library_is_current(&bytes), "gone");
        for cut in [0, 7, 8, bytes.len() - 1] {
            assert_eq!(split_stored(&bytes[..cut]), None, "cut to {cut}");
            assert!(!stored_library_is_current(&bytes[..cut]), "cut to {cut}");
        }
        let mut longer = bytes.clone();
        longer.push(0);
        assert_eq!(split_stored(&longer), None);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn the_names_looked_for_first_are_the_first_two_of_the_list() {
        assert_eq!(candidate_names()[..FIRST_NAMES.len()], *FIRST_NAMES);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn the_predicted_names_are_cudarcs_linux_library_names_in_its_order() {
        let names = candidate_names();
        assert_eq!(names.first().map(String::as_str), Some("libnvrtc.so"));
        assert!(
            names.iter().skip(1).all(|n| n.starts_with("libnvrtc.so.")),
            "{names:?}"
        );
        let all = cudarc::get_lib_name_candidates("nvrtc");
        let positions: Vec<usize> = names
            .iter()
            .map(|n| all.iter().position(|a| a == n).unwrap())
            .collect();
        assert!(positions.windows(2).all(|w| w[0] < w[1]), "{names:?} in {all:?}");
        // Only names no Linux loader could use are dropped.
        let dropped: Vec<&String> = all.iter().filter(|a| !names.contains(a)).collect();
        assert!(
            dropped
                .iter()
                .all(|d| d.starts_with("libnvrtc64") || d.starts_with("libnvrtc32")),
            "{dropped:?}"
        );
    }
}
