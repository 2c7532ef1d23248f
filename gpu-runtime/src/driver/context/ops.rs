//! What a context can do beyond binding: owned contexts with flags, the per-thread context
//! stack, limits, cache configuration, API version and peer access.

use crate::driver::calls;
use crate::driver::context::config::{CacheConfig, ContextFlags, Limit, SharedConfig};
use crate::driver::context::core::{lookup, register, Context, ContextInner};
use crate::driver::device::Device;
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
        crate::driver::fault::refuse_after_fault()?;
        let limits = device.limits()?;
        let compute_capability = device.compute_capability()?;
        let raw = calls::ctx_create(bits, device.raw())?;
        // cuCtxCreate pushed the new context: its state (which makes an event in it) is built
        // while it is current, then the caller's stack is restored.
        let inner = ContextInner::new(raw, device, limits, compute_capability, true);
        // The stack is not empty (the push above).
        let pop = calls::ctx_pop_current().map(|_| ()).map_err(Error::from);
        let inner = match (inner, pop) {
            (Ok(inner), Ok(())) => inner,
            // Dropping the state destroys the context; without it, destroy it here.
            (Ok(_), Err(e)) => return Err(e),
            (Err(e), _) => {
                // SAFETY: the context was just created and nothing else refers to it.
                let _ = unsafe { calls::ctx_destroy(raw) };
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
        Ok(ContextFlags::from_bits(self.bound(calls::ctx_get_flags)?))
    }

    /// Pushes this context onto the calling thread's context stack, making it current until
    /// [`Context::pop`] (PyCUDA's `push`).
    pub fn push(&self) -> Result<()> {
        // SAFETY: the context is alive as long as self.
        unsafe { calls::ctx_push_current(self.raw()) }.map_err(Error::from)
    }

    /// Pops the current context off the calling thread's context stack (PyCUDA's `pop`), and
    /// returns it when it is one this crate made and is still alive.
    pub fn pop() -> Result<Option<Context>> {
        crate::driver::init::ensure()?;
        let raw = calls::ctx_pop_current()?;
        Ok(lookup(raw))
    }

    /// The context current on the calling thread, when it is one this crate made and is alive.
    pub fn current() -> Result<Option<Context>> {
        crate::driver::init::ensure()?;
        let raw = calls::ctx_get_current()?;
        Ok(lookup(raw))
    }

    /// The device of the context current on the calling thread (PyCUDA's static
    /// `Context.get_device`); [`Context::device`] gives a handle's own device.
    pub fn current_device() -> Result<Device> {
        crate::driver::init::ensure()?;
        // Fails cleanly when no context is current.
        let raw = calls::ctx_get_device()?;
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
        self.bound(|| calls::ctx_set_limit(limit.raw(), value))
    }

    /// A context limit's current value.
    pub fn get_limit(&self, limit: Limit) -> Result<usize> {
        self.bound(|| calls::ctx_get_limit(limit.raw()))
    }

    /// Sets whether kernels in this context prefer shared memory or L1 cache.
    pub fn set_cache_config(&self, config: CacheConfig) -> Result<()> {
        self.bound(|| calls::ctx_set_cache_config(config.raw()))
    }

    /// The context's cache preference.
    pub fn get_cache_config(&self) -> Result<CacheConfig> {
        Ok(CacheConfig::from_raw(self.bound(calls::ctx_get_cache_config)?))
    }

    /// Sets the shared-memory bank width (ignored by the hardware since Volta).
    pub fn set_shared_config(&self, config: SharedConfig) -> Result<()> {
        self.bound(|| calls::ctx_set_shared_mem_config(config.raw()))
    }

    /// The shared-memory bank width setting.
    pub fn get_shared_config(&self) -> Result<SharedConfig> {
        Ok(SharedConfig::from_raw(
            self.bound(calls::ctx_get_shared_mem_config)?,
        ))
    }

    /// The driver API version the context was created with, e.g. `3020` (PyCUDA's
    /// `get_api_version`).
    pub fn api_version(&self) -> Result<u32> {
        // SAFETY: the handle is alive as long as self.
        Ok(unsafe { calls::ctx_get_api_version(self.raw()) }?)
    }

    /// Lets kernels and copies in this context access memory allocated in `peer`, a context on
    /// another device. [`Device::can_access_peer`] says whether the hardware allows it.
    pub fn enable_peer_access(&self, peer: &Context) -> Result<()> {
        self.bind()?;
        // SAFETY: both contexts are alive; this one is current.
        unsafe { calls::ctx_enable_peer_access(peer.raw()) }?;
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
        unsafe { calls::ctx_disable_peer_access(peer.raw()) }?;
        self.inner.peers.lock().retain(|p| *p != peer.raw() as usize);
        Ok(())
    }

    /// True when [`Context::enable_peer_access`] has given this context access to `peer`'s
    /// memory (and it has not been disabled since).
    pub fn has_peer_access(&self, peer: &Context) -> bool {
        self.inner.peers.lock().contains(&(peer.raw() as usize))
    }
}
