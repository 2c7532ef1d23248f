//! What can be done to managed memory after allocating it: attaching it to a stream (PyCUDA's
//! `ManagedAllocation.attach`), prefetching it to a device or the host, advising the driver
//! where it should live, and reading those settings back.

use std::sync::Arc;

use cudarc::driver::sys;
use ndarray::Dimension;

use crate::driver::calls;
use crate::driver::device::Device;
use crate::driver::host::managed::{AttachFlags, ManagedArray};
use crate::driver::ordering::StreamInner;
use crate::driver::stream::Stream;
use crate::error::{Error, MemoryError, Result};
use crate::types::repr::DeviceRepr;

/// Where managed memory is, or should be: a device's memory or the host's.
///
/// Needs the `gpuarray` feature (on by default), which brings `ndarray`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MemLocation {
    /// The memory of this device.
    Device(Device),
    /// Host memory.
    Host,
}

impl MemLocation {
    fn raw(self) -> sys::CUmemLocation {
        match self {
            MemLocation::Device(d) => sys::CUmemLocation {
                type_: sys::CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE,
                id: d.ordinal() as i32,
            },
            MemLocation::Host => sys::CUmemLocation {
                type_: sys::CUmemLocationType::CU_MEM_LOCATION_TYPE_HOST,
                id: 0,
            },
        }
    }

    /// The location a range attribute names: a device ordinal, `CU_DEVICE_CPU` (-1), or
    /// `CU_DEVICE_INVALID` (-2) for none.
    fn from_ordinal(v: i32) -> Result<Option<MemLocation>> {
        Ok(match v {
            -1 => Some(MemLocation::Host),
            v if v < 0 => None,
            v => Some(MemLocation::Device(Device::new(v as usize)?)),
        })
    }
}

/// Advice on how managed memory is used, so that the driver places it well (`cuMemAdvise`).
///
/// Given with [`ManagedArray::advise`]; [`ManagedArray::prefetch`] then moves the memory
/// ahead of use:
///
/// ```no_run
/// use gpu_runtime::{driver::AttachFlags, Context, driver::MemAdvice, driver::MemLocation};
/// let ctx = Context::default()?;
/// let mut table = ctx.managed_empty::<f32, _>(1 << 20, AttachFlags::Global)?;
/// table.view_mut().fill(0.5);
/// // Written once, then only read: each reader may keep a copy instead of migrating pages.
/// table.advise(MemAdvice::SetReadMostly)?;
/// let gpu = MemLocation::Device(ctx.device());
/// // Moved in bulk now rather than faulted over page by page by the first kernel.
/// table.prefetch(gpu, None)?;
/// ctx.synchronize()?;
/// assert!(table.is_read_mostly()?);
/// assert_eq!(table.last_prefetch_location()?, Some(gpu));
/// # Ok::<(), gpu_runtime::Error>(())
/// ```
///
/// Needs the `gpuarray` feature (on by default), which brings `ndarray`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MemAdvice {
    /// Mostly read: devices that read it get their own read-only copies.
    SetReadMostly,
    /// Undoes [`MemAdvice::SetReadMostly`].
    UnsetReadMostly,
    /// Where the memory should preferably live.
    SetPreferredLocation(MemLocation),
    /// Undoes [`MemAdvice::SetPreferredLocation`].
    UnsetPreferredLocation,
    /// This device (or the host) will access it: keep it mapped there.
    SetAccessedBy(MemLocation),
    /// Undoes [`MemAdvice::SetAccessedBy`] for that location.
    UnsetAccessedBy(MemLocation),
}

impl<T: DeviceRepr, D: Dimension> ManagedArray<T, D> {
    /// Changes who may access the array (PyCUDA's `attach`): [`AttachFlags::Global`] any
    /// stream, [`AttachFlags::Host`] the host only, [`AttachFlags::Single`] the host and
    /// `stream` only, so that the host may use the array while other streams run. The change
    /// is queued on `stream` (on the legacy default stream when `None`) and takes effect when
    /// the stream reaches it.
    ///
    /// ```no_run
    /// use gpu_runtime::{kernel, driver::AttachFlags, Context, Stream};
    ///
    /// #[kernel(r#"
    /// __global__ void inc(int *a, int n) {
    ///     int i = blockIdx.x * blockDim.x + threadIdx.x;
    ///     if (i < n) a[i] += 1;
    /// }"#)]
    /// fn inc(a: &mut [i32], n: i32);
    ///
    /// # fn main() -> gpu_runtime::Result<()> {
    /// let ctx = Context::default()?;
    /// let stream = Stream::new(&ctx)?;
    /// let mut a = ctx.managed_zeros::<i32, _>(1024, AttachFlags::Host)?;
    /// // Tied to one stream, the array is the host's once that stream is idle, even while
    /// // kernels run on others.
    /// a.attach(AttachFlags::Single, Some(&stream))?;
    /// inc::prepare(&ctx)?.prepared_async_call(4, 256, &stream, &mut a, 1024)?;
    /// stream.synchronize()?;
    /// assert!(a.view().iter().all(|&v| v == 1));
    /// # Ok(()) }
    /// ```
    pub fn attach(&self, flags: AttachFlags, stream: Option<&Stream>) -> Result<()> {
        if flags == AttachFlags::Single && stream.is_none() {
            return Err(MemoryError::AttachSingleWithoutStream.into());
        }
        let stream = self.stream_of(stream)?;
        if self.is_empty() {
            return Ok(());
        }
        // Queued on the stream like a use of the memory: it stays allocated until then.
        self.uses.read_on(stream)?;
        self.context().bind()?;
        // SAFETY: the range is this live managed allocation; the stream belongs to its
        // context (or is the legacy default stream).
        unsafe { calls::stream_attach_mem_async(stream.raw, self.device_ptr(), 0, flags.bits()) }
            .map_err(Error::from)
    }

    /// Migrates the array to `to` ahead of use, queued on `stream` (the legacy default stream
    /// when `None`), so that the first kernel or host access does not fault it over page by
    /// page. Needs a device with concurrent managed access
    /// (`DeviceAttribute::ConcurrentManagedAccess`); elsewhere the driver's error is returned.
    pub fn prefetch(&self, to: MemLocation, stream: Option<&Stream>) -> Result<()> {
        let stream = self.stream_of(stream)?;
        if self.is_empty() {
            return Ok(());
        }
        self.uses.read_on(stream)?;
        self.context().bind()?;
        // SAFETY: the range is this live managed allocation; the stream belongs to its context.
        unsafe { calls::mem_prefetch_async(self.device_ptr(), self.bytes(), to.raw(), stream.raw) }
            .map_err(Error::from)
    }

    /// Advises the driver how the array is used (`cuMemAdvise`).
    pub fn advise(&self, advice: MemAdvice) -> Result<()> {
        use sys::CUmem_advise::*;
        let (raw, location) = match advice {
            MemAdvice::SetReadMostly => (CU_MEM_ADVISE_SET_READ_MOSTLY, MemLocation::Host),
            MemAdvice::UnsetReadMostly => (CU_MEM_ADVISE_UNSET_READ_MOSTLY, MemLocation::Host),
            MemAdvice::SetPreferredLocation(l) => (CU_MEM_ADVISE_SET_PREFERRED_LOCATION, l),
            MemAdvice::UnsetPreferredLocation => (CU_MEM_ADVISE_UNSET_PREFERRED_LOCATION, MemLocation::Host),
            MemAdvice::SetAccessedBy(l) => (CU_MEM_ADVISE_SET_ACCESSED_BY, l),
            MemAdvice::UnsetAccessedBy(l) => (CU_MEM_ADVISE_UNSET_ACCESSED_BY, l),
        };
        if self.is_empty() {
            return Ok(());
        }
        self.context().bind()?;
        // SAFETY: the range is this live managed allocation.
        unsafe { calls::mem_advise(self.device_ptr(), self.bytes(), raw, location.raw()) }
            .map_err(Error::from)
    }

    /// Whether [`MemAdvice::SetReadMostly`] is in force for the whole array.
    pub fn is_read_mostly(&self) -> Result<bool> {
        Ok(self.range_attribute(sys::CUmem_range_attribute::CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY)? != 0)
    }

    /// The preferred location set by [`MemAdvice::SetPreferredLocation`], if the whole array
    /// has one.
    pub fn preferred_location(&self) -> Result<Option<MemLocation>> {
        MemLocation::from_ordinal(
            self.range_attribute(sys::CUmem_range_attribute::CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION)?,
        )
    }

    /// Where the whole array was last prefetched to with [`prefetch`](Self::prefetch), if
    /// anywhere (as of the prefetch being issued, not finished).
    pub fn last_prefetch_location(&self) -> Result<Option<MemLocation>> {
        MemLocation::from_ordinal(
            self.range_attribute(sys::CUmem_range_attribute::CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION)?,
        )
    }

    fn range_attribute(&self, attribute: sys::CUmem_range_attribute) -> Result<i32> {
        if self.is_empty() {
            return Err(MemoryError::EmptyManagedRange.into());
        }
        self.context().bind()?;
        // SAFETY: the range is live; these attributes are 4-byte values.
        let v = unsafe { calls::mem_range_get_attribute(attribute, self.device_ptr(), self.bytes()) }?;
        Ok(v)
    }

    fn stream_of<'s>(&'s self, stream: Option<&'s Stream>) -> Result<&'s Arc<StreamInner>> {
        match stream {
            Some(s) if s.context() != self.context() => Err(Error::WrongContext {
                what: "the stream for managed memory",
            }),
            Some(s) => Ok(s.inner()),
            None => Ok(self.context().legacy()),
        }
    }

    fn bytes(&self) -> usize {
        self.len() * std::mem::size_of::<T>()
    }
}
