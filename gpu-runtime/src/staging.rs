//! Host ↔ device copies around a launch for arguments marked `#[In]`, `#[Out]` and `#[InOut]`
//! (PyCUDA's `In`, `Out` and `InOut` argument handlers).
//!
//! The macro's convenience call allocates a device buffer per marked argument, copies `In` and
//! `InOut` data to it, launches, and copies `Out` and `InOut` buffers back. The copies on the
//! host side are synchronous with respect to the legacy default stream the kernel runs on, so
//! the copy back waits for the kernel and reports any error it raised.

use crate::error::Result;
use crate::host::{HostSlice, HostSliceMut};
use crate::memory::DeviceBuffer;
use crate::module::Function;
use crate::repr::DeviceRepr;

/// A device copy of an `#[In]` or `#[InOut]` argument.
pub fn copy_in<T: DeviceRepr>(
    kernel: &Function,
    host: &(impl HostSlice<T> + ?Sized),
) -> Result<DeviceBuffer<T>> {
    DeviceBuffer::from_host(kernel.context(), host)
}

/// Device memory the size of an `#[Out]` argument, its contents left as they are: the kernel
/// is expected to write it.
pub fn alloc_out<T: DeviceRepr>(
    kernel: &Function,
    host: &(impl HostSlice<T> + ?Sized),
) -> Result<DeviceBuffer<T>> {
    DeviceBuffer::uninit(kernel.context(), host.host_slice()?.len())
}

/// Copies an `#[Out]` or `#[InOut]` argument back to the host after the launch.
pub fn copy_out<T: DeviceRepr>(
    device: &DeviceBuffer<T>,
    host: &mut (impl HostSliceMut<T> + ?Sized),
) -> Result<()> {
    device.copy_to_host(host)
}
