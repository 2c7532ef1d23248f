//! The GPU of the machine that builds: what `#[kernel]` ships PTX for by default (as nvcc's
//! `-arch=native` and candle's build script do), read from the CUDA driver with `libloading`
//! once per compiler process. None when there is no driver or no device.

use std::ffi::c_int;
use std::sync::OnceLock;

/// The lowest compute capability among this machine's GPUs and the driver's CUDA version, each
/// `(major, minor)`.
type Native = ((u32, u32), (u32, u32));

/// This machine's [`Native`], or `None` without a driver or a device.
pub fn native() -> Option<Native> {
    static NATIVE: OnceLock<Option<Native>> = OnceLock::new();
    *NATIVE.get_or_init(read)
}

type InitFn = unsafe extern "C" fn(u32) -> c_int;
type CountFn = unsafe extern "C" fn(*mut c_int) -> c_int;
type VersionFn = unsafe extern "C" fn(*mut c_int) -> c_int;
type DeviceFn = unsafe extern "C" fn(*mut c_int, c_int) -> c_int;
type AttributeFn = unsafe extern "C" fn(*mut c_int, c_int, c_int) -> c_int;

/// `CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR` and `_MINOR`.
const CC_MAJOR: c_int = 75;
const CC_MINOR: c_int = 76;

fn read() -> Option<Native> {
    // SAFETY: loading the driver library runs its initialisers, which have no preconditions of
    // ours; it stays loaded (leaked) for the process, as every CUDA program keeps it.
    let lib = unsafe { libloading::Library::new("libcuda.so.1") }
        .or_else(|_| unsafe { libloading::Library::new("nvcuda.dll") })
        .ok()?;
    let lib: &'static libloading::Library = Box::leak(Box::new(lib));
    // SAFETY: these are the driver API's C signatures (cuda.h, every version since 2.0).
    let (init, count, version, device, attribute) = unsafe {
        (
            *lib.get::<InitFn>(b"cuInit\0").ok()?,
            *lib.get::<CountFn>(b"cuDeviceGetCount\0").ok()?,
            *lib.get::<VersionFn>(b"cuDriverGetVersion\0").ok()?,
            *lib.get::<DeviceFn>(b"cuDeviceGet\0").ok()?,
            *lib.get::<AttributeFn>(b"cuDeviceGetAttribute\0").ok()?,
        )
    };
    // SAFETY: cuInit takes flags 0; the others write through valid out-pointers. None creates
    // a context.
    unsafe {
        if init(0) != 0 {
            return None;
        }
        let (mut n, mut v) = (0, 0);
        if count(&mut n) != 0 || n <= 0 || version(&mut v) != 0 {
            return None;
        }
        let mut lowest: Option<(u32, u32)> = None;
        for i in 0..n {
            let (mut dev, mut major, mut minor) = (0, 0, 0);
            if device(&mut dev, i) != 0
                || attribute(&mut major, CC_MAJOR, dev) != 0
                || attribute(&mut minor, CC_MINOR, dev) != 0
            {
                return None;
            }
            let cc = (major as u32, minor as u32);
            lowest = Some(lowest.map_or(cc, |l| l.min(cc)));
        }
        Some((lowest?, ((v / 1000) as u32, ((v % 1000) / 10) as u32)))
    }
}
