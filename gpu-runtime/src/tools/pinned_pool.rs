//! A pool of page-locked host memory (PyCUDA's `PageLockedMemoryPool`).

use std::sync::Arc;

use ndarray::{Dimension, ShapeBuilder};

use crate::driver::context::context_link::ContextLink;
use crate::driver::context::core::Context;
use crate::driver::host::arrays::shape_bytes;
use crate::driver::host::pinned::{HostAllocFlags, PinnedAllocator, PinnedArray, PinnedPoolCore};
use crate::driver::memory::pool_core::PoolCore;
use crate::error::Result;
use crate::types::repr::DeviceRepr;

/// How a [`PageLockedMemoryPool`] allocates (PyCUDA's `PageLockedAllocator`): the host-alloc
/// flags of its blocks.
///
/// Needs the `gpuarray` feature (on by default), which brings `ndarray`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PageLockedAllocator {
    /// The flags every block is allocated with.
    pub flags: HostAllocFlags,
}

impl PageLockedAllocator {
    /// An allocator using `flags`.
    pub fn new(flags: HostAllocFlags) -> Self {
        PageLockedAllocator { flags }
    }
}

/// A pool of page-locked host memory (PyCUDA's `PageLockedMemoryPool`): arrays return their
/// block when dropped, and later allocations of a similar size reuse it. Thread-safe; cheap
/// to clone.
///
/// ```no_run
/// use gpu_runtime::{Context, driver::HostAllocFlags, tools::PageLockedAllocator, tools::PageLockedMemoryPool};
/// let ctx = Context::default()?;
/// let pool = PageLockedMemoryPool::new(&ctx, PageLockedAllocator::new(HostAllocFlags::NONE));
/// let mut frame_on_gpu = ctx.alloc::<f32>(1080 * 1920)?;
/// for frame in 0..10 {
///     // Pinning memory is slow; from the second frame on the pool hands back the same block.
///     let mut staging = pool.allocate::<f32, _>((1080, 1920))?;
///     staging.view_mut().fill(frame as f32);
///     frame_on_gpu.copy_from_host(&staging)?; // a DMA copy, at full bus speed
/// }
/// assert_eq!((pool.active_blocks(), pool.held_blocks()), (0, 1));
/// # Ok::<(), gpu_runtime::Error>(())
/// ```
///
/// Needs the `gpuarray` feature (on by default), which brings `ndarray`.
#[derive(Clone)]
pub struct PageLockedMemoryPool {
    core: Arc<PinnedPoolCore>,
    flags: HostAllocFlags,
    ctx: Context,
}

impl std::fmt::Debug for PageLockedMemoryPool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (held, active, held_bytes) = self.core.counts();
        f.debug_struct("PageLockedMemoryPool")
            .field("flags", &self.flags)
            .field("held_blocks", &held)
            .field("active_blocks", &active)
            .field("held_bytes", &held_bytes)
            .finish()
    }
}

impl PageLockedMemoryPool {
    /// The size class of a request for `bytes` bytes (PyCUDA's `pool.bin_number`): see
    /// [`tools::bin_number`](crate::tools::bin_number).
    pub fn bin_number(bytes: usize) -> Option<usize> {
        crate::tools::bins::bin_number(bytes)
    }

    /// The bytes this pool allocates for each request of class `bin` (PyCUDA's
    /// `pool.alloc_size`): see [`tools::alloc_size`](crate::tools::alloc_size).
    pub fn alloc_size(bin: usize) -> Option<usize> {
        crate::tools::bins::alloc_size(bin)
    }

    /// An empty pool allocating in `ctx` with `allocator`'s flags.
    pub fn new(ctx: &Context, allocator: PageLockedAllocator) -> Self {
        PageLockedMemoryPool {
            core: Arc::new(PoolCore::new(PinnedAllocator::new(
                ContextLink::holding(ctx),
                allocator.flags,
            ))),
            flags: allocator.flags,
            ctx: ctx.clone(),
        }
    }

    /// A page-locked array of `shape` from the pool, contents unspecified (PyCUDA's
    /// `allocate(shape, dtype, order)`: the element type is `T`, the order `.f()` on the shape).
    pub fn allocate<T: DeviceRepr, Sh: ShapeBuilder>(&self, shape: Sh) -> Result<PinnedArray<T, Sh::Dim>>
    where
        Sh::Dim: Dimension,
    {
        let (shape, len, bytes) = shape_bytes::<T, _>(shape, "PageLockedMemoryPool::allocate")?;
        let (block, uses) = self.core.allocate(bytes, "PageLockedMemoryPool::allocate")?;
        Ok(PinnedArray::from_pool_block(
            self.core.clone(),
            block,
            uses,
            shape,
            len,
            self.flags,
            &self.ctx,
        ))
    }

    /// The number of unused blocks the pool holds.
    pub fn held_blocks(&self) -> usize {
        self.core.counts().0
    }

    /// The number of blocks handed out and not yet returned.
    pub fn active_blocks(&self) -> usize {
        self.core.counts().1
    }

    /// Frees every unused block the pool holds.
    pub fn free_held(&self) {
        self.core.free_held()
    }

    /// Frees the held blocks, and from now on frees blocks as they are returned.
    pub fn stop_holding(&self) {
        self.core.stop_holding()
    }
}
