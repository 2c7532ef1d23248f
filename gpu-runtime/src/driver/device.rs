//! CUDA devices: enumeration, names, compute capability and the limits a launch must respect.

use std::fmt;

use cudarc::driver::sys::{self, CUdevice_attribute as Attr, CUresult};

use crate::driver::attributes::DeviceAttribute;
use crate::driver::calls::{self, Failed};
use crate::driver::init;
use crate::error::{Error, Result};

/// One CUDA device (a GPU), identified by its ordinal.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Device {
    ordinal: i32,
    raw: sys::CUdevice,
}

impl fmt::Debug for Device {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Device({})", self.ordinal)
    }
}

impl Device {
    /// How many CUDA devices the driver sees.
    pub fn count() -> Result<usize> {
        init::ensure()?;
        let n = calls::device_get_count()?;
        Ok(n.max(0) as usize)
    }

    /// The device with this ordinal (0-based).
    pub fn new(ordinal: usize) -> Result<Device> {
        let count = Self::count()?;
        if ordinal >= count {
            return Err(Error::InvalidDevice(format!(
                "there is no CUDA device {ordinal}: this machine has {count}"
            )));
        }
        let ordinal = ordinal as i32;
        // The ordinal is in range.
        let raw = calls::device_get(ordinal)?;
        Ok(Device { ordinal, raw })
    }

    /// The device's ordinal.
    pub fn ordinal(&self) -> usize {
        self.ordinal as usize
    }

    /// The driver's handle for this device.
    pub fn raw(&self) -> sys::CUdevice {
        self.raw
    }

    /// The device's name, e.g. `NVIDIA H100 80GB HBM3`.
    pub fn name(&self) -> Result<String> {
        Ok(calls::device_get_name(self.raw)?)
    }

    /// The compute capability, e.g. `(9, 0)` for an H100.
    pub fn compute_capability(&self) -> Result<(u32, u32)> {
        Ok((
            self.attribute(Attr::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)? as u32,
            self.attribute(Attr::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)? as u32,
        ))
    }

    /// Total memory on the device, in bytes.
    pub fn total_memory(&self) -> Result<usize> {
        Ok(calls::device_total_mem(self.raw)?)
    }

    /// One device attribute, as the driver reports it: a [`DeviceAttribute`] or the driver's
    /// own `CUdevice_attribute`.
    ///
    /// ```no_run
    /// use gpu_runtime::{Device, driver::DeviceAttribute};
    /// let sms = Device::new(0)?.attribute(DeviceAttribute::MultiprocessorCount)?;
    /// # Ok::<(), gpu_runtime::Error>(())
    /// ```
    pub fn attribute(&self, attribute: impl Into<sys::CUdevice_attribute>) -> Result<i32> {
        Ok(calls::device_get_attribute(self.raw, attribute.into())?)
    }

    /// Every attribute this driver knows, with its value (PyCUDA's `get_attributes`).
    ///
    /// Attributes newer than the installed driver (it answers `CUDA_ERROR_INVALID_VALUE`) are
    /// left out; any other failure is an error.
    pub fn attributes(&self) -> Result<Vec<(DeviceAttribute, i32)>> {
        let mut all = Vec::with_capacity(DeviceAttribute::ALL.len());
        for a in DeviceAttribute::ALL {
            match calls::device_get_attribute(self.raw, a.raw()) {
                Ok(value) => all.push((a, value)),
                Err(Failed {
                    code: CUresult::CUDA_ERROR_INVALID_VALUE,
                    ..
                }) => {}
                Err(e) => return Err(e.into()),
            }
        }
        Ok(all)
    }

    /// The device with this PCI bus id, e.g. `0000:3b:00.0` (as [`Device::pci_bus_id`] gives
    /// it, or `nvidia-smi` prints it).
    pub fn by_pci_bus_id(bus_id: &str) -> Result<Device> {
        init::ensure()?;
        let c = std::ffi::CString::new(bus_id)
            .map_err(|_| Error::InvalidDevice(format!("the PCI bus id {bus_id:?} contains a NUL byte")))?;
        let raw = match calls::device_get_by_pci_bus_id(&c) {
            Ok(raw) => raw,
            Err(Failed {
                code: CUresult::CUDA_ERROR_INVALID_VALUE | CUresult::CUDA_ERROR_INVALID_DEVICE,
                ..
            }) => {
                return Err(Error::InvalidDevice(format!(
                    "no CUDA device has the PCI bus id {bus_id:?} (the form is domain:bus:device.function, e.g. 0000:3b:00.0)"
                )))
            }
            Err(e) => return Err(e.into()),
        };
        for ordinal in 0..Self::count()? {
            let d = Device::new(ordinal)?;
            if d.raw == raw {
                return Ok(d);
            }
        }
        Err(Error::InvalidDevice(format!(
            "the driver found PCI bus id {bus_id:?} but no device ordinal has its handle"
        )))
    }

    /// The device's PCI bus id, `domain:bus:device.function`, e.g. `0000:3b:00.0`.
    pub fn pci_bus_id(&self) -> Result<String> {
        Ok(calls::device_get_pci_bus_id(self.raw)?)
    }

    /// Who may create contexts on the device (PyCUDA's `compute_mode`), as the administrator
    /// set it with `nvidia-smi -c`.
    pub fn compute_mode(&self) -> Result<ComputeMode> {
        use sys::CUcomputemode::*;
        let v = self.attribute(Attr::CU_DEVICE_ATTRIBUTE_COMPUTE_MODE)?;
        Ok(match v {
            x if x == CU_COMPUTEMODE_DEFAULT as i32 => ComputeMode::Default,
            x if x == CU_COMPUTEMODE_PROHIBITED as i32 => ComputeMode::Prohibited,
            x if x == CU_COMPUTEMODE_EXCLUSIVE_PROCESS as i32 => ComputeMode::ExclusiveProcess,
            other => ComputeMode::Other(other),
        })
    }

    /// True when contexts on this device can map memory of contexts on `peer` (after
    /// [`Context::enable_peer_access`](crate::Context::enable_peer_access)). A device is never
    /// its own peer: the driver answers false for `peer == self`.
    pub fn can_access_peer(&self, peer: Device) -> Result<bool> {
        // Both handles came from cuDeviceGet.
        Ok(calls::device_can_access_peer(self.raw, peer.raw)?)
    }

    /// The limits a launch on this device must respect, read once per context.
    pub fn limits(&self) -> Result<DeviceLimits> {
        let a = |attr| self.attribute(attr).map(|v| v.max(0) as u32);
        Ok(DeviceLimits {
            max_threads_per_block: a(Attr::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK)?,
            max_block_dim: [
                a(Attr::CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X)?,
                a(Attr::CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y)?,
                a(Attr::CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z)?,
            ],
            max_grid_dim: [
                a(Attr::CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X)?,
                a(Attr::CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y)?,
                a(Attr::CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z)?,
            ],
            max_shared_memory_per_block: a(Attr::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK)?,
            max_shared_memory_per_block_optin: a(
                Attr::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
            )?,
        })
    }
}

/// The launch limits of a device: what [`crate::driver::Function`] checks before every launch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeviceLimits {
    /// `CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK`.
    pub max_threads_per_block: u32,
    /// `CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_{X,Y,Z}`.
    pub max_block_dim: [u32; 3],
    /// `CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_{X,Y,Z}`.
    pub max_grid_dim: [u32; 3],
    /// `CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK` (48 KiB without opting in).
    pub max_shared_memory_per_block: u32,
    /// `CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN` (what a kernel may opt in to).
    pub max_shared_memory_per_block_optin: u32,
}

impl DeviceLimits {
    /// The limits of every device of compute capability 7.0 and later, for tests and for
    /// checking launch configurations without a GPU.
    pub const fn typical(max_shared_memory_per_block_optin: u32) -> DeviceLimits {
        DeviceLimits {
            max_threads_per_block: 1024,
            max_block_dim: [1024, 1024, 64],
            max_grid_dim: [2_147_483_647, 65535, 65535],
            max_shared_memory_per_block: 48 * 1024,
            max_shared_memory_per_block_optin,
        }
    }
}

/// Who may create contexts on a device ([`Device::compute_mode`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ComputeMode {
    /// Any number of contexts, from any number of processes.
    Default,
    /// No contexts at all.
    Prohibited,
    /// Contexts from one process at a time.
    ExclusiveProcess,
    /// A value this crate does not know, as the driver reported it.
    Other(i32),
}

/// True when a CUDA driver can be loaded and reports at least one device.
///
/// Handy for skipping GPU work in programs that also run elsewhere.
pub fn is_available() -> bool {
    init::ensure().is_ok() && Device::count().is_ok_and(|n| n > 0)
}
