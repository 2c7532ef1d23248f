//! Every raw driver call of the crate, each behind one thin function, as cudarc's `result`
//! module does: typed arguments, out-pointers turned into return values, and the `CUresult`
//! turned into `Result<_, Failed>` naming the call ([`result`](failed::result)); `?` makes it
//! the crate's [`Error`](crate::error::Error) ([`driver_error`](super::result::driver_error),
//! which also records a kernel fault).
//!
//! A function is `unsafe` when the driver cannot check what it is given (a handle that must be
//! live, pointers and lengths that must lie in an allocation), with a `# Safety` section
//! saying what; it is safe when the driver checks everything (creating a stream, an event, a
//! graph or an allocation in the current context, a query into out-values of its own).
//! Nothing here binds a context or orders memory: the callers do.
//!
//! Only `driver/calls/` calls `cudarc::driver::sys` functions; `scripts/check_layers.py`
//! refuses such a call anywhere else in the crate. This is the lowest room of `driver`: it
//! uses nothing else of the crate.

pub(crate) mod context;
pub(crate) mod device;
pub(crate) mod event;
mod failed;
pub(crate) mod graph;
pub(crate) mod launch;
pub(crate) mod memcpy;
pub(crate) mod memory;
pub(crate) mod module;
pub(crate) mod stream;

// Flat, as cudarc's `result` module is per family: callers name `calls::stream_create`.
pub(crate) use context::*;
pub(crate) use device::*;
pub(crate) use event::*;
pub(crate) use failed::Failed;
pub(crate) use graph::*;
pub(crate) use launch::*;
pub(crate) use memcpy::*;
pub(crate) use memory::*;
pub(crate) use module::*;
pub(crate) use stream::*;
