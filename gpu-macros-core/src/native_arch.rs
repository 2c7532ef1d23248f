//! The GPU of the machine that builds: what `#[kernel]` ships PTX for by default (as nvcc's
//! `-arch=native` and candle's build script do), read from the CUDA driver with `libloading`
//! once per compiler process. None when there is no driver or no device.

use std::ffi::c_int;
use std::sync::OnceLock;

/// The lowest compute capability among this machine's GPUs and the driver's CUDA version, each
/// `(major, minor)`.
type Native = ((u32, u32), (u32, u32));

/// The variable naming the GPU a binary built elsewhere will run on (`9.0`, `90`, `sm_90` or
/// `compute_90`), as candle's `CUDA_COMPUTE_CAP` does: it stands in for this machine's GPU, so
/// that a build without one (CI, a container) ships PTX too. Its driver is taken to accept
/// this NVRTC's PTX; where it does not, the run time compiles the source instead.
pub const TARGET_GPU_VAR: &str = "GPU_RUNTIME_TARGET_GPU";

/// The GPU to ship PTX for: [`TARGET_GPU_VAR`]'s, else this machine's ([`native`]).
pub fn target() -> Option<Native> {
    match std::env::var(TARGET_GPU_VAR) {
        Ok(v) if !v.trim().is_empty() => parse_cc(&v).map(|cc| (cc, (u32::MAX, 0))),
        _ => native(),
    }
}

/// `9.0`, `90`, `sm_90`, `compute_90` -> `(9, 0)`; `None` for anything else.
fn parse_cc(v: &str) -> Option<(u32, u32)> {
    let v = v.trim();
    let v = v
        .strip_prefix("sm_")
        .or_else(|| v.strip_prefix("compute_"))
        .unwrap_or(v);
    if let Some((a, b)) = v.split_once('.') {
        return Some((a.parse().ok()?, b.parse().ok()?));
    }
    let n: u32 = v.parse().ok()?;
    (10..=1000).contains(&n).then_some((n / 10, n % 10))
}

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

#[cfg(test)]
mod tests {
    use super::parse_cc;

    #[test]
    fn target_gpu_values_in_every_spelling() {
        for v in ["9.0", "90", "sm_90", "compute_90", " 9.0 "] {
            assert_eq!(parse_cc(v), Some((9, 0)), "{v}");
        }
        assert_eq!(parse_cc("12.1"), Some((12, 1)));
        assert_eq!(parse_cc("120"), Some((12, 0)));
        for v in ["", "sm_", "nine", "9", "9.x", "-90"] {
            assert_eq!(parse_cc(v), None, "{v}");
        }
    }
}
