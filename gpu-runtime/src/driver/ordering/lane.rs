//! The model check's stand-in for a GPU stream (see `model.rs`): a queue of work items and
//! waits. `StreamInner::wait_for` and `host_wait` act on it when the crate is built with
//! `--cfg loom`.

use std::sync::Arc;

use loom::sync::Mutex;

/// One entry of a modelled stream.
#[derive(Clone, Copy, Debug)]
// Work items are queued by the model's tests alone.
#[cfg_attr(not(test), allow(dead_code))]
pub(super) enum Entry {
    /// A kernel, copy or other work item.
    Work,
    /// Waits until the first `upto` entries of lane `lane` have finished.
    Wait { lane: usize, upto: usize },
}

/// The queue of one modelled stream.
pub(crate) struct Lane {
    pub(super) id: usize,
    /// What the host has waited for (shared by every lane of a model).
    pub(super) host: Arc<Mutex<Vec<(usize, usize)>>>,
    pub(super) queue: Mutex<Vec<Entry>>,
    /// Another library may capture this lane (a stream handed to cudarc).
    pub(crate) capturable: bool,
    /// Another library's captures of this lane, and the checks of ours (one lock: the
    /// order of its critical sections is the order of these events).
    pub(super) capture: Mutex<Captures>,
}

/// A lane's captures and our checks of its capture status, stamped by a counter of their own.
#[derive(Default)]
// Read by the model's tests alone.
#[cfg_attr(not(test), allow(dead_code))]
pub(crate) struct Captures {
    pub(crate) tick: usize,
    /// The capture in progress.
    pub(crate) now: Option<CaptureSeq>,
    /// Captures that ended: valid ones became graphs, whose work runs whenever they are
    /// launched.
    pub(crate) ended: Vec<CaptureSeq>,
    /// When our capture checks ran.
    pub(crate) checks: Vec<usize>,
}

/// One capture of a lane by another library.
#[derive(Clone, Debug, Default)]
#[cfg_attr(not(test), allow(dead_code))]
pub(crate) struct CaptureSeq {
    pub(crate) valid: bool,
    /// How many work items of ours it captured.
    pub(crate) ours: usize,
    pub(crate) began: usize,
    pub(crate) ended: usize,
}

/// `cuStreamIsCapturing`, and `cuStreamQuery` to invalidate an active capture: true when the
/// lane is being captured.
pub(super) fn invalidate(me: &Lane) -> bool {
    let mut c = me.capture.lock().unwrap();
    c.tick += 1;
    let t = c.tick;
    c.checks.push(t);
    match c.now.as_mut() {
        Some(seq) => {
            seq.valid = false;
            true
        }
        None => false,
    }
}

/// `cuEventRecord(fence, other)` then `cuStreamWaitEvent(me, fence)`, as two steps.
pub(super) fn wait(me: &Lane, other: &Lane) {
    let upto = other.queue.lock().unwrap().len();
    me.queue
        .lock()
        .unwrap()
        .push(Entry::Wait { lane: other.id, upto });
}

/// `cuStreamSynchronize`: the host has seen everything queued on the lane so far finish.
pub(super) fn host_wait(me: &Lane) {
    let upto = me.queue.lock().unwrap().len();
    me.host.lock().unwrap().push((me.id, upto));
}
