//! Panics caught where unwinding must stop: a host function on a driver thread, a C deleter, a
//! helper thread. A caught panic's payload is any type, whose `Drop` may panic in turn; dropped
//! where the first panic was caught, that second panic would unwind into the driver (or abort
//! the process, from an `extern "C"` function or during an unwind). So the payload is dropped
//! under a `catch_unwind` of its own, and a payload of that second panic is leaked.

use std::any::Any;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// Runs `f`, catching a panic: true when `f` returned. Nothing `f` does escapes, not even a
/// panic payload that panics when dropped (see [`drop_payload`]). The panic hook has reported
/// the panic (on stderr by default) by the time this returns.
pub(crate) fn swallow_panic(f: impl FnOnce()) -> bool {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(()) => true,
        Err(payload) => {
            drop_payload(payload);
            false
        }
    }
}

/// Drops a caught panic's payload without letting a panic of its `Drop` escape: that panic is
/// caught too, and its own payload, which might panic again, is leaked instead of dropped.
pub(crate) fn drop_payload(payload: Box<dyn Any + Send>) {
    if let Err(again) = catch_unwind(AssertUnwindSafe(move || drop(payload))) {
        std::mem::forget(again);
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    /// A panic payload whose drop panics (with a payload of its own kind, `depth` times more),
    /// counting its drops in `drops`; what a callback may panic with.
    pub(crate) struct Bomb {
        pub(crate) depth: usize,
        pub(crate) drops: &'static AtomicUsize,
    }

    impl Drop for Bomb {
        fn drop(&mut self) {
            self.drops.fetch_add(1, Ordering::SeqCst);
            if self.depth > 0 {
                std::panic::panic_any(Bomb {
                    depth: self.depth - 1,
                    drops: self.drops,
                });
            }
        }
    }

    #[test]
    fn a_payload_that_panics_when_dropped_is_swallowed() {
        static DROPS: AtomicUsize = AtomicUsize::new(0);
        // Depth 0: a plain payload, dropped. Depth 1 and more: its drop panics, and the
        // payload of that panic is leaked, never dropped.
        for (depth, drops) in [(0, 1), (1, 1), (5, 1)] {
            DROPS.store(0, Ordering::SeqCst);
            let ran = swallow_panic(|| std::panic::panic_any(Bomb { depth, drops: &DROPS }));
            assert!(!ran);
            assert_eq!(DROPS.load(Ordering::SeqCst), drops, "depth {depth}");
        }
        assert!(swallow_panic(|| {}));
    }

    #[test]
    fn drop_payload_never_unwinds() {
        static DROPS: AtomicUsize = AtomicUsize::new(0);
        drop_payload(Box::new(Bomb {
            depth: 3,
            drops: &DROPS,
        }));
        assert_eq!(DROPS.load(Ordering::SeqCst), 1);
        drop_payload(Box::new("plain"));
    }
}
