//! [`Synchronized`]: the future of [`Stream::synchronize_future`] and [`Event::synchronize_future`].

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context as TaskContext, Poll};

use crate::driver::context::core::Context;
use crate::driver::future::signal::Signal;
use crate::driver::ordering::StreamInner;
use crate::driver::stream::{Event, EventFlags, Stream, StreamFlags};
use crate::driver::stream_ops::queue_host_fn;
use crate::error::Result;

/// Completes once the GPU work queued before it has finished, with that work's error if it
/// raised one: `synchronize()` as a future ([`Stream::synchronize_future`],
/// [`Event::synchronize_future`]).
///
/// Woken by a host function the driver runs after the work, on any executor (tokio, smol,
/// `futures::executor`, ...); no thread waits meanwhile. Dropping it stops waiting and
/// changes nothing on the GPU.
///
/// If the context fails before the work finishes (a kernel fault), the driver runs no more
/// host functions and the future stays pending: where a kernel may fault, bound the wait with
/// the runtime's timeout, then call a blocking method ([`Stream::synchronize`]), which reports
/// the fault.
#[must_use = "a future waits for nothing unless it is awaited"]
#[derive(Debug)]
pub struct Synchronized {
    signal: Arc<Signal>,
    /// Recorded right after the work: once the signal fired it has completed, and reading it
    /// reports the work's error without waiting.
    marker: Event,
    /// The stream an event's wait runs on, kept while the future lives (destroying it would
    /// not cancel the wait, but keeping it is simpler to reason about).
    _helper: Option<Stream>,
}

impl Synchronized {
    /// The future of the work queued on `stream` (of `ctx`) so far.
    fn after(stream: &StreamInner, ctx: &Context, helper: Option<Stream>) -> Result<Synchronized> {
        let marker = Event::with_flags(ctx, EventFlags::DISABLE_TIMING)?;
        stream.refuse_foreign_capture()?;
        marker.record_raw(stream.raw)?;
        let signal = Signal::new();
        let fire = signal.clone();
        // `record_raw` bound the context. The host function only wakes the task (no CUDA).
        queue_host_fn(stream, Box::new(move || fire.fire()))?;
        Ok(Synchronized {
            signal,
            marker,
            _helper: helper,
        })
    }
}

impl Future for Synchronized {
    type Output = Result<()>;

    fn poll(self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Result<()>> {
        if self.signal.poll_fired(cx).is_pending() {
            return Poll::Pending;
        }
        // The marker has completed (it precedes the host function on the stream): this
        // returns at once, with the error of the work before it if there was one.
        Poll::Ready(self.marker.synchronize())
    }
}

impl Drop for Synchronized {
    fn drop(&mut self) {
        self.signal.forget_waker();
    }
}

impl Stream {
    /// A future that completes once everything queued on the stream so far has finished:
    /// [`synchronize`](Self::synchronize) without blocking a thread, for async programs.
    /// Work queued after this call is not waited for.
    ///
    /// ```no_run
    /// # async fn f() -> gpu_runtime::Result<()> {
    /// use gpu_runtime::{driver::memset_d32_async, Context, Stream};
    /// let ctx = Context::default()?;
    /// let stream = Stream::new(&ctx)?;
    /// let mut x = ctx.alloc::<u32>(1 << 20)?;
    /// memset_d32_async(&mut x, 7, 1 << 20, &stream)?;
    /// stream.synchronize_future()?.await?; // other tasks run meanwhile
    /// # Ok(()) }
    /// ```
    pub fn synchronize_future(&self) -> Result<Synchronized> {
        Synchronized::after(self.inner(), self.context(), None)
    }

    // The name this had before `_async` was kept for PyCUDA's "queued on a stream" alone:
    // code written against it still builds, and no warning is given (a deprecation would fail
    // the builds that deny warnings).
    #[doc(hidden)]
    pub fn synchronize_async(&self) -> Result<Synchronized> {
        self.synchronize_future()
    }
}

impl Event {
    /// A future that completes once the event has completed (the work before its last
    /// [`record`](Self::record)): [`synchronize`](Self::synchronize) without blocking a
    /// thread. An event never recorded completes at once, as in `cuEventSynchronize`.
    ///
    /// The wait runs on a stream of its own, created for it (a few microseconds).
    pub fn synchronize_future(&self) -> Result<Synchronized> {
        let helper = Stream::with_flags(self.context(), StreamFlags::NonBlocking)?;
        helper.wait_for_event(self)?;
        let inner = helper.inner().clone();
        Synchronized::after(&inner, self.context(), Some(helper))
    }

    // The name this had before `_async` was kept for PyCUDA's "queued on a stream" alone:
    // code written against it still builds, and no warning is given (a deprecation would fail
    // the builds that deny warnings).
    #[doc(hidden)]
    pub fn synchronize_async(&self) -> Result<Synchronized> {
        self.synchronize_future()
    }
}
