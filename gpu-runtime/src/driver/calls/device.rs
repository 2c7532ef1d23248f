//! The driver itself and its devices: initialisation, versions, enumeration, names,
//! attributes, peers, primary contexts and error descriptions. Every function here is safe: its
//! out-pointers are its own, and the driver checks the handles and values it is given (a device
//! handle is a plain ordinal-like value, never dereferenced).

use std::ffi::{c_char, CStr};

use cudarc::driver::sys;

use super::failed::{out, result, Failed};

/// `cuInit`. cudarc loads the driver library lazily and panics when it is missing: check that
/// it can be loaded first (`sys::is_culib_present`).
pub(crate) fn init(flags: u32) -> Result<(), Failed> {
    // SAFETY: no pointer is passed; the driver checks the flags.
    result("cuInit", unsafe { sys::cuInit(flags) })
}

/// `cuDriverGetVersion`: the driver's CUDA version, `1000 * major + 10 * minor`.
pub(crate) fn driver_get_version() -> Result<i32, Failed> {
    // SAFETY: valid out-pointer.
    out("cuDriverGetVersion", 0, |v| unsafe { sys::cuDriverGetVersion(v) })
}

/// `cuGetErrorString`: the driver's description of `code` (a static string of the driver's).
pub(crate) fn get_error_string(code: sys::CUresult) -> Result<&'static CStr, Failed> {
    let mut s: *const c_char = std::ptr::null();
    // SAFETY: valid out-pointer; the driver checks the code.
    result("cuGetErrorString", unsafe { sys::cuGetErrorString(code, &mut s) })?;
    // SAFETY: on success the driver points `s` at a NUL-terminated string it never frees.
    Ok(unsafe { CStr::from_ptr(s) })
}

/// `cuDeviceGetCount`.
pub(crate) fn device_get_count() -> Result<i32, Failed> {
    // SAFETY: valid out-pointer.
    out("cuDeviceGetCount", 0, |n| unsafe { sys::cuDeviceGetCount(n) })
}

/// `cuDeviceGet`: the handle of the device with this ordinal (the driver checks the range).
pub(crate) fn device_get(ordinal: i32) -> Result<sys::CUdevice, Failed> {
    // SAFETY: valid out-pointer; the driver checks the ordinal.
    out("cuDeviceGet", 0, |dev| unsafe { sys::cuDeviceGet(dev, ordinal) })
}

/// `cuDeviceGetName`, read into a buffer of 256 bytes.
pub(crate) fn device_get_name(dev: sys::CUdevice) -> Result<String, Failed> {
    let mut buf = [0 as c_char; 256];
    // SAFETY: buf is writable for its whole length, which is what we pass.
    result("cuDeviceGetName", unsafe {
        sys::cuDeviceGetName(buf.as_mut_ptr(), buf.len() as i32, dev)
    })?;
    // SAFETY: the driver NUL-terminates the name within the buffer.
    let name = unsafe { CStr::from_ptr(buf.as_ptr()) };
    Ok(name.to_string_lossy().into_owned())
}

/// `cuDeviceGetPCIBusId`, read into a buffer of 64 bytes.
pub(crate) fn device_get_pci_bus_id(dev: sys::CUdevice) -> Result<String, Failed> {
    let mut buf = [0 as c_char; 64];
    // SAFETY: buf is writable for its whole length, which is what we pass.
    result("cuDeviceGetPCIBusId", unsafe {
        sys::cuDeviceGetPCIBusId(buf.as_mut_ptr(), buf.len() as i32, dev)
    })?;
    // SAFETY: the driver NUL-terminates the id within the buffer.
    let id = unsafe { CStr::from_ptr(buf.as_ptr()) };
    Ok(id.to_string_lossy().into_owned())
}

/// `cuDeviceGetByPCIBusId`.
pub(crate) fn device_get_by_pci_bus_id(bus_id: &CStr) -> Result<sys::CUdevice, Failed> {
    // SAFETY: `bus_id` is NUL-terminated; valid out-pointer.
    out("cuDeviceGetByPCIBusId", 0, |dev| unsafe {
        sys::cuDeviceGetByPCIBusId(dev, bus_id.as_ptr())
    })
}

/// `cuDeviceTotalMem`: the device's memory in bytes.
pub(crate) fn device_total_mem(dev: sys::CUdevice) -> Result<usize, Failed> {
    // SAFETY: valid out-pointer.
    out("cuDeviceTotalMem", 0, |bytes| unsafe {
        sys::cuDeviceTotalMem_v2(bytes, dev)
    })
}

/// `cuDeviceGetAttribute`.
pub(crate) fn device_get_attribute(
    dev: sys::CUdevice,
    attribute: sys::CUdevice_attribute,
) -> Result<i32, Failed> {
    // SAFETY: valid out-pointer; the driver checks the attribute.
    out("cuDeviceGetAttribute", 0, |value| unsafe {
        sys::cuDeviceGetAttribute(value, attribute, dev)
    })
}

/// `cuDeviceCanAccessPeer`.
pub(crate) fn device_can_access_peer(dev: sys::CUdevice, peer: sys::CUdevice) -> Result<bool, Failed> {
    let mut can = 0;
    // SAFETY: valid out-pointer.
    result("cuDeviceCanAccessPeer", unsafe {
        sys::cuDeviceCanAccessPeer(&mut can, dev, peer)
    })?;
    Ok(can != 0)
}

/// `cuDevicePrimaryCtxRetain`: the device's primary context, with one more reference.
pub(crate) fn device_primary_ctx_retain(dev: sys::CUdevice) -> Result<sys::CUcontext, Failed> {
    // SAFETY: valid out-pointer.
    out("cuDevicePrimaryCtxRetain", std::ptr::null_mut(), |ctx| unsafe {
        sys::cuDevicePrimaryCtxRetain(ctx, dev)
    })
}

/// `cuDevicePrimaryCtxRelease`: one reference to the device's primary context given back; the
/// last one destroys it.
///
/// # Safety
/// The caller holds a reference from [`device_primary_ctx_retain`] and gives it up: nothing
/// of the caller's uses the context after this call.
pub(crate) unsafe fn device_primary_ctx_release(dev: sys::CUdevice) -> Result<(), Failed> {
    // SAFETY: the caller's guarantee.
    result("cuDevicePrimaryCtxRelease", unsafe {
        sys::cuDevicePrimaryCtxRelease_v2(dev)
    })
}
