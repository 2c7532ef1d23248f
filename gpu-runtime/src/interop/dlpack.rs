//! DLPack (the `dlpack` feature): this crate's buffers and arrays handed to other libraries,
//! and theirs used here, without a copy, as `dlpark`'s versioned managed tensors
//! ([`Dlpack`], a `DLManagedTensorVersioned`).
//!
//! - **Export** by value: [`DeviceBuffer::into_dlpack`] and [`DeviceArray::into_dlpack`] move
//!   the buffer into the tensor; the tensor's deleter drops it, and the memory is freed
//!   stream-ordered like any buffer's. The [`ConsumerStream`] is the protocol's `stream`
//!   argument: the stream the consumer will use the memory on waits (on the GPU) for every use
//!   queued so far, so the consumer need not synchronize; and the memory's record names that
//!   stream, so the free waits for the work the consumer queued there before it called the
//!   deleter (the consumer need not wait for that work to finish first).
//! - **Export** by borrow: [`DeviceBuffer::to_dlpack`] and [`DeviceArrayBase::to_dlpack`] lend
//!   the memory as a `READ_ONLY` tensor ([`DlpackRef`]) that cannot outlive the borrow; the
//!   consumer's stream waits for the last write queued so far, and writes and the free after
//!   the lend wait for the reads it queued before the [`DlpackRef`] was dropped.
//! - A consumer that orders itself (the protocol's `stream=-1`) is named by the `unsafe`
//!   [`ConsumerStream::unordered`]: nothing then waits for its work, so its contract is that
//!   the work has finished before the deleter is called (or the lend ends).
//! - **Import** of a tensor this crate exported is safe: [`DlpackTensor::from_dlpack`] (owning),
//!   [`DlpackTensor::from_dlpack_ref`] (borrowing: the view cannot outlive the tensor), and
//!   [`DlpackTensorMut::from_dlpack`] (writable). They keep the buffer's own record of the streams
//!   that use it, so launches on the import are ordered with everything queued before the export.
//! - **Import** of another library's tensor is `unsafe` ([`DlpackTensor::from_foreign`],
//!   [`DlpackTensorMut::from_foreign`]): the caller names the stream the producer's pending work
//!   is on ([`ProducerStream`]), and the consuming stream waits for it (`cuEventRecord` there,
//!   `cuStreamWaitEvent` here). Dropping such an import waits on the host for the work queued on
//!   it, then calls the producer's deleter (DLPack has no stream-ordered release).
//!
//! Every import checks the tensor first and refuses it with a [`DlpackError`]: another device
//! type or device, another element type, strides contiguous in neither C nor Fortran order, a
//! first element misaligned for the type, or a read-only tensor imported for writing.

use std::any::Any;
use std::ffi::c_void;
use std::marker::PhantomData;
use std::mem::{align_of, size_of};
use std::ptr::NonNull;
use std::sync::Arc;

use cudarc::driver::{sys, CudaStream};
use dlpark::ffi::{DLDevice, DLDeviceType, DLManagedTensorVersioned, DLPackVersion, DLTensor};
use dlpark::{DlpackElement, DlpackFlags};
use ndarray::{Dimension, IxDyn};

use crate::driver::calls;
use crate::driver::context::core::Context;
use crate::driver::current::bind_raw;
use crate::driver::memory::buffer::DeviceBuffer;
use crate::driver::memory::view::{DeviceRead, DeviceView, DeviceViewMut, DeviceWrite};
use crate::driver::ordering::{new_event, StreamInner, StreamUses};
use crate::driver::stream::Stream;
use crate::error::{DlpackError, Error, Result};
use crate::gpuarray::{layout, DeviceArray, DeviceArrayBase, DeviceArrayView, DeviceArrayViewMut, Element};
use crate::gpuarray::{Storage, StorageMut};

/// An owned DLPack tensor of the current, versioned ABI (`DLManagedTensorVersioned`): dropping
/// it calls its producer's deleter. `dlpark`'s type, re-exported.
pub type Dlpack = dlpark::versioned::Dlpack;

/// `CU_STREAM_LEGACY` and `CU_STREAM_PER_THREAD`: handles that name a stream by who uses them
/// (the legacy default stream of the current context; the calling thread's default stream)
/// rather than one stream.
const LEGACY_HANDLE: usize = 0x1;
const PER_THREAD_HANDLE: usize = 0x2;

/// What a raw stream handle names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Handle {
    /// The legacy default stream of the context it is used with (null or `CU_STREAM_LEGACY`).
    Legacy,
    /// The default stream of whichever thread uses it (`CU_STREAM_PER_THREAD`).
    PerThread,
    /// One stream.
    Stream,
}

fn handle_kind(raw: sys::CUstream) -> Handle {
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
    /// returned, for an export by value ([`DeviceBuffer::into_dlpack`],
    /// [`DeviceArray::into_dlpack`]), or until its [`DlpackRef`] has been dropped, for a lend
    /// (both wait for the work queued on the stream by then, so the stream must still be
    /// there).
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
/// deleter (an export by value), or the drop of the [`DlpackRef`] (a lend).
///
/// The consumer's side of the rule (its code is the `unsafe` code that reads the tensor's
/// pointer): it queues its uses of the memory on this stream (work on another stream counts
/// once this stream waits for it), all of them before it calls the deleter or before the
/// [`DlpackRef`] is dropped, and it only reads a lent, `READ_ONLY` tensor. It need not wait for
/// that work to finish: the deleter may be called, or the lend end, with the work still queued.
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
    /// [`DlpackRef`] is dropped the legacy stream waits for it, so later writes and the free
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
    ///   for an export by value, or before the [`DlpackRef`] is dropped, for a lend;
    /// - a lent (`READ_ONLY`) tensor is only read.
    ///
    /// This crate's own imports of the tensor ([`DlpackTensor::from_dlpack`],
    /// [`DlpackTensor::from_dlpack_ref`], [`DlpackTensorMut::from_dlpack`]) meet all three by
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

/// What an export's tensor owns: the memory (a [`DeviceBuffer`]), or for a lent tensor the
/// memory's context and a pointer to its ordering record ([`Lent`]).
trait Exported: Send + Sync {
    fn context(&self) -> &Context;
    fn uses(&self) -> Option<&StreamUses>;
}

impl<T: Element> Exported for DeviceBuffer<T> {
    fn context(&self) -> &Context {
        DeviceBuffer::context(self)
    }
    fn uses(&self) -> Option<&StreamUses> {
        self.device_view().uses()
    }
}

/// Stands for the liveness of the context of a raw consumer stream that is not the memory's
/// (see [`foreign_stream`]).
type Liveness = Arc<dyn Any + Send + Sync>;

/// One export: the managed tensor (first, so a pointer to the export is one to the tensor and
/// back), the arrays its shape and strides point into, and the memory's owner.
#[repr(C)]
struct Export {
    managed: DLManagedTensorVersioned,
    shape: Box<[i64]>,
    strides: Box<[i64]>,
    owner: Box<dyn Exported>,
    /// For a raw consumer stream of another context: what the record's entry for it checks
    /// that context's liveness by. Dropped after `owner` (fields drop in order), whose free
    /// waits for that stream.
    _liveness: Option<Liveness>,
}

/// The deleter of every export of this crate: frees the [`Export`]. An export by value drops
/// its buffer, which is freed once the streams in its record are done, the consumer's among
/// them (events recorded on them now, after the consumer's work); a lend's end orders the
/// memory after the consumer's stream (see [`Lent`]).
unsafe extern "C" fn delete_export(managed: *mut DLManagedTensorVersioned) {
    if managed.is_null() {
        return;
    }
    // A deleter must not unwind; were a drop to panic, the rest of the export leaks instead
    // (and a panic of that panic's payload, dropped, is caught too).
    crate::error::panic::swallow_panic(|| {
        // SAFETY: every tensor with this deleter was made by `pack` from a `Box<Export>`
        // whose first field it is (repr(C)), and DLPack calls the deleter once.
        drop(unsafe { Box::from_raw(managed.cast::<Export>()) });
    });
}

/// The export behind `managed` if this crate made it (its deleter is [`delete_export`]).
fn exported_here(managed: &Dlpack) -> Option<&Export> {
    let raw = managed.as_ptr();
    // SAFETY: a `Managed` points to an initialized tensor for as long as it lives.
    let deleter = unsafe { (*raw).deleter }?;
    let ours: unsafe extern "C" fn(*mut DLManagedTensorVersioned) = delete_export;
    if !std::ptr::fn_addr_eq(deleter, ours) {
        return None;
    }
    // SAFETY: a tensor whose deleter is ours is one of our exports, since that deleter frees
    // it as a `Box<Export>` (nothing else may hand it out); the export lives as long as
    // `managed`, which owns it.
    Some(unsafe { &*raw.cast::<Export>() })
}

fn invalid(detail: impl Into<String>) -> Error {
    DlpackError::Invalid {
        detail: detail.into(),
    }
    .into()
}

/// Makes work queued on `waiter` from now on wait for the work queued on `signaler` so far:
/// an event of `signaler`'s context recorded there, which `waiter` waits for. `ctx` is the
/// context of the crate's side, current on return.
///
/// # Safety
/// Both handles are live streams (the null and per-thread handles meaning `ctx`'s).
unsafe fn stream_wait(ctx: &Context, waiter: sys::CUstream, signaler: sys::CUstream) -> Result<()> {
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
fn order_by_value(
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
/// waits for now and which waits for the consumer when the lend ends ([`Lent`]). Returns that
/// raw handle.
fn order_lend(
    ctx: &Context,
    uses: &StreamUses,
    consumer: ConsumerStream<'_>,
) -> Result<Option<sys::CUstream>> {
    match resolve(ctx, consumer)? {
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

/// The fields of a tensor's description that are checked before anything is ordered.
struct Layout {
    device_id: i32,
    ndim: i32,
    shape: Box<[i64]>,
    strides: Box<[i64]>,
}

impl Layout {
    fn of(ctx: &Context, shape: &[usize], strides: &[isize]) -> Result<Layout> {
        let device_id =
            i32::try_from(ctx.device().ordinal()).map_err(|_| invalid("the device ordinal exceeds i32"))?;
        let shape: Box<[i64]> = shape
            .iter()
            .map(|&d| i64::try_from(d))
            .collect::<std::result::Result<_, _>>()
            .map_err(|_| invalid("a dimension exceeds i64"))?;
        let strides: Box<[i64]> = strides.iter().map(|&s| s as i64).collect();
        let ndim = i32::try_from(shape.len()).map_err(|_| invalid("more than i32::MAX dimensions"))?;
        Ok(Layout {
            device_id,
            ndim,
            shape,
            strides,
        })
    }
}

/// Packs `owner`'s memory at `ptr + byte_offset` with `layout` into a managed tensor (the
/// consumer already ordered).
fn pack<T: DlpackElement>(
    owner: Box<dyn Exported>,
    layout: Layout,
    ptr: sys::CUdeviceptr,
    byte_offset: u64,
    read_only: bool,
    liveness: Option<Liveness>,
) -> Result<Dlpack> {
    let mut export = Box::new(Export {
        managed: DLManagedTensorVersioned {
            version: DLPackVersion::CURRENT,
            manager_ctx: std::ptr::null_mut(),
            deleter: Some(delete_export),
            flags: if read_only {
                DlpackFlags::READ_ONLY
            } else {
                DlpackFlags::empty()
            },
            dl_tensor: DLTensor {
                data: ptr as usize as *mut c_void,
                device: DLDevice {
                    device_type: DLDeviceType::CUDA,
                    device_id: layout.device_id,
                },
                ndim: layout.ndim,
                dtype: T::DTYPE,
                shape: std::ptr::null_mut(),
                strides: std::ptr::null_mut(),
                byte_offset,
            },
        },
        shape: layout.shape,
        strides: layout.strides,
        owner,
        _liveness: liveness,
    });
    // The boxed slices do not move with the box: the pointers stay valid as long as it lives.
    export.managed.dl_tensor.shape = export.shape.as_mut_ptr();
    export.managed.dl_tensor.strides = export.strides.as_mut_ptr();
    let raw = Box::into_raw(export);
    // SAFETY: `raw` is a live, exclusively held export.
    unsafe { (*raw).managed.manager_ctx = raw.cast() };
    // SAFETY: `raw` points to an initialized tensor owned here, whose shape and strides stay
    // readable and unchanged until its deleter (which does not unwind) frees them, once.
    unsafe { Dlpack::from_raw(raw.cast()) }.map_err(|e| invalid(e.to_string()))
}

/// Exports `buffer` by value, at `byte_offset` with this shape and strides (in elements).
fn export_owned<T: Element + DlpackElement>(
    buffer: DeviceBuffer<T>,
    byte_offset: u64,
    shape: &[usize],
    strides: &[isize],
    consumer: ConsumerStream<'_>,
) -> Result<Dlpack> {
    let layout = Layout::of(buffer.context(), shape, strides)?;
    let liveness = match buffer.device_view().uses() {
        Some(uses) => order_by_value(buffer.context(), uses, consumer)?,
        None => None,
    };
    let ptr = buffer.device_ptr();
    pack::<T>(Box::new(buffer), layout, ptr, byte_offset, false, liveness)
}

impl<T: Element + DlpackElement> DeviceBuffer<T> {
    /// Exports the buffer as a one-dimensional DLPack tensor, giving it up: the tensor's
    /// deleter frees it, stream-ordered like dropping it, after the streams that used it and
    /// after the work queued on the consumer's stream by the time the deleter is called.
    /// `consumer` is the stream the consumer will use it on, which waits for every use queued
    /// so far (see [`ConsumerStream`] for the consumer's side of the rule). The tensor is
    /// writable (not `READ_ONLY`). Import it back with [`DlpackTensor::from_dlpack`] or
    /// [`DlpackTensorMut::from_dlpack`].
    ///
    /// Fails on a consumer stream of another context ([`Error::WrongContext`]) or the
    /// per-thread handle ([`DlpackError::PerThreadConsumer`]); the buffer is then dropped.
    pub fn into_dlpack(self, consumer: ConsumerStream<'_>) -> Result<Dlpack> {
        let len = self.len();
        export_owned(self, 0, &[len], &[1], consumer)
    }
}

impl<T: Element + DlpackElement, D: Dimension> DeviceArray<T, D> {
    /// Exports the array as a DLPack tensor of its shape and strides (in elements; its offset
    /// is the tensor's `byte_offset`), giving it up; see [`DeviceBuffer::into_dlpack`].
    pub fn into_dlpack(self, consumer: ConsumerStream<'_>) -> Result<Dlpack> {
        let shape = self.shape().to_vec();
        let strides = self.strides().to_vec();
        let byte_offset = (self.offset() * size_of::<T>()) as u64;
        export_owned(self.data, byte_offset, &shape, &strides, consumer)
    }
}

/// The owner of a borrowed export: the memory's context and a pointer to its record (the
/// memory itself stays with its owner, borrowed by the [`DlpackRef`]), and the consumer's raw
/// stream, if it was named by a handle: when the lend ends (this is dropped, by the tensor's
/// deleter, when the [`DlpackRef`] is), the legacy default stream, which the record names,
/// waits for the work queued on it, so that later writes and the free wait for the consumer's
/// reads.
struct Lent {
    ctx: Context,
    uses: Option<NonNull<StreamUses>>,
    consumer: Option<sys::CUstream>,
}

// SAFETY: the record is a `StreamUses` (Sync), only read through `&`; the context is Send and
// Sync; a stream handle may be used from any thread.
unsafe impl Send for Lent {}
// SAFETY: as above.
unsafe impl Sync for Lent {}

impl Exported for Lent {
    fn context(&self) -> &Context {
        &self.ctx
    }
    fn uses(&self) -> Option<&StreamUses> {
        // SAFETY: the memory, and its record, are borrowed by the `DlpackRef` that owns the
        // only handle of this export, so they outlive it.
        self.uses.map(|p| unsafe { p.as_ref() })
    }
}

impl Drop for Lent {
    fn drop(&mut self) {
        let Some(raw) = self.consumer else { return };
        // SAFETY: the legacy stream of the memory's context is live, and so is `raw` until the
        // lend has ended (ForeignStream::from_raw's contract), which is after this returns.
        if unsafe { stream_wait(&self.ctx, std::ptr::null_mut(), raw) }.is_err() {
            // No event could be recorded: the host waits for the consumer instead. An error
            // there is a failed context, whose work has ended.
            // SAFETY: as above.
            let _ = unsafe { calls::stream_synchronize(raw) };
        }
    }
}

/// A read-only DLPack tensor lent out of a borrow of this crate's memory
/// ([`DeviceBuffer::to_dlpack`], [`DeviceArrayBase::to_dlpack`]): it cannot outlive the borrow,
/// and hands out only a shared reference to its tensor, so nothing can take the tensor past
/// it. Import it with [`DlpackTensor::from_dlpack_ref`]`(lent.tensor())`, or give
/// [`tensor`](Self::tensor)`().as_ptr()` to a library that borrows (and does not delete) it.
///
/// Dropping it ends the lend: the consumer must have queued every read by then (it need not
/// have finished them); writes of the memory after the lend, and its free, wait for the
/// consumer's stream on the GPU (see [`ConsumerStream`]).
pub struct DlpackRef<'a> {
    tensor: Dlpack,
    _memory: PhantomData<&'a ()>,
}

impl DlpackRef<'_> {
    /// The tensor, flagged `READ_ONLY`.
    pub fn tensor(&self) -> &Dlpack {
        &self.tensor
    }
}

impl std::fmt::Debug for DlpackRef<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "DlpackRef({:p})", self.tensor.as_ptr())
    }
}

/// Lends `view` (of a storage whose array layout is given) as a read-only tensor.
fn lend<'a, T: Element + DlpackElement>(
    view: DeviceView<'a, T>,
    byte_offset: u64,
    shape: &[usize],
    strides: &[isize],
    consumer: ConsumerStream<'_>,
) -> Result<DlpackRef<'a>> {
    let ctx = view.context().clone();
    let layout = Layout::of(&ctx, shape, strides)?;
    let consumer = match view.uses() {
        Some(uses) => order_lend(&ctx, uses, consumer)?,
        // Untracked memory (`DeviceView::from_raw_parts`): its ordering is its maker's.
        None => resolve(&ctx, consumer).map(|_| None)?,
    };
    let owner = Lent {
        ctx,
        uses: view.uses().map(NonNull::from),
        consumer,
    };
    let ptr = view.device_ptr();
    let tensor = pack::<T>(Box::new(owner), layout, ptr, byte_offset, true, None)?;
    Ok(DlpackRef {
        tensor,
        _memory: PhantomData,
    })
}

impl<T: Element + DlpackElement> DeviceBuffer<T> {
    /// Lends the buffer as a read-only, one-dimensional DLPack tensor for as long as it is
    /// borrowed: the buffer cannot be written or dropped meanwhile, and once the
    /// [`DlpackRef`] is dropped, writes and the free wait (on the GPU) for the reads the
    /// consumer queued on its stream. `consumer` waits for the last write queued so far (see
    /// [`ConsumerStream`]).
    pub fn to_dlpack(&self, consumer: ConsumerStream<'_>) -> Result<DlpackRef<'_>> {
        lend(self.device_view(), 0, &[self.len()], &[1], consumer)
    }
}

impl<S: Storage<Elem: Element>, D: Dimension> DeviceArrayBase<S, D>
where
    S::Elem: DlpackElement,
{
    /// Lends the array (any storage: owned, pooled, a view) as a read-only DLPack tensor of its
    /// shape and strides, for as long as it is borrowed; see [`DeviceBuffer::to_dlpack`].
    pub fn to_dlpack(&self, consumer: ConsumerStream<'_>) -> Result<DlpackRef<'_>> {
        let byte_offset = (self.offset() * size_of::<S::Elem>()) as u64;
        lend(
            self.storage().device_view(),
            byte_offset,
            self.shape(),
            self.strides(),
            consumer,
        )
    }
}

/// The checked layout of a tensor to import: where its first element is, how many elements it
/// has, and its shape and strides in elements.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Checked {
    pub(crate) address: u64,
    pub(crate) len: usize,
    pub(crate) shape: Vec<usize>,
    pub(crate) strides: Vec<isize>,
}

/// Checks that `t` (of a tensor of `version` with `flags`) can be imported as contiguous
/// memory of `T` on the device of ordinal `device`, for writing when `write`.
///
/// # Safety
/// `t.shape` and (when not null) `t.strides` point to `t.ndim` readable values each, when
/// `t.ndim` is positive.
pub(crate) unsafe fn check_tensor<T: DlpackElement>(
    t: &DLTensor,
    version: DLPackVersion,
    flags: DlpackFlags,
    device: usize,
    write: bool,
) -> std::result::Result<Checked, DlpackError> {
    if t.device.device_type != DLDeviceType::CUDA {
        return Err(DlpackError::DeviceType {
            device_type: t.device.device_type.0,
        });
    }
    let expected = i32::try_from(device).unwrap_or(i32::MAX);
    if t.device.device_id != expected {
        return Err(DlpackError::Device {
            device_id: t.device.device_id,
            expected,
        });
    }
    let want = T::DTYPE;
    if !t.dtype.matches(want) {
        return Err(DlpackError::Dtype {
            code: t.dtype.code.0,
            bits: t.dtype.bits,
            lanes: t.dtype.lanes,
            rust_type: std::any::type_name::<T>(),
            expected_code: want.code.0,
            expected_bits: want.bits,
        });
    }
    if write && flags.contains(DlpackFlags::READ_ONLY) {
        return Err(DlpackError::ReadOnly);
    }
    let bad = |detail: String| DlpackError::Invalid { detail };
    let ndim = usize::try_from(t.ndim).map_err(|_| bad(format!("ndim is {}", t.ndim)))?;
    let raw_shape: &[i64] = if ndim == 0 {
        &[]
    } else if t.shape.is_null() {
        return Err(bad("the shape pointer is null".into()));
    } else {
        // SAFETY: the caller's promise.
        unsafe { std::slice::from_raw_parts(t.shape, ndim) }
    };
    let shape = raw_shape
        .iter()
        .map(|&d| usize::try_from(d))
        .collect::<std::result::Result<Vec<_>, _>>()
        .map_err(|_| bad(format!("the shape {raw_shape:?} has a negative dimension")))?;
    let raw_strides: Vec<i64> = if ndim == 0 {
        Vec::new()
    } else if t.strides.is_null() {
        // Before DLPack 1.2, no strides meant C order; since, they are required.
        if version.major > 1 || (version.major == 1 && version.minor >= 2) {
            return Err(bad(format!(
                "the strides pointer is null, which DLPack {}.{} does not allow",
                version.major, version.minor
            )));
        }
        layout::c_strides(&shape).into_iter().map(|s| s as i64).collect()
    } else {
        // SAFETY: the caller's promise.
        unsafe { std::slice::from_raw_parts(t.strides, ndim) }.to_vec()
    };
    let len = layout::checked_size("DLPack import", &shape)
        .ok()
        .and_then(|n| n.checked_mul(size_of::<T>()).map(|_| n))
        .ok_or_else(|| {
            bad(format!(
                "the shape {raw_shape:?} holds more bytes than a usize counts"
            ))
        })?;
    let strides_err = || DlpackError::Strides {
        shape: raw_shape.to_vec(),
        strides: raw_strides.clone(),
    };
    let strides = raw_strides
        .iter()
        .map(|&s| isize::try_from(s))
        .collect::<std::result::Result<Vec<_>, _>>()
        .map_err(|_| strides_err())?;
    if !layout::is_c_contiguous(&shape, &strides) && !layout::is_f_contiguous(&shape, &strides) {
        return Err(strides_err());
    }
    if len > 0 && t.data.is_null() {
        return Err(bad(format!(
            "the data pointer is null, but the tensor has {len} elements"
        )));
    }
    let address = (t.data as usize as u64)
        .checked_add(t.byte_offset)
        .ok_or_else(|| bad("data + byte_offset overflows".into()))?;
    if len > 0 && address % align_of::<T>() as u64 != 0 {
        return Err(DlpackError::Misaligned {
            address,
            align: align_of::<T>(),
            rust_type: std::any::type_name::<T>(),
        });
    }
    let end = (len * size_of::<T>()) as u64;
    if address.checked_add(end).is_none() {
        return Err(bad("the tensor's memory wraps around the address space".into()));
    }
    Ok(Checked {
        address: if len == 0 { 0 } else { address },
        len,
        shape,
        strides,
    })
}

/// Checks `managed` (see [`check_tensor`]).
fn check_managed<T: DlpackElement>(managed: &Dlpack, device: usize, write: bool) -> Result<Checked> {
    // SAFETY: a `Managed` points to an initialized tensor whose shape and strides stay
    // readable and unchanged while it lives.
    let t = unsafe { managed.tensor() };
    // SAFETY: as above.
    let checked = unsafe { check_tensor::<T>(t, managed.version(), managed.flags(), device, write) }?;
    Ok(checked)
}

/// The record of the streams that use imported memory.
enum Record {
    /// Memory of another library: a record of the uses made here.
    Own(Box<StreamUses>),
    /// Memory this crate exported: the buffer's own record, inside the export (or, for a lent
    /// tensor, with the memory the [`DlpackRef`] borrows for longer than the tensor lives).
    Export(NonNull<StreamUses>),
}

/// What [`DlpackTensor`] and [`DlpackTensorMut`] share.
struct Imported<'p, T> {
    address: sys::CUdeviceptr,
    len: usize,
    shape: Vec<usize>,
    strides: Vec<isize>,
    ctx: Context,
    record: Record,
    /// The tensor, when the import owns it; dropped after the uses recorded here are done.
    owner: Option<Dlpack>,
    _producer: Producer<'p, T>,
}

/// The borrow of the producer's tensor (when borrowed) and the element type.
type Producer<'p, T> = PhantomData<(&'p Dlpack, fn() -> T)>;

// SAFETY: the record is a `StreamUses` (Sync) that lives as long as the import; the tensor is
// Send and Sync; the rest is plain data or Send and Sync.
unsafe impl<T> Send for Imported<'_, T> {}
// SAFETY: as above.
unsafe impl<T> Sync for Imported<'_, T> {}

impl<'p, T: Element + DlpackElement> Imported<'p, T> {
    /// An import of one of our exports, `tensor`, through its buffer's record; the import owns
    /// the tensor (`owner`), or borrows it for `'p`.
    fn of_export(tensor: &Dlpack, write: bool) -> Result<impl FnOnce(Option<Dlpack>) -> Self> {
        let ours = exported_here(tensor).ok_or(DlpackError::NotExportedHere)?;
        let ctx = ours.owner.context().clone();
        let uses = ours
            .owner
            .uses()
            .ok_or_else(|| invalid("the exported memory has no ordering record"))?;
        // The record lives in the heap with the export as long as the tensor (or with the
        // memory a `DlpackRef` lends, which outlives its tensor).
        let uses = NonNull::from(uses);
        let c = check_managed::<T>(tensor, ctx.device().ordinal(), write)?;
        Ok(move |owner| Imported {
            address: c.address,
            len: c.len,
            shape: c.shape,
            strides: c.strides,
            ctx,
            record: Record::Export(uses),
            owner,
            _producer: PhantomData,
        })
    }

    /// An import that owns `tensor`: of our export through its record, else of another
    /// library's memory, ordered after `producer` on `consumer`.
    ///
    /// # Safety
    /// That of [`DlpackTensor::from_foreign`].
    unsafe fn owning(
        tensor: Dlpack,
        consumer: &Stream,
        producer: ProducerStream<'_>,
        write: bool,
    ) -> Result<Imported<'static, T>> {
        if exported_here(&tensor).is_some() {
            return Imported::owning_ours(tensor, write);
        }
        let ctx = consumer.context().clone();
        let c = check_managed::<T>(&tensor, ctx.device().ordinal(), write)?;
        match producer {
            // SAFETY: streams of this crate are live while borrowed.
            ProducerStream::Stream(s) => unsafe { stream_wait(&ctx, consumer.raw(), s.raw()) }?,
            // SAFETY: ForeignStream's contract.
            ProducerStream::Foreign(f) => unsafe { stream_wait(&ctx, consumer.raw(), f.raw) }?,
            ProducerStream::Ready => {}
        }
        let uses = Box::new(StreamUses::new());
        // The consumer stands for the producer's work: uses on other streams wait for it.
        uses.write_on(consumer.inner())?;
        Ok(Imported {
            address: c.address,
            len: c.len,
            shape: c.shape,
            strides: c.strides,
            ctx,
            record: Record::Own(uses),
            owner: Some(tensor),
            _producer: PhantomData,
        })
    }
}

impl<T> Imported<'_, T> {
    fn uses(&self) -> &StreamUses {
        match &self.record {
            Record::Own(u) => u,
            // SAFETY: the record lives as long as the tensor (see `Record::Export`), which this
            // import owns, or borrows for 'p, which outlives it.
            Record::Export(p) => unsafe { p.as_ref() },
        }
    }

    fn view(&self) -> DeviceView<'_, T> {
        DeviceView::tracked(self.address, self.len, &self.ctx, self.uses())
    }

    fn view_mut(&mut self) -> DeviceViewMut<'_, T> {
        DeviceViewMut::tracked(self.address, self.len, &self.ctx, self.uses())
    }
}

impl<T> Drop for Imported<'_, T> {
    fn drop(&mut self) {
        if let (Record::Own(uses), Some(_)) = (&self.record, &self.owner) {
            // Another library's deleter may free the memory at once: wait for the work queued
            // on it here first. An error is a failed context, whose work has ended.
            let _ = uses.host_write();
        }
        // Then `owner` drops: the producer's deleter runs (ours frees the buffer
        // stream-ordered, with the record that holds the uses made here).
    }
}

/// A DLPack tensor used read-only by this crate: device memory kernels and copies take as a
/// `const T*` ([`DeviceRead`]), and an array ([`DlpackTensor::array`]). `'p` is the lifetime of
/// the producer's tensor when borrowed ([`DlpackTensor::from_dlpack_ref`]), `'static` when the
/// import owns it.
pub struct DlpackTensor<'p, T>(Imported<'p, T>);

/// A DLPack tensor this crate may write: device memory kernels and copies take as a `T*`
/// ([`DeviceWrite`]), and an array ([`DlpackTensorMut::array_mut`]). Refuses `READ_ONLY`
/// tensors. Owns the tensor.
pub struct DlpackTensorMut<T>(Imported<'static, T>);

impl<T: Element + DlpackElement> DlpackTensor<'static, T> {
    /// Imports, read-only, a tensor this crate exported ([`DeviceBuffer::into_dlpack`],
    /// [`DeviceArray::into_dlpack`]), owning it: the uses are ordered through the exported
    /// buffer's own record, so nothing needs naming a stream. Another library's tensor is
    /// refused with [`DlpackError::NotExportedHere`]: see [`from_foreign`](Self::from_foreign).
    pub fn from_dlpack(tensor: Dlpack) -> Result<Self> {
        Ok(DlpackTensor(Imported::owning_ours(tensor, false)?))
    }

    /// Imports, read-only, any CUDA tensor, owning it: `consumer` waits for the work of the
    /// producer queued on `producer`, and is the stream later uses on other streams wait for.
    /// A tensor this crate exported is ordered through its buffer's record instead. Dropping
    /// the import waits on the host for the work queued on it, then calls the tensor's deleter.
    ///
    /// # Safety
    /// - the tensor describes memory that kernels of `consumer`'s context may read (device
    ///   memory of that context or one it has peer access to), valid until its deleter is
    ///   called, and whose every bit pattern is a valid `T`;
    /// - the producer's work writing the memory is queued on `producer`, or complete
    ///   ([`ProducerStream::Ready`]);
    /// - nothing else (the producer or a third library) writes the memory while the import
    ///   lives and its queued work runs.
    pub unsafe fn from_foreign(
        tensor: Dlpack,
        consumer: &Stream,
        producer: ProducerStream<'_>,
    ) -> Result<Self> {
        // SAFETY: the caller's promises.
        Ok(DlpackTensor(unsafe {
            Imported::owning(tensor, consumer, producer, false)
        }?))
    }
}

impl<T: Element + DlpackElement> Imported<'static, T> {
    /// An import that owns `tensor`, one of our exports (else refused).
    fn owning_ours(tensor: Dlpack, write: bool) -> Result<Self> {
        let build = Imported::of_export(&tensor, write)?;
        Ok(build(Some(tensor)))
    }
}

impl<'p, T: Element + DlpackElement> DlpackTensor<'p, T> {
    /// Imports, read-only, a tensor this crate exported, borrowing it: the import (and every
    /// view of it) cannot outlive `tensor`. Uses are ordered through the exported buffer's
    /// record, which also keeps the memory allocated until they are done. Another library's
    /// tensor is refused with [`DlpackError::NotExportedHere`].
    pub fn from_dlpack_ref(tensor: &'p Dlpack) -> Result<Self> {
        Ok(DlpackTensor(Imported::of_export(tensor, false)?(None)))
    }
}

impl<T: Element + DlpackElement> DlpackTensorMut<T> {
    /// Imports, writable, a tensor this crate exported, owning it (see
    /// [`DlpackTensor::from_dlpack`]). Refuses a `READ_ONLY` tensor
    /// ([`DlpackError::ReadOnly`]).
    pub fn from_dlpack(tensor: Dlpack) -> Result<Self> {
        Ok(DlpackTensorMut(Imported::owning_ours(tensor, true)?))
    }

    /// Imports, writable, any CUDA tensor, owning it (see [`DlpackTensor::from_foreign`]).
    /// Refuses a `READ_ONLY` tensor ([`DlpackError::ReadOnly`]).
    ///
    /// # Safety
    /// That of [`DlpackTensor::from_foreign`], and: nothing else reads the memory either while
    /// the import lives and its queued work runs.
    pub unsafe fn from_foreign(
        tensor: Dlpack,
        consumer: &Stream,
        producer: ProducerStream<'_>,
    ) -> Result<Self> {
        // SAFETY: the caller's promises.
        Ok(DlpackTensorMut(unsafe {
            Imported::owning(tensor, consumer, producer, true)
        }?))
    }
}

macro_rules! common_methods {
    ($ty:ty) => {
        /// The length of each axis.
        pub fn shape(&self) -> &[usize] {
            &self.0.shape
        }

        /// The strides of each axis, in elements.
        pub fn strides(&self) -> &[isize] {
            &self.0.strides
        }

        /// The number of elements.
        pub fn len(&self) -> usize {
            self.0.len
        }

        /// True when there are no elements.
        pub fn is_empty(&self) -> bool {
            self.0.len == 0
        }

        /// The device address of the first element.
        pub fn device_ptr(&self) -> sys::CUdeviceptr {
            self.0.address
        }

        /// The context the memory is used in.
        pub fn context(&self) -> &Context {
            &self.0.ctx
        }

        /// The tensor as a read-only array of its shape and strides.
        pub fn array(&self) -> Result<DeviceArrayView<'_, T>> {
            DeviceArrayBase::from_parts(self.0.view(), 0, &self.0.shape, &self.0.strides)
        }

        /// The tensor, moved into an array of its shape and strides that owns it.
        pub fn into_array(self) -> Result<DeviceArrayBase<$ty, IxDyn>> {
            let (shape, strides) = (self.0.shape.clone(), self.0.strides.clone());
            DeviceArrayBase::from_parts(self, 0, &shape, &strides)
        }
    };
}

impl<'p, T: Element> DlpackTensor<'p, T> {
    common_methods!(DlpackTensor<'p, T>);
}

impl<T: Element> DlpackTensorMut<T> {
    common_methods!(DlpackTensorMut<T>);

    /// The tensor as a writable array of its shape and strides.
    pub fn array_mut(&mut self) -> Result<DeviceArrayViewMut<'_, T>> {
        let (shape, strides) = (self.0.shape.clone(), self.0.strides.clone());
        DeviceArrayBase::from_parts(self.0.view_mut(), 0, &shape, &strides)
    }
}

impl<T> std::fmt::Debug for DlpackTensor<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "DlpackTensor({:#x}, shape {:?}, strides {:?})",
            self.0.address, self.0.shape, self.0.strides
        )
    }
}

impl<T> std::fmt::Debug for DlpackTensorMut<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "DlpackTensorMut({:#x}, shape {:?}, strides {:?})",
            self.0.address, self.0.shape, self.0.strides
        )
    }
}

impl<T: Element> DeviceRead<T> for DlpackTensor<'_, T> {
    #[inline]
    fn device_view(&self) -> DeviceView<'_, T> {
        self.0.view()
    }
}

impl<T: Element> DeviceRead<T> for DlpackTensorMut<T> {
    #[inline]
    fn device_view(&self) -> DeviceView<'_, T> {
        self.0.view()
    }
}

impl<T: Element> DeviceWrite<T> for DlpackTensorMut<T> {
    #[inline]
    fn device_view_mut(&mut self) -> DeviceViewMut<'_, T> {
        self.0.view_mut()
    }
}

impl<T: Element> Storage for DlpackTensor<'_, T> {
    type Elem = T;
}
impl<T: Element> Storage for DlpackTensorMut<T> {
    type Elem = T;
}
impl<T: Element> StorageMut for DlpackTensorMut<T> {}

#[cfg(test)]
mod tests;
