//! Contexts: the calling thread's current context and context stack, creation and
//! destruction, the current context's settings, peer access, and the profiler. A function
//! without a context argument acts on the context current on the calling thread (the driver
//! refuses when there is none); it is safe when its only arguments are values the driver
//! checks.

use cudarc::driver::sys;

use super::failed::{out, result, Failed};

/// `cuCtxGetCurrent`: the context current on the calling thread (null when none is).
#[inline]
pub(crate) fn ctx_get_current() -> Result<sys::CUcontext, Failed> {
    // SAFETY: valid out-pointer.
    out("cuCtxGetCurrent", std::ptr::null_mut(), |ctx| unsafe {
        sys::cuCtxGetCurrent(ctx)
    })
}

/// `cuCtxSetCurrent`: makes `ctx` current on the calling thread, in place of the top of its
/// context stack.
///
/// # Safety
/// `ctx` is live (or null: no context current).
#[inline]
pub(crate) unsafe fn ctx_set_current(ctx: sys::CUcontext) -> Result<(), Failed> {
    // SAFETY: the caller's guarantee.
    result("cuCtxSetCurrent", unsafe { sys::cuCtxSetCurrent(ctx) })
}

/// `cuCtxPushCurrent`: pushes `ctx` on the calling thread's context stack.
///
/// # Safety
/// `ctx` is live.
pub(crate) unsafe fn ctx_push_current(ctx: sys::CUcontext) -> Result<(), Failed> {
    // SAFETY: the caller's guarantee.
    result("cuCtxPushCurrent", unsafe { sys::cuCtxPushCurrent_v2(ctx) })
}

/// `cuCtxPopCurrent`: pops the calling thread's current context off its context stack, and
/// returns it.
pub(crate) fn ctx_pop_current() -> Result<sys::CUcontext, Failed> {
    // SAFETY: valid out-pointer; the driver refuses an empty stack.
    out("cuCtxPopCurrent", std::ptr::null_mut(), |ctx| unsafe {
        sys::cuCtxPopCurrent_v2(ctx)
    })
}

/// `cuCtxCreate` (`cuCtxCreate_v4`, no creation parameters): a new context on `dev` with
/// `flags`, pushed on the calling thread's context stack.
pub(crate) fn ctx_create(flags: u32, dev: sys::CUdevice) -> Result<sys::CUcontext, Failed> {
    // SAFETY: valid out-pointer; null creation parameters are allowed; the driver checks the
    // flags and the device.
    out("cuCtxCreate", std::ptr::null_mut(), |ctx| unsafe {
        sys::cuCtxCreate_v4(ctx, std::ptr::null_mut(), flags, dev)
    })
}

/// `cuCtxDestroy`.
///
/// # Safety
/// `ctx` was made by [`ctx_create`], is destroyed once, and nothing uses it after this call.
pub(crate) unsafe fn ctx_destroy(ctx: sys::CUcontext) -> Result<(), Failed> {
    // SAFETY: the caller's guarantee.
    result("cuCtxDestroy", unsafe { sys::cuCtxDestroy_v2(ctx) })
}

/// `cuCtxSynchronize`: waits on the host for the work queued in the current context.
pub(crate) fn ctx_synchronize() -> Result<(), Failed> {
    // SAFETY: no arguments; the driver refuses when no context is current.
    result("cuCtxSynchronize", unsafe { sys::cuCtxSynchronize() })
}

/// `cuCtxGetDevice`: the device of the current context.
pub(crate) fn ctx_get_device() -> Result<sys::CUdevice, Failed> {
    // SAFETY: valid out-pointer; the driver refuses when no context is current.
    out("cuCtxGetDevice", 0, |dev| unsafe { sys::cuCtxGetDevice(dev) })
}

/// `cuCtxGetFlags`: the current context's flags.
pub(crate) fn ctx_get_flags() -> Result<u32, Failed> {
    // SAFETY: valid out-pointer.
    out("cuCtxGetFlags", 0, |flags| unsafe { sys::cuCtxGetFlags(flags) })
}

/// `cuCtxGetApiVersion`: the driver API version `ctx` was created with.
///
/// # Safety
/// `ctx` is live.
pub(crate) unsafe fn ctx_get_api_version(ctx: sys::CUcontext) -> Result<u32, Failed> {
    // SAFETY: the caller's guarantee; valid out-pointer.
    out("cuCtxGetApiVersion", 0, |v| unsafe {
        sys::cuCtxGetApiVersion(ctx, v)
    })
}

/// `cuCtxSetLimit` on the current context.
pub(crate) fn ctx_set_limit(limit: sys::CUlimit, value: usize) -> Result<(), Failed> {
    // SAFETY: the driver checks the limit and the value.
    result("cuCtxSetLimit", unsafe { sys::cuCtxSetLimit(limit, value) })
}

/// `cuCtxGetLimit` of the current context.
pub(crate) fn ctx_get_limit(limit: sys::CUlimit) -> Result<usize, Failed> {
    // SAFETY: valid out-pointer; the driver checks the limit.
    out("cuCtxGetLimit", 0, |value| unsafe {
        sys::cuCtxGetLimit(value, limit)
    })
}

/// `cuCtxSetCacheConfig` on the current context.
pub(crate) fn ctx_set_cache_config(config: sys::CUfunc_cache) -> Result<(), Failed> {
    // SAFETY: the driver checks the value.
    result("cuCtxSetCacheConfig", unsafe { sys::cuCtxSetCacheConfig(config) })
}

/// `cuCtxGetCacheConfig` of the current context.
pub(crate) fn ctx_get_cache_config() -> Result<sys::CUfunc_cache, Failed> {
    // SAFETY: valid out-pointer.
    out(
        "cuCtxGetCacheConfig",
        sys::CUfunc_cache::CU_FUNC_CACHE_PREFER_NONE,
        |config| unsafe { sys::cuCtxGetCacheConfig(config) },
    )
}

/// `cuCtxSetSharedMemConfig` on the current context.
pub(crate) fn ctx_set_shared_mem_config(config: sys::CUsharedconfig) -> Result<(), Failed> {
    // SAFETY: the driver checks the value.
    result("cuCtxSetSharedMemConfig", unsafe {
        sys::cuCtxSetSharedMemConfig(config)
    })
}

/// `cuCtxGetSharedMemConfig` of the current context.
pub(crate) fn ctx_get_shared_mem_config() -> Result<sys::CUsharedconfig, Failed> {
    // SAFETY: valid out-pointer.
    out(
        "cuCtxGetSharedMemConfig",
        sys::CUsharedconfig::CU_SHARED_MEM_CONFIG_DEFAULT_BANK_SIZE,
        |config| unsafe { sys::cuCtxGetSharedMemConfig(config) },
    )
}

/// `cuCtxGetStreamPriorityRange` of the current context: `(least, greatest)`.
pub(crate) fn ctx_get_stream_priority_range() -> Result<(i32, i32), Failed> {
    let (mut least, mut greatest) = (0, 0);
    // SAFETY: valid out-pointers.
    result("cuCtxGetStreamPriorityRange", unsafe {
        sys::cuCtxGetStreamPriorityRange(&mut least, &mut greatest)
    })?;
    Ok((least, greatest))
}

/// `cuCtxEnablePeerAccess`: kernels and copies of the current context may access `peer`'s
/// memory.
///
/// # Safety
/// `peer` is live.
pub(crate) unsafe fn ctx_enable_peer_access(peer: sys::CUcontext) -> Result<(), Failed> {
    // SAFETY: the caller's guarantee; flags must be 0.
    result("cuCtxEnablePeerAccess", unsafe {
        sys::cuCtxEnablePeerAccess(peer, 0)
    })
}

/// `cuCtxDisablePeerAccess`.
///
/// # Safety
/// `peer` is live.
pub(crate) unsafe fn ctx_disable_peer_access(peer: sys::CUcontext) -> Result<(), Failed> {
    // SAFETY: the caller's guarantee.
    result("cuCtxDisablePeerAccess", unsafe {
        sys::cuCtxDisablePeerAccess(peer)
    })
}

/// `cuProfilerStart` in the current context's device.
pub(crate) fn profiler_start() -> Result<(), Failed> {
    // SAFETY: no arguments.
    result("cuProfilerStart", unsafe { sys::cuProfilerStart() })
}

/// `cuProfilerStop` in the current context's device.
pub(crate) fn profiler_stop() -> Result<(), Failed> {
    // SAFETY: no arguments.
    result("cuProfilerStop", unsafe { sys::cuProfilerStop() })
}
