//! The on-disk compile cache: compiled images keyed by everything that determines them.
//!
//! Each entry is one file, `<dir>/<key>.entry`, where `<key>` is the hex SHA-256 of the source,
//! its name, every compiler option, the kernel name expressions, the target architecture (or
//! the device's compute capability, when the target is chosen for it), the compiler (NVRTC's
//! library file, or its version when the file cannot be predicted; nvcc's path and version),
//! the contents of the headers included from `include_dirs` (directly or by other such
//! headers), and this crate's version. A file holds a magic number, the key it was stored
//! under, the payload's length and its 128-bit XXH3 checksum, then the payload (target,
//! lowered kernel names, compiler log, image); an entry that fails any of these checks is
//! treated as absent, recompiled and replaced. (The checksum guards against damage; what
//! guards against other users' entries is the ownership check below. XXH3 runs at memory
//! speed without asking the CPU what it supports, which costs a virtual machine more than
//! reading the entry.)
//!
//! Entries are written to a temporary file in the same directory and renamed into place, so
//! processes racing on one key each see either no entry or a complete one. A directory that
//! cannot be created or written makes the library compile without caching, with one warning
//! per process on standard error.
//!
//! A cached cubin is machine code this process loads and runs, so the cache trusts only what
//! no other user could have written, as `ssh` does for its keys. An entry is loaded only if
//! it is yours, writable by you alone, and names the key it is looked up by: whoever else
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

use std::collections::HashSet;
use std::fs;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};

use crate::compiler::sha256::Sha256;

use crate::compiler::nvrtc::{CompiledModule, Target};

/// Environment variable naming the cache directory.
pub const CACHE_DIR_ENV: &str = "GPU_RUNTIME_CACHE_DIR";
/// Environment variable that, set to any value, disables the on-disk cache.
pub const DISABLE_CACHE_ENV: &str = "GPU_RUNTIME_DISABLE_CACHE";
/// Environment variable holding default compiler flags, used when none are given.
pub const DEFAULT_FLAGS_ENV: &str = "GPU_RUNTIME_DEFAULT_NVRTC_FLAGS";

const MAGIC: &[u8; 8] = b"GPURTC\x03\n";
/// Magic, the key the entry was stored under, the payload's length and checksum.
const HEADER: usize = 8 + 32 + 8 + 16;

/// A cache key: the SHA-256 of everything that determines a compiled image.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct CacheKey(pub(crate) [u8; 32]);

impl CacheKey {
    /// The key as 64 lowercase hex digits (the entry's file name without extension).
    pub fn to_hex(&self) -> String {
        hex(&self.0)
    }
}

impl std::fmt::Debug for CacheKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "CacheKey({})", self.to_hex())
    }
}

pub(crate) fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(DIGITS[(b >> 4) as usize] as char);
        s.push(DIGITS[(b & 15) as usize] as char);
    }
    s
}

/// Feeds length-prefixed fields to SHA-256, so that no two field lists hash alike by
/// concatenation (`["ab", "c"]` vs `["a", "bc"]`).
pub(crate) struct KeyHasher(Sha256);

impl KeyHasher {
    pub(crate) fn new() -> KeyHasher {
        let mut h = KeyHasher(Sha256::new());
        h.field(b"gpu-runtime compile cache v2");
        h.field(env!("CARGO_PKG_VERSION").as_bytes());
        h
    }

    pub(crate) fn field(&mut self, bytes: &[u8]) -> &mut Self {
        self.0.update(&(bytes.len() as u64).to_le_bytes());
        self.0.update(bytes);
        self
    }

    pub(crate) fn list<S: AsRef<str>>(&mut self, items: &[S]) -> &mut Self {
        self.field(&(items.len() as u64).to_le_bytes());
        for i in items {
            self.field(i.as_ref().as_bytes());
        }
        self
    }

    pub(crate) fn finish(self) -> CacheKey {
        CacheKey(self.0.finish())
    }
}

/// What the cache did for one compile.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum CacheStatus {
    /// A valid entry was found: nothing was compiled.
    Hit,
    /// No entry: compiled and stored.
    Miss,
    /// An entry existed but failed verification (truncated, corrupted, foreign): compiled
    /// and replaced.
    Replaced,
    /// Caching is off (`GPU_RUNTIME_DISABLE_CACHE`, or `cache_dir(None)`): compiled.
    Disabled,
    /// The directory could not be read or written: compiled without caching.
    Unavailable,
    /// The directory or the entry could have been written by another user (see the
    /// [module docs](self)): compiled without caching, and nothing was stored.
    Untrusted,
}

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
    dir.join(format!("{}.entry", key.to_hex()))
}

/// The outcome of reading an entry.
pub(crate) enum Lookup {
    Found(CompiledModule),
    Absent,
    Invalid,
    Unreadable(io::Error),
    /// Another user could have written the entry or its directory: why.
    Untrusted(String),
}

pub(crate) fn load(dir: &Path, key: &CacheKey) -> Lookup {
    let path = entry_path(dir, key);
    let mut file = match fs::File::open(&path) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Lookup::Absent,
        Err(e) => return Lookup::Unreadable(e),
    };
    // Checked on the open file, so that what is read is what was checked.
    let meta = match file.metadata() {
        Ok(meta) => meta,
        Err(e) => return Lookup::Unreadable(e),
    };
    if let Err(why) = trusted_file(&path, &meta) {
        return Lookup::Untrusted(why);
    }
    match read_all(&mut file, &meta) {
        Ok(bytes) => match decode(&bytes, key) {
            Some(m) => Lookup::Found(m),
            None => Lookup::Invalid,
        },
        // Shorter than its size said: not a whole entry.
        Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => Lookup::Invalid,
        Err(e) => Lookup::Unreadable(e),
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

/// What this process already found trustworthy (one check per directory): cache directories,
/// and directories above one, which pass on weaker terms (root's, or sticky like /tmp).
#[derive(Default)]
struct Trusted {
    dirs: HashSet<PathBuf>,
    ancestors: HashSet<PathBuf>,
}

fn trusted() -> std::sync::MutexGuard<'static, Trusted> {
    static TRUSTED: OnceLock<Mutex<Trusted>> = OnceLock::new();
    TRUSTED
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|p| p.into_inner())
}

/// Checks that no other user can write `dir` (if it exists) or the directories above it; see
/// the [module docs](self). `Err` says why not, as a sentence for the warning.
pub(crate) fn trusted_dir(dir: &Path) -> Result<(), String> {
    if trusted().dirs.contains(dir) {
        return Ok(());
    }
    let above_known = |p: &Path| trusted().ancestors.contains(p);
    let (exists, checked) = ownership::check_dir(dir, &above_known)?;
    // A directory that does not exist yet is checked again once it does (someone could make
    // it first, in a parent that others may write, such as /tmp).
    if exists {
        let mut t = trusted();
        t.dirs.insert(dir.to_path_buf());
        // Checked as a cache directory, each is also good above one (the stricter test).
        t.ancestors.extend(checked);
    }
    Ok(())
}

/// Checks that no other user can have written the file `meta` describes.
fn trusted_file(path: &Path, meta: &fs::Metadata) -> Result<(), String> {
    ownership::check_file(path, meta)
}

#[cfg(unix)]
mod ownership {
    use std::fs;
    use std::os::unix::fs::MetadataExt;
    use std::path::{Path, PathBuf};

    fn me() -> u32 {
        // SAFETY: geteuid has no preconditions and cannot fail.
        unsafe { libc::geteuid() }
    }

    fn writable_by_others(mode: u32) -> bool {
        mode & 0o022 != 0
    }

    pub(super) fn check_file(path: &Path, meta: &fs::Metadata) -> Result<(), String> {
        let me = me();
        if meta.uid() != me {
            return Err(format!(
                "{} belongs to uid {}, not to you (uid {me})",
                path.display(),
                meta.uid()
            ));
        }
        if writable_by_others(meta.mode()) {
            return Err(format!(
                "{} can be written by other users (mode {:o}); `chmod go-w` it",
                path.display(),
                meta.mode() & 0o7777
            ));
        }
        Ok(())
    }

    /// Checks `dir` and the directories above it, up to the first that `known` says was
    /// checked before (with all above it). Returns whether `dir` exists, and the paths
    /// checked, each good above a cache directory.
    pub(super) fn check_dir(
        dir: &Path,
        known: &dyn Fn(&Path) -> bool,
    ) -> Result<(bool, Vec<PathBuf>), String> {
        let me = me();
        let abs = std::path::absolute(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let mut checked = Vec::new();
        let mut exists = false;
        // The directory itself must be yours; above it, yours or root's, and writable by
        // others only with the sticky bit (which keeps them from replacing what is yours).
        for (depth, p) in abs.ancestors().enumerate() {
            if depth > 0 && known(p) {
                break;
            }
            // A path that cannot be looked at (missing, under a file, unreadable) holds no
            // entry anyone planted; using it fails on its own (`CacheStatus::Unavailable`).
            let Ok(meta) = fs::metadata(p) else {
                continue;
            };
            exists |= depth == 0;
            let own = meta.uid() == me || (depth > 0 && meta.uid() == 0);
            if !own {
                return Err(format!(
                    "{} belongs to uid {}, not to you (uid {me})",
                    p.display(),
                    meta.uid()
                ));
            }
            let sticky = meta.mode() & 0o1000 != 0;
            if writable_by_others(meta.mode()) && (depth == 0 || !sticky) {
                return Err(format!(
                    "{} can be written by other users (mode {:o}); `chmod go-w` it",
                    p.display(),
                    meta.mode() & 0o7777
                ));
            }
            checked.push(p.to_path_buf());
        }
        Ok((exists, checked))
    }
}

#[cfg(not(unix))]
mod ownership {
    use std::fs;
    use std::path::{Path, PathBuf};

    // On other systems the user's own profile directories are private by default.
    pub(super) fn check_file(_: &Path, _: &fs::Metadata) -> Result<(), String> {
        Ok(())
    }

    pub(super) fn check_dir(dir: &Path, _: &dyn Fn(&Path) -> bool) -> Result<(bool, Vec<PathBuf>), String> {
        Ok((dir.exists(), Vec::new()))
    }
}

/// Writes an entry atomically: a unique temporary file in `dir`, then a rename over the entry.
pub(crate) fn store(dir: &Path, key: &CacheKey, module: &CompiledModule) -> io::Result<()> {
    write_atomic(dir, &entry_path(dir, key), &encode(module, key))
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

fn encode(m: &CompiledModule, key: &CacheKey) -> Vec<u8> {
    let mut p = Vec::with_capacity(m.image.len() + 256);
    let (tag, major, minor) = match m.target {
        Target::Cubin { major, minor } => (0u8, major, minor),
        Target::Ptx { major, minor } => (1u8, major, minor),
    };
    p.push(tag);
    p.extend_from_slice(&major.to_le_bytes());
    p.extend_from_slice(&minor.to_le_bytes());
    p.extend_from_slice(&(m.lowered_names.len() as u32).to_le_bytes());
    for n in &m.lowered_names {
        put_bytes(&mut p, n.as_bytes());
    }
    put_bytes(&mut p, m.log.as_bytes());
    put_bytes(&mut p, &m.image);
    let mut out = Vec::with_capacity(HEADER + p.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&key.0);
    out.extend_from_slice(&(p.len() as u64).to_le_bytes());
    out.extend_from_slice(&checksum(&p));
    out.extend_from_slice(&p);
    out
}

fn put_bytes(p: &mut Vec<u8>, b: &[u8]) {
    p.extend_from_slice(&(b.len() as u64).to_le_bytes());
    p.extend_from_slice(b);
}

fn checksum(payload: &[u8]) -> [u8; 16] {
    xxhash_rust::xxh3::xxh3_128(payload).to_le_bytes()
}

/// Verifies (magic, key, length, checksum) and parses the entry stored under `key`; `None`
/// for anything malformed, and for an entry stored under another key (renamed or copied
/// into place, by accident or by someone who may write the directory).
fn decode(bytes: &[u8], key: &CacheKey) -> Option<CompiledModule> {
    if bytes.len() < HEADER || &bytes[..8] != MAGIC || bytes[8..40] != key.0 {
        return None;
    }
    let len = u64::from_le_bytes(bytes[40..48].try_into().ok()?);
    let payload = &bytes[HEADER..];
    if payload.len() as u64 != len || checksum(payload)[..] != bytes[48..HEADER] {
        return None;
    }
    let mut r = Reader(payload);
    let tag = r.take(1)?[0];
    let major = u32::from_le_bytes(r.take(4)?.try_into().ok()?);
    let minor = u32::from_le_bytes(r.take(4)?.try_into().ok()?);
    let target = match tag {
        0 => Target::Cubin { major, minor },
        1 => Target::Ptx { major, minor },
        _ => return None,
    };
    let n = u32::from_le_bytes(r.take(4)?.try_into().ok()?) as usize;
    let mut lowered_names = Vec::with_capacity(n.min(4096));
    for _ in 0..n {
        lowered_names.push(String::from_utf8(r.bytes()?.to_vec()).ok()?);
    }
    let log = String::from_utf8(r.bytes()?.to_vec()).ok()?;
    let image = r.bytes()?.to_vec();
    if !r.0.is_empty() {
        return None;
    }
    Some(CompiledModule {
        image,
        target,
        lowered_names,
        log,
    })
}

struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if self.0.len() < n {
            return None;
        }
        let (a, b) = self.0.split_at(n);
        self.0 = b;
        Some(a)
    }

    fn bytes(&mut self) -> Option<&'a [u8]> {
        let n = u64::from_le_bytes(self.take(8)?.try_into().ok()?);
        self.take(usize::try_from(n).ok()?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> CompiledModule {
        CompiledModule {
            image: b"\x7fELF not really".to_vec(),
            target: Target::Cubin { major: 9, minor: 0 },
            lowered_names: vec!["k".into(), "_Z3fooPf".into()],
            log: "warning: x".into(),
        }
    }

    #[test]
    fn entries_round_trip_and_every_damage_is_detected() {
        let m = sample();
        let key = CacheKey([7; 32]);
        let bytes = encode(&m, &key);
        assert_eq!(decode(&bytes, &key), Some(m));
        assert_eq!(
            decode(&bytes, &CacheKey([8; 32])),
            None,
            "stored under another key"
        );
        for cut in [0, 7, 39, HEADER - 1, HEADER, bytes.len() - 1] {
            assert_eq!(decode(&bytes[..cut], &key), None, "truncated to {cut}");
        }
        for i in [0, 9, 20, 41, 50, HEADER + 3, bytes.len() - 1] {
            let mut bad = bytes.clone();
            bad[i] ^= 0x40;
            assert_eq!(decode(&bad, &key), None, "byte {i} flipped");
        }
        let mut longer = bytes.clone();
        longer.push(0);
        assert_eq!(decode(&longer, &key), None);
    }

    #[test]
    fn fields_are_length_prefixed() {
        let a = {
            let mut h = KeyHasher::new();
            h.list(&["ab", "c"]);
            h.finish()
        };
        let b = {
            let mut h = KeyHasher::new();
            h.list(&["a", "bc"]);
            h.finish()
        };
        assert_ne!(a, b);
        assert_eq!(a.to_hex().len(), 64);
    }
}
