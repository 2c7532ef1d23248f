//! Managed (unified) memory: one allocation the host and the device both address, migrated on
//! demand by the driver (PyCUDA's `managed_empty`). A [`ManagedArray`] is host data (a view,
//! [`HostSlice`](crate::HostSlice)) and a kernel argument ([`DeviceRead`], [`DeviceWrite`])
//! with no copies.

use std::marker::PhantomData;

use cudarc::driver::sys;
use ndarray::{ArrayBase, Data, Dimension, ShapeBuilder};

use crate::context::Context;
use crate::error::{check, Error, Result};
use crate::host_array::{host_array_common, shape_bytes, shape_like, RawHost};
use crate::memory::{DeviceRead, DeviceWrite};
use crate::repr::DeviceRepr;

/// Who may access managed memory at first (PyCUDA's `mem_attach_flags`).
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
/// Kernels run asynchronously: after a launch that writes the array, call
/// [`Context::synchronize`] before the host reads it.
///
/// ```no_run
/// use gpu_runtime::{kernel, AttachFlags, Context};
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
/// ctx.synchronize()?;
/// assert!(a.view().iter().all(|&v| v == 3.0));
/// # Ok(()) }
/// ```
pub struct ManagedArray<T: DeviceRepr, D: Dimension> {
    raw: RawHost<T, D>,
    ctx: Context,
    _elem: PhantomData<T>,
}

host_array_common!(ManagedArray);

impl<T: DeviceRepr, D: Dimension> Drop for ManagedArray<T, D> {
    fn drop(&mut self) {
        if self.raw.len > 0 && self.ctx.bind().is_ok() {
            // SAFETY: allocated with cuMemAllocManaged for this array alone, freed once.
            unsafe { sys::cuMemFree_v2(self.raw.ptr.as_ptr() as u64) };
        }
    }
}

impl<T: DeviceRepr, D: Dimension> DeviceRead<T> for ManagedArray<T, D> {
    #[inline]
    fn device_ptr(&self) -> sys::CUdeviceptr {
        if self.raw.len == 0 {
            0
        } else {
            self.raw.ptr.as_ptr() as u64
        }
    }
    #[inline]
    fn len(&self) -> usize {
        self.raw.len
    }
    #[inline]
    fn context(&self) -> &Context {
        &self.ctx
    }
}
impl<T: DeviceRepr, D: Dimension> DeviceWrite<T> for ManagedArray<T, D> {}

impl Context {
    /// A managed array of `shape`, contents unspecified (PyCUDA's `managed_empty`).
    ///
    /// Asking for more managed memory than the device has free is refused with
    /// [`Error::SizeMismatch`] before the driver is asked: oversubscribing managed memory can
    /// stall the GPU for a long time instead of failing.
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
            return Err(Error::InvalidArgument {
                operation: "managed_empty",
                detail: "managed memory is allocated attached Global or Host; attach it to one stream afterwards with `ManagedArray::attach(AttachFlags::Single, Some(&stream))`".into(),
            });
        }
        let mut addr = 0;
        if bytes > 0 {
            let (free, _) = self.mem_get_info()?;
            if bytes > free {
                return Err(Error::SizeMismatch {
                    operation: "managed_empty",
                    detail: format!("{bytes} bytes of managed memory asked for, but the device has only {free} bytes free"),
                });
            }
            // SAFETY: valid out-pointer; the context is current (mem_get_info bound it).
            check("cuMemAllocManaged", unsafe {
                sys::cuMemAllocManaged(&mut addr, bytes, flags.bits())
            })?;
        }
        Ok(ManagedArray {
            raw: RawHost::new(addr as *mut T, shape, len),
            ctx: self.clone(),
            _elem: PhantomData,
        })
    }

    /// A zero-filled managed array of `shape`.
    pub fn managed_zeros<T: DeviceRepr, Sh: ShapeBuilder>(
        &self,
        shape: Sh,
        flags: AttachFlags,
    ) -> Result<ManagedArray<T, Sh::Dim>>
    where
        Sh::Dim: Dimension,
    {
        let a = self.managed_empty(shape, flags)?;
        if a.raw.len > 0 {
            // SAFETY: the whole allocation, just made; the context is current.
            check("cuMemsetD8", unsafe {
                sys::cuMemsetD8_v2(a.raw.ptr.as_ptr() as u64, 0, a.raw.len * std::mem::size_of::<T>())
            })?;
            // The memset is asynchronous to the host; the host may read right away.
            a.ctx.synchronize()?;
        }
        Ok(a)
    }

    /// A managed array with the shape and memory order of `like`, contents unspecified.
    pub fn managed_empty_like<T: DeviceRepr, S: Data, D: Dimension>(
        &self,
        like: &ArrayBase<S, D>,
        flags: AttachFlags,
    ) -> Result<ManagedArray<T, D>> {
        self.managed_empty(shape_like(like), flags)
    }

    /// A zero-filled managed array with the shape and memory order of `like`.
    pub fn managed_zeros_like<T: DeviceRepr, S: Data, D: Dimension>(
        &self,
        like: &ArrayBase<S, D>,
        flags: AttachFlags,
    ) -> Result<ManagedArray<T, D>> {
        self.managed_zeros(shape_like(like), flags)
    }
}
