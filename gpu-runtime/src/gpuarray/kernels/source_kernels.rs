//! The registry's two steps for the kernels that are one generated source each (a gather, a
//! compaction part, `randint`, a conversion, a tiled copy): the source's hash once per
//! process, keyed by what the source is made from, then what each context compiled from it.
//! One place for what each such module would otherwise write out again.

use std::hash::Hash;

use crate::driver::context::core::Context;
use crate::error::Result;
use crate::launch::PreparedFunction;

use super::registry::{self, Definitions, KernelKey};

/// The kernels of one generated source each, by the key their source is made from (the
/// operation's element types, its part).
pub(crate) struct SourceKernels<K> {
    hashes: Definitions<K, u64>,
}

impl<K: Hash + Eq> SourceKernels<K> {
    /// No kernels yet.
    pub(crate) const fn new() -> Self {
        SourceKernels {
            hashes: Definitions::new(),
        }
    }

    /// The kernel `name` of `key`, compiled in `ctx`. `make` writes its source, only when the
    /// hash (the first time in the process) or the compile (the first time in `ctx`) needs it.
    pub(crate) fn prepared(
        &self,
        ctx: &Context,
        key: K,
        name: &str,
        make: impl Fn() -> String,
    ) -> Result<PreparedFunction> {
        let hash = self
            .hashes
            .get_or_try_insert_with(key, || Ok(registry::hash_parts(&[name, &make()])))?;
        let key = KernelKey {
            source: hash,
            variant: 0,
        };
        registry::prepared(ctx, key, name, make)
    }
}
