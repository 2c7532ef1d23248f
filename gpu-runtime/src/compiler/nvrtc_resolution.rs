//! Remembering, in the cache directory, which NVRTC file the loader loaded when the search along
//! `LD_LIBRARY_PATH` finds none: the usual setup of a system CUDA install, where the loader
//! finds NVRTC through `/etc/ld.so.cache`.
//!
//! A cache key by search ([`toolchain`]) needs the file the search finds, and there is none.
//! Without more, each new process would load NVRTC (10-15 ms) to key its lookup by NVRTC's
//! version. But once the search along `LD_LIBRARY_PATH` has found nothing, what the loader
//! loads is fixed by the loader's cache (`/etc/ld.so.cache`, which `ldconfig` rewrites when a
//! library is installed) and the default directories. So, after NVRTC is loaded on a miss, the
//! file loaded is recorded with the [`Stamp`] of the loader's cache, in a small file of the
//! cache directory named by a hash of `LD_LIBRARY_PATH` (and holding it). A later lookup with
//! the same `LD_LIBRARY_PATH` whose search finds nothing reads the record (one open and read),
//! checks the loader's cache with one `stat`, and keys the entry by the recorded file
//! ([`remembered_material`]); the entry, as any keyed by search, stores that file's identity
//! and a hit checks it with one `stat`.
//!
//! Anything else falls back to loading NVRTC and keying by its version: no record, one not
//! written by you (the cache's own trust checks, as for entries), a corrupt one, another
//! `LD_LIBRARY_PATH`, a changed loader cache (its size, times, device or inode), a replaced
//! NVRTC file (the entry's check fails, and the miss records the new file, under another key).
//! What the record does not see: a library the loader would find first through an executable's
//! `RUNPATH`, or one copied into a default directory (`/usr/lib`) without `ldconfig` run.
//! Only on Linux, where the loader's cache and `/proc/self/maps` (to name the file loaded) are.
//!
//! [`Stamp`]: toolchain::Stamp

use std::ffi::OsStr;
use std::path::Path;

use crate::compiler::cache::{self, CacheKey, KeyMaterial};
use crate::compiler::plan::TargetRequest;
use crate::compiler::toolchain::{self, LibraryIdentity, Stamp, STAMP_LEN};

/// The loader's cache, whose contents decide what it loads when `LD_LIBRARY_PATH` has nothing.
pub(crate) const LOADER_CACHE: &str = "/etc/ld.so.cache";

/// The first bytes of a record: its format.
const RECORD_MAGIC: &[u8] = b"gpu-runtime nvrtc resolution v1\n";

/// The key whose entry path names the record for `library_path` in a cache directory.
fn record_key(library_path: &OsStr) -> CacheKey {
    let mut m = KeyMaterial::with_capacity(128 + library_path.len());
    m.field(b"nvrtc loaded when not found along")
        .field(library_path.as_encoded_bytes());
    m.key()
}

/// The record's bytes: the format, `library_path` (length and bytes), the loader cache's
/// stamp, then the identity of the file loaded (as [`LibraryIdentity::to_bytes`] makes it).
fn record_bytes(library_path: &OsStr, loader_cache: &Stamp, loaded: &LibraryIdentity) -> Vec<u8> {
    let path = library_path.as_encoded_bytes();
    let identity = loaded.to_bytes();
    let mut b = Vec::with_capacity(RECORD_MAGIC.len() + 8 + path.len() + STAMP_LEN + identity.len());
    b.extend_from_slice(RECORD_MAGIC);
    b.extend_from_slice(&(path.len() as u64).to_le_bytes());
    b.extend_from_slice(path);
    b.extend_from_slice(loader_cache);
    b.extend_from_slice(&identity);
    b
}

/// The identity bytes a record holds, if it is whole, names `library_path` and the loader
/// cache's `stamp` as it is now.
fn recorded_identity<'r>(record: &'r [u8], library_path: &OsStr, stamp: &Stamp) -> Option<&'r [u8]> {
    let rest = record.strip_prefix(RECORD_MAGIC)?;
    let len = usize::try_from(u64::from_le_bytes(rest.get(..8)?.try_into().ok()?)).ok()?;
    let (path, rest) = rest.get(8..)?.split_at_checked(len)?;
    let (recorded_stamp, identity) = rest.split_at_checked(STAMP_LEN)?;
    if path != library_path.as_encoded_bytes() || recorded_stamp != stamp {
        return None;
    }
    // A stored identity the entries' check can read, and nothing after it.
    toolchain::split_stored(identity)?;
    Some(identity)
}

/// The stamp of the loader's cache `loader_cache` now: one `stat`.
fn loader_cache_stamp(loader_cache: &Path) -> Option<Stamp> {
    std::fs::metadata(loader_cache)
        .ok()
        .map(|meta| toolchain::stamp_of(&meta))
}

/// Records in `dir` that, with `library_path` as set and `loader_cache` as it is now, the
/// loader loaded `loaded`. Written atomically, as entries are. `false` when it could not be.
pub(crate) fn remember(
    dir: &Path,
    library_path: &OsStr,
    loader_cache: &Path,
    loaded: &LibraryIdentity,
) -> bool {
    let Some(stamp) = loader_cache_stamp(loader_cache) else {
        return false;
    };
    let record = record_bytes(library_path, &stamp, loaded);
    let path = cache::entry_path(dir, &record_key(library_path));
    cache::write_atomic(dir, &path, &record).is_ok()
}

/// The identity of the NVRTC file recorded in `dir` for `library_path`, if the record is
/// there, trusted, whole, and `loader_cache` is unchanged since: one open and read, one
/// `stat`. Whether the file itself is unchanged is for the entry's check.
pub(crate) fn remembered(dir: &Path, library_path: &OsStr, loader_cache: &Path) -> Option<Vec<u8>> {
    let record = cache::read_entry(dir, &record_key(library_path)).ok()?;
    let stamp = loader_cache_stamp(loader_cache)?;
    recorded_identity(&record, library_path, &stamp).map(<[u8]>::to_vec)
}

/// The start of the key's material for a compile by the NVRTC file `identity` (stored bytes
/// of a [`LibraryIdentity`]) that the loader loaded with `library_path` as set and no NVRTC
/// on it, with room for `capacity` bytes in all. Another file, or the same one with other
/// metadata, makes another key; the tag keeps these keys apart from those by search and by
/// version. What is compiled follows.
pub(crate) fn remembered_material(
    library_path: &OsStr,
    identity: &[u8],
    target: TargetRequest,
    capacity: usize,
) -> KeyMaterial {
    let mut h = KeyMaterial::with_capacity(capacity);
    h.field(b"nvrtc loaded past")
        .field(library_path.as_encoded_bytes());
    h.field(identity);
    h.field(&target.key_bytes());
    h
}

/// After NVRTC is loaded: the identity of the file it was loaded from, if it can be named.
pub(crate) fn loaded_identity() -> Option<LibraryIdentity> {
    LibraryIdentity::of(toolchain::loaded_nvrtc_path()?)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fresh directory for one test, with a cache directory and a file standing for the
    /// loader's cache and one for NVRTC.
    struct Scene {
        root: std::path::PathBuf,
        cache_dir: std::path::PathBuf,
        loader_cache: std::path::PathBuf,
        library: std::path::PathBuf,
    }

    impl Scene {
        fn new(name: &str) -> Scene {
            let root =
                std::env::temp_dir().join(format!("gpu-runtime-resolution-{name}-{}", std::process::id()));
            let _ = std::fs::remove_dir_all(&root);
            std::fs::create_dir_all(&root).unwrap();
            let loader_cache = root.join("ld.so.cache");
            std::fs::write(&loader_cache, b"cache one").unwrap();
            let library = root.join("libnvrtc.so.13");
            std::fs::write(&library, b"nvrtc one").unwrap();
            Scene {
                cache_dir: root.join("cache"),
                root,
                loader_cache,
                library,
            }
        }

        fn identity(&self) -> LibraryIdentity {
            LibraryIdentity::of(self.library.clone()).unwrap()
        }
    }

    impl Drop for Scene {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.root);
        }
    }

    const PATH: &str = "/usr/local/nvidia/lib64:/usr/local/nvidia/lib";

    #[test]
    fn a_record_is_read_back_while_nothing_changed() {
        let s = Scene::new("same");
        let path = OsStr::new(PATH);
        assert_eq!(remembered(&s.cache_dir, path, &s.loader_cache), None, "none yet");
        assert!(remember(&s.cache_dir, path, &s.loader_cache, &s.identity()));
        let identity = remembered(&s.cache_dir, path, &s.loader_cache).unwrap();
        assert_eq!(identity, s.identity().to_bytes());
        assert!(toolchain::stored_library_is_current(&identity));
    }

    #[test]
    fn another_library_path_has_no_record() {
        let s = Scene::new("path");
        assert!(remember(
            &s.cache_dir,
            OsStr::new(PATH),
            &s.loader_cache,
            &s.identity()
        ));
        let other = OsStr::new("/usr/local/nvidia/lib64");
        assert_eq!(remembered(&s.cache_dir, other, &s.loader_cache), None);
        // Nor does a record read under another path's name count for it.
        let record = record_bytes(
            OsStr::new(PATH),
            &loader_cache_stamp(&s.loader_cache).unwrap(),
            &s.identity(),
        );
        let stamp = loader_cache_stamp(&s.loader_cache).unwrap();
        assert_eq!(recorded_identity(&record, other, &stamp), None);
        assert!(recorded_identity(&record, OsStr::new(PATH), &stamp).is_some());
    }

    #[test]
    fn a_changed_loader_cache_voids_the_record() {
        let s = Scene::new("ldcache");
        let path = OsStr::new(PATH);
        assert!(remember(&s.cache_dir, path, &s.loader_cache, &s.identity()));
        // `ldconfig` writes a new cache and renames it into place: another inode.
        let fresh = s.root.join("ld.so.cache.new");
        std::fs::write(&fresh, b"cache one").unwrap();
        std::fs::rename(&fresh, &s.loader_cache).unwrap();
        assert_eq!(remembered(&s.cache_dir, path, &s.loader_cache), None, "replaced");
        std::fs::remove_file(&s.loader_cache).unwrap();
        assert_eq!(remembered(&s.cache_dir, path, &s.loader_cache), None, "gone");
    }

    #[test]
    fn a_replaced_library_fails_the_entries_check_and_keys_apart() {
        let s = Scene::new("library");
        let path = OsStr::new(PATH);
        let before = s.identity();
        assert!(remember(&s.cache_dir, path, &s.loader_cache, &before));
        let fresh = s.root.join("libnvrtc.new");
        std::fs::write(&fresh, b"nvrtc two").unwrap();
        std::fs::rename(&fresh, &s.library).unwrap();
        let recorded = remembered(&s.cache_dir, path, &s.loader_cache).unwrap();
        assert!(
            !toolchain::stored_library_is_current(&recorded),
            "an entry's hit fails"
        );
        // The miss records the new file, whose key is another.
        let after = s.identity();
        assert!(remember(&s.cache_dir, path, &s.loader_cache, &after));
        let target = TargetRequest::Device((9, 0));
        let key = |id: &[u8]| remembered_material(path, id, target, 0).key();
        assert_ne!(key(&before.to_bytes()), key(&after.to_bytes()));
        assert_eq!(
            remembered(&s.cache_dir, path, &s.loader_cache),
            Some(after.to_bytes())
        );
    }

    #[test]
    fn a_corrupt_record_is_no_record() {
        let s = Scene::new("corrupt");
        let path = OsStr::new(PATH);
        assert!(remember(&s.cache_dir, path, &s.loader_cache, &s.identity()));
        let file = cache::entry_path(&s.cache_dir, &record_key(path));
        let whole = std::fs::read(&file).unwrap();
        let stamp = loader_cache_stamp(&s.loader_cache).unwrap();
        assert!(recorded_identity(&whole, path, &stamp).is_some());
        for cut in [0, RECORD_MAGIC.len(), RECORD_MAGIC.len() + 9, whole.len() - 1] {
            assert_eq!(
                recorded_identity(&whole[..cut], path, &stamp),
                None,
                "cut to {cut}"
            );
        }
        let mut longer = whole.clone();
        longer.push(0);
        assert_eq!(recorded_identity(&longer, path, &stamp), None, "a byte more");
        let mut other_format = whole.clone();
        other_format[0] ^= 1;
        assert_eq!(
            recorded_identity(&other_format, path, &stamp),
            None,
            "another format"
        );
        // Written over in place (the cache's own permissions kept): read back as corrupt.
        std::fs::write(&file, &whole[..whole.len() - 1]).unwrap();
        assert_eq!(remembered(&s.cache_dir, path, &s.loader_cache), None);
    }

    #[test]
    fn the_keys_by_record_search_and_version_differ() {
        let path = OsStr::new(PATH);
        let target = TargetRequest::Device((9, 0));
        let id = b"identity";
        let by_record = remembered_material(path, id, target, 0).key();
        let by_search = crate::compiler::plan::nvrtc_search_material(path, target, 0).key();
        assert_ne!(by_record, by_search);
        assert_ne!(by_record, record_key(path));
    }
}
