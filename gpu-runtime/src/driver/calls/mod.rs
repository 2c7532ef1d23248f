//! The raw driver calls of the layers above `driver` (launches, graphs, captures, staged
//! copies, DLPack's stream waits), each behind one thin function, as cudarc's `result` module
//! does: typed arguments, out-pointers turned into return values, and the `CUresult` turned into
//! `Result<_, Failed>` naming the call ([`result`](super::result::result)); `?` makes it the
//! crate's [`Error`](crate::error::Error), exactly as [`check`](super::result::check) would.
//!
//! A function is `unsafe` when the driver cannot check what it is given (a handle that must be
//! live, pointers and lengths that must lie in an allocation), with a `# Safety` section
//! saying what; it is safe when the driver checks everything (creating a stream, an event or
//! a graph in the current context). Nothing here binds a context or orders memory: the
//! callers do, as before.
//!
//! Only `driver/` calls `cudarc::driver::sys` functions; `scripts/check_layers.py` refuses
//! such a call anywhere else in the crate.

pub(crate) mod event;
pub(crate) mod graph;
pub(crate) mod launch;
pub(crate) mod memcpy;
pub(crate) mod stream;

// Flat, as cudarc's `result` module is per family: callers name `calls::stream_create`.
pub(crate) use event::*;
pub(crate) use graph::*;
pub(crate) use launch::*;
pub(crate) use memcpy::*;
pub(crate) use stream::*;
