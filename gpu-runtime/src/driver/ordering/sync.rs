//! The synchronisation primitives of the ordering records: the crate's ranked locks over
//! `std`'s, or over `loom`'s when the crate is built with `--cfg loom` for the model check
//! (`model.rs`), so that the model explores every interleaving of the records' real code.

#[cfg(loom)]
pub(super) use crate::sync::loom::{Mutex, MutexGuard, RwLock, RwLockReadGuard, RwLockWriteGuard};
#[cfg(not(loom))]
pub(super) use crate::sync::{Mutex, MutexGuard, RwLock, RwLockReadGuard, RwLockWriteGuard};
#[cfg(loom)]
pub(super) use loom::sync::atomic::AtomicUsize;
#[cfg(not(loom))]
pub(super) use std::sync::atomic::AtomicUsize;
