//! Host ↔ device copies around a launch for arguments marked `#[In]`, `#[Out]` and `#[InOut]`
//! (PyCUDA's `In`, `Out` and `InOut` argument handlers), staged through pinned memory.
//!
//! A copy from ordinary (pageable) host memory is slow: the driver copies it through its own
//! small pinned buffers, one after the other. The convenience call does better with a pinned
//! staging buffer per argument, from a per-context pool: the host copies a chunk into it
//! while the DMA engine sends the previous chunk, and large transfers split the host copies
//! over a few threads (persistent ones, from copy_workers.rs, so that a call starts none).
//! How the bytes are cut into DMA chunks and the threads' pieces is staged_copy.rs; uploads
//! are copied into pinned memory past the cache (host_copy.rs), which nearly halves the DMA
//! engine's time to read them. One of the threads (the driver thread) makes every driver
//! call of a phase, in chunk order, and copies when it has nothing to issue; the others only
//! copy, so they never queue on the driver's locks. Device memory comes from a per-context pool too, so in steady state
//! a convenience call allocates nothing from the driver. Everything runs on one stream, the
//! context's own (created blocking, so it also waits for work queued before on the legacy
//! default stream) or one the caller names (`Staging::on_stream`): copies in, the kernel,
//! copies out; the call waits once at the end, which reports any error the kernel raised.

pub(crate) mod chunks;
pub(crate) mod copy_workers;
pub(crate) mod host_copy;

use std::marker::PhantomData;
use std::sync::Arc;

use cudarc::driver::sys;

use crate::driver::calls::{event, memcpy, stream};
use crate::driver::context::context_link::ContextLink;
use crate::driver::context::core::Context;
use crate::driver::context::ext::{Extension, Slot};
use crate::driver::current::bind_raw;
use crate::driver::host::pinned::{HostAllocFlags, PinnedAllocator, PinnedPoolCore};
use crate::driver::memory::pool_core::{Block, PoolCore};
use crate::driver::memory::slices::{HostSlice, HostSliceMut};
use crate::driver::memory::view::DeviceWrite;
use crate::driver::module::function::Function;
use crate::driver::ordering::{StreamInner, StreamUses};
use crate::error::{Error, Result};
use crate::launch::launch_stream::LaunchStream;
use crate::launch::staging::chunks::{
    download_role, run_roles, upload_role, Direction, Job, Plan, Progress, Role,
};
use crate::launch::staging::host_copy::copy_for_dma;
use crate::sync::{LockRank, Mutex};
use crate::tools::device_pool::{DeviceAllocator, DeviceMemoryPool, DevicePoolCore, PooledBuffer};
use crate::types::repr::DeviceRepr;

/// What one context keeps for staging: pools, the stream, spare events.
pub(crate) struct ContextStaging {
    device: Arc<DevicePoolCore>,
    pinned: Arc<PinnedPoolCore>,
    stream: Arc<StreamInner>,
    /// Spare events, for the chunks of downloads and the end of async calls (`staged_call`).
    pub(crate) events: Mutex<Vec<sys::CUevent>>,
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
        for e in self.events.get_mut().drain(..) {
            // SAFETY: the events were created for this value and are destroyed once. A
            // failure cannot be reported from a drop, and leaves nothing to undo.
            let _ = unsafe { event::event_destroy(e) };
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
    // The context is current. A blocking stream (CU_STREAM_DEFAULT, flag 0): see the module's
    // documentation.
    let stream = stream::stream_create(sys::CUstream_flags::CU_STREAM_DEFAULT as u32)?;
    let made = ContextStaging {
        // The context owns these pools, so they hold a weak link to it.
        device: Arc::new(PoolCore::new(DeviceAllocator::new(ContextLink::weak(ctx)))),
        pinned: Arc::new(PoolCore::new(PinnedAllocator::new(
            ContextLink::weak(ctx),
            HostAllocFlags::NONE,
        ))),
        stream: StreamInner::new(stream, ctx.raw(), ctx.liveness(), true)?,
        events: Mutex::new(LockRank::StagingEvents, Vec::new()),
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

/// One convenience call's staging: what the `#[kernel]` macro's `call` drives.
///
/// `input`/`output`/`input_output` per marked argument give the device buffer the kernel
/// takes; `upload` sends the inputs, `launch` launches the kernel on the call's stream, and
/// `finish` brings the outputs back and waits. Dropped early (an error), it waits for the copies
/// already queued before giving back the pinned buffers they use.
pub struct Staging<'a> {
    pub(crate) ctx: &'a Context,
    pub(crate) st: &'a ContextStaging,
    /// The stream the copies and the kernel run on: the context's staging stream, or the
    /// caller's ([`on_stream`](Self::on_stream)).
    pub(crate) stream: &'a Arc<StreamInner>,
    pinned: Vec<(Block, Box<StreamUses>)>,
    uploads: Vec<Job>,
    pub(crate) downloads: Vec<Job>,
    /// Whether copies were queued that the pinned blocks wait for before going back.
    pub(crate) queued: bool,
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
        self.staged::<T>(host.len(), host.as_ptr() as *mut u8, true, false)
    }

    /// Device memory for an `#[Out]` argument, contents unspecified (brought back by `finish`).
    pub fn output<T: DeviceRepr>(
        &mut self,
        host: &'a mut (impl HostSliceMut<T> + ?Sized),
    ) -> Result<PooledBuffer<T>> {
        let host = host.host_slice_mut()?;
        self.staged::<T>(host.len(), host.as_mut_ptr().cast(), false, true)
    }

    /// The device copy of an `#[InOut]` argument: sent by `upload`, brought back by `finish`.
    pub fn input_output<T: DeviceRepr>(
        &mut self,
        host: &'a mut (impl HostSliceMut<T> + ?Sized),
    ) -> Result<PooledBuffer<T>> {
        let host = host.host_slice_mut()?;
        self.staged::<T>(host.len(), host.as_mut_ptr().cast(), true, true)
    }

    /// [`stage`](Self::stage), its copy queued for `upload` and/or `finish`.
    fn staged<T: DeviceRepr>(
        &mut self,
        len: usize,
        host: *mut u8,
        upload: bool,
        download: bool,
    ) -> Result<PooledBuffer<T>> {
        let (buf, job) = self.stage::<T>(len, host)?;
        if job.bytes > 0 {
            if upload {
                self.uploads.push(job);
            }
            if download {
                self.downloads.push(job);
            }
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
            // SAFETY: the stream is live. Its error, if any, is reported by the call that
            // failed or by the next one.
            let _ = unsafe { stream::stream_synchronize(self.stream.raw) };
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
        let plan = Plan::new(&self.uploads, Direction::Upload);
        let progress = plan.progress();
        let stream = Handle(self.stream.raw);
        let copy_in = |p: usize| {
            let (job, span) = plan.piece(p);
            // SAFETY: host and pinned each hold job.bytes bytes (checked when staged) and the
            // span lies within them; each piece is claimed by one thread, so no two threads
            // touch the same bytes.
            unsafe { copy_for_dma(job.host.add(span.off), job.pinned.add(span.off), span.len) };
        };
        let issue = |c: usize| {
            let (job, span) = plan.chunk(c);
            // SAFETY: pinned and device each hold job.bytes bytes and the span lies within
            // them; the chunk was copied in (upload_role issues it only then) and is not
            // written again during the call.
            unsafe {
                memcpy::memcpy_htod_async(
                    job.device + span.off as u64,
                    job.pinned.add(span.off).cast(),
                    span.len,
                    *stream.get(),
                )
            }
            .map_err(Error::from)
        };
        run_phase(plan.threads, self.ctx.raw(), &progress, |role| {
            upload_role(role, &progress, plan.chunk_count(), &copy_in, &issue)
        })
    }

    /// Queues the outputs' transfer back after the kernel, copies each chunk to the host as it
    /// arrives, and waits for the stream: reports any error the kernel raised.
    pub fn finish(mut self) -> Result<()> {
        let stream = self.stream.raw;
        let raw = self.ctx.raw();
        if !self.downloads.is_empty() {
            self.queued = true;
            let plan = Plan::new(&self.downloads, Direction::Download);
            let events = Handle(self.take_events(plan.chunk_count())?);
            let result = self.download(&plan, &events.0);
            self.st.events.lock().extend(events.0);
            result?;
        }
        self.queued = false;
        bind_raw(raw)?;
        // SAFETY: the stream is live.
        unsafe { stream::stream_synchronize(stream) }.map_err(Error::from)
    }

    /// Queues each chunk's transfer to pinned memory with an event after it, then copies the
    /// chunks out as their events complete.
    fn download(&self, plan: &Plan<'_>, events: &[sys::CUevent]) -> Result<()> {
        let on = self.stream.raw;
        for (c, &ev) in events.iter().enumerate() {
            let (job, span) = plan.chunk(c);
            // SAFETY: pinned and device each hold job.bytes bytes and the span lies within
            // them; the event is live.
            unsafe {
                memcpy::memcpy_dtoh_async(
                    job.pinned.add(span.off).cast(),
                    job.device + span.off as u64,
                    span.len,
                    on,
                )?;
                event::event_record(ev, on)?;
            }
        }
        // The kernel runs before the first chunk: wait for it here, where the driver's
        // scheduling policy decides how, rather than with every copy thread spinning.
        // SAFETY: the event is live.
        unsafe { event::event_synchronize(events[0]) }?;
        let progress = plan.progress();
        let events = Handle(events);
        let copy_out = |p: usize| {
            let (job, span) = plan.piece(p);
            // SAFETY: download_role copies a piece only once its chunk has arrived (its event
            // completed, so its bytes are in pinned memory); the host range is borrowed
            // mutably by the Staging, and each piece is claimed by one thread.
            unsafe {
                std::ptr::copy_nonoverlapping(job.pinned.add(span.off), job.host.add(span.off), span.len)
            };
        };
        let arrived_now = |c: usize| {
            // SAFETY: the event is live.
            unsafe { event::event_query(events.get()[c]) }.map_err(Error::from)
        };
        run_phase(plan.threads, self.ctx.raw(), &progress, |role| {
            download_role(role, &progress, plan.chunk_count(), &copy_out, &arrived_now)
        })
    }

    pub(crate) fn take_events(&self, n: usize) -> Result<Vec<sys::CUevent>> {
        let mut spare = self.st.events.lock();
        let keep = spare.len().saturating_sub(n);
        let mut events: Vec<sys::CUevent> = spare.drain(keep..).collect();
        drop(spare);
        while events.len() < n {
            bind_raw(self.ctx.raw())?;
            // The context is current.
            match event::event_create(sys::CUevent_flags::CU_EVENT_DISABLE_TIMING as u32) {
                Ok(ev) => events.push(ev),
                Err(e) => {
                    self.st.events.lock().extend(events);
                    return Err(e.into());
                }
            }
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

/// Runs one phase on this thread and up to `threads - 1` pool threads: the first to arrive
/// is the driver thread (bound to `ctx`), the others copy.
fn run_phase<F>(threads: usize, ctx: sys::CUcontext, progress: &Progress, work: F) -> Result<()>
where
    F: Fn(Role) -> Result<()> + Sync,
{
    let ctx = Handle(ctx);
    run_roles(threads, progress, |role| {
        if role == Role::Driver {
            bind_raw(*ctx.get())?;
        }
        work(role)
    })
}
