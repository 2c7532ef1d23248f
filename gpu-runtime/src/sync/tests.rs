//! The locks and the check of their order, without a GPU.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use super::LockRank::*;
use super::*;

#[test]
fn the_order_is_the_declared_one() {
    assert!(PrintfCapture < ModuleCache && ModuleCache < StreamUses && StreamUses < ContextRegistry);
    assert!(LendGroups < LendGroup && GraveyardPending < GraveyardSpare && GraveyardPending < GraveyardCache);
    assert!(ModuleGate.by_address() && !StreamUses.by_address());
}

#[test]
fn locks_taken_in_rank_order_nest_and_are_let_go_in_any_order() {
    let uses = Mutex::new(StreamUses, 1);
    let pending = Mutex::new(GraveyardPending, 2);
    let cache = Mutex::new(GraveyardCache, 3);
    let pool = SpinLock::new(PoolState, 4);
    let a = uses.lock();
    let p = pool.lock();
    let b = pending.lock();
    #[cfg(debug_assertions)]
    assert_eq!(held::held(), [StreamUses, PoolState, GraveyardPending]);
    // Not in stack order: the rest stays listed, and a lock above them all may still be taken.
    drop(a);
    drop(p);
    let c = cache.lock();
    #[cfg(debug_assertions)]
    assert_eq!(held::held(), [GraveyardPending, GraveyardCache]);
    assert_eq!(*b + *c, 5);
    drop((b, c));
    #[cfg(debug_assertions)]
    assert!(held::held().is_empty());
    // Once let go, a lower one may be taken again.
    assert_eq!(*uses.lock(), 1);
}

#[test]
fn a_lock_whose_holder_panicked_is_used_as_it_is() {
    let m = Arc::new(Mutex::new(StagingEvents, vec![1]));
    let l = Arc::new(RwLock::new(ModuleGate, 7));
    let (m2, l2) = (Arc::clone(&m), Arc::clone(&l));
    let panicked = std::thread::spawn(move || {
        let mut v = m2.lock();
        v.push(2);
        let _w = l2.write();
        panic!("a holder panics");
    })
    .join();
    assert!(panicked.is_err());
    assert_eq!(*m.lock(), [1, 2]);
    assert_eq!(*l.read(), 7);
    *l.write() += 1;
    assert_eq!(*l.read(), 8);
    let m = Arc::try_unwrap(m).expect("the thread is gone");
    assert_eq!(m.into_inner(), [1, 2]);
}

#[test]
fn a_condvar_wait_lets_the_lock_go_and_keeps_it_listed() {
    let shared = Arc::new((Mutex::new(CopyPoolIdle, false), Condvar::new()));
    let other = Arc::clone(&shared);
    let setter = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(20));
        *other.0.lock() = true;
        other.1.notify_all();
    });
    let mut ready = shared.0.lock();
    while !*ready {
        ready = shared.1.wait(ready);
        #[cfg(debug_assertions)]
        assert_eq!(held::held(), [CopyPoolIdle]);
    }
    drop(ready);
    setter.join().unwrap();
    // A timed wait with nobody to notify comes back with the lock after its timeout.
    let started = std::time::Instant::now();
    let guard = shared.1.wait_timeout(shared.0.lock(), Duration::from_millis(10));
    assert!(*guard);
    assert!(started.elapsed() >= Duration::from_millis(10));
}

#[test]
fn a_spin_lock_excludes() {
    let counter = SpinLock::new(PoolState, 0u64);
    let inside = AtomicBool::new(false);
    std::thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| {
                for _ in 0..1000 {
                    let mut c = counter.lock();
                    assert!(!inside.swap(true, Ordering::SeqCst), "two holders at once");
                    *c += 1;
                    inside.store(false, Ordering::SeqCst);
                }
            });
        }
    });
    assert_eq!(*counter.lock(), 4000);
}

/// The check of the order, which debug builds make.
#[cfg(debug_assertions)]
mod checked {
    use std::panic::{catch_unwind, AssertUnwindSafe};
    use std::sync::Arc;

    use super::super::LockRank::*;
    use super::super::*;

    /// The text of a caught panic.
    fn message(payload: Box<dyn std::any::Any + Send>) -> String {
        match payload.downcast::<String>() {
            Ok(s) => *s,
            Err(p) => p
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .unwrap_or_default(),
        }
    }

    #[test]
    fn a_lock_taken_below_one_held_panics_naming_both_before_taking_it() {
        let high = Mutex::new(GraveyardCache, ());
        let low = Mutex::new(StreamUses, ());
        let got = catch_unwind(AssertUnwindSafe(|| {
            let _high = high.lock();
            let _low = low.lock();
        }));
        let text = message(got.expect_err("a lock below one held is refused"));
        assert!(text.contains("taking StreamUses"), "{text}");
        assert!(text.contains("while holding GraveyardCache"), "{text}");
        assert!(text.contains("sync/rank.rs"), "{text}");
        // The unwind let the held lock go and took it off the list; the refused one was never
        // taken (this thread would deadlock on it otherwise).
        assert!(held::held().is_empty());
        let _low = low.lock();
        let _high = high.lock();
    }

    #[test]
    fn a_rank_other_than_the_gates_cannot_follow_itself() {
        let (a, b) = (Mutex::new(StreamUses, ()), Mutex::new(StreamUses, ()));
        let got = catch_unwind(AssertUnwindSafe(|| {
            let _a = a.lock();
            let _b = b.lock();
        }));
        assert!(message(got.unwrap_err()).contains("taking StreamUses"));
    }

    #[test]
    fn module_gates_nest_in_address_order_only() {
        let gates = [RwLock::new(ModuleGate, ()), RwLock::new(ModuleGate, ())];
        let mut by_address: Vec<&RwLock<()>> = gates.iter().collect();
        by_address.sort_by_key(|g| *g as *const RwLock<()> as usize);
        {
            let _first = by_address[0].read();
            let _second = by_address[1].write();
            let uses = Mutex::new(StreamUses, ());
            let _uses = uses.lock();
        }
        let got = catch_unwind(AssertUnwindSafe(|| {
            let _second = by_address[1].read();
            let _first = by_address[0].read();
        }));
        assert!(message(got.unwrap_err()).contains("while holding ModuleGate"));
        assert!(held::held().is_empty());
    }

    #[test]
    fn the_order_is_checked_per_thread() {
        let mut low = Arc::new(Mutex::new(StreamUses, 0));
        let high = Mutex::new(ContextRegistry, ());
        let _high = high.lock();
        let other = Arc::clone(&low);
        // Another thread holds nothing: it may take the low lock while this one holds a high one.
        std::thread::spawn(move || *other.lock() += 1).join().unwrap();
        assert_eq!(held::held(), [ContextRegistry]);
        assert_eq!(*Arc::get_mut(&mut low).expect("the thread is gone").get_mut(), 1);
    }

    #[test]
    fn a_spin_lock_is_ranked_too() {
        let pool = SpinLock::new(PoolState, ());
        let got = catch_unwind(AssertUnwindSafe(|| {
            let pending = Mutex::new(GraveyardPending, ());
            let _pending = pending.lock();
            let _pool = pool.lock();
        }));
        assert!(message(got.unwrap_err()).contains("taking PoolState"));
        // Refused before it was taken: it is free.
        let _pool = pool.lock();
    }
}
