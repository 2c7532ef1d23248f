//! What PyCUDA keeps in `pycuda.tools`: device and page-locked memory pools and their size
//! classes, occupancy, values memoized per context, and test support (capturing `printf`).

pub(crate) mod bins;
pub(crate) mod device_pool;
pub(crate) mod memoize;
pub(crate) mod occupancy;
// The pool hands out `PinnedArray`s: the `gpuarray` feature.
#[cfg(feature = "gpuarray")]
pub(crate) mod pinned_pool;
#[cfg(unix)]
pub(crate) mod printf;

pub use bins::{alloc_size, bin_number, bitlog2};
pub use device_pool::{DeviceMemoryPool, PooledBuffer, PooledDeviceAllocation};
pub use memoize::{clear_context_caches, ContextCache};
pub use occupancy::{DeviceData, LimitedBy, OccupancyRecord};
#[cfg(feature = "gpuarray")]
pub use pinned_pool::{PageLockedAllocator, PageLockedMemoryPool};
#[cfg(unix)]
pub use printf::capture_printf;
