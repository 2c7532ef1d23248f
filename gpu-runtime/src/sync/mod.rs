//! The crate's locks, the lowest layer: every mutex, reader-writer lock and spin lock of
//! gpu-runtime is one of these, made with its [`LockRank`], its place in the one order in
//! which locks may be nested (`rank.rs`, which says what each lock guards). Debug builds check
//! the order at every acquisition and panic, naming both locks, when a lock is taken below one
//! the thread holds (`held.rs`); release builds keep no rank and check nothing, so these are
//! `std`'s locks at the same size and cost. `scripts/check_layers.py` refuses a lock of `std`,
//! `parking_lot` or `loom` anywhere else in the crate's code (tests and the model check's own
//! stand-ins aside), so a new lock gets a rank.
//!
//! A lock whose holder panicked is used as it is: the poison is ignored, in `poison.rs` and
//! nowhere else (which says why).

mod held;
#[cfg(loom)]
pub(crate) mod loom;
mod mutex;
mod poison;
mod rank;
mod rwlock;
mod spin;
#[cfg(test)]
mod tests;

pub(crate) use mutex::{Condvar, Mutex, MutexGuard};
pub(crate) use rank::LockRank;
// Under loom, the ordering records take `loom.rs`'s guards instead.
#[cfg_attr(loom, allow(unused_imports))]
pub(crate) use rwlock::{RwLock, RwLockReadGuard, RwLockWriteGuard};
pub(crate) use spin::{SpinGuard, SpinLock};

// Release builds keep no rank: each lock and guard is the size of `std`'s.
#[cfg(not(debug_assertions))]
const _: () = {
    use std::mem::size_of;
    assert!(size_of::<Mutex<u64>>() == size_of::<std::sync::Mutex<u64>>());
    assert!(size_of::<MutexGuard<'static, u64>>() == size_of::<std::sync::MutexGuard<'static, u64>>());
    assert!(size_of::<RwLock<u64>>() == size_of::<std::sync::RwLock<u64>>());
    assert!(
        size_of::<RwLockReadGuard<'static, u64>>() == size_of::<std::sync::RwLockReadGuard<'static, u64>>()
    );
};
