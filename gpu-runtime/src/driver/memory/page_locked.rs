//! Page-locked host memory whose asynchronous GPU uses this crate tracks: what the safe
//! asynchronous copies take ([`PageLocked`], [`PageLockedMut`]).
//!
//! An asynchronous copy returns before the DMA engine has read or written the host memory.
//! Memory of this crate's page-locked kinds ([`PinnedArray`](crate::driver::PinnedArray),
//! [`RegisteredArray`](crate::driver::RegisteredArray), [`RegisteredSlice`](crate::driver::RegisteredSlice))
//! records the copy like any GPU use, and the host waits for it before touching the memory
//! again, or before the memory is freed or unlocked: so these copies are safe. Copies from and
//! to other host memory stay `unsafe` ([`memcpy_htod_async_unchecked`](crate::driver::memcpy_htod_async_unchecked)).

use crate::driver::ordering::StreamUses;

/// Page-locked host memory an asynchronous copy may read (PyCUDA's `memcpy_htod_async`
/// source): a [`PinnedArray`](crate::driver::PinnedArray), [`RegisteredArray`](crate::driver::RegisteredArray)
/// or [`RegisteredSlice`](crate::driver::RegisteredSlice). Elements are taken in memory order,
/// from the lowest address: the arrays are C- or Fortran-contiguous (an array with a reversed
/// axis cannot be registered), and a slice is its memory.
pub trait PageLocked<T>: sealed::Sealed {
    /// The memory and the record of its GPU uses.
    #[doc(hidden)]
    fn locked(&self) -> LockedHost<'_, T>;
}

/// Page-locked host memory an asynchronous copy may write (PyCUDA's `memcpy_dtoh_async`
/// destination).
pub trait PageLockedMut<T>: PageLocked<T> {
    /// The memory, writable, and the record of its GPU uses.
    #[doc(hidden)]
    fn locked_mut(&mut self) -> LockedHostMut<'_, T>;
}

/// Page-locked memory lent to one asynchronous copy.
#[doc(hidden)]
pub struct LockedHost<'a, T> {
    pub(crate) ptr: *const T,
    pub(crate) len: usize,
    pub(crate) uses: &'a StreamUses,
}

/// Page-locked memory lent to one asynchronous copy that writes it.
#[doc(hidden)]
pub struct LockedHostMut<'a, T> {
    pub(crate) ptr: *mut T,
    pub(crate) len: usize,
    pub(crate) uses: &'a StreamUses,
}

pub(crate) mod sealed {
    /// Only this crate's page-locked kinds record their GPU uses.
    pub trait Sealed {}
}
