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
        cudarc: std::sync::OnceLock::new(),
        borrowed: false,
    })
}

fn stream(blocking: bool) -> Arc<StreamInner> {
    stream_of(blocking, false)
}

fn names(waits: &Waits, all: &[&Arc<StreamInner>]) -> Vec<usize> {
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
    let (w, set) = set.plan(&a, Access::Write);
    assert_eq!(w.count, 0);
    assert_eq!(set.fast_key(), a.key() | WRITER | PENDING_WRITE);
    // b reads: waits for a (read after write).
    let (w, set) = set.plan(&b, Access::Read);
    assert_eq!(names(&w, &all), [0]);
    // c reads too: waits for a; b and c read concurrently.
    let (w, set) = set.plan(&c, Access::Read);
    assert_eq!(names(&w, &all), [0]);
    assert_eq!(set.fast_key(), MIXED | PENDING_WRITE);
    // b reads again: it already waited for a.
    let (w, set) = set.plan(&b, Access::Read);
    assert_eq!(w.count, 0);
    // a writes again: waits for both readers (write after read).
    let (w, set) = set.plan(&a, Access::Write);
    assert_eq!(names(&w, &all), [1, 2]);
    // c writes: waits for a (write after write).
    let (w, set) = set.plan(&c, Access::Write);
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
        let access = if step % 3 == 0 {
            Access::Write
        } else {
            Access::Read
        };
        let (waits, next) = set.plan(s, access);
        let changes = waits.count > 0
            || next.fast_key() != set.fast_key()
            || next.writer.as_ref().map(Arc::as_ptr) != set.writer.as_ref().map(Arc::as_ptr);
        let fast = match access {
            Access::Read => fast_read(&set, s),
            Access::Write => fast_write(&set, s),
        };
        // The fast path is taken only when the slow path would do nothing.
        assert!(!(fast && changes), "step {step}: fast path would skip a change");
        set = next;
    }
}

#[test]
fn a_reader_past_the_last_slot_waits_for_the_readers_before_it() {
    let s: Vec<_> = (0..MAX_READERS + 2).map(|_| stream(false)).collect();
    let all: Vec<&Arc<StreamInner>> = s.iter().collect();
    let (_, mut set) = UseSet::default().plan(&s[0], Access::Write);
    for r in &s[1..=MAX_READERS] {
        let (w, next) = set.plan(r, Access::Read);
        assert_eq!(names(&w, &all), [0]);
        set = next;
    }
    let last = MAX_READERS + 1;
    let (w, set) = set.plan(&s[last], Access::Read);
    assert_eq!(names(&w, &all), (0..last).collect::<Vec<_>>());
    assert_eq!(set.readers().count(), 1);
    // The writer is still outstanding for the host and for later writers.
    let (w, _) = set.plan(&s[1], Access::Write);
    assert_eq!(names(&w, &all), [0, last]);
}

#[test]
fn manual_streams_neither_wait_nor_are_waited_for() {
    let (a, m) = (stream(false), stream(false));
    m.set_manual();
    let all = [&a, &m];
    let (_, set) = UseSet::default().plan(&a, Access::Write);
    let (w, set) = set.plan(&m, Access::Write);
    assert_eq!(w.count, 0);
    let (w, _) = set.plan(&a, Access::Read);
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
