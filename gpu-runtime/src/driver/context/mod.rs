//! Contexts: the default context, one shared context per device, owned contexts with flags,
//! binding to threads, and what higher layers keep per context. (Making a context current by
//! its handle is [`current`](super::current); the process's kernel fault, [`fault`](super::fault).)

pub(crate) mod config;
pub(crate) mod context_link;
pub(crate) mod core;
pub(crate) mod ext;
mod memory_cache;
pub(crate) mod ops;

pub use self::core::Context;
pub use config::{CacheConfig, ContextFlags, Limit, SharedConfig};
