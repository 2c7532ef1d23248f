//! A few persistent threads that help the staged copies of the In/Out convenience calls
//! (staging.rs): started once per process and parked between tasks, so a call pays a wake-up
//! (or nothing, when a helper is still polling from the call before) instead of starting and
//! joining threads twice.
//!
//! A task is a closure borrowed from the caller's stack. The caller runs it too, and `run`
//! returns only once every helper that entered it has left, also when the caller's own share
//! panics: no helper touches the caller's borrows after `run` returns. Tasks must be written
//! so that the caller alone can finish them (they take work items from a shared counter), so
//! helpers that wake late, or never (a busy pool, a forked child), cost speed, not progress.

use std::any::Any;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

/// How long an idle helper keeps polling for the next task before it sleeps: a convenience
/// call has two copy phases a little apart, and calls often come back to back; a sleeping
/// helper takes a wake-up (tens of microseconds on a busy or virtual machine) to join.
const POLL: Duration = Duration::from_micros(200);
/// The most helpers the process starts (beyond this, memory bandwidth is long saturated).
pub(crate) const MAX_HELPERS: usize = 15;
/// Helpers' stacks: they run memcpy and a few driver calls.
const STACK: usize = 256 << 10;

/// The current task, lifetime erased: valid while `State::task` holds it (see `run`).
#[derive(Clone, Copy)]
struct TaskPtr(*const (dyn Fn() + Sync + 'static));

// SAFETY: the closure behind it is Sync, so it may be called from any thread; `run` keeps it
// alive for as long as any thread can reach it through the state.
unsafe impl Send for TaskPtr {}

struct State {
    /// The task helpers may join; `None` once the caller has stopped taking helpers.
    task: Option<TaskPtr>,
    /// How many more helpers may join it.
    seats: usize,
    /// The first panic a helper raised in it.
    panic: Option<Box<dyn Any + Send>>,
}

struct Pool {
    state: Mutex<State>,
    /// Bumped (under the lock) for each task, so that polling helpers see it without the lock.
    generation: AtomicU64,
    /// Helpers inside the current task.
    running: AtomicUsize,
    /// Held by the one caller whose task the pool serves; others run theirs alone.
    busy: AtomicBool,
    /// Helpers sleep here between tasks.
    wake: Condvar,
    /// The caller sleeps here for the last helper to leave.
    idle: Condvar,
    /// Helpers started.
    helpers: AtomicUsize,
}

impl Pool {
    fn lock(&self) -> MutexGuard<'_, State> {
        // Every critical section leaves the state consistent, so a poisoned lock is usable.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

fn pool() -> &'static Pool {
    static POOL: OnceLock<&'static Pool> = OnceLock::new();
    POOL.get_or_init(|| {
        let pool: &'static Pool = Box::leak(Box::new(Pool {
            state: Mutex::new(State {
                task: None,
                seats: 0,
                panic: None,
            }),
            generation: AtomicU64::new(0),
            running: AtomicUsize::new(0),
            busy: AtomicBool::new(false),
            wake: Condvar::new(),
            idle: Condvar::new(),
            helpers: AtomicUsize::new(0),
        }));
        let want = std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .saturating_sub(1)
            .min(MAX_HELPERS);
        for i in 0..want {
            let started = std::thread::Builder::new()
                .name(format!("gpu-copy-{i}"))
                .stack_size(STACK)
                .spawn(move || helper(pool));
            // Fewer helpers only means slower copies.
            if started.is_err() {
                break;
            }
            pool.helpers.fetch_add(1, Ordering::Relaxed);
        }
        pool
    })
}

/// How many helpers `run` can have at most (starting them on the first call).
#[cfg(test)]
fn helpers() -> usize {
    pool().helpers.load(Ordering::Relaxed)
}

fn helper(pool: &'static Pool) {
    let mut seen = 0u64;
    loop {
        let start = Instant::now();
        let mut spins = 0u32;
        while pool.generation.load(Ordering::Acquire) == seen {
            std::hint::spin_loop();
            spins += 1;
            if spins.is_multiple_of(64) && start.elapsed() > POLL {
                break;
            }
        }
        let mut st = pool.lock();
        while pool.generation.load(Ordering::Relaxed) == seen {
            st = pool.wake.wait(st).unwrap_or_else(|p| p.into_inner());
        }
        seen = pool.generation.load(Ordering::Relaxed);
        let Some(task) = st.task.filter(|_| st.seats > 0) else {
            continue;
        };
        st.seats -= 1;
        // Counted under the lock, before the caller can retract the task: it waits for us.
        pool.running.fetch_add(1, Ordering::Relaxed);
        drop(st);
        // SAFETY: the task stays alive until `running` drops back to zero (see `run`).
        let result = catch_unwind(AssertUnwindSafe(|| unsafe { (*task.0)() }));
        if let Err(payload) = result {
            pool.lock().panic.get_or_insert(payload);
        }
        // The last touch of the task: Release publishes what it wrote to the caller.
        if pool.running.fetch_sub(1, Ordering::Release) == 1 {
            // Under the lock, so that a caller between its check and its wait still hears it.
            let _st = pool.lock();
            pool.idle.notify_all();
        }
    }
}

/// Ends the pool's service of one task: stops helpers from joining, waits for those inside,
/// frees the pool. In `Drop`, so that it also runs when the caller's share panics.
struct Serving(&'static Pool);

impl Serving {
    fn wait(&self) -> Option<Box<dyn Any + Send>> {
        let pool = self.0;
        pool.lock().task = None;
        let start = Instant::now();
        let mut spins = 0u32;
        // A helper is at most one work item from done: poll first, sleep if it takes long.
        while pool.running.load(Ordering::Acquire) != 0 {
            std::hint::spin_loop();
            spins += 1;
            if spins.is_multiple_of(64) && start.elapsed() > POLL {
                break;
            }
        }
        let mut st = pool.lock();
        while pool.running.load(Ordering::Acquire) != 0 {
            st = pool.idle.wait(st).unwrap_or_else(|p| p.into_inner());
        }
        st.panic.take()
    }
}

impl Drop for Serving {
    fn drop(&mut self) {
        // Only reached with work in flight when the caller's share panicked; that panic wins.
        drop(self.wait());
        self.0.busy.store(false, Ordering::Release);
    }
}

/// Runs `task` on this thread and on up to `helpers` pool threads at once, returning when all
/// of them have left it. A panic in a helper is raised again here, after the others are done.
pub(crate) fn run(helpers: usize, task: &(dyn Fn() + Sync)) {
    let pool = pool();
    let helpers = helpers.min(pool.helpers.load(Ordering::Relaxed));
    if helpers == 0
        || pool
            .busy
            .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
    {
        task();
        return;
    }
    // SAFETY: only the lifetime is erased. Helpers reach the task through the state; `Serving`
    // retracts it and waits for every helper that entered before this function returns or
    // unwinds, so the borrow outlives every use.
    let erased: *const (dyn Fn() + Sync + 'static) = unsafe {
        std::mem::transmute::<*const (dyn Fn() + Sync + '_), *const (dyn Fn() + Sync + 'static)>(task)
    };
    let serving = Serving(pool);
    {
        let mut st = pool.lock();
        st.task = Some(TaskPtr(erased));
        st.seats = helpers;
        st.panic = None;
        pool.generation.fetch_add(1, Ordering::Release);
    }
    pool.wake.notify_all();
    task();
    let panic = serving.wait();
    drop(serving);
    if let Some(payload) = panic {
        resume_unwind(payload);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The pool serves one task at a time, and these tests check what helpers do: one at a time.
    static SERIAL: Mutex<()> = Mutex::new(());

    fn serial() -> MutexGuard<'static, ()> {
        SERIAL.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Work items from a shared counter, each a little slow, so that helpers get some.
    fn items(n: usize, hits: &[AtomicUsize], next: &AtomicUsize) {
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            if i >= n {
                return;
            }
            std::thread::sleep(Duration::from_micros(200));
            hits[i].fetch_add(1, Ordering::Relaxed);
        }
    }

    #[test]
    fn every_item_runs_once_and_helpers_are_gone_after() {
        let _serial = serial();
        for round in 0..20 {
            let n = 1 + round * 3;
            let hits: Vec<AtomicUsize> = (0..n).map(|_| AtomicUsize::new(0)).collect();
            let next = AtomicUsize::new(0);
            let inside = AtomicUsize::new(0);
            run(4, &|| {
                inside.fetch_add(1, Ordering::SeqCst);
                items(n, &hits, &next);
                inside.fetch_sub(1, Ordering::SeqCst);
            });
            assert_eq!(inside.load(Ordering::SeqCst), 0, "a helper outlived run");
            assert!(hits.iter().all(|h| h.load(Ordering::Relaxed) == 1));
        }
    }

    #[test]
    fn helpers_do_join() {
        let _serial = serial();
        if helpers() == 0 {
            return;
        }
        let caller = std::thread::current().id();
        let joined = AtomicBool::new(false);
        let deadline = Instant::now() + Duration::from_secs(10);
        run(1, &|| {
            if std::thread::current().id() != caller {
                joined.store(true, Ordering::SeqCst);
            } else {
                // The caller waits for a helper here (test only: real tasks never wait).
                while !joined.load(Ordering::SeqCst) && Instant::now() < deadline {
                    std::thread::yield_now();
                }
            }
        });
        assert!(joined.load(Ordering::SeqCst), "no helper joined within 10 s");
    }

    #[test]
    fn a_helper_panic_reaches_the_caller_after_all_have_left() {
        let _serial = serial();
        if helpers() == 0 {
            return;
        }
        let caller = std::thread::current().id();
        let entered = AtomicBool::new(false);
        let finished = AtomicBool::new(false);
        let got = catch_unwind(AssertUnwindSafe(|| {
            run(1, &|| {
                if std::thread::current().id() != caller {
                    entered.store(true, Ordering::SeqCst);
                    panic!("helper failed");
                }
                let deadline = Instant::now() + Duration::from_secs(10);
                while !entered.load(Ordering::SeqCst) && Instant::now() < deadline {
                    std::thread::yield_now();
                }
                finished.store(true, Ordering::SeqCst);
            })
        }));
        let payload = got.expect_err("the helper's panic is raised in the caller");
        assert_eq!(payload.downcast_ref::<&str>(), Some(&"helper failed"));
        assert!(finished.load(Ordering::SeqCst));
        // The pool serves the next task normally.
        let n = AtomicUsize::new(0);
        run(2, &|| {
            n.fetch_add(1, Ordering::SeqCst);
        });
        assert!(n.load(Ordering::SeqCst) >= 1);
    }

    #[test]
    fn a_caller_panic_waits_for_the_helpers() {
        let _serial = serial();
        if helpers() == 0 {
            return;
        }
        let caller = std::thread::current().id();
        let entered = AtomicBool::new(false);
        let helper_done = AtomicBool::new(false);
        let got = catch_unwind(AssertUnwindSafe(|| {
            run(1, &|| {
                if std::thread::current().id() != caller {
                    entered.store(true, Ordering::SeqCst);
                    std::thread::sleep(Duration::from_millis(50));
                    helper_done.store(true, Ordering::SeqCst);
                    return;
                }
                let deadline = Instant::now() + Duration::from_secs(10);
                while !entered.load(Ordering::SeqCst) && Instant::now() < deadline {
                    std::thread::yield_now();
                }
                panic!("caller failed");
            })
        }));
        assert!(got.is_err());
        if entered.load(Ordering::SeqCst) {
            assert!(
                helper_done.load(Ordering::SeqCst),
                "run unwound before its helper left"
            );
        }
    }

    #[test]
    fn concurrent_callers_each_finish_their_own_task() {
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| {
                    for _ in 0..10 {
                        let n = 17;
                        let hits: Vec<AtomicUsize> = (0..n).map(|_| AtomicUsize::new(0)).collect();
                        let next = AtomicUsize::new(0);
                        run(3, &|| items(n, &hits, &next));
                        assert!(hits.iter().all(|h| h.load(Ordering::Relaxed) == 1));
                    }
                });
            }
        });
    }
}
