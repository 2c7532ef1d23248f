//! Stream-ordered lifetimes: which streams have used an allocation and not been waited for, so
//! that work queued on another stream waits for them (cross-stream hazards), and so that the
//! allocation is freed, or handed out again by a pool, only after them.
//!
//! Every allocation carries a [`StreamUses`]: the streams that wrote it and the streams that
//! read it since. Each asynchronous operation (a launch, an async copy or memset, a
//! synchronous copy on the legacy default stream) calls [`StreamUses::read_on`] or
//! [`StreamUses::write_on`] for every allocation it touches, before it is queued, holding the
//! borrow of the memory until it is queued:
//!
//! - a read on stream S waits for the writers, unless they are S;
//! - a write on S waits for the writers and every reader, unless they are S;
//! - "waits" means: record the other stream's fence event now, and make S wait for it
//!   (`cuEventRecord` + `cuStreamWaitEvent`). Recording now captures all work queued on that
//!   stream so far; a fence re-recorded by another thread meanwhile only captures more, so a
//!   wait can be stricter than needed, never looser.
//!
//! Because a use is recorded before it is queued, "work queued so far" may miss a use that
//! another thread has recorded and not yet queued. So a stream leaves a record only under
//! exclusive access to the memory (a write through `&mut`, a host write, the record taken out
//! by a drop or a pool), when no such use can be on its way; under a shared borrow a record
//! only grows (see `uses.rs`). `model.rs` checks this with `loom` over every interleaving.
//!
//! The common case, use after use on one stream, costs one atomic load and no driver call: the
//! record keeps a *fast key*, the address of the only stream with uses outstanding plus a bit
//! saying whether that stream is also the writer, and a use that changes nothing is recognised
//! from it alone. With several streams reading, each read of a stream already recorded is a
//! scan of a few lock-free slots: readers never wait for readers.
//!
//! When an allocation is dropped with uses outstanding, its memory is not freed at once: an
//! event is recorded on each stream that used it, and the context frees the memory once they
//! have completed ([`Graveyard`]), at its next allocation, synchronize, or out-of-memory retry,
//! or when it is destroyed. A pool keeps a returned block's record with the block, so the next
//! owner's first use on another stream waits for the previous owner's work, and a use on the
//! same stream is ordered by the stream itself, at no cost.
//!
//! A module's `__device__` and `__constant__` variables are memory too, which every kernel of
//! the module may use without naming it: the loaded module keeps one record for all of them,
//! every launch of one of its kernels is a use of it, and `Global::set`/`get` are copies
//! ordered through it ([`ModuleUses`], which also says why those launches and copies take a
//! lock when the module has variables).
//!
//! Host memory the GPU uses (page-locked, managed, registered) is waited for by the host
//! before the host touches it: a host read waits for the last writer, a host write for every
//! use ([`StreamUses::host_read`], [`StreamUses::host_write`]).
//!
//! This is the design of cudarc (per-allocation events, stream-ordered frees), with events
//! recorded only when a stream boundary is crossed rather than at every use, and pools that
//! carry a block's record with it rather than synchronizing.

mod block_cache;
mod graveyard;
#[cfg(loom)]
mod lane;
mod lend_group;
#[cfg(all(test, loom))]
pub(crate) mod model;
mod module_uses;
mod streams;
mod sync;
#[cfg(test)]
mod tests;
mod uses;

pub(crate) use graveyard::{Graveyard, Release};
pub(crate) use lend_group::{LendGroups, Member};
pub(crate) use module_uses::{ModuleUses, ModuleVars};
pub(crate) use streams::{new_event, Closing, StreamInner};
pub(crate) use uses::{StreamUses, UseSet};
