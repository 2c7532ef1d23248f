//! cudarc's `DeviceSlice` / `DevicePtr` / `DevicePtrMut` for this crate's memory, so that
//! cudarc's library wrappers (cuBLAS, cuBLASLt, cuRAND, cuFFT, NCCL) take it.
//!
//! A wrapper calls `device_ptr(&stream)` (a read) or `device_ptr_mut(&stream)` (a write, only
//! through `&mut`) for each argument before it queues its call on `stream`, and drops the
//! returned `SyncOnDrop` after. Here that is a use of the memory's stream record:
//!
//! - `stream` is one ordering knows (the legacy default stream, or one passed through
//!   `Stream::to_cudarc` / `Stream::from_cudarc` (known while cudarc holds a handle to it): `read_on` / `write_on` on
//!   it, exactly as a launch of ours on that stream; the `SyncOnDrop` does nothing.
//! - any other stream: the record cannot name it (it would hold a handle it does not own, and
//!   grow an entry per call), so the host waits instead: for the last write (a read) or every
//!   use (a write) before the call is queued, and for `stream` once it is queued (the
//!   `SyncOnDrop` synchronises it). Correct, and two host waits per call: hand cudarc
//!   `stream.to_cudarc()?` to avoid them.
//!
//! Memory of [`DeviceView::from_raw_parts`] is ordered by its owner, as everywhere.

use std::sync::Arc;

use cudarc::driver::{sys, CudaStream, DriverError, SyncOnDrop};

use crate::driver::context::core::Context;
use crate::driver::memory::view::{DeviceView, DeviceViewMut};
use crate::driver::ordering::StreamUses;

use super::state::{state, state_if_made};

/// cudarc's default stream of `ctx`'s device: what `DeviceSlice::stream` answers for this
/// crate's memory (it has no stream of its own; cudarc's library wrappers do not ask).
///
/// # Panics
/// If cudarc cannot open the device's primary context, which it does without fail wherever
/// this crate has a context on the device.
pub(crate) fn stream_of(ctx: &Context) -> &Arc<CudaStream> {
    match state(ctx) {
        Ok(st) => &st.legacy,
        Err(e) => panic!(
            "cudarc cannot open the primary context of {:?}: {e}",
            ctx.device()
        ),
    }
}

/// The pointer and ordering of a read by a cudarc call on `stream` (see the module docs).
pub(crate) fn device_ptr_of<'a, T>(
    v: DeviceView<'a, T>,
    stream: &'a CudaStream,
) -> (sys::CUdeviceptr, SyncOnDrop<'a>) {
    let sync = match v.uses() {
        Some(uses) => order(uses, v.context(), stream, false),
        None => SyncOnDrop::Record(None),
    };
    (v.device_ptr(), sync)
}

/// The pointer and ordering of a write by a cudarc call on `stream` (see the module docs).
pub(crate) fn device_ptr_mut_of<'a, T>(
    v: DeviceViewMut<'a, T>,
    stream: &'a CudaStream,
) -> (sys::CUdeviceptr, SyncOnDrop<'a>) {
    let sync = match v.uses() {
        Some(uses) => order(uses, v.context(), stream, true),
        None => SyncOnDrop::Record(None),
    };
    (v.device_ptr(), sync)
}

fn order<'a>(uses: &StreamUses, ctx: &Context, stream: &'a CudaStream, write: bool) -> SyncOnDrop<'a> {
    if let Some(inner) = state_if_made(ctx).and_then(|st| st.known(ctx, stream)) {
        let ordered = if write {
            uses.write_on(&inner)
        } else {
            uses.read_on(&inner)
        };
        if ordered.is_ok() {
            return SyncOnDrop::Record(None);
        }
        // A driver error while ordering: fall back to the host's waits below.
    }
    let waited = if write {
        uses.host_write()
    } else {
        uses.host_read()
    };
    if waited.is_err() {
        // Only a failed context fails a host wait; its work never runs on. cudarc's call
        // reports it too: noted in cudarc's error state all the same.
        stream
            .context()
            .record_err::<()>(Err(DriverError(sys::CUresult::CUDA_ERROR_ILLEGAL_STATE)));
    }
    SyncOnDrop::sync_stream(stream)
}

/// Implements cudarc's `DeviceSlice` and `DevicePtr` (and with `mut`, `DevicePtrMut`) for a
/// type of this crate's memory through its `DeviceRead` / `DeviceWrite`.
macro_rules! cudarc_memory {
    ([$($g:tt)*] $ty:ty, $elem:ty) => {
        impl<$($g)*> ::cudarc::driver::DeviceSlice<$elem> for $ty {
            fn len(&self) -> usize {
                $crate::driver::memory::view::DeviceRead::<$elem>::device_view(self).len()
            }
            fn stream(&self) -> &::std::sync::Arc<::cudarc::driver::CudaStream> {
                $crate::driver::cudarc_interop::ptr::stream_of($crate::driver::memory::view::DeviceRead::<$elem>::device_view(self).context())
            }
        }
        impl<$($g)*> ::cudarc::driver::DevicePtr<$elem> for $ty {
            fn device_ptr<'a>(
                &'a self,
                stream: &'a ::cudarc::driver::CudaStream,
            ) -> (::cudarc::driver::sys::CUdeviceptr, ::cudarc::driver::SyncOnDrop<'a>) {
                $crate::driver::cudarc_interop::ptr::device_ptr_of($crate::driver::memory::view::DeviceRead::<$elem>::device_view(self), stream)
            }
        }
    };
    ([$($g:tt)*] $ty:ty, $elem:ty, mut) => {
        $crate::driver::cudarc_interop::ptr::cudarc_memory!([$($g)*] $ty, $elem);
        $crate::driver::cudarc_interop::ptr::cudarc_memory!(@mut [$($g)*] $ty, $elem);
    };
    (@mut [$($g:tt)*] $ty:ty, $elem:ty) => {
        impl<$($g)*> ::cudarc::driver::DevicePtrMut<$elem> for $ty {
            fn device_ptr_mut<'a>(
                &'a mut self,
                stream: &'a ::cudarc::driver::CudaStream,
            ) -> (::cudarc::driver::sys::CUdeviceptr, ::cudarc::driver::SyncOnDrop<'a>) {
                $crate::driver::cudarc_interop::ptr::device_ptr_mut_of(
                    $crate::driver::memory::view::DeviceWrite::<$elem>::device_view_mut(self),
                    stream,
                )
            }
        }
    };
}
pub(crate) use cudarc_memory;

use crate::driver::memory::buffer::DeviceBuffer;
use crate::types::repr::DeviceRepr;

cudarc_memory!([T: DeviceRepr] DeviceBuffer<T>, T, mut);
cudarc_memory!(['v, T] DeviceView<'v, T>, T);
cudarc_memory!(['v, T] DeviceViewMut<'v, T>, T, mut);
