//! CUDA contexts: the default context, one shared context per device, owned contexts with
//! flags, and binding to threads.
//!
//! A [`Context`] wraps the device's *primary* context, the one the CUDA runtime, cudarc and
//! most libraries also use, so memory and modules pass freely between them. There is one
//! [`Context`] per device in a process: [`Context::new`] for the same device returns a handle to
//! the same context, so a kernel is compiled and loaded once per device however many handles
//! exist. A `Context` is a cheap, reference-counted handle that is `Send + Sync`: the driver
//! API is thread-safe, and every call that needs the context current on the calling thread
//! makes it current first.
//!
//! [`Context::create`] makes a separate, non-primary context with [`ContextFlags`] (PyCUDA's
//! `Device.make_context`); it has its own memory space and module cache and is destroyed when
//! its last handle (and the last buffer, stream or kernel made in it) is dropped.

use std::any::Any;
use std::collections::HashMap;
use std::fmt;
use std::path::PathBuf;
use std::sync::{Arc, OnceLock, Weak};

use cudarc::driver::sys;

use crate::driver::calls;
use crate::driver::context::ext::Extensions;
use crate::driver::current::bind_raw;
use crate::driver::device::{Device, DeviceLimits};
use crate::driver::fault;
use crate::driver::ordering::{self, Graveyard, Release, StreamInner, StreamUses};
use crate::error::{Error, Result};
use crate::sync::{LockRank, Mutex};

/// A handle to a CUDA context: the primary context of a device ([`Context::new`],
/// [`Context::default`]) or an owned one ([`Context::create`]).
///
/// ```no_run
/// use gpu_runtime::{driver::memset_d32_async, Context, Device, Stream};
/// println!("{} CUDA devices", Device::count()?);
/// let ctx = Context::new(Device::new(0)?)?;
/// // A device has one primary context: every handle to it is the same context.
/// assert_eq!(Context::new(Device::new(0)?)?, ctx);
/// let (free, total) = ctx.mem_get_info()?;
/// println!("{}: {} of {} MiB free", ctx.device().name()?, free >> 20, total >> 20);
/// let stream = Stream::new(&ctx)?;
/// let mut x = ctx.alloc::<u32>(1 << 20)?;
/// memset_d32_async(&mut x, 1, 1 << 20, &stream)?;
/// // Waits for every stream of the context; errors of asynchronous work surface here.
/// ctx.synchronize()?;
/// # Ok::<(), gpu_runtime::Error>(())
/// ```
///
/// # Contexts and threads
///
/// CUDA keeps a stack of current contexts per host thread. This crate does not ask you to
/// manage it: every method that needs its context current makes it current on the calling
/// thread first ([`Context::bind`], `cuCtxSetCurrent`, which replaces the top of that thread's
/// stack), so any handle may be used from any thread, and `Context`, buffers, streams, events
/// and kernels are `Send + Sync`. [`Context::push`] and [`Context::pop`] exist for code that
/// shares the thread with other CUDA libraries that expect a particular context current.
///
/// Everything made in a context (buffers, streams, events, arrays, textures, kernels) holds a
/// handle to it, so a context lives as long as anything made in it does. Primary contexts are
/// retained while a handle exists and released after; owned contexts are destroyed.
#[derive(Clone)]
pub struct Context {
    pub(crate) inner: Arc<ContextInner>,
}

pub(crate) struct ContextInner {
    pub(crate) raw: sys::CUcontext,
    pub(crate) device: Device,
    pub(crate) limits: DeviceLimits,
    pub(crate) compute_capability: (u32, u32),
    /// True for a context made by `cuCtxCreate`, which is destroyed rather than released.
    pub(crate) owned: bool,
    /// Contexts this one has been given peer access to (their handles as integers).
    pub(crate) peers: Mutex<Vec<usize>>,
    /// What layers above keep per context: the module cache, the staging pools.
    pub(crate) ext: Extensions,
    /// The legacy default stream, as stream ordering names it (synchronous copies and
    /// `prepared_call` run on it).
    pub(crate) legacy: Arc<StreamInner>,
    /// Releases waiting for the streams that used the resource (see `ordering`).
    pub(crate) graveyard: Graveyard,
}

impl ContextInner {
    /// The state of a context just retained or created (`raw`), made current here. On failure
    /// the caller releases the context.
    pub(crate) fn new(
        raw: sys::CUcontext,
        device: Device,
        limits: DeviceLimits,
        compute_capability: (u32, u32),
        owned: bool,
    ) -> Result<Arc<ContextInner>> {
        bind_raw(raw)?;
        let fence = ordering::new_event()?;
        // Arrays' freed blocks are kept for reuse up to a quarter of the device's memory
        // (`Context::set_memory_cache_limit` changes it).
        let cache_limit = device.total_memory().unwrap_or(0) / 4;
        let inner = Arc::new_cyclic(|weak| ContextInner {
            raw,
            device,
            limits,
            compute_capability,
            owned,
            peers: Mutex::new(LockRank::ContextPeers, Vec::new()),
            ext: Extensions::default(),
            legacy: StreamInner::legacy(raw, weak.clone() as Weak<dyn Any + Send + Sync>, fence),
            graveyard: Graveyard::default(),
        });
        inner.graveyard.set_cache_limit(raw, cache_limit);
        Ok(inner)
    }
}

// SAFETY: a CUcontext is a handle the driver lets any thread use (the driver API is
// thread-safe); everything else in ContextInner is plain data or behind a Mutex.
unsafe impl Send for ContextInner {}
// SAFETY: as above; shared access only reads the handle or locks the module map.
unsafe impl Sync for ContextInner {}

impl fmt::Debug for Context {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Context")
            .field("device", &self.inner.device)
            .field("compute_capability", &self.inner.compute_capability)
            .finish()
    }
}

impl PartialEq for Context {
    fn eq(&self, other: &Self) -> bool {
        self.inner.raw == other.inner.raw
    }
}
impl Eq for Context {}

fn per_device() -> &'static Mutex<HashMap<i32, Weak<ContextInner>>> {
    static MAP: OnceLock<Mutex<HashMap<i32, Weak<ContextInner>>>> = OnceLock::new();
    MAP.get_or_init(|| Mutex::new(LockRank::ContextsByDevice, HashMap::new()))
}

impl Context {
    /// The context of `device` (its primary context), shared by every handle in the process.
    pub fn new(device: Device) -> Result<Context> {
        let key = device.ordinal() as i32;
        let mut map = per_device().lock();
        if let Some(inner) = map.get(&key).and_then(Weak::upgrade) {
            return Ok(Context { inner });
        }
        fault::refuse_after_fault()?;
        let limits = device.limits()?;
        let compute_capability = device.compute_capability()?;
        // The device handle came from cuDeviceGet.
        let raw = calls::device_primary_ctx_retain(device.raw())?;
        let inner = match ContextInner::new(raw, device, limits, compute_capability, false) {
            Ok(inner) => inner,
            Err(e) => {
                // SAFETY: releases the retain just taken, once.
                let _ = unsafe { calls::device_primary_ctx_release(device.raw()) };
                return Err(e);
            }
        };
        map.insert(key, Arc::downgrade(&inner));
        register(&inner);
        let ctx = Context { inner };
        ctx.bind()?;
        Ok(ctx)
    }

    /// The default context, chosen as PyCUDA's `make_default_context` does: the device named by
    /// the `CUDA_DEVICE` environment variable, else the one in `~/.cuda-device`, else the first
    /// device on which a context can be created. The same context is returned on every call.
    // Not `Default::default`: choosing and opening a device can fail, so this returns a Result.
    #[allow(clippy::should_implement_trait)]
    pub fn default() -> Result<Context> {
        static DEFAULT: Mutex<Option<Context>> = Mutex::new(LockRank::DefaultContext, None);
        let mut slot = DEFAULT.lock();
        if let Some(ctx) = slot.as_ref() {
            return Ok(ctx.clone());
        }
        let ctx = make_default_context()?;
        *slot = Some(ctx.clone());
        Ok(ctx)
    }

    /// The device this context runs on.
    pub fn device(&self) -> Device {
        self.inner.device
    }

    /// The device's compute capability, e.g. `(9, 0)`.
    pub fn compute_capability(&self) -> (u32, u32) {
        self.inner.compute_capability
    }

    /// The device's launch limits, read when the context was created.
    pub fn limits(&self) -> &DeviceLimits {
        &self.inner.limits
    }

    /// True once a kernel has faulted in this process, in this context or any other (an illegal
    /// address, a trap, an assert): from then on every call in it fails with
    /// [`Error::ContextPoisoned`], and only a new process can use the GPUs again.
    pub fn is_poisoned(&self) -> bool {
        fault::process_fault().is_some()
    }

    /// The driver's handle.
    pub fn raw(&self) -> sys::CUcontext {
        self.inner.raw
    }

    /// Frees `what`, a resource of this context, once the uses `uses` records have finished
    /// (at once in a failed context): what each owner's drop does.
    pub(crate) fn release_after(&self, uses: &mut StreamUses, what: Release) {
        self.inner
            .graveyard
            .release_after(self.inner.raw, uses.take(), what);
    }

    /// Makes this context current on the calling thread, if it is not already.
    #[inline]
    pub fn bind(&self) -> Result<()> {
        self.inner.bind()
    }

    /// `call`, a driver call that acts on the current context, with this context current.
    #[inline]
    pub(crate) fn bound<R>(&self, call: impl FnOnce() -> std::result::Result<R, calls::Failed>) -> Result<R> {
        self.bind()?;
        Ok(call()?)
    }

    /// Waits until all work queued in this context has finished, and reports any error a kernel
    /// raised while running. Memory whose release was waiting for that work is freed.
    pub fn synchronize(&self) -> Result<()> {
        self.bound(calls::ctx_synchronize)?;
        self.inner.collect_garbage();
        Ok(())
    }

    /// A weak handle to the context's state, by which streams know whether it still lives.
    pub(crate) fn liveness(&self) -> Weak<dyn Any + Send + Sync> {
        Arc::downgrade(&self.inner) as Weak<dyn Any + Send + Sync>
    }

    /// The legacy default stream, as stream ordering names it.
    #[inline]
    pub(crate) fn legacy(&self) -> &Arc<StreamInner> {
        &self.inner.legacy
    }

    /// `(free, total)` device memory in bytes. Memory whose deferred release has become due
    /// (its work has finished) is freed first, so that it counts as free; blocks that arrays
    /// gave up and the context keeps for reuse count as used (see
    /// [`free_cached_memory`](Self::free_cached_memory)).
    pub fn mem_get_info(&self) -> Result<(usize, usize)> {
        self.inner.collect_garbage();
        self.bound(calls::mem_get_info)
    }

    /// True when `raw` is this context's handle.
    #[inline]
    pub(crate) fn is(&self, raw: sys::CUcontext) -> bool {
        self.inner.raw == raw
    }
}

impl ContextInner {
    /// Makes the context current, unless a kernel broke it: then fails fast with
    /// [`Error::ContextPoisoned`] (one atomic load on the usual path).
    #[inline]
    pub(crate) fn bind(&self) -> Result<()> {
        fault::refuse_after_fault()?;
        bind_raw(self.raw)
    }
}

impl ContextInner {
    /// Frees what the context's deferred releases have made free (called on allocation).
    #[inline]
    pub(crate) fn collect_garbage(&self) {
        self.graveyard.collect(self.raw, false);
    }

    /// Gives back memory held for later: asks the state layers above keep here (the staging
    /// pools) to free what they hold, then waits for every deferred release and frees it, and
    /// frees the blocks arrays gave up (the block cache).
    /// Called on out-of-memory before the allocation is retried once.
    pub(crate) fn reclaim(&self) {
        self.ext.reclaim();
        self.graveyard.collect(self.raw, true);
        self.graveyard.free_cached(self.raw);
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

/// Every live context made by this crate, by handle, so that the handle the driver reports as
/// current can be turned back into a [`Context`].
fn registry() -> &'static Mutex<HashMap<usize, Weak<ContextInner>>> {
    static MAP: OnceLock<Mutex<HashMap<usize, Weak<ContextInner>>>> = OnceLock::new();
    MAP.get_or_init(|| Mutex::new(LockRank::ContextRegistry, HashMap::new()))
}

pub(crate) fn register(inner: &Arc<ContextInner>) {
    registry()
        .lock()
        .insert(inner.raw as usize, Arc::downgrade(inner));
}

pub(crate) fn unregister(raw: sys::CUcontext) {
    let mut map = registry().lock();
    // A new context may already have taken the handle over; only remove a dead entry.
    if map.get(&(raw as usize)).is_some_and(|w| w.strong_count() == 0) {
        map.remove(&(raw as usize));
    }
}

pub(crate) fn lookup(raw: sys::CUcontext) -> Option<Context> {
    if raw.is_null() {
        return None;
    }
    let map = registry().lock();
    map.get(&(raw as usize))
        .and_then(Weak::upgrade)
        .map(|inner| Context { inner })
}

/// Every live context (primary or owned) of the process.
pub(crate) fn live() -> Vec<Context> {
    let map = registry().lock();
    map.values()
        .filter_map(Weak::upgrade)
        .map(|inner| Context { inner })
        .collect()
}

impl Drop for ContextInner {
    fn drop(&mut self) {
        // Everything made in the context is gone, but work it queued may still run: wait for
        // it, so that memory whose release was deferred, or that a pool holds, is free to go.
        // A poisoned context refuses `bind`, so bind_raw; its errors end the work anyway.
        let current = bind_raw(self.raw).is_ok();
        if current {
            // The context is current on this thread.
            let _ = calls::ctx_synchronize();
        }
        let _closing = ordering::Closing::enter(self.raw);
        // Modules must be unloaded, and the staging pools' memory freed, while the context
        // still exists.
        self.ext.clear();
        self.graveyard.close(current);
        if current {
            self.legacy.release_fence();
        }
        unregister(self.raw);
        if self.owned {
            // SAFETY: destroys the context made in Context::create, exactly once; nothing made
            // in it is alive (each such value holds a handle to this context).
            let _ = unsafe { calls::ctx_destroy(self.raw) };
        } else {
            // SAFETY: releases the retain taken in Context::new, exactly once.
            let _ = unsafe { calls::device_primary_ctx_release(self.device.raw()) };
        }
    }
}

/// The device `CUDA_DEVICE` or `~/.cuda-device` names, if either does.
fn configured_device() -> Result<Option<usize>> {
    let parse = |text: &str, origin: &str| -> Result<usize> {
        text.trim().parse::<usize>().map_err(|_| {
            Error::InvalidDevice(format!(
                "{origin} must hold a device ordinal such as 0, not {:?}",
                text.trim()
            ))
        })
    };
    if let Ok(v) = std::env::var("CUDA_DEVICE") {
        return parse(&v, "the CUDA_DEVICE environment variable").map(Some);
    }
    if let Some(home) = std::env::var_os("HOME") {
        let path = PathBuf::from(home).join(".cuda-device");
        if let Ok(text) = std::fs::read_to_string(&path) {
            return parse(&text, &path.display().to_string()).map(Some);
        }
    }
    Ok(None)
}

fn make_default_context() -> Result<Context> {
    if let Some(ordinal) = configured_device()? {
        return Context::new(Device::new(ordinal)?);
    }
    let count = Device::count()?;
    if count == 0 {
        return Err(Error::NoDevice);
    }
    let mut last = Error::NoDevice;
    for ordinal in 0..count {
        match Device::new(ordinal).and_then(Context::new) {
            Ok(ctx) => return Ok(ctx),
            Err(e) => last = e,
        }
    }
    Err(last)
}
