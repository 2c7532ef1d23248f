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

use std::collections::HashMap;
use std::fmt;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock, Weak};

use cudarc::driver::sys;

use crate::cache::CacheKey;
use crate::context_ops::{register, unregister};
use crate::device::{Device, DeviceLimits};
use crate::error::{check, Error, Result};
use crate::module::{LoadInfo, LoadedModule, ModuleSource};
use crate::ordering::{self, Graveyard, StreamInner};
use crate::source_module::{Plan, SourceModule};
use crate::user_module::JitOptions;

/// The modules of one context, found by `static` source address or by cache key.
#[derive(Default)]
pub(crate) struct ModuleCache {
    by_addr: HashMap<usize, Arc<LoadedModule>>,
    by_key: HashMap<CacheKey, Arc<LoadedModule>>,
}

/// Empties every context-dependent cache in the process (PyCUDA's `clear_context_caches`):
/// the module caches of every context ([`Context::clear_module_cache`]) and every
/// [`crate::ContextCache`] of memoized user values, releasing the contexts those values hold.
pub fn clear_context_caches() {
    crate::memoize::clear_user_caches();
    let live: Vec<Arc<ContextInner>> = per_device()
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .values()
        .filter_map(Weak::upgrade)
        .collect();
    for inner in live {
        Context { inner }.clear_module_cache();
    }
}

/// A handle to a CUDA context: the primary context of a device ([`Context::new`],
/// [`Context::default`]) or an owned one ([`Context::create`]).
///
/// ```no_run
/// use gpu_runtime::{memset_d32_async, Context, Device, Stream};
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
    /// Modules loaded in this context: by `static` source address in front (so that the
    /// macro's `prepare` never hashes a string), by compile cache key behind.
    pub(crate) modules: Mutex<ModuleCache>,
    /// The pools, stream and events the In/Out convenience calls stage through, made on first use.
    pub(crate) staging: OnceLock<crate::staging::ContextStaging>,
    /// The first sticky error a kernel caused in this process; once set, `bind` refuses every
    /// call (see `Error::ContextPoisoned`).
    pub(crate) fault: OnceLock<Fault>,
    /// The legacy default stream, as stream ordering names it (synchronous copies and
    /// `prepared_call` run on it).
    pub(crate) legacy: Arc<StreamInner>,
    /// Releases waiting for the streams that used the resource (see `ordering`).
    pub(crate) graveyard: Graveyard,
}

/// How something the context may own reaches the context: a pool users own holds it strongly
/// (it keeps the context alive); the context's own staging pools hold it weakly, since the
/// context owns them and a strong handle would keep it alive forever.
pub(crate) enum ContextLink {
    Strong(Context),
    Weak {
        inner: Weak<ContextInner>,
        raw: sys::CUcontext,
    },
}

// SAFETY: the raw handle is only used while its context lives (or closes), from any thread.
unsafe impl Send for ContextLink {}
// SAFETY: as above; nothing is mutated.
unsafe impl Sync for ContextLink {}

impl ContextLink {
    pub(crate) fn holding(ctx: &Context) -> ContextLink {
        ContextLink::Strong(ctx.clone())
    }

    pub(crate) fn weak(ctx: &Context) -> ContextLink {
        ContextLink::Weak {
            inner: Arc::downgrade(&ctx.inner),
            raw: ctx.raw(),
        }
    }

    /// The context, when this link keeps it alive.
    pub(crate) fn strong(&self) -> Option<&Context> {
        match self {
            ContextLink::Strong(c) => Some(c),
            ContextLink::Weak { .. } => None,
        }
    }

    fn get(&self) -> Option<Context> {
        match self {
            ContextLink::Strong(c) => Some(c.clone()),
            ContextLink::Weak { inner, .. } => inner.upgrade().map(|inner| Context { inner }),
        }
    }

    /// Runs `f` with the context; fails when it is being destroyed.
    pub(crate) fn with<R>(&self, f: impl FnOnce(&Context) -> Result<R>) -> Result<R> {
        match self.get() {
            Some(ctx) => f(&ctx),
            None => Err(Error::driver(
                "a pool allocation",
                sys::CUresult::CUDA_ERROR_CONTEXT_IS_DESTROYED,
            )),
        }
    }

    /// Frees `what` once the uses in `uses` have finished (see `Graveyard::release_after`);
    /// while the context is being destroyed, its work has finished, and it is freed now.
    pub(crate) fn release_after(&self, uses: ordering::UseSet, what: ordering::Release) {
        let inner = match self {
            ContextLink::Strong(ctx) => Some(ctx.inner.clone()),
            ContextLink::Weak { inner, .. } => inner.upgrade(),
        };
        match (inner, self) {
            (Some(inner), _) => inner.graveyard.release_after(&inner, uses, what),
            (None, ContextLink::Weak { raw, .. }) if bind_raw(*raw).is_ok() => {
                // SAFETY: the context is closing, so its work has finished, and the owner gave
                // the resource up.
                unsafe { what.now() };
            }
            (None, _) => {}
        }
    }

    /// Gives back what the context holds for later (see [`ContextInner::reclaim`]).
    pub(crate) fn reclaim(&self) {
        if let Some(ctx) = self.get() {
            ctx.inner.reclaim();
        }
    }
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
        Ok(Arc::new_cyclic(|weak| ContextInner {
            raw,
            device,
            limits,
            compute_capability,
            owned,
            peers: Mutex::new(Vec::new()),
            modules: Mutex::new(ModuleCache::default()),
            staging: OnceLock::new(),
            fault: fault_cell(),
            legacy: StreamInner::legacy(raw, weak.clone(), fence),
            graveyard: Graveyard::default(),
        }))
    }
}

/// A sticky error, as first reported.
#[derive(Clone)]
pub(crate) struct Fault {
    device: usize,
    call: &'static str,
    code: u32,
    name: String,
    description: String,
}

/// Marks every live context of the process as broken by a kernel fault, recording the error
/// as the context current on this thread reported it (cold: errors only). Sticky errors are
/// reported by calls on the current context, which `bind` made current. Every context, not
/// just that one, is marked because the driver breaks them all: after a fault, calls in another
/// context of the same device (H100, driver 580) and in the context of another device (two
/// NVLinked H200s, driver 580) fail with the same error.
pub(crate) fn record_fault(call: &'static str, code: u32, name: &str, description: &str) {
    let mut current = std::ptr::null_mut();
    // SAFETY: valid out-pointer; the driver is loaded (a driver call just returned this error).
    if unsafe { sys::cuCtxGetCurrent(&mut current) } != sys::CUresult::CUDA_SUCCESS {
        return;
    }
    let Some(ctx) = crate::context_ops::lookup(current) else {
        return;
    };
    let fault = Fault {
        device: ctx.device().ordinal(),
        call,
        code,
        name: name.to_owned(),
        description: description.to_owned(),
    };
    // The first fault recorded is the one every context reports, also those made later.
    let fault = PROCESS_FAULT.get_or_init(|| fault);
    let _ = ctx.inner.fault.set(fault.clone());
    for other in crate::context_ops::live() {
        let _ = other.inner.fault.set(fault.clone());
    }
}

/// The first kernel fault of the process, once there was one.
static PROCESS_FAULT: OnceLock<Fault> = OnceLock::new();

impl Fault {
    /// The refusal of a call after this fault.
    #[cold]
    fn error(&self) -> Error {
        Error::ContextPoisoned {
            device: self.device,
            first_call: self.call,
            first_code: self.code,
            first_name: self.name.clone(),
            first_description: self.description.clone(),
        }
    }
}

/// Refuses to make a context once the process has faulted: the driver would fail it.
pub(crate) fn refuse_after_fault() -> Result<()> {
    match PROCESS_FAULT.get() {
        Some(f) => Err(f.error()),
        None => Ok(()),
    }
}

/// A new context's fault cell: already set when the process has faulted, since the driver
/// would fail the new context's calls too.
pub(crate) fn fault_cell() -> OnceLock<Fault> {
    let cell = OnceLock::new();
    if let Some(f) = PROCESS_FAULT.get() {
        let _ = cell.set(f.clone());
    }
    cell
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
    MAP.get_or_init(Default::default)
}

impl Context {
    /// The context of `device` (its primary context), shared by every handle in the process.
    pub fn new(device: Device) -> Result<Context> {
        let key = device.ordinal() as i32;
        let mut map = per_device().lock().unwrap_or_else(|p| p.into_inner());
        if let Some(inner) = map.get(&key).and_then(Weak::upgrade) {
            return Ok(Context { inner });
        }
        refuse_after_fault()?;
        let limits = device.limits()?;
        let compute_capability = device.compute_capability()?;
        let mut raw = std::ptr::null_mut();
        // SAFETY: raw is a valid out-pointer; the device handle came from cuDeviceGet.
        check("cuDevicePrimaryCtxRetain", unsafe {
            sys::cuDevicePrimaryCtxRetain(&mut raw, device.raw())
        })?;
        let inner = match ContextInner::new(raw, device, limits, compute_capability, false) {
            Ok(inner) => inner,
            Err(e) => {
                // SAFETY: releases the retain just taken, once.
                unsafe { sys::cuDevicePrimaryCtxRelease_v2(device.raw()) };
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
        static DEFAULT: Mutex<Option<Context>> = Mutex::new(None);
        let mut slot = DEFAULT.lock().unwrap_or_else(|p| p.into_inner());
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
        self.inner.fault.get().is_some()
    }

    /// The driver's handle.
    pub fn raw(&self) -> sys::CUcontext {
        self.inner.raw
    }

    /// Makes this context current on the calling thread, if it is not already.
    #[inline]
    pub fn bind(&self) -> Result<()> {
        self.inner.bind()
    }

    /// Waits until all work queued in this context has finished, and reports any error a kernel
    /// raised while running. Memory whose release was waiting for that work is freed.
    pub fn synchronize(&self) -> Result<()> {
        self.bind()?;
        // SAFETY: the context is current on this thread.
        check("cuCtxSynchronize", unsafe { sys::cuCtxSynchronize() })?;
        self.inner.collect_garbage();
        Ok(())
    }

    /// The legacy default stream, as stream ordering names it.
    #[inline]
    pub(crate) fn legacy(&self) -> &Arc<StreamInner> {
        &self.inner.legacy
    }

    /// `(free, total)` device memory in bytes. Memory whose deferred release has become due
    /// (its work has finished) is freed first, so that it counts as free.
    pub fn mem_get_info(&self) -> Result<(usize, usize)> {
        self.inner.collect_garbage();
        self.bind()?;
        let (mut free, mut total) = (0, 0);
        // SAFETY: valid out-pointers; the context is current.
        check("cuMemGetInfo", unsafe {
            sys::cuMemGetInfo_v2(&mut free, &mut total)
        })?;
        Ok((free, total))
    }

    /// The module compiled from `source`, compiling and loading it on first use in this context.
    pub(crate) fn module(&self, source: &'static ModuleSource) -> Result<Arc<LoadedModule>> {
        let key = source as *const ModuleSource as usize;
        let mut modules = self.inner.modules.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(m) = modules.by_addr.get(&key) {
            return Ok(m.clone());
        }
        let mut embedded_ptx_error = None;
        if let Some(image) = crate::embedded::pick_embedded(source.images(), self.compute_capability()) {
            match self.load_embedded(source, image) {
                Ok(module) => {
                    let module = Arc::new(module);
                    modules.by_addr.insert(key, module.clone());
                    return Ok(module);
                }
                // PTX of an ISA newer than the driver (built with a newer NVRTC): compile the
                // source instead.
                Err(e) if image.kind() == crate::embedded::ImageKind::Ptx => embedded_ptx_error = Some(e),
                Err(e) => return Err(e),
            }
        }
        if source.is_linked() {
            // Linked modules are compiled and linked each time a context first asks; the disk
            // cache covers single sources.
            let compiled = source.compile(crate::compiler::Target::for_device(self.compute_capability())?)?;
            let kernels = source
                .kernels()
                .iter()
                .map(|k| k.to_string())
                .zip(compiled.lowered_names.iter().cloned())
                .collect();
            let module = Arc::new(LoadedModule::load(
                self,
                &compiled.image,
                "the linked module",
                kernels,
                &JitOptions::default(),
                LoadInfo::default(),
            )?);
            modules.by_addr.insert(key, module.clone());
            return Ok(module);
        }
        let spec = SourceModule::from_static(source);
        // Compiling under the lock makes racing threads wait for one compile instead of each
        // doing their own.
        let built = spec
            .plan(Some(self.compute_capability()))
            .and_then(|plan| self.load_plan(&mut modules, &plan));
        let module = match (built, embedded_ptx_error) {
            // Without NVRTC, why the embedded PTX did not load says more than "no NVRTC".
            (Err(Error::NvrtcNotFound), Some(e)) => return Err(e),
            (built, _) => built?,
        };
        modules.by_addr.insert(key, module.clone());
        Ok(module)
    }

    /// Loads an image embedded at build time, looking up the source's kernels by the lowered
    /// names stored with it.
    fn load_embedded(
        &self,
        source: &'static ModuleSource,
        image: &crate::embedded::EmbeddedImage,
    ) -> Result<LoadedModule> {
        // The driver reads cubins as ELF, which wants 8-byte alignment; an embedded byte string
        // has none, so it is copied (once per context) when misaligned.
        let bytes = image.bytes();
        let aligned: Vec<u64>;
        let image_bytes: &[u8] = if bytes.as_ptr().align_offset(8) == 0 {
            bytes
        } else {
            let mut words = vec![0u64; bytes.len().div_ceil(8)];
            // SAFETY: `words` holds at least bytes.len() bytes; the regions do not overlap.
            unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), words.as_mut_ptr().cast(), bytes.len()) };
            aligned = words;
            // SAFETY: the first bytes.len() bytes of `aligned` were just initialised.
            unsafe { std::slice::from_raw_parts(aligned.as_ptr().cast(), bytes.len()) }
        };
        let kernels = source
            .kernels()
            .iter()
            .map(|k| k.to_string())
            .zip(image.lowered_names().iter().map(|n| n.to_string()))
            .collect();
        LoadedModule::load(
            self,
            image_bytes,
            "the image embedded at build time",
            kernels,
            &JitOptions::default(),
            LoadInfo::default(),
        )
    }

    /// The module a [`SourceModule`] plan builds, from this context's cache when its key is
    /// there.
    pub(crate) fn module_for_plan(&self, plan: &Plan<'_>) -> Result<Arc<LoadedModule>> {
        let mut modules = self.inner.modules.lock().unwrap_or_else(|p| p.into_inner());
        self.load_plan(&mut modules, plan)
    }

    fn load_plan(&self, modules: &mut ModuleCache, plan: &Plan<'_>) -> Result<Arc<LoadedModule>> {
        if let Some(m) = modules.by_key.get(&plan.key) {
            return Ok(m.clone());
        }
        let report = plan.build()?;
        let kernels = plan
            .spec
            .kernel_names()
            .iter()
            .map(|k| k.to_string())
            .zip(report.module.lowered_names.iter().cloned())
            .collect();
        let info = LoadInfo {
            cache_status: Some(report.status),
            build_dir: report.build_dir,
            compile_log: report.module.log.clone(),
            ..LoadInfo::default()
        };
        let what = format!("the module compiled from `{}`", plan.spec_name());
        let mut loaded = LoadedModule::load(
            self,
            &report.module.image,
            &what,
            kernels,
            &JitOptions::default(),
            info,
        )?;
        loaded.source = Some(Arc::from(plan.declarations()));
        let module = Arc::new(loaded);
        modules.by_key.insert(plan.key, module.clone());
        Ok(module)
    }

    /// Forgets every module loaded in this context through [`SourceModule::load`] or a
    /// `#[kernel]` `prepare` (PyCUDA's `context_dependent_memoize` cache), so that the next
    /// request builds again (from the disk cache when it can). Kernels and modules already
    /// handed out keep their module alive until they are dropped.
    pub fn clear_module_cache(&self) {
        let mut m = self.inner.modules.lock().unwrap_or_else(|p| p.into_inner());
        m.by_addr.clear();
        m.by_key.clear();
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
        if let Some(f) = self.fault.get() {
            return Err(self.poisoned(f));
        }
        bind_raw(self.raw)
    }

    #[cold]
    fn poisoned(&self, f: &Fault) -> Error {
        f.error()
    }
}

/// Makes `raw` current on the calling thread, if it is not already. `raw` must be a live
/// context: what [`Context::bind`] does, for owners that hold the handle without the `Context`.
#[inline]
pub(crate) fn bind_raw(raw: sys::CUcontext) -> Result<()> {
    let mut current = std::ptr::null_mut();
    // SAFETY: valid out-pointer.
    check("cuCtxGetCurrent", unsafe { sys::cuCtxGetCurrent(&mut current) })?;
    if current != raw {
        // SAFETY: the caller holds raw alive.
        check("cuCtxSetCurrent", unsafe { sys::cuCtxSetCurrent(raw) })?;
    }
    Ok(())
}

impl Drop for ContextInner {
    fn drop(&mut self) {
        // Everything made in the context is gone, but work it queued may still run: wait for
        // it, so that memory whose release was deferred, or that a pool holds, is free to go.
        // A poisoned context refuses `bind`, so bind_raw; its errors end the work anyway.
        let current = bind_raw(self.raw).is_ok();
        if current {
            // SAFETY: the context is current on this thread.
            unsafe { sys::cuCtxSynchronize() };
        }
        let _closing = ordering::Closing::enter(self.raw);
        // Modules must be unloaded while the context still exists.
        drop(std::mem::take(
            self.modules.get_mut().unwrap_or_else(|p| p.into_inner()),
        ));
        // The staging pools free their memory, which needs the context.
        drop(self.staging.take());
        self.graveyard.close(current);
        if current {
            self.legacy.release_fence();
        }
        unregister(self.raw);
        if self.owned {
            // SAFETY: destroys the context made in Context::create, exactly once; nothing made
            // in it is alive (each such value holds a handle to this context).
            unsafe {
                sys::cuCtxDestroy_v2(self.raw);
            }
        } else {
            // SAFETY: releases the retain taken in Context::new, exactly once.
            unsafe {
                sys::cuDevicePrimaryCtxRelease_v2(self.device.raw());
            }
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
