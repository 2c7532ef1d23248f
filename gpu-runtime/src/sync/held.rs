//! The check of the lock order (`rank.rs`): in debug builds each thread keeps the locks it
//! holds, and taking one whose rank is not above all of them panics, naming both. Release
//! builds keep nothing: [`Ranked`] and [`Held`] are empty, and their functions are no-ops the
//! compiler removes. Under `--cfg loom` nothing is checked either: loom runs every thread of a
//! model on one OS thread, which one thread-local list would mix up (and the model check builds
//! in release).

#[cfg(all(debug_assertions, not(loom)))]
pub(crate) use checked::{Held, Ranked};
#[cfg(not(all(debug_assertions, not(loom))))]
pub(crate) use unchecked::{Held, Ranked};

#[cfg(all(test, debug_assertions, not(loom)))]
pub(crate) use checked::held;

#[cfg(not(all(debug_assertions, not(loom))))]
mod unchecked {
    use crate::sync::rank::LockRank;

    /// What a lock keeps of its rank where the order is not checked: nothing.
    #[derive(Clone, Copy)]
    pub(crate) struct Ranked;

    /// What a guard keeps where the order is not checked: nothing.
    pub(crate) struct Held;

    impl Ranked {
        #[inline(always)]
        pub(crate) const fn new(_rank: LockRank) -> Ranked {
            Ranked
        }

        #[inline(always)]
        pub(crate) fn acquire(self, _addr: *const ()) -> Held {
            Held
        }
    }
}

#[cfg(all(debug_assertions, not(loom)))]
mod checked {
    use std::cell::RefCell;
    use std::panic::Location;

    use crate::sync::rank::LockRank;

    /// What a lock keeps of its rank: the rank.
    #[derive(Clone, Copy)]
    pub(crate) struct Ranked(LockRank);

    /// Kept by a guard while its lock is held: dropped, the lock leaves the thread's list.
    pub(crate) struct Held(Entry);

    /// One lock a thread holds: its rank, its address, and where it was taken.
    #[derive(Clone, Copy)]
    struct Entry {
        rank: LockRank,
        addr: usize,
        at: &'static Location<'static>,
    }

    thread_local! {
        /// The locks this thread holds, in the order taken, which is increasing (each was
        /// checked to be above all before it). Guards may be dropped in any order: a release
        /// takes its entry out wherever it is, and the rest stays increasing.
        static HELD: RefCell<Vec<Entry>> = const { RefCell::new(Vec::new()) };
    }

    impl Ranked {
        pub(crate) const fn new(rank: LockRank) -> Ranked {
            Ranked(rank)
        }

        /// Checks that the calling thread may take the lock at `addr` (of this rank) now, and
        /// lists it as held until the returned value is dropped. Called before the lock is
        /// taken, so that a wrong order panics instead of deadlocking.
        #[track_caller]
        pub(crate) fn acquire(self, addr: *const ()) -> Held {
            let new = Entry {
                rank: self.0,
                addr: addr as usize,
                at: Location::caller(),
            };
            // After the thread's list is gone (a lock taken by another thread-local's
            // destructor), nothing is checked.
            let refused = HELD
                .try_with(|held| {
                    let mut held = held.borrow_mut();
                    match held.last().copied() {
                        Some(top) if !may_follow(top, new) => Some((top, held.clone())),
                        _ => {
                            held.push(new);
                            None
                        }
                    }
                })
                .ok()
                .flatten();
            // Raised with the list let go, so that the guards the unwind drops can leave it.
            if let Some((top, held)) = refused {
                let all: Vec<String> = held
                    .iter()
                    .map(|e| format!("{:?} (taken at {})", e.rank, e.at))
                    .collect();
                panic!(
                    "gpu-runtime: lock order violated: taking {:?} at {} while holding {:?} (taken \
                     at {}); a lock may only be taken above every lock held (held: {}); the order \
                     is in gpu-runtime/src/sync/rank.rs",
                    new.rank,
                    new.at,
                    top.rank,
                    top.at,
                    all.join(", ")
                );
            }
            Held(new)
        }
    }

    /// The lock `new` may be taken while `top` is the highest held.
    fn may_follow(top: Entry, new: Entry) -> bool {
        new.rank > top.rank || (new.rank == top.rank && new.rank.by_address() && new.addr > top.addr)
    }

    impl Drop for Held {
        fn drop(&mut self) {
            let entry = self.0;
            let _ = HELD.try_with(|held| {
                let mut held = held.borrow_mut();
                if let Some(i) = held
                    .iter()
                    .rposition(|e| e.rank == entry.rank && e.addr == entry.addr)
                {
                    held.remove(i);
                }
            });
        }
    }

    /// The ranks this thread holds now, lowest first (for the tests).
    #[cfg(test)]
    pub(crate) fn held() -> Vec<LockRank> {
        HELD.with(|h| h.borrow().iter().map(|e| e.rank).collect())
    }
}
