//! Imports: a DLPack tensor checked ([`check_tensor`]) and used as this crate's memory, read-only
//! ([`DlpackTensor`]) or writable ([`DlpackTensorMut`]), ordered through the buffer's own record
//! for one of this crate's exports and after the producer's stream for another library's.

use std::marker::PhantomData;
use std::mem::{align_of, size_of};
use std::ptr::NonNull;

use cudarc::driver::sys;
use dlpark::ffi::{DLDeviceType, DLPackVersion, DLTensor};
use dlpark::{DlpackElement, DlpackFlags};
use ndarray::IxDyn;

use crate::driver::context::core::Context;
use crate::driver::memory::view::{DeviceRead, DeviceView, DeviceViewMut, DeviceWrite};
use crate::driver::ordering::StreamUses;
use crate::driver::stream::Stream;
use crate::error::{DlpackError, Result};
use crate::gpuarray::{layout, DeviceArrayBase, DeviceArrayView, DeviceArrayViewMut, Element};
use crate::gpuarray::{Storage, StorageMut};

use super::export::{exported_here, invalid, Dlpack};
use super::streams::{stream_wait, ProducerStream};

/// The checked layout of a tensor to import: where its first element is, how many elements it
/// has, and its shape and strides in elements.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Checked {
    pub(super) address: u64,
    pub(super) len: usize,
    pub(super) shape: Vec<usize>,
    pub(super) strides: Vec<isize>,
}

/// Checks that `t` (of a tensor of `version` with `flags`) can be imported as contiguous
/// memory of `T` on the device of ordinal `device`, for writing when `write`.
///
/// # Safety
/// `t.shape` and (when not null) `t.strides` point to `t.ndim` readable values each, when
/// `t.ndim` is positive.
pub(super) unsafe fn check_tensor<T: DlpackElement>(
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
    /// tensor, with the memory the [`DlpackRef`](super::DlpackRef) borrows for longer than the tensor lives).
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
        let ctx = ours.context().clone();
        let uses = ours
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
            ProducerStream::Foreign(f) => unsafe { stream_wait(&ctx, consumer.raw(), f.raw()) }?,
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
    /// Imports, read-only, a tensor this crate exported
    /// ([`DeviceBuffer::into_dlpack`](crate::DeviceBuffer::into_dlpack),
    /// [`DeviceArray::into_dlpack`](crate::gpuarray::DeviceArray::into_dlpack)), owning it: the
    /// uses are ordered through the exported buffer's own record, so nothing needs naming a
    /// stream. Another library's tensor is refused with [`DlpackError::NotExportedHere`]: see
    /// [`from_foreign`](Self::from_foreign).
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
