//! NVRTC found by the loader past `LD_LIBRARY_PATH`: the usual setup of a system CUDA install,
//! where the loader finds NVRTC through `/etc/ld.so.cache` (with `LD_LIBRARY_PATH` set to other
//! directories, or not set at all, which to the loader is the empty path).
//!
//! A cache key by search ([`toolchain`]) names `LD_LIBRARY_PATH`, and its entry the file the
//! search found, which a hit checks with one `stat`. Here the search finds none. Without more,
//! each new process would load NVRTC (10-15 ms) to key its lookup by NVRTC's version. But once
//! the search along `LD_LIBRARY_PATH` has found nothing, what the loader loads is fixed by the
//! loader's cache (`/etc/ld.so.cache`, which `ldconfig` rewrites when a library is installed)
//! and the default directories. So the search stamps what it looks at before it looks
//! ([`surroundings`](toolchain::surroundings): the loader's cache and each directory of the path, whose modification
//! time changes when a file is added, removed or renamed in it), and after NVRTC is loaded on a
//! miss, the entry (under the same key by search) stores the file loaded (named by the loader's
//! map) with those stamps ([`stored_past_search`]). A hit in a later process reads the entry,
//! as any by search, and checks it without searching and without NVRTC: the stamps again (a
//! `stat` per directory of the path, and one), and the file (one `stat`). Equal stamps mean the
//! search would still find nothing, where the search itself costs a `stat` per directory and
//! name tried (seventeen names).
//!
//! Anything changed fails the check, and the miss compiles and stores again (the search runs,
//! NVRTC is loaded): a changed loader cache or directory of the path (its size, times, device
//! or inode), another working directory when the path has an empty entry, a replaced NVRTC file.
//! What the check does not see: a library the loader would find first through an executable's
//! `RUNPATH`, one copied into a default directory (`/usr/lib`) without `ldconfig` run, or a
//! dangling link named as NVRTC in a directory of the path whose target appears later. Only on
//! Linux, where the loader's cache and `/proc/self/maps` (to name the file loaded) are;
//! elsewhere the key names NVRTC's version.
//!
//! [`toolchain`]: crate::compiler::toolchain

use std::ffi::OsStr;
use std::path::Path;

use crate::compiler::toolchain::{self, surroundings, LibraryIdentity, LOADER_CACHE};

/// The first bytes of an entry's compiler loaded past the search. A compiler found by the
/// search is stored as [`LibraryIdentity::to_bytes`] makes it, whose first eight bytes are a
/// path's length: never these.
const PAST_SEARCH_TAG: &[u8] = b"nvrtc loaded past the search v1\n";

/// The compiler an entry stores when the search along `library_path` saw `searched` (stamped
/// before it looked, and finding nothing) and the loader loaded `loaded`: the tag, the path and
/// what was seen (each its length and bytes), then the file's identity.
pub(crate) fn stored_past_search(library_path: &OsStr, searched: &[u8], loaded: &LibraryIdentity) -> Vec<u8> {
    let path = library_path.as_encoded_bytes();
    let identity = loaded.to_bytes();
    let mut b = Vec::with_capacity(PAST_SEARCH_TAG.len() + 16 + path.len() + searched.len() + identity.len());
    b.extend_from_slice(PAST_SEARCH_TAG);
    for field in [path, searched] {
        b.extend_from_slice(&(field.len() as u64).to_le_bytes());
        b.extend_from_slice(field);
    }
    b.extend_from_slice(&identity);
    b
}

/// A compiler loaded past the search, as an entry stores it, borrowed from the entry.
pub(crate) struct PastSearch<'e> {
    library_path: &'e OsStr,
    searched: &'e [u8],
    identity: &'e [u8],
}

/// The first field of `b` (its length, then its bytes), and what follows it.
fn split_field(b: &[u8]) -> Option<(&[u8], &[u8])> {
    let len = usize::try_from(u64::from_le_bytes(b.get(..8)?.try_into().ok()?)).ok()?;
    b.get(8..)?.split_at_checked(len)
}

/// `stored` read as [`stored_past_search`] wrote it; `None` for anything else (a compiler found
/// by the search, or a damaged one).
pub(crate) fn split_past_search(stored: &[u8]) -> Option<PastSearch<'_>> {
    let rest = stored.strip_prefix(PAST_SEARCH_TAG)?;
    let (path, rest) = split_field(rest)?;
    let (searched, identity) = split_field(rest)?;
    #[cfg(unix)]
    let library_path = <OsStr as std::os::unix::ffi::OsStrExt>::from_bytes(path);
    // Elsewhere `OsStr`'s bytes are not a stable format: only UTF-8 paths round-trip.
    #[cfg(not(unix))]
    let library_path = OsStr::new(std::str::from_utf8(path).ok()?);
    Some(PastSearch {
        library_path,
        searched,
        identity,
    })
}

impl PastSearch<'_> {
    /// Whether this process would load the same file: nothing the search and the loader look
    /// at changed (a `stat` per directory of the path, and one of the loader's cache), and the
    /// file is there, unchanged (one `stat`).
    pub(crate) fn is_current(&self) -> bool {
        self.is_current_with(Path::new(LOADER_CACHE))
    }

    fn is_current_with(&self, loader_cache: &Path) -> bool {
        surroundings(self.library_path, loader_cache).is_some_and(|now| now == self.searched)
            && toolchain::stored_library_is_current(self.identity)
    }
}

/// After NVRTC is loaded: the identity of the file it was loaded from, if it can be named.
pub(crate) fn loaded_identity() -> Option<LibraryIdentity> {
    LibraryIdentity::of(toolchain::loaded_nvrtc_path()?)
}

#[cfg(test)]
mod tests {
    use std::ffi::OsString;

    use super::*;
    use crate::compiler::toolchain::STAMP_LEN;

    /// A fresh directory for one test, with a file standing for the loader's cache, one for
    /// NVRTC, and two directories for the search path (one there, one not).
    struct Scene {
        root: std::path::PathBuf,
        loader_cache: std::path::PathBuf,
        library: std::path::PathBuf,
        path: OsString,
    }

    impl Scene {
        fn new(name: &str) -> Scene {
            let root =
                std::env::temp_dir().join(format!("gpu-runtime-resolution-{name}-{}", std::process::id()));
            let _ = std::fs::remove_dir_all(&root);
            std::fs::create_dir_all(root.join("lib64")).unwrap();
            let loader_cache = root.join("ld.so.cache");
            std::fs::write(&loader_cache, b"cache one").unwrap();
            let library = root.join("libnvrtc.so.13");
            std::fs::write(&library, b"nvrtc one").unwrap();
            let path = std::env::join_paths([root.join("lib64"), root.join("lib")]).unwrap();
            Scene {
                root,
                loader_cache,
                library,
                path,
            }
        }

        fn identity(&self) -> LibraryIdentity {
            LibraryIdentity::of(self.library.clone()).unwrap()
        }

        /// What an entry stores for the file loaded now, past a search along the path now.
        fn stored(&self) -> Vec<u8> {
            let searched = surroundings(&self.path, &self.loader_cache).unwrap();
            stored_past_search(&self.path, &searched, &self.identity())
        }

        fn current(&self, stored: &[u8]) -> bool {
            split_past_search(stored).is_some_and(|p| p.is_current_with(&self.loader_cache))
        }
    }

    impl Drop for Scene {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.root);
        }
    }

    #[test]
    fn a_stored_compiler_is_current_while_nothing_changed() {
        let s = Scene::new("same");
        let stored = s.stored();
        assert!(s.current(&stored));
        // The form of a compiler found by the search is not read as this one.
        assert!(split_past_search(&s.identity().to_bytes()).is_none());
        assert!(toolchain::split_stored(&stored).is_none());
    }

    #[test]
    fn a_changed_loader_cache_fails_the_check() {
        let s = Scene::new("ldcache");
        let stored = s.stored();
        // `ldconfig` writes a new cache and renames it into place: another inode.
        let fresh = s.root.join("ld.so.cache.new");
        std::fs::write(&fresh, b"cache one").unwrap();
        std::fs::rename(&fresh, &s.loader_cache).unwrap();
        assert!(!s.current(&stored), "replaced");
        std::fs::remove_file(&s.loader_cache).unwrap();
        assert!(!s.current(&stored), "gone");
    }

    /// A library put in a directory of the path (where the search would now find it), a file
    /// renamed there, or a directory of the path made, fails the check: the miss searches
    /// again.
    #[test]
    fn a_changed_directory_of_the_path_fails_the_check() {
        let s = Scene::new("dirs");
        let stored = s.stored();
        std::fs::write(s.root.join("lib64/libnvrtc.so"), b"nvrtc found").unwrap();
        assert!(!s.current(&stored), "a file added");
        let stored = s.stored();
        assert!(s.current(&stored));
        std::fs::rename(
            s.root.join("lib64/libnvrtc.so"),
            s.root.join("lib64/libnvrtc.so.13"),
        )
        .unwrap();
        assert!(!s.current(&stored), "a file renamed");
        let stored = s.stored();
        std::fs::create_dir(s.root.join("lib")).unwrap();
        assert!(!s.current(&stored), "a missing directory made");
    }

    #[test]
    fn a_replaced_library_fails_the_check() {
        let s = Scene::new("library");
        let stored = s.stored();
        let fresh = s.root.join("libnvrtc.new");
        std::fs::write(&fresh, b"nvrtc two").unwrap();
        std::fs::rename(&fresh, &s.library).unwrap();
        assert!(!s.current(&stored));
        assert!(s.current(&s.stored()), "stored again");
    }

    /// An empty path (`LD_LIBRARY_PATH` unset) searches no directory, not the working one;
    /// an empty entry of a longer path is the working directory.
    #[test]
    fn an_empty_path_stamps_the_loader_cache_alone() {
        let s = Scene::new("empty");
        let alone = surroundings(OsStr::new(""), &s.loader_cache).unwrap();
        assert_eq!(alone.len(), STAMP_LEN);
        let with_cwd = std::env::join_paths([OsString::new(), s.root.clone().into()]).unwrap();
        let two = surroundings(&with_cwd, &s.loader_cache).unwrap();
        assert_eq!(two.len(), STAMP_LEN + 2 * (1 + STAMP_LEN));
        let cwd = std::fs::metadata(".").unwrap();
        assert_eq!(&two[STAMP_LEN + 1..][..STAMP_LEN], &toolchain::stamp_of(&cwd)[..]);
        let stored = stored_past_search(OsStr::new(""), &alone, &s.identity());
        assert!(s.current(&stored));
    }

    #[test]
    fn a_damaged_stored_compiler_is_not_current() {
        let s = Scene::new("damaged");
        let whole = s.stored();
        assert!(s.current(&whole));
        for cut in [
            0,
            PAST_SEARCH_TAG.len(),
            PAST_SEARCH_TAG.len() + 9,
            whole.len() - 1,
        ] {
            assert!(!s.current(&whole[..cut]), "cut to {cut}");
        }
        let mut longer = whole.clone();
        longer.push(0);
        assert!(!s.current(&longer), "a byte more");
        let mut other_format = whole.clone();
        other_format[0] ^= 1;
        assert!(!s.current(&other_format), "another format");
        // Another path stored: its directories are stamped, not the scene's.
        let elsewhere = stored_past_search(
            &s.root.join("lib64").into_os_string(),
            &surroundings(&s.path, &s.loader_cache).unwrap(),
            &s.identity(),
        );
        assert!(!s.current(&elsewhere));
    }
}
