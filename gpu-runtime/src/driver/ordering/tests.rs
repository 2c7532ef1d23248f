//! Unit tests of the ordering records, without a GPU.

use std::sync::atomic::{AtomicBool, AtomicPtr};
use std::sync::{Arc, Weak};

use super::streams::*;
use super::uses::*;

/// A stream identity for planning only: no driver handles (its context is gone, so it is
/// never waited for and its drop calls nothing).
fn stream_of(blocking: bool, legacy: bool) -> Arc<StreamInner> {
    Arc::new(StreamInner {
        raw: std::ptr::null_mut(),
        ctx_raw: std::ptr::null_mut(),
        ctx: Weak::<()>::new(),
        fence: AtomicPtr::new(std::ptr::null_mut()),
        blocking,
        legacy,
        manual: AtomicBool::new(false),
        #[cfg(loom)]
        lane: None,
        cudarc: std::sync::OnceLock::new(),
        borrowed: false,
        exposed: AtomicBool::new(false),
    })
}

fn stream(blocking: bool) -> Arc<StreamInner> {
    stream_of(blocking, false)
}

fn names(waits: &[Arc<StreamInner>], all: &[&Arc<StreamInner>]) -> Vec<usize> {
    waits
        .iter()
        .map(|w| all.iter().position(|s| Arc::ptr_eq(s, w)).unwrap())
        .collect()
}

#[test]
fn reads_wait_for_the_writer_and_writes_for_everyone() {
    let (a, b, c) = (stream(false), stream(false), stream(false));
    let all = [&a, &b, &c];
    let set = UseSet::default();
    assert_eq!(set.fast_key(), IDLE);
    // a writes: nothing to wait for.
    let (w, set) = set.after(&a, Access::Write);
    assert!(w.is_empty());
    assert_eq!(set.fast_key(), a.key() | WRITER | PENDING_WRITE);
    // b reads: waits for a (read after write).
    let (w, set) = set.after(&b, Access::Read);
    assert_eq!(names(&w, &all), [0]);
    // c reads too: waits for a; b and c read concurrently.
    let (w, set) = set.after(&c, Access::Read);
    assert_eq!(names(&w, &all), [0]);
    assert_eq!(set.fast_key(), MIXED | PENDING_WRITE);
    // b reads again: it already waited for a.
    let (w, set) = set.after(&b, Access::Read);
    assert!(w.is_empty());
    // a writes again: waits for both readers (write after read).
    let (w, set) = set.after(&a, Access::Write);
    assert_eq!(names(&w, &all), [1, 2]);
    // c writes: waits for a (write after write).
    let (w, set) = set.after(&c, Access::Write);
    assert_eq!(names(&w, &all), [0]);
    assert!(set.readers().next().is_none());
}

#[test]
fn the_fast_key_admits_exactly_the_uses_that_change_nothing() {
    let (a, b) = (stream(false), stream(false));
    let fast_read = |set: &UseSet, s: &Arc<StreamInner>| set.fast_key() & KEY_MASK == s.key();
    let fast_write = |set: &UseSet, s: &Arc<StreamInner>| set.fast_key() == s.key() | WRITER | PENDING_WRITE;
    let mut set = UseSet::default();
    for step in 0..200u32 {
        // A fixed pseudo-random walk over reads and writes on two streams.
        let s = if step.wrapping_mul(2654435761) >> 31 == 0 {
            &a
        } else {
            &b
        };
        let access = match step % 7 {
            0 | 3 => Access::Write,
            5 => Access::SharedWrite,
            _ => Access::Read,
        };
        let (waits, next) = set.after(s, access);
        let changes = !waits.is_empty()
            || next.fast_key() != set.fast_key()
            || next
                .writers
                .iter()
                .map(Arc::as_ptr)
                .ne(set.writers.iter().map(Arc::as_ptr))
            || next
                .readers
                .iter()
                .map(Arc::as_ptr)
                .ne(set.readers.iter().map(Arc::as_ptr));
        let fast = match access {
            Access::Read => fast_read(&set, s),
            Access::Write | Access::SharedWrite => fast_write(&set, s),
        };
        // The fast path is taken only when the slow path would do nothing.
        assert!(!(fast && changes), "step {step}: fast path would skip a change");
        set = next;
    }
}

#[test]
fn every_reader_stays_recorded_until_an_exclusive_write() {
    // Far more readers than the lock-free slots: none waits for another, and all are named.
    let s: Vec<_> = (0..SEEN + 4).map(|_| stream(false)).collect();
    let all: Vec<&Arc<StreamInner>> = s.iter().collect();
    let (_, mut set) = UseSet::default().after(&s[0], Access::Write);
    for r in &s[1..] {
        let (w, next) = set.after(r, Access::Read);
        assert_eq!(names(&w, &all), [0], "a read waits for the writer only");
        set = next;
    }
    assert_eq!(set.readers().count(), SEEN + 3);
    // A free, or a pool's next owner, waits for every one of them and for the writer.
    assert_eq!(set.streams().count(), SEEN + 4);
    // An exclusive write waits for all of them, then stands alone.
    let (w, set) = set.after(&s[1], Access::Write);
    let want: Vec<usize> = (0..SEEN + 4).filter(|&i| i != 1).collect();
    let mut got = names(&w, &all);
    got.sort();
    assert_eq!(got, want);
    assert_eq!(set.streams().count(), 1);
}

#[test]
fn a_shared_write_keeps_every_stream_and_readers_wait_for_it_again() {
    let (a, b, c) = (stream(false), stream(false), stream(false));
    let all = [&a, &b, &c];
    let (_, set) = UseSet::default().after(&a, Access::Read);
    assert_eq!(set.fast_key(), a.key());
    // A surface writes on b: waits for the reader a, which stays recorded.
    let (w, set) = set.after(&b, Access::SharedWrite);
    assert_eq!(names(&w, &all), [0]);
    assert_eq!(set.streams().count(), 2);
    // a's read is no longer free: it must wait for b's write.
    assert_eq!(set.fast_key() & KEY_MASK, 0);
    let (w, set) = set.after(&a, Access::Read);
    assert_eq!(names(&w, &all), [1]);
    // Another surface write on c waits for both and keeps both.
    let (w, set) = set.after(&c, Access::SharedWrite);
    assert_eq!(names(&w, &all), [1, 0]);
    assert_eq!(set.streams().count(), 3);
}

#[test]
fn the_lock_free_check_admits_exactly_the_reads_that_change_nothing() {
    let s: Vec<_> = (0..SEEN + 3).map(|_| stream(false)).collect();
    let uses = StreamUses::new();
    // Nothing recorded: no read is free.
    assert!(s.iter().all(|x| !uses_seen(&uses, x)));
    for (i, x) in s.iter().enumerate() {
        uses.use_on(x, Access::Read).unwrap();
        assert_eq!(uses_seen(&uses, x), i < SEEN, "reader {i}");
        assert!(uses.lock().has_reader(x) && uses.lock().read_is_noop(x));
    }
    // A write (exclusive) leaves its own stream alone in the check.
    uses.use_on(&s[2], Access::Write).unwrap();
    assert!(uses_seen(&uses, &s[2]));
    assert!(s.iter().enumerate().all(|(i, x)| i == 2 || !uses_seen(&uses, x)));
    assert_eq!(uses.lock().streams().count(), 1);
}

fn uses_seen(uses: &StreamUses, s: &StreamInner) -> bool {
    uses.seen
        .iter()
        .map(|k| k.load(std::sync::atomic::Ordering::Relaxed))
        .take_while(|&k| k != 0)
        .any(|k| k == s.key())
}

#[test]
fn manual_streams_neither_wait_nor_are_waited_for() {
    let (a, m) = (stream(false), stream(false));
    m.set_manual();
    let all = [&a, &m];
    let (_, set) = UseSet::default().after(&a, Access::Write);
    let (w, set) = set.after(&m, Access::Write);
    assert!(w.is_empty());
    let (w, _) = set.after(&a, Access::Read);
    assert!(names(&w, &all).is_empty());
}

#[test]
fn the_legacy_stream_and_blocking_streams_are_ordered_by_the_driver() {
    let legacy = stream_of(true, true);
    let (blocking, free) = (stream(true), stream(false));
    assert!(legacy.ordered_after(&blocking) && blocking.ordered_after(&legacy));
    assert!(!legacy.ordered_after(&free) && !free.ordered_after(&legacy));
    assert!(!blocking.ordered_after(&free));
    assert!(free.ordered_after(&free));
}

/// Lends of one allocation starting, ending and dropped on several threads at once: the
/// registry's lock and a group's nest (in debug builds, checked against the lock order), and
/// once every lend is gone, a last write lend alone covers the group, which goes.
#[test]
#[cfg(not(loom))]
fn lends_on_several_threads_nest_their_locks_in_order_and_leave_no_group() {
    let groups = super::LendGroups::default();
    let streams: Vec<_> = (0..4).map(|_| stream(false)).collect();
    std::thread::scope(|scope| {
        for (i, s) in streams.iter().enumerate() {
            let groups = &groups;
            scope.spawn(move || {
                for round in 0..200 {
                    let member = groups.join(7, s);
                    member.end((i + round) % 2 == 0, || {}).unwrap();
                }
            });
        }
    });
    let last = groups.join(7, &streams[0]);
    last.end(true, || {}).unwrap();
    drop(last);
    assert_eq!(groups.len(), 0);
}
