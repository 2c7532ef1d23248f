//! Copies and memsets: stream-ordered and synchronous, on raw device pointers, between
//! contexts, and the structured 2D and 3D copies.

use std::ffi::c_void;

use cudarc::driver::sys;

use super::failed::{result, Failed};

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

/// `cuMemcpyHtoD`: `bytes` bytes from `src` to `dst`, complete when this returns (ordered on
/// the current context's legacy default stream).
///
/// # Safety
/// `dst` and `src` each hold `bytes` bytes; `dst` lies in a live allocation of the current
/// context (or one it may access), ordered after its other uses.
pub(crate) unsafe fn memcpy_htod(
    dst: sys::CUdeviceptr,
    src: *const c_void,
    bytes: usize,
) -> Result<(), Failed> {
    // SAFETY: the caller's guarantees.
    result("cuMemcpyHtoD", unsafe { sys::cuMemcpyHtoD_v2(dst, src, bytes) })
}

/// `cuMemcpyDtoH`: `bytes` bytes from `src` to `dst`, complete when this returns.
///
/// # Safety
/// As [`memcpy_htod`], the other way; `dst` is writable for `bytes` bytes.
pub(crate) unsafe fn memcpy_dtoh(
    dst: *mut c_void,
    src: sys::CUdeviceptr,
    bytes: usize,
) -> Result<(), Failed> {
    // SAFETY: the caller's guarantees.
    result("cuMemcpyDtoH", unsafe { sys::cuMemcpyDtoH_v2(dst, src, bytes) })
}

/// `cuMemcpyDtoD`: `bytes` bytes from `src` to `dst`, on the current context's legacy default
/// stream (the call may return before the copy has run).
///
/// # Safety
/// Both ranges lie in live allocations that stay allocated until the copy has run, ordered
/// with other streams' uses.
pub(crate) unsafe fn memcpy_dtod(
    dst: sys::CUdeviceptr,
    src: sys::CUdeviceptr,
    bytes: usize,
) -> Result<(), Failed> {
    // SAFETY: the caller's guarantees.
    result("cuMemcpyDtoD", unsafe { sys::cuMemcpyDtoD_v2(dst, src, bytes) })
}

/// `cuMemcpyPeer`: `bytes` bytes from `src` in `src_ctx` to `dst` in `dst_ctx`.
///
/// # Safety
/// As [`memcpy_dtod`]; both contexts are live and each range lies in its context.
pub(crate) unsafe fn memcpy_peer(
    dst: sys::CUdeviceptr,
    dst_ctx: sys::CUcontext,
    src: sys::CUdeviceptr,
    src_ctx: sys::CUcontext,
    bytes: usize,
) -> Result<(), Failed> {
    // SAFETY: the caller's guarantees.
    result("cuMemcpyPeer", unsafe {
        sys::cuMemcpyPeer(dst, dst_ctx, src, src_ctx, bytes)
    })
}

/// `cuMemcpyPeerAsync`: [`memcpy_peer`] queued on `stream`.
///
/// # Safety
/// As [`memcpy_peer`]; `stream` is live.
pub(crate) unsafe fn memcpy_peer_async(
    dst: sys::CUdeviceptr,
    dst_ctx: sys::CUcontext,
    src: sys::CUdeviceptr,
    src_ctx: sys::CUcontext,
    bytes: usize,
    stream: sys::CUstream,
) -> Result<(), Failed> {
    // SAFETY: the caller's guarantees.
    result("cuMemcpyPeerAsync", unsafe {
        sys::cuMemcpyPeerAsync(dst, dst_ctx, src, src_ctx, bytes, stream)
    })
}

/// `cuMemcpy2D`: the copy `p` describes, complete when this returns (as far as host memory
/// goes).
///
/// # Safety
/// Every end `p` names holds the whole rectangle, live and ordered after its other uses until
/// the copy has run.
pub(crate) unsafe fn memcpy_2d(p: &sys::CUDA_MEMCPY2D) -> Result<(), Failed> {
    // SAFETY: the caller's guarantees.
    result("cuMemcpy2D", unsafe { sys::cuMemcpy2D_v2(p) })
}

/// `cuMemcpy2DUnaligned`: [`memcpy_2d`] for pitches and offsets the aligned copy refuses.
///
/// # Safety
/// As [`memcpy_2d`].
pub(crate) unsafe fn memcpy_2d_unaligned(p: &sys::CUDA_MEMCPY2D) -> Result<(), Failed> {
    // SAFETY: the caller's guarantees.
    result("cuMemcpy2DUnaligned", unsafe { sys::cuMemcpy2DUnaligned_v2(p) })
}

/// `cuMemcpy2DAsync`: [`memcpy_2d`] queued on `stream`.
///
/// # Safety
/// As [`memcpy_2d`], until the queued copy has run; `stream` is live.
pub(crate) unsafe fn memcpy_2d_async(p: &sys::CUDA_MEMCPY2D, stream: sys::CUstream) -> Result<(), Failed> {
    // SAFETY: the caller's guarantees.
    result("cuMemcpy2DAsync", unsafe { sys::cuMemcpy2DAsync_v2(p, stream) })
}

/// `cuMemcpy3D`: the copy `p` describes.
///
/// # Safety
/// Every end `p` names holds the whole box, live and ordered after its other uses until the
/// copy has run.
pub(crate) unsafe fn memcpy_3d(p: &sys::CUDA_MEMCPY3D) -> Result<(), Failed> {
    // SAFETY: the caller's guarantees.
    result("cuMemcpy3D", unsafe { sys::cuMemcpy3D_v2(p) })
}

/// `cuMemcpy3DAsync`: [`memcpy_3d`] queued on `stream`.
///
/// # Safety
/// As [`memcpy_3d`], until the queued copy has run; `stream` is live.
pub(crate) unsafe fn memcpy_3d_async(p: &sys::CUDA_MEMCPY3D, stream: sys::CUstream) -> Result<(), Failed> {
    // SAFETY: the caller's guarantees.
    result("cuMemcpy3DAsync", unsafe { sys::cuMemcpy3DAsync_v2(p, stream) })
}

/// `cuMemcpy3DPeer`: the copy between two contexts `p` describes.
///
/// # Safety
/// As [`memcpy_3d`]; both contexts `p` names are live.
pub(crate) unsafe fn memcpy_3d_peer(p: &sys::CUDA_MEMCPY3D_PEER) -> Result<(), Failed> {
    // SAFETY: the caller's guarantees.
    result("cuMemcpy3DPeer", unsafe { sys::cuMemcpy3DPeer(p) })
}

/// `cuMemcpy3DPeerAsync`: [`memcpy_3d_peer`] queued on `stream`.
///
/// # Safety
/// As [`memcpy_3d_peer`], until the queued copy has run; `stream` is live.
pub(crate) unsafe fn memcpy_3d_peer_async(
    p: &sys::CUDA_MEMCPY3D_PEER,
    stream: sys::CUstream,
) -> Result<(), Failed> {
    // SAFETY: the caller's guarantees.
    result("cuMemcpy3DPeerAsync", unsafe {
        sys::cuMemcpy3DPeerAsync(p, stream)
    })
}

/// The memsets of one width: `$name` (`count` values at `dst`, on the current context's
/// legacy default stream), `$name_async` (queued on `stream`), and the 2D ones (`width` values
/// in each of `height` rows, `pitch` bytes apart).
macro_rules! memsets {
    ($($v:ty:
        $name:ident = $call:ident($cname:literal),
        $name_async:ident = $call_async:ident($cname_async:literal),
        $name2d:ident = $call2d:ident($cname2d:literal),
        $name2d_async:ident = $call2d_async:ident($cname2d_async:literal);
    )*) => {$(
        #[doc = concat!("`", $cname, "`: the first `count` values at `dst` set to `value`.")]
        ///
        /// # Safety
        /// `count` values lie in a live allocation at `dst`, kept until the memset has run and
        /// ordered with other streams' uses.
        #[inline]
        pub(crate) unsafe fn $name(dst: sys::CUdeviceptr, value: $v, count: usize) -> Result<(), Failed> {
            // SAFETY: the caller's guarantees.
            result($cname, unsafe { sys::$call(dst, value, count) })
        }

        #[doc = concat!("`", $cname_async, "`: [`", stringify!($name), "`] queued on `stream`.")]
        ///
        /// # Safety
        #[doc = concat!("As [`", stringify!($name), "`]; `stream` is live.")]
        #[inline]
        pub(crate) unsafe fn $name_async(
            dst: sys::CUdeviceptr,
            value: $v,
            count: usize,
            stream: sys::CUstream,
        ) -> Result<(), Failed> {
            // SAFETY: the caller's guarantees.
            result($cname_async, unsafe { sys::$call_async(dst, value, count, stream) })
        }

        #[doc = concat!("`", $cname2d, "`: `width` values in each of `height` rows at `dst`, `pitch` bytes")]
        /// apart, set to `value`.
        ///
        /// # Safety
        #[doc = concat!("As [`", stringify!($name), "`], for every row.")]
        #[inline]
        pub(crate) unsafe fn $name2d(
            dst: sys::CUdeviceptr,
            pitch: usize,
            value: $v,
            width: usize,
            height: usize,
        ) -> Result<(), Failed> {
            // SAFETY: the caller's guarantees.
            result($cname2d, unsafe { sys::$call2d(dst, pitch, value, width, height) })
        }

        #[doc = concat!("`", $cname2d_async, "`: [`", stringify!($name2d), "`] queued on `stream`.")]
        ///
        /// # Safety
        #[doc = concat!("As [`", stringify!($name2d), "`]; `stream` is live.")]
        #[inline]
        pub(crate) unsafe fn $name2d_async(
            dst: sys::CUdeviceptr,
            pitch: usize,
            value: $v,
            width: usize,
            height: usize,
            stream: sys::CUstream,
        ) -> Result<(), Failed> {
            // SAFETY: the caller's guarantees.
            result($cname2d_async, unsafe {
                sys::$call2d_async(dst, pitch, value, width, height, stream)
            })
        }
    )*};
}

memsets! {
    u8:
        memset_d8 = cuMemsetD8_v2("cuMemsetD8"),
        memset_d8_async = cuMemsetD8Async("cuMemsetD8Async"),
        memset_d2d8 = cuMemsetD2D8_v2("cuMemsetD2D8"),
        memset_d2d8_async = cuMemsetD2D8Async("cuMemsetD2D8Async");
    u16:
        memset_d16 = cuMemsetD16_v2("cuMemsetD16"),
        memset_d16_async = cuMemsetD16Async("cuMemsetD16Async"),
        memset_d2d16 = cuMemsetD2D16_v2("cuMemsetD2D16"),
        memset_d2d16_async = cuMemsetD2D16Async("cuMemsetD2D16Async");
    u32:
        memset_d32 = cuMemsetD32_v2("cuMemsetD32"),
        memset_d32_async = cuMemsetD32Async("cuMemsetD32Async"),
        memset_d2d32 = cuMemsetD2D32_v2("cuMemsetD2D32"),
        memset_d2d32_async = cuMemsetD2D32Async("cuMemsetD2D32Async");
}
