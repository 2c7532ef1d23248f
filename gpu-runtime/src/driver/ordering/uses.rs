//! The per-allocation record: which streams used it and must be waited for.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use crate::error::Result;

use super::streams::StreamInner;

/// How an operation touches memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Access {
    Read,
    Write,
}

/// The most readers a record names; one more makes the newcomer wait for them all and take
/// their place (correct, merely less concurrent). Kept small: a pool moves the record with
/// every block it hands out and takes back.
pub(super) const MAX_READERS: usize = 3;

/// The streams a use must wait for: at most the writer and every reader.
#[derive(Default)]
pub(super) struct Waits {
    pub(super) streams: [Option<Arc<StreamInner>>; MAX_READERS + 1],
    pub(super) count: usize,
}

impl Waits {
    pub(super) fn push(&mut self, s: &Arc<StreamInner>) {
        self.streams[self.count] = Some(s.clone());
        self.count += 1;
    }

    pub(super) fn iter(&self) -> impl Iterator<Item = &Arc<StreamInner>> {
        self.streams.iter().flatten()
    }
}

/// The streams that used an allocation and have not been waited for: the last writer and the
/// readers since (each of which waited for that writer). What a pool keeps with a free block.
///
/// Readers are packed at the front of the array (readers are only ever added at the first free
/// slot, and all removed at once).
#[derive(Default)]
pub(crate) struct UseSet {
    pub(super) writer: Option<Arc<StreamInner>>,
    pub(super) readers: [Option<Arc<StreamInner>>; MAX_READERS],
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
            .field("writer", &self.writer.as_ref().map(key))
            .field("readers", &self.readers().map(key).collect::<Vec<_>>())
            .finish()
    }
}

impl UseSet {
    pub(super) fn readers(&self) -> impl Iterator<Item = &Arc<StreamInner>> {
        self.readers.iter().flatten()
    }

    pub(super) fn has_reader(&self, s: &StreamInner) -> bool {
        self.readers().any(|r| std::ptr::eq(&**r, s))
    }

    /// True when no use is outstanding.
    pub(crate) fn is_idle(&self) -> bool {
        self.writer.is_none() && self.readers().next().is_none()
    }

    /// Every stream with a use outstanding, writer first.
    pub(super) fn streams(&self) -> impl Iterator<Item = &Arc<StreamInner>> {
        self.writer.iter().chain(self.readers())
    }

    /// The fast key this set is summed up by (see [`StreamUses`]).
    #[inline]
    pub(super) fn fast_key(&self) -> usize {
        let pending = if self.writer.is_some() { PENDING_WRITE } else { 0 };
        match (&self.writer, &self.readers[0], &self.readers[1]) {
            (None, None, _) => IDLE,
            (Some(w), None, _) => w.key() | WRITER | PENDING_WRITE,
            (_, Some(r), None) => r.key() | pending,
            _ => MIXED | pending,
        }
    }

    /// Plans a use on `s`: the streams `s` must wait for, and the set after the use. Pure, so
    /// that it is tested without a GPU; nothing changes until the waits have been made.
    pub(super) fn plan(&self, s: &Arc<StreamInner>, access: Access) -> (Waits, UseSet) {
        let is_s = |x: &Arc<StreamInner>| Arc::ptr_eq(x, s);
        let mut waits = Waits::default();
        let manual = s.manual.load(Ordering::Relaxed);
        let mut wait = |x: &Arc<StreamInner>| {
            if !is_s(x) && !manual && !x.manual.load(Ordering::Relaxed) {
                waits.push(x);
            }
        };
        let mut next = UseSet::default();
        match access {
            Access::Read => {
                next.writer = self.writer.clone();
                if self.writer.as_ref().is_some_and(is_s) || self.has_reader(s) {
                    next.readers = self.readers.clone();
                } else {
                    if let Some(w) = &self.writer {
                        wait(w);
                    }
                    match self.readers.iter().position(Option::is_none) {
                        Some(free) => {
                            next.readers = self.readers.clone();
                            next.readers[free] = Some(s.clone());
                        }
                        None => {
                            // Full: the newcomer waits for every reader and stands for them.
                            self.readers().for_each(&mut wait);
                            next.readers[0] = Some(s.clone());
                        }
                    }
                }
            }
            Access::Write => {
                self.streams().for_each(&mut wait);
                next.writer = Some(s.clone());
            }
        }
        (waits, next)
    }
}

/// The stream-ordering record of one allocation (see the module docs).
///
/// `fast` sums up `set`: [`IDLE`]; or a stream's key, with [`WRITER`] when that stream is the
/// last writer and the only stream with uses outstanding, or without when it is the only
/// reader (and [`PENDING_WRITE`] when some writer is still outstanding); or [`MIXED`]. It is
/// written under the mutex and read without it: a stale read can only send a use down the slow
/// path, because the state a fast-path use relies on can only change through a use on another
/// stream, which needs `&mut` (a write) or does not affect it (a read).
pub(crate) struct StreamUses {
    pub(super) fast: AtomicUsize,
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
    pub(crate) const fn new() -> StreamUses {
        StreamUses {
            fast: AtomicUsize::new(IDLE),
            set: Mutex::new(UseSet {
                writer: None,
                readers: [None, None, None],
            }),
        }
    }

    pub(super) fn lock(&self) -> MutexGuard<'_, UseSet> {
        // Every critical section leaves the set consistent; a poisoned lock is usable.
        self.set.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The record, taken out (the allocation is being freed or returned to its pool).
    pub(crate) fn take(&mut self) -> UseSet {
        *self.fast.get_mut() = IDLE;
        std::mem::take(self.set.get_mut().unwrap_or_else(|p| p.into_inner()))
    }

    /// Orders a read of the allocation on `s` after its last write.
    #[inline(always)]
    pub(crate) fn read_on(&self, s: &Arc<StreamInner>) -> Result<()> {
        if self.fast.load(Ordering::Acquire) & KEY_MASK == s.key() {
            return Ok(());
        }
        self.use_on(s, Access::Read)
    }

    /// Orders a write of the allocation on `s` after every use.
    #[inline(always)]
    pub(crate) fn write_on(&self, s: &Arc<StreamInner>) -> Result<()> {
        if self.fast.load(Ordering::Acquire) == s.key() | WRITER | PENDING_WRITE {
            return Ok(());
        }
        self.use_on(s, Access::Write)
    }

    #[cold]
    #[inline(never)]
    pub(super) fn use_on(&self, s: &Arc<StreamInner>, access: Access) -> Result<()> {
        let mut set = self.lock();
        let (waits, next) = set.plan(s, access);
        for x in waits.iter() {
            s.wait_for(x)?;
        }
        self.fast.store(next.fast_key(), Ordering::Release);
        *set = next;
        Ok(())
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
    /// writes it, or gives it back to its owner).
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
            Access::Read => set.writer.as_ref().map_or(Ok(()), |w| w.host_wait()),
            Access::Write => set.streams().try_for_each(|x| x.host_wait()),
        };
        if result.is_ok() {
            set.writer = None;
            if access == Access::Write {
                set.readers = Default::default();
            }
            self.fast.store(set.fast_key(), Ordering::Release);
        }
        result
    }
}

/// The guard of a mutex whose holder panicked is still good: every update under these locks
/// leaves the record consistent before anything can panic.
pub(super) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}
