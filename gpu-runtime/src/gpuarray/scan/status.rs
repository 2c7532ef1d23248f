//! The tile status that look-back scans ([`scan_source`](crate::gpuarray::scan::source)) work through:
//! one buffer per stream, kept by the context and reused by every scan on that stream, so that
//! a scan is one kernel launch that allocates and clears nothing.
//!
//! A look-back scan's tiles publish their status (a flag and a value) for later tiles to read,
//! and before a launch every status must read "not yet". Clearing them took a memset before
//! each scan: a second operation on the stream, and the buffer's allocation, about 2% of a scan
//! of 2^26 `f32` on an H200 (0.730x against 0.746x of a copy, the same kernel in a harness
//! timed with CUDA events, 2026-11-28). Instead each status carries the *tag* of the launch
//! that wrote it, and a status with another tag reads as "not yet". Each launch is given its
//! tag and its first ticket (the ticket counter in the buffer counts on across launches, one
//! ticket a block) as arguments, from the count kept here. So a buffer is cleared once, when
//! it is made, and again when the 30-bit tags wrap (once in 2^30 - 1 launches), so that no
//! status written that long ago passes for a new one.
//!
//! The count is right only if the launches run in the order they were counted, one at a time:
//! each is counted and queued under its stream's lock, and they run in the stream's order.
//! Launches that overlapped on one buffer could take each other's tickets and write status
//! past the buffer's end, so a buffer serves one stream object only, never another stream that
//! the driver gave the same handle after the first was destroyed with work still running (and
//! which [`Stream::order_manually`] would not order after it): buffers are kept by the stream's
//! ordering record, whose address stays taken while the buffer holds a weak reference to it,
//! and a buffer whose stream is gone is dropped (freed once its work is done). A stream that
//! is being captured into a graph (by another library: this crate's captures use private
//! streams) gets a fresh, cleared buffer of its own instead: the graph may run any number of
//! times, later, so a count taken now would not hold. (A capture begun by another thread between
//! that check and the launch would replay with a stale count: the kernel then drops every ticket
//! past its grid, so it never writes past the buffer, but such a replay's result is garbage, or
//! it waits forever for a tile no block took.)

use std::collections::HashMap;
use std::sync::{Arc, Weak};

use crate::driver::context::core::Context;
use crate::driver::context::ext::{Extension, Slot};
use crate::driver::memory::buffer::DeviceBuffer;
use crate::driver::memory::view::DeviceWrite;
use crate::driver::memory::{memset_d32, memset_d32_async};
use crate::driver::ordering::StreamInner;
use crate::driver::stream::Stream;
use crate::error::Result;
use crate::sync::{LockRank, Mutex};
use crate::tools::device_pool::PooledBuffer;

/// 32-bit words before the tiles' status: the ticket counter and one unused (so that the 64-bit
/// status words start 8-byte aligned).
pub(crate) const HEADER_WORDS: usize = 2;

/// Launches a buffer serves before the tags would repeat: tags are 1 to 2^30 - 1, shifted left
/// by two beside the flag in a 32-bit word, and never 0, the tag of no launch.
const TAGS: u32 = 0x3FFF_FFFF;

/// The smallest buffer made, in words: a scan of up to 2^20 `f32` (128 tiles) or so.
const MIN_WORDS: usize = 256;

/// One stream's buffer and the count its next launch continues.
struct Status {
    buffer: DeviceBuffer<u32>,
    /// The ticket the next launch's first block takes: the counter in the buffer, which every
    /// launch advances by its number of blocks.
    first_ticket: u32,
    /// Launches since the buffer was cleared (the next one's tag is this plus one).
    launches: u32,
}

/// One stream's status, made on its first scan. A panic under its lock leaves a whole buffer
/// and count (both change only after the launch was queued).
type StreamStatus = Arc<Mutex<Option<Status>>>;

/// The stream a status serves (none: the legacy default stream), and the status.
type Entry = (Option<Weak<StreamInner>>, StreamStatus);

/// The buffers of a context, by the address of their stream's ordering record (0: the legacy
/// default stream), with a weak reference to that record: it keeps the address from being
/// reused, and says when the stream is gone.
pub(crate) struct ScanStatus {
    by_stream: Mutex<HashMap<usize, Entry>>,
}

impl Default for ScanStatus {
    fn default() -> Self {
        ScanStatus {
            by_stream: Mutex::new(LockRank::ScanStatusByStream, HashMap::new()),
        }
    }
}

impl ScanStatus {
    /// The status of `stream`, made if missing. A new entry first drops those of streams that
    /// are gone.
    fn of(&self, stream: Option<&Stream>) -> StreamStatus {
        let key = stream.map_or(0, |s| Arc::as_ptr(s.inner()) as usize);
        let mut map = self.by_stream.lock();
        if !map.contains_key(&key) {
            map.retain(|_, (owner, _)| owner.as_ref().is_none_or(|w| w.strong_count() > 0));
        }
        let (_, status) = map.entry(key).or_insert_with(|| {
            (
                stream.map(|s| Arc::downgrade(s.inner())),
                Arc::new(Mutex::new(LockRank::ScanStatus, None)),
            )
        });
        Arc::clone(status)
    }
}

impl Extension for ScanStatus {
    const SLOT: Slot = Slot::ScanStatus;

    /// Out of memory: drops every buffer no scan is using (a scan holding one keeps it until
    /// its launch is queued); the next scan on each stream makes and clears a new one.
    fn reclaim(&self) {
        self.by_stream.lock().clear();
    }
}

/// What a launch is given: the status buffer, its first ticket and its tag.
pub(crate) struct Launch<'a> {
    pub(crate) status: &'a mut dyn StatusMemory,
    pub(crate) first_ticket: u32,
    pub(crate) tag: u32,
}

/// The status memory a launch writes: the stream's kept buffer or, while capturing, a pooled
/// one of its own.
pub(crate) trait StatusMemory: DeviceWrite<u32> {}
impl StatusMemory for DeviceBuffer<u32> {}
impl StatusMemory for PooledBuffer<u32> {}

/// Runs `launch` (which queues `blocks` blocks, one ticket each) with the status of `stream`
/// (`None`: the legacy default stream), at least `words` words long, held for `launch` alone.
/// A buffer that is missing or too short is replaced by a cleared one first (the old one is
/// freed once the work queued on it is done); the count moves on only when `launch` succeeds.
pub(crate) fn with_status(
    ctx: &Context,
    stream: Option<&Stream>,
    words: usize,
    blocks: u32,
    launch: impl FnOnce(Launch<'_>) -> Result<()>,
) -> Result<()> {
    if let Some(s) = stream.filter(|s| s.is_capturing().unwrap_or(true)) {
        // A graph's own buffer, cleared in the graph before its launch.
        let mut fresh = ctx.device_pool()?.alloc::<u32>(words)?;
        memset_d32_async(&mut fresh, 0, words, s)?;
        return launch(Launch {
            status: &mut fresh,
            first_ticket: 0,
            tag: 1,
        });
    }
    let state = ctx.inner.ext.get_or_try_init(|| Ok(ScanStatus::default()))?;
    let shared = state.of(stream);
    let mut held = shared.lock();
    let status = match &mut *held {
        Some(s) if s.buffer.len() >= words && s.launches < TAGS => s,
        slot => {
            // Room to grow: a run of scans of growing lengths clears a new buffer a few times.
            let len = words.max(MIN_WORDS).next_power_of_two();
            let len = slot.as_ref().map_or(len, |s| len.max(s.buffer.len()));
            let mut buffer = ctx.alloc::<u32>(len)?;
            match stream {
                Some(s) => memset_d32_async(&mut buffer, 0, len, s)?,
                None => memset_d32(&mut buffer, 0, len)?,
            }
            slot.insert(Status {
                buffer,
                first_ticket: 0,
                launches: 0,
            })
        }
    };
    launch(Launch {
        status: &mut status.buffer,
        first_ticket: status.first_ticket,
        tag: status.launches + 1,
    })?;
    status.first_ticket = status.first_ticket.wrapping_add(blocks);
    status.launches += 1;
    Ok(())
}

/// Sets the launch count of `stream`'s status (made if missing), so that a test can take the
/// tags to their wrap without 2^30 launches (`__testing` only). The buffer is replaced by a
/// cleared one under the status's lock: with its statuses kept, a tag the count gives again (a
/// count set back) could meet a status an earlier launch wrote with it, as the statuses a wrap
/// clears would (threads scanning on the same stream meanwhile are counted from the new count).
pub fn set_launch_count(ctx: &Context, stream: Option<&Stream>, count: u32) -> Result<()> {
    with_status(ctx, stream, MIN_WORDS, 0, |_| Ok(()))?;
    let state = ctx.inner.ext.get_or_try_init(|| Ok(ScanStatus::default()))?;
    let shared = state.of(stream);
    let mut held = shared.lock();
    if let Some(s) = &mut *held {
        let len = s.buffer.len();
        let mut buffer = ctx.alloc::<u32>(len)?;
        match stream {
            Some(st) => memset_d32_async(&mut buffer, 0, len, st)?,
            None => memset_d32(&mut buffer, 0, len)?,
        }
        *s = Status {
            buffer,
            first_ticket: 0,
            launches: count.min(TAGS),
        };
    }
    Ok(())
}
