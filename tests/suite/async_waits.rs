//! The async waits on a real GPU, awaited with tokio (the library names no runtime): a
//! stream's and an event's completion, device-to-host copies into memory the future owns, the
//! staged In/Out call, many concurrent requests, and dropped futures, which must lose nothing
//! and free nothing the GPU still uses. Each result is checked against a CPU reference on
//! random data.

use std::sync::Arc;

use gpu_runtime::driver::{memcpy_dtoh_future, HostAllocFlags, StreamFlags};
use gpu_runtime::launch::Arg;
use gpu_runtime::tools::{PageLockedAllocator, PageLockedMemoryPool};
use gpu_runtime::{kernel, Context, Event, SourceModule, Stream};
use gpu_suite::{assert_close, Rng};

#[kernel(
    r#"
__global__ void affine(float *y, const float *x, float a, float b, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + b;
}"#
)]
fn affine(y: &mut [f32], x: &[f32], a: f32, b: f32, n: i32);

/// `affine` with host arrays: the typed In/Out call, staged through pinned memory.
#[kernel(
    r#"
__global__ void affine_host(float *y, const float *x, float a, float b, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + b;
}"#
)]
fn affine_host(#[Out] y: &mut [f32], #[In] x: &[f32], a: f32, b: f32, n: i32);

/// y += a x, on host arrays: an `#[InOut]` argument beside an `#[In]` one.
#[kernel(
    r#"
__global__ void axpy_host(float a, const float *x, float *y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] += a * x[i];
}"#
)]
fn axpy_host(a: f32, #[In] x: &[f32], #[InOut] y: &mut [f32], n: i32);

/// Keeps a stream busy for about `cycles` clock ticks, so that work queued after it is
/// still pending when the host acts.
#[kernel(
    r#"
__global__ void spin(long long cycles) {
    long long start = clock64();
    while (clock64() - start < cycles) {}
}"#
)]
fn spin(cycles: i64);

fn reference(x: &[f32], a: f32, b: f32) -> Vec<f32> {
    x.iter().map(|&x| a * x + b).collect()
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(4)
        .enable_time()
        .build()
        .unwrap()
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn stream_and_event_futures_complete_after_the_work_before_them() {
    let ctx = Context::default().unwrap();
    let mut rng = Rng::new(281);
    let n = 1 << 20;
    let x = rng.vec_f32(n);
    let (a, b) = (rng.f32(), rng.f32());
    runtime().block_on(async {
        let stream = Stream::with_flags(&ctx, StreamFlags::NonBlocking).unwrap();
        let (k, s) = (affine::prepare(&ctx).unwrap(), spin::prepare(&ctx).unwrap());
        let xd = ctx.to_device(&x).unwrap();
        let mut y = ctx.alloc_zeros::<f32>(n).unwrap();
        // The kernel waits behind a spin of ~10 ms: the future must not complete before it.
        s.prepared_async_call(1, 1, &stream, 10_000_000).unwrap();
        k.prepared_async_call(n.div_ceil(256), 256, &stream, &mut y, &xd, a, b, n as i32)
            .unwrap();
        let done = stream.synchronize_future().unwrap();
        assert!(!stream.is_done().unwrap(), "the spin is still running");
        done.await.unwrap();
        assert!(stream.is_done().unwrap());
        assert_close(&y.to_vec().unwrap(), &reference(&x, a, b), 1e-6);

        // An event: complete once the work before its record has finished.
        let event = Event::new(&ctx).unwrap();
        s.prepared_async_call(1, 1, &stream, 10_000_000).unwrap();
        k.prepared_async_call(n.div_ceil(256), 256, &stream, &mut y, &xd, b, a, n as i32)
            .unwrap();
        event.record(Some(&stream)).unwrap();
        let done = event.synchronize_future().unwrap();
        assert!(!event.query().unwrap());
        done.await.unwrap();
        assert!(event.query().unwrap());
        assert_close(&y.to_vec().unwrap(), &reference(&x, b, a), 1e-6);
        // Never recorded: complete at once, as cuEventSynchronize.
        Event::new(&ctx)
            .unwrap()
            .synchronize_future()
            .unwrap()
            .await
            .unwrap();
    });
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_device_to_host_copy_completes_into_memory_the_future_owns() {
    let ctx = Context::default().unwrap();
    let mut rng = Rng::new(282);
    let n = 3 << 20;
    let x = rng.vec_f32(n);
    let (a, b) = (rng.f32(), rng.f32());
    runtime().block_on(async {
        let stream = Stream::new(&ctx).unwrap();
        let k = affine::prepare(&ctx).unwrap();
        let xd = ctx.to_device(&x).unwrap();
        let mut y = ctx.alloc_zeros::<f32>(n).unwrap();
        k.prepared_async_call(n.div_ceil(256), 256, &stream, &mut y, &xd, a, b, n as i32)
            .unwrap();
        // The copy is ordered after the kernel that writes `y`.
        let host = y.to_host_future(&stream).unwrap().await.unwrap();
        assert_close(host.as_slice_memory_order(), &reference(&x, a, b), 1e-6);
        // Into an array of a pool, handed back by the future.
        let pool = PageLockedMemoryPool::new(&ctx, PageLockedAllocator::new(HostAllocFlags::NONE));
        let dst = pool.allocate::<f32, _>(n).unwrap();
        let back = memcpy_dtoh_future(dst, &xd, &stream).unwrap().await.unwrap();
        assert_eq!(back.as_slice_memory_order(), &x[..]);
        // A length mismatch is refused before anything is queued.
        assert!(memcpy_dtoh_future(pool.allocate::<f32, _>(n - 1).unwrap(), &xd, &stream).is_err());
    });
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_dropped_copy_future_frees_nothing_the_gpu_still_uses() {
    let ctx = Context::default().unwrap();
    let mut rng = Rng::new(283);
    let n = 4 << 20;
    let (first, second) = (rng.vec_f32(n), rng.vec_f32(n));
    let pool = PageLockedMemoryPool::new(&ctx, PageLockedAllocator::new(HostAllocFlags::NONE));
    let (slow, fast) = (
        Stream::with_flags(&ctx, StreamFlags::NonBlocking).unwrap(),
        Stream::with_flags(&ctx, StreamFlags::NonBlocking).unwrap(),
    );
    let s = spin::prepare(&ctx).unwrap();
    let (d1, d2) = (ctx.to_device(&first).unwrap(), ctx.to_device(&second).unwrap());
    runtime().block_on(async {
        for round in 0..8 {
            // A copy queued behind ~20 ms of spin, its future dropped at once: the pinned
            // block goes back to the pool with the copy outstanding on it.
            s.prepared_async_call(1, 1, &slow, 20_000_000).unwrap();
            let dropped = memcpy_dtoh_future(pool.allocate::<f32, _>(n).unwrap(), &d1, &slow).unwrap();
            drop(dropped);
            // The pool hands the same block out again: the copy into it on the other stream
            // must land after the dropped one, or `first` would overwrite `second`.
            let got = memcpy_dtoh_future(pool.allocate::<f32, _>(n).unwrap(), &d2, &fast)
                .unwrap()
                .await
                .unwrap();
            assert!(
                got.as_slice_memory_order() == &second[..],
                "round {round}: the dropped copy's data arrived after the awaited one"
            );
        }
        // And a dropped `to_host_future` (memory of its own, freed through the graveyard).
        for _ in 0..8 {
            s.prepared_async_call(1, 1, &slow, 5_000_000).unwrap();
            drop(d1.to_host_future(&slow).unwrap());
        }
        slow.synchronize_future().unwrap().await.unwrap();
        assert_eq!(d1.to_vec().unwrap(), first);
    });
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn the_staged_call_awaits_its_outputs_and_a_dropped_one_loses_nothing() {
    let ctx = Context::default().unwrap();
    let mut rng = Rng::new(284);
    let n = 1 << 20;
    let x = rng.vec_f32(n);
    let (a, b) = (rng.f32(), rng.f32());
    let module = SourceModule::new(
        r#"
__global__ void affine(float *y, const float *x, float a, float b, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + b;
}"#,
    )
    .load(&ctx)
    .unwrap();
    let f = module.get_function("affine").unwrap().prepare_declared().unwrap();
    let grid = n.div_ceil(256);
    runtime().block_on(async {
        let mut y = vec![0f32; n];
        let mut args = [
            Arg::host_out(&mut y),
            Arg::host_in(&x),
            a.into(),
            b.into(),
            (n as i32).into(),
        ];
        f.call_future(grid, 256, None, &mut args).unwrap().await.unwrap();
        assert_close(&y, &reference(&x, a, b), 1e-6);

        // Dropped before it completes: the arrays are free again at once, and the next call
        // (which reuses the staging memory) is right.
        let stream = Stream::new(&ctx).unwrap();
        spin::prepare(&ctx)
            .unwrap()
            .prepared_async_call(1, 1, &stream, 20_000_000)
            .unwrap();
        let mut z = vec![0f32; n];
        let mut args = [
            Arg::host_out(&mut z),
            Arg::host_in(&x),
            b.into(),
            a.into(),
            (n as i32).into(),
        ];
        drop(f.call_future(grid, 256, Some(&stream), &mut args).unwrap());
        z.fill(-1.0);
        let mut args = [
            Arg::host_out(&mut y),
            Arg::host_in(&x),
            b.into(),
            a.into(),
            (n as i32).into(),
        ];
        f.call_future(grid, 256, Some(&stream), &mut args)
            .unwrap()
            .await
            .unwrap();
        assert_close(&y, &reference(&x, b, a), 1e-6);
        assert!(
            z.iter().all(|&v| v == -1.0),
            "a dropped call wrote into its host array"
        );
    });
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn many_concurrent_requests_each_await_their_own_result() {
    let ctx = Context::default().unwrap();
    let k = Arc::new(affine::prepare(&ctx).unwrap());
    let streams: Arc<Vec<Stream>> = Arc::new(
        (0..8)
            .map(|_| Stream::with_flags(&ctx, StreamFlags::NonBlocking).unwrap())
            .collect(),
    );
    let pool = Arc::new(PageLockedMemoryPool::new(
        &ctx,
        PageLockedAllocator::new(HostAllocFlags::NONE),
    ));
    let rt = runtime();
    let tasks: Vec<_> = (0..256u64)
        .map(|r| {
            let (ctx, k, streams, pool) = (ctx.clone(), k.clone(), streams.clone(), pool.clone());
            rt.spawn(async move {
                let mut rng = Rng::new(1000 + r);
                let n = 1000 + (rng.next_u64() % 50_000) as usize;
                let x = rng.vec_f32(n);
                let (a, b) = (rng.f32(), rng.f32());
                let stream = &streams[r as usize % streams.len()];
                let xd = ctx.to_device(&x)?;
                let mut y = ctx.alloc::<f32>(n)?;
                k.prepared_async_call(n.div_ceil(256), 256, stream, &mut y, &xd, a, b, n as i32)?;
                let host = memcpy_dtoh_future(pool.allocate::<f32, _>(n)?, &y, stream)?.await?;
                Ok::<_, gpu_runtime::Error>((host.as_slice_memory_order().to_vec(), reference(&x, a, b)))
            })
        })
        .collect();
    rt.block_on(async {
        for t in tasks {
            let (got, want) = t.await.unwrap().unwrap();
            assert_close(&got, &want, 1e-6);
        }
    });
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn the_generated_call_future_awaits_its_outputs_and_a_dropped_one_loses_nothing() {
    let ctx = Context::default().unwrap();
    let mut rng = Rng::new(287);
    let n = (1 << 20) + 3;
    let x = rng.vec_f32(n);
    let y0 = rng.vec_f32(n);
    let (a, b) = (rng.f32(), rng.f32());
    let grid = n.div_ceil(256);
    let (affine, axpy) = (
        affine_host::prepare(&ctx).unwrap(),
        axpy_host::prepare(&ctx).unwrap(),
    );
    runtime().block_on(async {
        // #[Out] and #[In].
        let mut y = vec![0f32; n];
        affine
            .call_future(grid, 256, &mut y, &x, a, b, n as i32)
            .await
            .unwrap();
        assert_close(&y, &reference(&x, a, b), 1e-6);
        // #[InOut] beside #[In], on a stream of ours.
        let stream = Stream::new(&ctx).unwrap();
        let mut y = y0.clone();
        axpy.call_future_on(grid, 256, &stream, a, &x, &mut y, n as i32)
            .await
            .unwrap();
        let want: Vec<f32> = x.iter().zip(&y0).map(|(&x, &y)| y + a * x).collect();
        assert_close(&y, &want, 1e-6);

        // Dropped before it completes (staged and launched behind ~20 ms of spin, polled
        // once): the arrays are free again at once and unchanged, and the next call (which
        // reuses the staging memory) is right.
        spin::prepare(&ctx)
            .unwrap()
            .prepared_async_call(1, 1, &stream, 20_000_000)
            .unwrap();
        let mut z = vec![-1f32; n];
        let mut w = y0.clone();
        let early = tokio::time::timeout(
            std::time::Duration::from_millis(2),
            affine.call_future_on(grid, 256, &stream, &mut z, &x, b, a, n as i32),
        )
        .await;
        assert!(early.is_err(), "the call completed behind the spin");
        let early = tokio::time::timeout(
            std::time::Duration::from_millis(2),
            axpy.call_future_on(grid, 256, &stream, a, &x, &mut w, n as i32),
        )
        .await;
        // The spin may have ended by now: completed or dropped, never half-written.
        if early.is_err() {
            assert_eq!(w, y0, "a dropped call wrote into its #[InOut] array");
        }
        assert!(
            z.iter().all(|&v| v == -1.0),
            "a dropped call wrote into its #[Out] array"
        );
        let mut y = vec![0f32; n];
        affine
            .call_future_on(grid, 256, &stream, &mut y, &x, b, a, n as i32)
            .await
            .unwrap();
        assert_close(&y, &reference(&x, b, a), 1e-6);
    });

    // The future is Send: tasks on a multi-threaded runtime await it across threads.
    let rt = runtime();
    let affine = Arc::new(affine);
    let tasks: Vec<_> = (0..32u64)
        .map(|r| {
            let affine = affine.clone();
            rt.spawn(async move {
                let mut rng = Rng::new(2000 + r);
                let n = 1000 + (rng.next_u64() % 50_000) as usize;
                let x = rng.vec_f32(n);
                let (a, b) = (rng.f32(), rng.f32());
                let mut y = vec![0f32; n];
                affine
                    .call_future(n.div_ceil(256), 256, &mut y, &x, a, b, n as i32)
                    .await?;
                Ok::<_, gpu_runtime::Error>((y, reference(&x, a, b)))
            })
        })
        .collect();
    rt.block_on(async {
        for t in tasks {
            let (got, want) = t.await.unwrap().unwrap();
            assert_close(&got, &want, 1e-6);
        }
    });
}
