//! Exports: this crate's memory as a DLPack tensor, by value ([`DeviceBuffer::into_dlpack`],
//! [`DeviceArray::into_dlpack`]) or lent ([`DlpackRef`]), the tensor's deleter, and the test of
//! a tensor being one of these exports.

use std::ffi::c_void;
use std::marker::PhantomData;
use std::mem::size_of;
use std::ptr::NonNull;

use cudarc::driver::sys;
use dlpark::ffi::{DLDevice, DLDeviceType, DLManagedTensorVersioned, DLPackVersion, DLTensor};
use dlpark::{DlpackElement, DlpackFlags};
use ndarray::Dimension;

use crate::driver::calls;
use crate::driver::context::core::Context;
use crate::driver::memory::buffer::DeviceBuffer;
use crate::driver::memory::view::{DeviceRead, DeviceView};
use crate::driver::ordering::StreamUses;
use crate::error::{DlpackError, Error, Result};
use crate::gpuarray::{DeviceArray, DeviceArrayBase, Element, Storage};

use super::streams::{order_by_value, order_lend, stream_wait, ConsumerStream, Liveness};

/// An owned DLPack tensor of the current, versioned ABI (`DLManagedTensorVersioned`): dropping
/// it calls its producer's deleter. `dlpark`'s type, re-exported.
pub type Dlpack = dlpark::versioned::Dlpack;

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
pub(super) struct Export {
    managed: DLManagedTensorVersioned,
    shape: Box<[i64]>,
    strides: Box<[i64]>,
    owner: Box<dyn Exported>,
    /// For a raw consumer stream of another context: what the record's entry for it checks
    /// that context's liveness by. Dropped after `owner` (fields drop in order), whose free
    /// waits for that stream.
    _liveness: Option<Liveness>,
}

impl Export {
    /// The context of the exported memory.
    pub(super) fn context(&self) -> &Context {
        self.owner.context()
    }

    /// The exported memory's record of its uses (none for untracked memory).
    pub(super) fn uses(&self) -> Option<&StreamUses> {
        self.owner.uses()
    }
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
pub(super) fn exported_here(managed: &Dlpack) -> Option<&Export> {
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

/// A malformed tensor ([`DlpackError::Invalid`]), for this `detail`.
pub(super) fn invalid(detail: impl Into<String>) -> Error {
    DlpackError::Invalid {
        detail: detail.into(),
    }
    .into()
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
    /// writable (not `READ_ONLY`). Import it back with
    /// [`DlpackTensor::from_dlpack`](super::DlpackTensor::from_dlpack) or
    /// [`DlpackTensorMut::from_dlpack`](super::DlpackTensorMut::from_dlpack).
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
/// it. Import it with
/// [`DlpackTensor::from_dlpack_ref`](super::DlpackTensor::from_dlpack_ref)`(lent.tensor())`, or
/// give [`tensor`](Self::tensor)`().as_ptr()` to a library that borrows (and does not delete)
/// it.
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
    let consumer = order_lend(&ctx, view.uses(), consumer)?;
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
