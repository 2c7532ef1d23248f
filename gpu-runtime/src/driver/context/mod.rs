//! Contexts: the default context, one shared context per device, owned contexts with flags,
//! binding to threads, faults, and what higher layers keep per context.

pub(crate) mod config;
pub(crate) mod context_link;
pub(crate) mod core;
pub(crate) mod current;
pub(crate) mod ext;
pub(crate) mod fault;
mod memory_cache;
pub(crate) mod ops;

pub use self::core::Context;
pub use config::{CacheConfig, ContextFlags, Limit, SharedConfig};
