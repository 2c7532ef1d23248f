//! Host ↔ device copies around a launch for arguments marked `#[In]`, `#[Out]` and `#[InOut]`
//! (PyCUDA's `In`, `Out` and `InOut` argument handlers), staged through pinned memory.
//!
//! A copy from ordinary (pageable) host memory is slow: the driver copies it through its own
//! small pinned buffers, one after the other. The convenience call does better with a pinned
//! staging buffer per argument, from a per-context pool: the host copies a chunk into it
//! while the DMA engine sends the previous chunk, and large transfers split the host copies
//! over a few threads (persistent ones, from copy_workers.rs, so that a call starts none). Device memory comes from a per-context pool too, so in steady state a
//! convenience call allocates nothing from the driver. Everything runs on one stream, the
//! context's own (created blocking, so it also waits for work queued before on the legacy
//! default stream) or one the caller names (`Staging::on_stream`): copies in, the kernel,
//! copies out; the call waits once at the end, which reports any error the kernel raised.

use std::marker::PhantomData;
use std::sync::atomic::{AtomicUsize, Ordering};
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
/// driver calls (a copy, and an event on the way back) that serialize across the copy threads:
/// on an H100 host, the 2^20-float axpy call took 613-640 us with 1 MiB chunks, 640-755 us with
/// 512 KiB, 704-729 us with 256 KiB and 875-922 us with 128 KiB (8 threads; benches/staging.rs).
const DEFAULT_CHUNK: usize = 1 << 20;
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
        let stream = Handle(self.stream.raw);
        let raw = self.ctx.raw();
        run_parallel(chunks.total_bytes, raw, |next| {
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some((job, off, len)) = chunks.get(i) else {
                    return Ok(());
                };
                // SAFETY: host and pinned each hold job.bytes bytes (checked when staged);
                // chunks do not overlap, so no two threads touch the same bytes.
                unsafe {
                    std::ptr::copy_nonoverlapping(job.host.add(off), job.pinned.add(off), len);
                    check(
                        "cuMemcpyHtoDAsync",
                        sys::cuMemcpyHtoDAsync_v2(
                            job.device + off as u64,
                            job.pinned.add(off).cast(),
                            len,
                            *stream.get(),
                        ),
                    )?;
                }
            }
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
            let result = (|| {
                for (i, &ev) in events.0.iter().enumerate() {
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
                run_parallel(chunks.total_bytes, raw, |next| loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some((job, off, len)) = chunks.get(i) else {
                        return Ok(());
                    };
                    // SAFETY: the event marks this chunk's copy into pinned memory as done;
                    // the host range is borrowed mutably by the Staging and chunks are disjoint.
                    unsafe {
                        check("cuEventSynchronize", sys::cuEventSynchronize(events.get()[i]))?;
                        std::ptr::copy_nonoverlapping(job.pinned.add(off), job.host.add(off), len);
                    }
                })
            })();
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

/// Runs `work` on this thread and, for large transfers, on a few pool threads, each taking
/// chunk numbers from the shared counter until they run out. Returns the first error; every
/// thread has left `work` when this returns (copy_workers::run waits for them).
fn run_parallel<F>(total_bytes: usize, ctx: sys::CUcontext, work: F) -> Result<()>
where
    F: Fn(&AtomicUsize) -> Result<()> + Sync,
{
    let next = AtomicUsize::new(0);
    let threads = (total_bytes / BYTES_PER_THREAD).clamp(1, MAX_THREADS.load(Ordering::Relaxed).max(1));
    let failed: Mutex<Option<Error>> = Mutex::new(None);
    let ctx = Handle(ctx);
    copy_workers::run(threads - 1, &|| {
        if let Err(e) = bind_raw(*ctx.get()).and_then(|()| work(&next)) {
            // The others stop at their next chunk; what is queued already is waited for by
            // Staging's drop.
            next.store(usize::MAX / 2, Ordering::Relaxed);
            failed.lock().unwrap_or_else(|p| p.into_inner()).get_or_insert(e);
        }
    });
    failed
        .into_inner()
        .unwrap_or_else(|p| p.into_inner())
        .map_or(Ok(()), Err)
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
