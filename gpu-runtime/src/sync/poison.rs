//! Locks whose holder panicked.
//!
//! A lock whose holder panicked is used as it is: the poison is ignored, here and nowhere
//! else. Each critical section of the crate leaves its data consistent before anything in it
//! can panic (an insert, a push, a few counters, a flag), or guards no data (a module's gate,
//! the capture of standard output); and the crate reports failures as errors, never panics,
//! where poison would turn one panic (of a user's closure run under a lock, or of a cached
//! value's `Clone`) into a panic of every later call that takes the lock.

use std::sync::{LockResult, PoisonError};

/// What a lock operation gives, whether or not a holder of the lock panicked.
#[inline(always)]
pub(super) fn unpoison<G>(result: LockResult<G>) -> G {
    result.unwrap_or_else(PoisonError::into_inner)
}
