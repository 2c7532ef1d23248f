//! Memory: device, pitched, managed and page-locked host allocations and their frees,
//! registration of host memory, managed memory's hints, address queries, IPC handles, CUDA
//! arrays, and texture and surface objects. Allocations and queries are safe (the driver
//! checks what it is given and hands back new memory); frees, registrations and anything that
//! names memory the caller must keep alive are `unsafe`.

use std::ffi::c_void;

use cudarc::driver::sys;

use super::failed::{out, result, Failed};

/// `cuMemAlloc`: `bytes` bytes of device memory in the current context.
pub(crate) fn mem_alloc(bytes: usize) -> Result<sys::CUdeviceptr, Failed> {
    // SAFETY: valid out-pointer; the driver checks the context and the size.
    out("cuMemAlloc", 0, |ptr| unsafe { sys::cuMemAlloc_v2(ptr, bytes) })
}

/// `cuMemAllocPitch`: `height` rows of `width_bytes` bytes, each row starting at a multiple of
/// the returned pitch; `element_bytes` is 4, 8 or 16. Returns `(pointer, pitch)`.
pub(crate) fn mem_alloc_pitch(
    width_bytes: usize,
    height: usize,
    element_bytes: u32,
) -> Result<(sys::CUdeviceptr, usize), Failed> {
    let (mut ptr, mut pitch) = (0, 0);
    // SAFETY: valid out-pointers; the driver checks the context and the sizes.
    result("cuMemAllocPitch", unsafe {
        sys::cuMemAllocPitch_v2(&mut ptr, &mut pitch, width_bytes, height, element_bytes)
    })?;
    Ok((ptr, pitch))
}

/// `cuMemAllocManaged`: `bytes` bytes of managed memory in the current context.
// Managed memory is the `gpuarray` feature's (`ManagedArray`).
#[cfg(feature = "gpuarray")]
pub(crate) fn mem_alloc_managed(bytes: usize, flags: u32) -> Result<sys::CUdeviceptr, Failed> {
    // SAFETY: valid out-pointer; the driver checks the context, the size and the flags.
    out("cuMemAllocManaged", 0, |ptr| unsafe {
        sys::cuMemAllocManaged(ptr, bytes, flags)
    })
}

/// `cuMemFree` (device memory from `cuMemAlloc`, `cuMemAllocPitch` or `cuMemAllocManaged`).
///
/// # Safety
/// `ptr` is such an allocation of the current context, freed once, and nothing (queued work
/// included) uses it any more.
pub(crate) unsafe fn mem_free(ptr: sys::CUdeviceptr) -> Result<(), Failed> {
    // SAFETY: the caller's guarantee.
    result("cuMemFree", unsafe { sys::cuMemFree_v2(ptr) })
}

/// `cuMemHostAlloc`: `bytes` bytes of page-locked host memory.
pub(crate) fn mem_host_alloc(bytes: usize, flags: u32) -> Result<*mut c_void, Failed> {
    // SAFETY: valid out-pointer; the driver checks the context, the size and the flags.
    out("cuMemHostAlloc", std::ptr::null_mut(), |p| unsafe {
        sys::cuMemHostAlloc(p, bytes, flags)
    })
}

/// `cuMemFreeHost`.
///
/// # Safety
/// `p` came from `cuMemHostAlloc`, is freed once, and nothing (queued work included) uses it
/// any more.
pub(crate) unsafe fn mem_free_host(p: *mut c_void) -> Result<(), Failed> {
    // SAFETY: the caller's guarantee.
    result("cuMemFreeHost", unsafe { sys::cuMemFreeHost(p) })
}

/// `cuMemHostGetDevicePointer`: the device address of mapped page-locked host memory `p`.
pub(crate) fn mem_host_get_device_pointer(p: *mut c_void) -> Result<sys::CUdeviceptr, Failed> {
    // SAFETY: valid out-pointer; `p` is not dereferenced (the driver looks it up, and refuses
    // an address that is not mapped page-locked memory); flags must be 0.
    out("cuMemHostGetDevicePointer", 0, |d| unsafe {
        sys::cuMemHostGetDevicePointer_v2(d, p, 0)
    })
}

/// `cuMemHostRegister`: page-locks `bytes` bytes of host memory at `p`.
///
/// # Safety
/// `[p, p + bytes)` is live host memory that stays allocated, and is not moved, until
/// [`mem_host_unregister`].
pub(crate) unsafe fn mem_host_register(p: *mut c_void, bytes: usize, flags: u32) -> Result<(), Failed> {
    // SAFETY: the caller's guarantee; the driver checks the flags.
    result("cuMemHostRegister", unsafe {
        sys::cuMemHostRegister_v2(p, bytes, flags)
    })
}

/// `cuMemHostUnregister`.
///
/// # Safety
/// `p` was registered by [`mem_host_register`], is unregistered once, and no queued work uses
/// it any more.
pub(crate) unsafe fn mem_host_unregister(p: *mut c_void) -> Result<(), Failed> {
    // SAFETY: the caller's guarantee.
    result("cuMemHostUnregister", unsafe { sys::cuMemHostUnregister(p) })
}

/// `cuMemGetInfo`: `(free, total)` bytes of the current context's device.
pub(crate) fn mem_get_info() -> Result<(usize, usize), Failed> {
    let (mut free, mut total) = (0, 0);
    // SAFETY: valid out-pointers.
    result("cuMemGetInfo", unsafe {
        sys::cuMemGetInfo_v2(&mut free, &mut total)
    })?;
    Ok((free, total))
}

/// `cuMemGetAddressRange`: the base address and size of the allocation holding `ptr` (any
/// address inside it), in the current context.
pub(crate) fn mem_get_address_range(ptr: sys::CUdeviceptr) -> Result<(sys::CUdeviceptr, usize), Failed> {
    let (mut base, mut size) = (0, 0);
    // SAFETY: valid out-pointers; the driver checks that `ptr` lies in an allocation.
    result("cuMemGetAddressRange", unsafe {
        sys::cuMemGetAddressRange_v2(&mut base, &mut size, ptr)
    })?;
    Ok((base, size))
}

/// `cuMemPrefetchAsync`: migrates `bytes` bytes of managed memory at `ptr` to `location`,
/// queued on `stream`.
///
/// # Safety
/// The range lies in a live managed allocation that stays allocated until the prefetch has
/// run; `stream` is live.
// Managed memory is the `gpuarray` feature's (`ManagedArray`).
#[cfg(feature = "gpuarray")]
pub(crate) unsafe fn mem_prefetch_async(
    ptr: sys::CUdeviceptr,
    bytes: usize,
    location: sys::CUmemLocation,
    stream: sys::CUstream,
) -> Result<(), Failed> {
    // SAFETY: the caller's guarantees; flags must be 0.
    result("cuMemPrefetchAsync", unsafe {
        sys::cuMemPrefetchAsync_v2(ptr, bytes, location, 0, stream)
    })
}

/// `cuMemAdvise`: a usage hint for `bytes` bytes of managed memory at `ptr`.
///
/// # Safety
/// The range lies in a live managed allocation.
// Managed memory is the `gpuarray` feature's (`ManagedArray`).
#[cfg(feature = "gpuarray")]
pub(crate) unsafe fn mem_advise(
    ptr: sys::CUdeviceptr,
    bytes: usize,
    advice: sys::CUmem_advise,
    location: sys::CUmemLocation,
) -> Result<(), Failed> {
    // SAFETY: the caller's guarantee; the driver checks the advice and the location.
    result("cuMemAdvise", unsafe {
        sys::cuMemAdvise_v2(ptr, bytes, advice, location)
    })
}

/// `cuMemRangeGetAttribute` of an attribute whose value is one 4-byte integer (read-mostly,
/// the preferred and the last prefetch location), for `bytes` bytes of managed memory at
/// `ptr`.
///
/// # Safety
/// The range lies in a live managed allocation.
// Managed memory is the `gpuarray` feature's (`ManagedArray`).
#[cfg(feature = "gpuarray")]
pub(crate) unsafe fn mem_range_get_attribute(
    attribute: sys::CUmem_range_attribute,
    ptr: sys::CUdeviceptr,
    bytes: usize,
) -> Result<i32, Failed> {
    let mut v: i32 = 0;
    // SAFETY: the caller's guarantee; `v` is a 4-byte out-value, the size passed.
    result("cuMemRangeGetAttribute", unsafe {
        sys::cuMemRangeGetAttribute((&mut v as *mut i32).cast(), 4, attribute, ptr, bytes)
    })?;
    Ok(v)
}

/// `cuIpcGetMemHandle`: a handle by which other processes can map the allocation at `ptr`.
///
/// # Safety
/// `ptr` is the start of a live `cuMemAlloc` allocation of the current context, which, as
/// other processes may map it from now on, never passes to another owner in this process
/// while they may.
pub(crate) unsafe fn ipc_get_mem_handle(ptr: sys::CUdeviceptr) -> Result<sys::CUipcMemHandle, Failed> {
    // SAFETY: a plain C struct of bytes.
    let mut h: sys::CUipcMemHandle = unsafe { std::mem::zeroed() };
    // SAFETY: the caller's guarantee; valid out-pointer.
    result("cuIpcGetMemHandle", unsafe {
        sys::cuIpcGetMemHandle(&mut h, ptr)
    })?;
    Ok(h)
}

/// `cuIpcOpenMemHandle`: maps another process's allocation into the current context.
pub(crate) fn ipc_open_mem_handle(
    handle: sys::CUipcMemHandle,
    flags: u32,
) -> Result<sys::CUdeviceptr, Failed> {
    // SAFETY: valid out-pointer; the driver checks the handle and the flags.
    out("cuIpcOpenMemHandle", 0, |ptr| unsafe {
        sys::cuIpcOpenMemHandle_v2(ptr, handle, flags)
    })
}

/// `cuIpcCloseMemHandle`.
///
/// # Safety
/// `ptr` was mapped by [`ipc_open_mem_handle`] in the current context, is unmapped once, and
/// nothing (queued work included) uses it any more.
pub(crate) unsafe fn ipc_close_mem_handle(ptr: sys::CUdeviceptr) -> Result<(), Failed> {
    // SAFETY: the caller's guarantee.
    result("cuIpcCloseMemHandle", unsafe { sys::cuIpcCloseMemHandle(ptr) })
}

/// `cuIpcGetEventHandle`: a handle by which other processes can open `event`.
///
/// # Safety
/// `event` is live.
pub(crate) unsafe fn ipc_get_event_handle(event: sys::CUevent) -> Result<sys::CUipcEventHandle, Failed> {
    // SAFETY: a plain C struct of bytes.
    let mut h: sys::CUipcEventHandle = unsafe { std::mem::zeroed() };
    // SAFETY: the caller's guarantee; valid out-pointer.
    result("cuIpcGetEventHandle", unsafe {
        sys::cuIpcGetEventHandle(&mut h, event)
    })?;
    Ok(h)
}

/// `cuIpcOpenEventHandle`: opens another process's event in the current context.
pub(crate) fn ipc_open_event_handle(handle: sys::CUipcEventHandle) -> Result<sys::CUevent, Failed> {
    // SAFETY: valid out-pointer; the driver checks the handle.
    out("cuIpcOpenEventHandle", std::ptr::null_mut(), |event| unsafe {
        sys::cuIpcOpenEventHandle(event, handle)
    })
}

/// `cuArray3DCreate`: a CUDA array as `desc` describes, in the current context.
pub(crate) fn array_3d_create(desc: &sys::CUDA_ARRAY3D_DESCRIPTOR) -> Result<sys::CUarray, Failed> {
    // SAFETY: valid out-pointer and descriptor; the driver checks the description.
    out("cuArray3DCreate", std::ptr::null_mut(), |array| unsafe {
        sys::cuArray3DCreate_v2(array, desc)
    })
}

/// `cuArray3DGetDescriptor`: what the driver says `array` is.
///
/// # Safety
/// `array` is live.
pub(crate) unsafe fn array_3d_get_descriptor(
    array: sys::CUarray,
) -> Result<sys::CUDA_ARRAY3D_DESCRIPTOR, Failed> {
    // Starts as a valid descriptor (the driver overwrites every field), so that no
    // uninitialised value is ever read (the format's zero is no variant).
    let mut d = sys::CUDA_ARRAY3D_DESCRIPTOR {
        Width: 0,
        Height: 0,
        Depth: 0,
        Format: sys::CUarray_format::CU_AD_FORMAT_FLOAT,
        NumChannels: 0,
        Flags: 0,
    };
    // SAFETY: the caller's guarantee; valid out-pointer.
    result("cuArray3DGetDescriptor", unsafe {
        sys::cuArray3DGetDescriptor_v2(&mut d, array)
    })?;
    Ok(d)
}

/// `cuArrayDestroy`.
///
/// # Safety
/// `array` is live, destroyed once, and nothing (queued work, texture or surface objects
/// included) uses it any more.
pub(crate) unsafe fn array_destroy(array: sys::CUarray) -> Result<(), Failed> {
    // SAFETY: the caller's guarantee.
    result("cuArrayDestroy", unsafe { sys::cuArrayDestroy(array) })
}

/// `cuTexObjectCreate` with no resource view.
///
/// # Safety
/// The memory `res` names stays live (and, for linear and pitched memory, allocated) for as
/// long as the texture object may be used.
pub(crate) unsafe fn tex_object_create(
    res: &sys::CUDA_RESOURCE_DESC,
    tex: &sys::CUDA_TEXTURE_DESC,
) -> Result<sys::CUtexObject, Failed> {
    // SAFETY: the caller's guarantee; valid out-pointer and descriptors.
    out("cuTexObjectCreate", 0, |obj| unsafe {
        sys::cuTexObjectCreate(obj, res, tex, std::ptr::null())
    })
}

/// `cuTexObjectDestroy`.
///
/// # Safety
/// `obj` is live, destroyed once, and no queued work uses it any more.
pub(crate) unsafe fn tex_object_destroy(obj: sys::CUtexObject) -> Result<(), Failed> {
    // SAFETY: the caller's guarantee.
    result("cuTexObjectDestroy", unsafe { sys::cuTexObjectDestroy(obj) })
}

/// `cuSurfObjectCreate`.
///
/// # Safety
/// The array `res` names stays live for as long as the surface object may be used.
pub(crate) unsafe fn surf_object_create(res: &sys::CUDA_RESOURCE_DESC) -> Result<sys::CUsurfObject, Failed> {
    // SAFETY: the caller's guarantee; valid out-pointer and descriptor.
    out("cuSurfObjectCreate", 0, |obj| unsafe {
        sys::cuSurfObjectCreate(obj, res)
    })
}

/// `cuSurfObjectDestroy`.
///
/// # Safety
/// `obj` is live, destroyed once, and no queued work uses it any more.
pub(crate) unsafe fn surf_object_destroy(obj: sys::CUsurfObject) -> Result<(), Failed> {
    // SAFETY: the caller's guarantee.
    result("cuSurfObjectDestroy", unsafe { sys::cuSurfObjectDestroy(obj) })
}
