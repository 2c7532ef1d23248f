//! What a context can do beyond binding: owned contexts with flags, the per-thread context
//! stack, limits, cache configuration, API version and peer access.

use cudarc::driver::sys;

use crate::driver::context::config::{CacheConfig, ContextFlags, Limit, SharedConfig};
use crate::driver::context::core::{lookup, register, Context, ContextInner};
use crate::driver::device::Device;
use crate::driver::result::check;
use crate::error::{Error, FlagsError, Result};

impl Context {
    /// A new context on `device`, separate from the primary context, with `flags` (PyCUDA's
    /// `Device.make_context`). It has its own memory space and module cache and is destroyed
    /// when the last handle to it, and the last value made in it, is dropped.
    ///
    /// Unlike `cuCtxCreate`, this leaves the calling thread's context stack as it was.
    ///
    /// ```no_run
    /// use gpu_runtime::{Context, driver::ContextFlags, Device};
    /// let ctx = Context::create(Device::new(0)?, ContextFlags::SCHED_BLOCKING_SYNC)?;
    /// assert!(ctx.flags()?.contains(ContextFlags::SCHED_BLOCKING_SYNC));
    /// # Ok::<(), gpu_runtime::Error>(())
    /// ```
    pub fn create(device: Device, flags: ContextFlags) -> Result<Context> {
        let bits = flags.bits();
        let sched = bits & ContextFlags::SCHED_MASK;
        if sched.count_ones() > 1 {
            return Err(FlagsError::SchedFlags { bits, sched }.into());
        }
        if bits & !ContextFlags::ALL != 0 {
            return Err(FlagsError::UnknownContextFlags {
                unknown: bits & !ContextFlags::ALL,
            }
            .into());
        }
        crate::driver::context::fault::refuse_after_fault()?;
        let limits = device.limits()?;
        let compute_capability = device.compute_capability()?;
        let mut raw = std::ptr::null_mut();
        // SAFETY: raw is a valid out-pointer; null creation parameters are allowed.
        check("cuCtxCreate", unsafe {
            sys::cuCtxCreate_v4(&mut raw, std::ptr::null_mut(), bits, device.raw())
        })?;
        // cuCtxCreate pushed the new context: its state (which makes an event in it) is built
        // while it is current, then the caller's stack is restored.
        let inner = ContextInner::new(raw, device, limits, compute_capability, true);
        let mut popped = std::ptr::null_mut();
        // SAFETY: valid out-pointer; the stack is not empty (the push above).
        let pop = check("cuCtxPopCurrent", unsafe { sys::cuCtxPopCurrent_v2(&mut popped) });
        let inner = match (inner, pop) {
            (Ok(inner), Ok(())) => inner,
            // Dropping the state destroys the context; without it, destroy it here.
            (Ok(_), Err(e)) => return Err(e),
            (Err(e), _) => {
                // SAFETY: the context was just created and nothing else refers to it.
                unsafe { sys::cuCtxDestroy_v2(raw) };
                return Err(e);
            }
        };
        register(&inner);
        Ok(Context { inner })
    }

    /// True for a context made by [`Context::create`], false for a device's primary context.
    pub fn is_primary(&self) -> bool {
        !self.inner.owned
    }

    /// The flags the context runs with (`cuCtxGetFlags`).
    pub fn flags(&self) -> Result<ContextFlags> {
        self.bind()?;
        let mut bits = 0;
        // SAFETY: valid out-pointer; the context is current.
        check("cuCtxGetFlags", unsafe { sys::cuCtxGetFlags(&mut bits) })?;
        Ok(ContextFlags::from_bits(bits))
    }

    /// Pushes this context onto the calling thread's context stack, making it current until
    /// [`Context::pop`] (PyCUDA's `push`).
    pub fn push(&self) -> Result<()> {
        // SAFETY: the context is alive as long as self.
        check("cuCtxPushCurrent", unsafe {
            sys::cuCtxPushCurrent_v2(self.raw())
        })
    }

    /// Pops the current context off the calling thread's context stack (PyCUDA's `pop`), and
    /// returns it when it is one this crate made and is still alive.
    pub fn pop() -> Result<Option<Context>> {
        crate::driver::init::ensure()?;
        let mut raw = std::ptr::null_mut();
        // SAFETY: valid out-pointer.
        check("cuCtxPopCurrent", unsafe { sys::cuCtxPopCurrent_v2(&mut raw) })?;
        Ok(lookup(raw))
    }

    /// The context current on the calling thread, when it is one this crate made and is alive.
    pub fn current() -> Result<Option<Context>> {
        crate::driver::init::ensure()?;
        let mut raw = std::ptr::null_mut();
        // SAFETY: valid out-pointer.
        check("cuCtxGetCurrent", unsafe { sys::cuCtxGetCurrent(&mut raw) })?;
        Ok(lookup(raw))
    }

    /// The device of the context current on the calling thread (PyCUDA's static
    /// `Context.get_device`); [`Context::device`] gives a handle's own device.
    pub fn current_device() -> Result<Device> {
        crate::driver::init::ensure()?;
        let mut raw = 0;
        // SAFETY: valid out-pointer; fails cleanly when no context is current.
        check("cuCtxGetDevice", unsafe { sys::cuCtxGetDevice(&mut raw) })?;
        for ordinal in 0..Device::count()? {
            let d = Device::new(ordinal)?;
            if d.raw() == raw {
                return Ok(d);
            }
        }
        Err(Error::InvalidDevice(format!(
            "the current context's device handle {raw} matches no device ordinal"
        )))
    }

    /// Sets a context limit, e.g. the device `malloc` heap size.
    pub fn set_limit(&self, limit: Limit, value: usize) -> Result<()> {
        self.bind()?;
        // SAFETY: the context is current.
        check("cuCtxSetLimit", unsafe { sys::cuCtxSetLimit(limit.raw(), value) })
    }

    /// A context limit's current value.
    pub fn get_limit(&self, limit: Limit) -> Result<usize> {
        self.bind()?;
        let mut value = 0;
        // SAFETY: valid out-pointer; the context is current.
        check("cuCtxGetLimit", unsafe {
            sys::cuCtxGetLimit(&mut value, limit.raw())
        })?;
        Ok(value)
    }

    /// Sets whether kernels in this context prefer shared memory or L1 cache.
    pub fn set_cache_config(&self, config: CacheConfig) -> Result<()> {
        self.bind()?;
        // SAFETY: the context is current.
        check("cuCtxSetCacheConfig", unsafe {
            sys::cuCtxSetCacheConfig(config.raw())
        })
    }

    /// The context's cache preference.
    pub fn get_cache_config(&self) -> Result<CacheConfig> {
        self.bind()?;
        let mut raw = sys::CUfunc_cache::CU_FUNC_CACHE_PREFER_NONE;
        // SAFETY: valid out-pointer; the context is current.
        check("cuCtxGetCacheConfig", unsafe {
            sys::cuCtxGetCacheConfig(&mut raw)
        })?;
        Ok(CacheConfig::from_raw(raw))
    }

    /// Sets the shared-memory bank width (ignored by the hardware since Volta).
    pub fn set_shared_config(&self, config: SharedConfig) -> Result<()> {
        self.bind()?;
        // SAFETY: the context is current.
        check("cuCtxSetSharedMemConfig", unsafe {
            sys::cuCtxSetSharedMemConfig(config.raw())
        })
    }

    /// The shared-memory bank width setting.
    pub fn get_shared_config(&self) -> Result<SharedConfig> {
        self.bind()?;
        let mut raw = sys::CUsharedconfig::CU_SHARED_MEM_CONFIG_DEFAULT_BANK_SIZE;
        // SAFETY: valid out-pointer; the context is current.
        check("cuCtxGetSharedMemConfig", unsafe {
            sys::cuCtxGetSharedMemConfig(&mut raw)
        })?;
        Ok(SharedConfig::from_raw(raw))
    }

    /// The driver API version the context was created with, e.g. `3020` (PyCUDA's
    /// `get_api_version`).
    pub fn api_version(&self) -> Result<u32> {
        let mut v = 0;
        // SAFETY: valid out-pointer; the handle is alive as long as self.
        check("cuCtxGetApiVersion", unsafe {
            sys::cuCtxGetApiVersion(self.raw(), &mut v)
        })?;
        Ok(v)
    }

    /// Lets kernels and copies in this context access memory allocated in `peer`, a context on
    /// another device. [`Device::can_access_peer`] says whether the hardware allows it.
    pub fn enable_peer_access(&self, peer: &Context) -> Result<()> {
        self.bind()?;
        // SAFETY: both contexts are alive; this one is current.
        check("cuCtxEnablePeerAccess", unsafe {
            sys::cuCtxEnablePeerAccess(peer.raw(), 0)
        })?;
        let mut peers = self.inner.peers.lock();
        if !peers.contains(&(peer.raw() as usize)) {
            peers.push(peer.raw() as usize);
        }
        Ok(())
    }

    /// Revokes access given by [`Context::enable_peer_access`].
    pub fn disable_peer_access(&self, peer: &Context) -> Result<()> {
        self.bind()?;
        // SAFETY: both contexts are alive; this one is current.
        check("cuCtxDisablePeerAccess", unsafe {
            sys::cuCtxDisablePeerAccess(peer.raw())
        })?;
        self.inner.peers.lock().retain(|p| *p != peer.raw() as usize);
        Ok(())
    }

    /// True when [`Context::enable_peer_access`] has given this context access to `peer`'s
    /// memory (and it has not been disabled since).
    pub fn has_peer_access(&self, peer: &Context) -> bool {
        self.inner.peers.lock().contains(&(peer.raw() as usize))
    }
}
