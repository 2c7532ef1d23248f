//! The synchronisation primitives of the ordering records: `std`'s, or `loom`'s when the crate
//! is built with `--cfg loom` for the model check (`model.rs`), so that the model explores
//! every interleaving of the records' real code.

#[cfg(loom)]
pub(super) use loom::sync::atomic::AtomicUsize;
#[cfg(loom)]
pub(super) use loom::sync::{Mutex, MutexGuard, RwLock, RwLockReadGuard, RwLockWriteGuard};
#[cfg(not(loom))]
pub(super) use std::sync::atomic::AtomicUsize;
#[cfg(not(loom))]
pub(super) use std::sync::{Mutex, MutexGuard, RwLock, RwLockReadGuard, RwLockWriteGuard};

/// Locks `m` (`std`'s or `loom`'s); a lock whose holder panicked is still good, as every
/// critical section here leaves its data consistent before anything can panic.
pub(super) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}
