//! Modules and their functions and globals: loading, unloading, lookups, and the function
//! queries and settings beside the launch path (those on it are in `launch`).

use std::ffi::{c_void, CStr};

use cudarc::driver::sys;

use super::failed::{out, result, Failed};

/// `cuModuleLoadData`: loads an image into the current context, with no JIT options.
///
/// # Safety
/// `image` points to a complete image (cubin, fatbin, or NUL-terminated PTX), readable for
/// the duration of the call.
pub(crate) unsafe fn module_load_data(image: *const c_void) -> Result<sys::CUmodule, Failed> {
    // SAFETY: the caller's guarantee; valid out-pointer.
    out("cuModuleLoadData", std::ptr::null_mut(), |module| unsafe {
        sys::cuModuleLoadData(module, image)
    })
}

/// `cuModuleLoadDataEx`: loads an image into the current context with JIT options, option
/// `i` taking `values[i]`.
///
/// # Safety
/// As [`module_load_data`]; `options` and `values` have the same length, and each value is
/// what its option takes (a log buffer pointer is writable for the size given with it, for the
/// duration of the call).
pub(crate) unsafe fn module_load_data_ex(
    image: *const c_void,
    options: &mut [sys::CUjit_option],
    values: &mut [*mut c_void],
) -> Result<sys::CUmodule, Failed> {
    // SAFETY: the caller's guarantees; valid out-pointer.
    out("cuModuleLoadDataEx", std::ptr::null_mut(), |module| unsafe {
        sys::cuModuleLoadDataEx(
            module,
            image,
            options.len() as u32,
            options.as_mut_ptr(),
            values.as_mut_ptr(),
        )
    })
}

/// `cuModuleUnload`.
///
/// # Safety
/// `module` is live, its context is current, it is unloaded once, and nothing (queued work
/// included) uses its functions or globals any more.
pub(crate) unsafe fn module_unload(module: sys::CUmodule) -> Result<(), Failed> {
    // SAFETY: the caller's guarantee.
    result("cuModuleUnload", unsafe { sys::cuModuleUnload(module) })
}

/// `cuModuleGetFunction`: the function named `name` (`CUDA_ERROR_NOT_FOUND` when there is
/// none).
///
/// # Safety
/// `module` is live.
pub(crate) unsafe fn module_get_function(
    module: sys::CUmodule,
    name: &CStr,
) -> Result<sys::CUfunction, Failed> {
    // SAFETY: the caller's guarantee; valid out-pointer; NUL-terminated name.
    out("cuModuleGetFunction", std::ptr::null_mut(), |f| unsafe {
        sys::cuModuleGetFunction(f, module, name.as_ptr())
    })
}

/// `cuModuleGetGlobal`: the device address and size of the global named `name`
/// (`CUDA_ERROR_NOT_FOUND` when there is none).
///
/// # Safety
/// `module` is live and its context current.
pub(crate) unsafe fn module_get_global(
    module: sys::CUmodule,
    name: &CStr,
) -> Result<(sys::CUdeviceptr, usize), Failed> {
    let (mut ptr, mut bytes) = (0, 0);
    // SAFETY: the caller's guarantee; valid out-pointers; NUL-terminated name.
    result("cuModuleGetGlobal", unsafe {
        sys::cuModuleGetGlobal_v2(&mut ptr, &mut bytes, module, name.as_ptr())
    })?;
    Ok((ptr, bytes))
}

/// `cuFuncGetAttribute`.
///
/// # Safety
/// `f` is a live function.
pub(crate) unsafe fn func_get_attribute(
    f: sys::CUfunction,
    attribute: sys::CUfunction_attribute,
) -> Result<i32, Failed> {
    // SAFETY: the caller's guarantee; valid out-pointer; the driver checks the attribute.
    out("cuFuncGetAttribute", 0, |v| unsafe {
        sys::cuFuncGetAttribute(v, attribute, f)
    })
}

/// `cuFuncSetCacheConfig`.
///
/// # Safety
/// `f` is a live function.
pub(crate) unsafe fn func_set_cache_config(
    f: sys::CUfunction,
    config: sys::CUfunc_cache,
) -> Result<(), Failed> {
    // SAFETY: the caller's guarantee; the driver checks the value.
    result("cuFuncSetCacheConfig", unsafe {
        sys::cuFuncSetCacheConfig(f, config)
    })
}

/// `cuFuncSetSharedMemConfig`.
///
/// # Safety
/// `f` is a live function.
pub(crate) unsafe fn func_set_shared_mem_config(
    f: sys::CUfunction,
    config: sys::CUsharedconfig,
) -> Result<(), Failed> {
    // SAFETY: the caller's guarantee; the driver checks the value.
    result("cuFuncSetSharedMemConfig", unsafe {
        sys::cuFuncSetSharedMemConfig(f, config)
    })
}
