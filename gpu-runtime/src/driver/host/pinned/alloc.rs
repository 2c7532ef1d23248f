//! The memory half of [`pinned`](super): allocation flags, the allocator pools take, mapped
//! addresses.

use std::ffi::c_void;

use cudarc::driver::sys;

use crate::driver::calls;
use crate::driver::context::context_link::ContextLink;
use crate::driver::context::core::Context;
use crate::driver::memory::pool_core::{PoolCore, RawAllocator};
use crate::driver::ordering::{Release, UseSet};
use crate::error::{Error, Result};

/// Flags for page-locked allocations (PyCUDA's `host_alloc_flags`), combined with `|`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub struct HostAllocFlags(u32);

impl HostAllocFlags {
    /// No flags: pinned memory for this context.
    pub const NONE: HostAllocFlags = HostAllocFlags(0);
    /// Pinned for every context, not only the one it was allocated in (`CU_MEMHOSTALLOC_PORTABLE`).
    pub const PORTABLE: HostAllocFlags = HostAllocFlags(sys::CU_MEMHOSTALLOC_PORTABLE);
    /// Mapped into the device's address space, so kernels can read and write it directly
    /// (`CU_MEMHOSTALLOC_DEVICEMAP`); see [`PinnedArray::mapped`](super::PinnedArray::mapped).
    pub const DEVICE_MAP: HostAllocFlags = HostAllocFlags(sys::CU_MEMHOSTALLOC_DEVICEMAP);
    /// Write-combined: faster to copy to the device, very slow for the host to read
    /// (`CU_MEMHOSTALLOC_WRITECOMBINED`).
    pub const WRITE_COMBINED: HostAllocFlags = HostAllocFlags(sys::CU_MEMHOSTALLOC_WRITECOMBINED);

    /// The raw bits.
    pub fn bits(self) -> u32 {
        self.0
    }

    /// True when every flag of `other` is set here.
    pub fn contains(self, other: HostAllocFlags) -> bool {
        self.0 & other.0 == other.0
    }
}

impl std::ops::BitOr for HostAllocFlags {
    type Output = HostAllocFlags;
    fn bitor(self, rhs: HostAllocFlags) -> HostAllocFlags {
        HostAllocFlags(self.0 | rhs.0)
    }
}

/// `cuMemHostAlloc` of `bytes` with `flags` in `ctx`, giving back what the context holds and
/// retrying once on out-of-memory.
pub(super) fn alloc_pinned(ctx: &Context, bytes: usize, flags: HostAllocFlags) -> Result<u64> {
    if bytes == 0 {
        return Ok(0);
    }
    crate::driver::context::core::alloc_or_reclaim(&ctx.inner, || {
        let p = ctx.bound(|| calls::mem_host_alloc(bytes, flags.0))?;
        Ok(p as u64)
    })
}

/// `cuMemHostAlloc` / `cuMemFreeHost` with fixed flags, frees ordered after the work on the
/// block.
pub(crate) struct PinnedAllocator {
    ctx: ContextLink,
    flags: HostAllocFlags,
}

impl PinnedAllocator {
    pub(crate) fn new(ctx: ContextLink, flags: HostAllocFlags) -> Self {
        PinnedAllocator { ctx, flags }
    }
}

impl RawAllocator for PinnedAllocator {
    fn allocate(&self, bytes: usize) -> Result<u64> {
        self.ctx.with(|ctx| alloc_pinned(ctx, bytes, self.flags))
    }

    unsafe fn free_after(&self, addr: u64, _bytes: usize, uses: UseSet) {
        if addr != 0 {
            self.ctx
                .release_after(uses, Release::HostMemory(addr as *mut c_void));
        }
    }

    fn reclaim(&self) {
        self.ctx.reclaim();
    }
}

pub(crate) type PinnedPoolCore = PoolCore<PinnedAllocator>;

pub(crate) fn mapped_device_ptr(
    ctx: &Context,
    mapped: bool,
    host: *mut c_void,
    len: usize,
) -> Result<sys::CUdeviceptr> {
    if !mapped {
        return Err(Error::NotMapped);
    }
    if len == 0 {
        return Ok(0);
    }
    ctx.bind()?;
    // `host` is the start of a live mapped allocation.
    Ok(calls::mem_host_get_device_pointer(host)?)
}

/// Flags for [`Context::register_host_memory`], combined with `|`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub struct HostRegisterFlags(u32);

impl HostRegisterFlags {
    /// The raw `CU_MEMHOSTREGISTER_*` bits.
    pub const fn bits(self) -> u32 {
        self.0
    }

    /// No flags.
    pub const NONE: HostRegisterFlags = HostRegisterFlags(0);
    /// Pinned for every context (`CU_MEMHOSTREGISTER_PORTABLE`).
    pub const PORTABLE: HostRegisterFlags = HostRegisterFlags(sys::CU_MEMHOSTREGISTER_PORTABLE);
    /// Mapped into the device's address space (`CU_MEMHOSTREGISTER_DEVICEMAP`).
    pub const DEVICE_MAP: HostRegisterFlags = HostRegisterFlags(sys::CU_MEMHOSTREGISTER_DEVICEMAP);
}

impl std::ops::BitOr for HostRegisterFlags {
    type Output = HostRegisterFlags;
    fn bitor(self, rhs: HostRegisterFlags) -> HostRegisterFlags {
        HostRegisterFlags(self.0 | rhs.0)
    }
}
