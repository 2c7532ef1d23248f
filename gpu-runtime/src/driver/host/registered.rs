//! Host memory you already have, page-locked in place for the length of a closure: any slice,
//! such as an [`AlignedArray`](crate::driver::AlignedArray)'s (PyCUDA's `aligned_empty` then
//! `register_host_memory`), a `Vec`'s, or an `ndarray`'s.
//!
//! The registration is scoped, like `std::thread::scope`, rather than a value to drop: when the
//! closure returns, the host waits for every asynchronous copy and kernel that uses the memory,
//! then unlocks it and gives the slice back. A value could be leaked (`mem::forget`) with its
//! borrow ended and the GPU still writing the slice; a scope cannot.

use std::ffi::c_void;
use std::marker::PhantomData;
use std::ops::{Deref, DerefMut};

use cudarc::driver::sys;

use crate::driver::calls;
use crate::driver::context::core::Context;
use crate::driver::host::pinned::{mapped_device_ptr, HostRegisterFlags};
use crate::driver::memory::page_locked::{
    sealed::Sealed, LockedHost, LockedHostMut, PageLocked, PageLockedMut,
};
use crate::driver::memory::slices::{HostSlice, HostSliceMut};
use crate::driver::memory::view::{DeviceView, DeviceViewMut};
use crate::driver::ordering::StreamUses;
use crate::error::Result;
use crate::types::repr::DeviceRepr;

/// A slice page-locked by [`Context::register_host_slice`] for the length of its closure.
///
/// Deref gives the slice (after the GPU has finished writing it; writable, after every GPU use):
/// it is host data like any slice, copies from and to it run at pinned-memory speed, and it is
/// page-locked memory for asynchronous copies ([`PageLocked`]) and, registered with
/// [`HostRegisterFlags::DEVICE_MAP`], for kernels ([`mapped`](Self::mapped)).
pub struct RegisteredSlice<'s, T: DeviceRepr> {
    ptr: *mut T,
    len: usize,
    flags: HostRegisterFlags,
    ctx: &'s Context,
    uses: &'s StreamUses,
    /// The slice is borrowed mutably by the scope for `'s`; this handle lends it out.
    _slice: PhantomData<&'s mut [T]>,
}

// SAFETY: the handle lends out a `&mut [T]` (Send when T is) and shared references to the
// context and the record, which are Sync.
unsafe impl<T: DeviceRepr> Send for RegisteredSlice<'_, T> {}
// SAFETY: shared access only reads the slice (T: Sync, as DeviceRepr requires).
unsafe impl<T: DeviceRepr> Sync for RegisteredSlice<'_, T> {}

impl Context {
    /// Page-locks `host` in place and runs `f` with it (PyCUDA's `register_host_memory`, for
    /// memory this crate did not allocate); then waits for the GPU's uses of it, unlocks it,
    /// and returns what `f` returned.
    ///
    /// ```no_run
    /// use gpu_runtime::{driver::aligned_zeros, driver::memcpy_htod_async, Context, driver::HostRegisterFlags, Stream};
    /// let ctx = Context::default()?;
    /// let stream = Stream::new(&ctx)?;
    /// let mut host = aligned_zeros::<f32, _>(1 << 20, 4096)?;
    /// let mut dev = ctx.alloc::<f32>(1 << 20)?;
    /// ctx.register_host_slice(host.as_slice_memory_order_mut(), HostRegisterFlags::NONE, |mut pinned| {
    ///     pinned.fill(1.0);
    ///     // Asynchronous: the host goes on while the DMA engine reads `pinned`; the scope
    ///     // waits for the copy before it unlocks the memory.
    ///     memcpy_htod_async(&mut dev, &pinned, &stream)
    /// })??;
    /// # Ok::<(), gpu_runtime::Error>(())
    /// ```
    pub fn register_host_slice<T: DeviceRepr, R>(
        &self,
        host: &mut [T],
        flags: HostRegisterFlags,
        f: impl FnOnce(RegisteredSlice<'_, T>) -> R,
    ) -> Result<R> {
        if !host.is_empty() {
            self.bind()?;
            // SAFETY: the range is the slice's live memory, borrowed mutably by this function
            // until it unregisters it, so it is neither freed nor moved meanwhile.
            unsafe {
                calls::mem_host_register(
                    host.as_mut_ptr().cast(),
                    std::mem::size_of_val(host),
                    flags.bits(),
                )
            }?;
        }
        // Unlocks when dropped, also when `f` panics: after the GPU's uses, recorded in `uses`.
        let scope = Scope {
            ptr: host.as_mut_ptr(),
            len: host.len(),
            ctx: self,
            uses: StreamUses::new(),
        };
        let handle = RegisteredSlice {
            ptr: scope.ptr,
            len: scope.len,
            flags,
            ctx: self,
            uses: &scope.uses,
            _slice: PhantomData,
        };
        let out = f(handle);
        drop(scope);
        Ok(out)
    }
}

/// The registration of one [`Context::register_host_slice`] call.
struct Scope<'s, T> {
    ptr: *mut T,
    len: usize,
    ctx: &'s Context,
    uses: StreamUses,
}

impl<T> Drop for Scope<'_, T> {
    fn drop(&mut self) {
        // The slice goes back to its owner: nothing may use it afterwards. Errors are a failed
        // context's, whose work has ended.
        let _ = self.uses.host_write();
        if self.len > 0 && self.ctx.bind().is_ok() {
            // SAFETY: registered by register_host_slice, unregistered once, here.
            let _ = unsafe { calls::mem_host_unregister(self.ptr.cast()) };
        }
    }
}

impl<T: DeviceRepr> RegisteredSlice<'_, T> {
    /// The device address of the memory, when registered with
    /// [`HostRegisterFlags::DEVICE_MAP`].
    pub fn device_ptr(&self) -> Result<sys::CUdeviceptr> {
        mapped_device_ptr(
            self.ctx,
            self.flags.bits() & sys::CU_MEMHOSTREGISTER_DEVICEMAP != 0,
            self.ptr as *mut c_void,
            self.len,
        )
    }

    /// The mapped memory as a kernel argument the kernel reads, without copies (registered
    /// with [`HostRegisterFlags::DEVICE_MAP`]; else [`Error::NotMapped`](crate::Error::NotMapped)).
    pub fn mapped(&self) -> Result<DeviceView<'_, T>> {
        Ok(DeviceView::tracked(
            self.device_ptr()?,
            self.len,
            self.ctx,
            self.uses,
        ))
    }

    /// The mapped memory as a writable kernel argument. The kernel writes host memory: the
    /// slice's next host access waits for it.
    pub fn mapped_mut(&mut self) -> Result<DeviceViewMut<'_, T>> {
        Ok(DeviceViewMut::tracked(
            self.device_ptr()?,
            self.len,
            self.ctx,
            self.uses,
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
        // Errors are a failed context's, whose work has ended.
        let _ = self.uses.host_read();
        // SAFETY: the scope borrows the slice mutably for 's and lends it only through this
        // handle; GPU writes to it have finished.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }
}

impl<T: DeviceRepr> DerefMut for RegisteredSlice<'_, T> {
    fn deref_mut(&mut self) -> &mut [T] {
        let _ = self.uses.host_write();
        // SAFETY: as in deref, exclusively (&mut self); every GPU use of it has finished.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) }
    }
}

impl<T: DeviceRepr> HostSlice<T> for RegisteredSlice<'_, T> {
    fn host_slice(&self) -> Result<&[T]> {
        Ok(self)
    }
}

impl<T: DeviceRepr> HostSliceMut<T> for RegisteredSlice<'_, T> {
    fn host_slice_mut(&mut self) -> Result<&mut [T]> {
        Ok(self)
    }
}

impl<T: DeviceRepr> Sealed for RegisteredSlice<'_, T> {}

impl<T: DeviceRepr> PageLocked<T> for RegisteredSlice<'_, T> {
    fn locked(&self) -> LockedHost<'_, T> {
        LockedHost {
            ptr: self.ptr,
            len: self.len,
            uses: self.uses,
        }
    }
}

impl<T: DeviceRepr> PageLockedMut<T> for RegisteredSlice<'_, T> {
    fn locked_mut(&mut self) -> LockedHostMut<'_, T> {
        LockedHostMut {
            ptr: self.ptr,
            len: self.len,
            uses: self.uses,
        }
    }
}
