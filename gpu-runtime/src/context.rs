//! CUDA contexts: the default context, one shared context per device, and binding to threads.
//!
//! A [`Context`] wraps the device's *primary* context, the one the CUDA runtime, cudarc and
//! most libraries also use, so memory and modules pass freely between them. There is one
//! [`Context`] per device in a process: [`Context::new`] for the same device returns a handle to
//! the same context, so a kernel is compiled and loaded once per device however many handles
//! exist. A `Context` is a cheap, reference-counted handle that is `Send + Sync`: the driver
//! API is thread-safe, and every call that needs the context current on the calling thread
//! makes it current first.

use std::collections::HashMap;
use std::fmt;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock, Weak};

use cudarc::driver::sys;

use crate::device::{Device, DeviceLimits};
use crate::error::{check, Error, Result};
use crate::module::{LoadedModule, ModuleSource};

/// A handle to the primary CUDA context of one device.
#[derive(Clone)]
pub struct Context {
    pub(crate) inner: Arc<ContextInner>,
}

pub(crate) struct ContextInner {
    pub(crate) raw: sys::CUcontext,
    pub(crate) device: Device,
    pub(crate) limits: DeviceLimits,
    pub(crate) compute_capability: (u32, u32),
    /// Modules compiled from `static` sources, keyed by the source's address so that
    /// `prepare` never hashes a string.
    modules: Mutex<HashMap<usize, Arc<LoadedModule>>>,
    /// The first sticky error a kernel caused in this context; once set, `bind` refuses every
    /// call (see `Error::ContextPoisoned`).
    fault: OnceLock<Fault>,
}

/// A sticky error, as first reported.
struct Fault {
    call: &'static str,
    code: u32,
    name: String,
    description: String,
}

/// Every live context, so that a sticky error can be pinned on the one current when it was
/// reported. Apart from `per_device`, so that an error raised while that lock is held cannot
/// deadlock.
fn live() -> &'static Mutex<Vec<Weak<ContextInner>>> {
    static LIVE: OnceLock<Mutex<Vec<Weak<ContextInner>>>> = OnceLock::new();
    LIVE.get_or_init(Default::default)
}

/// Marks the context current on this thread as broken by a kernel fault (cold: errors only).
/// Sticky errors are reported by calls on the current context, which `bind` made current.
pub(crate) fn record_fault(call: &'static str, code: u32, name: &str, description: &str) {
    let mut current = std::ptr::null_mut();
    // SAFETY: valid out-pointer; the driver is loaded (a driver call just returned this error).
    if unsafe { sys::cuCtxGetCurrent(&mut current) } != sys::CUresult::CUDA_SUCCESS {
        return;
    }
    let live = live().lock().unwrap_or_else(|p| p.into_inner());
    for inner in live.iter().filter_map(Weak::upgrade) {
        if inner.raw == current {
            let _ = inner.fault.set(Fault {
                call,
                code,
                name: name.to_owned(),
                description: description.to_owned(),
            });
        }
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
        let limits = device.limits()?;
        let compute_capability = device.compute_capability()?;
        let mut raw = std::ptr::null_mut();
        // SAFETY: raw is a valid out-pointer; the device handle came from cuDeviceGet.
        check("cuDevicePrimaryCtxRetain", unsafe {
            sys::cuDevicePrimaryCtxRetain(&mut raw, device.raw())
        })?;
        let inner = Arc::new(ContextInner {
            raw,
            device,
            limits,
            compute_capability,
            modules: Mutex::new(HashMap::new()),
            fault: OnceLock::new(),
        });
        map.insert(key, Arc::downgrade(&inner));
        {
            let mut live = live().lock().unwrap_or_else(|p| p.into_inner());
            live.retain(|w| w.strong_count() > 0);
            live.push(Arc::downgrade(&inner));
        }
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

    /// True once a kernel has faulted in this context (an illegal address, a trap, an assert):
    /// from then on every call in it fails with [`Error::ContextPoisoned`], and only a new
    /// process can use the device again.
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
    /// raised while running.
    pub fn synchronize(&self) -> Result<()> {
        self.bind()?;
        // SAFETY: the context is current on this thread.
        check("cuCtxSynchronize", unsafe { sys::cuCtxSynchronize() })
    }

    /// `(free, total)` device memory in bytes.
    pub fn mem_get_info(&self) -> Result<(usize, usize)> {
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
        if let Some(m) = modules.get(&key) {
            return Ok(m.clone());
        }
        // Compiling under the lock makes racing threads wait for one compile instead of each
        // doing their own.
        let module = Arc::new(LoadedModule::build(self, source)?);
        modules.insert(key, module.clone());
        Ok(module)
    }

    /// Forgets every module compiled in this context (PyCUDA's memoize cache clear). Kernels
    /// already prepared keep their module alive until they are dropped.
    pub fn clear_module_cache(&self) {
        self.inner
            .modules
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clear();
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
        let mut current = std::ptr::null_mut();
        // SAFETY: valid out-pointer.
        check("cuCtxGetCurrent", unsafe { sys::cuCtxGetCurrent(&mut current) })?;
        if current != self.raw {
            // SAFETY: self.raw is a live primary context retained by this value.
            check("cuCtxSetCurrent", unsafe { sys::cuCtxSetCurrent(self.raw) })?;
        }
        Ok(())
    }
}

impl ContextInner {
    #[cold]
    fn poisoned(&self, f: &Fault) -> Error {
        Error::ContextPoisoned {
            device: self.device.ordinal(),
            first_call: f.call,
            first_code: f.code,
            first_name: f.name.clone(),
            first_description: f.description.clone(),
        }
    }
}

impl Drop for ContextInner {
    fn drop(&mut self) {
        // Modules must be unloaded while the context still exists.
        let modules = std::mem::take(self.modules.get_mut().unwrap_or_else(|p| p.into_inner()));
        // A poisoned context refuses `bind`; its modules' own drops make it current themselves.
        let _ = self.bind();
        drop(modules);
        // SAFETY: releases the retain taken in Context::new, exactly once.
        unsafe {
            sys::cuDevicePrimaryCtxRelease_v2(self.device.raw());
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
