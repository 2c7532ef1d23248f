//! Borrowed device memory: the [`DeviceRead`] / [`DeviceWrite`] traits kernel arguments take,
//! the views they hand out, and the host transfers views make.
//!
//! Every view carries the record of the streams that use its memory (see `ordering`), so the
//! launches and copies that take views order themselves: a buffer's users need not.

use std::fmt;
use std::marker::PhantomData;
use std::ops::{Bound, RangeBounds};
use std::sync::Arc;

use cudarc::driver::sys;

use crate::driver::calls;
use crate::driver::context::core::Context;
use crate::driver::ordering::{StreamInner, StreamUses};
use crate::error::{ArrayShapeError, CopyError, Error, Result};
use crate::types::repr::DeviceRepr;

/// Device memory a kernel may read: what a `const T*` parameter takes.
///
/// Implemented by [`DeviceBuffer`](crate::DeviceBuffer), its views, and every other kind of device-accessible
/// memory of this crate (pooled, pitched, managed, mapped, IPC). The one method hands out a
/// [`DeviceView`], and a view can only be made from such memory or, for memory from another
/// library, with the `unsafe` [`DeviceView::from_raw_parts`]: so an implementation for your own
/// wrapper (delegating to the buffer it holds) is safe, and cannot make a launch touch memory
/// it must not.
///
/// ```
/// use gpu_runtime::{DeviceBuffer, DeviceRead, DeviceView, DeviceViewMut, DeviceWrite};
/// /// A matrix on the device: kernels take it wherever they take a buffer.
/// struct Matrix { data: DeviceBuffer<f32>, rows: usize, cols: usize }
/// impl DeviceRead<f32> for Matrix {
///     fn device_view(&self) -> DeviceView<'_, f32> { self.data.device_view() }
/// }
/// impl DeviceWrite<f32> for Matrix {
///     fn device_view_mut(&mut self) -> DeviceViewMut<'_, f32> { self.data.device_view_mut() }
/// }
/// ```
// The message names the fixes for host data passed where device memory is expected (issue 28),
// in its first line (issue 44: rustc lists the trait's implementations before the notes): the
// usual cause is a `Vec` or slice given to `prepared_call`, or to a kernel parameter not marked
// `#[In]`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not device memory of `{T}`: for host data, copy it first with `ctx.to_device(&data)?`, or mark the kernel's parameter `#[In]` so that the call copies it",
    label = "expected device memory of `{T}` (a `DeviceBuffer<{T}>` or a view of one)",
    note = "device memory of another element type is refused too: the element types must match",
    note = "`prepared_call(..)` and `prepared_async_call(..)` launch on device memory only; the convenience call `name(&ctx, grid, block, ..)` and `call(..)` copy host data to the device for the parameters marked `#[In]`"
)]
pub trait DeviceRead<T> {
    /// The memory as a read-only view: its address, length and context, and the record of the
    /// streams that use it, through which launches and copies are ordered.
    fn device_view(&self) -> DeviceView<'_, T>;

    /// True when the elements fill the memory [`device_view`](Self::device_view) spans, with
    /// no gaps between them: true for a buffer and its slices (the default), false for an array
    /// view with steps or a [`PitchedBuffer`](crate::driver::PitchedBuffer) with padded rows,
    /// whose view includes the elements or padding in between. Calls that move the whole run of
    /// memory rather than indexing it (NCCL's collectives) refuse memory that is not.
    fn is_contiguous(&self) -> bool {
        true
    }
}

/// Device memory a kernel may write: what a `T*` parameter takes. Taking it by `&mut` lets the
/// borrow checker rule out a kernel writing memory that something else is reading.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not writable device memory of `{T}`: for host data, copy it first with `ctx.to_device(&data)?` (and back with `to_vec()`), or mark the kernel's parameter `#[Out]` or `#[InOut]` so that the call copies it",
    label = "expected writable device memory of `{T}` (`&mut` a `DeviceBuffer<{T}>` or a mutable view)",
    note = "device memory of another element type is refused too: the element types must match",
    note = "`prepared_call(..)` and `prepared_async_call(..)` launch on device memory only; the convenience call `name(&ctx, grid, block, ..)` and `call(..)` copy `&mut` host data to the device and back for the parameters marked `#[Out]` (written) or `#[InOut]` (read and written)"
)]
pub trait DeviceWrite<T>: DeviceRead<T> {
    /// The memory as a writable view.
    fn device_view_mut(&mut self) -> DeviceViewMut<'_, T>;
}

/// An owned allocation of `len` elements of `T` in device memory, freed when dropped.
///
/// The buffer keeps its context alive. Work queued on streams that use it (launches, async
/// copies and memsets) keeps the memory allocated until it has finished, however early the
/// buffer is dropped: the memory is freed once events recorded on those streams complete (see
/// device-accessible memory of this crate; what kernels and copies take for `const T*`.
pub struct DeviceView<'a, T> {
    ptr: sys::CUdeviceptr,
    len: usize,
    ctx: &'a Context,
    /// The streams that use the memory; `None` for memory ordered by its owner
    /// ([`DeviceView::from_raw_parts`]).
    uses: Option<&'a StreamUses>,
    _elem: PhantomData<&'a [T]>,
}

/// The accessors every run of device memory has, written once for `DeviceBuffer`, the two
/// views and the graphs' arguments: from fields `len` (elements) and `ptr`, and `ctx`, a
/// `&'a Context` or (`owned`) a `Context`.
macro_rules! device_memory_accessors {
    (len) => {
        /// The number of elements.
        #[inline]
        pub fn len(&self) -> usize {
            self.len
        }

        /// True when there are no elements.
        #[inline]
        pub fn is_empty(&self) -> bool {
            self.len == 0
        }
    };
    (ptr) => {
        device_memory_accessors!(len);

        /// The device address of the first element (PyCUDA's `int(allocation)` for a buffer).
        #[inline]
        pub fn device_ptr(&self) -> sys::CUdeviceptr {
            self.ptr
        }
    };
    (ptr, owned) => {
        device_memory_accessors!(ptr);

        /// The context the memory belongs to.
        #[inline]
        pub fn context(&self) -> &Context {
            &self.ctx
        }
    };
    (ptr, $a:lifetime) => {
        device_memory_accessors!(ptr);

        /// The context the memory belongs to.
        #[inline]
        pub fn context(&self) -> &$a Context {
            self.ctx
        }
    };
}
pub(crate) use device_memory_accessors;

/// The constructors and record accessor both views share, written once.
macro_rules! view_constructors {
    ($view:ident) => {
        /// The one place a view is put together.
        #[inline]
        fn new(ptr: sys::CUdeviceptr, len: usize, ctx: &'a Context, uses: Option<&'a StreamUses>) -> Self {
            $view {
                ptr,
                len,
                ctx,
                uses,
                _elem: PhantomData,
            }
        }

        /// A view of memory this crate tracks (`uses` is its record).
        #[inline]
        pub(crate) fn tracked(
            ptr: sys::CUdeviceptr,
            len: usize,
            ctx: &'a Context,
            uses: &'a StreamUses,
        ) -> Self {
            Self::new(ptr, len, ctx, Some(uses))
        }

        /// The record of the streams that use the memory, if this crate tracks it.
        #[inline]
        pub(crate) fn uses(&self) -> Option<&'a StreamUses> {
            self.uses
        }
    };
}

/// A borrowed, writable run of device memory: what kernels and copies take for `T*`.
pub struct DeviceViewMut<'a, T> {
    ptr: sys::CUdeviceptr,
    len: usize,
    ctx: &'a Context,
    uses: Option<&'a StreamUses>,
    _elem: PhantomData<&'a mut [T]>,
}

impl<T> Clone for DeviceView<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for DeviceView<'_, T> {}

impl<T> fmt::Debug for DeviceView<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "DeviceView({:#x}, len {})", self.ptr, self.len)
    }
}

impl<T> fmt::Debug for DeviceViewMut<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "DeviceViewMut({:#x}, len {})", self.ptr, self.len)
    }
}

/// `(start, len)` of `range` in a run of `len` elements, or a typed error.
fn sub_range(range: impl RangeBounds<usize>, len: usize) -> Result<(usize, usize)> {
    let start = match range.start_bound() {
        Bound::Included(&s) => s,
        Bound::Excluded(&s) => s.saturating_add(1),
        Bound::Unbounded => 0,
    };
    let end = match range.end_bound() {
        Bound::Included(&e) => e.saturating_add(1),
        Bound::Excluded(&e) => e,
        Bound::Unbounded => len,
    };
    if start > end || end > len {
        return Err(ArrayShapeError::RangeOutOfBounds { start, end, len }.into());
    }
    Ok((start, end - start))
}

impl<'a, T> DeviceView<'a, T> {
    view_constructors!(DeviceView);

    /// A view of `len` elements of `T` at `ptr`, memory this crate did not allocate: from
    /// another library (PyCUDA's `PointerHolderBase`, a `__cuda_array_interface__`), or raw
    /// driver calls. Kernels and copies take it like any buffer, but do not order it with other
    /// streams, and nothing keeps it allocated: that is the caller's part.
    ///
    /// # Safety
    /// - `ptr` addresses `len` elements of `T` that kernels of `ctx` may read: memory of `ctx`,
    ///   of a context `ctx` has peer access to, or mapped host memory; every bit pattern in it
    ///   is a valid `T` when read back;
    /// - the memory stays allocated, and is not handed out again, for `'a` and until every
    ///   launch or copy queued with this view (or a copy of it) has finished;
    /// - no work on another stream, and no other library, writes it while such a launch or
    ///   copy may run, unless the caller orders the two (events, or synchronizing).
    pub unsafe fn from_raw_parts(ctx: &'a Context, ptr: sys::CUdeviceptr, len: usize) -> Self {
        Self::new(ptr, len, ctx, None)
    }

    device_memory_accessors!(ptr, 'a);

    /// A view of `range` (in elements) of this view.
    pub fn slice(&self, range: impl RangeBounds<usize>) -> Result<DeviceView<'a, T>> {
        let (start, len) = sub_range(range, self.len)?;
        Ok(DeviceView {
            ptr: self.ptr + (start * std::mem::size_of::<T>()) as u64,
            len,
            ..*self
        })
    }

    /// Orders a read on `s` after the memory's last write (see `ordering`).
    #[inline(always)]
    pub(crate) fn read_on(&self, s: &Arc<StreamInner>) -> Result<()> {
        match self.uses {
            Some(u) => u.read_on(s),
            None => Ok(()),
        }
    }
}

impl<T: DeviceRepr> DeviceView<'_, T> {
    /// A copy of the contents as a `Vec`.
    pub fn to_vec(&self) -> Result<Vec<T>> {
        let mut v = Vec::with_capacity(self.len);
        copy_dtoh_spare(self, self.len, &mut v)?;
        Ok(v)
    }
}

impl<'a, T> DeviceViewMut<'a, T> {
    /// A second handle on the same memory for the whole `'a` (a graph token's sub-range,
    /// `launch::graph::buffers`).
    ///
    /// # Safety
    /// The caller keeps the two from being used at once: the copy must be tied to a borrow of
    /// `self` (`&self` for reading only, `&mut self` for writing).
    pub(crate) unsafe fn alias(&self) -> DeviceViewMut<'a, T> {
        DeviceViewMut::new(self.ptr, self.len, self.ctx, self.uses)
    }

    /// The same memory, read-only, for the whole `'a`.
    ///
    /// # Safety
    /// As [`DeviceViewMut::alias`], for reading: tied to a shared borrow of `self`.
    pub(crate) unsafe fn alias_read(&self) -> DeviceView<'a, T> {
        DeviceView::new(self.ptr, self.len, self.ctx, self.uses)
    }

    view_constructors!(DeviceViewMut);

    /// A writable view of `len` elements of `T` at `ptr`, memory this crate did not allocate
    /// (see [`DeviceView::from_raw_parts`]).
    ///
    /// # Safety
    /// Everything [`DeviceView::from_raw_parts`] requires, and: nothing else reads or writes
    /// the memory for `'a`, nor while a launch or copy queued with this view may run, unless
    /// the caller orders the two.
    pub unsafe fn from_raw_parts(ctx: &'a Context, ptr: sys::CUdeviceptr, len: usize) -> Self {
        Self::new(ptr, len, ctx, None)
    }

    device_memory_accessors!(ptr, 'a);

    /// A writable view of `range` (in elements) of this view, for as long as it is borrowed.
    pub fn slice_mut(&mut self, range: impl RangeBounds<usize>) -> Result<DeviceViewMut<'_, T>> {
        self.device_view_mut().into_slice(range)
    }

    /// This view narrowed to `range` (in elements).
    pub fn into_slice(self, range: impl RangeBounds<usize>) -> Result<DeviceViewMut<'a, T>> {
        let (start, len) = sub_range(range, self.len)?;
        Ok(DeviceViewMut {
            ptr: self.ptr + (start * std::mem::size_of::<T>()) as u64,
            len,
            ..self
        })
    }

    /// Orders a write on `s` after every use of the memory (see `ordering`).
    #[inline(always)]
    pub(crate) fn write_on(&self, s: &Arc<StreamInner>) -> Result<()> {
        match self.uses {
            Some(u) => u.write_on(s),
            None => Ok(()),
        }
    }
}

impl<T> DeviceRead<T> for DeviceView<'_, T> {
    #[inline]
    fn device_view(&self) -> DeviceView<'_, T> {
        *self
    }
}
impl<T> DeviceRead<T> for DeviceViewMut<'_, T> {
    #[inline]
    fn device_view(&self) -> DeviceView<'_, T> {
        DeviceView::new(self.ptr, self.len, self.ctx, self.uses)
    }
}
impl<T> DeviceWrite<T> for DeviceViewMut<'_, T> {
    #[inline]
    fn device_view_mut(&mut self) -> DeviceViewMut<'_, T> {
        DeviceViewMut::new(self.ptr, self.len, self.ctx, self.uses)
    }
}

/// Whether a copy of `host` elements to or from `device` elements has anything to move, after
/// checking that the lengths match: the check both synchronous copies share.
fn has_elements(operation: &'static str, host: usize, device: usize) -> Result<bool> {
    if host != device {
        return Err(CopyError::HostDeviceLength {
            operation,
            host,
            device,
        }
        .into());
    }
    Ok(host != 0)
}

/// A synchronous host-to-device copy into `dst`, ordered on the legacy default stream after
/// every use of `dst`. The host side is read before this returns; the device side may be
/// written later, which the record of `dst` says.
pub(crate) fn copy_htod<T: DeviceRepr>(dst: &mut DeviceViewMut<'_, T>, src: &[T]) -> Result<()> {
    if !has_elements("copy_from_host", src.len(), dst.len)? {
        return Ok(());
    }
    dst.write_on(dst.ctx.legacy())?;
    dst.ctx.bind()?;
    // SAFETY: src is readable for size_of_val(src) bytes and dst holds as many (checked above).
    unsafe { calls::memcpy_htod(dst.ptr, src.as_ptr().cast(), std::mem::size_of_val(src)) }
        .map_err(Error::from)
}

/// A synchronous device-to-host copy from `src`, ordered on the legacy default stream after
/// its last write; complete when this returns.
pub(crate) fn copy_dtoh<T: DeviceRepr>(src: &DeviceView<'_, T>, dst: &mut [T]) -> Result<()> {
    if !has_elements("copy_to_host", dst.len(), src.len)? {
        return Ok(());
    }
    src.read_on(src.ctx.legacy())?;
    src.ctx.bind()?;
    // SAFETY: dst is writable for size_of_val(dst) bytes and src holds as many; any bytes are a
    // valid T (DeviceRepr).
    unsafe { calls::memcpy_dtoh(dst.as_mut_ptr().cast(), src.ptr, std::mem::size_of_val(dst)) }
        .map_err(Error::from)
}

/// Copies the first `len` elements of `src` into the spare capacity of an empty `Vec`, so that
/// the host memory is never initialised twice.
pub(super) fn copy_dtoh_spare<T: DeviceRepr>(
    src: &DeviceView<'_, T>,
    len: usize,
    dst: &mut Vec<T>,
) -> Result<()> {
    debug_assert!(dst.is_empty() && dst.capacity() >= len && len <= src.len);
    if len == 0 {
        return Ok(());
    }
    src.read_on(src.ctx.legacy())?;
    src.ctx.bind()?;
    // SAFETY: the Vec has capacity for len elements; the copy writes all of them before set_len,
    // and any bytes are a valid T (DeviceRepr).
    unsafe {
        calls::memcpy_dtoh(dst.as_mut_ptr().cast(), src.ptr, len * std::mem::size_of::<T>())?;
        dst.set_len(len);
    }
    Ok(())
}

/// Checks that `bytes` at `ptr` are a whole number of aligned `U`s and returns how many.
fn cast_len<U>(ptr: sys::CUdeviceptr, bytes: usize) -> Result<usize> {
    let (size, align) = (std::mem::size_of::<U>(), std::mem::align_of::<U>());
    if size == 0 || !bytes.is_multiple_of(size) || !ptr.is_multiple_of(align as u64) {
        return Err(ArrayShapeError::ViewCast {
            address: ptr,
            bytes,
            to: std::any::type_name::<U>(),
            size,
            align,
        }
        .into());
    }
    Ok(bytes / size)
}

impl<'a, T: DeviceRepr> DeviceView<'a, T> {
    /// The same memory as elements of `U` (C's `(const float4 *) p` on a `const float *`, as
    /// llm.c's launchers pass a `float` buffer to a kernel taking `float4`), with the same record
    /// of streams, so launches taking it are ordered as ones taking `self`. Sound for any two
    /// [`DeviceRepr`] types, whose every bit pattern is a valid value; the length in bytes must
    /// be a multiple of `U`'s size and the address of its alignment, or it is
    /// [`ArrayShapeError::ViewCast`].
    pub fn cast<U: DeviceRepr>(self) -> Result<DeviceView<'a, U>> {
        let len = cast_len::<U>(self.ptr, self.len * std::mem::size_of::<T>())?;
        Ok(DeviceView {
            ptr: self.ptr,
            len,
            ctx: self.ctx,
            uses: self.uses,
            _elem: PhantomData,
        })
    }
}

impl<'a, T: DeviceRepr> DeviceViewMut<'a, T> {
    /// The same memory as writable elements of `U`, as [`DeviceView::cast`] (same checks, same
    /// error); the view is consumed, so the memory keeps one writer.
    pub fn cast_mut<U: DeviceRepr>(self) -> Result<DeviceViewMut<'a, U>> {
        let len = cast_len::<U>(self.ptr, self.len * std::mem::size_of::<T>())?;
        Ok(DeviceViewMut {
            ptr: self.ptr,
            len,
            ctx: self.ctx,
            uses: self.uses,
            _elem: PhantomData,
        })
    }
}

impl<'a, T> DeviceViewMut<'a, T> {
    /// The view split in two at `mid`: `[0, mid)` and `[mid, len)`, both writable (as
    /// `<[T]>::split_at_mut`), so that one launch may write two parts of one allocation (a
    /// layer norm's weight and bias gradients, both inside one gradient buffer). Both keep the
    /// allocation's record of streams. `mid > len` is [`ArrayShapeError::RangeOutOfBounds`].
    pub fn split_at_mut(self, mid: usize) -> Result<(DeviceViewMut<'a, T>, DeviceViewMut<'a, T>)> {
        if mid > self.len {
            return Err(ArrayShapeError::RangeOutOfBounds {
                start: mid,
                end: mid,
                len: self.len,
            }
            .into());
        }
        let second = DeviceViewMut {
            ptr: self.ptr + (mid * std::mem::size_of::<T>()) as u64,
            len: self.len - mid,
            ..self
        };
        let first = DeviceViewMut { len: mid, ..self };
        Ok((first, second))
    }
}
