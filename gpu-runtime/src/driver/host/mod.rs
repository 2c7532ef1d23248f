//! Host memory the device uses: slices and arrays to copy from and to, page-locked (pinned,
//! registered) and managed memory, and aligned arrays.

pub(crate) mod arrays;
pub(crate) mod managed;
pub(crate) mod managed_ops;
pub(crate) mod page_locked;
pub(crate) mod pinned;
pub(crate) mod registered;
pub(crate) mod slices;

pub use arrays::{
    aligned_empty, aligned_empty_like, aligned_zeros, aligned_zeros_like, AlignedArray, DEFAULT_ALIGNMENT,
};
pub use managed::{AttachFlags, ManagedArray};
pub use managed_ops::{MemAdvice, MemLocation};
pub use page_locked::{PageLocked, PageLockedMut};
pub use pinned::{HostAllocFlags, HostRegisterFlags, PinnedArray, RegisteredArray};
pub use registered::RegisteredSlice;
pub use slices::{memory_order, HostSlice, HostSliceMut};
