//! The crate's [`Mutex`] and [`RwLock`] over loom's primitives, for the model check of the
//! stream-ordering records (`driver/ordering/model.rs`, built with `--cfg loom`): the same
//! interface as the `std` ones, so the records' real code runs under loom, which explores its
//! interleavings. Loom's `new` is not `const`, so statics keep the `std` locks. The lock order
//! is not checked here (see `held.rs`); the ranks are given all the same.

use std::ops::{Deref, DerefMut};

use super::poison::unpoison;
use super::rank::LockRank;

/// [`crate::sync::Mutex`] over `loom::sync::Mutex`.
pub(crate) struct Mutex<T>(loom::sync::Mutex<T>);

/// The guard of a [`Mutex`].
pub(crate) struct MutexGuard<'a, T>(loom::sync::MutexGuard<'a, T>);

impl<T> Mutex<T> {
    pub(crate) fn new(_rank: LockRank, value: T) -> Mutex<T> {
        Mutex(loom::sync::Mutex::new(value))
    }

    pub(crate) fn lock(&self) -> MutexGuard<'_, T> {
        MutexGuard(unpoison(self.0.lock()))
    }

    pub(crate) fn get_mut(&mut self) -> &mut T {
        unpoison(self.0.get_mut())
    }
}

impl<T> Deref for MutexGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

impl<T> DerefMut for MutexGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        &mut self.0
    }
}

/// [`crate::sync::RwLock`] over `loom::sync::RwLock`.
pub(crate) struct RwLock<T>(loom::sync::RwLock<T>);

/// A shared guard of a [`RwLock`].
pub(crate) struct RwLockReadGuard<'a, T>(loom::sync::RwLockReadGuard<'a, T>);

/// The exclusive guard of a [`RwLock`].
pub(crate) struct RwLockWriteGuard<'a, T>(loom::sync::RwLockWriteGuard<'a, T>);

impl<T> RwLock<T> {
    pub(crate) fn new(_rank: LockRank, value: T) -> RwLock<T> {
        RwLock(loom::sync::RwLock::new(value))
    }

    pub(crate) fn read(&self) -> RwLockReadGuard<'_, T> {
        RwLockReadGuard(unpoison(self.0.read()))
    }

    pub(crate) fn write(&self) -> RwLockWriteGuard<'_, T> {
        RwLockWriteGuard(unpoison(self.0.write()))
    }
}

impl<T> Deref for RwLockReadGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

impl<T> Deref for RwLockWriteGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}
