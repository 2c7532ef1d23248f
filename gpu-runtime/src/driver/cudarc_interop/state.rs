//! What a context keeps for cudarc, and the handles between cudarc's contexts and streams and
//! ours.

use std::collections::HashMap;
use std::sync::Arc;

use cudarc::driver::{CudaContext, CudaStream, DriverError};

use crate::driver::calls;
use crate::driver::context::core::{lookup, Context};
use crate::driver::context::ext::{Extension, Slot};
use crate::driver::device::Device;
use crate::driver::ordering::{LendGroups, StreamInner};
use crate::driver::result::driver_error;
use crate::driver::stream::Stream;
use crate::error::{BorderError, Error, Result};
use crate::sync::{LockRank, Mutex};

/// What a context keeps for cudarc (its extension slot `Cudarc`).
pub(crate) struct CudarcState {
    /// cudarc's handle to the context; for a context of `Context::create`, to the device's
    /// primary context (then `matches` is false and nothing is handed to cudarc).
    pub(crate) ctx: Arc<CudaContext>,
    /// `ctx` is this context.
    matches: bool,
    /// cudarc's handle to the legacy default stream (`default_stream()`, the null stream).
    pub(crate) legacy: Arc<CudaStream>,
    /// A stream cudarc made, held for the context's life: while one exists, cudarc is in its
    /// multi-stream mode and orders every slice of `ctx` with its events, on streams of ours
    /// too.
    _multi: Option<Arc<CudaStream>>,
    /// cudarc stream handles (as integers) -> the stream ordering knows by that handle: the
    /// streams passed through `to_cudarc` / `from_cudarc`, each held while cudarc holds a
    /// handle to it (so a cudarc handle always finds its stream, and the stream is not
    /// destroyed under it), and let go at a later registration once cudarc holds none.
    streams: Mutex<HashMap<usize, Arc<StreamInner>>>,
    /// The lends of cudarc's allocations running now, grouped by allocation (`lend.rs`).
    pub(crate) lends: LendGroups,
}

impl Extension for CudarcState {
    const SLOT: Slot = Slot::Cudarc;
}

/// cudarc's error as ours.
pub(crate) fn from_cudarc_error(call: &'static str, e: DriverError) -> Error {
    driver_error(call, e.0)
}

impl CudarcState {
    /// The state of `ctx`, with `given` as cudarc's handle to it (or a new one).
    fn new(ctx: &Context, given: Option<Arc<CudaContext>>) -> Result<CudarcState> {
        let c = match given {
            Some(c) => c,
            None => CudaContext::new(ctx.device().ordinal())
                .map_err(|e| from_cudarc_error("CudaContext::new", e))?,
        };
        let matches = c.cu_ctx() == ctx.raw();
        let multi = if matches {
            Some(
                c.new_stream()
                    .map_err(|e| from_cudarc_error("CudaContext::new_stream", e))?,
            )
        } else {
            None
        };
        Ok(CudarcState {
            legacy: c.default_stream(),
            ctx: c,
            matches,
            _multi: multi,
            streams: Mutex::new(LockRank::CudarcStreams, HashMap::new()),
            lends: LendGroups::default(),
        })
    }

    /// cudarc's handle to the context, or the refusal of a context cudarc cannot share.
    fn matching(&self) -> Result<&Arc<CudaContext>> {
        if self.matches {
            Ok(&self.ctx)
        } else {
            Err(Error::WrongContext {
                what: "the cudarc context (it is not the same CUDA context)",
            })
        }
    }

    /// The stream ordering knows by cudarc's `stream`, if any: the legacy default stream, or a
    /// stream registered by `to_cudarc` / `from_cudarc` while cudarc holds a handle to it.
    pub(crate) fn known(&self, ctx: &Context, stream: &CudaStream) -> Option<Arc<StreamInner>> {
        if stream.context().cu_ctx() != ctx.raw() {
            return None;
        }
        let raw = stream.cu_stream();
        if raw.is_null() || raw as usize == LEGACY_HANDLE {
            return Some(ctx.legacy().clone());
        }
        self.streams.lock().get(&(raw as usize)).cloned()
    }

    fn register(&self, inner: &Arc<StreamInner>) {
        let mut map = self.streams.lock();
        // Let go of the streams cudarc holds no handle to any more (the one in the stream
        // itself is all that is left), so the map stays as small as what cudarc holds.
        map.retain(|_, s| s.cudarc.get().is_some_and(|c| Arc::strong_count(c) > 1));
        map.insert(inner.raw as usize, inner.clone());
    }
}

/// `CU_STREAM_LEGACY`: the legacy default stream, named explicitly (one queue per context, as
/// the null handle).
const LEGACY_HANDLE: usize = 0x1;
/// `CU_STREAM_PER_THREAD` (cudarc's `per_thread_stream()`): the calling thread's default
/// stream, a different queue in every thread.
const PER_THREAD_HANDLE: usize = 0x2;

/// Refuses a context of `Context::create` before cudarc opens the device's primary context for
/// nothing.
fn refuse_owned(ctx: &Context) -> Result<()> {
    if ctx.inner.owned {
        return Err(Error::WrongContext {
            what: "a context made with Context::create (cudarc shares a device's primary context only)",
        });
    }
    Ok(())
}

/// The cudarc state of `ctx`, made on first use.
pub(crate) fn state(ctx: &Context) -> Result<&CudarcState> {
    ctx.inner.ext.get_or_try_init(|| CudarcState::new(ctx, None))
}

/// The cudarc state of `ctx` if it was made (no stream can be known otherwise).
pub(crate) fn state_if_made(ctx: &Context) -> Option<&CudarcState> {
    ctx.inner.ext.get::<CudarcState>()
}

impl Context {
    /// cudarc's handle to this context: the device's primary context, as
    /// [`CudaContext::new`] opens it. The same `Arc` on every call, made on the first; a
    /// context of [`Context::create`] (not primary) is refused ([`Error::WrongContext`]), as
    /// cudarc could only wrap it by taking it over.
    ///
    /// Making it puts cudarc in its multi-stream mode for this context (it holds one cudarc
    /// stream): cudarc then orders its own slices between streams with events, on streams of
    /// ours handed to it too. Use this handle (or give yours first with
    /// [`Context::from_cudarc`]) for the slices you allocate with cudarc: cudarc's mode is
    /// kept per `CudaContext` value, and slices of another value in single-stream mode are not
    /// ordered between streams by cudarc.
    pub fn cudarc_context(&self) -> Result<Arc<CudaContext>> {
        refuse_owned(self)?;
        Ok(state(self)?.matching()?.clone())
    }

    /// The context of ours for cudarc's `ctx` (a device's primary context): the one this crate
    /// shares with cudarc ([`Context::new`] of its device). If this context has no cudarc handle
    /// yet, `ctx` becomes it ([`Context::cudarc_context`] then returns it). A cudarc context
    /// that is not a primary context of this crate is refused ([`Error::WrongContext`]).
    pub fn from_cudarc(ctx: &Arc<CudaContext>) -> Result<Context> {
        let ours = match lookup(ctx.cu_ctx()) {
            Some(c) => c,
            None if ctx.is_primary() => Context::new(Device::new(ctx.ordinal())?)?,
            None => {
                return Err(Error::WrongContext {
                    what: "the cudarc context (not a device's primary context, nor one of this crate)",
                })
            }
        };
        if ours.raw() != ctx.cu_ctx() {
            return Err(Error::WrongContext {
                what: "the cudarc context (not the device's primary context)",
            });
        }
        ours.inner
            .ext
            .get_or_try_init(|| CudarcState::new(&ours, Some(ctx.clone())))?
            .matching()?;
        Ok(ours)
    }
}

impl Stream {
    /// cudarc's handle to this stream, for cudarc's libraries (`CudaBlas::new`,
    /// `CudaRng::new`, ...) and cudarc's own operations. The same `Arc` on every call.
    ///
    /// Work a cudarc library queues on it through this crate's memory is recorded in the
    /// memory's stream record like a launch of ours on this stream: later launches on other
    /// streams wait for it on the GPU, with no synchronisation (see
    /// [`driver::cudarc_interop`](crate::driver::cudarc_interop)). The stream lives as long as
    /// cudarc holds a handle to it, however early this `Stream` is dropped.
    ///
    /// Its cudarc context is [`Context::cudarc_context`]; a stream of a context of
    /// [`Context::create`] is refused ([`Error::WrongContext`]).
    pub fn to_cudarc(&self) -> Result<Arc<CudaStream>> {
        refuse_owned(self.context())?;
        let st = state(self.context())?;
        let cx = st.matching()?;
        let inner = self.inner();
        let c = match inner.cudarc.get() {
            Some(c) => c.clone(),
            None => {
                let made = if inner.raw.is_null() {
                    st.legacy.clone()
                } else {
                    // SAFETY: the handle is a live stream of this context (`st.ctx` is it,
                    // checked when the state was made); this StreamInner does not destroy it
                    // while the wrapper is held anywhere (`Drop for StreamInner`), and the
                    // context outlives it (the wrapper holds cudarc's context, which retains
                    // the primary context). Ordering: cudarc orders its slices on it with its
                    // events (the state keeps cudarc in multi-stream mode), and this crate's
                    // memory through the registry below.
                    unsafe { cx.wrap_borrowed_stream(inner.raw) }
                };
                inner.cudarc.get_or_init(|| made).clone()
            }
        };
        // Before cudarc can capture it: every use from now on checks for a capture.
        inner.expose();
        st.register(inner);
        Ok(c)
    }

    /// A [`Stream`] for cudarc's `stream`, which it keeps alive (cudarc's handle is held
    /// inside; the stream is destroyed by cudarc when the last handle to it goes). Launches and
    /// copies of this crate on it are ordered like on any stream of ours, and cudarc library
    /// calls on `stream` through this crate's memory are recognised as uses on it. The same
    /// cudarc stream always gives the same stream of ours while one is alive.
    ///
    /// Its context must be a device's primary context ([`Context::from_cudarc`]); another is
    /// refused with [`Error::WrongContext`]. The legacy default stream (the null handle or
    /// `CU_STREAM_LEGACY`) gives the context's legacy stream. The per-thread default stream
    /// (`per_thread_stream()`) is refused with [`BorderError::PerThreadStream`]: it is a
    /// different queue in each thread that names it, which one `Stream` cannot stand for.
    ///
    /// While cudarc captures the stream into a graph (`begin_capture`), this crate queues
    /// nothing on it ([`BorderError::CapturedElsewhere`]), and the same holds for a stream of
    /// ours handed out by [`Stream::to_cudarc`].
    pub fn from_cudarc(stream: Arc<CudaStream>) -> Result<Stream> {
        if stream.cu_stream() as usize == PER_THREAD_HANDLE {
            // Ordering names a queue by its handle; this handle names one per thread, so work
            // of two threads on "it" would be ordered by nothing.
            return Err(BorderError::PerThreadStream {
                handle: PER_THREAD_HANDLE,
            }
            .into());
        }
        let ctx = Context::from_cudarc(stream.context())?;
        let st = state(&ctx)?;
        if let Some(inner) = st.known(&ctx, &stream) {
            return Ok(Stream::from_inner(inner, &ctx));
        }
        ctx.bind()?;
        // SAFETY: the stream is live (cudarc's handle is held).
        let flags = unsafe { calls::stream_get_flags(stream.cu_stream()) }?;
        let blocking = flags & 1 == 0;
        let inner = StreamInner::borrowed(stream, ctx.raw(), ctx.liveness(), blocking)?;
        st.register(&inner);
        Ok(Stream::from_inner(inner, &ctx))
    }
}
