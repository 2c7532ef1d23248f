//! DLPack (the `dlpack` feature): this crate's buffers and arrays handed to other libraries,
//! and theirs used here, without a copy, as `dlpark`'s versioned managed tensors
//! ([`Dlpack`], a `DLManagedTensorVersioned`).
//!
//! - **Export** by value: [`DeviceBuffer::into_dlpack`] and [`DeviceArray::into_dlpack`] move
//!   the buffer into the tensor; the tensor's deleter drops it, and the memory is freed
//!   stream-ordered like any buffer's. The [`ConsumerStream`] is the protocol's `stream`
//!   argument: the stream the consumer will use the memory on waits (on the GPU) for every use
//!   queued so far, so the consumer need not synchronize.
//! - **Export** by borrow: [`DeviceBuffer::to_dlpack`] and [`DeviceArrayBase::to_dlpack`] lend
//!   the memory as a `READ_ONLY` tensor ([`DlpackRef`]) that cannot outlive the borrow; the
//!   consumer's stream waits for the last write queued so far.
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

use std::ffi::c_void;
use std::marker::PhantomData;
use std::mem::{align_of, size_of};
use std::ptr::NonNull;

use cudarc::driver::sys;
use dlpark::ffi::{DLDevice, DLDeviceType, DLManagedTensorVersioned, DLPackVersion, DLTensor};
use dlpark::{DlpackElement, DlpackFlags};
use ndarray::{Dimension, IxDyn};

use crate::driver::calls;
use crate::driver::context::core::Context;
use crate::driver::context::current::bind_raw;
use crate::driver::memory::buffer::DeviceBuffer;
use crate::driver::memory::view::{DeviceRead, DeviceView, DeviceViewMut, DeviceWrite};
use crate::driver::ordering::{new_event, StreamUses};
use crate::driver::stream::Stream;
use crate::error::{DlpackError, Error, Result};
use crate::gpuarray::{layout, DeviceArray, DeviceArrayBase, DeviceArrayView, DeviceArrayViewMut, Element};
use crate::gpuarray::{Storage, StorageMut};

/// An owned DLPack tensor of the current, versioned ABI (`DLManagedTensorVersioned`): dropping
/// it calls its producer's deleter. `dlpark`'s type, re-exported.
pub type Dlpack = dlpark::versioned::Dlpack;

/// A CUDA stream of another library (PyTorch's, CuPy's, cudarc's...), for the stream rule of the
/// protocol. Borrows the stream's owner where there is one, so the handle stays live.
#[derive(Debug, Clone, Copy)]
pub struct ForeignStream<'s> {
    raw: sys::CUstream,
    _owner: PhantomData<&'s ()>,
}

impl ForeignStream<'static> {
    /// A stream known by its raw handle only.
    ///
    /// # Safety
    /// `raw` is a live CUDA stream of a context of this process (or the null handle, or
    /// `CU_STREAM_LEGACY` / `CU_STREAM_PER_THREAD`, meaning those of the context of the crate's
    /// stream it is used with) until every call given this value has returned.
    pub unsafe fn from_raw(raw: sys::CUstream) -> ForeignStream<'static> {
        ForeignStream {
            raw,
            _owner: PhantomData,
        }
    }
}

impl<'s> ForeignStream<'s> {
    /// A cudarc stream (as the one `dlpark`'s cudarc adapter names as the current stream of its
    /// exports), live as long as it is borrowed.
    pub fn cudarc(stream: &'s cudarc::driver::CudaStream) -> ForeignStream<'s> {
        ForeignStream {
            raw: stream.cu_stream(),
            _owner: PhantomData,
        }
    }

    /// The raw handle.
    pub fn raw(&self) -> sys::CUstream {
        self.raw
    }
}

/// The stream a consumer of an export will use the memory on: DLPack's `stream` argument of
/// `__dlpack__`. The producer (here) makes it wait for the work queued on the memory so far.
#[derive(Debug, Clone, Copy)]
pub enum ConsumerStream<'s> {
    /// A stream of this crate, of the memory's context: it waits for every use of the memory
    /// queued so far (for a lent, read-only tensor: the last write), through the memory's
    /// record (no driver call when it is the last user).
    Stream(&'s Stream),
    /// Another library's stream: it waits for an event recorded after those uses.
    Foreign(ForeignStream<'s>),
    /// No waiting (the protocol's `stream=-1`): the consumer orders its work itself, for
    /// instance by synchronizing the streams that used the memory.
    Unordered,
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

/// One export: the managed tensor (first, so a pointer to the export is one to the tensor and
/// back), the arrays its shape and strides point into, and the memory's owner.
#[repr(C)]
struct Export {
    managed: DLManagedTensorVersioned,
    shape: Box<[i64]>,
    strides: Box<[i64]>,
    owner: Box<dyn Exported>,
}

/// The deleter of every export of this crate: frees the [`Export`] (the buffer is freed once
/// the streams that used it are done, as every buffer is).
unsafe extern "C" fn delete_export(managed: *mut DLManagedTensorVersioned) {
    if managed.is_null() {
        return;
    }
    // A deleter must not unwind; were a drop to panic, the rest of the export leaks instead
    // (and a panic of that panic's payload, dropped, is caught too).
    crate::error::panic::swallow_panic(|| {
        // SAFETY: every tensor with this deleter was made by `export` from a `Box<Export>`
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

/// Makes the consumer's stream wait for the uses of the memory queued so far: every use when
/// the consumer may write, the last write when it only reads (`read_only`).
fn order_for_consumer(
    ctx: &Context,
    uses: &StreamUses,
    consumer: ConsumerStream<'_>,
    read_only: bool,
) -> Result<()> {
    let order_on = |s: &std::sync::Arc<crate::driver::ordering::StreamInner>| {
        if read_only {
            uses.read_on(s)
        } else {
            uses.write_on(s)
        }
    };
    match consumer {
        ConsumerStream::Stream(s) => {
            if !s.context().is(ctx.raw()) {
                return Err(Error::WrongContext {
                    what: "the consumer stream of a DLPack export",
                });
            }
            order_on(s.inner())
        }
        ConsumerStream::Foreign(f) => {
            // The legacy stream waits for the uses, and the consumer's stream for it.
            order_on(ctx.legacy())?;
            // SAFETY: the legacy stream of `ctx` is live; `f` is (ForeignStream's contract).
            unsafe { stream_wait(ctx, f.raw, std::ptr::null_mut()) }
        }
        ConsumerStream::Unordered => Ok(()),
    }
}

/// Packs `owner`'s memory at `ptr + byte_offset` with this layout into a managed tensor, after
/// ordering `consumer` after its uses.
fn export<T: DlpackElement>(
    owner: Box<dyn Exported>,
    ptr: sys::CUdeviceptr,
    byte_offset: u64,
    shape: &[usize],
    strides: &[isize],
    consumer: ConsumerStream<'_>,
    read_only: bool,
) -> Result<Dlpack> {
    let ctx = owner.context();
    let device_id =
        i32::try_from(ctx.device().ordinal()).map_err(|_| invalid("the device ordinal exceeds i32"))?;
    let shape: Box<[i64]> = shape
        .iter()
        .map(|&d| i64::try_from(d))
        .collect::<std::result::Result<_, _>>()
        .map_err(|_| invalid("a dimension exceeds i64"))?;
    let strides: Box<[i64]> = strides.iter().map(|&s| s as i64).collect();
    let ndim = i32::try_from(shape.len()).map_err(|_| invalid("more than i32::MAX dimensions"))?;
    if let Some(uses) = owner.uses() {
        order_for_consumer(ctx, uses, consumer, read_only)?;
    }
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
                    device_id,
                },
                ndim,
                dtype: T::DTYPE,
                shape: std::ptr::null_mut(),
                strides: std::ptr::null_mut(),
                byte_offset,
            },
        },
        shape,
        strides,
        owner,
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

impl<T: Element + DlpackElement> DeviceBuffer<T> {
    /// Exports the buffer as a one-dimensional DLPack tensor, giving it up: the tensor's
    /// deleter frees it (stream-ordered, like dropping it). `consumer` is the stream the
    /// consumer will use it on, which waits for every use queued so far (see
    /// [`ConsumerStream`]). The tensor is writable (not `READ_ONLY`). Import it back with
    /// [`DlpackTensor::from_dlpack`] or [`DlpackTensorMut::from_dlpack`].
    ///
    /// Fails on a consumer stream of another context; the buffer is then dropped.
    pub fn into_dlpack(self, consumer: ConsumerStream<'_>) -> Result<Dlpack> {
        let (ptr, len) = (self.device_ptr(), self.len());
        export::<T>(Box::new(self), ptr, 0, &[len], &[1], consumer, false)
    }
}

impl<T: Element + DlpackElement, D: Dimension> DeviceArray<T, D> {
    /// Exports the array as a DLPack tensor of its shape and strides (in elements; its offset
    /// is the tensor's `byte_offset`), giving it up; see [`DeviceBuffer::into_dlpack`].
    pub fn into_dlpack(self, consumer: ConsumerStream<'_>) -> Result<Dlpack> {
        let shape = self.shape().to_vec();
        let strides = self.strides().to_vec();
        let byte_offset = (self.offset() * size_of::<T>()) as u64;
        let data = self.data;
        let ptr = data.device_ptr();
        export::<T>(
            Box::new(data),
            ptr,
            byte_offset,
            &shape,
            &strides,
            consumer,
            false,
        )
    }
}

/// The owner of a borrowed export: the memory's context and a pointer to its record (the
/// memory itself stays with its owner, borrowed by the [`DlpackRef`]).
struct Lent {
    ctx: Context,
    uses: Option<NonNull<StreamUses>>,
}

// SAFETY: the record is a `StreamUses` (Sync), only read through `&`; the context is Send and
// Sync.
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

/// A read-only DLPack tensor lent out of a borrow of this crate's memory
/// ([`DeviceBuffer::to_dlpack`], [`DeviceArrayBase::to_dlpack`]): it cannot outlive the borrow,
/// and hands out only a shared reference to its tensor, so nothing can take the tensor past
/// it. Import it with [`DlpackTensor::from_dlpack_ref`]`(lent.tensor())`, or give
/// [`tensor`](Self::tensor)`().as_ptr()` to a library that borrows (and does not delete) it.
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
    let owner = Lent {
        ctx: view.context().clone(),
        uses: view.uses().map(NonNull::from),
    };
    let ptr = view.device_ptr();
    let tensor = export::<T>(Box::new(owner), ptr, byte_offset, shape, strides, consumer, true)?;
    Ok(DlpackRef {
        tensor,
        _memory: PhantomData,
    })
}

impl<T: Element + DlpackElement> DeviceBuffer<T> {
    /// Lends the buffer as a read-only, one-dimensional DLPack tensor for as long as it is
    /// borrowed: the buffer cannot be written or dropped meanwhile. `consumer` waits for the
    /// last write queued so far (see [`ConsumerStream`]).
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
