//! Page-locked (pinned) host memory: arrays allocated pinned, a pool of them, and pinning an
//! existing array in place (PyCUDA's `pagelocked_empty`, `PageLockedMemoryPool`,
//! `register_host_memory`). The driver copies pinned memory by DMA, at full bus speed.

mod alloc;
// The arrays (`PinnedArray`, `RegisteredArray`) are `ndarray` arrays: the `gpuarray` feature.
#[cfg(feature = "gpuarray")]
mod ndarrays;

pub(crate) use alloc::{mapped_device_ptr, PinnedAllocator, PinnedPoolCore};
pub use alloc::{HostAllocFlags, HostRegisterFlags};
#[cfg(feature = "gpuarray")]
pub use ndarrays::{PinnedArray, RegisteredArray};
