//! The context's cache of the device memory arrays give up (CuPy's memory pool), on a GPU:
//! a dropped array's block serves the next array of its byte size once its work is done,
//! never while a kernel still writes it; the cache gives its memory back on request, on
//! out-of-memory and past its limit; a block shared with another process (an IPC handle) is
//! never reused; plain buffers are not cached.

use gpu_runtime::driver::{DeviceAttribute, StreamFlags};
use gpu_runtime::gpuarray::{DeviceArray, ElementwiseKernel, KernelArg};
use gpu_runtime::ndarray::Array1;
use gpu_runtime::{Context, Stream};
use gpu_suite::Rng;

const N: usize = 1 << 22;

/// The tests share the default context's cache and change its limit: one at a time.
fn serial() -> std::sync::MutexGuard<'static, ()> {
    static ONE: std::sync::Mutex<()> = std::sync::Mutex::new(());
    ONE.lock().unwrap_or_else(|p| p.into_inner())
}

/// A kernel that waits about `cycles` GPU clocks, then writes `v` into every element of `y`.
fn late_fill() -> gpu_runtime::Result<ElementwiseKernel> {
    ElementwiseKernel::with_name(
        "late_fill",
        "float v, long long cycles, float *y",
        "long long t0 = clock64(); while (clock64() - t0 < cycles) {} y[i] = v",
    )
}

/// GPU clocks in about `ms` milliseconds.
fn cycles(ctx: &Context, ms: f64) -> i64 {
    let khz = ctx.device().attribute(DeviceAttribute::ClockRate).unwrap() as f64;
    (khz * ms) as i64
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_dropped_arrays_block_serves_the_next_array_of_its_size() -> gpu_runtime::Result<()> {
    let _one = serial();
    let ctx = Context::default()?;
    ctx.synchronize()?;
    ctx.free_cached_memory();
    let mut rng = Rng::new(41);
    let a = DeviceArray::<f32, _>::zeros(&ctx, N)?;
    let block = a.storage().device_ptr();
    drop(a);
    ctx.synchronize()?;
    assert_eq!(ctx.cached_memory(), 4 * N, "the dropped array's block is kept");
    // Another element type of the same byte size takes it, with the data copied in intact.
    let h: Vec<u32> = (0..N).map(|_| rng.next_u64() as u32).collect();
    let b = DeviceArray::from_ndarray(&ctx, &Array1::from(h.clone()))?;
    assert_eq!(b.storage().device_ptr(), block, "the cached block was not reused");
    assert_eq!(ctx.cached_memory(), 0);
    assert_eq!(b.to_vec()?, h);
    // A size with no cached block gets fresh memory; zeros are zeros in a reused block too.
    drop(b);
    ctx.synchronize()?;
    let c = DeviceArray::<f32, _>::zeros(&ctx, N + 1)?;
    assert_ne!(c.storage().device_ptr(), block);
    let z = DeviceArray::<f32, _>::zeros(&ctx, N)?;
    assert_eq!(z.storage().device_ptr(), block);
    assert!(z.to_vec()?.iter().all(|&v| v == 0.0));
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_block_a_kernel_still_writes_is_never_handed_out() -> gpu_runtime::Result<()> {
    let _one = serial();
    let ctx = Context::default()?;
    let slow = Stream::with_flags(&ctx, StreamFlags::NonBlocking)?;
    let k = late_fill()?;
    let mut rng = Rng::new(42);
    let wait = cycles(&ctx, 3.0);
    for round in 0..20 {
        let mut x = DeviceArray::<f32, _>::zeros(&ctx, N)?;
        slow.synchronize()?;
        k.on(&slow).launch([
            KernelArg::scalar(-1.0f32),
            KernelArg::scalar(wait),
            KernelArg::output(&mut x),
        ])?;
        let late = x.storage().device_ptr();
        drop(x);
        // Allocated while the late kernel still runs: never its block, and its data survive.
        let data: Vec<f32> = (0..N).map(|_| rng.f32()).collect();
        let y = DeviceArray::from_ndarray(&ctx, &Array1::from(data.clone()))?;
        assert_ne!(
            y.storage().device_ptr(),
            late,
            "round {round}: a block in use was reused"
        );
        slow.synchronize()?;
        assert_eq!(
            y.to_vec()?,
            data,
            "round {round}: the late kernel wrote into a new array"
        );
    }
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn the_cache_gives_its_memory_back() -> gpu_runtime::Result<()> {
    let _one = serial();
    let ctx = Context::default()?;
    ctx.synchronize()?;
    ctx.free_cached_memory();
    let bytes = 256usize << 20;
    drop(DeviceArray::<u8, _>::zeros(&ctx, bytes)?);
    ctx.synchronize()?;
    let (held_free, _) = ctx.mem_get_info()?;
    assert_eq!(ctx.cached_memory(), bytes);
    assert_eq!(ctx.free_cached_memory(), bytes);
    let (free, _) = ctx.mem_get_info()?;
    assert!(
        free >= held_free + bytes / 2,
        "free went from {held_free} to {free}"
    );

    // Past the limit a dropped array's memory is freed at once; 0 turns the cache off.
    ctx.set_memory_cache_limit(bytes / 2);
    drop(DeviceArray::<u8, _>::zeros(&ctx, bytes)?);
    ctx.synchronize()?;
    assert_eq!(ctx.cached_memory(), 0);
    drop(DeviceArray::<u8, _>::zeros(&ctx, bytes / 4)?);
    ctx.synchronize()?;
    assert_eq!(ctx.cached_memory(), bytes / 4);
    ctx.set_memory_cache_limit(0);
    assert_eq!(ctx.cached_memory(), 0, "lowering the limit frees what passes it");
    drop(DeviceArray::<u8, _>::zeros(&ctx, bytes / 4)?);
    ctx.synchronize()?;
    assert_eq!(ctx.cached_memory(), 0);

    // Plain buffers are freed when dropped, as PyCUDA's are.
    ctx.set_memory_cache_limit(usize::MAX);
    drop(ctx.alloc::<u8>(bytes)?);
    ctx.synchronize()?;
    assert_eq!(ctx.cached_memory(), 0);

    // A block shared with another process is never kept for reuse.
    let shared = DeviceArray::<u8, _>::zeros(&ctx, bytes)?;
    let _handle = shared.storage().ipc_handle()?;
    drop(shared);
    ctx.synchronize()?;
    assert_eq!(ctx.cached_memory(), 0, "an IPC-shared block went to the cache");
    // The default limit again (a quarter of the device's memory): the tests after this one
    // share the context.
    ctx.set_memory_cache_limit(ctx.device().total_memory()? / 4);
    Ok(())
}

/// Arrays of several sizes fill the cache; then one array needs all the memory the device has
/// left plus most of what the cache holds: the allocation frees the cache and succeeds.
#[test]
#[ignore = "needs a CUDA GPU"]
fn out_of_memory_empties_the_cache_and_retries() -> gpu_runtime::Result<()> {
    let _one = serial();
    let ctx = Context::default()?;
    ctx.synchronize()?;
    ctx.free_cached_memory();
    ctx.set_memory_cache_limit(usize::MAX);
    let (free, _) = ctx.mem_get_info()?;
    let chunk = free / 8;
    for k in 0..6 {
        drop(DeviceArray::<u8, _>::empty(&ctx, chunk + k)?);
    }
    ctx.synchronize()?;
    let held = ctx.cached_memory();
    assert!(held >= 6 * chunk, "held {held}");
    let big = free - 2 * chunk;
    let x = DeviceArray::<u8, _>::empty(&ctx, big)?;
    assert_eq!(x.len(), big);
    assert_eq!(ctx.cached_memory(), 0, "the cache was not given back");
    drop(x);
    ctx.free_cached_memory();
    ctx.set_memory_cache_limit(ctx.device().total_memory()? / 4);
    Ok(())
}
