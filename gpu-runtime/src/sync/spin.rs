//! [`SpinLock`]: a lock for critical sections of a few instructions, with a rank.

use std::cell::UnsafeCell;
use std::ops::{Deref, DerefMut};
use std::sync::atomic::{AtomicBool, Ordering};

use super::held::{Held, Ranked};
use super::rank::LockRank;

/// A lock taken with one atomic exchange and given back with a plain release store, where a
/// mutex pays an atomic exchange for each: for critical sections of a few instructions (a
/// memory pool's push or pop and three counters, taken twice per allocate + free, the pool's
/// whole cost). A waiter spins a little, then yields its time slice. Its place in the lock
/// order ([`LockRank`]) is checked in debug builds. A panic in a critical section still
/// releases it through the guard: there is no poison.
pub(crate) struct SpinLock<T> {
    locked: AtomicBool,
    value: UnsafeCell<T>,
    rank: Ranked,
}

// SAFETY: the value is reached only through a guard, which `locked` makes exclusive, so
// sharing the lock hands the value from thread to thread: T must be Send (as for a Mutex).
unsafe impl<T: Send> Sync for SpinLock<T> {}

/// The guard of a [`SpinLock`].
pub(crate) struct SpinGuard<'a, T> {
    lock: &'a SpinLock<T>,
    _held: Held,
    // Not `Send`: in debug builds the guard's entry is in its thread's list of held locks, and
    // a drop on another thread would take it out of the wrong list.
    _not_send: std::marker::PhantomData<*const ()>,
}

impl<T> SpinLock<T> {
    /// A spin lock of rank `rank` holding `value`.
    pub(crate) const fn new(rank: LockRank, value: T) -> SpinLock<T> {
        SpinLock {
            locked: AtomicBool::new(false),
            value: UnsafeCell::new(value),
            rank: Ranked::new(rank),
        }
    }

    /// Locks it, spinning (then yielding) while another thread holds it; in debug builds,
    /// first checks the lock order.
    #[inline]
    #[cfg_attr(debug_assertions, track_caller)]
    pub(crate) fn lock(&self) -> SpinGuard<'_, T> {
        let held = self.rank.acquire(self as *const Self as *const ());
        let mut spins = 0u32;
        while self
            .locked
            .compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            while self.locked.load(Ordering::Relaxed) {
                if spins < 100 {
                    spins += 1;
                    std::hint::spin_loop();
                } else {
                    std::thread::yield_now();
                }
            }
        }
        SpinGuard {
            lock: self,
            _held: held,
            _not_send: std::marker::PhantomData,
        }
    }
}

impl<T> Deref for SpinGuard<'_, T> {
    type Target = T;
    #[inline]
    fn deref(&self) -> &T {
        // SAFETY: this guard holds the lock, so no other reference to the value exists.
        unsafe { &*self.lock.value.get() }
    }
}

impl<T> DerefMut for SpinGuard<'_, T> {
    #[inline]
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: as in deref, exclusively (&mut self).
        unsafe { &mut *self.lock.value.get() }
    }
}

impl<T> Drop for SpinGuard<'_, T> {
    #[inline]
    fn drop(&mut self) {
        self.lock.locked.store(false, Ordering::Release);
    }
}
