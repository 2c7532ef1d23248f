//! Streams by handle: creation, waits, and stream capture.

use cudarc::driver::sys;

use super::failed::{out, result, Failed};

/// `cuStreamCreate` in the current context (the driver refuses when there is none, and checks
/// the flags: `CUstream_flags` bits).
pub(crate) fn stream_create(flags: u32) -> Result<sys::CUstream, Failed> {
    // SAFETY: valid out-pointer; the driver checks the context and the flags.
    out("cuStreamCreate", std::ptr::null_mut(), |stream| unsafe {
        sys::cuStreamCreate(stream, flags)
    })
}

/// `cuStreamCreateWithPriority` in the current context (the driver clamps the priority to the
/// context's range, and checks the flags).
pub(crate) fn stream_create_with_priority(flags: u32, priority: i32) -> Result<sys::CUstream, Failed> {
    // SAFETY: valid out-pointer; the driver checks the context and the flags.
    out(
        "cuStreamCreateWithPriority",
        std::ptr::null_mut(),
        |stream| unsafe { sys::cuStreamCreateWithPriority(stream, flags, priority) },
    )
}

/// `cuStreamGetFlags`: the flags `stream` was created with.
///
/// # Safety
/// `stream` is live.
pub(crate) unsafe fn stream_get_flags(stream: sys::CUstream) -> Result<u32, Failed> {
    // SAFETY: the caller's guarantee; valid out-pointer.
    out("cuStreamGetFlags", 0, |flags| unsafe {
        sys::cuStreamGetFlags(stream, flags)
    })
}

/// `cuStreamGetPriority`: the priority `stream` was created with.
///
/// # Safety
/// `stream` is live.
pub(crate) unsafe fn stream_get_priority(stream: sys::CUstream) -> Result<i32, Failed> {
    // SAFETY: the caller's guarantee; valid out-pointer.
    out("cuStreamGetPriority", 0, |priority| unsafe {
        sys::cuStreamGetPriority(stream, priority)
    })
}

/// `cuStreamQuery`: whether the work queued on `stream` has finished
/// (`CUDA_ERROR_NOT_READY` is `false`, not an error).
///
/// # Safety
/// `stream` is live (or null, the current context's legacy default stream).
pub(crate) unsafe fn stream_query(stream: sys::CUstream) -> Result<bool, Failed> {
    // SAFETY: the caller's guarantee.
    match unsafe { sys::cuStreamQuery(stream) } {
        sys::CUresult::CUDA_ERROR_NOT_READY => Ok(false),
        code => result("cuStreamQuery", code).map(|()| true),
    }
}

/// `cuStreamDestroy`. Work still queued on the stream completes.
///
/// # Safety
/// `stream` is live, made by `cuStreamCreate`, and not used after this call.
pub(crate) unsafe fn stream_destroy(stream: sys::CUstream) -> Result<(), Failed> {
    // SAFETY: the caller's guarantee.
    result("cuStreamDestroy", unsafe { sys::cuStreamDestroy_v2(stream) })
}

/// `cuStreamSynchronize`: waits on the host for the work queued on `stream`.
///
/// # Safety
/// `stream` is live (or null, the current context's legacy default stream).
pub(crate) unsafe fn stream_synchronize(stream: sys::CUstream) -> Result<(), Failed> {
    // SAFETY: the caller's guarantee.
    result("cuStreamSynchronize", unsafe { sys::cuStreamSynchronize(stream) })
}

/// `cuLaunchHostFunc`: the driver calls `f(data)` on a thread of its own once the work queued
/// on `stream` before it has finished; work queued after it waits for `f` to return.
///
/// # Safety
/// `stream` is live (or null, the current context's legacy default stream); `f` may be called
/// once with `data`, on another thread, must not call CUDA, and must not unwind. If the
/// context fails first, `f` is never called.
pub(crate) unsafe fn launch_host_func(
    stream: sys::CUstream,
    f: unsafe extern "C" fn(*mut std::ffi::c_void),
    data: *mut std::ffi::c_void,
) -> Result<(), Failed> {
    // SAFETY: the caller's guarantee.
    result("cuLaunchHostFunc", unsafe {
        sys::cuLaunchHostFunc(stream, Some(f), data)
    })
}

/// `cuStreamWaitEvent`: work queued on `stream` from now on waits for `event`.
///
/// # Safety
/// `stream` and `event` are live (the event may be of another context).
#[inline]
pub(crate) unsafe fn stream_wait_event(
    stream: sys::CUstream,
    event: sys::CUevent,
    flags: u32,
) -> Result<(), Failed> {
    // SAFETY: the caller's guarantee; the driver checks the flags.
    result("cuStreamWaitEvent", unsafe {
        sys::cuStreamWaitEvent(stream, event, flags)
    })
}

/// `cuStreamGetCtx`: the context of a stream.
///
/// # Safety
/// `stream` is live (or null or the per-thread handle, meaning the current context's).
// Only DLPack's imports meet streams of unknown contexts.
#[cfg(feature = "dlpack")]
pub(crate) unsafe fn stream_get_ctx(stream: sys::CUstream) -> Result<sys::CUcontext, Failed> {
    // SAFETY: the caller's guarantee; valid out-pointer.
    out("cuStreamGetCtx", std::ptr::null_mut(), |ctx| unsafe {
        sys::cuStreamGetCtx(stream, ctx)
    })
}

/// `cuStreamBeginCapture`.
///
/// # Safety
/// `stream` is live and not capturing.
pub(crate) unsafe fn stream_begin_capture(
    stream: sys::CUstream,
    mode: sys::CUstreamCaptureMode,
) -> Result<(), Failed> {
    // SAFETY: the caller's guarantee.
    result("cuStreamBeginCapture", unsafe {
        sys::cuStreamBeginCapture_v2(stream, mode)
    })
}

/// `cuStreamEndCapture`: the graph captured, and the call's result. The driver may hand back
/// a graph on failure too (an invalidated capture's), which the caller then owns and destroys;
/// null when there is none.
///
/// # Safety
/// `stream` is live and capturing.
pub(crate) unsafe fn stream_end_capture(stream: sys::CUstream) -> (sys::CUgraph, Result<(), Failed>) {
    let mut graph = std::ptr::null_mut();
    // SAFETY: the caller's guarantee; valid out-pointer.
    let code = unsafe { sys::cuStreamEndCapture(stream, &mut graph) };
    (graph, result("cuStreamEndCapture", code))
}

/// What `cuStreamGetCaptureInfo` says of a stream.
pub(crate) struct CaptureInfo {
    pub(crate) status: sys::CUstreamCaptureStatus,
    /// The nodes the next captured work will depend on: `count` handles, valid until the next
    /// call on the stream (null when there are none).
    pub(crate) dependencies: *const sys::CUgraphNode,
    pub(crate) count: usize,
}

/// `cuStreamGetCaptureInfo_v3` (CUDA 12.3).
///
/// # Safety
/// `stream` is live, and the driver has the symbol (cudarc panics on a missing one: check the
/// driver's version first).
pub(crate) unsafe fn stream_get_capture_info(stream: sys::CUstream) -> Result<CaptureInfo, Failed> {
    let mut status = sys::CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE;
    let (mut id, mut graph, mut deps, mut edges, mut count) = (
        0,
        std::ptr::null_mut(),
        std::ptr::null(),
        std::ptr::null(),
        0usize,
    );
    // SAFETY: the caller's guarantees; valid out-pointers.
    result("cuStreamGetCaptureInfo", unsafe {
        sys::cuStreamGetCaptureInfo_v3(
            stream,
            &mut status,
            &mut id,
            &mut graph,
            &mut deps,
            &mut edges,
            &mut count,
        )
    })?;
    Ok(CaptureInfo {
        status,
        dependencies: deps,
        count,
    })
}

#[cfg_attr(loom, allow(dead_code))]
/// `cuStreamIsCapturing`: whether `stream` is being captured into a graph (by anyone).
///
/// # Safety
/// `stream` is live.
pub(crate) unsafe fn stream_is_capturing(
    stream: sys::CUstream,
) -> Result<sys::CUstreamCaptureStatus, Failed> {
    // SAFETY: the caller's guarantee; valid out-pointer.
    out(
        "cuStreamIsCapturing",
        sys::CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE,
        |status| unsafe { sys::cuStreamIsCapturing(stream, status) },
    )
}

/// `cuStreamQuery` on a stream being captured, made only to invalidate that capture: the
/// driver refuses the query (`CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED`) and marks the capture
/// invalidated, in every capture mode, so its `cuStreamEndCapture` fails and gives no graph
/// (measured on an H200, CUDA 13.0 driver). The refusal is the expected answer, so it is not
/// returned.
///
/// # Safety
/// `stream` is live.
#[cfg_attr(loom, allow(dead_code))]
pub(crate) unsafe fn stream_invalidate_capture(stream: sys::CUstream) {
    // SAFETY: the caller's guarantee.
    let _ = unsafe { sys::cuStreamQuery(stream) };
}

/// `cuStreamAttachMemAsync`: attaches `bytes` bytes of managed memory at `ptr` (0: the whole
/// allocation) to `stream`, queued on it.
///
/// # Safety
/// The range lies in a live managed allocation that stays allocated until the call has run;
/// `stream` is live (or null, the legacy default stream).
// Managed memory is the `gpuarray` feature's (`ManagedArray`).
#[cfg(feature = "gpuarray")]
pub(crate) unsafe fn stream_attach_mem_async(
    stream: sys::CUstream,
    ptr: sys::CUdeviceptr,
    bytes: usize,
    flags: u32,
) -> Result<(), Failed> {
    // SAFETY: the caller's guarantees; the driver checks the flags.
    result("cuStreamAttachMemAsync", unsafe {
        sys::cuStreamAttachMemAsync(stream, ptr, bytes, flags)
    })
}
