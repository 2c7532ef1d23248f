//! Device memory: buffers and views (what kernels take), allocation, transfers and memsets,
//! pitched memory, structured 2D/3D copies, CUDA arrays, and the pool core; and what the
//! copies take from or give to the host (host slices, `ndarray` extents, the page-locked
//! traits that page-locked allocations of [`host`](super::host) implement).

mod array_copy;
#[cfg(feature = "gpuarray")]
mod array_ndcopy;
pub(crate) mod buffer;
pub(crate) mod cuda_array;
// The `ndarray` extents stand on `ndarray` (the `gpuarray` feature).
#[cfg(feature = "gpuarray")]
pub(crate) mod extent;
pub(crate) mod memops;
#[cfg(feature = "gpuarray")]
pub(crate) mod ndcopy;
pub(crate) mod page_locked;
pub(crate) mod pitched;
pub(crate) mod pool_core;
pub(crate) mod slices;
pub(crate) mod structured;
pub(crate) mod view;

// DeviceBuffer and the views are public at the crate root only (one public path per item,
// scripts/check_public_paths.py), not through `driver`'s glob.
pub use cuda_array::{ArrayDescriptor, ArrayElement, ArrayFlags, ArrayFormat, CudaArray};
pub use memops::{
    memcpy_dtod, memcpy_dtod_async, memcpy_dtoh, memcpy_dtoh_async, memcpy_dtoh_async_unchecked, memcpy_htod,
    memcpy_htod_async, memcpy_htod_async_unchecked, memcpy_peer, memcpy_peer_async, memset_d16,
    memset_d16_async, memset_d2d16, memset_d2d16_async, memset_d2d32, memset_d2d32_async, memset_d2d8,
    memset_d2d8_async, memset_d32, memset_d32_async, memset_d8, memset_d8_async,
};
pub use page_locked::{PageLocked, PageLockedMut};
pub use pitched::PitchedBuffer;
#[cfg(feature = "gpuarray")]
pub use slices::memory_order;
pub use structured::{Memcpy2D, Memcpy3D};
