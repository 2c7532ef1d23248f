//! Device memory: owned buffers, borrowed views, and the traits kernel arguments take.

use std::fmt;
use std::marker::PhantomData;
use std::ops::{Bound, RangeBounds};

use cudarc::driver::sys;
use ndarray::{Array, ShapeBuilder};

use crate::context::Context;
use crate::error::{check, Error, Result};
use crate::host::{HostSlice, HostSliceMut};
use crate::repr::DeviceRepr;

/// Device memory a kernel may read: what a `const T*` parameter takes.
///
/// Implemented by [`DeviceBuffer`] and its views.
pub trait DeviceRead<T> {
    /// The device address of the first element.
    fn device_ptr(&self) -> sys::CUdeviceptr;
    /// The number of elements.
    fn len(&self) -> usize;
    /// True when there are no elements.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// The context the memory was allocated in.
    fn context(&self) -> &Context;
}

/// Device memory a kernel may write: what a `T*` parameter takes. Taking it by `&mut` lets the
/// borrow checker rule out a kernel writing memory that something else is reading.
pub trait DeviceWrite<T>: DeviceRead<T> {}

/// An owned allocation of `len` elements of `T` in device memory, freed when dropped.
///
/// The buffer keeps its context alive.
pub struct DeviceBuffer<T: DeviceRepr> {
    ptr: sys::CUdeviceptr,
    len: usize,
    ctx: Context,
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

impl<T: DeviceRepr> DeviceBuffer<T> {
    /// Takes ownership of `len` elements at `ptr`, allocated with `cuMemAlloc` (or
    /// `cuMemAllocPitch`) in `ctx`; the buffer frees them.
    pub(crate) fn from_raw_parts(ctx: &Context, ptr: sys::CUdeviceptr, len: usize) -> Self {
        DeviceBuffer {
            ptr,
            len,
            ctx: ctx.clone(),
            _elem: PhantomData,
        }
    }

    /// Allocates `len` elements. Their contents are whatever the memory held before.
    pub fn uninit(ctx: &Context, len: usize) -> Result<Self> {
        let bytes = len
            .checked_mul(std::mem::size_of::<T>())
            .ok_or_else(|| Error::SizeMismatch {
                operation: "DeviceBuffer::uninit",
                detail: format!(
                    "{len} elements of {} bytes overflow usize",
                    std::mem::size_of::<T>()
                ),
            })?;
        let mut ptr = 0;
        if bytes > 0 {
            ctx.bind()?;
            // SAFETY: valid out-pointer; the context is current.
            check("cuMemAlloc", unsafe { sys::cuMemAlloc_v2(&mut ptr, bytes) })?;
        }
        Ok(DeviceBuffer {
            ptr,
            len,
            ctx: ctx.clone(),
            _elem: PhantomData,
        })
    }

    /// A buffer over memory someone else owns, for wrappers (pooled buffers) that keep it in a
    /// `ManuallyDrop` and free the memory their own way.
    ///
    /// # Safety
    /// `ptr` must address at least `len` elements of `T` in `ctx`'s device memory, valid while
    /// the returned value is used; the value must never be dropped (it would free `ptr`).
    pub(crate) unsafe fn from_raw_parts_unowned(ptr: sys::CUdeviceptr, len: usize, ctx: Context) -> Self {
        DeviceBuffer {
            ptr,
            len,
            ctx,
            _elem: PhantomData,
        }
    }

    /// Allocates `len` zeroed elements.
    pub fn zeros(ctx: &Context, len: usize) -> Result<Self> {
        let buf = Self::uninit(ctx, len)?;
        if buf.byte_len() > 0 {
            // SAFETY: the range lies inside the allocation just made; the context is current.
            check("cuMemsetD8", unsafe {
                sys::cuMemsetD8_v2(buf.ptr, 0, buf.byte_len())
            })?;
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

    /// The size in bytes.
    pub fn byte_len(&self) -> usize {
        self.len * std::mem::size_of::<T>()
    }

    /// Copies `host` into this buffer; the lengths must match.
    pub fn copy_from_host(&mut self, host: &(impl HostSlice<T> + ?Sized)) -> Result<()> {
        let host = host.host_slice()?;
        copy_htod(&self.ctx, self.ptr, self.len, host)
    }

    /// Copies this buffer into `host`; the lengths must match.
    pub fn copy_to_host(&self, host: &mut (impl HostSliceMut<T> + ?Sized)) -> Result<()> {
        let host = host.host_slice_mut()?;
        copy_dtoh(&self.ctx, self.ptr, self.len, host)
    }

    /// A copy of the contents as a `Vec` (PyCUDA's `from_device` for one dimension).
    pub fn to_vec(&self) -> Result<Vec<T>> {
        let mut v = Vec::with_capacity(self.len);
        copy_dtoh_spare(&self.ctx, self.ptr, self.len, &mut v)?;
        Ok(v)
    }

    /// A copy of the contents as an `ndarray` array of `shape` (C or Fortran order, as the shape
    /// says): PyCUDA's `from_device`. The shape must hold exactly `len()` elements.
    pub fn to_array<Sh, D>(&self, shape: Sh) -> Result<Array<T, D>>
    where
        Sh: ShapeBuilder<Dim = D>,
        D: ndarray::Dimension,
    {
        let shape = shape.into_shape_with_order();
        let n = shape.raw_dim().size();
        if n != self.len {
            return Err(Error::SizeMismatch {
                operation: "to_array",
                detail: format!(
                    "shape {:?} holds {n} elements but the device buffer holds {}",
                    shape.raw_dim().slice(),
                    self.len
                ),
            });
        }
        let v = self.to_vec()?;
        Array::from_shape_vec(shape, v).map_err(|e| Error::SizeMismatch {
            operation: "to_array",
            detail: e.to_string(),
        })
    }

    /// A read-only view of `range` (in elements).
    pub fn slice(&self, range: impl RangeBounds<usize>) -> Result<DeviceView<'_, T>> {
        let (start, len) = self.sub_range(range)?;
        Ok(DeviceView {
            ptr: self.ptr + (start * std::mem::size_of::<T>()) as u64,
            len,
            ctx: &self.ctx,
            _elem: PhantomData,
        })
    }

    /// A writable view of `range` (in elements).
    pub fn slice_mut(&mut self, range: impl RangeBounds<usize>) -> Result<DeviceViewMut<'_, T>> {
        let (start, len) = self.sub_range(range)?;
        Ok(DeviceViewMut {
            ptr: self.ptr + (start * std::mem::size_of::<T>()) as u64,
            len,
            ctx: &self.ctx,
            _elem: PhantomData,
        })
    }

    fn sub_range(&self, range: impl RangeBounds<usize>) -> Result<(usize, usize)> {
        let start = match range.start_bound() {
            Bound::Included(&s) => s,
            Bound::Excluded(&s) => s.saturating_add(1),
            Bound::Unbounded => 0,
        };
        let end = match range.end_bound() {
            Bound::Included(&e) => e.saturating_add(1),
            Bound::Excluded(&e) => e,
            Bound::Unbounded => self.len,
        };
        if start > end || end > self.len {
            return Err(Error::SizeMismatch {
                operation: "slice",
                detail: format!(
                    "range {start}..{end} is outside a buffer of {} elements",
                    self.len
                ),
            });
        }
        Ok((start, end - start))
    }

    /// Frees the memory now, reporting any error the driver returns (dropping frees too, but
    /// ignores errors).
    pub fn free(mut self) -> Result<()> {
        let ptr = std::mem::take(&mut self.ptr);
        if ptr == 0 {
            return Ok(());
        }
        self.ctx.bind()?;
        // SAFETY: ptr came from cuMemAlloc in this context and is freed once (self.ptr is 0 now).
        check("cuMemFree", unsafe { sys::cuMemFree_v2(ptr) })
    }
}

impl<T: DeviceRepr> Drop for DeviceBuffer<T> {
    fn drop(&mut self) {
        if self.ptr != 0 && self.ctx.bind().is_ok() {
            // SAFETY: ptr came from cuMemAlloc in this context and is freed exactly once.
            unsafe {
                sys::cuMemFree_v2(self.ptr);
            }
        }
    }
}

impl<T: DeviceRepr> DeviceRead<T> for DeviceBuffer<T> {
    #[inline]
    fn device_ptr(&self) -> sys::CUdeviceptr {
        self.ptr
    }
    #[inline]
    fn len(&self) -> usize {
        self.len
    }
    #[inline]
    fn context(&self) -> &Context {
        &self.ctx
    }
}
impl<T: DeviceRepr> DeviceWrite<T> for DeviceBuffer<T> {}

/// A borrowed, read-only part of a [`DeviceBuffer`].
#[derive(Clone, Copy)]
pub struct DeviceView<'a, T> {
    ptr: sys::CUdeviceptr,
    len: usize,
    ctx: &'a Context,
    _elem: PhantomData<&'a [T]>,
}

impl<'a, T> DeviceView<'a, T> {
    /// A view of `len` elements at `ptr` in `ctx`, valid for `'a` (the caller's promise).
    pub(crate) fn from_raw(ptr: sys::CUdeviceptr, len: usize, ctx: &'a Context) -> Self {
        DeviceView {
            ptr,
            len,
            ctx,
            _elem: PhantomData,
        }
    }
}

impl<'a, T> DeviceViewMut<'a, T> {
    /// A writable view of `len` elements at `ptr` in `ctx`, valid and exclusive for `'a` (the
    /// caller's promise).
    pub(crate) fn from_raw(ptr: sys::CUdeviceptr, len: usize, ctx: &'a Context) -> Self {
        DeviceViewMut {
            ptr,
            len,
            ctx,
            _elem: PhantomData,
        }
    }
}

/// A borrowed, writable part of a [`DeviceBuffer`].
pub struct DeviceViewMut<'a, T> {
    ptr: sys::CUdeviceptr,
    len: usize,
    ctx: &'a Context,
    _elem: PhantomData<&'a mut [T]>,
}

impl<T> DeviceRead<T> for DeviceView<'_, T> {
    #[inline]
    fn device_ptr(&self) -> sys::CUdeviceptr {
        self.ptr
    }
    #[inline]
    fn len(&self) -> usize {
        self.len
    }
    #[inline]
    fn context(&self) -> &Context {
        self.ctx
    }
}
impl<T> DeviceRead<T> for DeviceViewMut<'_, T> {
    #[inline]
    fn device_ptr(&self) -> sys::CUdeviceptr {
        self.ptr
    }
    #[inline]
    fn len(&self) -> usize {
        self.len
    }
    #[inline]
    fn context(&self) -> &Context {
        self.ctx
    }
}
impl<T> DeviceWrite<T> for DeviceViewMut<'_, T> {}

fn mismatch(operation: &'static str, host: usize, device: usize) -> Error {
    Error::SizeMismatch {
        operation,
        detail: format!("the host side has {host} elements but the device buffer has {device}"),
    }
}

pub(crate) fn copy_htod<T: DeviceRepr>(
    ctx: &Context,
    dst: sys::CUdeviceptr,
    len: usize,
    src: &[T],
) -> Result<()> {
    if src.len() != len {
        return Err(mismatch("copy_from_host", src.len(), len));
    }
    if len == 0 {
        return Ok(());
    }
    ctx.bind()?;
    // SAFETY: src is readable for size_of_val(src) bytes and dst holds as many (checked above).
    check("cuMemcpyHtoD", unsafe {
        sys::cuMemcpyHtoD_v2(dst, src.as_ptr().cast(), std::mem::size_of_val(src))
    })
}

pub(crate) fn copy_dtoh<T: DeviceRepr>(
    ctx: &Context,
    src: sys::CUdeviceptr,
    len: usize,
    dst: &mut [T],
) -> Result<()> {
    if dst.len() != len {
        return Err(mismatch("copy_to_host", dst.len(), len));
    }
    if len == 0 {
        return Ok(());
    }
    ctx.bind()?;
    // SAFETY: dst is writable for size_of_val(dst) bytes and src holds as many; any bytes are a
    // valid T (DeviceRepr).
    check("cuMemcpyDtoH", unsafe {
        sys::cuMemcpyDtoH_v2(dst.as_mut_ptr().cast(), src, std::mem::size_of_val(dst))
    })
}

/// Copies `len` elements into the spare capacity of an empty `Vec`, so that the host memory is
/// never initialised twice.
fn copy_dtoh_spare<T: DeviceRepr>(
    ctx: &Context,
    src: sys::CUdeviceptr,
    len: usize,
    dst: &mut Vec<T>,
) -> Result<()> {
    debug_assert!(dst.is_empty() && dst.capacity() >= len);
    if len == 0 {
        return Ok(());
    }
    ctx.bind()?;
    // SAFETY: the Vec has capacity for len elements; the copy writes all of them before set_len,
    // and any bytes are a valid T (DeviceRepr).
    unsafe {
        check(
            "cuMemcpyDtoH",
            sys::cuMemcpyDtoH_v2(dst.as_mut_ptr().cast(), src, len * std::mem::size_of::<T>()),
        )?;
        dst.set_len(len);
    }
    Ok(())
}

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
    pub fn from_device<T, Sh, D>(&self, buffer: &impl DeviceRead<T>, shape: Sh) -> Result<Array<T, D>>
    where
        T: DeviceRepr,
        Sh: ShapeBuilder<Dim = D>,
        D: ndarray::Dimension,
    {
        if !buffer.context().is(self.raw()) {
            return Err(Error::WrongContext {
                what: "the device buffer",
            });
        }
        let shape = shape.into_shape_with_order();
        let n = shape.raw_dim().size_checked().unwrap_or(usize::MAX);
        if n > buffer.len() {
            return Err(Error::SizeMismatch {
                operation: "from_device",
                detail: format!(
                    "shape {:?} holds {n} elements but the device buffer holds only {}",
                    shape.raw_dim().slice(),
                    buffer.len()
                ),
            });
        }
        let mut v = Vec::with_capacity(n);
        copy_dtoh_spare(self, buffer.device_ptr(), n, &mut v)?;
        Array::from_shape_vec(shape, v).map_err(|e| Error::SizeMismatch {
            operation: "from_device",
            detail: e.to_string(),
        })
    }
}
