//! The streams of the protocol, and their ordering: a stream of another library
//! ([`ForeignStream`]) and what its raw handle names, the stream a consumer of an export uses
//! the memory on ([`ConsumerStream`]) and the one an import's producer queued its work on
//! ([`ProducerStream`]); how an export orders its consumer after the memory's uses (by value,
//! or lent), and how one stream waits for another.

use std::any::Any;
use std::sync::Arc;

use cudarc::driver::{sys, CudaStream};

use crate::driver::calls;
use crate::driver::context::core::Context;
use crate::driver::current::bind_raw;
use crate::driver::ordering::{new_event, StreamInner, StreamUses};
use crate::driver::stream::Stream;
use crate::error::{DlpackError, Error, Result};

/// `CU_STREAM_LEGACY` and `CU_STREAM_PER_THREAD`: handles that name a stream by who uses them
/// (the legacy default stream of the current context; the calling thread's default stream)
/// rather than one stream.
const LEGACY_HANDLE: usize = 0x1;
const PER_THREAD_HANDLE: usize = 0x2;

/// What a raw stream handle names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Handle {
    /// The legacy default stream of the context it is used with (null or `CU_STREAM_LEGACY`).
    Legacy,
    /// The default stream of whichever thread uses it (`CU_STREAM_PER_THREAD`).
    PerThread,
    /// One stream.
    Stream,
}

/// What `raw` names.
pub(super) fn handle_kind(raw: sys::CUstream) -> Handle {
    match raw as usize {
        0 | LEGACY_HANDLE => Handle::Legacy,
        PER_THREAD_HANDLE => Handle::PerThread,
        _ => Handle::Stream,
    }
}

/// A CUDA stream of another library (PyTorch's, CuPy's, cudarc's...), for the stream rule of the
/// protocol. Borrows the stream's owner where there is one, so the handle stays live.
#[derive(Debug, Clone, Copy)]
pub struct ForeignStream<'s> {
    raw: sys::CUstream,
    /// cudarc's handle, for a cudarc stream: an export's consumer keeps a clone (inside a
    /// stream of ours) for as long as the memory's record names the stream.
    cudarc: Option<&'s Arc<CudaStream>>,
}

impl ForeignStream<'static> {
    /// A stream known by its raw handle only (an integer `stream` of Python's `__dlpack__`).
    ///
    /// # Safety
    /// `raw` is a live CUDA stream of a context of this process; or the null handle or
    /// `CU_STREAM_LEGACY`, meaning the legacy default stream of the context of the crate's
    /// memory or stream it is used with; or `CU_STREAM_PER_THREAD` (as an import's
    /// [`ProducerStream`]: an export refuses it as its consumer). It stays live until every
    /// call given this value has returned and, where it is an export's consumer
    /// ([`ConsumerStream::Foreign`]), until that export ends: until the tensor's deleter has
    /// returned, for an export by value
    /// ([`DeviceBuffer::into_dlpack`](crate::DeviceBuffer::into_dlpack),
    /// [`DeviceArray::into_dlpack`](crate::gpuarray::DeviceArray::into_dlpack)), or until its
    /// [`DlpackRef`](super::DlpackRef) has been dropped, for a lend (both wait for the work
    /// queued on the stream by then, so the stream must still be there).
    pub unsafe fn from_raw(raw: sys::CUstream) -> ForeignStream<'static> {
        ForeignStream { raw, cudarc: None }
    }
}

impl<'s> ForeignStream<'s> {
    /// A cudarc stream, such as the `current_stream` that `dlpark`'s cudarc adapter hands out
    /// with its exports. As an export's consumer it becomes a stream of ours
    /// ([`Stream::from_cudarc`], which keeps cudarc's handle), so the memory's record names it
    /// and keeps it alive for as long as it needs to.
    pub fn cudarc(stream: &'s Arc<CudaStream>) -> ForeignStream<'s> {
        ForeignStream {
            raw: stream.cu_stream(),
            cudarc: Some(stream),
        }
    }

    /// The raw handle.
    pub fn raw(&self) -> sys::CUstream {
        self.raw
    }
}

/// The stream a consumer of an export will use the memory on: DLPack's `stream` argument of
/// `__dlpack__`. The export makes it wait (on the GPU) for the work queued on the memory so
/// far, and then keeps the memory from being freed, handed out again or written (after a lend)
/// before the work the consumer has queued on it by the end of the export: the tensor's
/// deleter (an export by value), or the drop of the [`DlpackRef`](super::DlpackRef) (a lend).
///
/// The consumer's side of the rule (its code is the `unsafe` code that reads the tensor's
/// pointer): it queues its uses of the memory on this stream (work on another stream counts
/// once this stream waits for it), all of them before it calls the deleter or before the
/// [`DlpackRef`](super::DlpackRef) is dropped, and it only reads a lent, `READ_ONLY` tensor. It
/// need not wait for that work to finish: the deleter may be called, or the lend end, with the
/// work still queued.
#[derive(Debug, Clone, Copy)]
pub enum ConsumerStream<'s> {
    /// A stream of this crate, of the memory's context: it waits for every use of the memory
    /// queued so far (for a lent, read-only tensor: the last write) through the memory's
    /// record, which then names it (no driver call when it is the last user), so that the free
    /// and later writers wait for it.
    Stream(&'s Stream),
    /// Another library's stream. A cudarc stream ([`ForeignStream::cudarc`]) becomes a stream
    /// of ours ([`Stream::from_cudarc`]) and is ordered as [`Stream`](Self::Stream) is. A raw
    /// handle ([`ForeignStream::from_raw`]), for an export by value: the memory's record names
    /// the stream until the deleter, whose free then waits for an event recorded on it. For a
    /// lend: it waits for the legacy default stream, which the record names, and when the
    /// [`DlpackRef`](super::DlpackRef) is dropped the legacy stream waits for it, so later
    /// writes and the free
    /// wait for the consumer's reads (as does work of ours queued after that on the legacy
    /// stream and on blocking streams, which the driver orders with it). The handles of the
    /// legacy stream stand for the memory's context's; `CU_STREAM_PER_THREAD` is refused
    /// ([`DlpackError::PerThreadConsumer`]).
    Foreign(ForeignStream<'s>),
    /// No ordering (the protocol's `stream=-1`): the consumer orders its uses itself. Made only
    /// by the `unsafe` [`ConsumerStream::unordered`], whose contract says what that takes.
    #[non_exhaustive]
    Unordered {},
}

impl ConsumerStream<'static> {
    /// [`ConsumerStream::Unordered`], the protocol's `stream=-1`: the export orders nothing, and
    /// the memory's record learns nothing of the consumer's work, so nothing waits for it.
    ///
    /// # Safety
    /// The consumer orders its uses of the memory itself, and ends them in time:
    /// - each use runs after the work queued on the memory before the export (for instance, the
    ///   consumer synchronizes the device, or the streams that used the memory, first);
    /// - each use has *finished* (not only been queued) before the tensor's deleter is called,
    ///   for an export by value, or before the [`DlpackRef`](super::DlpackRef) is dropped, for
    ///   a lend;
    /// - a lent (`READ_ONLY`) tensor is only read.
    ///
    /// This crate's own imports of the tensor
    /// ([`DlpackTensor::from_dlpack`](super::DlpackTensor::from_dlpack),
    /// [`DlpackTensor::from_dlpack_ref`](super::DlpackTensor::from_dlpack_ref),
    /// [`DlpackTensorMut::from_dlpack`](super::DlpackTensorMut::from_dlpack)) meet all three by
    /// themselves: they are ordered through the memory's record.
    pub unsafe fn unordered() -> ConsumerStream<'static> {
        ConsumerStream::Unordered {}
    }
}

/// Where the pending work of an imported tensor's producer is queued: its stream, which the
/// importing stream then waits for (`cuEventRecord` there, `cuStreamWaitEvent` here).
#[derive(Debug, Clone, Copy)]
pub enum ProducerStream<'s> {
    /// A stream of this crate.
    Stream(&'s Stream),
    /// Another library's stream, e.g. [`ForeignStream::cudarc`] of the `current_stream` of a
    /// `dlpark` cudarc export.
    Foreign(ForeignStream<'s>),
    /// The producer has no work pending on the memory, or already ordered it before the
    /// consuming stream (it was given that stream as the protocol's `stream` argument).
    Ready,
}

/// Stands for the liveness of the context of a raw consumer stream that is not the memory's
/// (see [`foreign_stream`]).
pub(super) type Liveness = Arc<dyn Any + Send + Sync>;

/// Makes work queued on `waiter` from now on wait for the work queued on `signaler` so far:
/// an event of `signaler`'s context recorded there, which `waiter` waits for. `ctx` is the
/// context of the crate's side, current on return.
///
/// # Safety
/// Both handles are live streams (the null and per-thread handles meaning `ctx`'s).
pub(super) unsafe fn stream_wait(
    ctx: &Context,
    waiter: sys::CUstream,
    signaler: sys::CUstream,
) -> Result<()> {
    if waiter == signaler {
        return Ok(());
    }
    ctx.bind()?;
    let signaler_ctx = if signaler.is_null() {
        ctx.raw()
    } else {
        // SAFETY: a live stream (the caller's promise).
        unsafe { calls::stream_get_ctx(signaler) }?
    };
    bind_raw(signaler_ctx)?;
    let event = new_event()?;
    let waited = (|| {
        // SAFETY: the event was just made in the signaler's context, which is current.
        unsafe { calls::event_record(event, signaler) }?;
        ctx.bind()?;
        // SAFETY: both handles are live; a stream may wait for an event of another context.
        unsafe { calls::stream_wait_event(waiter, event, 0) }.map_err(Error::from)
    })();
    if bind_raw(signaler_ctx).is_ok() {
        // SAFETY: the event is destroyed once; a pending wait on it still completes. The wait's
        // result is the one to report.
        let _ = unsafe { calls::event_destroy(event) };
    }
    ctx.bind()?;
    waited
}

/// An export's consumer stream, as the export orders it.
enum Consumer {
    /// A stream ordering knows: one of ours, a cudarc stream made one, or the legacy default
    /// stream of the memory's context for its handles.
    Ours(Arc<StreamInner>),
    /// Another library's stream known by its handle only.
    Raw(sys::CUstream),
    /// Nothing to order ([`ConsumerStream::unordered`]).
    Unordered,
}

/// `consumer` for memory of `ctx`: a stream of another context is refused
/// ([`Error::WrongContext`]), and so is the per-thread handle ([`DlpackError::PerThreadConsumer`]),
/// which would name another stream on the thread that ends the export.
fn resolve(ctx: &Context, consumer: ConsumerStream<'_>) -> Result<Consumer> {
    let ours = |s: &Stream| {
        if !s.context().is(ctx.raw()) {
            return Err(Error::WrongContext {
                what: "the consumer stream of a DLPack export",
            });
        }
        Ok(Consumer::Ours(s.inner().clone()))
    };
    match consumer {
        ConsumerStream::Stream(s) => ours(s),
        ConsumerStream::Foreign(f) => match (handle_kind(f.raw), f.cudarc) {
            (Handle::PerThread, _) => Err(DlpackError::PerThreadConsumer.into()),
            (_, Some(c)) => ours(&Stream::from_cudarc(c.clone())?),
            (Handle::Legacy, None) => Ok(Consumer::Ours(ctx.legacy().clone())),
            (Handle::Stream, None) => Ok(Consumer::Raw(f.raw)),
        },
        ConsumerStream::Unordered {} => Ok(Consumer::Unordered),
    }
}

/// `raw`, a live stream of another library, as ordering knows streams
/// ([`StreamInner::foreign`]), with what stands for its context's liveness when that is not
/// `ctx` (a record waits for a stream only while its context lives; the export keeps it until
/// the memory is freed). `ctx` is current on return.
///
/// # Safety
/// `raw` is live, and not a special handle (null, legacy or per-thread).
unsafe fn foreign_stream(ctx: &Context, raw: sys::CUstream) -> Result<(Arc<StreamInner>, Option<Liveness>)> {
    ctx.bind()?;
    // SAFETY: a live stream (the caller's promise).
    let stream_ctx = unsafe { calls::stream_get_ctx(raw) }?;
    let (liveness, token) = if ctx.is(stream_ctx) {
        (ctx.liveness(), None)
    } else {
        let token: Liveness = Arc::new(());
        (Arc::downgrade(&token), Some(token))
    };
    bind_raw(stream_ctx)?;
    let made = StreamInner::foreign(raw, stream_ctx, liveness);
    ctx.bind()?;
    Ok((made?, token))
}

/// Orders the consumer of an export by value after every use of the memory queued so far (a
/// write: the memory is the consumer's to write), leaving its stream in the memory's record
/// (`uses`, of memory of `ctx`, owned by the caller), so that the tensor's deleter frees it
/// after the work queued there by then. Returns what the export keeps for a raw consumer
/// stream of another context (see [`foreign_stream`]).
pub(super) fn order_by_value(
    ctx: &Context,
    uses: &StreamUses,
    consumer: ConsumerStream<'_>,
) -> Result<Option<Liveness>> {
    match resolve(ctx, consumer)? {
        Consumer::Ours(s) => uses.write_on(&s).map(|()| None),
        Consumer::Raw(raw) => {
            // SAFETY: a live stream, until the deleter has returned (ForeignStream::from_raw's
            // contract), which is as long as the record, inside the export, lives; not a
            // special handle (`resolve`).
            let (stream, token) = unsafe { foreign_stream(ctx, raw) }?;
            // The buffer is owned: an exclusive write, after which the record names `stream`.
            uses.write_on(&stream)?;
            Ok(token)
        }
        Consumer::Unordered => Ok(None),
    }
}

/// Orders the consumer of a lend after the writes of the memory queued so far (a read),
/// leaving a stream in the memory's record (`uses`, of memory of `ctx`) that later writes and
/// the free wait for: the consumer's own, or for a raw handle (which the record must not name
/// past the lend, as the stream may then be gone) the legacy default stream, which the consumer
/// waits for now and which waits for the consumer when the lend ends (the drop of `export`'s
/// `Lent`). Returns that raw handle. Memory without a record (`None`:
/// [`DeviceView::from_raw_parts`](crate::DeviceView::from_raw_parts)) is ordered by its maker:
/// the consumer is only checked.
pub(super) fn order_lend(
    ctx: &Context,
    uses: Option<&StreamUses>,
    consumer: ConsumerStream<'_>,
) -> Result<Option<sys::CUstream>> {
    let consumer = resolve(ctx, consumer)?;
    let Some(uses) = uses else {
        return Ok(None);
    };
    match consumer {
        Consumer::Ours(s) => uses.read_on(&s).map(|()| None),
        Consumer::Raw(raw) => {
            uses.read_on(ctx.legacy())?;
            // SAFETY: the legacy stream of `ctx` is live; `raw` is (ForeignStream's contract).
            unsafe { stream_wait(ctx, raw, std::ptr::null_mut()) }?;
            Ok(Some(raw))
        }
        Consumer::Unordered => Ok(None),
    }
}
