//! Managed (unified) memory: one allocation the host and the device both address, migrated on
//! demand by the driver (PyCUDA's `managed_empty`). A [`ManagedArray`] is host data (a view,
//! [`HostSlice`](crate::HostSlice)) and a kernel argument ([`DeviceRead`], [`DeviceWrite`])
//! with no copies.

use std::marker::PhantomData;

use cudarc::driver::sys;
use ndarray::{ArrayBase, Data, Dimension, ShapeBuilder};

use crate::driver::calls;
use crate::driver::context::core::Context;
use crate::driver::host::arrays::{host_array_common, shape_bytes, shape_like, RawHost};
use crate::driver::memory::view::{DeviceRead, DeviceView, DeviceViewMut, DeviceWrite};
use crate::driver::ordering::{Release, StreamUses};
use crate::error::{MemoryError, Result};
use crate::types::repr::DeviceRepr;

/// Who may access managed memory at first (PyCUDA's `mem_attach_flags`).
///
/// Needs the `gpuarray` feature (on by default), which brings `ndarray`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AttachFlags {
    /// Any stream on any device (`CU_MEM_ATTACH_GLOBAL`).
    Global,
    /// Only the host, until attached to a stream (`CU_MEM_ATTACH_HOST`).
    Host,
    /// The host and one stream ([`ManagedArray::attach`] with that stream;
    /// `CU_MEM_ATTACH_SINGLE`). Not for allocating.
    Single,
}

impl AttachFlags {
    pub(crate) fn bits(self) -> u32 {
        match self {
            AttachFlags::Global => sys::CUmemAttach_flags::CU_MEM_ATTACH_GLOBAL as u32,
            AttachFlags::Host => sys::CUmemAttach_flags::CU_MEM_ATTACH_HOST as u32,
            AttachFlags::Single => sys::CUmemAttach_flags::CU_MEM_ATTACH_SINGLE as u32,
        }
    }
}

/// A host array in managed memory, usable from the host and passable to kernels without copies.
///
/// Kernels run asynchronously, and the host must not touch the array while one uses it: each
/// host access (`view`, `view_mut`, the slices) first waits for the kernels and copies that
/// write it (for a writable access, for every one that uses it), and the memory is freed only
/// after them.
///
/// ```no_run
/// use gpu_runtime::{kernel, driver::AttachFlags, Context};
///
/// #[kernel(r#"
/// __global__ void doublify(float *a) {
///     int idx = threadIdx.x + threadIdx.y * 4;
///     a[idx] *= 2;
/// }"#)]
/// fn doublify(a: &mut [f32]);
///
/// # fn main() -> gpu_runtime::Result<()> {
/// let ctx = Context::default()?;
/// let mut a = ctx.managed_zeros::<f32, _>((4, 4), AttachFlags::Global)?;
/// a.view_mut().fill(1.5);
/// doublify::prepare(&ctx)?.prepared_call(1, (4, 4), &mut a)?;
/// // `view` waits for the kernel that writes `a`.
/// assert!(a.view().iter().all(|&v| v == 3.0));
/// # Ok(()) }
/// ```
///
/// Needs the `gpuarray` feature (on by default), which brings `ndarray`.
pub struct ManagedArray<T: DeviceRepr, D: Dimension> {
    raw: RawHost<T, D>,
    ctx: Context,
    pub(crate) uses: StreamUses,
    _elem: PhantomData<T>,
}

host_array_common!(ManagedArray);

impl<T: DeviceRepr, D: Dimension> ManagedArray<T, D> {
    fn gpu_done(&self, write: bool) {
        // Errors are a failed context's, whose work has ended.
        let _ = if write {
            self.uses.host_write()
        } else {
            self.uses.host_read()
        };
    }

    /// The device address of the first element (0 when empty).
    #[inline]
    pub fn device_ptr(&self) -> sys::CUdeviceptr {
        if self.raw.len == 0 {
            0
        } else {
            self.raw.ptr.as_ptr() as u64
        }
    }

    /// The context the memory was allocated in.
    pub fn context(&self) -> &Context {
        &self.ctx
    }
}

impl<T: DeviceRepr, D: Dimension> Drop for ManagedArray<T, D> {
    fn drop(&mut self) {
        if self.raw.len > 0 {
            let what = Release::DeviceMemory(self.raw.ptr.as_ptr() as u64);
            self.ctx.release_after(&mut self.uses, what);
        }
    }
}

impl<T: DeviceRepr, D: Dimension> DeviceRead<T> for ManagedArray<T, D> {
    #[inline]
    fn device_view(&self) -> DeviceView<'_, T> {
        DeviceView::tracked(self.device_ptr(), self.raw.len, &self.ctx, &self.uses)
    }
}
impl<T: DeviceRepr, D: Dimension> DeviceWrite<T> for ManagedArray<T, D> {
    #[inline]
    fn device_view_mut(&mut self) -> DeviceViewMut<'_, T> {
        DeviceViewMut::tracked(self.device_ptr(), self.raw.len, &self.ctx, &self.uses)
    }
}

impl Context {
    /// A managed array of `shape`, contents unspecified (PyCUDA's `managed_empty`).
    ///
    /// Asking for more managed memory than the device has free is refused with
    /// [`MemoryError::ManagedMoreThanFree`] before the driver is asked: oversubscribing managed memory can
    /// stall the GPU for a long time instead of failing.
    ///
    /// Needs the `gpuarray` feature (on by default), which brings `ndarray`.
    pub fn managed_empty<T: DeviceRepr, Sh: ShapeBuilder>(
        &self,
        shape: Sh,
        flags: AttachFlags,
    ) -> Result<ManagedArray<T, Sh::Dim>>
    where
        Sh::Dim: Dimension,
    {
        let (shape, len, bytes) = shape_bytes::<T, _>(shape, "managed_empty")?;
        if flags == AttachFlags::Single {
            return Err(MemoryError::ManagedSingleAtAllocation.into());
        }
        let mut addr = 0;
        if bytes > 0 {
            let (free, _) = self.mem_get_info()?;
            if bytes > free {
                return Err(MemoryError::ManagedMoreThanFree { bytes, free }.into());
            }
            addr = crate::driver::context::core::alloc_or_reclaim(&self.inner, || {
                self.bound(|| calls::mem_alloc_managed(bytes, flags.bits()))
            })?;
        }
        Ok(ManagedArray {
            raw: RawHost::new(addr as *mut T, shape, len),
            ctx: self.clone(),
            uses: StreamUses::new(),
            _elem: PhantomData,
        })
    }

    /// A zero-filled managed array of `shape`.
    ///
    /// Needs the `gpuarray` feature (on by default), which brings `ndarray`.
    pub fn managed_zeros<T: DeviceRepr, Sh: ShapeBuilder>(
        &self,
        shape: Sh,
        flags: AttachFlags,
    ) -> Result<ManagedArray<T, Sh::Dim>>
    where
        Sh::Dim: Dimension,
    {
        let mut a = self.managed_empty(shape, flags)?;
        if a.raw.len > 0 {
            let view = a.device_view_mut();
            view.write_on(self.legacy())?;
            self.bind()?;
            // SAFETY: the whole allocation, just made; the context is current.
            unsafe { calls::memset_d8(view.device_ptr(), 0, view.len() * std::mem::size_of::<T>()) }?;
            // The memset is asynchronous to the host: the host's first access waits for it.
        }
        Ok(a)
    }

    /// A managed array with the shape and memory order of `like`, contents unspecified.
    ///
    /// Needs the `gpuarray` feature (on by default), which brings `ndarray`.
    pub fn managed_empty_like<T: DeviceRepr, S: Data, D: Dimension>(
        &self,
        like: &ArrayBase<S, D>,
        flags: AttachFlags,
    ) -> Result<ManagedArray<T, D>> {
        self.managed_empty(shape_like(like), flags)
    }

    /// A zero-filled managed array with the shape and memory order of `like`.
    ///
    /// Needs the `gpuarray` feature (on by default), which brings `ndarray`.
    pub fn managed_zeros_like<T: DeviceRepr, S: Data, D: Dimension>(
        &self,
        like: &ArrayBase<S, D>,
        flags: AttachFlags,
    ) -> Result<ManagedArray<T, D>> {
        self.managed_zeros(shape_like(like), flags)
    }
}
