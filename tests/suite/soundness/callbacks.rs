//! A host function that panics ends there, on the driver's thread, even when its panic's
//! payload panics again when dropped (issue 41, item 9): the process lives on, and so does the
//! stream, whose later work runs.

use std::sync::mpsc;
use std::time::Duration;

use gpu_suite::{assert_close, Rng};

use super::{ctx, cycles, filled, grid, k, non_blocking, N, TOL};

/// A panic payload whose drop panics too.
struct Bomb(u32);

impl Drop for Bomb {
    fn drop(&mut self) {
        panic!("the payload of callback {}'s panic panics when dropped", self.0);
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_callback_panicking_with_a_payload_that_panics_when_dropped_leaves_the_stream_working() {
    let ctx = ctx();
    let fill = k::late_fill::prepare(&ctx).unwrap();
    let stream = non_blocking(&ctx);
    let mut rng = Rng::new(46);
    let mut x = ctx.alloc::<f32>(N).unwrap();
    for round in 0..5u32 {
        let (a, b, a2, b2) = (rng.f32(), rng.f32(), rng.f32(), rng.f32());
        fill.prepared_async_call(grid(N), 256, &stream, &mut x, a, b, N as i32, cycles(&ctx, 1.0))
            .unwrap();
        stream
            .add_callback(move || std::panic::panic_any(Bomb(round)))
            .unwrap();
        let (tx, rx) = mpsc::channel();
        stream.add_callback(move || tx.send(round).unwrap()).unwrap();
        fill.prepared_async_call(grid(N), 256, &stream, &mut x, a2, b2, N as i32, 0)
            .unwrap();
        assert_eq!(
            rx.recv_timeout(Duration::from_secs(30)),
            Ok(round),
            "the callback after the panicking one did not run"
        );
        assert_close(&x.to_vec().unwrap(), &filled(a2, b2, N), TOL);
    }
}
