//! What a stream can do beyond queueing copies and kernels: priorities, and host functions
//! run in stream order.

use std::ffi::c_void;

use crate::driver::calls;
use crate::driver::context::core::Context;
use crate::driver::ordering::StreamInner;
use crate::driver::stream::{Stream, StreamFlags};
use crate::error::panic::swallow_panic;
use crate::error::{FlagsError, Result};

impl Context {
    /// The stream priorities the device supports, as `(lowest, highest)`. Lower numbers are
    /// higher priorities, so `highest <= lowest` (e.g. `(0, -5)`); `(0, 0)` means the device
    /// has none.
    pub fn stream_priority_range(&self) -> Result<(i32, i32)> {
        self.bound(calls::ctx_get_stream_priority_range)
    }
}

/// A host function queued by [`Stream::add_callback`] (and the futures' wake-ups), boxed twice
/// so that a thin pointer crosses the C boundary.
pub(crate) type Callback = Box<dyn FnOnce() + Send + 'static>;

/// Queues `f` on `stream` (`cuLaunchHostFunc`), with `stream`'s context current: run on a driver
/// thread once the work queued before it has finished. `f` must not call CUDA. If the context
/// fails before `f`'s turn, `f` is never run and never dropped.
///
/// Refused on a stream another library is capturing: a host function captured into a graph
/// would be called at each launch of the graph, and `data` is handed over once. A capture
/// begun between the check and the queueing is invalidated (the check after), so the function
/// is called at most once, or never (then leaked, not freed).
pub(crate) fn queue_host_fn(stream: &StreamInner, f: Callback) -> Result<()> {
    stream.refuse_foreign_capture()?;
    let data = Box::into_raw(Box::new(f));
    // SAFETY: the stream is live (the caller's); run_callback takes ownership of `data` when
    // the driver calls it, catches any panic, and `f` calls no CUDA (this function's contract).
    let r = unsafe { calls::launch_host_func(stream.raw, run_callback, data.cast()) };
    if let Err(e) = r {
        // SAFETY: the driver refused it, so it will never call run_callback with `data`.
        drop(unsafe { Box::from_raw(data) });
        return Err(e.into());
    }
    stream.refuse_foreign_capture()
}

extern "C" fn run_callback(data: *mut c_void) {
    // SAFETY: `data` is the Box<Callback> leaked by add_callback, handed over exactly once.
    let f = unsafe { Box::from_raw(data.cast::<Callback>()) };
    // Unwinding into the driver's thread is undefined; a panic ends here, reported on stderr
    // by the panic hook, and so does a panic of its payload's drop.
    swallow_panic(*f);
}

impl Stream {
    /// A new stream in `ctx` with `flags` and `priority`: work on higher-priority streams
    /// (lower numbers) is scheduled first when streams compete. A priority outside
    /// [`Context::stream_priority_range`] is refused with that range (the driver would clamp
    /// it silently).
    ///
    /// ```no_run
    /// use gpu_runtime::{Context, Stream, driver::StreamFlags};
    /// let ctx = Context::default()?;
    /// let (_lowest, highest) = ctx.stream_priority_range()?;
    /// // Latency-critical work jumps ahead of bulk work queued on ordinary streams.
    /// let urgent = Stream::with_priority(&ctx, StreamFlags::NonBlocking, highest)?;
    /// assert_eq!(urgent.priority()?, highest);
    /// assert!(Stream::with_priority(&ctx, StreamFlags::Default, highest - 1).is_err());
    /// # Ok::<(), gpu_runtime::Error>(())
    /// ```
    pub fn with_priority(ctx: &Context, flags: StreamFlags, priority: i32) -> Result<Stream> {
        let (lowest, highest) = ctx.stream_priority_range()?;
        if priority > lowest || priority < highest {
            return Err(FlagsError::StreamPriority {
                priority,
                highest,
                lowest,
            }
            .into());
        }
        // The context is current (stream_priority_range bound it).
        let raw = calls::stream_create_with_priority(flags.bits(), priority)?;
        Stream::from_parts(raw, ctx, flags)
    }

    /// The stream's priority (see [`Stream::with_priority`]).
    pub fn priority(&self) -> Result<i32> {
        self.context().bind()?;
        // SAFETY: the stream is live.
        Ok(unsafe { calls::stream_get_priority(self.raw()) }?)
    }

    /// Runs `f` on a driver thread once all work queued on the stream before it has finished;
    /// work queued after it waits for `f` to return (`cuLaunchHostFunc`). `f` must not call
    /// CUDA (the driver forbids it there and may deadlock): send a message instead. If the
    /// context fails before `f`'s turn, `f` is never run and never dropped. A panic in `f`
    /// ends there (the panic hook reports it, on stderr by default), also when its payload
    /// panics in turn when dropped: it never unwinds into the driver's thread, and the stream
    /// goes on.
    ///
    /// ```no_run
    /// use std::sync::mpsc;
    /// use gpu_runtime::{driver::memset_d32_async, Context, Stream};
    /// let ctx = Context::default()?;
    /// let stream = Stream::new(&ctx)?;
    /// let mut x = ctx.alloc::<u32>(1 << 20)?;
    /// memset_d32_async(&mut x, 7, 1 << 20, &stream)?;
    /// let (tx, rx) = mpsc::channel();
    /// // `f` may not call CUDA, so it only tells another thread that the memset is done.
    /// stream.add_callback(move || tx.send("memset done").unwrap())?;
    /// assert_eq!(rx.recv().unwrap(), "memset done");
    /// assert_eq!(x.to_vec()?[0], 7);
    /// # Ok::<(), gpu_runtime::Error>(())
    /// ```
    pub fn add_callback(&self, f: impl FnOnce() + Send + 'static) -> Result<()> {
        self.context().bind()?;
        queue_host_fn(self.inner(), Box::new(f))
    }
}
