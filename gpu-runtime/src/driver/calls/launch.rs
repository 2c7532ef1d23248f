//! Kernel launches and the function queries and settings around them.

use std::ffi::c_void;

use cudarc::driver::sys;

use super::failed::{out, result, Failed};

/// `cuLaunchKernel` with no `extra` array. Inlined into every launch: it adds nothing to the
/// call but the code's check.
///
/// # Safety
/// `f` is a live function of the current context and `stream` a live stream of it (or null);
/// the configuration is within the device's and the kernel's limits; `params` holds one pointer
/// per kernel parameter, each to a value of the C parameter's type, and every device pointer
/// among them stays valid until the kernel has run.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn launch_kernel(
    f: sys::CUfunction,
    grid: [u32; 3],
    block: [u32; 3],
    shared_mem_bytes: u32,
    stream: sys::CUstream,
    params: *mut *mut c_void,
) -> Result<(), Failed> {
    // SAFETY: the caller's guarantees; `extra` is null, so `params` is the only argument list.
    let code = unsafe {
        sys::cuLaunchKernel(
            f,
            grid[0],
            grid[1],
            grid[2],
            block[0],
            block[1],
            block[2],
            shared_mem_bytes,
            stream,
            params,
            std::ptr::null_mut(),
        )
    };
    result("cuLaunchKernel", code)
}

/// `cuLaunchKernelEx` with no `extra` array.
///
/// # Safety
/// As [`launch_kernel`], with the configuration, its stream and its attribute array in
/// `config` (which must point to `config.numAttrs` attributes).
#[inline]
pub(crate) unsafe fn launch_kernel_ex(
    config: &sys::CUlaunchConfig,
    f: sys::CUfunction,
    params: *mut *mut c_void,
) -> Result<(), Failed> {
    // SAFETY: the caller's guarantees; `extra` is null.
    let code = unsafe { sys::cuLaunchKernelEx(config, f, params, std::ptr::null_mut()) };
    result("cuLaunchKernelEx", code)
}

/// `cuFuncSetAttribute`.
///
/// # Safety
/// `f` is a live function.
pub(crate) unsafe fn func_set_attribute(
    f: sys::CUfunction,
    attribute: sys::CUfunction_attribute,
    value: i32,
) -> Result<(), Failed> {
    // SAFETY: a live function (the caller's promise); the driver checks the attribute and value.
    result("cuFuncSetAttribute", unsafe {
        sys::cuFuncSetAttribute(f, attribute, value)
    })
}

/// `cuOccupancyMaxActiveClusters`: how many clusters of `config`'s shape can be resident at
/// once.
///
/// # Safety
/// `f` is a live function; `config`'s attribute pointer holds `config.numAttrs` attributes.
pub(crate) unsafe fn occupancy_max_active_clusters(
    f: sys::CUfunction,
    config: &sys::CUlaunchConfig,
) -> Result<i32, Failed> {
    // SAFETY: the caller's guarantees; valid out-pointer.
    out("cuOccupancyMaxActiveClusters", 0, |n| unsafe {
        sys::cuOccupancyMaxActiveClusters(n, f, config)
    })
}

/// `cuOccupancyMaxActiveBlocksPerMultiprocessor`.
///
/// # Safety
/// `f` is a live function.
pub(crate) unsafe fn occupancy_max_active_blocks_per_multiprocessor(
    f: sys::CUfunction,
    block_size: i32,
    dynamic_shared_bytes: usize,
) -> Result<i32, Failed> {
    // SAFETY: a live function (the caller's promise); valid out-pointer.
    out("cuOccupancyMaxActiveBlocksPerMultiprocessor", 0, |n| unsafe {
        sys::cuOccupancyMaxActiveBlocksPerMultiprocessor(n, f, block_size, dynamic_shared_bytes)
    })
}

/// `cuFuncGetParamInfo` (CUDA 12.4): the offset and size of parameter `index`. An index past
/// the last parameter is an error the driver returns.
///
/// # Safety
/// `f` is a live function, and the driver has the symbol (cudarc panics on a missing one:
/// check the driver's version first).
pub(crate) unsafe fn func_get_param_info(f: sys::CUfunction, index: usize) -> Result<(usize, usize), Failed> {
    let (mut offset, mut size) = (0usize, 0usize);
    // SAFETY: the caller's guarantees; valid out-pointers.
    result("cuFuncGetParamInfo", unsafe {
        sys::cuFuncGetParamInfo(f, index, &mut offset, &mut size)
    })?;
    Ok((offset, size))
}
