//! Context-dependent memoization (PyCUDA's `context_dependent_memoize` and
//! `clear_context_caches`): a value computed once per context and key, e.g. a kernel prepared
//! from a source generated at run time, or a lookup table uploaded to the device.

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::Once;

use crate::driver::context::core::{live, Context};
use crate::error::Result;
use crate::sync::{LockRank, Mutex, MutexGuard};

trait Clear: Sync {
    fn clear(&self);
}

fn registry() -> &'static Mutex<Vec<&'static dyn Clear>> {
    static CACHES: Mutex<Vec<&'static dyn Clear>> = Mutex::new(LockRank::ContextCacheRegistry, Vec::new());
    &CACHES
}

/// A cache of values per context and key, declared as a `static`.
///
/// ```no_run
/// use gpu_runtime::{Context, tools::ContextCache, DeviceBuffer};
///
/// static TABLES: ContextCache<usize, std::sync::Arc<DeviceBuffer<f32>>> = ContextCache::new();
///
/// fn sine_table(ctx: &Context, n: usize) -> gpu_runtime::Result<std::sync::Arc<DeviceBuffer<f32>>> {
///     TABLES.get_or_try_insert_with(ctx, n, |ctx| {
///         let t: Vec<f32> = (0..n).map(|i| (i as f32).sin()).collect();
///         Ok(std::sync::Arc::new(ctx.to_device(&t)?))
///     })
/// }
/// ```
pub struct ContextCache<K, V> {
    map: Mutex<Option<HashMap<(usize, K), V>>>,
    registered: Once,
}

impl<K, V> ContextCache<K, V> {
    /// An empty cache.
    pub const fn new() -> Self {
        ContextCache {
            map: Mutex::new(LockRank::ContextCacheValues, None),
            registered: Once::new(),
        }
    }
}

impl<K, V> Default for ContextCache<K, V> {
    fn default() -> Self {
        Self::new()
    }
}

impl<K: Hash + Eq + Send + 'static, V: Clone + Send + 'static> ContextCache<K, V> {
    /// The value for `key` in `ctx`: cached, or made by `make` (then cached; an error is
    /// returned and nothing cached). `make` runs without the cache locked, so it may use other
    /// caches; two threads racing on one key may both run it, and the first result is kept.
    /// `V::clone` runs with the cache locked: a `Clone` that uses a `ContextCache` is refused
    /// in debug builds (a panic naming both locks), as it could deadlock.
    pub fn get_or_try_insert_with(
        &'static self,
        ctx: &Context,
        key: K,
        make: impl FnOnce(&Context) -> Result<V>,
    ) -> Result<V> {
        self.registered.call_once(|| registry().lock().push(self));
        let full = (ctx.raw() as usize, key);
        if let Some(v) = self.lock().as_ref().and_then(|m| m.get(&full)) {
            return Ok(v.clone());
        }
        let value = make(ctx)?;
        let mut guard = self.lock();
        let map = guard.get_or_insert_with(HashMap::new);
        if let Some(kept) = map.get(&full) {
            // Another thread made it first: its value is kept, and ours is dropped after the
            // lock is released, since a value's `Drop` may use another cache.
            let kept = kept.clone();
            drop(guard);
            drop(value);
            return Ok(kept);
        }
        Ok(map.entry(full).or_insert(value).clone())
    }

    /// The number of values cached, over all contexts.
    pub fn len(&self) -> usize {
        self.lock().as_ref().map_or(0, HashMap::len)
    }

    /// True when nothing is cached.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Forgets every value (dropping them, and any context they hold).
    pub fn clear(&self) {
        let taken = self.lock().take();
        drop(taken);
    }

    fn lock(&self) -> MutexGuard<'_, Option<HashMap<(usize, K), V>>> {
        self.map.lock()
    }
}

impl<K: Hash + Eq + Send + 'static, V: Clone + Send + 'static> Clear for ContextCache<K, V> {
    fn clear(&self) {
        ContextCache::clear(self)
    }
}

/// Empties every [`ContextCache`] that has been used, releasing the contexts their values
/// hold; part of [`crate::tools::clear_context_caches`].
pub(crate) fn clear_user_caches() {
    let caches: Vec<&'static dyn Clear> = registry().lock().clone();
    for c in caches {
        c.clear();
    }
}

/// Empties every context-dependent cache in the process (PyCUDA's `clear_context_caches`):
/// the module caches of every context ([`Context::clear_module_cache`]) and every
/// [`crate::tools::ContextCache`] of memoized user values, releasing the contexts those values hold.
pub fn clear_context_caches() {
    clear_user_caches();
    for ctx in live() {
        ctx.clear_module_cache();
    }
}
