//! Owned device memory: [`DeviceBuffer`], and the context's allocation shorthands.

use std::fmt;
use std::marker::PhantomData;
use std::ops::RangeBounds;
use std::sync::atomic::{AtomicUsize, Ordering};

use cudarc::driver::sys;
#[cfg(feature = "gpuarray")]
use ndarray::{Array, ShapeBuilder};

use crate::driver::calls;
use crate::driver::context::core::Context;
use crate::driver::memory::slices::{HostSlice, HostSliceMut};
use crate::driver::memory::view::*;
use crate::driver::ordering::{Release, StreamUses};
#[cfg(feature = "gpuarray")]
use crate::error::CopyError;
use crate::error::{Error, MemoryError, Result};
use crate::types::repr::DeviceRepr;

/// the guide's [Safety model](crate::guide::threads_and_safety#safety-model)).
pub struct DeviceBuffer<T: DeviceRepr> {
    ptr: sys::CUdeviceptr,
    len: usize,
    ctx: Context,
    /// Boxed, so that a pool hands the record on with the block by moving a pointer.
    uses: Box<StreamUses>,
    /// The block's size as allocated when dropping it may keep it in the context's block
    /// cache for reuse (array allocations, see `ordering::block_cache`), 0 when it is freed.
    /// Atomic only so that [`ipc_handle`](Self::ipc_handle), through `&self`, can clear it.
    reusable: AtomicUsize,
    _elem: PhantomData<T>,
}

impl<T: DeviceRepr> fmt::Debug for DeviceBuffer<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "DeviceBuffer<{}>({:#x}, len {})",
            std::any::type_name::<T>(),
            self.ptr,
            self.len
        )
    }
}

/// `len` elements of `T` in bytes, or a typed error naming `operation` when that overflows.
pub(crate) fn byte_size<T>(operation: &'static str, len: usize) -> Result<usize> {
    len.checked_mul(std::mem::size_of::<T>()).ok_or_else(|| {
        MemoryError::BytesOverflow {
            operation,
            len,
            element_bytes: std::mem::size_of::<T>(),
        }
        .into()
    })
}

/// `cuMemAlloc` of `bytes` in `ctx`, giving back what the context holds and retrying once on
/// out-of-memory.
pub(crate) fn alloc_device(ctx: &Context, bytes: usize) -> Result<sys::CUdeviceptr> {
    alloc_block(ctx, bytes, false)
}

#[cfg(feature = "gpuarray")]
/// An allocation of `bytes` for an array: a block an array of the same size gave up when the
/// context's cache holds one (no stream uses it any more: it entered the cache only then),
/// else as [`alloc_device`].
pub(crate) fn alloc_device_reusing(ctx: &Context, bytes: usize) -> Result<sys::CUdeviceptr> {
    alloc_block(ctx, bytes, true)
}

/// [`alloc_device`], first from the block cache when `reuse`. `alloc_or_reclaim` collects the
/// releases that have become due first (an array's block goes into the cache then), and on
/// out-of-memory empties the cache before its one retry; so one bind and one collection serve
/// either kind of allocation.
fn alloc_block(ctx: &Context, bytes: usize, reuse: bool) -> Result<sys::CUdeviceptr> {
    if bytes == 0 {
        return Ok(0);
    }
    crate::driver::context::core::alloc_or_reclaim(&ctx.inner, || {
        // Refused after a fault, cached block or not.
        ctx.bind()?;
        if reuse {
            if let Some(ptr) = ctx.inner.graveyard.take_cached(bytes) {
                return Ok(ptr);
            }
        }
        // The context is current.
        Ok(calls::mem_alloc(bytes)?)
    })
}

impl<T: DeviceRepr> DeviceBuffer<T> {
    /// Takes ownership of `len` elements at `ptr`, allocated with `cuMemAlloc` (or
    /// `cuMemAllocPitch`) in `ctx`; the buffer frees them.
    pub(crate) fn from_raw_parts(ctx: &Context, ptr: sys::CUdeviceptr, len: usize) -> Self {
        DeviceBuffer {
            ptr,
            len,
            ctx: ctx.clone(),
            uses: Box::default(),
            reusable: AtomicUsize::new(0),
            _elem: PhantomData,
        }
    }

    /// Allocates `len` elements. Their contents are whatever the memory held before.
    pub fn uninit(ctx: &Context, len: usize) -> Result<Self> {
        let bytes = byte_size::<T>("DeviceBuffer::uninit", len)?;
        let ptr = alloc_device(ctx, bytes)?;
        Ok(Self::from_raw_parts(ctx, ptr, len))
    }

    /// A buffer over a pool's block, carrying the uses its previous owners left outstanding,
    /// for wrappers that keep it in a `ManuallyDrop` and return the block their own way.
    ///
    /// # Safety
    /// `ptr` must address at least `len` elements of `T` in `ctx`'s device memory, valid while
    /// the returned value is used; the value must never be dropped (it would free `ptr`).
    pub(crate) unsafe fn from_pool_block(
        ptr: sys::CUdeviceptr,
        len: usize,
        ctx: Context,
        uses: Box<StreamUses>,
    ) -> Self {
        DeviceBuffer {
            ptr,
            len,
            ctx,
            uses,
            reusable: AtomicUsize::new(0),
            _elem: PhantomData,
        }
    }

    /// Gives up a buffer made by [`from_pool_block`](Self::from_pool_block) whose block goes
    /// back to its pool: returns the record of the uses outstanding on it, and releases the
    /// buffer's handle to its context when `drop_context` (the memory is the pool's).
    ///
    /// # Safety
    /// `self` sits in a `ManuallyDrop` that is neither used nor dropped afterwards; without
    /// `drop_context`, its context handle is one the caller must not release.
    pub(crate) unsafe fn release_to_pool(&mut self, drop_context: bool) -> Box<StreamUses> {
        // SAFETY: the caller's guarantee: the record moves out once and the buffer is never
        // used or dropped again, so it is not read or freed twice.
        let uses = unsafe { std::ptr::read(&self.uses) };
        if drop_context {
            // SAFETY: as above, for the context handle, dropped here once.
            unsafe { std::ptr::drop_in_place(&mut self.ctx) };
        }
        uses
    }

    #[cfg(feature = "gpuarray")]
    /// [`uninit`](Self::uninit) for an array: the block may be one an array of the same byte
    /// size gave up (the context's block cache), and goes back there when this buffer is
    /// dropped.
    pub(crate) fn uninit_reusing(ctx: &Context, len: usize) -> Result<Self> {
        let bytes = byte_size::<T>("DeviceArray::empty", len)?;
        let ptr = alloc_device_reusing(ctx, bytes)?;
        let buf = Self::from_raw_parts(ctx, ptr, len);
        buf.reusable.store(bytes, Ordering::Relaxed);
        Ok(buf)
    }

    /// Whether dropping this buffer may keep its memory for reuse: false once it has been
    /// shared with another process (an IPC handle), whose mapping would then see the next
    /// owner's data.
    pub(crate) fn stop_reuse(&self) {
        self.reusable.store(0, Ordering::Relaxed);
    }

    /// Allocates `len` zeroed elements.
    pub fn zeros(ctx: &Context, len: usize) -> Result<Self> {
        Self::uninit(ctx, len)?.zeroed(ctx)
    }

    #[cfg(feature = "gpuarray")]
    /// [`zeros`](Self::zeros) for an array (see [`uninit_reusing`](Self::uninit_reusing)).
    pub(crate) fn zeros_reusing(ctx: &Context, len: usize) -> Result<Self> {
        Self::uninit_reusing(ctx, len)?.zeroed(ctx)
    }

    /// Sets every byte of a buffer just allocated in `ctx` to zero, on the legacy stream.
    fn zeroed(self, ctx: &Context) -> Result<Self> {
        let buf = self;
        if buf.byte_len() > 0 {
            buf.uses.write_on(ctx.legacy())?;
            // SAFETY: the range lies inside the allocation just made; the context is current
            // (alloc_device bound it, and write_on binds it back after any wait).
            unsafe { calls::memset_d8(buf.ptr, 0, buf.byte_len()) }?;
        }
        Ok(buf)
    }

    /// Allocates a buffer holding a copy of `host` (PyCUDA's `to_device`).
    pub fn from_host(ctx: &Context, host: &(impl HostSlice<T> + ?Sized)) -> Result<Self> {
        let host = host.host_slice()?;
        let mut buf = Self::uninit(ctx, host.len())?;
        buf.copy_from_host(host)?;
        Ok(buf)
    }

    #[cfg(feature = "gpuarray")]
    /// [`from_host`](Self::from_host) for an array (see
    /// [`uninit_reusing`](Self::uninit_reusing)).
    pub(crate) fn from_host_reusing(ctx: &Context, host: &(impl HostSlice<T> + ?Sized)) -> Result<Self> {
        let host = host.host_slice()?;
        let mut buf = Self::uninit_reusing(ctx, host.len())?;
        buf.copy_from_host(host)?;
        Ok(buf)
    }

    device_memory_accessors!(ptr, owned);

    /// The size in bytes.
    pub fn byte_len(&self) -> usize {
        self.len * std::mem::size_of::<T>()
    }

    /// Copies `host` into this buffer; the lengths must match.
    pub fn copy_from_host(&mut self, host: &(impl HostSlice<T> + ?Sized)) -> Result<()> {
        let host = host.host_slice()?;
        copy_htod(&mut self.device_view_mut(), host)
    }

    /// Copies this buffer into `host`; the lengths must match.
    pub fn copy_to_host(&self, host: &mut (impl HostSliceMut<T> + ?Sized)) -> Result<()> {
        let host = host.host_slice_mut()?;
        copy_dtoh(&self.device_view(), host)
    }

    /// A copy of the contents as a `Vec` (PyCUDA's `from_device` for one dimension).
    pub fn to_vec(&self) -> Result<Vec<T>> {
        self.device_view().to_vec()
    }

    #[cfg(feature = "gpuarray")]
    /// A copy of the contents as an `ndarray` array of `shape` (C or Fortran order, as the shape
    /// says): PyCUDA's `from_device`. The shape must hold exactly `len()` elements.
    ///
    /// Needs the `gpuarray` feature (on by default), which brings `ndarray`.
    pub fn to_array<Sh, D>(&self, shape: Sh) -> Result<Array<T, D>>
    where
        Sh: ShapeBuilder<Dim = D>,
        D: ndarray::Dimension,
    {
        let shape = shape.into_shape_with_order();
        let n = shape.raw_dim().size();
        if n != self.len {
            return Err(CopyError::ShapeLength {
                operation: "to_array",
                shape: shape.raw_dim().slice().to_vec(),
                elements: n,
                buffer: self.len,
            }
            .into());
        }
        let v = self.to_vec()?;
        Array::from_shape_vec(shape, v).map_err(|source| {
            CopyError::Ndarray {
                operation: "to_array",
                source,
            }
            .into()
        })
    }

    /// A read-only view of `range` (in elements).
    pub fn slice(&self, range: impl RangeBounds<usize>) -> Result<DeviceView<'_, T>> {
        self.device_view().slice(range)
    }

    /// A writable view of `range` (in elements).
    pub fn slice_mut(&mut self, range: impl RangeBounds<usize>) -> Result<DeviceViewMut<'_, T>> {
        self.device_view_mut().into_slice(range)
    }

    /// Frees the memory now, reporting any error the driver returns (dropping frees too, but
    /// ignores errors). Waits for the work queued on the buffer first.
    pub fn free(mut self) -> Result<()> {
        let ptr = std::mem::take(&mut self.ptr);
        if ptr == 0 {
            return Ok(());
        }
        // On an error the memory is freed by the context when it is destroyed.
        self.uses.host_write()?;
        self.ctx.bind()?;
        // SAFETY: ptr came from cuMemAlloc in this context, is freed once (self.ptr is 0 now),
        // and no queued work uses it any more.
        unsafe { calls::mem_free(ptr) }.map_err(Error::from)
    }
}

impl<T: DeviceRepr> Drop for DeviceBuffer<T> {
    fn drop(&mut self) {
        if self.ptr != 0 {
            let what = match *self.reusable.get_mut() {
                0 => Release::DeviceMemory(self.ptr),
                bytes => Release::CachedDeviceMemory { ptr: self.ptr, bytes },
            };
            self.ctx.release_after(&mut self.uses, what);
        }
    }
}

impl<T: DeviceRepr> DeviceRead<T> for DeviceBuffer<T> {
    #[inline]
    fn device_view(&self) -> DeviceView<'_, T> {
        DeviceView::tracked(self.ptr, self.len, &self.ctx, &self.uses)
    }
}
impl<T: DeviceRepr> DeviceWrite<T> for DeviceBuffer<T> {
    #[inline]
    fn device_view_mut(&mut self) -> DeviceViewMut<'_, T> {
        DeviceViewMut::tracked(self.ptr, self.len, &self.ctx, &self.uses)
    }
}

/// A borrowed, read-only run of device memory: a [`DeviceBuffer`] or part of one, or any other
impl Context {
    /// Copies host data to a new device buffer (PyCUDA's `to_device`).
    pub fn to_device<T: DeviceRepr>(&self, host: &(impl HostSlice<T> + ?Sized)) -> Result<DeviceBuffer<T>> {
        DeviceBuffer::from_host(self, host)
    }

    /// Allocates `len` elements of device memory, contents unspecified (PyCUDA's `mem_alloc`).
    pub fn alloc<T: DeviceRepr>(&self, len: usize) -> Result<DeviceBuffer<T>> {
        DeviceBuffer::uninit(self, len)
    }

    /// Allocates `len` zeroed elements of device memory.
    pub fn alloc_zeros<T: DeviceRepr>(&self, len: usize) -> Result<DeviceBuffer<T>> {
        DeviceBuffer::zeros(self, len)
    }

    #[cfg(feature = "gpuarray")]
    /// Copies a device buffer into a new `ndarray` array of `shape` (PyCUDA's `from_device`):
    /// any number of dimensions, C order, or Fortran order with `shape.f()`. The shape may hold
    /// fewer elements than the buffer (the first ones are copied) but not more.
    ///
    /// ```no_run
    /// use gpu_runtime::{Context, ndarray::ShapeBuilder};
    /// let ctx = Context::default()?;
    /// let buf = ctx.to_device(&[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0])?;
    /// let c = ctx.from_device(&buf, (2, 3))?; // rows [1 2 3], [4 5 6]
    /// let f = ctx.from_device(&buf, (2, 3).f())?; // columns [1 2], [3 4], [5 6]
    /// assert_eq!(c[[1, 0]], 4.0);
    /// assert_eq!(f[[1, 0]], 2.0);
    /// # Ok::<(), gpu_runtime::Error>(())
    /// ```
    ///
    /// Needs the `gpuarray` feature (on by default), which brings `ndarray`.
    pub fn from_device<T, Sh, D>(&self, buffer: &impl DeviceRead<T>, shape: Sh) -> Result<Array<T, D>>
    where
        T: DeviceRepr,
        Sh: ShapeBuilder<Dim = D>,
        D: ndarray::Dimension,
    {
        let buffer = buffer.device_view();
        if !buffer.context().is(self.raw()) {
            return Err(Error::WrongContext {
                what: "the device buffer",
            });
        }
        let shape = shape.into_shape_with_order();
        let n = shape.raw_dim().size_checked().unwrap_or(usize::MAX);
        if n > buffer.len() {
            return Err(CopyError::ShapeLength {
                operation: "from_device",
                shape: shape.raw_dim().slice().to_vec(),
                elements: n,
                buffer: buffer.len(),
            }
            .into());
        }
        let mut v = Vec::with_capacity(n);
        copy_dtoh_spare(&buffer, n, &mut v)?;
        Array::from_shape_vec(shape, v).map_err(|source| {
            CopyError::Ndarray {
                operation: "from_device",
                source,
            }
            .into()
        })
    }
}
