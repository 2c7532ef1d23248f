//! [`RwLock`]: `std`'s, with a rank, and the poison ignored.

use std::ops::{Deref, DerefMut};

use super::held::{Held, Ranked};
use super::poison::unpoison;
use super::rank::LockRank;

/// `std::sync::RwLock` with a place in the lock order ([`LockRank`]), checked in debug builds
/// for shared and exclusive acquisitions alike, whose `read` and `write` cannot fail.
pub(crate) struct RwLock<T> {
    inner: std::sync::RwLock<T>,
    rank: Ranked,
}

/// A shared guard of a [`RwLock`].
pub(crate) struct RwLockReadGuard<'a, T> {
    inner: std::sync::RwLockReadGuard<'a, T>,
    _held: Held,
}

/// The exclusive guard of a [`RwLock`].
pub(crate) struct RwLockWriteGuard<'a, T> {
    inner: std::sync::RwLockWriteGuard<'a, T>,
    _held: Held,
}

impl<T> RwLock<T> {
    /// A reader-writer lock of rank `rank` holding `value`.
    pub(crate) const fn new(rank: LockRank, value: T) -> RwLock<T> {
        RwLock {
            inner: std::sync::RwLock::new(value),
            rank: Ranked::new(rank),
        }
    }

    /// Takes it shared, blocking while it is held exclusively.
    #[inline]
    #[cfg_attr(debug_assertions, track_caller)]
    pub(crate) fn read(&self) -> RwLockReadGuard<'_, T> {
        let held = self.rank.acquire(self as *const Self as *const ());
        RwLockReadGuard {
            inner: unpoison(self.inner.read()),
            _held: held,
        }
    }

    /// Takes it exclusively, blocking while it is held at all.
    #[inline]
    #[cfg_attr(debug_assertions, track_caller)]
    pub(crate) fn write(&self) -> RwLockWriteGuard<'_, T> {
        let held = self.rank.acquire(self as *const Self as *const ());
        RwLockWriteGuard {
            inner: unpoison(self.inner.write()),
            _held: held,
        }
    }
}

impl<T> Deref for RwLockReadGuard<'_, T> {
    type Target = T;
    #[inline]
    fn deref(&self) -> &T {
        &self.inner
    }
}

impl<T> Deref for RwLockWriteGuard<'_, T> {
    type Target = T;
    #[inline]
    fn deref(&self) -> &T {
        &self.inner
    }
}

impl<T> DerefMut for RwLockWriteGuard<'_, T> {
    #[inline]
    fn deref_mut(&mut self) -> &mut T {
        &mut self.inner
    }
}
