//! [`BorderError`]: what another library hands over, or does to a stream of ours, that this
//! crate cannot order, refused with the reason.

/// A stream handle or stream state at the border with another library (cudarc) that stream
/// ordering cannot keep its promise on. Nothing was queued, or what was queued can never run.
/// Wrapped by [`Error::Border`](super::Error::Border).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BorderError {
    /// A per-thread default stream handle (`CU_STREAM_PER_THREAD`, cudarc's
    /// `per_thread_stream()`): it names a different queue in every thread that uses it, so one
    /// [`Stream`](crate::Stream) cannot stand for it.
    #[error("Stream::from_cudarc: the handle {handle:#x} is the per-thread default stream, a different queue in each thread, which one Stream cannot stand for; make a stream instead (cudarc's `CudaContext::new_stream`, or `Stream::new` and `Stream::to_cudarc`)")]
    PerThreadStream {
        /// The raw handle given.
        handle: usize,
    },
    /// A stream of ours that another library (cudarc's `begin_capture`) is capturing into a
    /// graph. Work queued now would not run now but whenever that graph is launched, after the
    /// memory it uses may have been freed or handed out again; so this crate queues nothing into
    /// a capture it did not begin. The capture was invalidated (its `end_capture` fails), so
    /// nothing of ours queued in it can ever run.
    #[error("the stream {stream:#x} is being captured into a graph by another library (e.g. cudarc's `begin_capture`); this crate queues no work into a capture it did not begin, so the capture was invalidated and its end_capture will fail: capture this crate's work with its own `Capture::begin` (launch::graph), or end the other capture before using the stream")]
    CapturedElsewhere {
        /// The raw handle of the stream.
        stream: usize,
    },
}
