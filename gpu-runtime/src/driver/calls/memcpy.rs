//! Stream-ordered copies and memsets on raw device pointers.

use std::ffi::c_void;

use cudarc::driver::sys;

use crate::driver::result::{result, Failed};

/// `cuMemcpyHtoDAsync`: `bytes` bytes from `src` to `dst`, queued on `stream`.
///
/// # Safety
/// `dst` and `src` each hold `bytes` bytes, and stay valid and unwritten by others until the
/// copy has run (`src` should be pinned for the copy to be asynchronous); `stream` is live.
#[inline]
pub(crate) unsafe fn memcpy_htod_async(
    dst: sys::CUdeviceptr,
    src: *const c_void,
    bytes: usize,
    stream: sys::CUstream,
) -> Result<(), Failed> {
    // SAFETY: the caller's guarantees.
    result("cuMemcpyHtoDAsync", unsafe {
        sys::cuMemcpyHtoDAsync_v2(dst, src, bytes, stream)
    })
}

/// `cuMemcpyDtoHAsync`: `bytes` bytes from `src` to `dst`, queued on `stream`.
///
/// # Safety
/// As [`memcpy_htod_async`], the other way.
#[inline]
pub(crate) unsafe fn memcpy_dtoh_async(
    dst: *mut c_void,
    src: sys::CUdeviceptr,
    bytes: usize,
    stream: sys::CUstream,
) -> Result<(), Failed> {
    // SAFETY: the caller's guarantees.
    result("cuMemcpyDtoHAsync", unsafe {
        sys::cuMemcpyDtoHAsync_v2(dst, src, bytes, stream)
    })
}

/// `cuMemcpyDtoDAsync`: `bytes` bytes from `src` to `dst`, queued on `stream`.
///
/// # Safety
/// Both ranges lie in live allocations that stay allocated until the copy has run, ordered
/// with other streams' uses; `stream` is live.
#[inline]
pub(crate) unsafe fn memcpy_dtod_async(
    dst: sys::CUdeviceptr,
    src: sys::CUdeviceptr,
    bytes: usize,
    stream: sys::CUstream,
) -> Result<(), Failed> {
    // SAFETY: the caller's guarantees.
    result("cuMemcpyDtoDAsync", unsafe {
        sys::cuMemcpyDtoDAsync_v2(dst, src, bytes, stream)
    })
}

/// `cuMemsetD32Async`: the first `count` 32-bit values at `dst` set to `value`.
///
/// # Safety
/// `count` values lie in a live allocation at `dst`, kept until the memset has run; `stream`
/// is live.
#[inline]
pub(crate) unsafe fn memset_d32_async(
    dst: sys::CUdeviceptr,
    value: u32,
    count: usize,
    stream: sys::CUstream,
) -> Result<(), Failed> {
    // SAFETY: the caller's guarantees.
    result("cuMemsetD32Async", unsafe {
        sys::cuMemsetD32Async(dst, value, count, stream)
    })
}

/// `cuMemsetD8Async`: the first `count` bytes at `dst` set to `value`.
///
/// # Safety
/// As [`memset_d32_async`], of bytes.
#[inline]
pub(crate) unsafe fn memset_d8_async(
    dst: sys::CUdeviceptr,
    value: u8,
    count: usize,
    stream: sys::CUstream,
) -> Result<(), Failed> {
    // SAFETY: the caller's guarantees.
    result("cuMemsetD8Async", unsafe {
        sys::cuMemsetD8Async(dst, value, count, stream)
    })
}

/// `cuMemGetAddressRange`: the base address of the allocation holding `ptr` (any address
/// inside it), in the current context.
pub(crate) fn mem_allocation_base(ptr: sys::CUdeviceptr) -> Result<sys::CUdeviceptr, Failed> {
    let (mut base, mut size) = (0, 0);
    // SAFETY: valid out-pointers; the driver checks that `ptr` lies in an allocation.
    result("cuMemGetAddressRange", unsafe {
        sys::cuMemGetAddressRange_v2(&mut base, &mut size, ptr)
    })?;
    Ok(base)
}
