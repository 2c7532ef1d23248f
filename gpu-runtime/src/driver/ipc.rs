//! Sharing device memory and events with other processes (PyCUDA's `mem_get_ipc_handle`,
//! `IPCMemoryHandle` and `Event.ipc_handle`).
//!
//! A handle is 64 opaque bytes: send [`IpcMemHandle::to_bytes`] to the other process by any
//! means (a pipe, a file, a socket) and open it there. The driver refuses to open a handle in
//! the process that made it.

use std::marker::PhantomData;

use cudarc::driver::sys;

use crate::driver::calls;
use crate::driver::context::core::Context;
use crate::driver::memory::buffer::DeviceBuffer;
use crate::driver::memory::view::{DeviceRead, DeviceView, DeviceViewMut, DeviceWrite};
use crate::driver::ordering::{Release, StreamUses};
use crate::driver::stream::Event;
use crate::error::{CopyError, MemoryError, Result};
use crate::types::repr::DeviceRepr;

/// A handle to a device allocation that another process can open.
///
/// Each side in its own process (the driver refuses to open a handle where it was made):
///
/// ```no_run
/// use gpu_runtime::{Context, DeviceBuffer, driver::IpcMemHandle, Result};
///
/// // The owner: `buf` must stay alive while the other process uses it.
/// fn export(buf: &DeviceBuffer<f32>) -> Result<[u8; 64]> {
///     Ok(buf.ipc_handle()?.to_bytes()) // send these bytes by a pipe, a file, a socket
/// }
///
/// // The other process, with the bytes received and the length agreed on.
/// fn import(ctx: &Context, bytes: [u8; 64], len: usize) -> Result<Vec<f32>> {
///     // SAFETY: the owner keeps `buf` alive and unwritten until this process says it is done.
///     let shared = unsafe { IpcMemHandle::from_bytes(bytes).open::<f32>(ctx, len)? };
///     shared.to_vec() // `shared` is unmapped when dropped; the owner's memory stays
/// }
/// # let _ = (export, import);
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct IpcMemHandle([u8; 64]);

/// A handle to an interprocess event that another process can open.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct IpcEventHandle([u8; 64]);

macro_rules! handle_bytes {
    ($t:ident) => {
        impl $t {
            /// The handle's bytes, to send to another process.
            pub fn to_bytes(&self) -> [u8; 64] {
                self.0
            }

            /// A handle from bytes received from another process.
            pub fn from_bytes(bytes: [u8; 64]) -> Self {
                $t(bytes)
            }
        }

        impl std::fmt::Debug for $t {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(f, "{}(", stringify!($t))?;
                for b in &self.0[..8] {
                    write!(f, "{b:02x}")?;
                }
                write!(f, "…)")
            }
        }
    };
}
handle_bytes!(IpcMemHandle);
handle_bytes!(IpcEventHandle);

fn to_bytes(reserved: &[std::ffi::c_char; 64]) -> [u8; 64] {
    reserved.map(|c| c as u8)
}

fn from_bytes(bytes: &[u8; 64]) -> [std::ffi::c_char; 64] {
    bytes.map(|b| b as std::ffi::c_char)
}

impl<T: DeviceRepr> DeviceBuffer<T> {
    /// A handle another process can open with [`IpcMemHandle::open`] (PyCUDA's
    /// `mem_get_ipc_handle`). The buffer must stay alive while the other process uses it.
    pub fn ipc_handle(&self) -> Result<IpcMemHandle> {
        if self.device_ptr() == 0 {
            return Err(MemoryError::EmptyIpcBuffer.into());
        }
        self.context().bind()?;
        // Another process may map this memory from now on: it must never pass to a new owner.
        self.stop_reuse();
        // SAFETY: the pointer is the start of a live cuMemAlloc allocation of the current
        // context, which no longer passes to a new owner (above).
        let h = unsafe { calls::ipc_get_mem_handle(self.device_ptr()) }?;
        Ok(IpcMemHandle(to_bytes(&h.reserved)))
    }
}

impl IpcMemHandle {
    /// Maps the allocation another process shared into `ctx` as `len` elements of `T`
    /// (PyCUDA's `IPCMemoryHandle`); unmapped when the returned value is dropped, once the
    /// work queued on it here has finished. `len` is checked against the size of the shared
    /// allocation.
    ///
    /// # Safety
    /// The memory belongs to another process, whose uses of it this crate cannot see. Until
    /// the returned buffer is dropped and the work queued on it has finished, the exporting
    /// process must keep the allocation alive, and must not use it while work of this process
    /// may read it (or, for work that writes it, use it at all), unless the two processes order
    /// those uses themselves (for example with an [`IpcEventHandle`] and a message).
    pub unsafe fn open<T: DeviceRepr>(&self, ctx: &Context, len: usize) -> Result<IpcBuffer<T>> {
        ctx.bind()?;
        // SAFETY: a plain C struct of bytes.
        let mut h: sys::CUipcMemHandle = unsafe { std::mem::zeroed() };
        h.reserved = from_bytes(&self.0);
        // The context is current. Flag 1 lets the driver enable peer access if the memory is
        // on another device.
        let ptr = calls::ipc_open_mem_handle(h, 1)?;
        let buf = IpcBuffer {
            ptr,
            len,
            ctx: ctx.clone(),
            uses: StreamUses::new(),
            _elem: PhantomData,
        };
        // `ptr` was just mapped.
        let (_, size) = calls::mem_get_address_range(ptr)?;
        let want = len.saturating_mul(std::mem::size_of::<T>());
        if want > size {
            return Err(CopyError::SharedAllocationTooSmall {
                len,
                element_bytes: std::mem::size_of::<T>(),
                bytes: size,
            }
            .into());
        }
        Ok(buf)
    }
}

/// Device memory of another process, mapped into this one; unmapped when dropped (once the
/// work queued on it has finished).
pub struct IpcBuffer<T> {
    ptr: sys::CUdeviceptr,
    len: usize,
    ctx: Context,
    uses: StreamUses,
    _elem: PhantomData<T>,
}

impl<T> std::fmt::Debug for IpcBuffer<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "IpcBuffer({:#x}, len {})", self.ptr, self.len)
    }
}

impl<T: DeviceRepr> IpcBuffer<T> {
    /// A copy of the contents.
    pub fn to_vec(&self) -> Result<Vec<T>> {
        self.device_view().to_vec()
    }

    /// The number of elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when there are no elements.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The device address in this process.
    pub fn device_ptr(&self) -> sys::CUdeviceptr {
        self.ptr
    }
}

impl<T> DeviceRead<T> for IpcBuffer<T> {
    fn device_view(&self) -> DeviceView<'_, T> {
        DeviceView::tracked(self.ptr, self.len, &self.ctx, &self.uses)
    }
}
impl<T> DeviceWrite<T> for IpcBuffer<T> {
    fn device_view_mut(&mut self) -> DeviceViewMut<'_, T> {
        DeviceViewMut::tracked(self.ptr, self.len, &self.ctx, &self.uses)
    }
}

impl<T> Drop for IpcBuffer<T> {
    fn drop(&mut self) {
        self.ctx
            .release_after(&mut self.uses, Release::IpcMapping(self.ptr));
    }
}

impl Event {
    /// A handle another process can open with [`Event::from_ipc_handle`]. The event must have
    /// been created with `EventFlags::INTERPROCESS | EventFlags::DISABLE_TIMING`.
    pub fn ipc_handle(&self) -> Result<IpcEventHandle> {
        self.context().bind()?;
        // SAFETY: the event is live.
        let h = unsafe { calls::ipc_get_event_handle(self.raw()) }?;
        Ok(IpcEventHandle(to_bytes(&h.reserved)))
    }

    /// Opens an event another process shared.
    pub fn from_ipc_handle(ctx: &Context, handle: &IpcEventHandle) -> Result<Event> {
        ctx.bind()?;
        // SAFETY: a plain C struct of bytes.
        let mut h: sys::CUipcEventHandle = unsafe { std::mem::zeroed() };
        h.reserved = from_bytes(&handle.0);
        // The context is current.
        let raw = calls::ipc_open_event_handle(h)?;
        Ok(Event::from_raw(raw, ctx))
    }
}
