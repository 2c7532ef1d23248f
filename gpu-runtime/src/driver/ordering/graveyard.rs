//! Deferred releases: memory and handles freed once the streams that used them are done.

use std::ffi::c_void;
use std::sync::atomic::{AtomicBool, Ordering};

use cudarc::driver::sys::{self, CUresult};

use crate::driver::calls::{self, Failed};
use crate::driver::current::bind_raw;
use crate::error::{Error, Result};
use crate::sync::{LockRank, Mutex};

use super::block_cache::BlockCache;
use super::streams::new_event;
use super::uses::UseSet;

/// What a deferred release frees, once the streams that used it have finished.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Release {
    /// `cuMemFree` (device memory from `cuMemAlloc`/`cuMemAllocPitch`, and managed memory).
    DeviceMemory(sys::CUdeviceptr),
    /// A `cuMemAlloc` block of exactly `bytes` that may be kept in the context's
    /// [`BlockCache`] for the next allocation of that size instead (`cuMemFree` otherwise).
    CachedDeviceMemory {
        /// The block.
        ptr: sys::CUdeviceptr,
        /// Its size as allocated.
        bytes: usize,
    },
    /// `cuMemFreeHost` (page-locked memory from `cuMemHostAlloc`).
    HostMemory(*mut c_void),
    /// `cuArrayDestroy`.
    Array(sys::CUarray),
    /// `cuTexObjectDestroy`.
    Texture(sys::CUtexObject),
    /// `cuSurfObjectDestroy`.
    Surface(sys::CUsurfObject),
    /// `cuIpcCloseMemHandle`.
    IpcMapping(sys::CUdeviceptr),
}

// SAFETY: the handles and addresses are plain values the driver accepts from any thread.
unsafe impl Send for Release {}

impl Release {
    /// Frees it now. The context it belongs to must be current.
    ///
    /// # Safety
    /// The resource is live, released exactly once, and nothing uses it any more.
    pub(crate) unsafe fn now(self) {
        // SAFETY: the caller's guarantee; errors cannot be acted upon (the resource is gone
        // either way, or the context has failed and takes everything with it).
        let _ = unsafe {
            match self {
                Release::DeviceMemory(p) | Release::CachedDeviceMemory { ptr: p, .. } => calls::mem_free(p),
                Release::HostMemory(p) => calls::mem_free_host(p),
                Release::Array(a) => calls::array_destroy(a),
                Release::Texture(t) => calls::tex_object_destroy(t),
                Release::Surface(s) => calls::surf_object_destroy(s),
                Release::IpcMapping(p) => calls::ipc_close_mem_handle(p),
            }
        };
    }
}

/// A release waiting for the events recorded on the streams that used the resource.
pub(super) struct Deferred {
    pub(super) events: Vec<sys::CUevent>,
    /// Streams another library was capturing at the release, on which no event could be
    /// recorded (it would be a node of that capture): each gets its event once the capture
    /// is over ([`Graveyard::collect`]). The capture was invalidated, so only the work queued
    /// before it is waited for, and that is what the later event covers.
    pub(super) later: Vec<std::sync::Arc<super::streams::StreamInner>>,
    pub(super) what: Release,
}

// SAFETY: event handles may be used from any thread; see Release.
unsafe impl Send for Deferred {}

/// A context's releases waiting for their streams, and its spare events.
pub(crate) struct Graveyard {
    pub(super) pending: Mutex<Vec<Deferred>>,
    /// True while `pending` may hold something, so that allocations check it for free.
    pub(super) any: AtomicBool,
    pub(super) spare: Mutex<Vec<sys::CUevent>>,
    /// Blocks released as [`Release::CachedDeviceMemory`], kept for reuse.
    pub(super) cache: Mutex<BlockCache>,
}

impl Default for Graveyard {
    fn default() -> Self {
        Graveyard {
            pending: Mutex::new(LockRank::GraveyardPending, Vec::new()),
            any: AtomicBool::new(false),
            spare: Mutex::new(LockRank::GraveyardSpare, Vec::new()),
            cache: Mutex::new(LockRank::GraveyardCache, BlockCache::default()),
        }
    }
}

// SAFETY: event handles may be used from any thread; everything is behind a mutex or atomic.
unsafe impl Send for Graveyard {}
// SAFETY: as above.
unsafe impl Sync for Graveyard {}

impl Graveyard {
    pub(super) fn take_event(&self) -> Result<sys::CUevent> {
        if let Some(ev) = self.spare.lock().pop() {
            return Ok(ev);
        }
        new_event()
    }

    /// Frees `what` of the context `ctx` once the uses in `uses` have finished: now when there
    /// are none, else when events recorded on their streams have completed. A stream of
    /// another context (peer access) is waited for by the host, at once. When an event cannot
    /// be recorded the host waits for every use, and the resource is freed now.
    pub(crate) fn release_after(&self, ctx: sys::CUcontext, uses: UseSet, what: Release) {
        if bind_raw(ctx).is_err() {
            // A failed context: its work does not run on, and everything goes with it.
            // SAFETY: the owner gives the resource up; nothing can use it any more.
            unsafe { what.now() };
            return;
        }
        if uses.is_idle() {
            // SAFETY: as above, with no use outstanding; the context is current.
            unsafe { self.dispose(what) };
            return;
        }
        let mut d = Deferred {
            events: Vec::with_capacity(uses.streams().count()),
            later: Vec::new(),
            what,
        };
        let recorded = uses.streams().try_for_each(|s| -> Result<()> {
            if s.ctx_raw != ctx {
                return s.host_wait();
            }
            if s.exposed() && s.captured_elsewhere()? {
                d.later.push(s.clone());
                return Ok(());
            }
            let ev = self.take_event()?;
            d.events.push(ev);
            bind_raw(ctx)?;
            // SAFETY: the event and the stream belong to this context, which is current.
            Ok(unsafe { calls::event_record(ev, s.raw) }?)
        });
        if recorded.is_err() && d.later.is_empty() {
            for s in uses.streams() {
                let _ = s.host_wait();
            }
            self.finish(ctx, d);
            return;
        }
        self.pending.lock().push(d);
        self.any.store(true, Ordering::Release);
    }

    /// Releases `d` now and keeps its events for later.
    pub(super) fn finish(&self, ctx: sys::CUcontext, d: Deferred) {
        if bind_raw(ctx).is_ok() {
            // SAFETY: every stream that used the resource has finished with it, and its owner
            // gave it up; the context is current.
            unsafe { self.dispose(d.what) };
        }
        self.spare.lock().extend_from_slice(&d.events);
    }

    /// Frees `what` now, or keeps a [`Release::CachedDeviceMemory`] block in the cache while
    /// it fits the cache's limit.
    ///
    /// # Safety
    /// As [`Release::now`]; the context `what` belongs to is current.
    unsafe fn dispose(&self, what: Release) {
        if let Release::CachedDeviceMemory { ptr, bytes } = what {
            if self.cache.lock().put(ptr, bytes) {
                return;
            }
        }
        // SAFETY: the caller's guarantee.
        unsafe { what.now() }
    }

    /// A cached block of exactly `bytes`, unused by any stream, now the caller's (arrays
    /// allocate through it).
    pub(crate) fn take_cached(&self, bytes: usize) -> Option<sys::CUdeviceptr> {
        self.cache.lock().take(bytes)
    }

    /// Bytes the cache holds.
    pub(crate) fn cached_bytes(&self) -> usize {
        self.cache.lock().held()
    }

    /// Frees every cached block (the context `ctx` must be current, or failed: then the
    /// blocks go with it); returns the bytes given back.
    pub(crate) fn free_cached(&self, ctx: sys::CUcontext) -> usize {
        let mut cache = self.cache.lock();
        let held = cache.held();
        let blocks = cache.drain();
        drop(cache);
        free_blocks(ctx, blocks);
        held
    }

    /// Sets the cache's limit in bytes, freeing the blocks beyond it.
    pub(crate) fn set_cache_limit(&self, ctx: sys::CUcontext, limit: usize) {
        let over = self.cache.lock().set_limit(limit);
        free_blocks(ctx, over);
    }

    /// Releases what has become free; with `wait`, waits for everything first. Cheap when
    /// nothing is pending.
    pub(crate) fn collect(&self, ctx: sys::CUcontext, wait: bool) {
        if !self.any.load(Ordering::Acquire) {
            return;
        }
        let mut pending = self.pending.lock();
        if bind_raw(ctx).is_err() {
            return;
        }
        let mut i = 0;
        while i < pending.len() {
            if !pending[i].later.is_empty() && !self.record_after_capture(ctx, &mut pending[i]) {
                // A capture of another library's is still going on (never waited for: only
                // its owner can end it).
                i += 1;
                continue;
            }
            let done = pending[i].events.iter().all(|&ev| {
                // SAFETY: a live event of this context, which is current.
                let r = unsafe {
                    if wait {
                        calls::event_synchronize(ev).map(|()| true)
                    } else {
                        calls::event_query(ev)
                    }
                };
                // An event recorded in a capture answers with an error, but its stream's work
                // may be running: not done. Any other error than "not ready" is a failed
                // context, whose work has ended.
                match r {
                    Ok(done) => done,
                    Err(Failed { code, .. }) => {
                        code != CUresult::CUDA_ERROR_NOT_READY && !is_capture_error(code)
                    }
                }
            });
            if done {
                let d = pending.swap_remove(i);
                self.finish(ctx, d);
            } else {
                i += 1;
            }
        }
        if pending.is_empty() {
            self.any.store(false, Ordering::Release);
        }
    }

    /// Records the events of `d`'s streams that were being captured at its release, for those
    /// whose capture is over; true when none is left.
    fn record_after_capture(&self, ctx: sys::CUcontext, d: &mut Deferred) -> bool {
        let mut i = 0;
        while i < d.later.len() {
            let s = &d.later[i];
            if !matches!(s.captured_elsewhere(), Ok(false)) {
                i += 1;
                continue;
            }
            let Ok(ev) = self.take_event() else {
                i += 1;
                continue;
            };
            if bind_raw(ctx).is_err() {
                self.spare.lock().push(ev);
                return false;
            }
            // A failure becomes an Error all the same, so that a sticky one is recorded.
            // SAFETY: the event and the stream belong to this context, which is current; the
            // stream is not being captured.
            if unsafe { calls::event_record(ev, s.raw) }
                .map_err(Error::from)
                .is_ok()
            {
                d.events.push(ev);
                d.later.swap_remove(i);
            } else {
                self.spare.lock().push(ev);
                i += 1;
            }
        }
        d.later.is_empty()
    }

    /// The context is going away (its work finished): frees everything pending and destroys
    /// the spare events. The context must be current, or failed.
    pub(crate) fn close(&mut self, ctx_current: bool) {
        let pending = std::mem::take(self.pending.get_mut());
        let spare = self.spare.get_mut();
        for d in pending {
            if ctx_current {
                // SAFETY: the context has finished all its work; each resource is freed once.
                unsafe { d.what.now() };
            }
            spare.extend_from_slice(&d.events);
        }
        let cached = self.cache.get_mut().drain();
        if ctx_current {
            for p in cached {
                // SAFETY: a cached block of this context: unused, owned by the cache, freed once.
                let _ = unsafe { calls::mem_free(p) };
            }
            for ev in spare.drain(..) {
                // SAFETY: spare events of this context, destroyed once.
                let _ = unsafe { calls::event_destroy(ev) };
            }
        }
        *self.any.get_mut() = false;
    }
}

/// `cuMemFree` of `blocks` taken out of a cache of the context `ctx`, when it can be made
/// current (a failed context takes its memory with it).
fn free_blocks(ctx: sys::CUcontext, blocks: Vec<sys::CUdeviceptr>) {
    if blocks.is_empty() || bind_raw(ctx).is_err() {
        return;
    }
    for p in blocks {
        // SAFETY: each block left the cache, which owned it unused, and is freed once here.
        let _ = unsafe { calls::mem_free(p) };
    }
}

/// A driver error that an event recorded in (or a call on a stream in) another library's
/// capture answers with: the work behind it may still be queued.
fn is_capture_error(r: CUresult) -> bool {
    matches!(
        r,
        CUresult::CUDA_ERROR_CAPTURED_EVENT
            | CUresult::CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED
            | CUresult::CUDA_ERROR_STREAM_CAPTURE_INVALIDATED
            | CUresult::CUDA_ERROR_STREAM_CAPTURE_MERGE
            | CUresult::CUDA_ERROR_STREAM_CAPTURE_UNMATCHED
            | CUresult::CUDA_ERROR_STREAM_CAPTURE_UNJOINED
            | CUresult::CUDA_ERROR_STREAM_CAPTURE_ISOLATION
            | CUresult::CUDA_ERROR_STREAM_CAPTURE_IMPLICIT
            | CUresult::CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD
    )
}
