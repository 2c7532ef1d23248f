//! Host memory the device uses: page-locked (pinned, registered) and managed memory, and
//! aligned arrays. What a copy takes from or gives to the host (slices, `ndarray` extents, the
//! page-locked traits) is [`memory`](super::memory)'s, below this room.

// The n-dimensional host arrays stand on `ndarray` (the `gpuarray` feature).
#[cfg(feature = "gpuarray")]
pub(crate) mod arrays;
#[cfg(feature = "gpuarray")]
pub(crate) mod managed;
#[cfg(feature = "gpuarray")]
pub(crate) mod managed_ops;
pub(crate) mod pinned;
pub(crate) mod registered;

#[cfg(feature = "gpuarray")]
pub use arrays::{
    aligned_empty, aligned_empty_like, aligned_zeros, aligned_zeros_like, AlignedArray, DEFAULT_ALIGNMENT,
};
#[cfg(feature = "gpuarray")]
pub use managed::{AttachFlags, ManagedArray};
#[cfg(feature = "gpuarray")]
pub use managed_ops::{MemAdvice, MemLocation};
pub use pinned::{HostAllocFlags, HostRegisterFlags};
#[cfg(feature = "gpuarray")]
pub use pinned::{PinnedArray, RegisteredArray};
pub use registered::RegisteredSlice;
