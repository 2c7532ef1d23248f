//! Whom the cache trusts: entries and directories no other user could have written (see the
//! module docs of `cache`), checked once per directory and process.

use std::collections::HashSet;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use crate::sync::{LockRank, Mutex, MutexGuard};

/// What this process already found trustworthy (one check per directory): cache directories,
/// and directories above one, which pass on weaker terms (root's, or sticky like /tmp).
#[derive(Default)]
struct Trusted {
    dirs: HashSet<PathBuf>,
    ancestors: HashSet<PathBuf>,
}

fn trusted() -> MutexGuard<'static, Trusted> {
    static TRUSTED: OnceLock<Mutex<Trusted>> = OnceLock::new();
    TRUSTED
        .get_or_init(|| Mutex::new(LockRank::CacheTrust, Trusted::default()))
        .lock()
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
pub(super) fn trusted_file(path: &Path, meta: &fs::Metadata) -> Result<(), String> {
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
