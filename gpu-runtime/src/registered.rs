//! Host memory you already have, page-locked in place for as long as it is borrowed: any
//! slice, such as an [`AlignedArray`](crate::AlignedArray)'s (PyCUDA's `aligned_empty` then
//! `register_host_memory`), a `Vec`'s, or an `ndarray`'s.

use std::ffi::c_void;
use std::ops::{Deref, DerefMut};

use cudarc::driver::sys;

use crate::context::Context;
use crate::error::{check, Result};
use crate::host::{HostSlice, HostSliceMut};
use crate::memory::{DeviceView, DeviceViewMut};
use crate::pinned::{mapped_device_ptr, HostRegisterFlags};
use crate::repr::DeviceRepr;

/// A slice page-locked by [`Context::register_host_slice`] while this value borrows it;
/// unlocked on drop. Deref gives the slice; it is host data like any slice, and copies from
/// and to it run at pinned-memory speed.
pub struct RegisteredSlice<'a, T: DeviceRepr> {
    slice: &'a mut [T],
    flags: HostRegisterFlags,
    ctx: Context,
}

impl Context {
    /// Page-locks `host` in place for as long as the returned value borrows it (PyCUDA's
    /// `register_host_memory`, for memory this crate did not allocate). The borrow keeps the
    /// memory from being freed, moved or registered again while it is locked.
    ///
    /// ```no_run
    /// use gpu_runtime::{aligned_zeros, Context, HostRegisterFlags};
    /// let ctx = Context::default()?;
    /// let mut host = aligned_zeros::<f32, _>(1 << 20, 4096)?;
    /// let pinned = ctx.register_host_slice(host.as_slice_memory_order_mut(), HostRegisterFlags::NONE)?;
    /// let dev = ctx.to_device(&*pinned)?; // a pinned-speed copy
    /// # Ok::<(), gpu_runtime::Error>(())
    /// ```
    pub fn register_host_slice<'a, T: DeviceRepr>(
        &self,
        host: &'a mut [T],
        flags: HostRegisterFlags,
    ) -> Result<RegisteredSlice<'a, T>> {
        if !host.is_empty() {
            self.bind()?;
            // SAFETY: the range is the slice's live memory, borrowed mutably by the returned
            // value until it unregisters it, so it is neither freed nor moved meanwhile.
            check("cuMemHostRegister", unsafe {
                sys::cuMemHostRegister_v2(
                    host.as_mut_ptr().cast(),
                    std::mem::size_of_val(host),
                    flags.bits(),
                )
            })?;
        }
        Ok(RegisteredSlice {
            slice: host,
            flags,
            ctx: self.clone(),
        })
    }
}

impl<T: DeviceRepr> RegisteredSlice<'_, T> {
    /// The device address of the memory, when registered with
    /// [`HostRegisterFlags::DEVICE_MAP`].
    pub fn device_ptr(&self) -> Result<sys::CUdeviceptr> {
        mapped_device_ptr(
            &self.ctx,
            self.flags.bits() & sys::CU_MEMHOSTREGISTER_DEVICEMAP != 0,
            self.slice.as_ptr() as *mut c_void,
            self.slice.len(),
        )
    }

    /// The mapped memory as a kernel argument the kernel reads, without copies (registered
    /// with [`HostRegisterFlags::DEVICE_MAP`]; else [`Error::NotMapped`](crate::Error::NotMapped)).
    pub fn mapped(&self) -> Result<DeviceView<'_, T>> {
        Ok(DeviceView::from_raw(
            self.device_ptr()?,
            self.slice.len(),
            &self.ctx,
        ))
    }

    /// The mapped memory as a writable kernel argument. The kernel writes host memory: wait
    /// for it before reading the slice.
    pub fn mapped_mut(&mut self) -> Result<DeviceViewMut<'_, T>> {
        Ok(DeviceViewMut::from_raw(
            self.device_ptr()?,
            self.slice.len(),
            &self.ctx,
        ))
    }

    /// The flags it was registered with.
    pub fn flags(&self) -> HostRegisterFlags {
        self.flags
    }
}

impl<T: DeviceRepr> Deref for RegisteredSlice<'_, T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        self.slice
    }
}

impl<T: DeviceRepr> DerefMut for RegisteredSlice<'_, T> {
    fn deref_mut(&mut self) -> &mut [T] {
        self.slice
    }
}

impl<T: DeviceRepr> HostSlice<T> for RegisteredSlice<'_, T> {
    fn host_slice(&self) -> Result<&[T]> {
        Ok(self.slice)
    }
}

impl<T: DeviceRepr> HostSliceMut<T> for RegisteredSlice<'_, T> {
    fn host_slice_mut(&mut self) -> Result<&mut [T]> {
        Ok(self.slice)
    }
}

impl<T: DeviceRepr> Drop for RegisteredSlice<'_, T> {
    fn drop(&mut self) {
        if !self.slice.is_empty() && self.ctx.bind().is_ok() {
            // SAFETY: registered in register_host_slice, unregistered once, here.
            unsafe { sys::cuMemHostUnregister(self.slice.as_mut_ptr().cast()) };
        }
    }
}
