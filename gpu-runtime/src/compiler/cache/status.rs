//! What the cache did for one compile ([`CacheStatus`]).

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
    /// [module docs](crate::compiler::cache)): compiled without caching, and nothing was stored.
    Untrusted,
}
