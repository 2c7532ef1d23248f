//! The model check of the stream-ordering protocol, run with `loom` over every interleaving of
//! the threads (up to a preemption bound):
//!
//! ```sh
//! RUSTFLAGS="--cfg loom" cargo test -p gpu-runtime --lib --release driver::ordering::model
//! ```
//!
//! The GPU is modelled, nothing else: a stream is a queue ([`Lane`]) of work items and waits;
//! an event is a position in a queue; `cuEventRecord` + `cuStreamWaitEvent` (what
//! `StreamInner::wait_for` does) appends to the waiting queue a wait for the other queue's
//! length at record time, and `cuStreamSynchronize` marks a queue's current length as done for
//! the host. The records (`StreamUses`), the pool core and `UseSet::streams` (what a free
//! waits for) are the real code, built on `loom`'s mutex and atomics. Each thread does what a
//! launch does: it records its use through the record, then queues its work item, with a
//! scheduling point between the two (the queue's lock), the window a real thread can be
//! preempted in.
//!
//! After the threads are joined, each scenario checks happens-before on the queues: every read
//! after the write it follows, every write after every use it follows, a free after every use,
//! the host after what it waited for.

use std::sync::Arc;

use loom::sync::Mutex;

use super::lane::{wait, Entry, Lane};
use super::streams::StreamInner;
use super::uses::UseSet;

/// A queued work item: lane and position.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Work {
    lane: usize,
    pos: usize,
}

/// A point in every queue: the first `upto[lane]` entries of each lane (where the host or a
/// free waits).
#[derive(Clone, Debug, Default)]
pub(crate) struct Point(Vec<(usize, usize)>);

/// All the lanes, and what the host has waited for.
#[derive(Default)]
pub(crate) struct Gpu {
    lanes: std::sync::Mutex<Vec<Arc<Lane>>>,
    host: Arc<Mutex<Vec<(usize, usize)>>>,
}

impl Gpu {
    #[allow(clippy::new_ret_no_self)]
    pub(crate) fn new() -> Arc<Gpu> {
        Arc::new(Gpu::default())
    }

    /// A new stream with a queue of its own; `manual` as `Stream::order_manually`.
    pub(crate) fn stream(self: &Arc<Gpu>, manual: bool) -> Arc<StreamInner> {
        self.make_stream(manual, false)
    }

    /// A stream handed to another library (cudarc), which may capture it.
    pub(crate) fn exposed_stream(self: &Arc<Gpu>) -> Arc<StreamInner> {
        self.make_stream(false, true)
    }

    /// The same stream as the code before the capture checks saw it: capturable all the
    /// same, but not known to be (its uses check nothing). For the tests that show the model
    /// finds the hole those checks close.
    pub(crate) fn unchecked_exposed_stream(self: &Arc<Gpu>) -> Arc<StreamInner> {
        self.make_stream(false, false)
    }

    /// Where an event recorded now on `s` stands (cudarc's read or write event of a slice).
    pub(crate) fn event_point(&self, s: &StreamInner) -> Point {
        let lane = s.lane.as_ref().expect("a model stream");
        let upto = lane.queue.lock().unwrap().len();
        Point(vec![(lane.id, upto)])
    }

    fn make_stream(self: &Arc<Gpu>, manual: bool, capturable: bool) -> Arc<StreamInner> {
        let mut lanes = self.lanes.lock().unwrap();
        let lane = Arc::new(Lane {
            id: lanes.len(),
            host: self.host.clone(),
            queue: Mutex::new(Vec::new()),
            capturable,
            capture: Mutex::new(Default::default()),
        });
        lanes.push(lane.clone());
        Arc::new(StreamInner {
            raw: std::ptr::null_mut(),
            // Neither blocking nor legacy: the driver orders no two of them.
            ctx_raw: std::ptr::null_mut(),
            ctx: std::sync::Weak::<()>::new(),
            fence: std::sync::atomic::AtomicPtr::new(std::ptr::null_mut()),
            blocking: false,
            legacy: false,
            manual: std::sync::atomic::AtomicBool::new(manual),
            lane: Some(lane),
            cudarc: std::sync::OnceLock::new(),
            borrowed: false,
            exposed: std::sync::atomic::AtomicBool::new(false),
        })
    }

    /// Another library begins capturing `s` (cudarc's `begin_capture`).
    pub(crate) fn begin_capture(&self, s: &StreamInner) {
        let lane = s.lane.as_ref().expect("a model stream");
        let mut c = lane.capture.lock().unwrap();
        c.tick += 1;
        c.now = Some(super::lane::CaptureSeq {
            valid: true,
            ours: 0,
            began: c.tick,
            ended: 0,
        });
    }

    /// It ends the capture: a valid one is a graph, to be launched whenever that library likes.
    pub(crate) fn end_capture(&self, s: &StreamInner) {
        let lane = s.lane.as_ref().expect("a model stream");
        let mut c = lane.capture.lock().unwrap();
        c.tick += 1;
        let t = c.tick;
        if let Some(mut seq) = c.now.take() {
            seq.ended = t;
            c.ended.push(seq);
        }
    }

    /// The graphs other libraries made of `s` holding work of ours (which runs at each launch
    /// of such a graph, long after the memory it used may have been freed), with the times of
    /// our capture checks on `s`.
    pub(crate) fn ours_in_foreign_graphs(
        &self,
        s: &StreamInner,
    ) -> (Vec<super::lane::CaptureSeq>, Vec<usize>) {
        let lane = s.lane.as_ref().expect("a model stream");
        let c = lane.capture.lock().unwrap();
        let graphs = c
            .ended
            .iter()
            .filter(|g| g.valid && g.ours > 0)
            .cloned()
            .collect();
        (graphs, c.checks.clone())
    }

    /// Queues a work item of ours on `s` as a launch does after recording its uses: `None`
    /// when it went into another library's capture instead of the queue. Then the check after
    /// queueing (`StreamInner::refuse_foreign_capture`) runs, as in the real launch path.
    pub(crate) fn queue_ours(&self, s: &StreamInner) -> (Option<Work>, crate::error::Result<()>) {
        let lane = s.lane.as_ref().expect("a model stream");
        let queued = {
            let mut c = lane.capture.lock().unwrap();
            match c.now.as_mut() {
                Some(seq) => {
                    seq.ours += 1;
                    None
                }
                None => {
                    drop(c);
                    Some(self.launch(s))
                }
            }
        };
        (queued, s.refuse_foreign_capture())
    }

    /// Queues a work item on `s` (after its use was recorded).
    pub(crate) fn launch(&self, s: &StreamInner) -> Work {
        let lane = s.lane.as_ref().expect("a model stream");
        let mut q = lane.queue.lock().unwrap();
        q.push(Entry::Work);
        Work {
            lane: lane.id,
            pos: q.len() - 1,
        }
    }

    /// A wait the user places by hand (for manually ordered streams): `me` waits for what
    /// `other` has queued so far.
    pub(crate) fn wait_by_hand(&self, me: &StreamInner, other: &StreamInner) {
        wait(me.lane.as_ref().unwrap(), other.lane.as_ref().unwrap());
    }

    /// Where a free of memory with these uses happens: after an event recorded now on each
    /// stream the set names (what `Graveyard::release_after` does).
    pub(crate) fn free_point(&self, uses: &UseSet) -> Point {
        Point(
            uses.streams()
                .map(|s| {
                    let lane = s.lane.as_ref().unwrap();
                    (lane.id, lane.queue.lock().unwrap().len())
                })
                .collect(),
        )
    }

    /// What the host has waited for so far.
    pub(crate) fn host_point(&self) -> Point {
        Point(self.host.lock().unwrap().clone())
    }

    /// For each lane, how many of its first entries have finished before entry `upto` of
    /// `lane` starts (the transitive closure of queue order and waits).
    fn done_before(&self, lane: usize, upto: usize, done: &mut Vec<usize>) {
        let lanes = self.lanes.lock().unwrap().clone();
        if done.len() < lanes.len() {
            done.resize(lanes.len(), 0);
        }
        let mut stack = vec![(lane, upto)];
        while let Some((l, u)) = stack.pop() {
            if done[l] >= u {
                continue;
            }
            let from = done[l];
            done[l] = u;
            let q = lanes[l].queue.lock().unwrap().clone();
            for e in &q[from..u] {
                if let Entry::Wait { lane, upto } = *e {
                    stack.push((lane, upto));
                }
            }
        }
    }

    /// True when `a` has finished before `b` starts.
    pub(crate) fn before(&self, a: Work, b: Work) -> bool {
        let mut done = Vec::new();
        self.done_before(b.lane, b.pos, &mut done);
        done[a.lane] > a.pos
    }

    /// True when `a` has finished once everything `p` names has.
    pub(crate) fn covers(&self, p: &Point, a: Work) -> bool {
        let mut done = Vec::new();
        for &(lane, upto) in &p.0 {
            self.done_before(lane, upto, &mut done);
        }
        done.get(a.lane).is_some_and(|&d| d > a.pos)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use loom::thread;

    use super::*;
    use crate::driver::ordering::{ModuleUses, ModuleVars, StreamUses};

    /// Runs `f` under loom: every interleaving with at most `LOOM_MAX_PREEMPTIONS` (default 3)
    /// preemptions.
    fn check(f: impl Fn() + Sync + Send + 'static) {
        let mut b = loom::model::Builder::new();
        if b.preemption_bound.is_none() {
            b.preemption_bound = Some(3);
        }
        b.check(f);
    }

    /// A thread of another library (cudarc's `begin_capture`/`end_capture`) capturing `s`.
    fn foreign_capture(gpu: &Arc<Gpu>, s: &Arc<StreamInner>) -> thread::JoinHandle<()> {
        let (gpu, s) = (gpu.clone(), s.clone());
        thread::spawn(move || {
            gpu.begin_capture(&s);
            gpu.end_capture(&s);
        })
    }

    /// A read: record, then queue (what a launch with a `&` argument does).
    fn read(gpu: &Gpu, uses: &StreamUses, s: &Arc<StreamInner>) -> Work {
        uses.read_on(s).unwrap();
        gpu.launch(s)
    }

    /// An exclusive write (a `&mut` argument).
    fn write(gpu: &Gpu, uses: &StreamUses, s: &Arc<StreamInner>) -> Work {
        uses.write_on(s).unwrap();
        gpu.launch(s)
    }

    /// Readers on `streams`, each in a thread of its own but the last, on the calling thread,
    /// all at once, sharing `uses` through `&` as scoped threads would.
    fn concurrent_reads(gpu: &Arc<Gpu>, uses: &Arc<StreamUses>, streams: &[Arc<StreamInner>]) -> Vec<Work> {
        let (last, rest) = streams.split_last().unwrap();
        let handles = spawn_reads(gpu, uses, rest);
        let mut works = vec![read(gpu, uses, last)];
        works.extend(handles.into_iter().map(|h| h.join().unwrap()));
        works
    }

    /// A reader on each of `streams`, each in a thread of its own.
    fn spawn_reads(
        gpu: &Arc<Gpu>,
        uses: &Arc<StreamUses>,
        streams: &[Arc<StreamInner>],
    ) -> Vec<thread::JoinHandle<Work>> {
        streams
            .iter()
            .map(|s| {
                let (gpu, uses, s) = (gpu.clone(), uses.clone(), s.clone());
                thread::spawn(move || read(&gpu, &uses, &s))
            })
            .collect()
    }

    /// A record with one write on a stream of its own, and `n` reader streams.
    fn setup(n: usize, same: bool) -> (Arc<Gpu>, Arc<StreamUses>, Work, Vec<Arc<StreamInner>>) {
        let gpu = Gpu::new();
        let uses = Arc::new(StreamUses::new());
        let w0 = write(&gpu, &uses, &gpu.stream(false));
        let mut readers: Vec<_> = (0..n).map(|_| gpu.stream(false)).collect();
        if same {
            // Two threads on one stream: the same-stream fast path is in play.
            readers[1] = readers[0].clone();
        }
        (gpu, uses, w0, readers)
    }

    /// Four concurrent readers (more than the record once held), then an exclusive write on
    /// another stream, then the memory freed: every read after the first write, the second
    /// write after every read, the free after all of it.
    #[test]
    fn more_readers_than_any_cap_then_a_write_then_a_free() {
        check(|| {
            let (gpu, uses, w0, readers) = setup(4, false);
            let reads = concurrent_reads(&gpu, &uses, &readers);
            let w1 = write(&gpu, &uses, &gpu.stream(false));
            for &r in &reads {
                assert!(gpu.before(w0, r), "a read ran before the write it follows");
                assert!(
                    gpu.before(r, w1),
                    "the write ran before a read it follows (a lost reader)"
                );
            }
            let mut uses = Arc::try_unwrap(uses).unwrap();
            let free = gpu.free_point(&uses.take());
            for w in reads.iter().chain([&w0, &w1]) {
                assert!(gpu.covers(&free, *w), "freed while {w:?} may run");
            }
        });
    }

    /// Readers two of which share a stream (the fast path), then the memory dropped and
    /// freed: the free waits for every reader.
    #[test]
    fn readers_sharing_a_stream_then_a_drop() {
        check(|| {
            let (gpu, uses, w0, readers) = setup(4, true);
            let reads = concurrent_reads(&gpu, &uses, &readers);
            let mut uses = Arc::try_unwrap(uses).unwrap();
            let free = gpu.free_point(&uses.take());
            for w in reads.iter().chain([&w0]) {
                assert!(gpu.covers(&free, *w), "freed while {w:?} may run");
            }
        });
    }

    /// Concurrent readers, then the block returned to a pool (the real pool core, whose
    /// allocator is the model) and handed out again: the next owner's write waits for every
    /// reader of the previous one, and the pool's final free for everyone.
    #[test]
    fn a_pool_hands_the_block_out_after_concurrent_readers() {
        use crate::driver::memory::pool_core::{PoolCore, RawAllocator};
        struct ModelAllocator(Arc<Gpu>, std::sync::Mutex<Vec<Point>>);
        impl RawAllocator for ModelAllocator {
            fn allocate(&self, _bytes: usize) -> crate::error::Result<u64> {
                Ok(0x1000)
            }
            unsafe fn free_after(&self, _addr: u64, _bytes: usize, uses: UseSet) {
                let p = self.0.free_point(&uses);
                self.1.lock().unwrap().push(p);
            }
        }
        check(|| {
            let gpu = Gpu::new();
            let pool = PoolCore::new(ModelAllocator(gpu.clone(), Default::default()));
            let (block, uses) = pool.allocate(256, "model").unwrap();
            let uses: Arc<StreamUses> = Arc::from(uses);
            let w0 = write(&gpu, &uses, &gpu.stream(false));
            let readers: Vec<_> = (0..4).map(|_| gpu.stream(false)).collect();
            let reads = concurrent_reads(&gpu, &uses, &readers);
            let uses = Box::new(Arc::try_unwrap(uses).unwrap());
            // SAFETY: the block is returned once, with its record.
            unsafe { pool.release(block, uses) };
            let (block, uses) = pool.allocate(256, "model").unwrap();
            let w1 = write(&gpu, &uses, &gpu.stream(false));
            for &r in &reads {
                assert!(gpu.before(r, w1), "the next owner wrote before a reader finished");
            }
            // SAFETY: as above.
            unsafe { pool.release(block, uses) };
            pool.free_held();
            let frees = pool.allocator.1.lock().unwrap().clone();
            assert_eq!(frees.len(), 1);
            for w in reads.iter().chain([&w0, &w1]) {
                assert!(gpu.covers(&frees[0], *w), "freed while {w:?} may run");
            }
        });
    }

    /// The host reads while GPU readers run on other threads, then writes once they are
    /// joined: the host read waits for the write, the host write for every use.
    #[test]
    fn host_reads_and_writes_beside_gpu_readers() {
        check(|| {
            let (gpu, uses, w0, readers) = setup(3, false);
            let (last, rest) = readers.split_last().unwrap();
            let handles = spawn_reads(&gpu, &uses, rest);
            uses.host_read().unwrap();
            assert!(
                gpu.covers(&gpu.host_point(), w0),
                "the host read before the GPU write"
            );
            let mut reads = vec![read(&gpu, &uses, last)];
            reads.extend(handles.into_iter().map(|h| h.join().unwrap()));
            uses.host_write().unwrap();
            let host = gpu.host_point();
            for w in reads.iter().chain([&w0]) {
                assert!(gpu.covers(&host, *w), "the host wrote while {w:?} may run");
            }
        });
    }

    /// A manually ordered stream is neither waited for nor waits; the user orders it by hand,
    /// and the record still orders the others.
    #[test]
    fn manual_streams_are_ordered_by_hand_and_the_rest_by_the_record() {
        check(|| {
            let gpu = Gpu::new();
            let uses = Arc::new(StreamUses::new());
            let s0 = gpu.stream(false);
            let w0 = write(&gpu, &uses, &s0);
            let readers = vec![gpu.stream(false), gpu.stream(true), gpu.stream(false)];
            // The manual reader orders itself after the write by hand.
            gpu.wait_by_hand(&readers[1], &s0);
            let reads = concurrent_reads(&gpu, &uses, &readers);
            let writer = gpu.stream(false);
            gpu.wait_by_hand(&writer, &readers[1]);
            let w1 = write(&gpu, &uses, &writer);
            for &r in &reads {
                assert!(gpu.before(w0, r));
                assert!(gpu.before(r, w1));
            }
        });
    }

    /// Two threads write through one shared handle (a surface) on their own streams at once:
    /// both stay recorded, so a later reader waits for both and the free covers both.
    #[test]
    fn writes_through_a_shared_handle_from_two_threads() {
        check(|| {
            let gpu = Gpu::new();
            let uses = Arc::new(StreamUses::new());
            let (a, b) = (gpu.stream(false), gpu.stream(false));
            let h = {
                let (gpu, uses) = (gpu.clone(), uses.clone());
                thread::spawn(move || {
                    uses.write_shared_on(&a).unwrap();
                    gpu.launch(&a)
                })
            };
            uses.write_shared_on(&b).unwrap();
            let wb = gpu.launch(&b);
            let wa = h.join().unwrap();
            let r = read(&gpu, &uses, &gpu.stream(false));
            assert!(
                gpu.before(wa, r) && gpu.before(wb, r),
                "a read ran beside a write"
            );
            let mut uses = Arc::try_unwrap(uses).unwrap();
            let free = gpu.free_point(&uses.take());
            for w in [wa, wb, r] {
                assert!(gpu.covers(&free, w), "freed while {w:?} may run");
            }
        });
    }

    /// Another library (cudarc's `begin_capture`/`end_capture`) captures an exposed stream
    /// while a thread of ours records a use of a buffer on it and queues its work: in every
    /// interleaving, no work of ours ends up in a graph the capture made (the checks before
    /// recording and after queueing refuse it or invalidate the capture), and a free of the
    /// buffer waits for whatever of ours was really queued.
    #[test]
    fn a_foreign_capture_never_keeps_our_work() {
        check(|| {
            let gpu = Gpu::new();
            let s = gpu.exposed_stream();
            let uses = Arc::new(StreamUses::new());
            let capturer = foreign_capture(&gpu, &s);
            let mut queued = None;
            if uses.read_on(&s).is_ok() {
                queued = gpu.queue_ours(&s).0;
            }
            capturer.join().unwrap();
            // The one window the checks cannot see: a capture that began after the check
            // before the use and ended before the check after queueing (a few hundred
            // nanoseconds of one call; the safety chapter says so). Any other capture that
            // kept our work is a hole.
            let (graphs, checks) = gpu.ours_in_foreign_graphs(&s);
            for g in graphs {
                assert!(
                    checks.len() == 2 && checks[0] < g.began && g.ended < checks[1],
                    "work of ours in another library's graph: {g:?}, checks at {checks:?}"
                );
            }
            let mut uses = Arc::try_unwrap(uses).unwrap();
            let free = gpu.free_point(&uses.take());
            if let Some(w) = queued {
                assert!(gpu.covers(&free, w), "freed while {w:?} may run");
            }
        });
    }

    /// The same scenario on the code before the checks (the stream not known to be
    /// capturable): the model finds our work in the capture's graph.
    #[test]
    fn the_model_finds_work_captured_without_the_checks() {
        let found = std::panic::catch_unwind(|| {
            check(|| {
                let gpu = Gpu::new();
                let s = gpu.unchecked_exposed_stream();
                let uses = Arc::new(StreamUses::new());
                let capturer = foreign_capture(&gpu, &s);
                uses.read_on(&s).unwrap();
                let _ = gpu.queue_ours(&s);
                capturer.join().unwrap();
                let (graphs, checks) = gpu.ours_in_foreign_graphs(&s);
                for g in graphs {
                    assert!(checks.len() == 2 && checks[0] < g.began && g.ended < checks[1]);
                }
            })
        });
        assert!(
            found.is_err(),
            "the model missed work captured into a foreign graph"
        );
    }

    /// Two lends of one cudarc allocation (two threads, two streams; or nested) end at once;
    /// cudarc keeps one event for the slice, which each end re-records on its own stream.
    /// Then cudarc's next user waits for that one event: it must cover the work of both lends.
    fn two_lends_end(cover_each_other: bool) {
        check(move || {
            let gpu = Gpu::new();
            let groups = Arc::new(super::super::LendGroups::default());
            // cudarc's write event of the slice: where it was last recorded.
            let event = Arc::new(Mutex::new(None::<Point>));
            fn lend(
                gpu: Arc<Gpu>,
                groups: Arc<super::super::LendGroups>,
                event: Arc<Mutex<Option<Point>>>,
                cover_each_other: bool,
            ) -> Work {
                let s = gpu.stream(false);
                let member = groups.join(0x7000, &s);
                let w = gpu.launch(&s);
                let record = || *event.lock().unwrap() = Some(gpu.event_point(&s));
                if cover_each_other {
                    member.end(false, record).unwrap();
                } else {
                    record();
                }
                drop(member);
                w
            }
            let other = {
                let (gpu, groups, event) = (gpu.clone(), groups.clone(), event.clone());
                thread::spawn(move || lend(gpu, groups, event, cover_each_other))
            };
            let mine = lend(gpu.clone(), groups.clone(), event.clone(), cover_each_other);
            let other = other.join().unwrap();
            // Read lends keep their group for the next reader's end.
            assert!(groups.len() <= 1);
            let last = event.lock().unwrap().clone().unwrap();
            for w in [mine, other] {
                assert!(
                    gpu.covers(&last, w),
                    "cudarc's event misses the lend's work {w:?}"
                );
            }
        });
    }

    #[test]
    fn the_ends_of_two_lends_of_one_allocation_cover_each_other() {
        two_lends_end(true);
    }

    /// The ends as they were (each records cudarc's event alone): the model finds a lend's
    /// work that cudarc's event does not cover.
    #[test]
    fn the_model_finds_a_lend_end_replacing_another() {
        let found = std::panic::catch_unwind(|| two_lends_end(false));
        assert!(found.is_err(), "the model missed an uncovered lend");
    }

    /// A launch of a kernel of a module with variables: through the module's gate and record,
    /// the work queued inside (what `LaunchEx::launch_on` does).
    fn launch_in(gpu: &Gpu, m: &ModuleUses, s: &Arc<StreamInner>) -> Work {
        m.launch(s, || Ok(gpu.launch(s))).unwrap()
    }

    /// `Global::set`: a write of the module's record on `s`, then the copy.
    fn set(gpu: &Gpu, m: &ModuleUses, s: &Arc<StreamInner>) -> Work {
        m.host_copy(|u| {
            u.write_on(s)?;
            Ok(gpu.launch(s))
        })
        .unwrap()
    }

    /// `Global::get`: a read of the module's record on `s`, then the copy.
    fn get(gpu: &Gpu, m: &ModuleUses, s: &Arc<StreamInner>) -> Work {
        m.host_copy(|u| {
            u.read_on(s)?;
            Ok(gpu.launch(s))
        })
        .unwrap()
    }

    fn ordered(gpu: &Gpu, a: Work, b: Work) -> bool {
        gpu.before(a, b) || gpu.before(b, a)
    }

    /// A module with a `__device__` variable: one thread launches twice on its stream (the
    /// second through the shared gate's fast path), another sets the variable and then
    /// launches on a third stream, and the variable is read back once both are joined. Each
    /// launch may write the variable, so no two of these may overlap: whichever thread takes
    /// the gate second waits for the other's work.
    #[test]
    fn device_variables_launches_and_host_copies_from_two_threads_never_overlap() {
        check(|| {
            let gpu = Gpu::new();
            let m = Arc::new(ModuleUses::new(ModuleVars::Device));
            let (a, b, legacy) = (gpu.stream(false), gpu.stream(false), gpu.stream(false));
            let h = {
                let (gpu, m) = (gpu.clone(), m.clone());
                thread::spawn(move || [launch_in(&gpu, &m, &a), launch_in(&gpu, &m, &a)])
            };
            let w = set(&gpu, &m, &legacy);
            let kb = launch_in(&gpu, &m, &b);
            let [ka1, ka2] = h.join().unwrap();
            let r = get(&gpu, &m, &legacy);
            assert!(gpu.before(w, kb), "a launch after a set ran beside it");
            assert!(
                gpu.before(ka2, r) && gpu.before(kb, r),
                "a get ran beside a launch"
            );
            let all = [ka1, ka2, w, kb, r];
            for (i, &x) in all.iter().enumerate() {
                for &y in &all[i + 1..] {
                    assert!(ordered(&gpu, x, y), "{x:?} and {y:?} may overlap");
                }
            }
        });
    }

    /// A module of `__constant__` variables: launches only read them, so launches on two
    /// streams may overlap, but a set from another thread is ordered with each of them, and a
    /// launch queued after the set on its thread runs after it.
    #[test]
    fn constant_variables_are_set_between_launches_never_beside_them() {
        check(|| {
            let gpu = Gpu::new();
            let m = Arc::new(ModuleUses::new(ModuleVars::Constant));
            let (a, b, legacy) = (gpu.stream(false), gpu.stream(false), gpu.stream(false));
            let h = {
                let (gpu, m) = (gpu.clone(), m.clone());
                thread::spawn(move || launch_in(&gpu, &m, &a))
            };
            let w = set(&gpu, &m, &legacy);
            let kb = launch_in(&gpu, &m, &b);
            let ka = h.join().unwrap();
            let w2 = set(&gpu, &m, &legacy);
            assert!(
                ordered(&gpu, ka, w),
                "a set ran beside a launch on another thread"
            );
            assert!(gpu.before(w, kb), "a launch after a set ran beside it");
            for k in [ka, kb] {
                assert!(gpu.before(k, w2), "a set ran beside a launch queued before it");
            }
        });
    }
}
