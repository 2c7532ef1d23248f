//! The on-disk compile cache: compiled images keyed by everything that determines them.
//!
//! Each entry is one file, `<dir>/<key>.entry`. The key's *material* is everything that
//! determines the image: the source, its name, every compiler option, the kernel name
//! expressions, the target architecture (or the device's compute capability, when the target
//! is chosen for it), the compiler (for NVRTC, `LD_LIBRARY_PATH`, along which the loader finds
//! it, or its version when the file loaded is not the one found there; nvcc's path and
//! version), the contents of the headers included from
//! `include_dirs` (directly or by other such headers), and this crate's version; `<key>` is
//! the hex 128-bit XXH3 of it. A file holds a magic number, the lengths and the payload's
//! 128-bit XXH3 checksum, the material it was stored under, the NVRTC library file the loader's
//! search found (path, size, times, device and inode, checked by a hit with one `stat`;
//! see `toolchain`) or, when the search found none, the file the loader loaded past it with
//! the stamps of what the search saw (see `nvrtc_resolution`), then
//! the payload (target, lowered kernel names, compiler log, image). A hit compares the stored material with its own byte
//! for byte, so an entry is used only for exactly the compile that made it, whatever the
//! file is called; one that fails any check is treated as absent, recompiled and replaced.
//! (The checksum guards against damage; what guards against other users' entries is the
//! ownership check below. XXH3 runs at memory speed without asking the CPU what it supports,
//! which costs a virtual machine more than reading the entry.)
//!
//! Entries are written to a temporary file in the same directory and renamed into place, so
//! processes racing on one key each see either no entry or a complete one. A directory that
//! cannot be created or written makes the library compile without caching, with one warning
//! per process on standard error.
//!
//! A cached cubin is machine code this process loads and runs, so the cache trusts only what
//! no other user could have written, as `ssh` does for its keys. An entry is loaded only if
//! it is yours, writable by you alone, and holds the material it is looked up by: whoever else
//! may write the directory can then delete or rename your entries, which costs a compile,
//! but not make one of them stand in for another or plant their own. Before an entry is
//! written, the directory must be yours and writable by you alone, and each directory above
//! it yours or root's and not writable by others (unless sticky, as `/tmp` is). The library
//! makes directories `0700` and entries `0600`. Anything else is refused with one warning
//! per process, and the module is compiled without the cache ([`CacheStatus::Untrusted`]).
//! So a hit reads one file and asks the system about nothing else: in a new process, each
//! directory checked costs more than reading the entry.
//!
//! The directory is, in order: the `cache_dir` given to
//! [`SourceModule`](crate::SourceModule); `GPU_RUNTIME_CACHE_DIR`; `$XDG_CACHE_HOME/gpu-runtime`;
//! `$HOME/.cache/gpu-runtime` (on macOS `~/Library/Caches/gpu-runtime`, on Windows
//! `%LOCALAPPDATA%\gpu-runtime\cache`). `GPU_RUNTIME_DISABLE_CACHE`, set to any value, turns
//! the cache off everywhere.

mod entry;
// `key` and `status` hold the two types `compiler` makes public (`compiler::CacheKey`,
// `compiler::CacheStatus`: one public path each, scripts/check_public_paths.py).
pub(super) mod key;
pub(super) mod status;
mod trust;

use std::fs;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use crate::compiler::nvrtc::CompiledModule;

use entry::{decode, encode};
pub(crate) use key::{CacheKey, KeyMaterial};
pub(crate) use status::CacheStatus;
pub(crate) use trust::trusted_dir;
use trust::trusted_file;

/// Environment variable naming the cache directory.
pub const CACHE_DIR_ENV: &str = "GPU_RUNTIME_CACHE_DIR";
/// Environment variable that, set to any value, disables the on-disk cache.
pub const DISABLE_CACHE_ENV: &str = "GPU_RUNTIME_DISABLE_CACHE";
/// Environment variable holding default compiler flags, used when none are given.
pub const DEFAULT_FLAGS_ENV: &str = "GPU_RUNTIME_DEFAULT_NVRTC_FLAGS";

/// Where the cache lives when no directory is given: see the [module docs](self).
pub fn default_cache_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os(CACHE_DIR_ENV).filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(dir));
    }
    platform_cache_dir()
}

fn platform_cache_dir() -> Option<PathBuf> {
    let env_dir = |k: &str| std::env::var_os(k).filter(|d| !d.is_empty()).map(PathBuf::from);
    if cfg!(windows) {
        return env_dir("LOCALAPPDATA").map(|d| d.join("gpu-runtime").join("cache"));
    }
    if cfg!(target_os = "macos") {
        return env_dir("HOME").map(|h| h.join("Library/Caches/gpu-runtime"));
    }
    env_dir("XDG_CACHE_HOME")
        .or_else(|| env_dir("HOME").map(|h| h.join(".cache")))
        .map(|d| d.join("gpu-runtime"))
}

/// True when `GPU_RUNTIME_DISABLE_CACHE` is set (to anything).
pub fn cache_disabled_by_env() -> bool {
    std::env::var_os(DISABLE_CACHE_ENV).is_some()
}

/// `GPU_RUNTIME_DEFAULT_NVRTC_FLAGS`, split on whitespace: the options used when a compile is
/// given none (PyCUDA's `DEFAULT_NVCC_FLAGS`).
pub fn default_flags() -> Vec<String> {
    std::env::var(DEFAULT_FLAGS_ENV)
        .map(|v| v.split_whitespace().map(str::to_owned).collect())
        .unwrap_or_default()
}

/// The file an entry for `key` lives in.
pub fn entry_path(dir: &Path, key: &CacheKey) -> PathBuf {
    // One allocation of the right size, where `join(format!(..))` made three.
    let mut name = [0u8; 32 + ENTRY_EXTENSION.len()];
    name[..32].copy_from_slice(&key.hex_digits());
    name[32..].copy_from_slice(ENTRY_EXTENSION.as_bytes());
    let mut path = PathBuf::with_capacity(dir.as_os_str().len() + 1 + name.len());
    path.push(dir);
    // Hex digits and an ASCII extension: always UTF-8.
    path.push(std::str::from_utf8(&name).unwrap_or_default());
    path
}

/// What an entry's file name ends with, after the key's 32 hex digits.
const ENTRY_EXTENSION: &str = ".entry";

/// The outcome of reading an entry.
pub(crate) enum Lookup {
    /// The module, and the identity of the compiler that made it, as stored (see `encode`).
    Found(CompiledModule, Vec<u8>),
    Absent,
    Invalid,
    Unreadable(io::Error),
    /// Another user could have written the entry or its directory: why.
    Untrusted(String),
}

/// The entry stored under `material`, whose key is `key`, if one is there, whole, and trusted.
pub(crate) fn load(dir: &Path, key: &CacheKey, material: &KeyMaterial) -> Lookup {
    match read_entry(dir, key) {
        Ok(bytes) => check_entry(bytes, material),
        Err(not_read) => not_read,
    }
}

/// The bytes of the entry for `key` in `dir`, if it is there and trusted (see the
/// [module docs](self)): an open, a `stat` of the open file, one read. `Err` says what
/// [`load`] does instead.
pub(crate) fn read_entry(dir: &Path, key: &CacheKey) -> Result<Vec<u8>, Lookup> {
    let path = entry_path(dir, key);
    let mut file = match fs::File::open(&path) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Err(Lookup::Absent),
        Err(e) => return Err(Lookup::Unreadable(e)),
    };
    // Checked on the open file, so that what is read is what was checked.
    let meta = match file.metadata() {
        Ok(meta) => meta,
        Err(e) => return Err(Lookup::Unreadable(e)),
    };
    if let Err(why) = trusted_file(&path, &meta) {
        return Err(Lookup::Untrusted(why));
    }
    read_all(&mut file, &meta).map_err(|e| match e.kind() {
        // Shorter than its size said: not a whole entry.
        io::ErrorKind::UnexpectedEof => Lookup::Invalid,
        _ => Lookup::Unreadable(e),
    })
}

/// What the entry `bytes` (from [`read_entry`]) holds, if it was stored under `material` and
/// is whole (its checks are in `entry::decode`).
pub(crate) fn check_entry(bytes: Vec<u8>, material: &KeyMaterial) -> Lookup {
    match decode(bytes, material) {
        Some((m, compiler)) => Lookup::Found(m, compiler),
        None => Lookup::Invalid,
    }
}

/// The whole file, whose metadata is `meta`: one read of the size already known (entries are
/// renamed into place whole, so it does not change), where `read_to_end` would ask the system
/// for the size and position again and read once more to see the end. A cache hit in a new
/// process is a handful of system calls, and these were three of them.
fn read_all(file: &mut fs::File, meta: &fs::Metadata) -> io::Result<Vec<u8>> {
    let len = usize::try_from(meta.len()).map_err(|_| io::Error::from(io::ErrorKind::OutOfMemory))?;
    let mut bytes = vec![0u8; len];
    file.read_exact(&mut bytes)?;
    Ok(bytes)
}

/// Writes an entry atomically: a unique temporary file in `dir`, then a rename over the entry.
/// `compiler` is the identity of the compiler that made `module`, for a key that does not
/// name it (empty when the key does).
pub(crate) fn store(
    dir: &Path,
    material: &KeyMaterial,
    module: &CompiledModule,
    compiler: &[u8],
) -> io::Result<()> {
    write_atomic(
        dir,
        &entry_path(dir, &material.key()),
        &encode(module, material, compiler),
    )
}

pub(crate) fn write_atomic(dir: &Path, path: &Path, bytes: &[u8]) -> io::Result<()> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    create_private_dir(dir)?;
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("entry");
    let tmp = dir.join(format!(
        ".{name}.{}.{}.tmp",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    let result = (|| {
        let mut f = private_file(&tmp)?;
        f.write_all(bytes)?;
        f.sync_data()?;
        drop(f);
        fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

/// Creates `dir` and its missing parents readable and writable by the user alone (whatever
/// the umask).
fn create_private_dir(dir: &Path) -> io::Result<()> {
    let mut b = fs::DirBuilder::new();
    b.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut b, 0o700);
    b.create(dir)
}

/// Creates `path` (new) readable and writable by the user alone.
fn private_file(path: &Path) -> io::Result<fs::File> {
    let mut o = fs::OpenOptions::new();
    o.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut o, 0o600);
    o.open(path)
}

/// Prints the one warning a process gives about a cache it does not trust.
pub(crate) fn warn_untrusted(why: &str) {
    static WARNED: AtomicBool = AtomicBool::new(false);
    if !WARNED.swap(true, Ordering::Relaxed) {
        eprintln!(
            "gpu-runtime: warning: not using the compile cache: {why}, so another user could have put machine code there; compiling without caching (set {CACHE_DIR_ENV} to a directory of your own, or {DISABLE_CACHE_ENV}=1 to silence this)"
        );
    }
}

/// Prints the one warning a process gives about an unusable cache directory.
pub(crate) fn warn_unusable(dir: &Path, err: &io::Error) {
    static WARNED: AtomicBool = AtomicBool::new(false);
    if !WARNED.swap(true, Ordering::Relaxed) {
        eprintln!(
            "gpu-runtime: warning: the compile cache directory {} cannot be used ({err}); compiling without caching (set {CACHE_DIR_ENV} to a writable directory, or {DISABLE_CACHE_ENV}=1 to silence this)",
            dir.display()
        );
    }
}

#[cfg(test)]
mod tests {
    use super::entry::HEADER;
    use super::*;
    use crate::compiler::nvrtc::Target;

    fn sample() -> CompiledModule {
        CompiledModule {
            image: b"\x7fELF not really".to_vec(),
            target: Target::Cubin { major: 9, minor: 0 },
            lowered_names: vec!["k".into(), "_Z3fooPf".into()],
            log: "warning: x".into(),
        }
    }

    fn material(text: &str) -> KeyMaterial {
        let mut m = KeyMaterial::with_capacity(64);
        m.field(text.as_bytes());
        m
    }

    #[test]
    fn entries_round_trip_and_every_damage_is_detected() {
        let m = sample();
        let key = material("seven");
        let bytes = encode(&m, &key, b"nvrtc file");
        assert_eq!(decode(bytes.clone(), &key), Some((m, b"nvrtc file".to_vec())));
        assert_eq!(
            decode(bytes.clone(), &material("eight")),
            None,
            "stored under other material"
        );
        assert_eq!(
            decode(bytes.clone(), &material("sevens")),
            None,
            "stored under material of another length"
        );
        let stored = key.as_bytes().len();
        for cut in [
            0,
            7,
            23,
            31,
            HEADER - 1,
            HEADER,
            HEADER + stored,
            HEADER + stored + 5,
            bytes.len() - 1,
        ] {
            assert_eq!(decode(bytes[..cut].to_vec(), &key), None, "truncated to {cut}");
        }
        for i in [
            0,
            9,
            17,
            30,
            HEADER,
            HEADER + stored - 1,
            HEADER + stored + 3,
            bytes.len() - 1,
        ] {
            let mut bad = bytes.clone();
            bad[i] ^= 0x40;
            assert_eq!(decode(bad, &key), None, "byte {i} flipped");
        }
        let mut longer = bytes.clone();
        longer.push(0);
        assert_eq!(decode(longer, &key), None);
    }
}
