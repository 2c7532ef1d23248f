//! Host ↔ device copies around a launch for arguments marked `#[In]`, `#[Out]` and `#[InOut]`
//! (PyCUDA's `In`, `Out` and `InOut` argument handlers), staged through pinned memory.
//!
//! A copy from ordinary (pageable) host memory is slow: the driver copies it through its own
//! small pinned buffers, one after the other. The convenience call does better with a pinned
//! staging buffer per argument, from a per-context pool: the host copies a chunk into it
//! while the DMA engine sends the previous chunk, and large transfers split the host copies
//! over a few threads (persistent ones, from copy_workers.rs, so that a call starts none).
//! One of the threads (the driver thread) makes every driver call of a phase, in chunk
//! order, and copies when it has nothing to issue; the others only copy, so they never queue
//! on the driver's locks. Device memory comes from a per-context pool too, so in steady state
//! a convenience call allocates nothing from the driver. Everything runs on one stream, the
//! context's own (created blocking, so it also waits for work queued before on the legacy
//! default stream) or one the caller names (`Staging::on_stream`): copies in, the kernel,
//! copies out; the call waits once at the end, which reports any error the kernel raised.

use std::marker::PhantomData;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use cudarc::driver::sys;

use crate::driver::context::core::Context;
use crate::driver::context::current::bind_raw;
use crate::driver::context::ext::{Extension, Slot};
use crate::driver::context::link::ContextLink;
use crate::driver::host::pinned::{HostAllocFlags, PinnedAllocator, PinnedPoolCore};
use crate::driver::host::slices::{HostSlice, HostSliceMut};
use crate::driver::memory::pool_core::{Block, PoolCore};
use crate::driver::memory::view::DeviceWrite;
use crate::driver::module::function::Function;
use crate::driver::ordering::{StreamInner, StreamUses};
use crate::driver::result::check;
use crate::error::{Error, Result};
use crate::launch::copy_workers;
use crate::launch::stream::LaunchStream;
use crate::tools::device_pool::{DeviceAllocator, DeviceMemoryPool, DevicePoolCore, PooledBuffer};
use crate::types::repr::DeviceRepr;

/// Host copies are split into chunks of at least this many bytes by default. Each chunk costs
/// the driver thread a driver call or two (a copy, and an event on the way back); smaller
/// chunks start the DMA sooner and leave less to copy after the last one arrives.
const DEFAULT_CHUNK: usize = 256 << 10;
/// …and at most this many chunks per direction (each download chunk needs an event).
const MAX_CHUNKS: usize = 64;
/// Each extra host-copy thread must have at least this much to copy to pay for waking it.
const BYTES_PER_THREAD: usize = 256 << 10;
/// By default, at most this many threads copy at once (memory bandwidth saturates beyond).
const DEFAULT_THREADS: usize = 8;

static CHUNK_BYTES: AtomicUsize = AtomicUsize::new(DEFAULT_CHUNK);
static MAX_THREADS: AtomicUsize = AtomicUsize::new(DEFAULT_THREADS);

/// Sets the smallest chunk the staged copies use and the most threads that copy at once, for
/// every later convenience call in the process (benches compare settings with it); 0 restores
/// a default. Only speed depends on them.
pub fn set_tuning(chunk_bytes: usize, threads: usize) {
    let chunk = if chunk_bytes == 0 {
        DEFAULT_CHUNK
    } else {
        chunk_bytes.next_multiple_of(4096)
    };
    let threads = if threads == 0 {
        DEFAULT_THREADS
    } else {
        threads.min(copy_workers::MAX_HELPERS + 1)
    };
    CHUNK_BYTES.store(chunk, Ordering::Relaxed);
    MAX_THREADS.store(threads, Ordering::Relaxed);
}

/// What one context keeps for staging: pools, the stream, spare events.
pub(crate) struct ContextStaging {
    device: Arc<DevicePoolCore>,
    pinned: Arc<PinnedPoolCore>,
    stream: Arc<StreamInner>,
    events: Mutex<Vec<sys::CUevent>>,
}

// SAFETY: event handles may be used from any thread; the event list is locked.
unsafe impl Send for ContextStaging {}
// SAFETY: as above.
unsafe impl Sync for ContextStaging {}

impl ContextStaging {
    /// Frees the blocks both pools hold (on out-of-memory).
    pub(crate) fn free_held(&self) {
        self.device.free_held();
        self.pinned.free_held();
    }
}

impl Drop for ContextStaging {
    fn drop(&mut self) {
        // Dropped by ContextInner::drop with the context current, or right after creation.
        // SAFETY: the events were created for this value and are destroyed once.
        unsafe {
            for e in self.events.get_mut().unwrap_or_else(|p| p.into_inner()).drain(..) {
                sys::cuEventDestroy_v2(e);
            }
        }
    }
}

impl Extension for ContextStaging {
    const SLOT: Slot = Slot::Staging;

    fn reclaim(&self) {
        self.free_held();
    }
}

fn staging_of(ctx: &Context) -> Result<&ContextStaging> {
    ctx.inner.ext.get_or_try_init(|| make_staging(ctx))
}

/// A context's staging state, made on its first convenience call.
fn make_staging(ctx: &Context) -> Result<ContextStaging> {
    ctx.bind()?;
    let mut stream = std::ptr::null_mut();
    // SAFETY: valid out-pointer; the context is current. Flag 0: a blocking stream.
    check("cuStreamCreate", unsafe { sys::cuStreamCreate(&mut stream, 0) })?;
    let made = ContextStaging {
        // The context owns these pools, so they hold a weak link to it.
        device: Arc::new(PoolCore::new(DeviceAllocator::new(ContextLink::weak(ctx)))),
        pinned: Arc::new(PoolCore::new(PinnedAllocator::new(
            ContextLink::weak(ctx),
            HostAllocFlags::NONE,
        ))),
        stream: StreamInner::new(stream, ctx.raw(), ctx.liveness(), true)?,
        events: Mutex::new(Vec::new()),
    };
    Ok(made)
}

impl Context {
    /// The context's own device memory pool: the one the In/Out convenience calls stage
    /// through, shared with them so that memory it holds serves both.
    pub fn device_pool(&self) -> Result<DeviceMemoryPool> {
        Ok(DeviceMemoryPool::from_core(
            staging_of(self)?.device.clone(),
            self,
        ))
    }
}

#[derive(Clone, Copy)]
struct Job {
    host: *mut u8,
    pinned: *mut u8,
    device: sys::CUdeviceptr,
    bytes: usize,
}

// SAFETY: the pointers address memory borrowed by the Staging for its whole life; jobs are
// only shared with copy_workers::run, whose helpers have all left before it returns.
unsafe impl Send for Job {}
// SAFETY: as above.
unsafe impl Sync for Job {}

/// One convenience call's staging: what the `#[kernel]` macro's `call` drives.
///
/// `input`/`output`/`input_output` per marked argument give the device buffer the kernel
/// takes; `upload` sends the inputs, `launch` launches the kernel on the call's stream, and
/// `finish` brings the outputs back and waits. Dropped early (an error), it waits for the copies
/// already queued before giving back the pinned buffers they use.
pub struct Staging<'a> {
    ctx: &'a Context,
    st: &'a ContextStaging,
    /// The stream the copies and the kernel run on: the context's staging stream, or the
    /// caller's ([`on_stream`](Self::on_stream)).
    stream: &'a Arc<StreamInner>,
    pinned: Vec<(Block, Box<StreamUses>)>,
    uploads: Vec<Job>,
    downloads: Vec<Job>,
    queued: bool,
    _host: PhantomData<&'a mut ()>,
}

impl<'a> Staging<'a> {
    /// Staging for one call of `kernel`.
    pub fn new(kernel: &'a Function) -> Result<Staging<'a>> {
        let ctx = kernel.context();
        let st = staging_of(ctx)?;
        Ok(Staging {
            ctx,
            st,
            stream: &st.stream,
            pinned: Vec::new(),
            uploads: Vec::new(),
            downloads: Vec::new(),
            queued: false,
            _host: PhantomData,
        })
    }

    /// Staging for one call of `kernel` whose copies and launch run on `stream` (PyCUDA's
    /// `stream=`), which was checked to belong to the kernel's context. `finish` waits for
    /// that stream, so work queued on it before the call is waited for too.
    pub fn on_stream(kernel: &'a Function, stream: LaunchStream<'a>) -> Result<Staging<'a>> {
        let mut staging = Staging::new(kernel)?;
        staging.stream = stream.inner();
        Ok(staging)
    }

    /// The stream the call runs on.
    pub fn stream(&self) -> sys::CUstream {
        self.stream.raw
    }

    fn stage<T: DeviceRepr>(&mut self, len: usize, host: *mut u8) -> Result<(PooledBuffer<T>, Job)> {
        let bytes = len * std::mem::size_of::<T>();
        let mut device = DeviceMemoryPool::from_core(self.st.device.clone(), self.ctx).alloc::<T>(len)?;
        // The block may come back from a user's stream (the pool is the context's, shared):
        // the copies into it are queued after that work.
        device.device_view_mut().write_on(self.stream)?;
        // Only staging uses the pinned pool, and it waits for its stream before giving a block
        // back: no use is outstanding.
        let (block, record) = self.st.pinned.allocate(bytes, "staging")?;
        self.pinned.push((block, record));
        let job = Job {
            host,
            pinned: block.addr as *mut u8,
            device: device.device_ptr(),
            bytes,
        };
        Ok((device, job))
    }

    /// The device copy of an `#[In]` argument (sent by `upload`).
    pub fn input<T: DeviceRepr>(
        &mut self,
        host: &'a (impl HostSlice<T> + ?Sized),
    ) -> Result<PooledBuffer<T>> {
        let host = host.host_slice()?;
        let (buf, job) = self.stage::<T>(host.len(), host.as_ptr() as *mut u8)?;
        if job.bytes > 0 {
            self.uploads.push(job);
        }
        Ok(buf)
    }

    /// Device memory for an `#[Out]` argument, contents unspecified (brought back by `finish`).
    pub fn output<T: DeviceRepr>(
        &mut self,
        host: &'a mut (impl HostSliceMut<T> + ?Sized),
    ) -> Result<PooledBuffer<T>> {
        let host = host.host_slice_mut()?;
        let (buf, job) = self.stage::<T>(host.len(), host.as_mut_ptr().cast())?;
        if job.bytes > 0 {
            self.downloads.push(job);
        }
        Ok(buf)
    }

    /// The device copy of an `#[InOut]` argument: sent by `upload`, brought back by `finish`.
    pub fn input_output<T: DeviceRepr>(
        &mut self,
        host: &'a mut (impl HostSliceMut<T> + ?Sized),
    ) -> Result<PooledBuffer<T>> {
        let host = host.host_slice_mut()?;
        let (buf, job) = self.stage::<T>(host.len(), host.as_mut_ptr().cast())?;
        if job.bytes > 0 {
            self.uploads.push(job);
            self.downloads.push(job);
        }
        Ok(buf)
    }

    /// Runs `launch` with the stream the call runs on. When it fails, waits for the copies
    /// already queued before returning the error: the caller then drops the device buffers
    /// they fill, which go back to their pool and must not be written any more.
    pub fn launch(&mut self, launch: impl FnOnce(LaunchStream<'_>) -> Result<()>) -> Result<()> {
        let result = launch(LaunchStream::new(self.stream));
        if result.is_err() {
            self.settle();
        }
        result
    }

    /// Waits for every copy queued so far (on an error path; errors are reported elsewhere).
    fn settle(&mut self) {
        if self.queued && bind_raw(self.ctx.raw()).is_ok() {
            // SAFETY: the stream is live.
            unsafe { sys::cuStreamSynchronize(self.stream.raw) };
        }
        self.queued = false;
    }

    /// Copies the inputs into pinned memory and queues their transfer, chunk by chunk. When
    /// it fails, waits for the chunks already queued (see [`launch`](Self::launch)).
    pub fn upload(&mut self) -> Result<()> {
        let result = self.queue_uploads();
        if result.is_err() {
            self.settle();
        }
        result
    }

    fn queue_uploads(&mut self) -> Result<()> {
        if self.uploads.is_empty() {
            return Ok(());
        }
        self.queued = true;
        let chunks = Chunks::new(&self.uploads);
        let copied = Flags::new(chunks.count);
        let stream = Handle(self.stream.raw);
        let copy_in = |i: usize| {
            if let Some((job, off, len)) = chunks.get(i) {
                // SAFETY: host and pinned each hold job.bytes bytes (checked when staged); each
                // chunk is claimed by one thread, so no two threads touch the same bytes.
                unsafe { std::ptr::copy_nonoverlapping(job.host.add(off), job.pinned.add(off), len) };
            }
        };
        let issue = |i: usize| {
            let (job, off, len) = chunks.get(i).unwrap_or_else(|| unreachable!("i < count"));
            // SAFETY: pinned and device each hold job.bytes bytes; the chunk was copied in
            // (upload_role issues it only then) and is not written again during the call.
            check("cuMemcpyHtoDAsync", unsafe {
                sys::cuMemcpyHtoDAsync_v2(
                    job.device + off as u64,
                    job.pinned.add(off).cast(),
                    len,
                    *stream.get(),
                )
            })
        };
        run_phase(chunks.total_bytes, self.ctx.raw(), &copied, |role| {
            upload_role(role, &copied, chunks.count, &copy_in, &issue)
        })
    }

    /// Queues the outputs' transfer back after the kernel, copies each chunk to the host as it
    /// arrives, and waits for the stream: reports any error the kernel raised.
    pub fn finish(mut self) -> Result<()> {
        let stream = self.stream.raw;
        let raw = self.ctx.raw();
        if !self.downloads.is_empty() {
            self.queued = true;
            let chunks = Chunks::new(&self.downloads);
            let events = Handle(self.take_events(chunks.count)?);
            let result = self.download(&chunks, &events.0);
            self.st
                .events
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .extend(events.0);
            result?;
        }
        self.queued = false;
        bind_raw(raw)?;
        // SAFETY: the stream is live.
        check("cuStreamSynchronize", unsafe { sys::cuStreamSynchronize(stream) })
    }

    /// Queues each chunk's transfer to pinned memory with an event after it, then copies the
    /// chunks out as their events complete.
    fn download(&self, chunks: &Chunks<'_>, events: &[sys::CUevent]) -> Result<()> {
        let stream = self.stream.raw;
        for (i, &ev) in events.iter().enumerate() {
            let (job, off, len) = chunks
                .get(i)
                .unwrap_or_else(|| unreachable!("one event per chunk"));
            // SAFETY: pinned and device each hold job.bytes bytes; the event is live.
            unsafe {
                check(
                    "cuMemcpyDtoHAsync",
                    sys::cuMemcpyDtoHAsync_v2(
                        job.pinned.add(off).cast(),
                        job.device + off as u64,
                        len,
                        stream,
                    ),
                )?;
                check("cuEventRecord", sys::cuEventRecord(ev, stream))?;
            }
        }
        // The kernel runs before the first chunk: wait for it here, where the driver's
        // scheduling policy decides how, rather than with every copy thread spinning.
        // SAFETY: the event is live.
        check("cuEventSynchronize", unsafe {
            sys::cuEventSynchronize(events[0])
        })?;
        let arrived = Flags::new(chunks.count);
        arrived.set(0);
        let events = Handle(events);
        let copy_out = |i: usize| {
            if let Some((job, off, len)) = chunks.get(i) {
                // SAFETY: download_role copies a chunk only once it is marked arrived (its
                // event completed, so its bytes are in pinned memory); the host range is
                // borrowed mutably by the Staging, and each chunk is claimed by one thread.
                unsafe { std::ptr::copy_nonoverlapping(job.pinned.add(off), job.host.add(off), len) };
            }
        };
        let arrived_now = |i: usize| {
            // SAFETY: the event is live.
            match unsafe { sys::cuEventQuery(events.get()[i]) } {
                sys::CUresult::CUDA_ERROR_NOT_READY => Ok(false),
                r => check("cuEventQuery", r).map(|()| true),
            }
        };
        run_phase(chunks.total_bytes, self.ctx.raw(), &arrived, |role| {
            download_role(role, &arrived, chunks.count, &copy_out, &arrived_now)
        })
    }

    fn take_events(&self, n: usize) -> Result<Vec<sys::CUevent>> {
        let mut spare = self.st.events.lock().unwrap_or_else(|p| p.into_inner());
        let keep = spare.len().saturating_sub(n);
        let mut events: Vec<sys::CUevent> = spare.drain(keep..).collect();
        drop(spare);
        while events.len() < n {
            let mut ev = std::ptr::null_mut();
            bind_raw(self.ctx.raw())?;
            // SAFETY: valid out-pointer; the context is current.
            let r =
                unsafe { sys::cuEventCreate(&mut ev, sys::CUevent_flags::CU_EVENT_DISABLE_TIMING as u32) };
            if let Err(e) = check("cuEventCreate", r) {
                self.st
                    .events
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .extend(events);
                return Err(e);
            }
            events.push(ev);
        }
        Ok(events)
    }
}

impl Drop for Staging<'_> {
    fn drop(&mut self) {
        // Copies still queued read or write the pinned blocks; they must end before the
        // blocks can serve another call. The error, if any, was or will be reported.
        self.settle();
        for (block, record) in self.pinned.drain(..) {
            // SAFETY: each block came from this pool, is returned once, and no copy uses it.
            unsafe { self.st.pinned.release(block, record) };
        }
    }
}

/// Driver handles shared with the copy threads.
struct Handle<T>(T);
// SAFETY: stream and event handles may be used from any thread.
unsafe impl<T> Sync for Handle<T> {}
impl<T> Handle<T> {
    /// Through a method, so that closures capture the whole (Sync) wrapper, not the field.
    fn get(&self) -> &T {
        &self.0
    }
}

/// The jobs' bytes cut into chunks, numbered across jobs in order.
struct Chunks<'j> {
    jobs: &'j [Job],
    chunk: usize,
    /// The first chunk number of each job, and after the last, the count.
    starts: Vec<usize>,
    count: usize,
    total_bytes: usize,
}

impl<'j> Chunks<'j> {
    fn new(jobs: &'j [Job]) -> Self {
        let total_bytes: usize = jobs.iter().map(|j| j.bytes).sum();
        let chunk = CHUNK_BYTES
            .load(Ordering::Relaxed)
            .max(total_bytes.div_ceil(MAX_CHUNKS))
            .next_multiple_of(4096);
        let mut starts = Vec::with_capacity(jobs.len());
        let mut count = 0;
        for j in jobs {
            starts.push(count);
            count += j.bytes.div_ceil(chunk);
        }
        Chunks {
            jobs,
            chunk,
            starts,
            count,
            total_bytes,
        }
    }

    /// Chunk `i`: its job, offset and length.
    fn get(&self, i: usize) -> Option<(&Job, usize, usize)> {
        if i >= self.count {
            return None;
        }
        let j = self.starts.partition_point(|&s| s <= i) - 1;
        let job = &self.jobs[j];
        let off = (i - self.starts[j]) * self.chunk;
        Some((job, off, self.chunk.min(job.bytes - off)))
    }
}

/// What a thread does in one phase of a staged copy.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Role {
    /// Makes the phase's driver calls, in chunk order, and copies when it has nothing to issue:
    /// alone, it finishes the phase.
    Driver,
    /// Copies chunks it claims.
    Copier,
}

/// Per-chunk flags of a phase (copied into pinned memory, or arrived there), the claim
/// counter that hands each chunk to one copying thread, and a stop for errors.
struct Flags {
    set: Vec<AtomicBool>,
    next: AtomicUsize,
    stop: AtomicBool,
}

impl Flags {
    fn new(n: usize) -> Flags {
        Flags {
            set: (0..n).map(|_| AtomicBool::new(false)).collect(),
            next: AtomicUsize::new(0),
            stop: AtomicBool::new(false),
        }
    }

    /// Marks chunk `i`; Release, so that whoever sees it sees the chunk's bytes.
    fn set(&self, i: usize) {
        self.set[i].store(true, Ordering::Release);
    }

    fn is_set(&self, i: usize) -> bool {
        self.set[i].load(Ordering::Acquire)
    }

    /// The next chunk to copy, claimed for this thread alone; `None` when all are claimed or
    /// the phase stopped.
    fn claim(&self) -> Option<usize> {
        if self.stop.load(Ordering::Acquire) {
            return None;
        }
        let i = self.next.fetch_add(1, Ordering::Relaxed);
        (i < self.set.len()).then_some(i)
    }

    /// The next chunk to copy if it is already marked (see `claim`).
    fn claim_set(&self) -> Option<usize> {
        let i = self.next.load(Ordering::Relaxed);
        if i >= self.set.len() || !self.is_set(i) || self.stop.load(Ordering::Acquire) {
            return None;
        }
        self.next
            .compare_exchange(i, i + 1, Ordering::Relaxed, Ordering::Relaxed)
            .is_ok()
            .then_some(i)
    }

    /// Waits until chunk `i` is marked: true, or false when the phase stopped first.
    fn wait_for(&self, i: usize) -> bool {
        let mut backoff = Backoff(0);
        while !self.is_set(i) {
            if self.stop.load(Ordering::Acquire) {
                return false;
            }
            backoff.snooze();
        }
        true
    }
}

/// One thread's part in the upload phase. Copiers copy the chunks they claim into pinned
/// memory. The driver thread issues each chunk's transfer, in order, once it is copied, and
/// copies chunks itself while it waits: alone, it does everything.
fn upload_role(
    role: Role,
    copied: &Flags,
    count: usize,
    copy_in: &dyn Fn(usize),
    issue: &dyn Fn(usize) -> Result<()>,
) -> Result<()> {
    let copy = |c: usize| {
        copy_in(c);
        copied.set(c);
    };
    if role == Role::Copier {
        while let Some(c) = copied.claim() {
            copy(c);
        }
        return Ok(());
    }
    for i in 0..count {
        let mut backoff = Backoff(0);
        while !copied.is_set(i) {
            match copied.claim() {
                Some(c) => copy(c),
                None => backoff.snooze(),
            }
        }
        issue(i)?;
    }
    Ok(())
}

/// One thread's part in the download phase, once chunk 0 has arrived (and is marked). The
/// driver thread marks the others as `arrived_now` says they have, in order, copying those
/// that have arrived while it waits, and the rest at the end: alone, it does everything.
/// Copiers claim chunks, wait for them to be marked, and copy them to the host.
fn download_role(
    role: Role,
    arrived: &Flags,
    count: usize,
    copy_out: &dyn Fn(usize),
    arrived_now: &dyn Fn(usize) -> Result<bool>,
) -> Result<()> {
    if role == Role::Copier {
        while let Some(c) = arrived.claim() {
            if !arrived.wait_for(c) {
                break;
            }
            copy_out(c);
        }
        return Ok(());
    }
    for i in 1..count {
        let mut backoff = Backoff(0);
        while !arrived_now(i)? {
            match arrived.claim_set() {
                Some(c) => copy_out(c),
                None => backoff.snooze(),
            }
        }
        arrived.set(i);
    }
    while let Some(c) = arrived.claim() {
        copy_out(c);
    }
    Ok(())
}

/// Runs one phase of `total_bytes` on this thread and, for large transfers, on a few pool
/// threads: the first to arrive is the driver thread (bound to `ctx`), the others copy.
fn run_phase<F>(total_bytes: usize, ctx: sys::CUcontext, flags: &Flags, work: F) -> Result<()>
where
    F: Fn(Role) -> Result<()> + Sync,
{
    let threads = (total_bytes / BYTES_PER_THREAD).clamp(1, MAX_THREADS.load(Ordering::Relaxed).max(1));
    let ctx = Handle(ctx);
    run_roles(threads, flags, |role| {
        if role == Role::Driver {
            bind_raw(*ctx.get())?;
        }
        work(role)
    })
}

/// Runs `work` on up to `threads` threads, this one included: one as [`Role::Driver`], the
/// rest as copiers. Returns the driver's error; then `flags` is stopped, so that copiers
/// waiting for chunks leave. Every thread has left `work` when this returns (copy_workers::run
/// waits for them).
fn run_roles<F>(threads: usize, flags: &Flags, work: F) -> Result<()>
where
    F: Fn(Role) -> Result<()> + Sync,
{
    let driver_taken = AtomicBool::new(false);
    let failed: Mutex<Option<Error>> = Mutex::new(None);
    copy_workers::run(threads.saturating_sub(1), &|| {
        if driver_taken.swap(true, Ordering::Relaxed) {
            // Copiers make no driver calls and cannot fail.
            let _ = work(Role::Copier);
            return;
        }
        if let Err(e) = work(Role::Driver) {
            // What is queued already is waited for by Staging's drop.
            flags.stop.store(true, Ordering::Release);
            failed.lock().unwrap_or_else(|p| p.into_inner()).get_or_insert(e);
        }
    });
    failed
        .into_inner()
        .unwrap_or_else(|p| p.into_inner())
        .map_or(Ok(()), Err)
}

/// Busy-waits politely: spins a while (a chunk is microseconds away), then yields the core,
/// which a copying thread on a machine with few cores may need.
struct Backoff(u32);

impl Backoff {
    fn snooze(&mut self) {
        self.0 = self.0.saturating_add(1);
        if self.0 < 1 << 14 {
            std::hint::spin_loop();
        } else {
            std::thread::yield_now();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(bytes: usize) -> Job {
        Job {
            host: std::ptr::null_mut(),
            pinned: std::ptr::null_mut(),
            device: 0,
            bytes,
        }
    }

    /// A short, uneven pause, so that threads interleave differently from chunk to chunk.
    fn jitter(i: usize) {
        let spins = (i * 7919) % 3000;
        for _ in 0..spins {
            std::hint::spin_loop();
        }
    }

    #[test]
    fn the_upload_phase_issues_every_chunk_once_in_order_after_its_copy() {
        for threads in [1, 2, 4, 8] {
            for n in [1, 2, 7, 64] {
                for _ in 0..10 {
                    let copied = Flags::new(n);
                    let copies: Vec<AtomicUsize> = (0..n).map(|_| AtomicUsize::new(0)).collect();
                    let issued = Mutex::new(Vec::new());
                    let copy_in = |i: usize| {
                        jitter(i);
                        copies[i].fetch_add(1, Ordering::Relaxed);
                    };
                    let issue = |i: usize| {
                        assert_eq!(copies[i].load(Ordering::Relaxed), 1, "issued before its copy");
                        issued.lock().unwrap().push(i);
                        Ok(())
                    };
                    run_roles(threads, &copied, |role| {
                        upload_role(role, &copied, n, &copy_in, &issue)
                    })
                    .unwrap();
                    assert_eq!(*issued.lock().unwrap(), (0..n).collect::<Vec<_>>());
                    assert!(copies.iter().all(|c| c.load(Ordering::Relaxed) == 1));
                }
            }
        }
    }

    #[test]
    fn the_download_phase_copies_every_chunk_once_after_it_arrived() {
        for threads in [1, 2, 4, 8] {
            for n in [1, 2, 7, 64] {
                for _ in 0..10 {
                    let arrived = Flags::new(n);
                    arrived.set(0);
                    // What the DMA engine does: chunks land in order, a little apart.
                    let landed: Vec<AtomicBool> = (0..n).map(|i| AtomicBool::new(i == 0)).collect();
                    let copies: Vec<AtomicUsize> = (0..n).map(|_| AtomicUsize::new(0)).collect();
                    std::thread::scope(|s| {
                        s.spawn(|| {
                            for (i, l) in landed.iter().enumerate().skip(1) {
                                jitter(i);
                                l.store(true, Ordering::Release);
                            }
                        });
                        let copy_out = |i: usize| {
                            assert!(
                                landed[i].load(Ordering::Acquire),
                                "chunk {i} copied before it landed"
                            );
                            copies[i].fetch_add(1, Ordering::Relaxed);
                        };
                        let arrived_now = |i: usize| Ok(landed[i].load(Ordering::Acquire));
                        run_roles(threads, &arrived, |role| {
                            download_role(role, &arrived, n, &copy_out, &arrived_now)
                        })
                        .unwrap();
                    });
                    assert!(copies.iter().all(|c| c.load(Ordering::Relaxed) == 1));
                }
            }
        }
    }

    #[test]
    fn a_driver_error_ends_the_phase_and_the_copiers_waiting_in_it() {
        for threads in [1, 2, 4, 8] {
            let n = 16;
            let arrived = Flags::new(n);
            arrived.set(0);
            let copies: Vec<AtomicUsize> = (0..n).map(|_| AtomicUsize::new(0)).collect();
            let copy_out = |i: usize| {
                copies[i].fetch_add(1, Ordering::Relaxed);
            };
            // Chunks up to 4 arrive; then the kernel turns out to have failed.
            let arrived_now = |i: usize| {
                if i < 5 {
                    Ok(true)
                } else {
                    Err(Error::SizeMismatch {
                        operation: "a test",
                        detail: "a failed kernel".into(),
                    })
                }
            };
            let r = run_roles(threads, &arrived, |role| {
                download_role(role, &arrived, n, &copy_out, &arrived_now)
            });
            assert!(r.is_err());
            assert!(copies[5..].iter().all(|c| c.load(Ordering::Relaxed) == 0));

            let copied = Flags::new(n);
            let issue = |i: usize| {
                if i == 3 {
                    arrived_now(99).map(|_| ())
                } else {
                    Ok(())
                }
            };
            let r = run_roles(threads, &copied, |role| {
                upload_role(role, &copied, n, &|_| {}, &issue)
            });
            assert!(r.is_err());
        }
    }

    #[test]
    fn chunks_cover_every_byte_once() {
        for sizes in [
            vec![1],
            vec![3 << 20, 5, (1 << 20) + 7],
            vec![300 << 20],
            vec![4 << 20, 4 << 20],
        ] {
            let jobs: Vec<Job> = sizes.iter().map(|&b| job(b)).collect();
            let c = Chunks::new(&jobs);
            assert!(c.count <= MAX_CHUNKS + jobs.len());
            let mut covered = vec![0usize; jobs.len()];
            for i in 0..c.count {
                let (j, off, len) = c.get(i).unwrap();
                let k = jobs.iter().position(|x| std::ptr::eq(x, j)).unwrap();
                assert_eq!(off, covered[k], "chunks of a job come in order, without gaps");
                assert!(len > 0);
                covered[k] += len;
            }
            assert_eq!(covered, sizes);
            assert!(c.get(c.count).is_none());
        }
    }
}
