//! Host memory the device uses: slices and arrays to copy from and to, page-locked (pinned,
//! registered) and managed memory, and aligned arrays.

// The n-dimensional host arrays stand on `ndarray` (the `gpuarray` feature).
#[cfg(feature = "gpuarray")]
pub(crate) mod arrays;
#[cfg(feature = "gpuarray")]
pub(crate) mod extent;
#[cfg(feature = "gpuarray")]
pub(crate) mod managed;
#[cfg(feature = "gpuarray")]
pub(crate) mod managed_ops;
pub(crate) mod page_locked;
pub(crate) mod pinned;
pub(crate) mod registered;
pub(crate) mod slices;

#[cfg(feature = "gpuarray")]
pub use arrays::{
    aligned_empty, aligned_empty_like, aligned_zeros, aligned_zeros_like, AlignedArray, DEFAULT_ALIGNMENT,
};
#[cfg(feature = "gpuarray")]
pub use managed::{AttachFlags, ManagedArray};
#[cfg(feature = "gpuarray")]
pub use managed_ops::{MemAdvice, MemLocation};
pub use page_locked::{PageLocked, PageLockedMut};
pub use pinned::{HostAllocFlags, HostRegisterFlags};
#[cfg(feature = "gpuarray")]
pub use pinned::{PinnedArray, RegisteredArray};
pub use registered::RegisteredSlice;
#[cfg(feature = "gpuarray")]
pub use slices::memory_order;
pub use slices::{HostSlice, HostSliceMut};
