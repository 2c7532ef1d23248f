//! Streams (queues of GPU work) and events (markers in them, for ordering and timing).

use std::sync::Arc;
use std::time::Duration;

use cudarc::driver::sys;

use crate::driver::calls;
use crate::driver::context::core::Context;
use crate::driver::ordering::StreamInner;
use crate::error::{Error, FlagsError, Result};

/// A CUDA stream: work queued on one stream runs in order; work on different streams may overlap.
///
/// Created *blocking* (flag 0, as PyCUDA's `Stream()`), so it also orders with the legacy
/// default stream that [`prepared_call`](crate::driver::Function) and the synchronous copies use.
///
/// Work on two streams is ordered through the memory it uses: a launch or copy on one stream
/// of memory last written on another waits for that write, and a write waits for the reads
/// before it (the guide's [Safety model](crate::guide::threads_and_safety#safety-model)). Here the consumer's kernel waits for the
/// producer's, with no event in sight, while the host goes on.
///
/// ```no_run
/// use gpu_runtime::{kernel, Context, Event, Stream};
///
/// #[kernel(r#"
/// __global__ void add(float *x, float v, int n) {
///     int i = blockIdx.x * blockDim.x + threadIdx.x;
///     if (i < n) x[i] += v;
/// }"#)]
/// fn add(x: &mut [f32], v: f32, n: i32);
///
/// # fn main() -> gpu_runtime::Result<()> {
/// let ctx = Context::default()?;
/// let (producer, consumer) = (Stream::new(&ctx)?, Stream::new(&ctx)?);
/// let k = add::prepare(&ctx)?;
/// let mut x = ctx.alloc_zeros::<f32>(1024)?;
/// k.prepared_async_call(4, 256, &producer, &mut x, 1.0, 1024)?;
/// // `x` was last written on `producer`: this launch waits for that kernel first.
/// k.prepared_async_call(4, 256, &consumer, &mut x, 2.0, 1024)?;
/// // The copy back waits for the consumer's kernel the same way.
/// assert_eq!(x.to_vec()?, vec![3.0; 1024]);
/// # Ok(()) }
/// ```
///
/// Events order streams by hand ([`Event::record`], [`Stream::wait_for_event`]), e.g. for work
/// that shares no memory, and time GPU work. Dropping a stream with work queued is fine: the
/// work completes, and memory it uses stays allocated until it has.
pub struct Stream {
    inner: Arc<StreamInner>,
    ctx: Context,
}

impl std::fmt::Debug for Stream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Stream({:p})", self.inner.raw)
    }
}

/// Flags for [`Stream::with_flags`] (PyCUDA's `Stream(flags)`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum StreamFlags {
    /// Work on the stream is ordered with the legacy default stream (`CU_STREAM_DEFAULT`).
    #[default]
    Default,
    /// Work on the stream may run concurrently with the legacy default stream
    /// (`CU_STREAM_NON_BLOCKING`).
    NonBlocking,
}

impl StreamFlags {
    /// The raw `CU_STREAM_*` bits.
    pub const fn bits(self) -> u32 {
        match self {
            StreamFlags::Default => 0,
            StreamFlags::NonBlocking => 1,
        }
    }
}

/// Flags for [`Event::with_flags`] (PyCUDA's `event_flags`), combined with `|`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct EventFlags(u32);

impl EventFlags {
    /// An event that records timing (`CU_EVENT_DEFAULT`).
    pub const DEFAULT: EventFlags = EventFlags(0);
    /// Waiting on the event blocks the host thread instead of spinning.
    pub const BLOCKING_SYNC: EventFlags = EventFlags(1);
    /// The event records no timing, which makes it cheaper to record and wait on.
    pub const DISABLE_TIMING: EventFlags = EventFlags(2);
    /// The event may be shared with another process ([`Event::ipc_handle`]); needs
    /// `DISABLE_TIMING` too.
    pub const INTERPROCESS: EventFlags = EventFlags(4);

    /// The raw `CU_EVENT_*` bits.
    pub const fn bits(self) -> u32 {
        self.0
    }

    /// True when every flag in `other` is set in `self`.
    pub const fn contains(self, other: EventFlags) -> bool {
        self.0 & other.0 == other.0
    }
}

impl std::ops::BitOr for EventFlags {
    type Output = EventFlags;
    fn bitor(self, rhs: EventFlags) -> EventFlags {
        EventFlags(self.0 | rhs.0)
    }
}

impl Stream {
    /// A new stream in `ctx`.
    pub fn new(ctx: &Context) -> Result<Stream> {
        Self::with_flags(ctx, StreamFlags::Default)
    }

    /// A new stream in `ctx` with `flags`.
    pub fn with_flags(ctx: &Context, flags: StreamFlags) -> Result<Stream> {
        let raw = ctx.bound(|| calls::stream_create(flags.bits()))?;
        Stream::from_parts(raw, ctx, flags)
    }

    /// Wraps a stream just created with `flags` in `ctx` (current on this thread); it is
    /// destroyed once the stream and every record of its uses are gone.
    pub(crate) fn from_parts(raw: sys::CUstream, ctx: &Context, flags: StreamFlags) -> Result<Stream> {
        Ok(Stream {
            inner: StreamInner::new(raw, ctx.raw(), ctx.liveness(), flags == StreamFlags::Default)?,
            ctx: ctx.clone(),
        })
    }

    /// A handle to a stream ordering already knows, of `ctx`.
    pub(crate) fn from_inner(inner: Arc<StreamInner>, ctx: &Context) -> Stream {
        Stream {
            inner,
            ctx: ctx.clone(),
        }
    }

    /// The stream as ordering knows it.
    #[inline]
    pub(crate) fn inner(&self) -> &Arc<StreamInner> {
        &self.inner
    }

    /// Makes this stream's work exempt from the crate's cross-stream ordering: launches and
    /// copies queued on it no longer wait for other streams' uses of the memory they touch, and
    /// other streams' work no longer waits for its uses. Memory is still freed, or handed out
    /// again by a pool, only after the stream's work on it has finished.
    ///
    /// For programs that order their streams themselves with events, and do not want the
    /// crate's waits added (they cost an event record and a wait per change of stream).
    ///
    /// # Safety
    /// Every use on this stream of memory that another stream also uses must be ordered with
    /// those uses by the caller ([`Event::record`] and [`Stream::wait_for_event`], or
    /// synchronizing), for as long as the memory is used: a kernel reading memory while
    /// another stream writes it, or writing it while another stream reads it, is a data race
    /// on the device.
    pub unsafe fn order_manually(&self) {
        self.inner.set_manual();
    }

    /// The flags the stream was created with.
    pub fn flags(&self) -> Result<StreamFlags> {
        self.ctx.bind()?;
        // SAFETY: the stream is live.
        let bits = unsafe { calls::stream_get_flags(self.raw()) }?;
        Ok(if bits & 1 != 0 {
            StreamFlags::NonBlocking
        } else {
            StreamFlags::Default
        })
    }

    /// Whether the stream is being captured into a graph: never by this crate (its captures
    /// record on private streams), but another library may capture this handle. Work queued
    /// then runs at each launch of that graph, not now, which is what a scan's reused tile
    /// status must know.
    #[cfg_attr(not(feature = "gpuarray"), allow(dead_code))]
    pub(crate) fn is_capturing(&self) -> Result<bool> {
        // SAFETY: the stream is live.
        let status = unsafe { calls::stream_is_capturing(self.raw()) }?;
        Ok(status != sys::CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE)
    }

    /// The driver's handle.
    #[inline]
    pub fn raw(&self) -> sys::CUstream {
        self.inner.raw
    }

    /// The context the stream belongs to.
    #[inline]
    pub fn context(&self) -> &Context {
        &self.ctx
    }

    /// Waits until everything queued on the stream has finished.
    pub fn synchronize(&self) -> Result<()> {
        self.ctx.bind()?;
        // SAFETY: the stream is live.
        unsafe { calls::stream_synchronize(self.raw()) }.map_err(Error::from)
    }

    /// True when everything queued on the stream has finished.
    pub fn is_done(&self) -> Result<bool> {
        self.ctx.bind()?;
        // SAFETY: the stream is live.
        unsafe { calls::stream_query(self.raw()) }.map_err(Error::from)
    }

    /// Makes later work on this stream wait until `event` has completed.
    ///
    /// Refused ([`BorderError::CapturedElsewhere`](crate::BorderError)) while another library
    /// captures this stream into a graph.
    pub fn wait_for_event(&self, event: &Event) -> Result<()> {
        self.ctx.bind()?;
        self.inner.refuse_foreign_capture()?;
        // SAFETY: both handles are live.
        unsafe { calls::stream_wait_event(self.raw(), event.raw, 0) }.map_err(Error::from)
    }
}

/// A CUDA event: a marker recorded into a stream, for waiting on and for timing GPU work.
///
/// Timing a launch with two events measures GPU time only, not the host's launch overhead:
///
/// ```no_run
/// use gpu_runtime::{kernel, Context, Event};
///
/// #[kernel(r#"
/// __global__ void scale(float *x, float a, int n) {
///     int i = blockIdx.x * blockDim.x + threadIdx.x;
///     if (i < n) x[i] *= a;
/// }"#)]
/// fn scale(x: &mut [f32], a: f32, n: i32);
///
/// # fn main() -> gpu_runtime::Result<()> {
/// let ctx = Context::default()?;
/// let n = 1 << 24;
/// let mut x = ctx.alloc_zeros::<f32>(n)?;
/// let k = scale::prepare(&ctx)?;
/// let (start, end) = (Event::new(&ctx)?, Event::new(&ctx)?);
/// start.record(None)?;
/// k.prepared_call(n / 256, 256, &mut x, 2.0, n as i32)?;
/// end.record(None)?;
/// // The launch returned at once: the time is known only when the GPU has reached `end`.
/// end.synchronize()?;
/// let t = end.time_since(&start)?;
/// println!("{:.0} GB/s", (8 * n) as f64 / t.as_secs_f64() / 1e9); // one read, one write
/// # Ok(()) }
/// ```
pub struct Event {
    raw: sys::CUevent,
    ctx: Context,
}

// SAFETY: a CUevent may be used from any thread.
unsafe impl Send for Event {}
// SAFETY: as above.
unsafe impl Sync for Event {}

impl std::fmt::Debug for Event {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Event({:p})", self.raw)
    }
}

impl Event {
    /// A new event that records timing (flag `CU_EVENT_DEFAULT`).
    pub fn new(ctx: &Context) -> Result<Event> {
        Self::with_flags(ctx, EventFlags::DEFAULT)
    }

    /// A new event with `flags`.
    pub fn with_flags(ctx: &Context, flags: EventFlags) -> Result<Event> {
        if flags.bits() & !7 != 0 {
            return Err(FlagsError::UnknownEventFlags {
                unknown: flags.bits() & !7,
            }
            .into());
        }
        if flags.contains(EventFlags::INTERPROCESS) && !flags.contains(EventFlags::DISABLE_TIMING) {
            return Err(FlagsError::InterprocessTiming.into());
        }
        let raw = ctx.bound(|| calls::event_create(flags.bits()))?;
        Ok(Event {
            raw,
            ctx: ctx.clone(),
        })
    }

    /// An event made from a driver handle this value will own and destroy.
    pub(crate) fn from_raw(raw: sys::CUevent, ctx: &Context) -> Event {
        Event {
            raw,
            ctx: ctx.clone(),
        }
    }

    /// The context the event belongs to.
    pub fn context(&self) -> &Context {
        &self.ctx
    }

    /// The driver's handle.
    pub fn raw(&self) -> sys::CUevent {
        self.raw
    }

    /// Records the event on `stream` (or on the legacy default stream with `None`).
    ///
    /// Refused ([`BorderError::CapturedElsewhere`](crate::BorderError)) while another library
    /// captures `stream` into a graph: the event would be a node of that graph, and a stream
    /// told to wait for it would join the capture, its later work captured instead of run.
    pub fn record(&self, stream: Option<&Stream>) -> Result<()> {
        let Some(stream) = stream else {
            return self.record_raw(std::ptr::null_mut());
        };
        stream.inner.refuse_foreign_capture()?;
        self.record_raw(stream.raw())?;
        stream.inner.refuse_foreign_capture()
    }

    pub(crate) fn record_raw(&self, stream: sys::CUstream) -> Result<()> {
        self.ctx.bind()?;
        // SAFETY: both handles are live (or the stream is the null stream).
        unsafe { calls::event_record(self.raw, stream) }.map_err(Error::from)
    }

    /// Waits until the event has completed.
    pub fn synchronize(&self) -> Result<()> {
        self.ctx.bind()?;
        // SAFETY: the event is live.
        unsafe { calls::event_synchronize(self.raw) }.map_err(Error::from)
    }

    /// True when the event has completed.
    pub fn query(&self) -> Result<bool> {
        self.ctx.bind()?;
        // SAFETY: the event is live.
        unsafe { calls::event_query(self.raw) }.map_err(Error::from)
    }

    /// GPU time from `earlier` to this event; both must have completed.
    pub fn time_since(&self, earlier: &Event) -> Result<Duration> {
        self.ctx.bind()?;
        // SAFETY: both events are live.
        let ms = unsafe { calls::event_elapsed_time(earlier.raw, self.raw) }?;
        Ok(Duration::from_secs_f64(f64::from(ms.max(0.0)) / 1e3))
    }

    /// GPU time from this event to `later`; both must have completed.
    pub fn time_till(&self, later: &Event) -> Result<Duration> {
        later.time_since(self)
    }
}

impl Drop for Event {
    fn drop(&mut self) {
        if self.ctx.bind().is_ok() {
            // SAFETY: destroys the event created in new, once.
            let _ = unsafe { calls::event_destroy(self.raw) };
        }
    }
}
