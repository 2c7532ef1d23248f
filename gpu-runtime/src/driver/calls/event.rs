//! Events by handle: creation, records, waits and queries.

use cudarc::driver::sys;

use super::failed::{out, result, Failed};

/// `cuEventCreate` in the current context (the driver refuses when there is none, and checks
/// the flags: `CUevent_flags` bits, or-ed).
pub(crate) fn event_create(flags: u32) -> Result<sys::CUevent, Failed> {
    // SAFETY: valid out-pointer; the driver checks the context and the flags.
    out("cuEventCreate", std::ptr::null_mut(), |event| unsafe {
        sys::cuEventCreate(event, flags)
    })
}

/// `cuEventDestroy`. A wait or record still queued on the event completes.
///
/// # Safety
/// `event` is live and not used after this call.
pub(crate) unsafe fn event_destroy(event: sys::CUevent) -> Result<(), Failed> {
    // SAFETY: the caller's guarantee.
    result("cuEventDestroy", unsafe { sys::cuEventDestroy_v2(event) })
}

/// `cuEventRecord`: the event completes when the work queued on `stream` so far has.
///
/// # Safety
/// `event` and `stream` are live, of the current context.
#[inline]
pub(crate) unsafe fn event_record(event: sys::CUevent, stream: sys::CUstream) -> Result<(), Failed> {
    // SAFETY: the caller's guarantee.
    result("cuEventRecord", unsafe { sys::cuEventRecord(event, stream) })
}

/// `cuEventRecordWithFlags`.
///
/// # Safety
/// As [`event_record`].
pub(crate) unsafe fn event_record_with_flags(
    event: sys::CUevent,
    stream: sys::CUstream,
    flags: sys::CUevent_record_flags,
) -> Result<(), Failed> {
    // SAFETY: the caller's guarantee; the driver checks the flags.
    result("cuEventRecordWithFlags", unsafe {
        sys::cuEventRecordWithFlags(event, stream, flags as u32)
    })
}

/// `cuEventSynchronize`: waits on the host until the event has completed.
///
/// # Safety
/// `event` is live.
pub(crate) unsafe fn event_synchronize(event: sys::CUevent) -> Result<(), Failed> {
    // SAFETY: the caller's guarantee.
    result("cuEventSynchronize", unsafe { sys::cuEventSynchronize(event) })
}

/// `cuEventQuery`: whether the event has completed (`CUDA_ERROR_NOT_READY` is `false`, not an
/// error).
///
/// # Safety
/// `event` is live.
#[inline]
pub(crate) unsafe fn event_query(event: sys::CUevent) -> Result<bool, Failed> {
    // SAFETY: the caller's guarantee.
    match unsafe { sys::cuEventQuery(event) } {
        sys::CUresult::CUDA_ERROR_NOT_READY => Ok(false),
        code => result("cuEventQuery", code).map(|()| true),
    }
}

/// `cuEventElapsedTime`: milliseconds from `start` to `end`, both completed and made with
/// timing.
///
/// # Safety
/// `start` and `end` are live.
pub(crate) unsafe fn event_elapsed_time(start: sys::CUevent, end: sys::CUevent) -> Result<f32, Failed> {
    // SAFETY: the caller's guarantee; valid out-pointer.
    out("cuEventElapsedTime", 0f32, |ms| unsafe {
        sys::cuEventElapsedTime_v2(ms, start, end)
    })
}
