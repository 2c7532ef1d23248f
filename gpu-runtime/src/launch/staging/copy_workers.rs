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
use std::cell::UnsafeCell;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use crate::error::panic::drop_payload;
use crate::sync::{Condvar, LockRank, Mutex};

/// How long an idle helper keeps polling for the next task before it sleeps: a convenience
/// call has two copy phases a little apart, and calls often come back to back; a sleeping
/// helper takes a wake-up (tens of microseconds on a busy or virtual machine) to join.
const POLL: Duration = Duration::from_micros(200);
/// The most helpers the process starts (beyond this, memory bandwidth is long saturated).
pub(crate) const MAX_HELPERS: usize = 15;
/// Helpers' stacks: they run memcpy and a few driver calls.
const STACK: usize = 256 << 10;

/// The pool's state in one word, so that a helper joins a task with one compare-and-swap
/// (helpers that queued on a lock to join took up to 30 us to all get in): the task's
/// generation (high 32 bits), the seats left in it (16 bits) and the helpers inside it (16).
const ONE_RUNNING: u64 = 1;
const ONE_SEAT: u64 = 1 << 16;
const ONE_GENERATION: u64 = 1 << 32;
const SEATS: u64 = 0xffff << 16;

fn generation(state: u64) -> u64 {
    state >> 32
}
fn seats(state: u64) -> u64 {
    (state & SEATS) >> 16
}
fn running(state: u64) -> u64 {
    state & 0xffff
}

/// The current task, lifetime erased: valid while a helper is inside it (see `run`).
#[derive(Clone, Copy)]
struct TaskPtr(*const (dyn Fn() + Sync + 'static));

struct Pool {
    state: AtomicU64,
    /// Written only by the caller being served, while no seat is open and no helper is
    /// inside (`seats == running == 0`); read only by helpers that joined.
    task: UnsafeCell<Option<TaskPtr>>,
    /// The first panic a helper raised in the current task.
    panic: Mutex<Option<Box<dyn Any + Send>>>,
    /// Held by the one caller whose task the pool serves; others run theirs alone.
    busy: AtomicBool,
    /// Helpers asleep between tasks, and where they sleep.
    sleepers: AtomicUsize,
    sleep: Mutex<()>,
    wake: Condvar,
    /// Whether the caller sleeps for the last helper to leave, and where.
    waiting: AtomicBool,
    idle_lock: Mutex<()>,
    idle: Condvar,
    /// Helpers started.
    helpers: AtomicUsize,
}

// SAFETY: `task` is written only while no helper can read it (no seat open, none inside) and
// read only by helpers inside a task, which the writer waits out (see `run`); the pointer it
// holds is to a `Sync` closure. Everything else is atomics and locks.
unsafe impl Sync for Pool {}

fn pool() -> &'static Pool {
    static POOL: OnceLock<&'static Pool> = OnceLock::new();
    POOL.get_or_init(|| {
        let pool: &'static Pool = Box::leak(Box::new(Pool {
            state: AtomicU64::new(0),
            task: UnsafeCell::new(None),
            panic: Mutex::new(LockRank::CopyPoolPanic, None),
            busy: AtomicBool::new(false),
            sleepers: AtomicUsize::new(0),
            sleep: Mutex::new(LockRank::CopyPoolSleep, ()),
            wake: Condvar::new(),
            waiting: AtomicBool::new(false),
            idle_lock: Mutex::new(LockRank::CopyPoolIdle, ()),
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

/// Waits for a task of a generation other than `seen`: polls a while, then sleeps.
fn next_generation(pool: &Pool, seen: u64) -> u64 {
    let start = Instant::now();
    let mut spins = 0u32;
    loop {
        let g = generation(pool.state.load(Ordering::Acquire));
        if g != seen {
            return g;
        }
        std::hint::spin_loop();
        spins += 1;
        if spins.is_multiple_of(64) && start.elapsed() > POLL {
            break;
        }
    }
    let mut guard = pool.sleep.lock();
    // SeqCst with the caller's bump and check of `sleepers`: either it sees this sleeper and
    // wakes it (under the lock), or this sees its generation.
    pool.sleepers.fetch_add(1, Ordering::SeqCst);
    let g = loop {
        let g = generation(pool.state.load(Ordering::SeqCst));
        if g != seen {
            break g;
        }
        guard = pool.wake.wait(guard);
    };
    pool.sleepers.fetch_sub(1, Ordering::SeqCst);
    g
}

fn helper(pool: &'static Pool) {
    let mut seen = 0u64;
    loop {
        seen = next_generation(pool, seen);
        // Take a seat of that generation's task if one is left: one compare-and-swap.
        let mut s = pool.state.load(Ordering::Acquire);
        let joined = loop {
            if generation(s) != seen || seats(s) == 0 {
                break false;
            }
            match pool.state.compare_exchange_weak(
                s,
                s - ONE_SEAT + ONE_RUNNING,
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => break true,
                Err(now) => s = now,
            }
        };
        if !joined {
            continue;
        }
        // SAFETY: inside the task (counted in `running`), so the caller neither rewrites the
        // cell nor returns (freeing the closure) until this helper has left; the cell was
        // written before the generation was published, which the Acquire above saw.
        let task = unsafe { *pool.task.get() };
        if let Some(task) = task {
            // SAFETY: as above: the closure outlives this call.
            let result = catch_unwind(AssertUnwindSafe(|| unsafe { (*task.0)() }));
            if let Err(payload) = result {
                let mut first = pool.panic.lock();
                if first.is_none() {
                    *first = Some(payload);
                } else {
                    drop(first);
                    // Only the first is raised again; a later one is dropped here, where a
                    // panic of its drop must not end this helper inside the task (its caller
                    // would wait for it forever).
                    drop_payload(payload);
                }
            }
        }
        // The last touch of the task: Release publishes what it wrote to the caller. SeqCst
        // with the caller's `waiting`: either the caller sees no helper inside, or this sees
        // that it sleeps and wakes it.
        let before = pool.state.fetch_sub(ONE_RUNNING, Ordering::SeqCst);
        if running(before) == 1 && pool.waiting.load(Ordering::SeqCst) {
            let _guard = pool.idle_lock.lock();
            pool.idle.notify_all();
        }
    }
}

/// Ends the pool's service of one task: closes the seats, waits for the helpers inside, frees
/// the pool. In `Drop`, so that it also runs when the caller's share panics.
struct Serving(&'static Pool);

impl Serving {
    fn wait(&self) -> Option<Box<dyn Any + Send>> {
        let pool = self.0;
        pool.state.fetch_and(!SEATS, Ordering::AcqRel);
        let inside = || running(pool.state.load(Ordering::SeqCst)) != 0;
        let start = Instant::now();
        let mut spins = 0u32;
        // A helper is at most one work item from done: poll first, sleep if it takes long.
        while inside() {
            std::hint::spin_loop();
            spins += 1;
            if spins.is_multiple_of(64) && start.elapsed() > POLL {
                let mut guard = pool.idle_lock.lock();
                pool.waiting.store(true, Ordering::SeqCst);
                while inside() {
                    guard = pool.idle.wait(guard);
                }
                pool.waiting.store(false, Ordering::SeqCst);
                break;
            }
        }
        // SAFETY: no seat is open and no helper is inside: nothing reads the cell.
        unsafe { *pool.task.get() = None };
        pool.panic.lock().take()
    }
}

impl Drop for Serving {
    fn drop(&mut self) {
        // Only reached with work in flight when the caller's share panicked; that panic wins,
        // and a helper's payload is dropped where a panic of its drop (during this unwind,
        // an abort) cannot escape.
        if let Some(payload) = self.wait() {
            drop_payload(payload);
        }
        self.0.busy.store(false, Ordering::Release);
    }
}

/// Runs `task` on this thread and on up to `helpers` pool threads at once, returning when all
/// of them have left it. A panic in a helper is raised again here, after the others are done.
pub(crate) fn run(helpers: usize, task: &(dyn Fn() + Sync)) {
    let pool = pool();
    let helpers = helpers.min(pool.helpers.load(Ordering::Relaxed)).min(0xffff);
    if helpers == 0
        || pool
            .busy
            .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
    {
        task();
        return;
    }
    // SAFETY: only the lifetime is erased. Helpers reach the task only inside it; `Serving`
    // closes the seats and waits for every helper inside before this function returns or
    // unwinds, so the borrow outlives every use.
    let erased: *const (dyn Fn() + Sync + 'static) = unsafe {
        std::mem::transmute::<*const (dyn Fn() + Sync + '_), *const (dyn Fn() + Sync + 'static)>(task)
    };
    // SAFETY: this caller holds `busy`, and the last one's `Serving` left no seat open and no
    // helper inside: nothing reads the cell until the generation below is published.
    unsafe { *pool.task.get() = Some(TaskPtr(erased)) };
    // Taken out first: the payload's drop (which may run any code) runs with no lock held.
    let stale = pool.panic.lock().take();
    if let Some(stale) = stale {
        drop_payload(stale);
    }
    let serving = Serving(pool);
    pool.state
        .fetch_add(ONE_GENERATION + helpers as u64 * ONE_SEAT, Ordering::SeqCst);
    if pool.sleepers.load(Ordering::SeqCst) > 0 {
        let _guard = pool.sleep.lock();
        pool.wake.notify_all();
    }
    task();
    let panic = serving.wait();
    drop(serving);
    if let Some(payload) = panic {
        resume_unwind(payload);
    }
}

/// Held by every unit test that runs a task on the pool. The pool serves one task at a time:
/// while another test's task holds it, `run` runs the caller's task alone, and a test that
/// checks what helpers do would wait for a helper that never comes.
#[cfg(test)]
pub(crate) fn test_serial() -> crate::sync::MutexGuard<'static, ()> {
    static SERIAL: Mutex<()> = Mutex::new(LockRank::TestSerial, ());
    SERIAL.lock()
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let _serial = test_serial();
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

    /// Many short tasks back to back: helpers join and leave while seats open and close.
    #[test]
    fn back_to_back_tasks_each_finish_with_no_helper_left_inside() {
        let _serial = test_serial();
        for round in 0..2000 {
            let n = 1 + round % 24;
            let hits: Vec<AtomicUsize> = (0..n).map(|_| AtomicUsize::new(0)).collect();
            let next = AtomicUsize::new(0);
            let inside = AtomicUsize::new(0);
            run(1 + round % 8, &|| {
                inside.fetch_add(1, Ordering::SeqCst);
                while let Some(i) = Some(next.fetch_add(1, Ordering::Relaxed)).filter(|&i| i < n) {
                    hits[i].fetch_add(1, Ordering::Relaxed);
                }
                inside.fetch_sub(1, Ordering::SeqCst);
            });
            assert_eq!(inside.load(Ordering::SeqCst), 0, "a helper outlived run");
            assert!(hits.iter().all(|h| h.load(Ordering::Relaxed) == 1));
        }
    }

    #[test]
    fn helpers_do_join() {
        let _serial = test_serial();
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
        let _serial = test_serial();
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

    /// Two helpers (or the one there is) panic with payloads that panic again when dropped, and
    /// so does the caller:
    /// the second helper's payload is dropped by the helper, the first's while the caller's
    /// panic unwinds (an abort, were its panic not caught), and the pool serves the next task
    /// (a helper that died inside the task would keep it waiting forever).
    #[test]
    fn payloads_that_panic_when_dropped_neither_abort_nor_stall_the_pool() {
        use crate::error::panic::tests::Bomb;
        static DROPS: AtomicUsize = AtomicUsize::new(0);
        let _serial = test_serial();
        // With one helper, the second payload's path is not taken.
        let want = helpers().min(2);
        if want == 0 {
            return;
        }
        let caller = std::thread::current().id();
        let entered = AtomicUsize::new(0);
        let got = catch_unwind(AssertUnwindSafe(|| {
            run(2, &|| {
                if std::thread::current().id() != caller {
                    entered.fetch_add(1, Ordering::SeqCst);
                    std::panic::panic_any(Bomb {
                        depth: 1,
                        drops: &DROPS,
                    });
                }
                let deadline = Instant::now() + Duration::from_secs(10);
                while entered.load(Ordering::SeqCst) < want && Instant::now() < deadline {
                    std::thread::yield_now();
                }
                panic!("caller failed");
            })
        }));
        let payload = got.expect_err("the caller's panic is raised");
        assert_eq!(payload.downcast_ref::<&str>(), Some(&"caller failed"));
        let entered = entered.load(Ordering::SeqCst);
        assert!(entered >= 1, "no helper joined within 10 s");
        // Each helper's payload was dropped (and the payload its drop panicked with leaked).
        assert_eq!(DROPS.load(Ordering::SeqCst), entered);
        let n = AtomicUsize::new(0);
        run(2, &|| {
            n.fetch_add(1, Ordering::SeqCst);
        });
        assert!(n.load(Ordering::SeqCst) >= 1);
    }

    #[test]
    fn a_caller_panic_waits_for_the_helpers() {
        let _serial = test_serial();
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
