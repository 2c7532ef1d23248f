//! The end of an In/Out call as a future ([`Staging::finish_future`], [`StagedCall`]): the
//! outputs' transfers are queued at once, a host function wakes the future when they (and the
//! kernel) have finished, and its `poll` then copies them into the caller's host arrays.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context as TaskContext, Poll};

use cudarc::driver::sys;

use crate::driver::calls::{event, memcpy};
use crate::driver::current::bind_raw;
use crate::driver::future::signal::Signal;
use crate::driver::stream_ops::queue_host_fn;
use crate::error::{Error, Result};
use crate::launch::staging::{ContextStaging, Staging};

/// The end of a staged In/Out call, awaited: completes once the kernel and the copies back
/// have finished and the outputs are in the caller's host arrays, with the first error the
/// GPU work raised. Made by [`Staging::finish_future`].
///
/// Dropping it before it completes waits (blocking) for the GPU work already queued, as a
/// failed call does, before giving the pinned staging memory back to its pool: the copies
/// write into that memory, never into the caller's arrays, so the arrays may be used at once
/// and nothing the GPU still uses is handed out again.
#[must_use = "a future waits for nothing unless it is awaited"]
pub struct StagedCall<'a> {
    /// `None` once completed.
    staging: Option<Staging<'a>>,
    st: &'a ContextStaging,
    signal: Arc<Signal>,
    /// Recorded after the copies back; its status is the GPU work's error.
    marker: sys::CUevent,
    /// What the queued work uses and the caller handed over (the staged device buffers),
    /// dropped after the work has finished.
    keep: Option<Box<dyn Send + 'a>>,
}

// SAFETY: the raw pointers a Staging holds are the host arrays it borrows for 'a (shared ones
// of a `DeviceRepr` type, which is Sync; mutable ones, which is Send) and the pinned blocks it
// owns: moving the future to another thread moves those borrows and that ownership, as moving
// `&'a [T]` and `&'a mut [T]` would. Driver handles (the stream, the event) may be used from
// any thread; every driver call first binds the context on the calling thread.
unsafe impl Send for StagedCall<'_> {}

impl std::fmt::Debug for StagedCall<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StagedCall")
            .field("completed", &self.staging.is_none())
            .finish()
    }
}

impl<'a> Staging<'a> {
    /// [`finish`](Self::finish) for async code: queues the outputs' transfer back to pinned
    /// memory after the kernel, and returns a future that completes once they arrived and
    /// were copied into the host arrays, without blocking a thread meanwhile. What the
    /// `#[kernel]` macro's `call_future` awaits.
    ///
    /// `keep` is what the queued work still uses and must outlive it (the staged device
    /// buffers `input`/`output`/`input_output` gave): the future drops it only after the work
    /// has finished, whether it completes or is dropped.
    pub fn finish_future(mut self, keep: impl Send + 'a) -> Result<StagedCall<'a>> {
        let st = self.st;
        let marker = self.take_events(1)?.pop().ok_or(Error::Internal {
            operation: "Staging::finish_future",
            broken: "no event was made for the call's end",
        })?;
        let signal = Signal::new();
        let queued = self.queue_downloads(marker, &signal);
        if let Err(e) = queued {
            // Waits for what was queued before the pinned blocks go back (Staging's drop).
            drop(self);
            give_back(st, marker);
            drop(keep);
            return Err(e);
        }
        Ok(StagedCall {
            staging: Some(self),
            st,
            signal,
            marker,
            keep: Some(Box::new(keep)),
        })
    }

    /// Queues each output's whole transfer to pinned memory, then the marker and the host
    /// function that fires `signal`.
    fn queue_downloads(&mut self, marker: sys::CUevent, signal: &Arc<Signal>) -> Result<()> {
        let stream = self.stream.raw;
        bind_raw(self.ctx.raw())?;
        self.queued = true;
        for job in &self.downloads {
            // SAFETY: pinned and device each hold job.bytes bytes (checked when staged); the
            // pinned block stays out of its pool until the stream has finished (the future's
            // completion or drop).
            unsafe { memcpy::memcpy_dtoh_async(job.pinned.cast(), job.device, job.bytes, stream) }?;
        }
        // SAFETY: the event and the stream are live.
        unsafe { event::event_record(marker, stream) }?;
        let fire = signal.clone();
        queue_host_fn(self.stream, Box::new(move || fire.fire()))
    }
}

/// Returns the marker to the context's spare events once its work has finished.
fn give_back(st: &ContextStaging, marker: sys::CUevent) {
    st.events.lock().push(marker);
}

impl Future for StagedCall<'_> {
    type Output = Result<()>;

    fn poll(self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Result<()>> {
        let this = self.get_mut();
        if this.staging.is_none() {
            return Poll::Ready(Err(Error::PolledAfterCompletion { future: "StagedCall" }));
        }
        if this.signal.poll_fired(cx).is_pending() {
            return Poll::Pending;
        }
        let Some(mut staging) = this.staging.take() else {
            return Poll::Pending;
        };
        let status = bind_raw(staging.ctx.raw()).and_then(|()| {
            // SAFETY: the event is live; it completed before the host function that fired the
            // signal ran, so this returns at once, with the GPU work's error if any.
            unsafe { event::event_synchronize(this.marker) }.map_err(Error::from)
        });
        if status.is_ok() {
            for job in &staging.downloads {
                // SAFETY: the copy into the pinned block has finished (the marker completed
                // after it); the host array is borrowed mutably by the Staging for 'a and
                // holds job.bytes bytes, as does the block.
                unsafe { std::ptr::copy_nonoverlapping(job.pinned, job.host, job.bytes) };
            }
        }
        // Everything queued has finished: the pinned blocks may go back without a wait.
        staging.queued = false;
        drop(staging);
        give_back(this.st, this.marker);
        this.keep = None;
        Poll::Ready(status)
    }
}

impl Drop for StagedCall<'_> {
    fn drop(&mut self) {
        self.signal.forget_waker();
        if let Some(staging) = self.staging.take() {
            // Cancelled: Staging's drop waits for the queued work before the pinned blocks
            // go back, after which the marker has completed too.
            drop(staging);
            give_back(self.st, self.marker);
        }
        // Only now (the field would drop after this function anyway; said for the reader).
        self.keep = None;
    }
}
