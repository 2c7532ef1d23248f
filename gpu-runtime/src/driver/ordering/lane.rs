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
