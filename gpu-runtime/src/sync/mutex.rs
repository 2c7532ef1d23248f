//! [`Mutex`] and [`Condvar`]: `std`'s, with a rank, and the poison ignored.

use std::fmt;
use std::ops::{Deref, DerefMut};
use std::time::Duration;

use super::held::{Held, Ranked};
use super::poison::unpoison;
use super::rank::LockRank;

/// `std::sync::Mutex` with a place in the lock order ([`LockRank`]), checked in debug builds,
/// whose `lock` cannot fail (see the module docs of `sync` for why the poison is ignored).
pub(crate) struct Mutex<T> {
    inner: std::sync::Mutex<T>,
    rank: Ranked,
}

/// The guard of a [`Mutex`]: the lock is held, and listed as held, until it is dropped.
pub(crate) struct MutexGuard<'a, T> {
    // Dropped first: the lock is let go, then it leaves the thread's list.
    inner: std::sync::MutexGuard<'a, T>,
    _held: Held,
}

impl<T> Mutex<T> {
    /// A mutex of rank `rank` holding `value` (a `const fn`, for statics).
    pub(crate) const fn new(rank: LockRank, value: T) -> Mutex<T> {
        Mutex {
            inner: std::sync::Mutex::new(value),
            rank: Ranked::new(rank),
        }
    }

    /// Locks it, blocking until it is free; in debug builds, first checks the lock order.
    #[inline]
    #[cfg_attr(debug_assertions, track_caller)]
    pub(crate) fn lock(&self) -> MutexGuard<'_, T> {
        let held = self.rank.acquire(self as *const Self as *const ());
        MutexGuard {
            inner: unpoison(self.inner.lock()),
            _held: held,
        }
    }

    /// The value, through exclusive access (no lock taken).
    #[inline]
    pub(crate) fn get_mut(&mut self) -> &mut T {
        unpoison(self.inner.get_mut())
    }

    /// The value, the mutex consumed.
    #[inline]
    pub(crate) fn into_inner(self) -> T {
        unpoison(self.inner.into_inner())
    }
}

impl<T: fmt::Debug> fmt::Debug for Mutex<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // std's: the value when the lock is free now (a try_lock, which waits for nothing and
        // so is outside the order).
        self.inner.fmt(f)
    }
}

impl<T> Deref for MutexGuard<'_, T> {
    type Target = T;
    #[inline]
    fn deref(&self) -> &T {
        &self.inner
    }
}

impl<T> DerefMut for MutexGuard<'_, T> {
    #[inline]
    fn deref_mut(&mut self) -> &mut T {
        &mut self.inner
    }
}

/// `std::sync::Condvar`, waiting with a [`MutexGuard`]. While a thread waits, its lock stays
/// listed as held: the thread takes no other lock before it has the lock back.
pub(crate) struct Condvar(std::sync::Condvar);

impl Condvar {
    pub(crate) const fn new() -> Condvar {
        Condvar(std::sync::Condvar::new())
    }

    /// Lets `guard`'s lock go until notified (or woken spuriously), then takes it again.
    pub(crate) fn wait<'a, T>(&self, guard: MutexGuard<'a, T>) -> MutexGuard<'a, T> {
        let MutexGuard { inner, _held } = guard;
        MutexGuard {
            inner: unpoison(self.0.wait(inner)),
            _held,
        }
    }

    /// [`wait`](Self::wait), for at most `timeout`.
    #[cfg_attr(not(feature = "nccl"), allow(dead_code))]
    pub(crate) fn wait_timeout<'a, T>(
        &self,
        guard: MutexGuard<'a, T>,
        timeout: Duration,
    ) -> MutexGuard<'a, T> {
        let MutexGuard { inner, _held } = guard;
        MutexGuard {
            inner: unpoison(self.0.wait_timeout(inner, timeout)).0,
            _held,
        }
    }

    pub(crate) fn notify_all(&self) {
        self.0.notify_all()
    }
}
