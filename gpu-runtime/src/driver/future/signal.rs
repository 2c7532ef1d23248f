//! The hand-over between a CUDA host function and the future that waits for it: the host
//! function fires the signal on a driver thread, the future's `poll` reads it on the
//! executor's. No runtime is named: a [`Waker`] is all a future gets from any executor.

use std::sync::Arc;
use std::task::{Context as TaskContext, Poll, Waker};

use crate::sync::{LockRank, Mutex, MutexGuard};

/// Set once, by whatever runs when the GPU work it stands for has finished; the waker of the
/// last `poll` that found it unset is woken then.
#[derive(Debug)]
pub(crate) struct Signal {
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    fired: bool,
    /// The task to wake when fired: the latest poll's (a future may move between tasks).
    waker: Option<Waker>,
}

impl Signal {
    /// An unfired signal, shared by the future and the host function that fires it.
    pub(crate) fn new() -> Arc<Signal> {
        Arc::new(Signal {
            state: Mutex::new(LockRank::FutureSignal, State::default()),
        })
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock()
    }

    /// Marks the signal fired and wakes the task that last polled it. Called on the driver's
    /// callback thread, so it only locks, sets a flag and wakes: a waker schedules its task,
    /// it does not run it (the task's `poll`, which may call CUDA, runs on its executor).
    pub(crate) fn fire(&self) {
        let waker = {
            let mut state = self.state();
            state.fired = true;
            state.waker.take()
        };
        // Woken outside the lock: a waker may poll at once on another thread, which locks it.
        if let Some(w) = waker {
            w.wake();
        }
    }

    /// Ready once fired; else keeps `cx`'s waker (replacing an older task's) and is pending.
    pub(crate) fn poll_fired(&self, cx: &mut TaskContext<'_>) -> Poll<()> {
        let mut state = self.state();
        if state.fired {
            return Poll::Ready(());
        }
        let replaced = match &mut state.waker {
            Some(w) if w.will_wake(cx.waker()) => None,
            slot => slot.replace(cx.waker().clone()),
        };
        // The replaced waker is dropped after the lock: it may be a task's last reference, and
        // dropping the task may drop another future of this crate, which locks its own signal.
        drop(state);
        drop(replaced);
        Poll::Pending
    }

    /// Whether it was fired.
    #[cfg(test)]
    pub(crate) fn is_fired(&self) -> bool {
        self.state().fired
    }

    /// Forgets the waker: the future is gone, so firing later wakes no task that no longer
    /// waits for it.
    pub(crate) fn forget_waker(&self) {
        // Taken under the lock, dropped after it (see `poll_fired`).
        let forgotten = self.state().waker.take();
        drop(forgotten);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::task::Wake;

    /// Counts its wakes.
    #[derive(Default)]
    struct Count(AtomicUsize);
    impl Wake for Count {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    fn waker() -> (Arc<Count>, Waker) {
        let count = Arc::new(Count::default());
        (count.clone(), Waker::from(count))
    }

    #[test]
    fn a_poll_before_the_fire_is_pending_and_woken_once_by_it() {
        let signal = Signal::new();
        let (count, w) = waker();
        let mut cx = TaskContext::from_waker(&w);
        assert!(signal.poll_fired(&mut cx).is_pending());
        assert!(signal.poll_fired(&mut cx).is_pending());
        assert_eq!(count.0.load(Ordering::SeqCst), 0);
        signal.fire();
        assert_eq!(count.0.load(Ordering::SeqCst), 1);
        assert!(signal.poll_fired(&mut cx).is_ready());
        // Firing twice (it never is) wakes nobody again: the waker was taken.
        signal.fire();
        assert_eq!(count.0.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn a_fire_before_the_first_poll_is_ready_without_a_wake() {
        let signal = Signal::new();
        signal.fire();
        let (count, w) = waker();
        assert!(signal.poll_fired(&mut TaskContext::from_waker(&w)).is_ready());
        assert!(signal.is_fired());
        assert_eq!(count.0.load(Ordering::SeqCst), 0);
    }

    #[test]
    fn only_the_latest_task_to_poll_is_woken() {
        let signal = Signal::new();
        let (first, w1) = waker();
        let (second, w2) = waker();
        assert!(signal.poll_fired(&mut TaskContext::from_waker(&w1)).is_pending());
        // The future moved to another task (as `select!` or a spawn may do).
        assert!(signal.poll_fired(&mut TaskContext::from_waker(&w2)).is_pending());
        signal.fire();
        assert_eq!(first.0.load(Ordering::SeqCst), 0);
        assert_eq!(second.0.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn a_dropped_future_forgets_its_waker_and_the_fire_still_completes() {
        let signal = Signal::new();
        let (count, w) = waker();
        assert!(signal.poll_fired(&mut TaskContext::from_waker(&w)).is_pending());
        signal.forget_waker();
        signal.fire();
        assert_eq!(count.0.load(Ordering::SeqCst), 0);
        assert!(signal.is_fired());
    }

    #[test]
    fn a_fire_from_another_thread_wakes_a_waiting_poller() {
        // A minimal executor: park until woken, as any runtime's would.
        struct Unpark(std::thread::Thread);
        impl Wake for Unpark {
            fn wake(self: Arc<Self>) {
                self.0.unpark();
            }
        }
        let signal = Signal::new();
        let w = Waker::from(Arc::new(Unpark(std::thread::current())));
        let firing = {
            let signal = signal.clone();
            std::thread::spawn(move || {
                std::thread::sleep(std::time::Duration::from_millis(20));
                signal.fire();
            })
        };
        let mut polls = 0;
        while signal.poll_fired(&mut TaskContext::from_waker(&w)).is_pending() {
            polls += 1;
            std::thread::park();
        }
        firing.join().unwrap();
        assert!(polls >= 1, "the poll before the fire was pending");
    }
}
