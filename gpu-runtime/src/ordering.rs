//! Stream-ordered lifetimes: which streams have used an allocation and not been waited for, so
//! that work queued on another stream waits for them (cross-stream hazards), and so that the
//! allocation is freed, or handed out again by a pool, only after them.
//!
//! Every allocation carries a [`StreamUses`]: the stream that last wrote it and the streams
//! that read it since. Each asynchronous operation (a launch, an async copy or memset, a
//! synchronous copy on the legacy default stream) calls [`StreamUses::read_on`] or
//! [`StreamUses::write_on`] for every allocation it touches, before it is queued:
//!
//! - a read on stream S waits for the last writer, unless it is S;
//! - a write on S waits for the last writer and every reader, unless they are S;
//! - "waits" means: record the other stream's fence event now, and make S wait for it
//!   (`cuEventRecord` + `cuStreamWaitEvent`). Recording now captures all work queued on that
//!   stream so far, which includes the use in question; a fence re-recorded by another thread
//!   meanwhile only captures more, so a wait can be stricter than needed, never looser.
//!
//! The common case, use after use on one stream, costs one atomic load and no driver call: the
//! record keeps a *fast key*, the address of the only stream with uses outstanding plus a bit
//! saying whether that stream is also the writer, and a use that changes nothing is recognised
//! from it alone.
//!
//! When an allocation is dropped with uses outstanding, its memory is not freed at once: an
//! event is recorded on each stream that used it, and the context frees the memory once they
//! have completed ([`Graveyard`]), at its next allocation, synchronize, or out-of-memory retry,
//! or when it is destroyed. A pool keeps a returned block's record with the block, so the next
//! owner's first use on another stream waits for the previous owner's work, and a use on the
//! same stream is ordered by the stream itself, at no cost.
//!
//! Host memory the GPU uses (page-locked, managed, registered) is waited for by the host
//! before the host touches it: a host read waits for the last writer, a host write for every
//! use ([`StreamUses::host_read`], [`StreamUses::host_write`]).
//!
//! This is the design of cudarc (per-allocation events, stream-ordered frees), with events
//! recorded only when a stream boundary is crossed rather than at every use, and pools that
//! carry a block's record with it rather than synchronizing.

use std::cell::Cell;
use std::ffi::c_void;
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};

use cudarc::driver::sys::{self, CUresult};

use crate::context::{bind_raw, ContextInner};
use crate::error::{check, Result};

/// A stream as ordering sees it: its handle, the context it belongs to, and its fence.
///
/// Shared (`Arc`) by the [`Stream`](crate::Stream) and by every record that names it, so the
/// stream is destroyed only once no record can ask to wait for it. It holds its context weakly:
/// the context's own pools keep records, and a strong handle there would keep the context alive
/// forever. A context waits for all its work before it is destroyed, so a record naming a
/// stream of a context that is gone has nothing left to wait for.
pub(crate) struct StreamInner {
    pub(crate) raw: sys::CUstream,
    pub(crate) ctx_raw: sys::CUcontext,
    ctx: Weak<ContextInner>,
    /// Recorded on this stream whenever another stream must wait for the work queued on it.
    /// Null once destroyed (the legacy stream's, when its context goes).
    fence: AtomicPtr<sys::CUevent_st>,
    /// Created with `CU_STREAM_DEFAULT`: ordered with the legacy default stream by the driver.
    blocking: bool,
    /// The legacy default stream of its context (the null handle), which is not destroyed.
    legacy: bool,
    /// Uses on this stream neither wait for other streams nor are waited for by them
    /// ([`Stream::order_manually`](crate::Stream::order_manually)).
    manual: AtomicBool,
}

// SAFETY: stream and event handles may be used from any thread; the driver serialises work
// enqueued on them. The rest is immutable or atomic.
unsafe impl Send for StreamInner {}
// SAFETY: as above.
unsafe impl Sync for StreamInner {}

impl StreamInner {
    /// Wraps `raw`, a stream just created in the context `ctx` (current on this thread), with a
    /// new fence event. On failure the stream is destroyed.
    pub(crate) fn new(
        raw: sys::CUstream,
        ctx: &Arc<ContextInner>,
        blocking: bool,
    ) -> Result<Arc<StreamInner>> {
        let fence = match new_event() {
            Ok(ev) => ev,
            Err(e) => {
                if !raw.is_null() {
                    // SAFETY: the stream was just created by the caller and is not shared.
                    unsafe { sys::cuStreamDestroy_v2(raw) };
                }
                return Err(e);
            }
        };
        Ok(Arc::new(StreamInner {
            raw,
            ctx_raw: ctx.raw,
            ctx: Arc::downgrade(ctx),
            fence: AtomicPtr::new(fence),
            blocking,
            legacy: raw.is_null(),
            manual: AtomicBool::new(false),
        }))
    }

    /// The legacy default stream of a context being made, with its fence (an event of that
    /// context); the stream itself is the driver's.
    pub(crate) fn legacy(
        ctx_raw: sys::CUcontext,
        ctx: Weak<ContextInner>,
        fence: sys::CUevent,
    ) -> Arc<StreamInner> {
        Arc::new(StreamInner {
            raw: std::ptr::null_mut(),
            ctx_raw,
            ctx,
            fence: AtomicPtr::new(fence),
            blocking: true,
            legacy: true,
            manual: AtomicBool::new(false),
        })
    }

    /// Destroys the fence now; the context is closing and current (records of other contexts
    /// may still name this stream, but never touch its handles once the context is gone).
    pub(crate) fn release_fence(&self) {
        let fence = self.fence.swap(std::ptr::null_mut(), Ordering::AcqRel);
        if !fence.is_null() {
            // SAFETY: the fence was made for this stream and is destroyed once (swapped out).
            unsafe { sys::cuEventDestroy_v2(fence) };
        }
    }

    /// The fast key of this stream: its address, a multiple of 8.
    #[inline(always)]
    fn key(&self) -> usize {
        self as *const StreamInner as usize
    }

    pub(crate) fn set_manual(&self) {
        self.manual.store(true, Ordering::Relaxed);
    }

    /// True when the driver already orders work queued on `self` after work queued on `other`
    /// (or the streams are one): the same stream, or the legacy default stream and a blocking
    /// stream of the same context.
    fn ordered_after(&self, other: &StreamInner) -> bool {
        std::ptr::eq(self, other)
            || (self.ctx_raw == other.ctx_raw
                && ((self.legacy && other.blocking) || (other.legacy && self.blocking)))
    }

    /// Makes work queued on `self` from now on wait for the work queued on `other` so far.
    fn wait_for(&self, other: &StreamInner) -> Result<()> {
        if self.ordered_after(other) {
            return Ok(());
        }
        // A context waits for its work before it is destroyed: nothing is left to wait for.
        let Some(_alive) = other.ctx.upgrade() else {
            return Ok(());
        };
        let fence = other.fence.load(Ordering::Acquire);
        bind_raw(other.ctx_raw)?;
        // SAFETY: the event and the stream belong to `other`'s context, which is current and
        // kept alive by `_alive` (so the fence is not destroyed either).
        check("cuEventRecord", unsafe { sys::cuEventRecord(fence, other.raw) })?;
        bind_raw(self.ctx_raw)?;
        // SAFETY: both handles are live; a stream may wait for an event of another context.
        check("cuStreamWaitEvent", unsafe {
            sys::cuStreamWaitEvent(self.raw, fence, 0)
        })
    }

    /// Blocks the host until the work queued on this stream so far has finished.
    fn host_wait(&self) -> Result<()> {
        let Some(_alive) = self.ctx.upgrade() else {
            return Ok(());
        };
        bind_raw(self.ctx_raw)?;
        // SAFETY: the stream is live (the null handle is the context's legacy stream, and the
        // context is current).
        check("cuStreamSynchronize", unsafe {
            sys::cuStreamSynchronize(self.raw)
        })
    }
}

impl Drop for StreamInner {
    fn drop(&mut self) {
        // Without its context the handles are gone with it (a context waits for its work and
        // frees its streams and events when destroyed); while it closes, it is still there.
        let alive = self.ctx.upgrade();
        if (alive.is_none() && !Closing::is(self.ctx_raw)) || bind_raw(self.ctx_raw).is_err() {
            return;
        }
        self.release_fence();
        if !self.legacy {
            // SAFETY: the stream was made for this value and is destroyed once; work queued on
            // it still completes.
            unsafe { sys::cuStreamDestroy_v2(self.raw) };
        }
    }
}

thread_local! {
    /// The context whose state this thread is dropping (see [`Closing`]).
    static CLOSING: Cell<sys::CUcontext> = const { Cell::new(std::ptr::null_mut()) };
}

/// Marks a context as closing on this thread while its state is dropped: it can no longer be
/// upgraded to, but it still exists, so streams and pool blocks dropped meanwhile free their
/// handles and memory (all its work has finished by then).
pub(crate) struct Closing(sys::CUcontext);

impl Closing {
    pub(crate) fn enter(ctx: sys::CUcontext) -> Closing {
        Closing(CLOSING.replace(ctx))
    }

    /// True while `ctx` is closing on this thread.
    pub(crate) fn is(ctx: sys::CUcontext) -> bool {
        !ctx.is_null() && CLOSING.get() == ctx
    }
}

impl Drop for Closing {
    fn drop(&mut self) {
        CLOSING.set(self.0);
    }
}

/// The stream a launch is queued on, as the `#[kernel]` macro's generated code passes it
/// around: the legacy default stream of the kernel's context, or a [`Stream`](crate::Stream)
/// checked to belong to that context.
#[doc(hidden)]
#[derive(Clone, Copy)]
pub struct LaunchStream<'a>(pub(crate) &'a Arc<StreamInner>);

impl<'a> LaunchStream<'a> {
    /// The driver's handle.
    #[inline(always)]
    pub fn raw(&self) -> sys::CUstream {
        self.0.raw
    }

    #[inline(always)]
    pub(crate) fn inner(&self) -> &'a Arc<StreamInner> {
        self.0
    }
}

/// A new event without timing, in the current context.
pub(crate) fn new_event() -> Result<sys::CUevent> {
    let mut ev = std::ptr::null_mut();
    // SAFETY: valid out-pointer; the caller made the context current.
    check("cuEventCreate", unsafe {
        sys::cuEventCreate(&mut ev, sys::CUevent_flags::CU_EVENT_DISABLE_TIMING as u32)
    })?;
    Ok(ev)
}

/// How an operation touches memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Access {
    Read,
    Write,
}

/// The most readers a record names; one more makes the newcomer wait for them all and take
/// their place (correct, merely less concurrent). Kept small: a pool moves the record with
/// every block it hands out and takes back.
const MAX_READERS: usize = 3;

/// The streams a use must wait for: at most the writer and every reader.
#[derive(Default)]
struct Waits {
    streams: [Option<Arc<StreamInner>>; MAX_READERS + 1],
    count: usize,
}

impl Waits {
    fn push(&mut self, s: &Arc<StreamInner>) {
        self.streams[self.count] = Some(s.clone());
        self.count += 1;
    }

    fn iter(&self) -> impl Iterator<Item = &Arc<StreamInner>> {
        self.streams.iter().flatten()
    }
}

/// The streams that used an allocation and have not been waited for: the last writer and the
/// readers since (each of which waited for that writer). What a pool keeps with a free block.
///
/// Readers are packed at the front of the array (readers are only ever added at the first free
/// slot, and all removed at once).
#[derive(Default)]
pub(crate) struct UseSet {
    writer: Option<Arc<StreamInner>>,
    readers: [Option<Arc<StreamInner>>; MAX_READERS],
}

/// Fast-key bits: the key stream is also the last writer; a GPU write is outstanding.
const WRITER: usize = 1;
const PENDING_WRITE: usize = 2;
/// Several streams have uses outstanding: every use takes the slow path.
const MIXED: usize = 4;
const KEY_MASK: usize = !7;
/// No use outstanding.
const IDLE: usize = 0;

impl std::fmt::Debug for UseSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let key = |s: &Arc<StreamInner>| format!("{:#x}", s.key());
        f.debug_struct("UseSet")
            .field("writer", &self.writer.as_ref().map(key))
            .field("readers", &self.readers().map(key).collect::<Vec<_>>())
            .finish()
    }
}

impl UseSet {
    fn readers(&self) -> impl Iterator<Item = &Arc<StreamInner>> {
        self.readers.iter().flatten()
    }

    fn has_reader(&self, s: &StreamInner) -> bool {
        self.readers().any(|r| std::ptr::eq(&**r, s))
    }

    /// True when no use is outstanding.
    pub(crate) fn is_idle(&self) -> bool {
        self.writer.is_none() && self.readers().next().is_none()
    }

    /// Every stream with a use outstanding, writer first.
    fn streams(&self) -> impl Iterator<Item = &Arc<StreamInner>> {
        self.writer.iter().chain(self.readers())
    }

    /// The fast key this set is summed up by (see [`StreamUses`]).
    #[inline]
    fn fast_key(&self) -> usize {
        let pending = if self.writer.is_some() { PENDING_WRITE } else { 0 };
        match (&self.writer, &self.readers[0], &self.readers[1]) {
            (None, None, _) => IDLE,
            (Some(w), None, _) => w.key() | WRITER | PENDING_WRITE,
            (_, Some(r), None) => r.key() | pending,
            _ => MIXED | pending,
        }
    }

    /// Plans a use on `s`: the streams `s` must wait for, and the set after the use. Pure, so
    /// that it is tested without a GPU; nothing changes until the waits have been made.
    fn plan(&self, s: &Arc<StreamInner>, access: Access) -> (Waits, UseSet) {
        let is_s = |x: &Arc<StreamInner>| Arc::ptr_eq(x, s);
        let mut waits = Waits::default();
        let manual = s.manual.load(Ordering::Relaxed);
        let mut wait = |x: &Arc<StreamInner>| {
            if !is_s(x) && !manual && !x.manual.load(Ordering::Relaxed) {
                waits.push(x);
            }
        };
        let mut next = UseSet::default();
        match access {
            Access::Read => {
                next.writer = self.writer.clone();
                if self.writer.as_ref().is_some_and(is_s) || self.has_reader(s) {
                    next.readers = self.readers.clone();
                } else {
                    if let Some(w) = &self.writer {
                        wait(w);
                    }
                    match self.readers.iter().position(Option::is_none) {
                        Some(free) => {
                            next.readers = self.readers.clone();
                            next.readers[free] = Some(s.clone());
                        }
                        None => {
                            // Full: the newcomer waits for every reader and stands for them.
                            self.readers().for_each(&mut wait);
                            next.readers[0] = Some(s.clone());
                        }
                    }
                }
            }
            Access::Write => {
                self.streams().for_each(&mut wait);
                next.writer = Some(s.clone());
            }
        }
        (waits, next)
    }
}

/// The stream-ordering record of one allocation (see the module docs).
///
/// `fast` sums up `set`: [`IDLE`]; or a stream's key, with [`WRITER`] when that stream is the
/// last writer and the only stream with uses outstanding, or without when it is the only
/// reader (and [`PENDING_WRITE`] when some writer is still outstanding); or [`MIXED`]. It is
/// written under the mutex and read without it: a stale read can only send a use down the slow
/// path, because the state a fast-path use relies on can only change through a use on another
/// stream, which needs `&mut` (a write) or does not affect it (a read).
pub(crate) struct StreamUses {
    fast: AtomicUsize,
    set: Mutex<UseSet>,
}

impl std::fmt::Debug for StreamUses {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "StreamUses({:?})", *self.lock())
    }
}

impl Default for StreamUses {
    fn default() -> Self {
        StreamUses::new()
    }
}

impl StreamUses {
    /// A record of a new allocation: no uses.
    pub(crate) const fn new() -> StreamUses {
        StreamUses {
            fast: AtomicUsize::new(IDLE),
            set: Mutex::new(UseSet {
                writer: None,
                readers: [None, None, None],
            }),
        }
    }

    fn lock(&self) -> MutexGuard<'_, UseSet> {
        // Every critical section leaves the set consistent; a poisoned lock is usable.
        self.set.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The record, taken out (the allocation is being freed or returned to its pool).
    pub(crate) fn take(&mut self) -> UseSet {
        *self.fast.get_mut() = IDLE;
        std::mem::take(self.set.get_mut().unwrap_or_else(|p| p.into_inner()))
    }

    /// Orders a read of the allocation on `s` after its last write.
    #[inline(always)]
    pub(crate) fn read_on(&self, s: &Arc<StreamInner>) -> Result<()> {
        if self.fast.load(Ordering::Acquire) & KEY_MASK == s.key() {
            return Ok(());
        }
        self.use_on(s, Access::Read)
    }

    /// Orders a write of the allocation on `s` after every use.
    #[inline(always)]
    pub(crate) fn write_on(&self, s: &Arc<StreamInner>) -> Result<()> {
        if self.fast.load(Ordering::Acquire) == s.key() | WRITER | PENDING_WRITE {
            return Ok(());
        }
        self.use_on(s, Access::Write)
    }

    #[cold]
    #[inline(never)]
    fn use_on(&self, s: &Arc<StreamInner>, access: Access) -> Result<()> {
        let mut set = self.lock();
        let (waits, next) = set.plan(s, access);
        for x in waits.iter() {
            s.wait_for(x)?;
        }
        self.fast.store(next.fast_key(), Ordering::Release);
        *set = next;
        Ok(())
    }

    /// Blocks the host until no GPU write of the allocation is outstanding (before the host
    /// reads it). Errors are those of a failed context, whose work never runs on: after one,
    /// the GPU no longer touches the memory, so the caller may go on.
    #[inline]
    pub(crate) fn host_read(&self) -> Result<()> {
        if self.fast.load(Ordering::Acquire) & PENDING_WRITE == 0 {
            return Ok(());
        }
        self.host_use(Access::Read)
    }

    /// Blocks the host until no GPU use of the allocation is outstanding (before the host
    /// writes it, or gives it back to its owner).
    #[inline]
    pub(crate) fn host_write(&self) -> Result<()> {
        if self.fast.load(Ordering::Acquire) == IDLE {
            return Ok(());
        }
        self.host_use(Access::Write)
    }

    #[cold]
    fn host_use(&self, access: Access) -> Result<()> {
        let mut set = self.lock();
        let result = match access {
            Access::Read => set.writer.as_ref().map_or(Ok(()), |w| w.host_wait()),
            Access::Write => set.streams().try_for_each(|x| x.host_wait()),
        };
        if result.is_ok() {
            set.writer = None;
            if access == Access::Write {
                set.readers = Default::default();
            }
            self.fast.store(set.fast_key(), Ordering::Release);
        }
        result
    }
}

/// What a deferred release frees, once the streams that used it have finished.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Release {
    /// `cuMemFree` (device memory from `cuMemAlloc`/`cuMemAllocPitch`, and managed memory).
    DeviceMemory(sys::CUdeviceptr),
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
        unsafe {
            match self {
                Release::DeviceMemory(p) => {
                    sys::cuMemFree_v2(p);
                }
                Release::HostMemory(p) => {
                    sys::cuMemFreeHost(p);
                }
                Release::Array(a) => {
                    sys::cuArrayDestroy(a);
                }
                Release::Texture(t) => {
                    sys::cuTexObjectDestroy(t);
                }
                Release::Surface(s) => {
                    sys::cuSurfObjectDestroy(s);
                }
                Release::IpcMapping(p) => {
                    sys::cuIpcCloseMemHandle(p);
                }
            }
        }
    }
}

/// A release waiting for the events recorded on the streams that used the resource.
struct Deferred {
    events: [sys::CUevent; MAX_READERS + 1],
    count: usize,
    what: Release,
}

// SAFETY: event handles may be used from any thread; see Release.
unsafe impl Send for Deferred {}

/// A context's releases waiting for their streams, and its spare events.
#[derive(Default)]
pub(crate) struct Graveyard {
    pending: Mutex<Vec<Deferred>>,
    /// True while `pending` may hold something, so that allocations check it for free.
    any: AtomicBool,
    spare: Mutex<Vec<sys::CUevent>>,
}

// SAFETY: event handles may be used from any thread; everything is behind a mutex or atomic.
unsafe impl Send for Graveyard {}
// SAFETY: as above.
unsafe impl Sync for Graveyard {}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Graveyard {
    fn take_event(&self) -> Result<sys::CUevent> {
        if let Some(ev) = lock(&self.spare).pop() {
            return Ok(ev);
        }
        new_event()
    }

    /// Frees `what` of the context `ctx` once the uses in `uses` have finished: now when there
    /// are none, else when events recorded on their streams have completed. A stream of
    /// another context (peer access) is waited for by the host, at once. When an event cannot
    /// be recorded the host waits for every use, and the resource is freed now.
    pub(crate) fn release_after(&self, ctx: &ContextInner, uses: UseSet, what: Release) {
        if bind_raw(ctx.raw).is_err() {
            // A failed context: its work does not run on, and everything goes with it.
            // SAFETY: the owner gives the resource up; nothing can use it any more.
            unsafe { what.now() };
            return;
        }
        if uses.is_idle() {
            // SAFETY: as above, with no use outstanding.
            unsafe { what.now() };
            return;
        }
        let mut d = Deferred {
            events: [std::ptr::null_mut(); MAX_READERS + 1],
            count: 0,
            what,
        };
        let recorded = uses.streams().try_for_each(|s| -> Result<()> {
            if s.ctx_raw != ctx.raw {
                return s.host_wait();
            }
            let ev = self.take_event()?;
            d.events[d.count] = ev;
            d.count += 1;
            bind_raw(ctx.raw)?;
            // SAFETY: the event and the stream belong to this context, which is current.
            check("cuEventRecord", unsafe { sys::cuEventRecord(ev, s.raw) })
        });
        if recorded.is_err() {
            for s in uses.streams() {
                let _ = s.host_wait();
            }
            self.finish(ctx, d);
            return;
        }
        lock(&self.pending).push(d);
        self.any.store(true, Ordering::Release);
    }

    /// Releases `d` now and keeps its events for later.
    fn finish(&self, ctx: &ContextInner, d: Deferred) {
        if bind_raw(ctx.raw).is_ok() {
            // SAFETY: every stream that used the resource has finished with it, and its owner
            // gave it up.
            unsafe { d.what.now() };
        }
        lock(&self.spare).extend_from_slice(&d.events[..d.count]);
    }

    /// Releases what has become free; with `wait`, waits for everything first. Cheap when
    /// nothing is pending.
    pub(crate) fn collect(&self, ctx: &ContextInner, wait: bool) {
        if !self.any.load(Ordering::Acquire) {
            return;
        }
        let mut pending = lock(&self.pending);
        if bind_raw(ctx.raw).is_err() {
            return;
        }
        let mut i = 0;
        while i < pending.len() {
            let done = pending[i].events[..pending[i].count].iter().all(|&ev| {
                // SAFETY: a live event of this context, which is current.
                let r = unsafe {
                    if wait {
                        sys::cuEventSynchronize(ev)
                    } else {
                        sys::cuEventQuery(ev)
                    }
                };
                // An error other than "not ready" is a failed context, whose work has ended.
                r != CUresult::CUDA_ERROR_NOT_READY
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

    /// The context is going away (its work finished): frees everything pending and destroys
    /// the spare events. The context must be current, or failed.
    pub(crate) fn close(&mut self, ctx_current: bool) {
        let pending = std::mem::take(self.pending.get_mut().unwrap_or_else(|p| p.into_inner()));
        let spare = self.spare.get_mut().unwrap_or_else(|p| p.into_inner());
        for d in pending {
            if ctx_current {
                // SAFETY: the context has finished all its work; each resource is freed once.
                unsafe { d.what.now() };
            }
            spare.extend_from_slice(&d.events[..d.count]);
        }
        if ctx_current {
            for ev in spare.drain(..) {
                // SAFETY: spare events of this context, destroyed once.
                unsafe { sys::cuEventDestroy_v2(ev) };
            }
        }
        *self.any.get_mut() = false;
    }
}

impl ContextInner {
    /// Frees what the context's deferred releases have made free (called on allocation).
    #[inline]
    pub(crate) fn collect_garbage(&self) {
        self.graveyard.collect(self, false);
    }

    /// Gives back memory held for later: waits for every deferred release and frees it, and
    /// frees the blocks the context's staging pools hold. Called on out-of-memory before the
    /// allocation is retried once.
    pub(crate) fn reclaim(&self) {
        if let Some(st) = self.staging.get() {
            st.free_held();
        }
        self.graveyard.collect(self, true);
    }
}

/// Allocates with `alloc`; on out-of-memory, gives back what the context holds
/// ([`ContextInner::reclaim`]) and tries once more.
pub(crate) fn alloc_or_reclaim<T>(ctx: &ContextInner, mut alloc: impl FnMut() -> Result<T>) -> Result<T> {
    ctx.collect_garbage();
    match alloc() {
        Err(e) if e.is_out_of_memory() => {
            ctx.reclaim();
            alloc()
        }
        r => r,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A stream identity for planning only: no driver handles (its context is gone, so it is
    /// never waited for and its drop calls nothing).
    fn stream_of(blocking: bool, legacy: bool) -> Arc<StreamInner> {
        Arc::new(StreamInner {
            raw: std::ptr::null_mut(),
            ctx_raw: std::ptr::null_mut(),
            ctx: Weak::new(),
            fence: AtomicPtr::new(std::ptr::null_mut()),
            blocking,
            legacy,
            manual: AtomicBool::new(false),
        })
    }

    fn stream(blocking: bool) -> Arc<StreamInner> {
        stream_of(blocking, false)
    }

    fn names(waits: &Waits, all: &[&Arc<StreamInner>]) -> Vec<usize> {
        waits
            .iter()
            .map(|w| all.iter().position(|s| Arc::ptr_eq(s, w)).unwrap())
            .collect()
    }

    #[test]
    fn reads_wait_for_the_writer_and_writes_for_everyone() {
        let (a, b, c) = (stream(false), stream(false), stream(false));
        let all = [&a, &b, &c];
        let set = UseSet::default();
        assert_eq!(set.fast_key(), IDLE);
        // a writes: nothing to wait for.
        let (w, set) = set.plan(&a, Access::Write);
        assert_eq!(w.count, 0);
        assert_eq!(set.fast_key(), a.key() | WRITER | PENDING_WRITE);
        // b reads: waits for a (read after write).
        let (w, set) = set.plan(&b, Access::Read);
        assert_eq!(names(&w, &all), [0]);
        // c reads too: waits for a; b and c read concurrently.
        let (w, set) = set.plan(&c, Access::Read);
        assert_eq!(names(&w, &all), [0]);
        assert_eq!(set.fast_key(), MIXED | PENDING_WRITE);
        // b reads again: it already waited for a.
        let (w, set) = set.plan(&b, Access::Read);
        assert_eq!(w.count, 0);
        // a writes again: waits for both readers (write after read).
        let (w, set) = set.plan(&a, Access::Write);
        assert_eq!(names(&w, &all), [1, 2]);
        // c writes: waits for a (write after write).
        let (w, set) = set.plan(&c, Access::Write);
        assert_eq!(names(&w, &all), [0]);
        assert!(set.readers().next().is_none());
    }

    #[test]
    fn the_fast_key_admits_exactly_the_uses_that_change_nothing() {
        let (a, b) = (stream(false), stream(false));
        let fast_read = |set: &UseSet, s: &Arc<StreamInner>| set.fast_key() & KEY_MASK == s.key();
        let fast_write =
            |set: &UseSet, s: &Arc<StreamInner>| set.fast_key() == s.key() | WRITER | PENDING_WRITE;
        let mut set = UseSet::default();
        for step in 0..200u32 {
            // A fixed pseudo-random walk over reads and writes on two streams.
            let s = if step.wrapping_mul(2654435761) >> 31 == 0 {
                &a
            } else {
                &b
            };
            let access = if step % 3 == 0 {
                Access::Write
            } else {
                Access::Read
            };
            let (waits, next) = set.plan(s, access);
            let changes = waits.count > 0
                || next.fast_key() != set.fast_key()
                || next.writer.as_ref().map(Arc::as_ptr) != set.writer.as_ref().map(Arc::as_ptr);
            let fast = match access {
                Access::Read => fast_read(&set, s),
                Access::Write => fast_write(&set, s),
            };
            // The fast path is taken only when the slow path would do nothing.
            assert!(!(fast && changes), "step {step}: fast path would skip a change");
            set = next;
        }
    }

    #[test]
    fn a_reader_past_the_last_slot_waits_for_the_readers_before_it() {
        let s: Vec<_> = (0..MAX_READERS + 2).map(|_| stream(false)).collect();
        let all: Vec<&Arc<StreamInner>> = s.iter().collect();
        let (_, mut set) = UseSet::default().plan(&s[0], Access::Write);
        for r in &s[1..=MAX_READERS] {
            let (w, next) = set.plan(r, Access::Read);
            assert_eq!(names(&w, &all), [0]);
            set = next;
        }
        let last = MAX_READERS + 1;
        let (w, set) = set.plan(&s[last], Access::Read);
        assert_eq!(names(&w, &all), (0..last).collect::<Vec<_>>());
        assert_eq!(set.readers().count(), 1);
        // The writer is still outstanding for the host and for later writers.
        let (w, _) = set.plan(&s[1], Access::Write);
        assert_eq!(names(&w, &all), [0, last]);
    }

    #[test]
    fn manual_streams_neither_wait_nor_are_waited_for() {
        let (a, m) = (stream(false), stream(false));
        m.set_manual();
        let all = [&a, &m];
        let (_, set) = UseSet::default().plan(&a, Access::Write);
        let (w, set) = set.plan(&m, Access::Write);
        assert_eq!(w.count, 0);
        let (w, _) = set.plan(&a, Access::Read);
        assert!(names(&w, &all).is_empty());
    }

    #[test]
    fn the_legacy_stream_and_blocking_streams_are_ordered_by_the_driver() {
        let legacy = stream_of(true, true);
        let (blocking, free) = (stream(true), stream(false));
        assert!(legacy.ordered_after(&blocking) && blocking.ordered_after(&legacy));
        assert!(!legacy.ordered_after(&free) && !free.ordered_after(&legacy));
        assert!(!blocking.ordered_after(&free));
        assert!(free.ordered_after(&free));
    }
}
