//! `async` waits for GPU work, for any executor: a future for a stream's or an event's
//! completion ([`Synchronized`]) and for a device-to-host copy into page-locked memory the
//! future owns ([`HostCopy`]).
//!
//! Each future is woken by a CUDA host function (`cuLaunchHostFunc`) queued after the work it
//! stands for, so no thread blocks and no executor polls the GPU; the library names no runtime.
//! Dropping a future before it completes cancels the wait, never the GPU work, and frees
//! nothing that work still uses: the memory a copy writes into is freed (or handed back to its
//! pool) only after the copy, by the stream-ordered lifetimes every allocation of this crate
//! carries.

#[cfg(feature = "gpuarray")]
pub(crate) mod host_copy;
pub(crate) mod signal;
pub(crate) mod synchronized;

#[cfg(feature = "gpuarray")]
pub use host_copy::{memcpy_dtoh_future, HostCopy};
pub use synchronized::Synchronized;
