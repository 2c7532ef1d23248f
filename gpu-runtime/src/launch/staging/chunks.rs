//! How a staged copy (staging.rs) is cut up and shared between threads, apart from the driver
//! calls it makes, so that it is tested on the CPU with any number of threads.
//!
//! Two sizes matter, and they pull apart. The copy engine pays about 2.5 us per copy call
//! (8 MiB host to device took 157 us in one call, 176 us in 1 MiB calls and 240 us in 256 KiB
//! calls on an H100 host), so DMA chunks should be large. But the engine starts only once the
//! first chunk is in pinned memory, and the last chunk is copied out only once it has landed,
//! so the chunks at the ends should be small. So a [`Plan`] cuts the bytes into chunks that
//! grow from small to large along an upload and shrink along a download, and cuts each chunk
//! into small pieces: the threads take pieces, so that even the first chunk is copied by all
//! of them at once.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use crate::error::{Error, Result};
use crate::launch::staging::copy_workers;
use crate::sync::{LockRank, Mutex};

/// The largest DMA chunk by default: at 2 MiB, the per-call cost is under 5% of the copy.
const DEFAULT_CHUNK: usize = 2 << 20;
/// …and at most this many chunks per direction (each download chunk needs an event), so very
/// large transfers take larger chunks.
const MAX_CHUNKS: usize = 64;
/// Chunks start at this fraction of the largest and double from there.
const FIRST_CHUNK_DIVISOR: usize = 8;
/// What one thread copies at a time, at most…
const PIECE: usize = 64 << 10;
/// …and at least, when a chunk is cut so that every thread has a piece of it (the first
/// chunk of an upload and the last of a download are waited on whole).
const MIN_PIECE: usize = 16 << 10;
/// Each extra host-copy thread must have at least this much to copy to pay for waking it.
const BYTES_PER_THREAD: usize = 256 << 10;
/// By default, at most this many threads copy at once: on a 16-core H100 host, 12 threads
/// made the 2^20-float axpy call 10-20 us faster than 8, and 15 no faster than 12.
const DEFAULT_THREADS: usize = 12;
const PAGE: usize = 4096;

static CHUNK_BYTES: AtomicUsize = AtomicUsize::new(DEFAULT_CHUNK);
static MAX_THREADS: AtomicUsize = AtomicUsize::new(DEFAULT_THREADS);

/// Sets the largest DMA chunk the staged copies use and the most threads that copy at once,
/// for every later convenience call in the process (benches compare settings with it); 0
/// restores a default. Only speed depends on them.
pub fn set_tuning(chunk_bytes: usize, threads: usize) {
    let chunk = if chunk_bytes == 0 {
        DEFAULT_CHUNK
    } else {
        chunk_bytes.next_multiple_of(PAGE)
    };
    let threads = if threads == 0 {
        DEFAULT_THREADS
    } else {
        threads.min(copy_workers::MAX_HELPERS + 1)
    };
    CHUNK_BYTES.store(chunk, Ordering::Relaxed);
    MAX_THREADS.store(threads, Ordering::Relaxed);
}

/// How many threads a phase moving `total_bytes` uses.
fn threads_for(total_bytes: usize) -> usize {
    (total_bytes / BYTES_PER_THREAD).clamp(1, MAX_THREADS.load(Ordering::Relaxed).max(1))
}

/// One argument's transfer: host memory, its pinned staging block and its device buffer.
#[derive(Clone, Copy)]
pub(crate) struct Job {
    pub(crate) host: *mut u8,
    pub(crate) pinned: *mut u8,
    pub(crate) device: u64,
    pub(crate) bytes: usize,
}

// SAFETY: the pointers address memory borrowed by the Staging for its whole life; jobs are
// only shared with copy_workers::run, whose helpers have all left before it returns.
unsafe impl Send for Job {}
// SAFETY: as above.
unsafe impl Sync for Job {}

/// A byte range of one job.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Span {
    pub(crate) job: usize,
    pub(crate) off: usize,
    pub(crate) len: usize,
}

/// Which way a phase moves bytes; it decides the order of chunk sizes.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Direction {
    /// Host to device: small chunks first, so that the copy engine starts early.
    Upload,
    /// Device to host: small chunks last, so that little is left to copy out at the end.
    Download,
}

/// The jobs' bytes cut into DMA chunks (in order; none spans two jobs) and each chunk into
/// pieces for the copying threads (in chunk order).
pub(crate) struct Plan<'j> {
    jobs: &'j [Job],
    direction: Direction,
    /// The threads that copy (see [`threads_for`]).
    pub(crate) threads: usize,
    chunks: Vec<Span>,
    /// Each piece and the chunk it belongs to.
    pieces: Vec<(usize, Span)>,
}

impl<'j> Plan<'j> {
    pub(crate) fn new(jobs: &'j [Job], direction: Direction) -> Self {
        let total_bytes: usize = jobs.iter().map(|j| j.bytes).sum();
        let largest = CHUNK_BYTES
            .load(Ordering::Relaxed)
            .max(total_bytes.div_ceil(MAX_CHUNKS))
            .next_multiple_of(PAGE);
        let mut sizes = Vec::new();
        let (mut size, mut covered) = ((largest / FIRST_CHUNK_DIVISOR).max(PAGE), 0);
        while covered < total_bytes {
            let take = size.min(total_bytes - covered);
            sizes.push(take);
            covered += take;
            size = (size * 2).min(largest);
        }
        if direction == Direction::Download {
            sizes.reverse();
        }
        // Lay the sizes over the jobs in order, cutting a chunk where a job ends.
        let mut chunks = Vec::with_capacity(sizes.len() + jobs.len());
        let (mut job, mut off) = (0, 0);
        for mut size in sizes {
            while size > 0 {
                while jobs[job].bytes == off {
                    (job, off) = (job + 1, 0);
                }
                let len = size.min(jobs[job].bytes - off);
                chunks.push(Span { job, off, len });
                (size, off) = (size - len, off + len);
            }
        }
        let threads = threads_for(total_bytes);
        // A chunk has at most len / PIECE + threads + 1 pieces (a piece is PIECE, or at least
        // a thread's share of the chunk).
        let mut pieces = Vec::with_capacity(total_bytes / PIECE + chunks.len() * (threads + 1));
        for (c, chunk) in chunks.iter().enumerate() {
            let piece = (chunk.len / threads)
                .next_multiple_of(PAGE)
                .clamp(MIN_PIECE, PIECE);
            let mut at = 0;
            while at < chunk.len {
                let len = piece.min(chunk.len - at);
                pieces.push((
                    c,
                    Span {
                        off: chunk.off + at,
                        len,
                        ..*chunk
                    },
                ));
                at += len;
            }
        }
        Plan {
            jobs,
            direction,
            threads,
            chunks,
            pieces,
        }
    }

    pub(crate) fn chunk_count(&self) -> usize {
        self.chunks.len()
    }

    /// Chunk `c`'s job and range in it.
    pub(crate) fn chunk(&self, c: usize) -> (&Job, Span) {
        let span = self.chunks[c];
        (&self.jobs[span.job], span)
    }

    /// Piece `p`'s job and range in it.
    pub(crate) fn piece(&self, p: usize) -> (&Job, Span) {
        let span = self.pieces[p].1;
        (&self.jobs[span.job], span)
    }

    /// Where the copying threads stand, at the start of the phase.
    pub(crate) fn progress(&self) -> Progress {
        let chunk_of = self.pieces.iter().map(|&(c, _)| c).collect();
        Progress::new(chunk_of, self.chunks.len(), self.direction)
    }
}

/// Where one phase stands: per chunk, whether it is ready (copied into pinned memory, or
/// arrived there), the counter that hands each piece to one thread, and a stop for errors.
pub(crate) struct Progress {
    /// Per chunk: pieces still to copy in (upload), or 1 until it has arrived (download).
    pending: Vec<AtomicUsize>,
    /// Per piece, in order: its chunk.
    chunk_of: Vec<usize>,
    next: AtomicUsize,
    stop: AtomicBool,
    /// Copiers that have joined the phase: while there are any, the driver thread leaves the
    /// copying to them, so that it issues each chunk (or sees it arrive) the moment it can.
    copiers: AtomicUsize,
}

impl Progress {
    /// `chunk_of` gives each piece's chunk, in chunk order. A download's chunk 0 starts out
    /// arrived: the caller waits for it before the threads start.
    fn new(chunk_of: Vec<usize>, chunks: usize, direction: Direction) -> Progress {
        let pending: Vec<AtomicUsize> = match direction {
            Direction::Upload => {
                let mut n = vec![0; chunks];
                for &c in &chunk_of {
                    n[c] += 1;
                }
                n.into_iter().map(AtomicUsize::new).collect()
            }
            Direction::Download => (0..chunks)
                .map(|c| AtomicUsize::new(usize::from(c > 0)))
                .collect(),
        };
        Progress {
            pending,
            chunk_of,
            next: AtomicUsize::new(0),
            stop: AtomicBool::new(false),
            copiers: AtomicUsize::new(0),
        }
    }

    /// A copier joins the phase.
    fn copier_joined(&self) {
        self.copiers.fetch_add(1, Ordering::Relaxed);
    }

    /// Whether the driver thread should copy while it waits: only while it is alone. Every
    /// piece claimed is copied by its claimer, so a driver that stops copying still sees
    /// every chunk become ready.
    fn driver_copies(&self) -> bool {
        self.copiers.load(Ordering::Relaxed) == 0
    }

    /// Whether chunk `c` is ready; Acquire, so that whoever sees it sees the chunk's bytes.
    fn is_ready(&self, c: usize) -> bool {
        self.pending[c].load(Ordering::Acquire) == 0
    }

    /// A piece of an upload was copied in; Release, for `is_ready`.
    fn piece_copied(&self, p: usize) {
        self.pending[self.chunk_of[p]].fetch_sub(1, Ordering::Release);
    }

    /// A download's chunk `c` has arrived in pinned memory.
    fn arrived(&self, c: usize) {
        self.pending[c].store(0, Ordering::Release);
    }

    /// The next piece, claimed for this thread alone; `None` when all are claimed or the phase
    /// stopped.
    fn claim(&self) -> Option<usize> {
        if self.stop.load(Ordering::Acquire) {
            return None;
        }
        let p = self.next.fetch_add(1, Ordering::Relaxed);
        (p < self.chunk_of.len()).then_some(p)
    }

    /// The next piece if its chunk is ready (see `claim`).
    fn claim_ready(&self) -> Option<usize> {
        let p = self.next.load(Ordering::Relaxed);
        if p >= self.chunk_of.len() || !self.is_ready(self.chunk_of[p]) || self.stop.load(Ordering::Acquire) {
            return None;
        }
        self.next
            .compare_exchange(p, p + 1, Ordering::Relaxed, Ordering::Relaxed)
            .is_ok()
            .then_some(p)
    }

    /// Waits until chunk `c` is ready: true, or false when the phase stopped first.
    fn wait_ready(&self, c: usize) -> bool {
        let mut backoff = Backoff(0);
        while !self.is_ready(c) {
            if self.stop.load(Ordering::Acquire) {
                return false;
            }
            backoff.snooze();
        }
        true
    }
}

/// What a thread does in one phase of a staged copy.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Role {
    /// Makes the phase's driver calls, in chunk order, and copies when it has nothing to issue:
    /// alone, it finishes the phase.
    Driver,
    /// Copies pieces it claims.
    Copier,
}

/// One thread's part in the upload phase. Copiers copy the pieces they claim into pinned
/// memory. The driver thread issues each chunk's transfer, in order, once all its pieces are
/// copied, and copies pieces itself while it waits as long as no copier has joined: alone,
/// it does everything.
pub(crate) fn upload_role(
    role: Role,
    progress: &Progress,
    chunks: usize,
    copy_in: &dyn Fn(usize),
    issue: &dyn Fn(usize) -> Result<()>,
) -> Result<()> {
    let copy = |p: usize| {
        copy_in(p);
        progress.piece_copied(p);
    };
    if role == Role::Copier {
        progress.copier_joined();
        while let Some(p) = progress.claim() {
            copy(p);
        }
        return Ok(());
    }
    for c in 0..chunks {
        let mut backoff = Backoff(0);
        while !progress.is_ready(c) {
            match progress.driver_copies().then(|| progress.claim()).flatten() {
                Some(p) => copy(p),
                None => backoff.snooze(),
            }
        }
        issue(c)?;
    }
    Ok(())
}

/// One thread's part in the download phase, once chunk 0 has arrived. The driver thread marks
/// the other chunks as `arrived_now` says they have, in order, copying pieces of those that
/// have while it waits if no copier has joined, and what is left at the end: alone, it does
/// everything. Copiers claim pieces, wait for their chunk, and copy them to the host.
pub(crate) fn download_role(
    role: Role,
    progress: &Progress,
    chunks: usize,
    copy_out: &dyn Fn(usize),
    arrived_now: &dyn Fn(usize) -> Result<bool>,
) -> Result<()> {
    if role == Role::Copier {
        progress.copier_joined();
        while let Some(p) = progress.claim() {
            if !progress.wait_ready(progress.chunk_of[p]) {
                break;
            }
            copy_out(p);
        }
        return Ok(());
    }
    for c in 1..chunks {
        let mut backoff = Backoff(0);
        while !arrived_now(c)? {
            match progress.driver_copies().then(|| progress.claim_ready()).flatten() {
                Some(p) => copy_out(p),
                None => backoff.snooze(),
            }
        }
        progress.arrived(c);
    }
    while let Some(p) = progress.claim() {
        copy_out(p);
    }
    Ok(())
}

/// Runs `work` on up to `threads` threads, this one included: one as [`Role::Driver`], the
/// rest as copiers. Returns the driver's error; then `progress` is stopped, so that copiers
/// waiting for chunks leave. Every thread has left `work` when this returns (copy_workers::run
/// waits for them).
pub(crate) fn run_roles<F>(threads: usize, progress: &Progress, work: F) -> Result<()>
where
    F: Fn(Role) -> Result<()> + Sync,
{
    let driver_taken = AtomicBool::new(false);
    let failed: Mutex<Option<Error>> = Mutex::new(LockRank::StagingFailed, None);
    copy_workers::run(threads.saturating_sub(1), &|| {
        if driver_taken.swap(true, Ordering::Relaxed) {
            // Copiers make no driver calls and cannot fail.
            let _ = work(Role::Copier);
            return;
        }
        if let Err(e) = work(Role::Driver) {
            // What is queued already is waited for by Staging's drop.
            progress.stop.store(true, Ordering::Release);
            failed.lock().get_or_insert(e);
        }
    });
    failed.into_inner().map_or(Ok(()), Err)
}

/// Busy-waits politely: spins a while (a chunk is microseconds away), then yields the core,
/// which a copying thread on a machine with few cores may need.
struct Backoff(u32);

impl Backoff {
    fn snooze(&mut self) {
        self.0 = self.0.saturating_add(1);
        if self.0 < 1 << 14 {
            std::hint::spin_loop();
        } else {
            std::thread::yield_now();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(bytes: usize) -> Job {
        Job {
            host: std::ptr::null_mut(),
            pinned: std::ptr::null_mut(),
            device: 0,
            bytes,
        }
    }

    /// Repetitions of each phase test: Miri (CI runs these under it, with the copy workers)
    /// interprets every instruction, and its scheduler varies the interleavings itself.
    const ROUNDS: usize = if cfg!(miri) { 1 } else { 10 };

    /// A short, uneven pause, so that threads interleave differently from piece to piece.
    fn jitter(i: usize) {
        let spins = (i * 7919) % if cfg!(miri) { 30 } else { 3000 };
        for _ in 0..spins {
            std::hint::spin_loop();
        }
    }

    /// A progress of `chunks` chunks of 1 to 4 pieces each.
    fn progress_of(chunks: usize, direction: Direction) -> Progress {
        let chunk_of: Vec<usize> = (0..chunks)
            .flat_map(|c| std::iter::repeat_n(c, 1 + c % 4))
            .collect();
        Progress::new(chunk_of, chunks, direction)
    }

    #[test]
    fn the_upload_phase_issues_every_chunk_once_in_order_after_its_pieces() {
        // The pool to itself: the copy workers' tests check that helpers join their tasks.
        let _pool = copy_workers::test_serial();
        for threads in [1, 2, 4, 8] {
            for n in [1, 2, 7, 64] {
                for _ in 0..ROUNDS {
                    let progress = progress_of(n, Direction::Upload);
                    let pieces = progress.chunk_of.len();
                    let copies: Vec<AtomicUsize> = (0..pieces).map(|_| AtomicUsize::new(0)).collect();
                    let issued = std::sync::Mutex::new(Vec::new());
                    let copy_in = |p: usize| {
                        jitter(p);
                        copies[p].fetch_add(1, Ordering::Relaxed);
                    };
                    let issue = |c: usize| {
                        for (p, &pc) in progress.chunk_of.iter().enumerate() {
                            if pc == c {
                                assert_eq!(copies[p].load(Ordering::Relaxed), 1, "issued before its copy");
                            }
                        }
                        issued.lock().unwrap().push(c);
                        Ok(())
                    };
                    run_roles(threads, &progress, |role| {
                        upload_role(role, &progress, n, &copy_in, &issue)
                    })
                    .unwrap();
                    assert_eq!(*issued.lock().unwrap(), (0..n).collect::<Vec<_>>());
                    assert!(copies.iter().all(|c| c.load(Ordering::Relaxed) == 1));
                }
            }
        }
    }

    #[test]
    fn the_download_phase_copies_every_piece_once_after_its_chunk_arrived() {
        // The pool to itself: the copy workers' tests check that helpers join their tasks.
        let _pool = copy_workers::test_serial();
        for threads in [1, 2, 4, 8] {
            for n in [1, 2, 7, 64] {
                for _ in 0..ROUNDS {
                    let progress = progress_of(n, Direction::Download);
                    let pieces = progress.chunk_of.len();
                    // What the DMA engine does: chunks land in order, a little apart.
                    let landed: Vec<AtomicBool> = (0..n).map(|i| AtomicBool::new(i == 0)).collect();
                    let copies: Vec<AtomicUsize> = (0..pieces).map(|_| AtomicUsize::new(0)).collect();
                    std::thread::scope(|s| {
                        s.spawn(|| {
                            for (i, l) in landed.iter().enumerate().skip(1) {
                                jitter(i);
                                l.store(true, Ordering::Release);
                            }
                        });
                        let copy_out = |p: usize| {
                            let c = progress.chunk_of[p];
                            assert!(
                                landed[c].load(Ordering::Acquire),
                                "a piece of chunk {c} copied before it landed"
                            );
                            copies[p].fetch_add(1, Ordering::Relaxed);
                        };
                        let arrived_now = |c: usize| Ok(landed[c].load(Ordering::Acquire));
                        run_roles(threads, &progress, |role| {
                            download_role(role, &progress, n, &copy_out, &arrived_now)
                        })
                        .unwrap();
                    });
                    assert!(copies.iter().all(|c| c.load(Ordering::Relaxed) == 1));
                }
            }
        }
    }

    #[test]
    fn a_driver_error_ends_the_phase_and_the_copiers_waiting_in_it() {
        // The pool to itself: the copy workers' tests check that helpers join their tasks.
        let _pool = copy_workers::test_serial();
        for threads in [1, 2, 4, 8] {
            let n = 16;
            let progress = progress_of(n, Direction::Download);
            let copies: Vec<AtomicUsize> = (0..progress.chunk_of.len())
                .map(|_| AtomicUsize::new(0))
                .collect();
            let copy_out = |p: usize| {
                copies[p].fetch_add(1, Ordering::Relaxed);
            };
            // Chunks up to 4 arrive; then the kernel turns out to have failed.
            let arrived_now = |c: usize| {
                if c < 5 {
                    Ok(true)
                } else {
                    // Any error stands for the failed kernel; its kind does not matter here.
                    Err(Error::KernelNotFound {
                        name: "a failed kernel".into(),
                    })
                }
            };
            let r = run_roles(threads, &progress, |role| {
                download_role(role, &progress, n, &copy_out, &arrived_now)
            });
            assert!(r.is_err());
            for (p, &c) in progress.chunk_of.iter().enumerate() {
                if c >= 5 {
                    assert_eq!(
                        copies[p].load(Ordering::Relaxed),
                        0,
                        "copied a chunk that never arrived"
                    );
                }
            }

            let progress = progress_of(n, Direction::Upload);
            let issue = |c: usize| {
                if c == 3 {
                    arrived_now(99).map(|_| ())
                } else {
                    Ok(())
                }
            };
            let r = run_roles(threads, &progress, |role| {
                upload_role(role, &progress, n, &|_| {}, &issue)
            });
            assert!(r.is_err());
        }
    }

    #[test]
    fn chunks_and_pieces_cover_every_byte_once_in_order() {
        for sizes in [
            vec![1],
            vec![3 << 20, 5, (1 << 20) + 7],
            vec![300 << 20],
            vec![4 << 20, 4 << 20],
            vec![0, 4096, 0],
        ] {
            let jobs: Vec<Job> = sizes.iter().map(|&b| job(b)).collect();
            for direction in [Direction::Upload, Direction::Download] {
                let plan = Plan::new(&jobs, direction);
                assert!(plan.chunk_count() <= 2 * MAX_CHUNKS + jobs.len());
                let mut covered = vec![0usize; jobs.len()];
                for c in 0..plan.chunk_count() {
                    let (_, span) = plan.chunk(c);
                    assert_eq!(span.off, covered[span.job], "chunks come in order, without gaps");
                    assert!(span.len > 0);
                    covered[span.job] += span.len;
                }
                assert_eq!(covered, sizes);
                // Pieces tile their chunks in order.
                let mut at = 0;
                for (p, &(c, span)) in plan.pieces.iter().enumerate() {
                    let (_, chunk) = plan.chunk(c);
                    if p == 0 || plan.pieces[p - 1].0 != c {
                        at = chunk.off;
                    }
                    assert_eq!((span.job, span.off), (chunk.job, at));
                    assert!(span.len > 0 && span.len <= PIECE);
                    assert!(span.len >= MIN_PIECE.min(chunk.len - (at - chunk.off)));
                    at += span.len;
                    assert!(at <= chunk.off + chunk.len);
                    assert_eq!(plan.piece(p).1, span);
                }
            }
        }
    }

    #[test]
    fn uploads_start_small_and_downloads_end_small() {
        let jobs = [job(4 << 20), job(4 << 20)];
        let largest = CHUNK_BYTES.load(Ordering::Relaxed);
        let up = Plan::new(&jobs, Direction::Upload);
        let down = Plan::new(&jobs, Direction::Download);
        let first_up = up.chunk(0).1.len;
        let last_down = down.chunk(down.chunk_count() - 1).1.len;
        assert!(first_up <= largest / 4, "first upload chunk {first_up}");
        assert!(last_down <= largest / 4, "last download chunk {last_down}");
        assert!(up.chunk_count() <= 12 && down.chunk_count() <= 12);
    }
}
