//! The stream side of ordering: each stream's fence event and the context it belongs to.

use std::any::Any;
use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicPtr, Ordering};
use std::sync::{Arc, OnceLock, Weak};

use cudarc::driver::{sys, CudaStream};

use crate::driver::calls;
use crate::driver::current::bind_raw;
use crate::error::{BorderError, Result};

/// A stream as ordering sees it: its handle, the context it belongs to, and its fence.
///
/// Shared (`Arc`) by the [`Stream`](crate::Stream) and by every record that names it, so the
/// stream is destroyed only once no record can ask to wait for it. It holds its context weakly:
/// the context's own pools keep records, and a strong handle there would keep the context alive
/// forever. A context waits for all its work before it is destroyed, so a record naming a
/// stream of a context that is gone has nothing left to wait for.
pub(crate) struct StreamInner {
    pub(crate) raw: sys::CUstream,
    pub(crate) ctx_raw: sys::CUcontext,
    /// Its context, for liveness only (the context's state is opaque here).
    pub(super) ctx: Weak<dyn Any + Send + Sync>,
    /// Recorded on this stream whenever another stream must wait for the work queued on it.
    /// Null once destroyed (the legacy stream's, when its context goes).
    pub(super) fence: AtomicPtr<sys::CUevent_st>,
    /// Created with `CU_STREAM_DEFAULT`: ordered with the legacy default stream by the driver.
    pub(super) blocking: bool,
    /// The legacy default stream of its context (the null handle), which is not destroyed.
    pub(super) legacy: bool,
    /// Uses on this stream neither wait for other streams nor are waited for by them
    /// ([`Stream::order_manually`](crate::Stream::order_manually)).
    pub(super) manual: AtomicBool,
    /// In the model check, the queue that stands for this stream (`model.rs`).
    #[cfg(loom)]
    pub(super) lane: Option<Arc<super::lane::Lane>>,
    /// cudarc's handle to this stream (`driver::cudarc`): for a stream of ours, a borrowed
    /// wrapper made on the first `Stream::to_cudarc`; for a stream taken from cudarc
    /// (`borrowed`), cudarc's own, which keeps the stream alive.
    pub(crate) cudarc: OnceLock<Arc<CudaStream>>,
    /// The handle is another library's (cudarc's, `Stream::from_cudarc`, or a DLPack
    /// consumer's, [`StreamInner::foreign`]): never destroyed here.
    pub(crate) borrowed: bool,
    /// Another library holds a handle to this stream and may capture it (see
    /// [`StreamInner::exposed`]): set before that handle is handed out, never cleared.
    pub(crate) exposed: AtomicBool,
}

// SAFETY: stream and event handles may be used from any thread; the driver serialises work
// enqueued on them. The rest is immutable or atomic.
unsafe impl Send for StreamInner {}
// SAFETY: as above.
unsafe impl Sync for StreamInner {}

impl StreamInner {
    /// Wraps `raw`, a stream just created in the context `ctx_raw` (current on this thread),
    /// whose state `ctx` is, with a new fence event. On failure the stream is destroyed.
    pub(crate) fn new(
        raw: sys::CUstream,
        ctx_raw: sys::CUcontext,
        ctx: Weak<dyn Any + Send + Sync>,
        blocking: bool,
    ) -> Result<Arc<StreamInner>> {
        let fence = match new_event() {
            Ok(ev) => ev,
            Err(e) => {
                if !raw.is_null() {
                    // SAFETY: the stream was just created by the caller and is not shared.
                    let _ = unsafe { calls::stream_destroy(raw) };
                }
                return Err(e);
            }
        };
        Ok(Self::assemble(raw, ctx_raw, ctx, fence, blocking, None, false))
    }

    /// Wraps `stream`, a stream of cudarc's in the context `ctx_raw` (current on this thread),
    /// whose state `ctx` is, with a new fence event of ours. The stream stays cudarc's: this
    /// value holds cudarc's handle, so the stream lives at least as long, and never destroys it.
    pub(crate) fn borrowed(
        stream: Arc<CudaStream>,
        ctx_raw: sys::CUcontext,
        ctx: Weak<dyn Any + Send + Sync>,
        blocking: bool,
    ) -> Result<Arc<StreamInner>> {
        let fence = new_event()?;
        let raw = stream.cu_stream();
        Ok(Self::assemble(
            raw,
            ctx_raw,
            ctx,
            fence,
            blocking,
            Some(stream),
            true,
        ))
    }

    /// Wraps `raw`, a stream of another library known by its handle only (DLPack's consumer
    /// stream of an export), in the context `ctx_raw` (current on this thread), whose liveness
    /// `ctx` stands for, with a new fence event of ours. The handle is never destroyed here
    /// (`borrowed`); whoever makes this value keeps the stream live for as long as a record
    /// may name it.
    #[cfg(feature = "dlpack")]
    pub(crate) fn foreign(
        raw: sys::CUstream,
        ctx_raw: sys::CUcontext,
        ctx: Weak<dyn Any + Send + Sync>,
    ) -> Result<Arc<StreamInner>> {
        // SAFETY: the stream is live (the caller's promise).
        let blocking = match unsafe { calls::stream_get_flags(raw) } {
            Ok(flags) => flags & 1 == 0,
            // Unknown flags: taken as non-blocking, which only waits where it need not.
            _ => false,
        };
        let fence = new_event()?;
        Ok(Self::assemble(raw, ctx_raw, ctx, fence, blocking, None, true))
    }

    /// The legacy default stream of a context being made, with its fence (an event of that
    /// context); the stream itself is the driver's.
    pub(crate) fn legacy(
        ctx_raw: sys::CUcontext,
        ctx: Weak<dyn Any + Send + Sync>,
        fence: sys::CUevent,
    ) -> Arc<StreamInner> {
        Self::assemble(std::ptr::null_mut(), ctx_raw, ctx, fence, true, None, false)
    }

    /// The one place a stream of the driver's is put together; the constructors above say
    /// which. The null handle is the legacy default stream. `cudarc` is cudarc's own handle to
    /// a stream taken from cudarc: cudarc holds it, so it is exposed from the start (unless it
    /// is the legacy stream, which cannot be captured).
    fn assemble(
        raw: sys::CUstream,
        ctx_raw: sys::CUcontext,
        ctx: Weak<dyn Any + Send + Sync>,
        fence: sys::CUevent,
        blocking: bool,
        cudarc: Option<Arc<CudaStream>>,
        borrowed: bool,
    ) -> Arc<StreamInner> {
        let exposed = cudarc.is_some() && !raw.is_null();
        Arc::new(StreamInner {
            raw,
            ctx_raw,
            ctx,
            fence: AtomicPtr::new(fence),
            blocking,
            legacy: raw.is_null(),
            manual: AtomicBool::new(false),
            #[cfg(loom)]
            lane: None,
            cudarc: cudarc.map_or_else(OnceLock::new, OnceLock::from),
            borrowed,
            exposed: AtomicBool::new(exposed),
        })
    }

    /// Destroys the fence now; the context is closing and current (records of other contexts
    /// may still name this stream, but never touch its handles once the context is gone).
    pub(crate) fn release_fence(&self) {
        let fence = self.fence.swap(std::ptr::null_mut(), Ordering::AcqRel);
        if !fence.is_null() {
            // SAFETY: the fence was made for this stream and is destroyed once (swapped out).
            let _ = unsafe { calls::event_destroy(fence) };
        }
    }

    /// The fast key of this stream: its address, a multiple of 8.
    #[inline(always)]
    pub(super) fn key(&self) -> usize {
        self as *const StreamInner as usize
    }

    /// Another library may capture this stream into a graph: cudarc holds a handle to it
    /// (`Stream::to_cudarc`, or a stream of cudarc's through `Stream::from_cudarc`). The
    /// legacy default stream cannot be captured.
    #[cfg(not(loom))]
    #[inline(always)]
    pub(crate) fn exposed(&self) -> bool {
        self.exposed.load(Ordering::Acquire)
    }

    /// Marks the stream as held by another library (before its handle is handed out); the
    /// legacy default stream cannot be captured, so it is never marked.
    pub(crate) fn expose(&self) {
        if !self.legacy {
            self.exposed.store(true, Ordering::Release);
        }
    }

    /// The model check's stand-in: a lane another thread may capture.
    #[cfg(loom)]
    pub(crate) fn exposed(&self) -> bool {
        self.lane.as_ref().is_some_and(|l| l.capturable)
    }

    /// Refuses to queue work on this stream while another library captures it
    /// ([`BorderError::CapturedElsewhere`]): queued work there would run at each launch of that
    /// graph, not now, after the memory it uses may be freed or handed out again. The capture
    /// is invalidated too, so that nothing of ours that raced into it (queued between a check
    /// and the queueing, which the check after queueing finds) can ever run. One atomic load
    /// for a stream no other library holds; about 20 ns more for one it does.
    #[inline(always)]
    pub(crate) fn refuse_foreign_capture(&self) -> Result<()> {
        if self.exposed() {
            self.check_capture()
        } else {
            Ok(())
        }
    }

    /// Whether another library is capturing this exposed stream now (active or invalidated);
    /// an active capture is invalidated.
    #[cfg(not(loom))]
    #[cold]
    #[inline(never)]
    pub(crate) fn captured_elsewhere(&self) -> Result<bool> {
        use sys::CUstreamCaptureStatus as S;
        bind_raw(self.ctx_raw)?;
        // SAFETY: the stream is live (this value or cudarc's handle keeps it).
        let status = unsafe { calls::stream_is_capturing(self.raw) }?;
        if status == S::CU_STREAM_CAPTURE_STATUS_ACTIVE {
            // SAFETY: as above.
            unsafe { calls::stream_invalidate_capture(self.raw) };
        }
        Ok(status != S::CU_STREAM_CAPTURE_STATUS_NONE)
    }

    /// The model check's stand-in: its lanes say whether they are being captured.
    #[cfg(loom)]
    pub(crate) fn captured_elsewhere(&self) -> Result<bool> {
        Ok(self.lane.as_ref().is_some_and(|l| super::lane::invalidate(l)))
    }

    #[cold]
    #[inline(never)]
    fn check_capture(&self) -> Result<()> {
        if self.captured_elsewhere()? {
            return Err(BorderError::CapturedElsewhere {
                stream: self.raw as usize,
            }
            .into());
        }
        Ok(())
    }

    pub(crate) fn set_manual(&self) {
        self.manual.store(true, Ordering::Relaxed);
    }

    /// True when the driver already orders work queued on `self` after work queued on `other`
    /// (or the streams are one): the same stream, or the legacy default stream and a blocking
    /// stream of the same context.
    pub(super) fn ordered_after(&self, other: &StreamInner) -> bool {
        std::ptr::eq(self, other)
            || (self.ctx_raw == other.ctx_raw
                && ((self.legacy && other.blocking) || (other.legacy && self.blocking)))
    }

    /// Makes work queued on `self` from now on wait for the work queued on `other` so far.
    #[cfg(not(loom))]
    pub(crate) fn wait_for(&self, other: &StreamInner) -> Result<()> {
        if self.ordered_after(other) {
            return Ok(());
        }
        // An event recorded on a stream another library captures is a node of that capture,
        // and a stream waiting for it joins the capture: all later work there would be
        // captured, not run.
        other.refuse_foreign_capture()?;
        // A context waits for its work before it is destroyed: nothing is left to wait for.
        let Some(_alive) = other.ctx.upgrade() else {
            return Ok(());
        };
        let fence = other.fence.load(Ordering::Acquire);
        bind_raw(other.ctx_raw)?;
        // SAFETY: the event and the stream belong to `other`'s context, which is current and
        // kept alive by `_alive` (so the fence is not destroyed either).
        unsafe { calls::event_record(fence, other.raw) }?;
        bind_raw(self.ctx_raw)?;
        // SAFETY: both handles are live; a stream may wait for an event of another context.
        unsafe { calls::stream_wait_event(self.raw, fence, 0) }.map_err(Into::into)
    }

    /// The model check's `wait_for`: the same decision, on the model's queues.
    #[cfg(loom)]
    pub(crate) fn wait_for(&self, other: &StreamInner) -> Result<()> {
        if !self.ordered_after(other) {
            other.refuse_foreign_capture()?;
            if let (Some(me), Some(o)) = (&self.lane, &other.lane) {
                super::lane::wait(me, o);
            }
        }
        Ok(())
    }

    /// The model check's `host_wait`.
    #[cfg(loom)]
    pub(crate) fn host_wait(&self) -> Result<()> {
        self.refuse_foreign_capture()?;
        if let Some(me) = &self.lane {
            super::lane::host_wait(me);
        }
        Ok(())
    }

    /// Blocks the host until the work queued on this stream so far has finished.
    #[cfg(not(loom))]
    pub(crate) fn host_wait(&self) -> Result<()> {
        let Some(_alive) = self.ctx.upgrade() else {
            return Ok(());
        };
        // A stream being captured cannot be waited for (the driver refuses); the typed error
        // says why.
        self.refuse_foreign_capture()?;
        bind_raw(self.ctx_raw)?;
        // SAFETY: the stream is live (the null handle is the context's legacy stream, and the
        // context is current).
        unsafe { calls::stream_synchronize(self.raw) }.map_err(Into::into)
    }
}

impl Drop for StreamInner {
    fn drop(&mut self) {
        // Without its context the handles are gone with it (a context waits for its work and
        // frees its streams and events when destroyed); while it closes, it is still there.
        let alive = self.ctx.upgrade();
        if (alive.is_none() && !Closing::is(self.ctx_raw)) || bind_raw(self.ctx_raw).is_err() {
            return;
        }
        self.release_fence();
        // A wrapper handed to cudarc (`Stream::to_cudarc`) that cudarc still holds keeps the
        // handle: it is left to the context rather than destroyed under cudarc's feet.
        let lent = self.cudarc.get().is_some_and(|c| Arc::strong_count(c) > 1);
        if !self.legacy && !self.borrowed && !lent {
            // SAFETY: the stream was made for this value and is destroyed once; work queued on
            // it still completes.
            let _ = unsafe { calls::stream_destroy(self.raw) };
        }
    }
}

thread_local! {
    /// The context whose state this thread is dropping (see [`Closing`]).
    static CLOSING: Cell<sys::CUcontext> = const { Cell::new(std::ptr::null_mut()) };
}

/// Marks a context as closing on this thread while its state is dropped: it can no longer be
/// upgraded to, but it still exists, so streams and pool blocks dropped meanwhile free their
/// handles and memory (all its work has finished by then).
pub(crate) struct Closing(sys::CUcontext);

impl Closing {
    pub(crate) fn enter(ctx: sys::CUcontext) -> Closing {
        Closing(CLOSING.replace(ctx))
    }

    /// True while `ctx` is closing on this thread.
    pub(crate) fn is(ctx: sys::CUcontext) -> bool {
        !ctx.is_null() && CLOSING.get() == ctx
    }
}

impl Drop for Closing {
    fn drop(&mut self) {
        CLOSING.set(self.0);
    }
}

/// A new event without timing, in the current context.
pub(crate) fn new_event() -> Result<sys::CUevent> {
    // The caller made the context current.
    Ok(calls::event_create(
        sys::CUevent_flags::CU_EVENT_DISABLE_TIMING as u32,
    )?)
}
