//! The per-allocation record: which streams used it and must be waited for.
//!
//! # The rule that keeps it sound under threads
//!
//! A use is recorded before its work is queued (the borrow that allows the use is held across
//! both). So another thread may see a record that names a stream whose work is not queued yet,
//! and a fence recorded on that stream now would not cover it. Hence: **a stream leaves the
//! record only under exclusive access to the memory** — an exclusive write ([`StreamUses::write_on`],
//! through a `&mut` borrow), a host write (also `&mut`), or the record taken out (ownership).
//! Then no borrow that could still be queueing a use exists, so every use the record names is
//! queued, and waiting for it covers it. Everything that happens under a shared borrow (reads,
//! writes through shared handles such as surfaces, host reads) only adds to the record.
//!
//! Readers never wait for readers, and the record names every one of them (no cap), so a
//! writer, a free or a pool's next owner waits for all of them.
//!
//! # Streams another library captures
//!
//! A use on a stream handed to cudarc is refused while cudarc captures that stream into a
//! graph (`StreamInner::refuse_foreign_capture`, checked before the use is recorded and again
//! after the work is queued): work queued in a capture runs at each launch of the graph, not
//! in the stream's order, so no record could say when its memory is free. The capture is
//! invalidated as well, so work that raced into it between the two checks never runs.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use crate::error::Result;
use crate::sync::LockRank;

use super::streams::StreamInner;
use super::sync::{AtomicUsize, Mutex, MutexGuard};

/// How an operation touches memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Access {
    Read,
    /// A write through an exclusive (`&mut`) borrow: the streams it waits for leave the record.
    Write,
    /// A write through a shared handle (a surface object): it waits like a write, but every
    /// stream stays in the record, since another thread may be queueing a use on one of them.
    SharedWrite,
}

/// How many streams a record can name for the lock-free check of a repeated read
/// ([`StreamUses::read_on`]); streams past these are still recorded, and their reads take the
/// record's lock.
pub(super) const SEEN: usize = 16;

/// The streams that used an allocation and have not been waited for under exclusive access:
/// the writers (one after an exclusive write; more only after writes through shared handles)
/// and the readers since. What a pool keeps with a free block, and what a free waits for.
#[derive(Default)]
pub(crate) struct UseSet {
    pub(super) writers: Vec<Arc<StreamInner>>,
    pub(super) readers: Vec<Arc<StreamInner>>,
    /// A shared write came after some of the readers: they have not waited for it, so no
    /// reader stands in the fast key.
    pub(super) stale_readers: bool,
}

/// Fast-key bits: the key stream is also the last writer; a GPU write is outstanding.
pub(super) const WRITER: usize = 1;
pub(super) const PENDING_WRITE: usize = 2;
/// Several streams have uses outstanding: every use takes the slow path.
pub(super) const MIXED: usize = 4;
pub(super) const KEY_MASK: usize = !7;
/// No use outstanding.
pub(super) const IDLE: usize = 0;

impl std::fmt::Debug for UseSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let key = |s: &Arc<StreamInner>| format!("{:#x}", s.key());
        f.debug_struct("UseSet")
            .field("writers", &self.writers.iter().map(key).collect::<Vec<_>>())
            .field("readers", &self.readers.iter().map(key).collect::<Vec<_>>())
            .finish()
    }
}

fn has(list: &[Arc<StreamInner>], s: &StreamInner) -> bool {
    list.iter().any(|x| std::ptr::eq(&**x, s))
}

impl UseSet {
    pub(super) fn readers(&self) -> impl Iterator<Item = &Arc<StreamInner>> {
        self.readers.iter()
    }

    pub(super) fn has_reader(&self, s: &StreamInner) -> bool {
        has(&self.readers, s)
    }

    /// True when no use is outstanding.
    pub(crate) fn is_idle(&self) -> bool {
        self.writers.is_empty() && self.readers.is_empty()
    }

    /// Every stream with a use outstanding, writers first: what a free must wait for.
    pub(crate) fn streams(&self) -> impl Iterator<Item = &Arc<StreamInner>> {
        self.writers.iter().chain(self.readers())
    }

    /// The fast key this set is summed up by (see [`StreamUses`]).
    #[inline]
    pub(super) fn fast_key(&self) -> usize {
        let pending = if self.writers.is_empty() { 0 } else { PENDING_WRITE };
        match (self.writers.as_slice(), self.readers.as_slice()) {
            ([], []) => IDLE,
            ([w], []) => w.key() | WRITER | PENDING_WRITE,
            ([], [r]) => r.key(),
            ([_], _) if self.stale_readers => MIXED | pending,
            ([w], [r]) if !Arc::ptr_eq(w, r) && !self.stale_readers => r.key() | pending,
            _ => MIXED | pending,
        }
    }

    /// The streams a use on `s` must wait for: for a read every writer, for a write every
    /// stream, except `s` itself and manually ordered streams (a stream may appear twice).
    pub(super) fn waits<'s>(
        &'s self,
        s: &'s Arc<StreamInner>,
        access: Access,
    ) -> impl Iterator<Item = &'s Arc<StreamInner>> + 's {
        let manual = s.manual.load(Ordering::Relaxed);
        let all = match access {
            Access::Read => self.writers.iter().chain(self.readers[..0].iter()),
            Access::Write | Access::SharedWrite => self.writers.iter().chain(self.readers.iter()),
        };
        all.filter(move |x| !manual && !Arc::ptr_eq(x, s) && !x.manual.load(Ordering::Relaxed))
    }

    /// True when a read on `s` changes nothing: `s` is the only writer, or a reader that has
    /// waited for every writer (readers are not stale, see `stale_readers`).
    pub(super) fn read_is_noop(&self, s: &StreamInner) -> bool {
        if self.writers.iter().any(|w| !std::ptr::eq(&**w, s)) {
            return self.has_reader(s) && !self.stale_readers;
        }
        !self.writers.is_empty() || self.has_reader(s)
    }

    /// Records a use on `s` whose waits (from [`UseSet::plan`]) have been made.
    pub(super) fn apply(&mut self, s: &Arc<StreamInner>, access: Access) {
        match access {
            Access::Read => {
                if !has(&self.writers, s) && !self.has_reader(s) {
                    self.readers.push(s.clone());
                }
            }
            Access::Write => {
                // Exclusive: every use named here is queued (see the module docs), and `s`
                // has waited for all of them.
                self.readers.clear();
                self.writers.clear();
                self.writers.push(s.clone());
                self.stale_readers = false;
            }
            Access::SharedWrite => {
                if !has(&self.writers, s) {
                    self.writers.push(s.clone());
                }
                self.stale_readers |= !self.readers.is_empty();
            }
        }
    }

    /// The streams a use on `s` waits for (without repeats), and the set after it (for tests).
    #[cfg(test)]
    pub(super) fn after(&self, s: &Arc<StreamInner>, access: Access) -> (Vec<Arc<StreamInner>>, UseSet) {
        let mut waits: Vec<Arc<StreamInner>> = Vec::new();
        let copy = UseSet {
            writers: self.writers.clone(),
            readers: self.readers.clone(),
            stale_readers: self.stale_readers,
        };
        if access == Access::Read && self.read_is_noop(s) {
            return (waits, copy);
        }
        for x in self.waits(s, access) {
            if !has(&waits, x) {
                waits.push(x.clone());
            }
        }
        let mut next = UseSet {
            writers: self.writers.clone(),
            readers: self.readers.clone(),
            stale_readers: self.stale_readers,
        };
        next.apply(s, access);
        (waits, next)
    }
}

/// The stream-ordering record of one allocation (see the module docs).
///
/// `fast` sums up `set`: [`IDLE`]; or a stream's key, with [`WRITER`] when that stream is the
/// only writer and the only stream with uses outstanding, or without when it is the only
/// reader (and [`PENDING_WRITE`] when some writer is outstanding); or [`MIXED`]. `seen` holds
/// the keys of streams on which a read changes nothing (the sole writer, and readers that
/// waited for every writer), packed at the front, zero after the last. Both are written under
/// the lock, after the waits they stand for were queued, and read without it.
///
/// Why a lock-free hit is right: a key in `seen` or `fast` names a stream the record holds
/// (an `Arc`), so the address is not reused while it is there. It stops standing for "a read
/// changes nothing" only when a writer is added; an exclusive writer holds the only borrow of
/// the memory, so no read races with it; a shared writer (a surface) writes memory that no
/// `&` reader can reach (making one borrows the memory mutably). So a reader that found its
/// key has waited for every writer a correct program can have queued before it, and its own
/// stream is in the record, so whatever comes next waits for its work.
pub(crate) struct StreamUses {
    pub(super) fast: AtomicUsize,
    pub(super) seen: [AtomicUsize; SEEN],
    pub(super) set: Mutex<UseSet>,
}

impl std::fmt::Debug for StreamUses {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "StreamUses({:?})", *self.lock())
    }
}

impl Default for StreamUses {
    fn default() -> Self {
        StreamUses::new()
    }
}

impl StreamUses {
    /// A record of a new allocation: no uses.
    pub(crate) fn new() -> StreamUses {
        StreamUses {
            fast: AtomicUsize::new(IDLE),
            seen: std::array::from_fn(|_| AtomicUsize::new(0)),
            set: Mutex::new(LockRank::StreamUses, UseSet::default()),
        }
    }

    pub(super) fn lock(&self) -> MutexGuard<'_, UseSet> {
        self.set.lock()
    }

    /// The record, taken out (the allocation is being freed or returned to its pool): `&mut`,
    /// so every use it names has been queued.
    pub(crate) fn take(&mut self) -> UseSet {
        // `&mut`: no lock to take (a drop may run where another record's lock is held).
        let set = std::mem::take(self.set.get_mut());
        self.fast.store(IDLE, Ordering::Relaxed);
        self.reset_seen(0);
        set
    }

    /// True when the lock-free slots say a read on the stream `key` changes nothing.
    #[inline(always)]
    fn seen(&self, key: usize) -> bool {
        for slot in &self.seen {
            match slot.load(Ordering::Acquire) {
                0 => return false,
                k if k == key => return true,
                _ => {}
            }
        }
        false
    }

    /// Orders a read of the allocation on `s` after its writes, and records it. Called with a
    /// shared borrow of the memory held until the read is queued.
    #[inline(always)]
    pub(crate) fn read_on(&self, s: &Arc<StreamInner>) -> Result<()> {
        s.refuse_foreign_capture()?;
        if self.fast.load(Ordering::Acquire) & KEY_MASK == s.key() {
            return Ok(());
        }
        self.read_on_shared(s)
    }

    /// A read when several streams use the memory: a lock-free scan of the slots, else the
    /// lock. Kept out of line, so that the one-stream path inlined into every launch stays one
    /// load and a compare.
    #[inline(never)]
    fn read_on_shared(&self, s: &Arc<StreamInner>) -> Result<()> {
        if self.seen(s.key()) {
            return Ok(());
        }
        self.use_on(s, Access::Read)
    }

    /// Orders a write of the allocation on `s` after every use, and makes `s` the only stream
    /// recorded. Only under exclusive access to the memory: a `&mut` borrow (every
    /// `DeviceViewMut` is made from one) held until the write is queued. Writes through a
    /// shared handle use [`StreamUses::write_shared_on`].
    #[inline(always)]
    pub(crate) fn write_on(&self, s: &Arc<StreamInner>) -> Result<()> {
        s.refuse_foreign_capture()?;
        if self.is_sole_writer(s) {
            return Ok(());
        }
        self.use_on(s, Access::Write)
    }

    /// True when `s` is the only stream with uses outstanding, and the last writer: a write on
    /// `s` ([`StreamUses::write_on`]) would change nothing. One atomic load.
    #[inline(always)]
    pub(crate) fn is_sole_writer(&self, s: &StreamInner) -> bool {
        self.fast.load(Ordering::Acquire) == s.key() | WRITER | PENDING_WRITE
    }

    /// Orders a write of the allocation on `s` after every use, keeping every stream in the
    /// record: for writes through a handle that several threads may use at once (a surface).
    #[inline]
    pub(crate) fn write_shared_on(&self, s: &Arc<StreamInner>) -> Result<()> {
        s.refuse_foreign_capture()?;
        if self.fast.load(Ordering::Acquire) == s.key() | WRITER | PENDING_WRITE {
            return Ok(());
        }
        self.use_on(s, Access::SharedWrite)
    }

    #[cold]
    #[inline(never)]
    pub(super) fn use_on(&self, s: &Arc<StreamInner>, access: Access) -> Result<()> {
        let mut set = self.lock();
        let key = s.key();
        if access == Access::Read && (self.seen(key) || set.read_is_noop(s)) {
            // Recorded already (by another thread meanwhile, or past the lock-free slots).
            self.publish_seen(key);
            return Ok(());
        }
        for x in set.waits(s, access) {
            s.wait_for(x)?;
        }
        set.apply(s, access);
        match access {
            Access::Read => self.publish_seen(key),
            Access::Write | Access::SharedWrite => {
                // The other streams have not waited for this write.
                self.reset_seen(key);
            }
        }
        self.fast.store(set.fast_key(), Ordering::Release);
        Ok(())
    }

    /// Adds `key` to the lock-free slots, if there is room. Under the lock.
    fn publish_seen(&self, key: usize) {
        for slot in &self.seen {
            match slot.load(Ordering::Relaxed) {
                0 => {
                    slot.store(key, Ordering::Release);
                    return;
                }
                k if k == key => return,
                _ => {}
            }
        }
    }

    /// Makes `first` (0: none) the only key of the lock-free slots. Under the lock, with no
    /// lock-free reader that could rely on the keys removed (see [`StreamUses`]).
    fn reset_seen(&self, first: usize) {
        self.seen[0].store(first, Ordering::Release);
        for slot in &self.seen[1..] {
            if slot.load(Ordering::Relaxed) == 0 {
                break;
            }
            slot.store(0, Ordering::Release);
        }
    }

    /// Blocks the host until no GPU write of the allocation is outstanding (before the host
    /// reads it). Errors are those of a failed context, whose work never runs on: after one,
    /// the GPU no longer touches the memory, so the caller may go on.
    #[inline]
    pub(crate) fn host_read(&self) -> Result<()> {
        if self.fast.load(Ordering::Acquire) & PENDING_WRITE == 0 {
            return Ok(());
        }
        self.host_use(Access::Read)
    }

    /// Blocks the host until no GPU use of the allocation is outstanding (before the host
    /// writes it, or gives it back to its owner). Only under exclusive access (`&mut`).
    #[inline]
    pub(crate) fn host_write(&self) -> Result<()> {
        if self.fast.load(Ordering::Acquire) == IDLE {
            return Ok(());
        }
        self.host_use(Access::Write)
    }

    #[cold]
    pub(super) fn host_use(&self, access: Access) -> Result<()> {
        let mut set = self.lock();
        let result = match access {
            Access::Read => set.writers.iter().try_for_each(|w| w.host_wait()),
            Access::Write | Access::SharedWrite => set.streams().try_for_each(|x| x.host_wait()),
        };
        if result.is_ok() {
            if access == Access::Read {
                // Under a shared borrow: the writers' work has finished, but they stay in the
                // record (as readers, which nothing reads-after) until exclusive access.
                let writers = std::mem::take(&mut set.writers);
                for w in writers {
                    if !set.has_reader(&w) {
                        set.readers.push(w);
                    }
                }
            } else {
                set.writers.clear();
                set.readers.clear();
                set.stale_readers = false;
                self.reset_seen(0);
            }
            self.fast.store(set.fast_key(), Ordering::Release);
        }
        result
    }
}
