//! Lends of one allocation of another library's (a cudarc slice, or any view of it), ended one
//! at a time, each covering the others.
//!
//! cudarc orders a slice with one read event and one write event, which every use re-records:
//! a second reader replaces the first. A lend ends by recording one of those events on its
//! stream (`driver::cudarc_interop::lend`), so two lends of one allocation (nested reads,
//! reads of two views, writes of the two halves of `split_at_mut`, from one thread or two)
//! would each leave an event that names its own stream only, and cudarc's next user would wait
//! for whichever was recorded last. So the lends of an allocation form a group: the end of
//! each, under the group's lock, first makes its stream wait for every other stream the group
//! has lent on so far, then records cudarc's event. The last event recorded therefore covers
//! the work queued by every lend that has ended, since the group began; a lend still running
//! covers the rest when it ends, after. A read lend's start waits only for cudarc's write
//! event, so after read lends the group stays, and the next read lend's end covers their
//! streams too (cudarc's single read event would otherwise name the last reader alone); a
//! write lend's end, with no other lend running, covers all, and the group goes.
//!
//! Lock order: the registry's lock before a group's (`LockRank::LendGroups`, then
//! `LockRank::LendGroup`).

use std::collections::HashMap;
use std::sync::Arc;

use crate::error::Result;
use crate::sync::LockRank;

use super::streams::StreamInner;
use super::sync::Mutex;

/// The groups of a context's lends, by allocation (its base address).
pub(crate) struct LendGroups {
    map: Mutex<HashMap<u64, Arc<LendGroup>>>,
}

impl Default for LendGroups {
    fn default() -> Self {
        LendGroups {
            map: Mutex::new(LockRank::LendGroups, HashMap::new()),
        }
    }
}

/// The lends of one allocation.
pub(crate) struct LendGroup {
    state: Mutex<GroupState>,
}

impl Default for LendGroup {
    fn default() -> Self {
        LendGroup {
            state: Mutex::new(LockRank::LendGroup, GroupState::default()),
        }
    }
}

#[derive(Default)]
struct GroupState {
    /// Every stream a lend of the group has used, since the group began.
    streams: Vec<Arc<StreamInner>>,
    /// Lends not yet ended.
    active: usize,
    /// The last end was a write's with no other lend running: cudarc's write event then
    /// covers every stream above, which every later use of the slice waits for, so the group
    /// may go. After reads it stays (cudarc keeps one read event, which the next reader's
    /// end replaces and so must cover), until a write or the context's end.
    covered: bool,
}

/// One lend's place in its group, from its start to its end (dropped after `end`).
pub(crate) struct Member<'g> {
    groups: &'g LendGroups,
    key: u64,
    group: Arc<LendGroup>,
    stream: Arc<StreamInner>,
}

impl LendGroups {
    /// A lend of the allocation `key` on `stream` starts.
    pub(crate) fn join(&self, key: u64, stream: &Arc<StreamInner>) -> Member<'_> {
        let mut map = self.map.lock();
        let group = map.entry(key).or_default().clone();
        let mut st = group.state.lock();
        st.active += 1;
        if !st.streams.iter().any(|s| Arc::ptr_eq(s, stream)) {
            st.streams.push(stream.clone());
        }
        drop(st);
        drop(map);
        Member {
            groups: self,
            key,
            group,
            stream: stream.clone(),
        }
    }

    /// How many allocations have a group (for the tests and the model check).
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.map.lock().len()
    }
}

impl Member<'_> {
    /// Ends the lend: under the group's lock, its stream waits for the work queued so far on
    /// every other stream of the group, then `record` (cudarc's event on the lend's stream)
    /// runs. If a wait fails, `record` runs all the same and the error is returned (the caller
    /// then waits on the host).
    ///
    /// `write`: the lend was a write, whose start waited for cudarc's read and write events.
    pub(crate) fn end(&self, write: bool, record: impl FnOnce()) -> Result<()> {
        let mut st = self.group.state.lock();
        let waited = st
            .streams
            .iter()
            .filter(|s| !Arc::ptr_eq(s, &self.stream))
            .try_for_each(|s| self.stream.wait_for(s));
        record();
        st.covered = write && st.active == 1 && waited.is_ok();
        if st.covered {
            let me = self.stream.clone();
            st.streams.retain(|s| Arc::ptr_eq(s, &me));
        }
        drop(st);
        waited
    }
}

impl Drop for Member<'_> {
    fn drop(&mut self) {
        let mut map = self.groups.map.lock();
        let mut st = self.group.state.lock();
        st.active -= 1;
        if st.active == 0 && st.covered {
            drop(st);
            if map.get(&self.key).is_some_and(|g| Arc::ptr_eq(g, &self.group)) {
                map.remove(&self.key);
            }
        }
    }
}
