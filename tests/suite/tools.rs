//! Memory pools, pinned/managed/aligned host memory, staged In/Out calls and occupancy, on a
//! real GPU, each checked against an independent reference on random data.
//! Run on a GPU machine: `cargo test --test suite -- --ignored tools::`.

use std::ffi::c_void;

use gpu_runtime::cudarc::driver::sys;
use gpu_runtime::driver::{
    AttachFlags, ContextFlags, HostAllocFlags, HostRegisterFlags, MemAdvice, MemLocation,
};
use gpu_runtime::tools::{DeviceData, DeviceMemoryPool, PageLockedAllocator, PageLockedMemoryPool};
use gpu_runtime::{gpu_test, kernel, Context, CopyError, Error, HostSlice, MemoryError, Stream};
use gpu_suite::{assert_close, Rng};
use ndarray::Array2;

#[kernel(
    r#"
__global__ void axpy(float a, const float *x, float *y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}"#
)]
fn axpy(a: f32, #[In] x: &[f32], #[InOut] y: &mut [f32], n: i32);

#[kernel(
    r#"
__global__ void scale_out(const float *x, float *y, float s, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = s * x[i];
}"#
)]
fn scale_out(#[In] x: &[f32], #[Out] y: &mut [f32], s: f32, n: i32);

#[kernel(
    r#"
__global__ void doublify(float *a) {
    int idx = threadIdx.x + threadIdx.y * 4;
    a[idx] *= 2;
}"#
)]
fn doublify(a: &mut [f32]);

#[kernel(
    r#"
__global__ void twice(float *a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) a[i] = 2.0f * a[i];
}"#
)]
fn twice(a: &mut [f32], n: i32);

// Kernels of different register and shared-memory needs, for the occupancy comparison.
#[kernel(
    r#"
__global__ void light(float *a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) a[i] += 1.0f;
}
__global__ void __launch_bounds__(256, 2) bounded(float *a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v[24];
    #pragma unroll
    for (int k = 0; k < 24; k++) v[k] = a[(i + k * 977) % n];
    float s = 0.0f;
    #pragma unroll
    for (int k = 0; k < 24; k++) s += v[k] * v[(k * 7) % 24];
    if (i < n) a[i] = s;
}
__global__ void heavy(float *a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v[64];
    #pragma unroll
    for (int k = 0; k < 64; k++) v[k] = a[(i + k * 131) % n];
    float s = 0.0f;
    #pragma unroll
    for (int k = 0; k < 64; k++) s += v[k] * v[63 - k] + v[(k * 5) % 64];
    if (i < n) a[i] = s;
}
__global__ void staticsmem(float *a, int n) {
    __shared__ float tile[3000];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    tile[threadIdx.x % 3000] = i < n ? a[i] : 0.0f;
    __syncthreads();
    if (i < n) a[i] = tile[(threadIdx.x + 1) % blockDim.x % 3000];
}
"#
)]
mod occ {
    fn light(a: &mut [f32], n: i32);
    fn bounded(a: &mut [f32], n: i32);
    fn heavy(a: &mut [f32], n: i32);
    fn staticsmem(a: &mut [f32], n: i32);
}

#[kernel(
    options = ["-maxrregcount=40"],
    source = r#"
__global__ void capped(float *a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v[64];
    #pragma unroll
    for (int k = 0; k < 64; k++) v[k] = a[(i + k * 131) % n];
    float s = 0.0f;
    #pragma unroll
    for (int k = 0; k < 64; k++) s += v[k] * v[63 - k] + v[(k * 5) % 64];
    if (i < n) a[i] = s;
}"#
)]
fn capped(a: &mut [f32], n: i32);

use crate::common::ctx;

#[test]
#[ignore = "needs a CUDA GPU"]
fn occupancy_record_agrees_with_the_driver() {
    let ctx = ctx();
    let functions = [
        occ::light::prepare(&ctx).unwrap().function().clone(),
        occ::bounded::prepare(&ctx).unwrap().function().clone(),
        occ::heavy::prepare(&ctx).unwrap().function().clone(),
        occ::staticsmem::prepare(&ctx).unwrap().function().clone(),
        capped::prepare(&ctx).unwrap().function().clone(),
    ];
    let data = DeviceData::new(&ctx).unwrap();
    println!("{data:?}");
    let mut compared = 0;
    let mut regs_seen = Vec::new();
    let mut mismatches = Vec::new();
    for f in &functions {
        let (regs, static_smem) = f.resource_usage().unwrap();
        regs_seen.push(regs);
        println!(
            "{}: {regs} registers, {static_smem} B static shared memory, at most {} threads",
            f.name(),
            f.limits().unwrap().max_threads_per_block
        );
        for block in [32, 64, 96, 128, 160, 256, 384, 512, 640, 768, 1024] {
            if block > f.limits().unwrap().max_threads_per_block {
                continue;
            }
            for dyn_smem in [0u32, 1000, 6000, 20000, 40000] {
                let f = f.clone().with_shared_mem(dyn_smem);
                let ours = f.occupancy(block).unwrap();
                let mut theirs = 0;
                // SAFETY: valid out-pointer and a live function handle.
                let r = unsafe {
                    sys::cuOccupancyMaxActiveBlocksPerMultiprocessor(
                        &mut theirs,
                        f.raw(),
                        block as i32,
                        dyn_smem as usize,
                    )
                };
                assert_eq!(r, sys::CUresult::CUDA_SUCCESS);
                compared += 1;
                if ours.tb_per_mp as i32 != theirs {
                    mismatches.push(format!(
                        "{} block {block} dyn smem {dyn_smem}: ours {ours:?}, driver {theirs}",
                        f.name()
                    ));
                }
            }
        }
        let best = f.suggested_block_size().unwrap();
        assert!(
            best % 32 == 0 && best <= f.limits().unwrap().max_threads_per_block,
            "{best}"
        );
    }
    println!("compared {compared} combinations; registers seen {regs_seen:?}");
    assert!(
        mismatches.is_empty(),
        "{} mismatches:\n{}",
        mismatches.len(),
        mismatches.join("\n")
    );
    assert!(compared >= 30);
    regs_seen.sort();
    regs_seen.dedup();
    assert!(
        regs_seen.len() >= 3,
        "the kernels should differ in registers: {regs_seen:?}"
    );
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn device_pool_random_workload_is_exact_and_never_overlaps() {
    let ctx = ctx();
    let pool = DeviceMemoryPool::new(&ctx);
    let mut rng = Rng::new(11);
    let mut live: Vec<(gpu_runtime::tools::PooledBuffer<u32>, u32)> = Vec::new();
    let mut held_model: std::collections::HashMap<usize, usize> = Default::default();
    for step in 0..600 {
        if live.len() < 24 && (!rng.next_u64().is_multiple_of(3) || live.is_empty()) {
            let len = 1 + (rng.next_u64() % 300_000) as usize;
            let mut b = pool.alloc::<u32>(len).unwrap();
            let cap = b.capacity_bytes();
            if let Some(n) = held_model.get_mut(&cap).filter(|n| **n > 0) {
                *n -= 1;
            }
            let tag = step as u32 * 7 + 1;
            b.copy_from_host(&vec![tag; len]).unwrap();
            live.push((b, tag));
        } else {
            let i = (rng.next_u64() % live.len() as u64) as usize;
            let (b, tag) = live.swap_remove(i);
            let got = b.to_vec().unwrap();
            assert!(
                got.iter().all(|&v| v == tag),
                "a pooled block was handed out twice"
            );
            *held_model.entry(b.capacity_bytes()).or_default() += 1;
            drop(b);
        }
        // No two live blocks overlap.
        let mut ranges: Vec<(u64, u64)> = live
            .iter()
            .map(|(b, _)| (b.device_ptr(), b.device_ptr() + b.byte_len() as u64))
            .collect();
        ranges.sort();
        assert!(
            ranges.windows(2).all(|w| w[0].1 <= w[1].0),
            "overlapping blocks: {ranges:x?}"
        );
        assert_eq!(pool.active_blocks(), live.len());
        assert_eq!(
            pool.held_blocks(),
            held_model.values().sum::<usize>(),
            "step {step}"
        );
    }
    drop(live);
    pool.stop_holding();
    assert_eq!((pool.active_blocks(), pool.held_blocks()), (0, 0));
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn pooled_buffers_are_kernel_arguments() {
    let ctx = ctx();
    let pool = ctx.device_pool().unwrap();
    let n = 70_001;
    let x = Rng::new(12).vec_f32(n);
    let mut y = pool.to_device(&x).unwrap();
    twice::prepare(&ctx)
        .unwrap()
        .prepared_call((n as u32).div_ceil(256), 256, &mut y, n as i32)
        .unwrap();
    let want: Vec<f32> = x.iter().map(|v| 2.0 * v).collect();
    assert_close(&y.to_vec().unwrap(), &want, 0.0);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn out_of_memory_frees_held_blocks_and_the_process_goes_on() {
    let ctx = ctx();
    let pool = DeviceMemoryPool::new(&ctx);
    let a = pool.allocate(1 << 30).unwrap();
    let b = pool.allocate(3 << 29).unwrap();
    drop((a, b));
    assert_eq!(pool.held_blocks(), 2);
    let (_, total) = ctx.mem_get_info().unwrap();
    let e = pool.allocate(total + (1 << 30)).unwrap_err();
    assert!(e.is_out_of_memory(), "{e}");
    assert_eq!(
        pool.held_blocks(),
        0,
        "the pool gave back what it held before failing"
    );
    assert_eq!(pool.active_blocks(), 0);
    // Everything still works.
    let n = 4097;
    let mut rng = Rng::new(13);
    let x = rng.vec_f32(n);
    let mut y = rng.vec_f32(n);
    let want: Vec<f32> = x.iter().zip(&y).map(|(x, y)| 0.5 * x + y).collect();
    axpy(&ctx, (n as u32).div_ceil(128), 128, 0.5, &x, &mut y, n as i32).unwrap();
    assert_close(&y, &want, 1e-6);
    let c = pool.allocate(1 << 20).unwrap();
    assert_eq!(c.len(), 1 << 20);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn staged_convenience_calls_small_and_large() {
    let ctx = ctx();
    let mut rng = Rng::new(14);
    for n in [1usize, 1000, 1 << 20, (7 << 20) + 13] {
        let x = rng.vec_f32(n);
        let mut y = rng.vec_f32(n);
        let want: Vec<f32> = x.iter().zip(&y).map(|(x, y)| -1.25 * x + y).collect();
        axpy(&ctx, (n as u32).div_ceil(256), 256, -1.25, &x, &mut y, n as i32).unwrap();
        assert_close(&y, &want, 1e-6);
        // An Out argument, from and into ndarray arrays.
        let xa = ndarray::Array1::from(x.clone());
        let mut out = ndarray::Array1::<f32>::zeros(n);
        scale_out(&ctx, (n as u32).div_ceil(256), 256, &xa, &mut out, 3.0, n as i32).unwrap();
        let want: Vec<f32> = x.iter().map(|v| 3.0 * v).collect();
        assert_close(out.as_slice().unwrap(), &want, 0.0);
    }
    // Steady state: the blocks come back to the context's pools.
    let pool = ctx.device_pool().unwrap();
    assert_eq!(pool.active_blocks(), 0);
    let held = pool.held_blocks();
    let x = rng.vec_f32(1 << 20);
    let mut y = rng.vec_f32(1 << 20);
    axpy(&ctx, 4096, 256, 1.0, &x, &mut y, 1 << 20).unwrap();
    assert_eq!(pool.held_blocks(), held, "no new device blocks in steady state");
    // A bad launch is reported, and the next call works.
    let e = axpy(&ctx, 1, 2048, 1.0, &x, &mut y, 1 << 20).unwrap_err();
    assert!(matches!(e, Error::InvalidLaunch(_)), "{e}");
    let before = y.clone();
    axpy(&ctx, 4096, 256, 1.0, &x, &mut y, 1 << 20).unwrap();
    let want: Vec<f32> = x.iter().zip(&before).map(|(x, y)| x + y).collect();
    assert_close(&y, &want, 1e-6);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn staged_calls_from_several_threads_under_every_setting() {
    let ctx = ctx();
    // Several callers at once: one has the copy threads, the others copy alone; each setting
    // (chunk size, thread count) changes only how the work is cut, never the result.
    for (chunk, threads) in [(0, 0), (4096, 16), (1 << 20, 1), (64 << 10, 3)] {
        gpu_runtime::__testing::set_staging_tuning(chunk, threads);
        std::thread::scope(|s| {
            for t in 0..4u64 {
                let ctx = &ctx;
                s.spawn(move || {
                    let mut rng = Rng::new(40 + t);
                    for n in [777usize, (1 << 20) + 3, 3 << 20] {
                        let x = rng.vec_f32(n);
                        let mut y = rng.vec_f32(n);
                        let want: Vec<f32> = x.iter().zip(&y).map(|(x, y)| 0.75 * x + y).collect();
                        axpy(ctx, (n as u32).div_ceil(256), 256, 0.75, &x, &mut y, n as i32).unwrap();
                        assert_close(&y, &want, 1e-6);
                    }
                });
            }
        });
    }
    gpu_runtime::__testing::set_staging_tuning(0, 0);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn pinned_arrays_of_every_flag_round_trip() {
    let ctx = ctx();
    let mut rng = Rng::new(15);
    for flags in [
        HostAllocFlags::NONE,
        HostAllocFlags::PORTABLE,
        HostAllocFlags::WRITE_COMBINED,
        HostAllocFlags::PORTABLE | HostAllocFlags::DEVICE_MAP,
    ] {
        let src = Array2::from_shape_vec((300, 217), rng.vec_f32(300 * 217)).unwrap();
        let mut a = ctx.pagelocked_empty_like::<f32, _, _>(&src, flags).unwrap();
        a.view_mut().assign(&src);
        let mut d = ctx.to_device(&a).unwrap();
        twice::prepare(&ctx)
            .unwrap()
            .prepared_call(300 * 217 / 256 + 1, 256, &mut d, 300 * 217)
            .unwrap();
        let mut back = ctx.pagelocked_zeros::<f32, _>((300, 217), flags).unwrap();
        d.copy_to_host(&mut back).unwrap();
        let want = src.mapv(|v| 2.0 * v);
        assert_eq!(back.view(), want.view(), "flags {flags:?}");
    }
    // Mapped memory: the kernel writes host memory directly.
    let mut m = ctx
        .pagelocked_empty::<f32, _>(5000, HostAllocFlags::DEVICE_MAP)
        .unwrap();
    let src = rng.vec_f32(5000);
    m.as_slice_memory_order_mut().copy_from_slice(&src);
    assert_ne!(m.device_ptr().unwrap(), 0);
    twice::prepare(&ctx)
        .unwrap()
        .prepared_call(20, 256, &mut m.mapped_mut().unwrap(), 5000)
        .unwrap();
    ctx.synchronize().unwrap();
    let want: Vec<f32> = src.iter().map(|v| 2.0 * v).collect();
    assert_close(m.host_slice().unwrap(), &want, 0.0);
    let plain = ctx.pagelocked_empty::<f32, _>(4, HostAllocFlags::NONE).unwrap();
    assert!(matches!(plain.device_ptr(), Err(Error::NotMapped)));
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn page_locked_pool_reuses_blocks() {
    let ctx = ctx();
    let pool = PageLockedMemoryPool::new(&ctx, PageLockedAllocator::new(HostAllocFlags::PORTABLE));
    let a = pool.allocate::<f64, _>((100, 100)).unwrap();
    let addr = a.as_ptr();
    assert_eq!((pool.active_blocks(), pool.held_blocks()), (1, 0));
    drop(a);
    assert_eq!((pool.active_blocks(), pool.held_blocks()), (0, 1));
    let mut b = pool.allocate::<f32, _>(19_000).unwrap(); // 76000 B: the same 80 KiB class
    assert_eq!(b.as_ptr() as usize, addr as usize);
    let src = Rng::new(16).vec_f32(19_000);
    b.as_slice_memory_order_mut().copy_from_slice(&src);
    let d = ctx.to_device(&b).unwrap();
    assert_close(&d.to_vec().unwrap(), &src, 0.0);
    pool.stop_holding();
    drop(b);
    assert_eq!((pool.active_blocks(), pool.held_blocks()), (0, 0));
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn registered_and_aligned_host_memory() {
    let ctx = ctx();
    let mut rng = Rng::new(17);
    let src = Array2::from_shape_vec((64, 1024), rng.vec_f32(64 * 1024)).unwrap();
    let mut reg = ctx
        .register_host_memory(src.clone(), HostRegisterFlags::DEVICE_MAP)
        .unwrap();
    assert_ne!(reg.device_ptr().unwrap(), 0);
    let mut d = ctx.to_device(&*reg).unwrap();
    twice::prepare(&ctx)
        .unwrap()
        .prepared_call(256, 256, &mut d, 64 * 1024)
        .unwrap();
    d.copy_to_host(&mut reg).unwrap();
    let back = reg.into_inner();
    assert_eq!(back, src.mapv(|v| 2.0 * v));

    let mut al = gpu_runtime::driver::aligned_empty::<f32, _>((33, 65), 4096).unwrap();
    assert_eq!(al.as_ptr() as usize % 4096, 0);
    let v = rng.vec_f32(33 * 65);
    al.as_slice_memory_order_mut().copy_from_slice(&v);
    let d = ctx.to_device(&al).unwrap();
    assert_close(&d.to_vec().unwrap(), &v, 0.0);

    // PyCUDA's aligned_empty + register_host_memory: the aligned array page-locked in place,
    // mapped, and doubled by a kernel writing host memory directly.
    let want: Vec<f32> = v.iter().map(|x| 2.0 * x).collect();
    ctx.register_host_slice(
        al.as_slice_memory_order_mut(),
        HostRegisterFlags::DEVICE_MAP,
        |mut reg| {
            let n = reg.len();
            twice::prepare(&ctx)
                .unwrap()
                .prepared_call(
                    (n as u32).div_ceil(256),
                    256,
                    &mut reg.mapped_mut().unwrap(),
                    n as i32,
                )
                .unwrap();
            // No synchronize: reading the slice waits for the kernel that writes it.
            assert_eq!(&*reg, &want[..]);
        },
    )
    .unwrap();
    // Unregistered when the closure returned: it can be registered again, without mapping.
    ctx.register_host_slice(al.as_slice_memory_order_mut(), HostRegisterFlags::NONE, |reg| {
        assert!(matches!(reg.device_ptr(), Err(Error::NotMapped)));
    })
    .unwrap();
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn managed_doublify_through_the_macro() {
    let ctx = ctx();
    let mut a = ctx.managed_empty::<f32, _>((4, 4), AttachFlags::Global).unwrap();
    let src = Rng::new(18).vec_f32(16);
    a.as_slice_memory_order_mut().copy_from_slice(&src);
    doublify::prepare(&ctx)
        .unwrap()
        .prepared_call(1, (4, 4), &mut a)
        .unwrap();
    ctx.synchronize().unwrap();
    let want: Vec<f32> = src.iter().map(|v| 2.0 * v).collect();
    assert_close(a.host_slice().unwrap(), &want, 0.0);
    let z = ctx
        .managed_zeros_like::<f32, _, _>(&Array2::<f32>::ones((3, 5)), AttachFlags::Host)
        .unwrap();
    assert!(z.view().iter().all(|&v| v == 0.0) && z.shape() == [3, 5]);
    // More managed memory than the device has free is refused before the driver is asked.
    let (free, _) = ctx.mem_get_info().unwrap();
    let e = ctx
        .managed_empty::<u8, _>(free + (1 << 30), AttachFlags::Global)
        .unwrap_err();
    assert!(
        matches!(
            e,
            Error::Memory(MemoryError::ManagedMoreThanFree { bytes, .. }) if bytes == free + (1 << 30)
        ),
        "{e}"
    );
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn managed_memory_attaches_prefetches_and_takes_advice() {
    let ctx = ctx();
    let dev = ctx.device();
    let n = 1 << 20;
    let mut a = ctx.managed_empty::<f32, _>(n, AttachFlags::Global).unwrap();
    let src = Rng::new(19).vec_f32(n);
    a.as_slice_memory_order_mut().copy_from_slice(&src);
    let k = twice::prepare(&ctx).unwrap();
    let stream = Stream::new(&ctx).unwrap();

    // Attached to one stream: the host may use it once that stream is done.
    a.attach(AttachFlags::Single, Some(&stream)).unwrap();
    a.prefetch(MemLocation::Device(dev), Some(&stream)).unwrap();
    assert_eq!(
        a.last_prefetch_location().unwrap(),
        Some(MemLocation::Device(dev))
    );
    k.prepared_async_call((n as u32).div_ceil(256), 256, &stream, &mut a, n as i32)
        .unwrap();
    a.prefetch(MemLocation::Host, Some(&stream)).unwrap();
    stream.synchronize().unwrap();
    assert_eq!(a.last_prefetch_location().unwrap(), Some(MemLocation::Host));
    let want: Vec<f32> = src.iter().map(|v| 2.0 * v).collect();
    assert_close(a.host_slice().unwrap(), &want, 0.0);
    a.attach(AttachFlags::Global, None).unwrap();

    // Advice is read back as given, and kernels still see the same data.
    assert!(!a.is_read_mostly().unwrap());
    a.advise(MemAdvice::SetReadMostly).unwrap();
    assert!(a.is_read_mostly().unwrap());
    a.advise(MemAdvice::UnsetReadMostly).unwrap();
    assert!(!a.is_read_mostly().unwrap());
    assert_eq!(a.preferred_location().unwrap(), None);
    a.advise(MemAdvice::SetPreferredLocation(MemLocation::Device(dev)))
        .unwrap();
    assert_eq!(a.preferred_location().unwrap(), Some(MemLocation::Device(dev)));
    a.advise(MemAdvice::SetAccessedBy(MemLocation::Device(dev)))
        .unwrap();
    k.prepared_call((n as u32).div_ceil(256), 256, &mut a, n as i32)
        .unwrap();
    ctx.synchronize().unwrap();
    let want: Vec<f32> = src.iter().map(|v| 4.0 * v).collect();
    assert_close(a.host_slice().unwrap(), &want, 0.0);
    a.advise(MemAdvice::UnsetAccessedBy(MemLocation::Device(dev)))
        .unwrap();
    a.advise(MemAdvice::UnsetPreferredLocation).unwrap();
    assert_eq!(a.preferred_location().unwrap(), None);

    // Mistakes are typed errors.
    let e = a.attach(AttachFlags::Single, None).unwrap_err();
    assert!(
        matches!(e, Error::Memory(MemoryError::AttachSingleWithoutStream)),
        "{e}"
    );
    let other = Context::create(dev, ContextFlags::SCHED_AUTO).unwrap();
    let e = a
        .prefetch(MemLocation::Host, Some(&Stream::new(&other).unwrap()))
        .unwrap_err();
    assert!(matches!(e, Error::WrongContext { .. }), "{e}");
    let e = ctx
        .managed_empty::<f32, _>(4, AttachFlags::Single)
        .map(drop)
        .unwrap_err();
    assert!(
        matches!(e, Error::Memory(MemoryError::ManagedSingleAtAllocation)),
        "{e}"
    );
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn host_device_size_mismatch_is_typed_and_names_the_sizes() {
    let ctx = ctx();
    let d = ctx.alloc::<f32>(1000).unwrap();
    let mut h = ctx.pagelocked_empty::<f32, _>(999, HostAllocFlags::NONE).unwrap();
    let e = d.copy_to_host(&mut h).unwrap_err();
    assert!(
        matches!(
            e,
            Error::Copy(CopyError::HostDeviceLength {
                operation: "copy_to_host",
                host: 999,
                device: 1000,
            })
        ),
        "{e}"
    );
}

#[gpu_test]
fn gpu_test_attribute_gives_the_default_context(ctx: &Context) {
    assert_eq!(*ctx, Context::default().unwrap());
    let x = Rng::new(19).vec_f32(10);
    let d = ctx.to_device(&x).unwrap();
    assert_close(&d.to_vec().unwrap(), &x, 0.0);
}

#[gpu_test]
fn gpu_test_attribute_without_a_parameter_returning_result() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let raw: *const c_void = std::ptr::null();
    assert!(raw.is_null());
    let x = Rng::new(20).vec_f32(3);
    assert_close(&ctx.to_device(&x)?.to_vec()?, &x, 0.0);
    Ok(())
}

/// PyCUDA's `bitlog2`, `pool.bin_number` and `pool.alloc_size`, against a reference built
/// independently: the list of every class size (0..=3, then `(4 + m) << k`), where a request's
/// class is the first size that holds it. No GPU needed.
#[test]
fn pool_bins_and_allocation_sizes_follow_the_class_list() {
    use gpu_runtime::tools::{alloc_size, bin_number, bitlog2};
    let mut classes: Vec<u128> = (0..4).collect();
    for k in 0..=60u32 {
        for m in 0..4u128 {
            classes.push((4 + m) << k);
        }
    }
    classes.retain(|&c| c <= 1 << 62);
    assert!(classes.windows(2).all(|w| w[0] < w[1]));
    let class_of = |s: u128| classes.iter().position(|&c| c >= s).unwrap();

    let mut rng = Rng::new(0xb125);
    let mut sizes: Vec<usize> = (0..4096)
        .map(|_| (rng.next_u64() >> (rng.next_u64() % 64)) as usize)
        .collect();
    sizes.extend([
        0,
        1,
        2,
        3,
        4,
        5,
        7,
        8,
        9,
        10,
        11,
        1000,
        1024,
        1025,
        1 << 20,
        (1 << 20) + 1,
        1 << 62,
    ]);
    for s in sizes {
        let want = (s as u128 <= 1 << 62).then(|| class_of(s as u128));
        let bin = bin_number(s);
        assert_eq!(bin, want, "bin_number({s})");
        assert_eq!(DeviceMemoryPool::bin_number(s), bin);
        assert_eq!(PageLockedMemoryPool::bin_number(s), bin);
        if let Some(bin) = bin {
            let size = alloc_size(bin).unwrap();
            assert_eq!(size as u128, classes[bin], "alloc_size({bin})");
            assert!(size >= s && (s < 4 || size - s <= size / 4), "{s} -> {size}");
            assert_eq!(DeviceMemoryPool::alloc_size(bin), Some(size));
        }
    }
    assert_eq!(alloc_size(classes.len()), None);
    assert_eq!(bin_number((1 << 62) + 1), None);
    assert_eq!(bin_number(usize::MAX), None);

    for _ in 0..4096 {
        let v = rng.next_u64() >> (rng.next_u64() % 64);
        let mut reference = 0;
        while reference < 63 && v >> (reference + 1) != 0 {
            reference += 1;
        }
        assert_eq!(bitlog2(v), reference, "bitlog2({v})");
    }
    assert_eq!((bitlog2(0), bitlog2(1), bitlog2(u64::MAX)), (0, 0, 63));
}

#[kernel(
    r#"
#include <cstdio>
__global__ void print_pairs(const int *x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) printf("%d:%d\n", i, x[i]);
}"#
)]
fn print_pairs(x: &[i32], n: i32);

/// A kernel's printf output, captured in the process (PyCUDA tests read it from the
/// terminal): every line, against the random input it printed.
#[gpu_test]
fn kernel_printf_output_is_captured_in_process(ctx: &Context) {
    let mut rng = Rng::new(0x9f);
    let n: u32 = 300;
    let x: Vec<i32> = (0..n)
        .map(|_| (rng.next_u64() % 2_000_001) as i32 - 1_000_000)
        .collect();
    let xd = ctx.to_device(&x).unwrap();
    let k = print_pairs::prepare(ctx).unwrap();
    let ((), out) =
        gpu_runtime::tools::capture_printf(ctx, || k.prepared_call(n.div_ceil(128), 128, &xd, n as i32))
            .unwrap();
    let mut got: Vec<(usize, i32)> = out
        .lines()
        .map(|l| {
            let (i, v) = l
                .split_once(':')
                .unwrap_or_else(|| panic!("unexpected line {l:?}"));
            (i.parse().unwrap(), v.parse().unwrap())
        })
        .collect();
    got.sort();
    let want: Vec<(usize, i32)> = x.iter().copied().enumerate().collect();
    assert_eq!(got, want);
}
