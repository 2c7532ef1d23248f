//! Safe code cannot make the GPU use memory after it was freed, handed out again, or written on
//! another stream: each test provokes one such hazard in a loop, with kernels that wait before
//! they read or write (so that the hazard would show if nothing ordered it), on random data,
//! and checks every result against the CPU. No test synchronizes by hand where the crate is
//! supposed to.
//!
//! Run on a GPU machine: `cargo test --test suite -- --ignored soundness::`; under compute-sanitizer
//! (memcheck, racecheck) with `scripts/sanitize.sh`. `module_vars.rs` does the same for a
//! module's `__device__` and `__constant__` variables, `callbacks.rs` for host functions that
//! panic.

use gpu_runtime::driver::{
    memcpy_dtoh_async, memcpy_htod_async, ArrayDescriptor, ArrayFlags, AttachFlags, ContextFlags, CudaArray,
    DeviceAttribute, HostAllocFlags, HostRegisterFlags, StreamFlags, Surface, SurfaceObject, Texture,
    TextureDesc, TextureObject,
};
use gpu_runtime::tools::{DeviceMemoryPool, PageLockedAllocator, PageLockedMemoryPool};
use gpu_runtime::{kernel, Context, Event, Stream};
use gpu_suite::{assert_close, Rng};

mod callbacks;
// Host arrays with reversed axes, page-locked and copied both ways (issue 41).
mod host_layouts;
mod module_vars;

use crate::common::ctx;

#[kernel(
    r#"
__device__ void wait_cycles(long long cycles) {
    if (cycles <= 0) return;
    long long t0 = clock64();
    while (clock64() - t0 < cycles) {}
}

// Waits, then writes y[i] = a * i + b.
__global__ void late_fill(float *y, float a, float b, int n, long long cycles) {
    wait_cycles(cycles);
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * (float)i + b;
}

// Waits, then reads x: y[i] = 2 x[i] + 1.
__global__ void late_map(const float *x, float *y, int n, long long cycles) {
    wait_cycles(cycles);
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = 2.0f * x[i] + 1.0f;
}

// Waits, then reads a 1D array through a texture: out[i] = tex[i].
__global__ void late_tex(cudaTextureObject_t tex, float *out, int n, long long cycles) {
    wait_cycles(cycles);
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex1D<float>(tex, i + 0.5f);
}

// Waits, then writes a 1D array through its surface: surf[i] = x[i].
__global__ void late_surf(cudaSurfaceObject_t surf, const float *x, int n, long long cycles) {
    wait_cycles(cycles);
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) surf1Dwrite(x[i], surf, i * (int)sizeof(float));
}

__constant__ float offset;

// Waits, then reads the constant: out[i] = offset.
__global__ void late_const(float *out, int n, long long cycles) {
    wait_cycles(cycles);
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = offset;
}
"#
)]
mod k {
    fn late_fill(y: &mut [f32], a: f32, b: f32, n: i32, cycles: i64);
    fn late_map(x: &[f32], y: &mut [f32], n: i32, cycles: i64);
    fn late_tex(tex: TextureObject, out: &mut [f32], n: i32, cycles: i64);
    fn late_surf(surf: SurfaceObject, x: &[f32], n: i32, cycles: i64);
    fn late_const(out: &mut [f32], n: i32, cycles: i64);
}

/// Cycles of `clock64()` for about `ms` milliseconds.
fn cycles(ctx: &Context, ms: f64) -> i64 {
    let khz = ctx.device().attribute(DeviceAttribute::ClockRate).unwrap() as f64;
    (khz * ms) as i64
}

fn grid(n: usize) -> u32 {
    (n as u32).div_ceil(256)
}

/// What `late_fill` writes. The GPU fuses `a * i + b` into one multiply-add (one rounding),
/// hence `mul_add`; the comparisons allow one rounding more, while data from another round, or
/// written out of order, differs everywhere.
fn filled(a: f32, b: f32, n: usize) -> Vec<f32> {
    (0..n).map(|i| a.mul_add(i as f32, b)).collect()
}

fn mapped(x: &[f32]) -> Vec<f32> {
    x.iter().map(|v| 2.0f32.mul_add(*v, 1.0)).collect()
}

/// Relative tolerance of the comparisons (see `filled`).
const TOL: f32 = 1e-6;

fn non_blocking(ctx: &Context) -> Stream {
    Stream::with_flags(ctx, StreamFlags::NonBlocking).unwrap()
}

const N: usize = 1 << 16;
/// Elements of the 1D arrays (a 1D surface may be at most 16384 elements wide on some GPUs).
const M: usize = 1 << 13;

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_pooled_block_dropped_under_a_late_kernel_is_not_written_by_it_after_reuse() {
    let ctx = ctx();
    let (fill, pool) = (k::late_fill::prepare(&ctx).unwrap(), DeviceMemoryPool::new(&ctx));
    let (slow, fast) = (non_blocking(&ctx), non_blocking(&ctx));
    let mut rng = Rng::new(1);
    for round in 0..20 {
        let (a1, b1, a2, b2) = (rng.f32(), rng.f32(), rng.f32(), rng.f32());
        let mut first = pool.alloc::<f32>(N).unwrap();
        let addr = first.device_ptr();
        fill.prepared_async_call(
            grid(N),
            256,
            &slow,
            &mut first,
            a1,
            b1,
            N as i32,
            cycles(&ctx, 5.0),
        )
        .unwrap();
        drop(first);
        // The same block, handed out again at once, while the late kernel has not written yet.
        let mut second = pool.alloc::<f32>(N).unwrap();
        assert_eq!(
            second.device_ptr(),
            addr,
            "round {round}: the pool reuses the block"
        );
        fill.prepared_async_call(grid(N), 256, &fast, &mut second, a2, b2, N as i32, 0)
            .unwrap();
        // Unordered, the late kernel's write would land last.
        assert_close(&second.to_vec().unwrap(), &filled(a2, b2, N), TOL);
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_buffer_dropped_under_a_late_kernel_is_freed_after_it() {
    let ctx = ctx();
    let fill = k::late_fill::prepare(&ctx).unwrap();
    let slow = non_blocking(&ctx);
    let mut rng = Rng::new(2);
    ctx.synchronize().unwrap();
    let (free_before, _) = ctx.mem_get_info().unwrap();
    for _ in 0..20 {
        let mut x = ctx.alloc::<f32>(N).unwrap();
        let (a, b) = (rng.f32(), rng.f32());
        fill.prepared_async_call(grid(N), 256, &slow, &mut x, a, b, N as i32, cycles(&ctx, 2.0))
            .unwrap();
        drop(x);
        // New allocations (and their contents) are not touched by the late kernels.
        let data = rng.vec_f32(N);
        let y = ctx.to_device(&data).unwrap();
        assert_close(&y.to_vec().unwrap(), &data, TOL);
    }
    // Every deferred free happened once the work was done.
    ctx.synchronize().unwrap();
    let (free_after, _) = ctx.mem_get_info().unwrap();
    assert_eq!(free_after, free_before, "device memory was not all given back");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_consumer_stream_waits_for_the_producer_and_a_writer_for_the_readers() {
    let ctx = ctx();
    let (fill, map) = (
        k::late_fill::prepare(&ctx).unwrap(),
        k::late_map::prepare(&ctx).unwrap(),
    );
    let (producer, consumer) = (non_blocking(&ctx), non_blocking(&ctx));
    let mut rng = Rng::new(3);
    let mut x = ctx.alloc::<f32>(N).unwrap();
    let mut y = ctx.alloc::<f32>(N).unwrap();
    for _ in 0..20 {
        // Read after write: the producer writes late, the consumer reads at once.
        let (a, b) = (rng.f32(), rng.f32());
        fill.prepared_async_call(grid(N), 256, &producer, &mut x, a, b, N as i32, cycles(&ctx, 3.0))
            .unwrap();
        map.prepared_async_call(grid(N), 256, &consumer, &x, &mut y, N as i32, 0)
            .unwrap();
        let old = filled(a, b, N);
        assert_close(&y.to_vec().unwrap(), &mapped(&old), TOL);
        // Write after read: the consumer reads late, the producer overwrites at once.
        let (a2, b2) = (rng.f32(), rng.f32());
        map.prepared_async_call(grid(N), 256, &consumer, &x, &mut y, N as i32, cycles(&ctx, 3.0))
            .unwrap();
        fill.prepared_async_call(grid(N), 256, &producer, &mut x, a2, b2, N as i32, 0)
            .unwrap();
        assert_close(&y.to_vec().unwrap(), &mapped(&old), TOL);
        assert_close(&x.to_vec().unwrap(), &filled(a2, b2, N), TOL);
        // Write after write, on two streams.
        let (a3, b3) = (rng.f32(), rng.f32());
        fill.prepared_async_call(grid(N), 256, &producer, &mut x, a, b, N as i32, cycles(&ctx, 3.0))
            .unwrap();
        fill.prepared_async_call(grid(N), 256, &consumer, &mut x, a3, b3, N as i32, 0)
            .unwrap();
        assert_close(&x.to_vec().unwrap(), &filled(a3, b3, N), TOL);
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn textures_and_surfaces_dropped_under_queued_launches_stay_alive_until_they_ran() {
    let ctx = ctx();
    let (tex_k, surf_k) = (
        k::late_tex::prepare(&ctx).unwrap(),
        k::late_surf::prepare(&ctx).unwrap(),
    );
    let stream = non_blocking(&ctx);
    let mut rng = Rng::new(4);
    for _ in 0..10 {
        let data = rng.vec_f32(M);
        let mut out = ctx.alloc::<f32>(M).unwrap();
        {
            // A texture over an array; both dropped while the launch waits.
            let mut array = CudaArray::new(&ctx, ArrayDescriptor::new_2d::<f32>(M, 0)).unwrap();
            array.copy_from_host(&data).unwrap();
            let tex = Texture::from_array(&array, &TextureDesc::default()).unwrap();
            tex_k
                .prepared_async_call(
                    grid(M),
                    256,
                    &stream,
                    tex.object(),
                    &mut out,
                    M as i32,
                    cycles(&ctx, 3.0),
                )
                .unwrap();
        }
        // Churn: new arrays, written with other data, where the freed ones could be reused.
        let garbage: Vec<CudaArray> = (0..4)
            .map(|_| {
                let mut a = CudaArray::new(&ctx, ArrayDescriptor::new_2d::<f32>(M, 0)).unwrap();
                a.copy_from_host(&rng.vec_f32(M)).unwrap();
                a
            })
            .collect();
        assert_close(&out.to_vec().unwrap(), &data, 0.0);
        drop(garbage);

        // A surface writing an array late, dropped at once; the array is read back at once.
        let src = rng.vec_f32(M);
        let src_d = ctx.to_device(&src).unwrap();
        let desc = ArrayDescriptor::new_2d::<f32>(M, 0).with_flags(ArrayFlags::SURFACE_LDST);
        let mut array = CudaArray::new(&ctx, desc).unwrap();
        {
            let surf = Surface::new(&mut array).unwrap();
            surf_k
                .prepared_async_call(
                    grid(M),
                    256,
                    &stream,
                    surf.object(),
                    &src_d,
                    M as i32,
                    cycles(&ctx, 3.0),
                )
                .unwrap();
        }
        assert_close(&array.to_vec::<f32>().unwrap(), &src, 0.0);
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn one_pool_churned_from_four_threads_on_four_streams_never_mixes_blocks() {
    let ctx = ctx();
    let pool = DeviceMemoryPool::new(&ctx);
    let (fill, map) = (
        k::late_fill::prepare(&ctx).unwrap(),
        k::late_map::prepare(&ctx).unwrap(),
    );
    let slow = cycles(&ctx, 0.2);
    std::thread::scope(|s| {
        for t in 0..4u64 {
            let (ctx, pool, fill, map) = (&ctx, &pool, &fill, &map);
            s.spawn(move || {
                let stream = non_blocking(ctx);
                let mut rng = Rng::new(100 + t);
                for round in 0..150 {
                    let n = 1000 + (rng.next_u64() % 60_000) as usize;
                    let (a, b) = (rng.f32(), rng.f32());
                    let mut x = pool.alloc::<f32>(n).unwrap();
                    let delay = if round % 3 == 0 { slow } else { 0 };
                    fill.prepared_async_call(grid(n), 256, &stream, &mut x, a, b, n as i32, delay)
                        .unwrap();
                    let mut y = pool.alloc::<f32>(n).unwrap();
                    map.prepared_async_call(grid(n), 256, &stream, &x, &mut y, n as i32, delay)
                        .unwrap();
                    // Back to the shared pool with both kernels still queued; other threads take
                    // the block at once, on their own streams.
                    drop(x);
                    let got = y.to_vec().unwrap();
                    assert_close(&got, &mapped(&filled(a, b, n)), TOL);
                }
            });
        }
    });
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn the_host_waits_for_async_copies_of_its_page_locked_memory() {
    let ctx = ctx();
    let fill = k::late_fill::prepare(&ctx).unwrap();
    let stream = non_blocking(&ctx);
    let mut rng = Rng::new(5);
    let mut host = ctx.pagelocked_empty::<f32, _>(N, HostAllocFlags::NONE).unwrap();
    let mut dev = ctx.alloc::<f32>(N).unwrap();
    let mut delay = ctx.alloc::<f32>(1).unwrap();
    for _ in 0..10 {
        let first = rng.vec_f32(N);
        host.as_slice_memory_order_mut().copy_from_slice(&first);
        // Keep the stream busy, so that the copy runs late.
        fill.prepared_async_call(1, 1, &stream, &mut delay, 0.0, 0.0, 1, cycles(&ctx, 3.0))
            .unwrap();
        memcpy_htod_async(&mut dev, &host, &stream).unwrap();
        // Overwriting the host array waits for the copy to have read it.
        host.as_slice_memory_order_mut().fill(f32::NAN);
        assert_close(&dev.to_vec().unwrap(), &first, TOL);
        // And back: reading the host array waits for the copy into it.
        let (a, b) = (rng.f32(), rng.f32());
        fill.prepared_async_call(grid(N), 256, &stream, &mut dev, a, b, N as i32, cycles(&ctx, 3.0))
            .unwrap();
        memcpy_dtoh_async(&mut host, &dev, &stream).unwrap();
        assert_close(host.as_slice_memory_order(), &filled(a, b, N), TOL);
    }
    // Page-locked memory from a pool: returned with a copy into it queued, taken again, read.
    let pool = PageLockedMemoryPool::new(&ctx, PageLockedAllocator::new(HostAllocFlags::NONE));
    let (a, b) = (rng.f32(), rng.f32());
    fill.prepared_async_call(grid(N), 256, &stream, &mut dev, a, b, N as i32, cycles(&ctx, 3.0))
        .unwrap();
    let mut p = pool.allocate::<f32, _>(N).unwrap();
    memcpy_dtoh_async(&mut p, &dev, &stream).unwrap();
    drop(p);
    let again = pool.allocate::<f32, _>(N).unwrap();
    assert_close(again.as_slice_memory_order(), &filled(a, b, N), TOL);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_registered_slice_is_given_back_after_the_copies_into_it() {
    let ctx = ctx();
    let fill = k::late_fill::prepare(&ctx).unwrap();
    let stream = non_blocking(&ctx);
    let mut rng = Rng::new(6);
    let mut dev = ctx.alloc::<f32>(N).unwrap();
    for _ in 0..5 {
        let mut host = vec![f32::NAN; N];
        let (a, b) = (rng.f32(), rng.f32());
        fill.prepared_async_call(grid(N), 256, &stream, &mut dev, a, b, N as i32, cycles(&ctx, 3.0))
            .unwrap();
        ctx.register_host_slice(&mut host, HostRegisterFlags::NONE, |mut pinned| {
            memcpy_dtoh_async(&mut pinned, &dev, &stream)
        })
        .unwrap()
        .unwrap();
        // The closure returned before the copy ran; the slice came back after it.
        assert_close(&host, &filled(a, b, N), TOL);
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn managed_memory_is_read_by_the_host_after_the_kernels_that_write_it() {
    let ctx = ctx();
    let fill = k::late_fill::prepare(&ctx).unwrap();
    let stream = non_blocking(&ctx);
    let mut rng = Rng::new(7);
    let mut m = ctx.managed_empty::<f32, _>(N, AttachFlags::Global).unwrap();
    for _ in 0..5 {
        let (a, b) = (rng.f32(), rng.f32());
        fill.prepared_async_call(grid(N), 256, &stream, &mut m, a, b, N as i32, cycles(&ctx, 3.0))
            .unwrap();
        assert_close(m.as_slice_memory_order(), &filled(a, b, N), TOL);
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn streams_events_pools_and_contexts_dropped_with_work_queued_lose_nothing() {
    let ctx = ctx();
    let fill = k::late_fill::prepare(&ctx).unwrap();
    let mut rng = Rng::new(8);
    let mut x = ctx.alloc::<f32>(N).unwrap();
    // A stream dropped with a late kernel queued: the kernel still runs, and is waited for.
    let (xa, xb) = (rng.f32(), rng.f32());
    let x_want = filled(xa, xb, N);
    {
        let s = non_blocking(&ctx);
        fill.prepared_async_call(grid(N), 256, &s, &mut x, xa, xb, N as i32, cycles(&ctx, 5.0))
            .unwrap();
        let e = Event::new(&ctx).unwrap();
        e.record(Some(&s)).unwrap();
        // An event dropped while recorded and not yet complete.
        drop(e);
    }
    assert_close(&x.to_vec().unwrap(), &x_want, TOL);

    // Pools dropped while a block they hold is still being written, and while one they gave
    // out is still in use.
    let s = non_blocking(&ctx);
    let pool = DeviceMemoryPool::new(&ctx);
    let mut held = pool.alloc::<f32>(N).unwrap();
    let mut out = pool.alloc::<f32>(N).unwrap();
    let (a, b) = (rng.f32(), rng.f32());
    fill.prepared_async_call(grid(N), 256, &s, &mut held, a, b, N as i32, cycles(&ctx, 5.0))
        .unwrap();
    fill.prepared_async_call(grid(N), 256, &s, &mut out, b, a, N as i32, cycles(&ctx, 5.0))
        .unwrap();
    drop(held);
    drop(pool);
    assert_close(&out.to_vec().unwrap(), &filled(b, a, N), TOL);
    drop(out);
    // A page-locked pool dropped while an array from it is being copied into.
    let pinned_pool = PageLockedMemoryPool::new(&ctx, PageLockedAllocator::new(HostAllocFlags::NONE));
    let mut p = pinned_pool.allocate::<f32, _>(N).unwrap();
    let mut late = ctx.alloc::<f32>(1).unwrap();
    fill.prepared_async_call(1, 1, &s, &mut late, 0.0, 0.0, 1, cycles(&ctx, 5.0))
        .unwrap();
    memcpy_dtoh_async(&mut p, &x, &s).unwrap();
    drop(pinned_pool);
    assert_close(p.as_slice_memory_order(), &x_want, TOL);

    // A context whose last handle goes while its work is queued: the buffer keeps it; when the
    // buffer goes too, the context waits for its work before it is destroyed.
    let own = Context::create(ctx.device(), ContextFlags::SCHED_AUTO).unwrap();
    let own_fill = k::late_fill::prepare(&own).unwrap();
    let s_own = Stream::new(&own).unwrap();
    let mut y = own.alloc::<f32>(N).unwrap();
    let (a, b) = (rng.f32(), rng.f32());
    own_fill
        .prepared_async_call(grid(N), 256, &s_own, &mut y, a, b, N as i32, cycles(&ctx, 5.0))
        .unwrap();
    drop((own, own_fill, s_own));
    assert_close(&y.to_vec().unwrap(), &filled(a, b, N), TOL);
    drop(y);
    // The default context is unaffected.
    assert_close(&x.to_vec().unwrap(), &x_want, TOL);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn setting_a_constant_waits_for_the_kernels_that_read_it() {
    let ctx = ctx();
    let read = k::late_const::prepare(&ctx).unwrap();
    let offset = k::globals::offset(&ctx).unwrap();
    let stream = non_blocking(&ctx);
    let mut rng = Rng::new(9);
    let mut out = ctx.alloc::<f32>(N).unwrap();
    for _ in 0..5 {
        let (old, new) = (rng.f32(), rng.f32());
        offset.set(old).unwrap();
        read.prepared_async_call(grid(N), 256, &stream, &mut out, N as i32, cycles(&ctx, 3.0))
            .unwrap();
        offset.set(new).unwrap();
        assert_close(&out.to_vec().unwrap(), &vec![old; N], 0.0);
        assert_eq!(offset.get().unwrap(), new);
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn streams_ordered_by_hand_with_events_after_opting_out() {
    let ctx = ctx();
    let (fill, map) = (
        k::late_fill::prepare(&ctx).unwrap(),
        k::late_map::prepare(&ctx).unwrap(),
    );
    let (producer, consumer) = (non_blocking(&ctx), non_blocking(&ctx));
    // SAFETY: every use of `x` on `consumer` below waits for `producer` through an event.
    unsafe { consumer.order_manually() };
    let mut rng = Rng::new(10);
    let mut x = ctx.alloc::<f32>(N).unwrap();
    let mut y = ctx.alloc::<f32>(N).unwrap();
    let produced = Event::new(&ctx).unwrap();
    for _ in 0..5 {
        let (a, b) = (rng.f32(), rng.f32());
        fill.prepared_async_call(grid(N), 256, &producer, &mut x, a, b, N as i32, cycles(&ctx, 3.0))
            .unwrap();
        produced.record(Some(&producer)).unwrap();
        consumer.wait_for_event(&produced).unwrap();
        map.prepared_async_call(grid(N), 256, &consumer, &x, &mut y, N as i32, 0)
            .unwrap();
        consumer.synchronize().unwrap();
        assert_close(&y.to_vec().unwrap(), &mapped(&filled(a, b, N)), TOL);
    }
    // Memory used on the manual stream is still freed only after its work, and then freed.
    ctx.synchronize().unwrap();
    let (free_before, _) = ctx.mem_get_info().unwrap();
    let mut z = ctx.alloc::<f32>(4 * N).unwrap();
    fill.prepared_async_call(
        grid(4 * N),
        256,
        &consumer,
        &mut z,
        1.0,
        0.0,
        4 * N as i32,
        cycles(&ctx, 3.0),
    )
    .unwrap();
    drop(z);
    ctx.synchronize().unwrap();
    assert_eq!(ctx.mem_get_info().unwrap().0, free_before);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_context_that_served_pooled_buffers_is_destroyed_with_its_last_handle() {
    let ctx = ctx();
    let fill = k::late_fill::prepare(&ctx).unwrap();
    let mut rng = Rng::new(11);
    let baseline = ctx.mem_get_info().unwrap().0;
    for _ in 0..3 {
        // An owned context takes device memory of its own (its stack and heap, the module):
        // it is given back only when the context is destroyed.
        let own = Context::create(ctx.device(), ContextFlags::SCHED_AUTO).unwrap();
        let k = k::late_fill::prepare(&own).unwrap();
        let s = Stream::new(&own).unwrap();
        let pool = DeviceMemoryPool::new(&own);
        for _ in 0..1000 {
            let (a, b) = (rng.f32(), rng.f32());
            let mut x = pool.alloc::<f32>(N).unwrap();
            k.prepared_async_call(grid(N), 256, &s, &mut x, a, b, N as i32, 0)
                .unwrap();
            if rng.next_u64().is_multiple_of(100) {
                assert_close(&x.to_vec().unwrap(), &filled(a, b, N), TOL);
            }
        }
        drop((k, s, pool, own));
        ctx.synchronize().unwrap();
        let free = ctx.mem_get_info().unwrap().0;
        assert!(
            free + (4 << 20) >= baseline,
            "{} MiB of device memory are still held after the context went",
            (baseline - free) >> 20
        );
    }
    // The default context still works.
    let mut x = ctx.alloc::<f32>(N).unwrap();
    fill.prepared_call(grid(N), 256, &mut x, 1.0, 2.0, N as i32, 0)
        .unwrap();
    assert_close(&x.to_vec().unwrap(), &filled(1.0, 2.0, N), TOL);
}

/// Reader threads of the stress tests below, each on a stream of its own.
const READERS: usize = 8;
/// Rounds of the stress tests below.
const ROUNDS: usize = 150;

/// Runs `read(stream, out)` on `READERS` threads at once (released together by a barrier),
/// each with its own stream and output; the memory they read is shared through `&`.
fn read_at_once(
    streams: &[Stream],
    outs: &mut [gpu_runtime::DeviceBuffer<f32>],
    read: impl Fn(&Stream, &mut gpu_runtime::DeviceBuffer<f32>) + Sync,
) {
    let barrier = std::sync::Barrier::new(streams.len());
    std::thread::scope(|s| {
        for (stream, out) in streams.iter().zip(outs.iter_mut()) {
            let (barrier, read) = (&barrier, &read);
            s.spawn(move || {
                barrier.wait();
                read(stream, out);
            });
        }
    });
}

/// The streams and outputs of the reader threads.
fn readers(ctx: &Context) -> (Vec<Stream>, Vec<gpu_runtime::DeviceBuffer<f32>>) {
    let streams = (0..READERS).map(|_| non_blocking(ctx)).collect();
    let outs = (0..READERS).map(|_| ctx.alloc::<f32>(N).unwrap()).collect();
    (streams, outs)
}

/// Each reader's output is what it read: `mapped(data)`.
fn check_reads(outs: &[gpu_runtime::DeviceBuffer<f32>], data: &[f32], round: usize) {
    let want = mapped(data);
    for (t, out) in outs.iter().enumerate() {
        let got = out.to_vec().unwrap();
        assert!(
            got.iter()
                .zip(&want)
                .all(|(g, w)| (g - w).abs() <= TOL * w.abs().max(1.0)),
            "round {round}: reader {t} did not read the data it was launched on"
        );
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn eight_threads_read_one_buffer_at_once_then_another_stream_overwrites_it() {
    let ctx = ctx();
    let (fill, map) = (
        k::late_fill::prepare(&ctx).unwrap(),
        k::late_map::prepare(&ctx).unwrap(),
    );
    let (streams, mut outs) = readers(&ctx);
    let writer = non_blocking(&ctx);
    let slow = cycles(&ctx, 0.3);
    let mut rng = Rng::new(25);
    let mut x = ctx.alloc::<f32>(N).unwrap();
    for round in 0..ROUNDS {
        let (a, b, a2, b2) = (rng.f32(), rng.f32(), rng.f32(), rng.f32());
        fill.prepared_async_call(grid(N), 256, &writer, &mut x, a, b, N as i32, 0)
            .unwrap();
        // Slow readers on eight streams, then a fast writer on a ninth: it must wait for all.
        read_at_once(&streams, &mut outs, |s, out| {
            map.prepared_async_call(grid(N), 256, s, &x, out, N as i32, slow)
                .unwrap()
        });
        fill.prepared_async_call(grid(N), 256, &writer, &mut x, a2, b2, N as i32, 0)
            .unwrap();
        check_reads(&outs, &filled(a, b, N), round);
        assert_close(&x.to_vec().unwrap(), &filled(a2, b2, N), TOL);
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn eight_threads_read_a_pooled_block_at_once_then_the_pool_hands_it_out_again() {
    let ctx = ctx();
    let (fill, map) = (
        k::late_fill::prepare(&ctx).unwrap(),
        k::late_map::prepare(&ctx).unwrap(),
    );
    let pool = DeviceMemoryPool::new(&ctx);
    let (streams, mut outs) = readers(&ctx);
    let (writer, next_owner) = (non_blocking(&ctx), non_blocking(&ctx));
    let slow = cycles(&ctx, 0.3);
    let mut rng = Rng::new(26);
    let mut reused = 0;
    for round in 0..ROUNDS {
        let (a, b, a2, b2) = (rng.f32(), rng.f32(), rng.f32(), rng.f32());
        let mut x = pool.alloc::<f32>(N).unwrap();
        fill.prepared_async_call(grid(N), 256, &writer, &mut x, a, b, N as i32, 0)
            .unwrap();
        read_at_once(&streams, &mut outs, |s, out| {
            map.prepared_async_call(grid(N), 256, s, &x, out, N as i32, slow)
                .unwrap()
        });
        // Back to the pool with the readers still running; the next owner writes it at once.
        let addr = x.device_ptr();
        drop(x);
        let mut y = pool.alloc::<f32>(N).unwrap();
        reused += usize::from(y.device_ptr() == addr);
        fill.prepared_async_call(grid(N), 256, &next_owner, &mut y, a2, b2, N as i32, 0)
            .unwrap();
        check_reads(&outs, &filled(a, b, N), round);
        assert_close(&y.to_vec().unwrap(), &filled(a2, b2, N), TOL);
    }
    assert!(
        reused > ROUNDS / 2,
        "the pool handed the block out again in only {reused} rounds"
    );
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn eight_threads_read_a_buffer_at_once_then_it_is_dropped_and_memory_allocated_again() {
    let ctx = ctx();
    let (fill, map) = (
        k::late_fill::prepare(&ctx).unwrap(),
        k::late_map::prepare(&ctx).unwrap(),
    );
    let (streams, mut outs) = readers(&ctx);
    let writer = non_blocking(&ctx);
    let slow = cycles(&ctx, 0.3);
    let mut rng = Rng::new(27);
    for round in 0..ROUNDS {
        let (a, b, a2, b2) = (rng.f32(), rng.f32(), rng.f32(), rng.f32());
        let mut x = ctx.alloc::<f32>(N).unwrap();
        fill.prepared_async_call(grid(N), 256, &writer, &mut x, a, b, N as i32, 0)
            .unwrap();
        read_at_once(&streams, &mut outs, |s, out| {
            map.prepared_async_call(grid(N), 256, s, &x, out, N as i32, slow)
                .unwrap()
        });
        // Freed once the readers are done; a new allocation is written at once.
        drop(x);
        let mut y = ctx.alloc::<f32>(N).unwrap();
        fill.prepared_async_call(grid(N), 256, &writer, &mut y, a2, b2, N as i32, 0)
            .unwrap();
        check_reads(&outs, &filled(a, b, N), round);
        assert_close(&y.to_vec().unwrap(), &filled(a2, b2, N), TOL);
    }
}
