//! Unstructured transfers and memsets on device memory (PyCUDA's `memcpy_*` and `memset_*`).
//!
//! Every function takes typed memory ([`DeviceRead`] / [`DeviceWrite`] and host slices of the
//! same element type), so an element-type mismatch does not compile, and checks lengths,
//! contexts and peer access before calling the driver. Every one is ordered after the other
//! streams' uses of the memory it touches, and keeps that memory allocated until it has run
//! (see the guide's [Safety model](crate::guide::threads_and_safety#safety-model)).

use std::sync::Arc;

use crate::driver::calls;
use crate::driver::context::core::Context;
use crate::driver::memory::page_locked::{PageLocked, PageLockedMut};
use crate::driver::memory::slices::{HostSlice, HostSliceMut};
use crate::driver::memory::view::{DeviceRead, DeviceView, DeviceViewMut, DeviceWrite};
use crate::driver::ordering::StreamInner;
use crate::driver::stream::Stream;
use crate::error::{CopyError, Error, Result};
use crate::types::repr::DeviceRepr;

fn same_len(operation: &'static str, dst: usize, src: usize, unit: &'static str) -> Result<()> {
    if dst != src {
        return Err(CopyError::DestinationSource {
            operation,
            dst,
            src,
            unit,
        }
        .into());
    }
    Ok(())
}

fn same_context(a: &Context, b: &Context, what: &'static str) -> Result<()> {
    if a != b {
        return Err(Error::WrongContext { what });
    }
    Ok(())
}

/// `stream`, after checking it belongs to `ctx`.
fn on_stream<'s>(ctx: &Context, stream: &'s Stream) -> Result<&'s Arc<StreamInner>> {
    same_context(ctx, stream.context(), "the stream")?;
    Ok(stream.inner())
}

/// Binds `ctx` and queues `copy` on `s`: the tail every queued copy shares once both of its
/// sides are ordered on `s`. Then checks that no other library began capturing `s` meanwhile
/// (the check before is in the record's `read_on`/`write_on`): such a capture is invalidated,
/// so the copy never runs from its graph.
fn queue(
    ctx: &Context,
    s: &StreamInner,
    copy: impl FnOnce() -> std::result::Result<(), calls::Failed>,
) -> Result<()> {
    ctx.bind()?;
    copy()?;
    s.refuse_foreign_capture()
}

/// Orders a copy from `src` into `dst` on `s`: after `src`'s writers and every use of `dst`.
fn order_copy<T>(dst: &DeviceViewMut<'_, T>, src: &DeviceView<'_, T>, s: &Arc<StreamInner>) -> Result<()> {
    src.read_on(s)?;
    dst.write_on(s)
}

/// Copies host data into device memory of the same length (PyCUDA's `memcpy_htod`).
///
/// Like every synchronous copy, it runs on the legacy default stream after the work queued
/// on `dst` on any stream; the host memory has been read when it returns.
///
/// ```no_run
/// use gpu_runtime::{driver::memcpy_dtoh, driver::memcpy_htod, driver::memset_d32, Context};
/// let ctx = Context::default()?;
/// let mut dev = ctx.alloc::<u32>(1024)?;
/// memcpy_htod(&mut dev, &(0..1024).collect::<Vec<u32>>())?;
/// // `count` is in 32-bit values, not bytes: this overwrites the first half only.
/// memset_d32(&mut dev, u32::MAX, 512)?;
/// let mut host = vec![0u32; 1024];
/// memcpy_dtoh(&mut host, &dev)?;
/// assert_eq!(host[510..514], [u32::MAX, u32::MAX, 512, 513]);
/// # Ok::<(), gpu_runtime::Error>(())
/// ```
pub fn memcpy_htod<T: DeviceRepr>(
    dst: &mut (impl DeviceWrite<T> + ?Sized),
    src: &(impl HostSlice<T> + ?Sized),
) -> Result<()> {
    let src = src.host_slice()?;
    let mut dst = dst.device_view_mut();
    same_len("memcpy_htod", dst.len(), src.len(), "elements")?;
    crate::driver::memory::view::copy_htod(&mut dst, src)
}

/// Copies device memory into host memory of the same length (PyCUDA's `memcpy_dtoh`), after
/// the work that writes `src`; complete when it returns.
pub fn memcpy_dtoh<T: DeviceRepr>(
    dst: &mut (impl HostSliceMut<T> + ?Sized),
    src: &(impl DeviceRead<T> + ?Sized),
) -> Result<()> {
    let dst = dst.host_slice_mut()?;
    let src = src.device_view();
    same_len("memcpy_dtoh", dst.len(), src.len(), "elements")?;
    crate::driver::memory::view::copy_dtoh(&src, dst)
}

/// Copies device memory to device memory of the same length, in one context (PyCUDA's
/// `memcpy_dtod`). Across contexts use [`memcpy_peer`].
pub fn memcpy_dtod<T: DeviceRepr>(
    dst: &mut (impl DeviceWrite<T> + ?Sized),
    src: &(impl DeviceRead<T> + ?Sized),
) -> Result<()> {
    let (dst, src) = (dst.device_view_mut(), src.device_view());
    same_len("memcpy_dtod", dst.len(), src.len(), "elements")?;
    same_context(
        dst.context(),
        src.context(),
        "the source of memcpy_dtod (use memcpy_peer across contexts)",
    )?;
    let bytes = dst.len() * std::mem::size_of::<T>();
    if bytes == 0 {
        return Ok(());
    }
    order_copy(&dst, &src, dst.context().legacy())?;
    dst.context().bind()?;
    // SAFETY: both ranges are live allocations of `bytes` bytes in the current context, and the
    // copy is ordered after their other uses.
    unsafe { calls::memcpy_dtod(dst.device_ptr(), src.device_ptr(), bytes) }.map_err(Error::from)
}

/// Queues a host-to-device copy from page-locked memory on `stream` (PyCUDA's
/// `memcpy_htod_async`): truly asynchronous, the DMA engine reads `src` while the host goes on.
///
/// `src` is a [`PinnedArray`](crate::driver::PinnedArray), [`RegisteredArray`](crate::driver::RegisteredArray)
/// or [`RegisteredSlice`](crate::driver::RegisteredSlice) (elements in memory order), which records the
/// copy: writing it from the host, freeing it or unlocking it waits for the copy. The copy
/// waits for earlier work on `dst`. For other host memory, see
/// [`memcpy_htod_async_unchecked`].
///
/// ```no_run
/// use gpu_runtime::{driver::memcpy_dtoh_async, driver::memcpy_htod_async, Context, driver::HostAllocFlags, Stream};
/// let ctx = Context::default()?;
/// let stream = Stream::new(&ctx)?;
/// let mut host = ctx.pagelocked_zeros::<f32, _>(1 << 20, HostAllocFlags::NONE)?;
/// host.view_mut().fill(2.0);
/// let mut dev = ctx.alloc::<f32>(1 << 20)?;
/// memcpy_htod_async(&mut dev, &host, &stream)?;
/// // This write waits for the copy above to have read `host`.
/// host.view_mut().fill(0.0);
/// memcpy_dtoh_async(&mut host, &dev, &stream)?;
/// // This read waits for the copy back.
/// assert_eq!(host.view()[0], 2.0);
/// # Ok::<(), gpu_runtime::Error>(())
/// ```
pub fn memcpy_htod_async<T: DeviceRepr>(
    dst: &mut (impl DeviceWrite<T> + ?Sized),
    src: &(impl PageLocked<T> + ?Sized),
    stream: &Stream,
) -> Result<()> {
    let (dst, src) = (dst.device_view_mut(), src.locked());
    same_len("memcpy_htod_async", dst.len(), src.len, "elements")?;
    let s = on_stream(dst.context(), stream)?;
    if src.len == 0 {
        return Ok(());
    }
    // The DMA engine reads the host memory on `s`: the host's next write waits for it.
    src.uses.read_on(s)?;
    dst.write_on(s)?;
    let bytes = src.len * std::mem::size_of::<T>();
    // SAFETY: lengths match; the host memory is page-locked and stays allocated and unwritten
    // until the copy completes (its record says so); the device side is ordered after its uses.
    queue(dst.context(), s, || unsafe {
        calls::memcpy_htod_async(dst.device_ptr(), src.ptr.cast(), bytes, s.raw)
    })
}

/// Queues a device-to-host copy into page-locked memory on `stream` (PyCUDA's
/// `memcpy_dtoh_async`), after the work that writes `src`. Reading `dst` from the host waits
/// for the copy. For other host memory, see [`memcpy_dtoh_async_unchecked`].
pub fn memcpy_dtoh_async<T: DeviceRepr>(
    dst: &mut (impl PageLockedMut<T> + ?Sized),
    src: &(impl DeviceRead<T> + ?Sized),
    stream: &Stream,
) -> Result<()> {
    let (dst, src) = (dst.locked_mut(), src.device_view());
    same_len("memcpy_dtoh_async", dst.len, src.len(), "elements")?;
    let s = on_stream(src.context(), stream)?;
    if dst.len == 0 {
        return Ok(());
    }
    dst.uses.write_on(s)?;
    src.read_on(s)?;
    let bytes = dst.len * std::mem::size_of::<T>();
    // SAFETY: lengths match; the host memory is page-locked, and the host neither touches nor
    // frees it until the copy completes (its record says so); any bytes are a valid T.
    queue(src.context(), s, || unsafe {
        calls::memcpy_dtoh_async(dst.ptr.cast(), src.device_ptr(), bytes, s.raw)
    })
}

/// Queues a host-to-device copy from any host memory on `stream`. From pageable memory the
/// driver stages the copy before returning; from memory page-locked by other means it is
/// asynchronous. The device side is ordered like every copy's.
///
/// # Safety
/// `src` must stay allocated and unmodified until the copy has finished (synchronize `stream`
/// or an event recorded after it): the borrow ends when this function returns, the copy may
/// not. [`memcpy_htod_async`] takes this crate's page-locked memory and needs no such promise.
pub unsafe fn memcpy_htod_async_unchecked<T: DeviceRepr>(
    dst: &mut (impl DeviceWrite<T> + ?Sized),
    src: &[T],
    stream: &Stream,
) -> Result<()> {
    let dst = dst.device_view_mut();
    same_len("memcpy_htod_async_unchecked", dst.len(), src.len(), "elements")?;
    let s = on_stream(dst.context(), stream)?;
    if src.is_empty() {
        return Ok(());
    }
    dst.write_on(s)?;
    // SAFETY: lengths match; the caller keeps src alive and unmodified until the copy
    // completes.
    queue(dst.context(), s, || unsafe {
        calls::memcpy_htod_async(
            dst.device_ptr(),
            src.as_ptr().cast(),
            std::mem::size_of_val(src),
            s.raw,
        )
    })
}

/// Queues a device-to-host copy into any host memory on `stream`, after the work that writes
/// `src`.
///
/// # Safety
/// `dst` must stay allocated, and must not be read or written, until the copy has finished
/// (synchronize `stream` or an event recorded after it). [`memcpy_dtoh_async`] takes this
/// crate's page-locked memory and needs no such promise.
pub unsafe fn memcpy_dtoh_async_unchecked<T: DeviceRepr>(
    dst: &mut [T],
    src: &(impl DeviceRead<T> + ?Sized),
    stream: &Stream,
) -> Result<()> {
    let src = src.device_view();
    same_len("memcpy_dtoh_async_unchecked", dst.len(), src.len(), "elements")?;
    let s = on_stream(src.context(), stream)?;
    if dst.is_empty() {
        return Ok(());
    }
    src.read_on(s)?;
    let bytes = std::mem::size_of_val(dst);
    // SAFETY: lengths match; the caller keeps dst alive and untouched until the copy completes;
    // any bytes are a valid T (DeviceRepr).
    queue(src.context(), s, || unsafe {
        calls::memcpy_dtoh_async(dst.as_mut_ptr().cast(), src.device_ptr(), bytes, s.raw)
    })
}

/// Queues a device-to-device copy on `stream` (PyCUDA's `memcpy_dtod_async`), after the work
/// that writes `src` and every use of `dst`.
pub fn memcpy_dtod_async<T: DeviceRepr>(
    dst: &mut (impl DeviceWrite<T> + ?Sized),
    src: &(impl DeviceRead<T> + ?Sized),
    stream: &Stream,
) -> Result<()> {
    let (dst, src) = (dst.device_view_mut(), src.device_view());
    same_len("memcpy_dtod_async", dst.len(), src.len(), "elements")?;
    same_context(
        dst.context(),
        src.context(),
        "the source of memcpy_dtod_async (use memcpy_peer_async across contexts)",
    )?;
    let s = on_stream(dst.context(), stream)?;
    let bytes = dst.len() * std::mem::size_of::<T>();
    if bytes == 0 {
        return Ok(());
    }
    order_copy(&dst, &src, s)?;
    // SAFETY: both ranges are live allocations of `bytes` bytes, kept allocated until the copy
    // completes and ordered after their other uses (their records).
    queue(dst.context(), s, || unsafe {
        calls::memcpy_dtod_async(dst.device_ptr(), src.device_ptr(), bytes, s.raw)
    })
}

/// Copies between memory of two contexts, e.g. on two GPUs (PyCUDA's `memcpy_peer`). It needs
/// no peer access: without it the driver stages the copy through the host, with it
/// ([`Context::enable_peer_access`] in either direction) the copy goes straight between the
/// devices and is faster.
///
/// ```no_run
/// use gpu_runtime::{driver::memcpy_peer, Context, Device};
/// let (gpu0, gpu1) = (Context::new(Device::new(0)?)?, Context::new(Device::new(1)?)?);
/// // Optional: without peer access the same copy is staged through the host.
/// if gpu1.device().can_access_peer(gpu0.device())? {
///     gpu1.enable_peer_access(&gpu0)?;
/// }
/// let src = gpu0.to_device(&[1.0f32; 4096])?;
/// let mut dst = gpu1.alloc::<f32>(4096)?;
/// memcpy_peer(&mut dst, &src)?;
/// assert_eq!(dst.to_vec()?, vec![1.0; 4096]);
/// # Ok::<(), gpu_runtime::Error>(())
/// ```
pub fn memcpy_peer<T: DeviceRepr>(
    dst: &mut (impl DeviceWrite<T> + ?Sized),
    src: &(impl DeviceRead<T> + ?Sized),
) -> Result<()> {
    let (dst, src) = (dst.device_view_mut(), src.device_view());
    same_len("memcpy_peer", dst.len(), src.len(), "elements")?;
    let bytes = dst.len() * std::mem::size_of::<T>();
    if bytes == 0 {
        return Ok(());
    }
    // Queued on the destination's legacy stream, which waits for the source's other streams.
    order_copy(&dst, &src, dst.context().legacy())?;
    dst.context().bind()?;
    // SAFETY: both ranges are live allocations of `bytes` bytes in the contexts named, ordered
    // after their other uses.
    unsafe {
        calls::memcpy_peer(
            dst.device_ptr(),
            dst.context().raw(),
            src.device_ptr(),
            src.context().raw(),
            bytes,
        )
    }
    .map_err(Error::from)
}

/// [`memcpy_peer`] queued on `stream` (a stream of the destination's context).
pub fn memcpy_peer_async<T: DeviceRepr>(
    dst: &mut (impl DeviceWrite<T> + ?Sized),
    src: &(impl DeviceRead<T> + ?Sized),
    stream: &Stream,
) -> Result<()> {
    let (dst, src) = (dst.device_view_mut(), src.device_view());
    same_len("memcpy_peer_async", dst.len(), src.len(), "elements")?;
    let s = on_stream(dst.context(), stream)?;
    let bytes = dst.len() * std::mem::size_of::<T>();
    if bytes == 0 {
        return Ok(());
    }
    order_copy(&dst, &src, s)?;
    let (dst_ctx, src_ctx) = (dst.context().raw(), src.context().raw());
    // SAFETY: as in memcpy_peer; both ends stay allocated until the copy completes.
    queue(dst.context(), s, || unsafe {
        calls::memcpy_peer_async(dst.device_ptr(), dst_ctx, src.device_ptr(), src_ctx, bytes, s.raw)
    })
}

/// Checks that `count` units of `unit` bytes fit into `dst` and that `dst` is aligned for them.
fn memset_fits<T>(
    operation: &'static str,
    dst: &DeviceViewMut<'_, T>,
    unit: usize,
    count: usize,
) -> Result<()> {
    let bytes = dst.len() * std::mem::size_of::<T>();
    let need = count.saturating_mul(unit);
    if need > bytes {
        return Err(CopyError::MemsetTooLarge {
            operation,
            count,
            unit,
            bytes,
        }
        .into());
    }
    if !dst.device_ptr().is_multiple_of(unit as u64) {
        return Err(CopyError::MemsetMisaligned {
            operation,
            address: dst.device_ptr(),
            unit,
        }
        .into());
    }
    Ok(())
}

/// Checks a 2D memset of `width` units by `height` rows, `pitch` bytes apart.
fn memset_2d_fits<T>(
    operation: &'static str,
    dst: &DeviceViewMut<'_, T>,
    pitch: usize,
    unit: usize,
    width: usize,
    height: usize,
) -> Result<()> {
    let bytes = dst.len() * std::mem::size_of::<T>();
    let row = width.saturating_mul(unit);
    if height > 1 && row > pitch {
        return Err(CopyError::RowWiderThanPitch {
            operation,
            width,
            unit,
            pitch,
        }
        .into());
    }
    let need = if width == 0 || height == 0 {
        0
    } else {
        (height - 1)
            .checked_mul(pitch)
            .and_then(|b| b.checked_add(row))
            .unwrap_or(usize::MAX)
    };
    if need > bytes {
        return Err(CopyError::Memset2dTooLarge {
            operation,
            height,
            row_bytes: row,
            pitch,
            need,
            bytes,
        }
        .into());
    }
    // unit is 1, 2 or 4: a power of two.
    if dst.device_ptr() & (unit as u64 - 1) != 0 || pitch & (unit - 1) != 0 {
        return Err(CopyError::Memset2dMisaligned {
            operation,
            address: dst.device_ptr(),
            pitch,
            unit,
        }
        .into());
    }
    Ok(())
}

/// Orders a memset of `dst` on `stream` and binds its context.
fn memset_on<T>(dst: &DeviceViewMut<'_, T>, stream: &Arc<StreamInner>) -> Result<()> {
    dst.write_on(stream)?;
    dst.context().bind()
}

/// The memsets of one width, each calling the thin function of its own name in `calls`.
macro_rules! memset_fns {
    ($($v:ty: $name:ident, $name2d:ident, $name_async:ident, $name2d_async:ident;)*) => {$(
        #[doc = concat!("Sets the first `count` ", stringify!($v), " values of `dst` to `value` (PyCUDA's `", stringify!($name), "`), on the legacy default stream after every use of `dst`.")]
        pub fn $name<T>(dst: &mut (impl DeviceWrite<T> + ?Sized), value: $v, count: usize) -> Result<()> {
            let dst = dst.device_view_mut();
            memset_fits(stringify!($name), &dst, std::mem::size_of::<$v>(), count)?;
            if count == 0 {
                return Ok(());
            }
            memset_on(&dst, dst.context().legacy())?;
            // SAFETY: count values fit in the live allocation (checked above).
            unsafe { calls::$name(dst.device_ptr(), value, count) }.map_err(Error::from)
        }

        #[doc = concat!("[`", stringify!($name), "`] queued on `stream` (a stream of `dst`'s context); returns without waiting.")]
        pub fn $name_async<T>(dst: &mut (impl DeviceWrite<T> + ?Sized), value: $v, count: usize, stream: &Stream) -> Result<()> {
            let dst = dst.device_view_mut();
            memset_fits(stringify!($name_async), &dst, std::mem::size_of::<$v>(), count)?;
            let s = on_stream(dst.context(), stream)?;
            if count == 0 {
                return Ok(());
            }
            memset_on(&dst, s)?;
            // SAFETY: as in the synchronous memset; the memory stays allocated until the memset
            // completes (its record says so).
            unsafe { calls::$name_async(dst.device_ptr(), value, count, s.raw) }.map_err(Error::from)
        }

        #[doc = concat!("Sets `width` ", stringify!($v), " values in each of `height` rows, `pitch` bytes apart, to `value` (PyCUDA's `", stringify!($name2d), "`).")]
        pub fn $name2d<T>(
            dst: &mut (impl DeviceWrite<T> + ?Sized),
            pitch: usize,
            value: $v,
            width: usize,
            height: usize,
        ) -> Result<()> {
            let dst = dst.device_view_mut();
            memset_2d_fits(stringify!($name2d), &dst, pitch, std::mem::size_of::<$v>(), width, height)?;
            if width == 0 || height == 0 {
                return Ok(());
            }
            memset_on(&dst, dst.context().legacy())?;
            // SAFETY: every row lies in the live allocation (checked above).
            unsafe { calls::$name2d(dst.device_ptr(), pitch, value, width, height) }.map_err(Error::from)
        }

        #[doc = concat!("[`", stringify!($name2d), "`] queued on `stream` (a stream of `dst`'s context); returns without waiting.")]
        pub fn $name2d_async<T>(
            dst: &mut (impl DeviceWrite<T> + ?Sized),
            pitch: usize,
            value: $v,
            width: usize,
            height: usize,
            stream: &Stream,
        ) -> Result<()> {
            let dst = dst.device_view_mut();
            memset_2d_fits(stringify!($name2d_async), &dst, pitch, std::mem::size_of::<$v>(), width, height)?;
            let s = on_stream(dst.context(), stream)?;
            if width == 0 || height == 0 {
                return Ok(());
            }
            memset_on(&dst, s)?;
            // SAFETY: as in the synchronous memset; the memory outlives the queued memset.
            unsafe { calls::$name2d_async(dst.device_ptr(), pitch, value, width, height, s.raw) }
                .map_err(Error::from)
        }
    )*};
}

memset_fns! {
    u8: memset_d8, memset_d2d8, memset_d8_async, memset_d2d8_async;
    u16: memset_d16, memset_d2d16, memset_d16_async, memset_d2d16_async;
    u32: memset_d32, memset_d2d32, memset_d32_async, memset_d2d32_async;
}
