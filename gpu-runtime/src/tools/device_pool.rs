//! A pool of device memory (PyCUDA's `DeviceMemoryPool`): allocations return to the pool when
//! dropped and are reused by later allocations of a similar size, so that steady-state code
//! allocates without asking the driver.

use std::fmt;
use std::mem::ManuallyDrop;
use std::ops::{Deref, RangeBounds};
use std::sync::Arc;

use crate::driver::context::context_link::ContextLink;
use crate::driver::context::core::Context;
use crate::driver::memory::buffer::DeviceBuffer;
use crate::driver::memory::pool_core::{Block, PoolCore, RawAllocator};
use crate::driver::memory::slices::HostSlice;
use crate::driver::memory::view::{DeviceRead, DeviceView, DeviceViewMut, DeviceWrite};
use crate::driver::ordering::{Release, UseSet};
use crate::error::Result;
use crate::types::repr::DeviceRepr;

/// `cuMemAlloc` / `cuMemFree` in one context, frees ordered after the work on the block.
pub(crate) struct DeviceAllocator {
    ctx: ContextLink,
}

impl DeviceAllocator {
    pub(crate) fn new(ctx: ContextLink) -> Self {
        DeviceAllocator { ctx }
    }

    /// The context, when the allocator keeps it alive (pools users own).
    fn context(&self) -> Option<&Context> {
        self.ctx.strong()
    }
}

impl RawAllocator for DeviceAllocator {
    fn allocate(&self, bytes: usize) -> Result<u64> {
        self.ctx
            .with(|ctx| crate::driver::memory::buffer::alloc_device(ctx, bytes))
    }

    unsafe fn free_after(&self, addr: u64, _bytes: usize, uses: UseSet) {
        if addr != 0 {
            self.ctx.release_after(uses, Release::DeviceMemory(addr));
        }
    }

    fn reclaim(&self) {
        self.ctx.reclaim();
    }
}

pub(crate) type DevicePoolCore = PoolCore<DeviceAllocator>;

/// A pool of device memory in one context (PyCUDA's `DeviceMemoryPool`).
///
/// Sizes are rounded up to classes at most a quarter apart, so that a freed block serves the
/// next allocation of a similar size. When the driver runs out of memory, the pool frees every
/// block it holds and tries once more before returning the error. The handle is cheap to clone
/// and may be used from several threads; allocations keep the pool alive.
///
/// ```no_run
/// # fn main() -> gpu_runtime::Result<()> {
/// use gpu_runtime::{Context, tools::DeviceMemoryPool};
/// let ctx = Context::default()?;
/// let pool = DeviceMemoryPool::new(&ctx);
/// let a = pool.alloc::<f32>(1 << 18)?; // a new block from the driver
/// drop(a);                             // back to the pool
/// let b = pool.alloc::<f32>(1 << 18)?; // the same block again, no driver call
/// assert_eq!((pool.active_blocks(), pool.held_blocks()), (1, 0));
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct DeviceMemoryPool {
    core: Arc<DevicePoolCore>,
    ctx: Context,
}

impl fmt::Debug for DeviceMemoryPool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (held, active, held_bytes) = self.core.counts();
        f.debug_struct("DeviceMemoryPool")
            .field("held_blocks", &held)
            .field("active_blocks", &active)
            .field("held_bytes", &held_bytes)
            .finish()
    }
}

impl DeviceMemoryPool {
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

    /// An empty pool allocating in `ctx`.
    pub fn new(ctx: &Context) -> DeviceMemoryPool {
        DeviceMemoryPool {
            core: Arc::new(PoolCore::new(DeviceAllocator::new(ContextLink::holding(ctx)))),
            ctx: ctx.clone(),
        }
    }

    pub(crate) fn from_core(core: Arc<DevicePoolCore>, ctx: &Context) -> Self {
        DeviceMemoryPool {
            core,
            ctx: ctx.clone(),
        }
    }

    /// `bytes` bytes of device memory (PyCUDA's `allocate`); contents unspecified.
    pub fn allocate(&self, bytes: usize) -> Result<PooledDeviceAllocation> {
        self.alloc::<u8>(bytes)
    }

    /// `len` elements of `T`, contents unspecified; usable wherever a [`DeviceBuffer`] is.
    #[inline]
    pub fn alloc<T: DeviceRepr>(&self, len: usize) -> Result<PooledBuffer<T>> {
        let bytes =
            len.checked_mul(std::mem::size_of::<T>())
                .ok_or(crate::error::MemoryError::BytesOverflow {
                    operation: "DeviceMemoryPool::alloc",
                    len,
                    element_bytes: std::mem::size_of::<T>(),
                })?;
        let (block, uses) = self.core.allocate(bytes, "DeviceMemoryPool::alloc")?;
        // The buffer's context handle: a copy of the one the pool's allocator holds, which the
        // buffer's own handle on the pool keeps alive, so that no reference count changes
        // hands per allocation; a counted one for the context's own pool, whose allocator
        // does not keep the context alive.
        let (ctx, counted) = match self.core.allocator.context() {
            // SAFETY: a bitwise copy of a live handle, never dropped: `release_to_pool` is
            // told not to (`counted` is false), and the DeviceBuffer is in a ManuallyDrop.
            Some(held) => (unsafe { std::ptr::read(held) }, false),
            None => (self.ctx.clone(), true),
        };
        // SAFETY: the block holds at least len elements in this context and stays allocated
        // until the PooledBuffer returns it; the DeviceBuffer is never dropped (ManuallyDrop),
        // and its context outlives it (above).
        let buf = unsafe { DeviceBuffer::from_pool_block(block.addr, len, ctx, uses) };
        Ok(PooledBuffer {
            buf: ManuallyDrop::new(buf),
            block,
            ctx_counted: counted,
            pool: self.core.clone(),
        })
    }

    /// A pooled copy of host data.
    pub fn to_device<T: DeviceRepr>(&self, host: &(impl HostSlice<T> + ?Sized)) -> Result<PooledBuffer<T>> {
        let host = host.host_slice()?;
        let mut buf = self.alloc::<T>(host.len())?;
        buf.copy_from_host(host)?;
        Ok(buf)
    }

    /// The number of unused blocks the pool holds.
    pub fn held_blocks(&self) -> usize {
        self.core.counts().0
    }

    /// The number of blocks handed out and not yet returned.
    pub fn active_blocks(&self) -> usize {
        self.core.counts().1
    }

    /// The bytes held in unused blocks.
    pub fn held_bytes(&self) -> usize {
        self.core.counts().2
    }

    /// Frees every unused block the pool holds (each once the work queued on it has finished).
    pub fn free_held(&self) {
        self.core.free_held()
    }

    /// Frees the held blocks, and from now on frees blocks as they are returned instead of
    /// holding them (for a pool that falls out of use).
    pub fn stop_holding(&self) {
        self.core.stop_holding()
    }

    /// The context the pool allocates in.
    pub fn context(&self) -> &Context {
        &self.ctx
    }
}

/// Device memory from a [`DeviceMemoryPool`] (PyCUDA's `PooledDeviceAllocation`): a
/// [`DeviceBuffer`] (through `Deref`) that returns its block to the pool when dropped.
/// It is a kernel argument like any device buffer ([`DeviceRead`], [`DeviceWrite`]).
///
/// The block goes back at once, even with work on it still queued: it carries the record of
/// the streams that used it, so whoever gets it next waits on the GPU for that work before
/// touching it from another stream (on the same stream, the stream's own order suffices).
///
/// ```no_run
/// use gpu_runtime::{kernel, Context, tools::DeviceMemoryPool};
///
/// #[kernel(r#"
/// __global__ void square(float *x, int n) {
///     int i = blockIdx.x * blockDim.x + threadIdx.x;
///     if (i < n) x[i] *= x[i];
/// }"#)]
/// fn square(x: &mut [f32], n: i32);
///
/// # fn main() -> gpu_runtime::Result<()> {
/// let ctx = Context::default()?;
/// let pool = DeviceMemoryPool::new(&ctx);
/// let k = square::prepare(&ctx)?;
/// for n in [1000, 1010, 1020] {
///     // Sizes this close share a size class, so all three reuse one block.
///     let mut x = pool.to_device(&vec![3.0f32; n])?;
///     k.prepared_call(n.div_ceil(256), 256, &mut x, n as i32)?;
///     assert_eq!(x.to_vec()?, vec![9.0; n]);
/// }
/// assert_eq!(pool.held_blocks(), 1);
/// # Ok(()) }
/// ```
pub struct PooledBuffer<T: DeviceRepr> {
    buf: ManuallyDrop<DeviceBuffer<T>>,
    block: Block,
    /// Whether the buffer's context handle is its own (dropped with it), or a copy of the
    /// pool allocator's (which `pool` keeps alive).
    ctx_counted: bool,
    pool: Arc<DevicePoolCore>,
}

/// Bytes from [`DeviceMemoryPool::allocate`].
pub type PooledDeviceAllocation = PooledBuffer<u8>;

impl<T: DeviceRepr> fmt::Debug for PooledBuffer<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Pooled{:?}", *self.buf)
    }
}

impl<T: DeviceRepr> Deref for PooledBuffer<T> {
    type Target = DeviceBuffer<T>;
    #[inline]
    fn deref(&self) -> &DeviceBuffer<T> {
        &self.buf
    }
}

impl<T: DeviceRepr> PooledBuffer<T> {
    /// Copies `host` into this buffer; the lengths must match.
    pub fn copy_from_host(&mut self, host: &(impl HostSlice<T> + ?Sized)) -> Result<()> {
        self.buf.copy_from_host(host)
    }

    /// A writable view of `range` (in elements).
    pub fn slice_mut(&mut self, range: impl RangeBounds<usize>) -> Result<DeviceViewMut<'_, T>> {
        self.buf.slice_mut(range)
    }

    /// The bytes the block really holds: the size class the request was rounded up to.
    pub fn capacity_bytes(&self) -> usize {
        self.block.capacity()
    }

    /// Returns the memory to the pool now (PyCUDA's `free`); dropping does the same.
    pub fn free(self) {}
}

impl<T: DeviceRepr> Drop for PooledBuffer<T> {
    #[inline]
    fn drop(&mut self) {
        // SAFETY: the DeviceBuffer over the block is never used or dropped after this (it is in
        // a ManuallyDrop, and this is the PooledBuffer's drop); its context handle is dropped
        // only when it is its own.
        let uses = unsafe { self.buf.release_to_pool(self.ctx_counted) };
        // SAFETY: the block came from this pool and is returned once, with every use still
        // outstanding on it; nothing else frees it.
        unsafe { self.pool.release(self.block, uses) }
    }
}

impl<T: DeviceRepr> DeviceRead<T> for PooledBuffer<T> {
    #[inline]
    fn device_view(&self) -> DeviceView<'_, T> {
        self.buf.device_view()
    }
}
impl<T: DeviceRepr> DeviceWrite<T> for PooledBuffer<T> {
    #[inline]
    fn device_view_mut(&mut self) -> DeviceViewMut<'_, T> {
        self.buf.device_view_mut()
    }
}

// cudarc's libraries take a pooled buffer like a buffer (`driver::cudarc_interop`).
crate::driver::cudarc_interop::ptr::cudarc_memory!([T: DeviceRepr] PooledBuffer<T>, T, mut);
