//! The device interface on a real GPU: devices, contexts, streams, events, every kind of device
//! memory, arrays, textures, surfaces, IPC and the profiler. Each test checks against a host
//! reference, a second path or a driver query, on random data.
//! Run on a GPU machine: `cargo test --test suite -- --ignored device_interface::`.

use std::collections::HashSet;

use gpu_runtime::cudarc::driver::sys;
use gpu_runtime::ndarray::{Array2, Array3, ShapeBuilder};
// The ported PyCUDA tests import the driver layer whole, as `from pycuda.driver import *`.
use gpu_runtime::compiler::Target;
use gpu_runtime::driver::*;
use gpu_runtime::*;
use gpu_suite::{assert_close, rerun_test_in_child, Rng};

use crate::common::{ctx, test_path};

#[kernel(
    r#"
__global__ void spin(long long cycles, int *done) {
    long long t0 = clock64();
    while (clock64() - t0 < cycles) {}
    if (threadIdx.x == 0) done[blockIdx.x] = 1;
}"#
)]
fn spin(cycles: i64, done: &mut [i32]);

#[kernel(
    r#"
__global__ void sm_ids(unsigned int *ids, unsigned int *nsm, long long cycles) {
    unsigned int id, n;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
    asm volatile("mov.u32 %0, %%nsmid;" : "=r"(n));
    long long t0 = clock64();
    while (clock64() - t0 < cycles) {}
    if (threadIdx.x == 0) { ids[blockIdx.x] = id; nsm[blockIdx.x] = n; }
}"#
)]
fn sm_ids(ids: &mut [u32], nsm: &mut [u32], cycles: i64);

#[kernel(
    r#"
__global__ void scale(float a, float *x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] *= a;
}"#
)]
fn scale(a: f32, x: &mut [f32], n: i32);

#[kernel(
    r#"
__global__ void tex2d_sample(cudaTextureObject_t tex, float *out, int w, int h, float dx, float dy) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
    if (x < w && y < h) out[y * w + x] = tex2D<float>(tex, x + 0.5f + dx, y + 0.5f + dy);
}"#
)]
fn tex2d_sample(tex: TextureObject, out: &mut [f32], w: i32, h: i32, dx: f32, dy: f32);

#[kernel(
    r#"
__global__ void tex1d_fetch(cudaTextureObject_t tex, float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex1Dfetch<float>(tex, i);
}"#
)]
fn tex1d_fetch(tex: TextureObject, out: &mut [f32], n: i32);

#[kernel(
    r#"
__global__ void surf_write(cudaSurfaceObject_t surf, const float *src, int w, int h) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
    if (x < w && y < h) surf2Dwrite(2.0f * src[y * w + x] + 1.0f, surf, x * (int)sizeof(float), y);
}"#
)]
fn surf_write(surf: SurfaceObject, #[In] src: &[f32], w: i32, h: i32);

#[kernel(
    r#"
__global__ void cube_centres(cudaTextureObject_t tex, float *out) {
    const float d[6][3] = {{1, 0, 0}, {-1, 0, 0}, {0, 1, 0}, {0, -1, 0}, {0, 0, 1}, {0, 0, -1}};
    int f = threadIdx.x;
    if (f < 6) out[f] = texCubemap<float>(tex, d[f][0], d[f][1], d[f][2]);
}"#
)]
fn cube_centres(tex: TextureObject, out: &mut [f32]);

fn f32s(seed: u64, n: usize) -> Vec<f32> {
    Rng::new(seed).vec_f32(n)
}

/// Cycles of `clock64()` for about `ms` milliseconds, from the driver's clock rate (kHz).
fn cycles_for_ms(ctx: &Context, ms: f64) -> i64 {
    let khz = ctx.device().attribute(DeviceAttribute::ClockRate).unwrap() as f64;
    (khz * ms) as i64
}

// ---- versions, devices, attributes ----

#[test]
#[ignore = "needs a CUDA GPU"]
fn versions_and_init() {
    init().unwrap();
    let driver = driver_version().unwrap();
    assert!(
        driver >= cuda_version(),
        "driver {driver:?} older than {:?}",
        cuda_version()
    );
    assert_eq!(VERSION, env!("CARGO_PKG_VERSION"));
    let (major, ..) = version();
    assert_eq!(major.to_string(), env!("CARGO_PKG_VERSION_MAJOR"));
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn device_queries_agree_with_each_other() {
    let ctx = ctx();
    let n = Device::count().unwrap();
    assert!(n >= 1);
    let dev = ctx.device();
    let name = dev.name().unwrap();
    assert!(name.contains("NVIDIA") || !name.is_empty(), "{name}");
    let bus = dev.pci_bus_id().unwrap();
    let again = Device::by_pci_bus_id(&bus).unwrap();
    assert_eq!(again, dev);
    assert_eq!(again.name().unwrap(), name);
    let lower = Device::by_pci_bus_id(&bus.to_lowercase()).unwrap();
    let set: HashSet<Device> = [dev, again, lower, Device::new(0).unwrap()].into_iter().collect();
    assert_eq!(set.len(), if dev.ordinal() == 0 { 1 } else { 2 });
    let (_, total) = ctx.mem_get_info().unwrap();
    assert_eq!(dev.total_memory().unwrap(), total);
    let cc = dev.compute_capability().unwrap();
    assert_eq!(ctx.compute_capability(), cc);
    assert!(Device::by_pci_bus_id("not-a-bus-id").is_err());
    assert!(Device::new(n).is_err());
    // This process made a context, so the device is not Prohibited; the raw attribute agrees.
    let mode = dev.compute_mode().unwrap();
    let raw = dev.attribute(DeviceAttribute::ComputeMode).unwrap();
    let expected = [(ComputeMode::Default, 0), (ComputeMode::ExclusiveProcess, 3)];
    assert!(expected.contains(&(mode, raw)), "{mode:?} vs raw {raw}");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn attributes_agree_with_other_queries_and_the_hardware() {
    let ctx = ctx();
    let dev = ctx.device();
    let all = dev.attributes().unwrap();
    assert!(all.len() >= 140, "only {} attributes answered", all.len());
    let get = |a: DeviceAttribute| all.iter().find(|(x, _)| *x == a).map(|(_, v)| *v).unwrap();
    let cc = dev.compute_capability().unwrap();
    assert_eq!(get(DeviceAttribute::ComputeCapabilityMajor) as u32, cc.0);
    assert_eq!(get(DeviceAttribute::ComputeCapabilityMinor) as u32, cc.1);
    let lim = ctx.limits();
    assert_eq!(
        get(DeviceAttribute::MaxThreadsPerBlock) as u32,
        lim.max_threads_per_block
    );
    assert_eq!(get(DeviceAttribute::MaxGridDimX) as u32, lim.max_grid_dim[0]);
    assert_eq!(
        get(DeviceAttribute::MaxSharedMemoryPerBlockOptin) as u32,
        lim.max_shared_memory_per_block_optin
    );
    assert_eq!(get(DeviceAttribute::WarpSize), 32);
    assert_eq!(dev.attribute(DeviceAttribute::WarpSize).unwrap(), 32);
    assert_eq!(
        dev.attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_WARP_SIZE)
            .unwrap(),
        32
    );
    // The PCI bus id string and the PCI attributes name the same slot.
    let bus = dev.pci_bus_id().unwrap();
    let parts: Vec<u32> = bus
        .split([':', '.'])
        .map(|p| u32::from_str_radix(p, 16).unwrap())
        .collect();
    assert_eq!(parts[0] as i32, get(DeviceAttribute::PciDomainId));
    assert_eq!(parts[1] as i32, get(DeviceAttribute::PciBusId));
    assert_eq!(parts[2] as i32, get(DeviceAttribute::PciDeviceId));
    // The multiprocessor count against the SM ids the hardware reports to running blocks:
    // blocks of 1024 threads, at most two per SM, spinning long enough that every SM runs one.
    let sms = get(DeviceAttribute::MultiprocessorCount) as usize;
    let blocks = 4 * sms;
    let mut ids = ctx.alloc_zeros::<u32>(blocks).unwrap();
    let mut nsm = ctx.alloc_zeros::<u32>(blocks).unwrap();
    sm_ids::prepare(&ctx)
        .unwrap()
        .prepared_call(blocks as u32, 1024, &mut ids, &mut nsm, cycles_for_ms(&ctx, 2.0))
        .unwrap();
    let ids = ids.to_vec().unwrap();
    let nsm = nsm.to_vec().unwrap();
    let distinct: HashSet<u32> = ids.iter().copied().collect();
    assert_eq!(
        distinct.len(),
        sms,
        "blocks ran on {} SMs, attribute says {sms}",
        distinct.len()
    );
    assert!(ids.iter().zip(&nsm).all(|(i, n)| i < n));
    assert!(DeviceAttribute::ALL
        .iter()
        .all(|a| a.name().starts_with("CU_DEVICE_ATTRIBUTE_")));
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_device_is_not_its_own_peer_and_same_device_peer_copies_work() {
    let ctx = ctx();
    let dev = ctx.device();
    assert!(!dev.can_access_peer(dev).unwrap());
    // Peer access to a context on the same device is refused by the driver, with an error.
    let other = Context::create(dev, ContextFlags::SCHED_AUTO).unwrap();
    assert!(ctx.enable_peer_access(&other).is_err());
    assert!(!ctx.has_peer_access(&other));
    // A "peer" copy between two contexts of one device needs no peer access.
    let host = f32s(40, 10_000);
    let src = ctx.to_device(&host).unwrap();
    let mut dst = other.alloc::<f32>(host.len()).unwrap();
    memcpy_peer(&mut dst, &src).unwrap();
    assert_eq!(other.from_device(&dst, host.len()).unwrap().to_vec(), host);
    let stream = Stream::new(&ctx).unwrap();
    let mut back = ctx.alloc_zeros::<f32>(host.len()).unwrap();
    // The stream must belong to the destination's context.
    assert!(matches!(
        memcpy_peer_async(&mut back, &dst, &Stream::new(&other).unwrap()),
        Err(Error::WrongContext { .. })
    ));
    memcpy_peer_async(&mut back, &dst, &stream).unwrap();
    stream.synchronize().unwrap();
    assert_eq!(back.to_vec().unwrap(), host);
    // A plain device-to-device copy across contexts is refused with advice.
    let e = memcpy_dtod(&mut back, &dst).unwrap_err();
    assert!(matches!(e, Error::WrongContext { .. }), "{e}");
    // The message names the copy to use instead (a message test).
    assert!(e.to_string().contains("memcpy_peer"), "{e}");

    // A box between the two contexts (PyCUDA's Memcpy3DPeer): 3 slices of 5 rows of 7 floats
    // from (x 2, y 1, z 1) of a 16 x 8 x 4 volume in `ctx` into a 7 x 5 x 3 one in `other`.
    let (w, h) = (16usize, 8usize);
    let volume = f32s(41, w * h * 4);
    let mut want = Vec::new();
    for z in 1..4 {
        for y in 1..6 {
            want.extend_from_slice(&volume[z * w * h + y * w + 2..][..7]);
        }
    }
    let vol_dev = ctx.to_device(&volume).unwrap();
    let mut boxed = other.alloc_zeros::<f32>(7 * 5 * 3).unwrap();
    Memcpy3D::new(7 * 4, 5, 3)
        .src_device(&vol_dev, w * 4)
        .src_height(h)
        .src_pos(2 * 4, 1, 1)
        .dst_device(&mut boxed, 7 * 4)
        .dst_height(5)
        .call_peer()
        .unwrap();
    assert_eq!(boxed.to_vec().unwrap(), want);
    // And back, queued on a stream of the destination's context; another context's stream is
    // refused.
    let mut returned = ctx.alloc_zeros::<f32>(want.len()).unwrap();
    let box_back = |dst: &mut DeviceBuffer<f32>, stream: &Stream| {
        // SAFETY: both ends are device memory.
        unsafe {
            Memcpy3D::new(7 * 4, 5, 3)
                .src_device(&boxed, 7 * 4)
                .src_height(5)
                .dst_device(dst, 7 * 4)
                .dst_height(5)
                .call_peer_async(stream)
        }
    };
    let e = box_back(&mut returned, &Stream::new(&other).unwrap()).unwrap_err();
    assert!(matches!(e, Error::WrongContext { .. }), "{e}");
    box_back(&mut returned, &stream).unwrap();
    stream.synchronize().unwrap();
    assert_eq!(returned.to_vec().unwrap(), want);
}

// ---- contexts ----

#[test]
#[ignore = "needs a CUDA GPU"]
fn created_contexts_have_flags_their_own_modules_and_a_stack() {
    let primary = ctx();
    let dev = primary.device();
    let flags = ContextFlags::SCHED_BLOCKING_SYNC | ContextFlags::LMEM_RESIZE_TO_MAX;
    let owned = Context::create(dev, flags).unwrap();
    assert!(primary.is_primary() && !owned.is_primary());
    assert_ne!(owned, primary);
    assert!(owned.flags().unwrap().contains(flags));
    assert_eq!(owned.device(), dev);
    // A kernel compiled and run in the owned context.
    let host = f32s(41, 4097);
    let mut x = owned.to_device(&host).unwrap();
    scale::prepare(&owned)
        .unwrap()
        .prepared_call(17, 256, -3.0, &mut x, host.len() as i32)
        .unwrap();
    let want: Vec<f32> = host.iter().map(|v| -3.0 * v).collect();
    assert_close(&x.to_vec().unwrap(), &want, 1e-6);
    // The context stack: push makes a context current, pop gives it back.
    owned.push().unwrap();
    assert_eq!(Context::current().unwrap(), Some(owned.clone()));
    assert_eq!(Context::current_device().unwrap(), dev);
    assert_eq!(Context::pop().unwrap(), Some(owned.clone()));
    primary.bind().unwrap();
    assert_eq!(Context::current().unwrap(), Some(primary.clone()));
    assert!(primary.api_version().unwrap() >= 3020);
    assert!(owned.api_version().unwrap() >= 3020);
    // Synchronize reports success after work in the context.
    owned.synchronize().unwrap();
    // The context outlives its last handle while memory made in it exists.
    drop(owned);
    assert_close(&x.to_vec().unwrap(), &want, 1e-6);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn contexts_are_shared_across_threads() {
    let ctx = ctx();
    std::thread::scope(|s| {
        for t in 0..4u64 {
            let ctx = ctx.clone();
            s.spawn(move || {
                let host = f32s(50 + t, 30_000);
                let mut x = ctx.to_device(&host).unwrap();
                let a = t as f32 + 0.5;
                scale::prepare(&ctx)
                    .unwrap()
                    .prepared_call(118, 256, a, &mut x, host.len() as i32)
                    .unwrap();
                let want: Vec<f32> = host.iter().map(|v| a * v).collect();
                assert_close(&x.to_vec().unwrap(), &want, 1e-6);
            });
        }
    });
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn limits_and_cache_configuration_read_back() {
    let ctx = Context::create(ctx().device(), ContextFlags::SCHED_AUTO).unwrap();
    ctx.set_limit(Limit::MallocHeapSize, 32 << 20).unwrap();
    assert_eq!(ctx.get_limit(Limit::MallocHeapSize).unwrap(), 32 << 20);
    ctx.set_limit(Limit::PrintfFifoSize, 3 << 20).unwrap();
    assert_eq!(ctx.get_limit(Limit::PrintfFifoSize).unwrap(), 3 << 20);
    ctx.set_limit(Limit::StackSize, 4096).unwrap();
    assert!(ctx.get_limit(Limit::StackSize).unwrap() >= 4096);
    for c in [
        CacheConfig::PreferL1,
        CacheConfig::PreferShared,
        CacheConfig::PreferEqual,
    ] {
        ctx.set_cache_config(c).unwrap();
        assert_eq!(ctx.get_cache_config().unwrap(), c);
    }
    ctx.set_shared_config(SharedConfig::FourByteBankSize).unwrap();
    ctx.get_shared_config().unwrap();
    // The primary context's limits are its own.
    assert_ne!(self::ctx().get_limit(Limit::MallocHeapSize).unwrap(), 0);
}

// ---- streams and events ----

#[test]
#[ignore = "needs a CUDA GPU"]
fn stream_priorities_callbacks_and_async_memsets() {
    let ctx = ctx();
    // Priorities: lower numbers are higher; outside the range is refused with the range.
    let (lowest, highest) = ctx.stream_priority_range().unwrap();
    assert!(highest <= lowest, "({lowest}, {highest})");
    let urgent = Stream::with_priority(&ctx, StreamFlags::NonBlocking, highest).unwrap();
    assert_eq!(urgent.priority().unwrap(), highest);
    assert_eq!(urgent.flags().unwrap(), StreamFlags::NonBlocking);
    assert_eq!(Stream::new(&ctx).unwrap().priority().unwrap(), 0);
    let e = Stream::with_priority(&ctx, StreamFlags::Default, highest - 1).unwrap_err();
    assert!(
        matches!(
            e,
            Error::Flags(FlagsError::StreamPriority { priority, highest: h, lowest: l })
                if priority == highest - 1 && h == highest && l == lowest
        ),
        "{e}"
    );

    // A host function runs once the kernel queued before it has finished.
    let stream = Stream::new(&ctx).unwrap();
    let mut done = ctx.alloc_zeros::<i32>(1).unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let t0 = std::time::Instant::now();
    spin::prepare(&ctx)
        .unwrap()
        .prepared_async_call(1, 32, &stream, cycles_for_ms(&ctx, 50.0), &mut done)
        .unwrap();
    stream
        .add_callback(move || tx.send(t0.elapsed()).unwrap())
        .unwrap();
    let waited = rx.recv_timeout(std::time::Duration::from_secs(10)).unwrap();
    assert!(
        waited.as_secs_f64() > 0.040,
        "ran after {waited:?}, before the 50 ms kernel ended"
    );
    stream.synchronize().unwrap();
    assert_eq!(done.to_vec().unwrap(), [1]);

    // Async memsets on the stream, against the host.
    let host: Vec<u32> = (0..4096u32).map(|i| i.wrapping_mul(2_654_435_761)).collect();
    let mut buf = ctx.to_device(&host).unwrap();
    let mut want = host.clone();
    memset_d32_async(&mut buf.slice_mut(10..).unwrap(), 0x1234_5678, 100, &stream).unwrap();
    want[10..110].iter_mut().for_each(|v| *v = 0x1234_5678);
    memset_d8_async(&mut buf.slice_mut(200..).unwrap(), 0x5a, 8, &stream).unwrap();
    want[200..202].iter_mut().for_each(|v| *v = 0x5a5a_5a5a);
    memset_d2d16_async(&mut buf.slice_mut(1000..).unwrap(), 64, 0x0101, 4, 3, &stream).unwrap();
    for row in 0..3 {
        let at = 1000 + row * 16;
        want[at..at + 2].iter_mut().for_each(|v| *v = 0x0101_0101);
    }
    stream.synchronize().unwrap();
    assert_eq!(buf.to_vec().unwrap(), want);
    // Another context's stream is refused, as are values past the end.
    let other = Context::create(ctx.device(), ContextFlags::SCHED_AUTO).unwrap();
    let e = memset_d8_async(&mut buf, 0, 4, &Stream::new(&other).unwrap()).unwrap_err();
    assert!(matches!(e, Error::WrongContext { .. }), "{e}");
    let e = memset_d32_async(&mut buf, 0, 4097, &stream).unwrap_err();
    assert!(
        matches!(
            e,
            Error::Copy(CopyError::MemsetTooLarge {
                count: 4097,
                unit: 4,
                ..
            })
        ),
        "{e}"
    );
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn streams_report_progress_and_wait_for_events() {
    let ctx = ctx();
    let s1 = Stream::new(&ctx).unwrap();
    let s2 = Stream::with_flags(&ctx, StreamFlags::NonBlocking).unwrap();
    assert_eq!(s1.flags().unwrap(), StreamFlags::Default);
    assert_eq!(s2.flags().unwrap(), StreamFlags::NonBlocking);
    let mut done = ctx.alloc_zeros::<i32>(1).unwrap();
    let host = f32s(60, 1 << 20);
    let mut x = ctx.to_device(&host).unwrap();
    let mut y = ctx.alloc_zeros::<f32>(host.len()).unwrap();
    // s1: spin 50 ms, then scale x; s2 waits for s1's event, then copies x to y.
    spin::prepare(&ctx)
        .unwrap()
        .prepared_async_call(1, 32, &s1, cycles_for_ms(&ctx, 50.0), &mut done)
        .unwrap();
    assert!(!s1.is_done().unwrap(), "a 50 ms kernel finished at once");
    scale::prepare(&ctx)
        .unwrap()
        .prepared_async_call(4096, 256, &s1, 2.0, &mut x, host.len() as i32)
        .unwrap();
    let ev = Event::with_flags(&ctx, EventFlags::DISABLE_TIMING).unwrap();
    ev.record(Some(&s1)).unwrap();
    s2.wait_for_event(&ev).unwrap();
    memcpy_dtod_async(&mut y, &x, &s2).unwrap();
    s2.synchronize().unwrap();
    assert!(s1.is_done().unwrap() && ev.query().unwrap());
    let want: Vec<f32> = host.iter().map(|v| 2.0 * v).collect();
    assert_close(&y.to_vec().unwrap(), &want, 0.0);
    assert_eq!(done.to_vec().unwrap(), vec![1]);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn event_timing_matches_the_clock_rate() {
    let ctx = ctx();
    let stream = Stream::new(&ctx).unwrap();
    let (a, b) = (
        Event::new(&ctx).unwrap(),
        Event::with_flags(&ctx, EventFlags::BLOCKING_SYNC).unwrap(),
    );
    let mut done = ctx.alloc_zeros::<i32>(1).unwrap();
    a.record(Some(&stream)).unwrap();
    spin::prepare(&ctx)
        .unwrap()
        .prepared_async_call(1, 32, &stream, cycles_for_ms(&ctx, 30.0), &mut done)
        .unwrap();
    b.record(Some(&stream)).unwrap();
    assert!(!b.query().unwrap());
    b.synchronize().unwrap();
    assert!(b.query().unwrap());
    let t = b.time_since(&a).unwrap();
    assert_eq!(a.time_till(&b).unwrap(), t);
    // clock64 runs at or below the rated clock, so the spin takes at least about 30 ms.
    assert!(t.as_secs_f64() > 0.025 && t.as_secs_f64() < 1.0, "{t:?}");
    // Events without timing refuse to time.
    let untimed = Event::with_flags(&ctx, EventFlags::DISABLE_TIMING).unwrap();
    untimed.record(Some(&stream)).unwrap();
    untimed.synchronize().unwrap();
    assert!(untimed.time_since(&a).is_err());
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn async_copies_from_pinned_memory_overlap_a_kernel_on_another_stream() {
    let ctx = ctx();
    let n = 64 << 20; // 256 MiB of f32
    let bytes = n * 4;
    let mut pinned: *mut std::ffi::c_void = std::ptr::null_mut();
    ctx.bind().unwrap();
    // SAFETY: valid out-pointer; a context is current. Freed below.
    let allocated = unsafe { sys::cuMemHostAlloc(&mut pinned, bytes, 0) };
    assert_eq!(allocated, sys::CUresult::CUDA_SUCCESS);
    // SAFETY: the allocation holds n f32s and nothing else refers to it until it is freed.
    let host = unsafe { std::slice::from_raw_parts_mut(pinned.cast::<f32>(), n) };
    let mut rng = Rng::new(70);
    for v in host.iter_mut() {
        *v = rng.f32();
    }
    let mut dev = ctx.alloc::<f32>(n).unwrap();
    let (ks, cs) = (Stream::new(&ctx).unwrap(), Stream::new(&ctx).unwrap());
    let ev: Vec<Event> = (0..4).map(|_| Event::new(&ctx).unwrap()).collect();
    let mut done = ctx.alloc_zeros::<i32>(1).unwrap();
    ev[0].record(Some(&ks)).unwrap();
    spin::prepare(&ctx)
        .unwrap()
        .prepared_async_call(1, 32, &ks, cycles_for_ms(&ctx, 100.0), &mut done)
        .unwrap();
    ev[1].record(Some(&ks)).unwrap();
    ev[2].record(Some(&cs)).unwrap();
    // SAFETY: host stays alive and untouched until cs is synchronised below.
    unsafe { memcpy_htod_async_unchecked(&mut dev, host, &cs).unwrap() };
    ev[3].record(Some(&cs)).unwrap();
    cs.synchronize().unwrap();
    ks.synchronize().unwrap();
    let kernel = ev[1].time_since(&ev[0]).unwrap();
    let copy = ev[3].time_since(&ev[2]).unwrap();
    let copy_end = ev[3].time_since(&ev[0]).unwrap();
    let copy_start = ev[2].time_since(&ev[0]).unwrap();
    println!("kernel {kernel:?}, copy {copy:?} from {copy_start:?} to {copy_end:?}");
    assert!(copy.as_secs_f64() > 0.001, "{copy:?}");
    assert!(
        copy_end < kernel,
        "the copy ended at {copy_end:?}, after the kernel's {kernel:?}"
    );
    let mut back = vec![0f32; n];
    memcpy_dtoh(&mut back, &dev).unwrap();
    assert!(back == *host);
    // And back to pinned memory asynchronously, checked against the pageable copy.
    host.iter_mut().for_each(|v| *v = 0.0);
    // SAFETY: host is not touched until cs is synchronised.
    unsafe { memcpy_dtoh_async_unchecked(host, &dev, &cs).unwrap() };
    cs.synchronize().unwrap();
    assert!(back == *host);
    // SAFETY: allocated above with cuMemHostAlloc; no copy is pending and host is not used again.
    assert_eq!(unsafe { sys::cuMemFreeHost(pinned) }, sys::CUresult::CUDA_SUCCESS);
}

// ---- device memory ----

#[test]
#[ignore = "needs a CUDA GPU"]
fn mem_alloc_and_get_info_agree() {
    let ctx = ctx();
    let (free0, total) = ctx.mem_get_info().unwrap();
    assert!(free0 <= total);
    let n = 256 << 20;
    let buf = ctx.alloc::<u8>(n).unwrap();
    let (free1, _) = ctx.mem_get_info().unwrap();
    assert!(
        free0 - free1 >= n,
        "free went from {free0} to {free1} for {n} bytes"
    );
    buf.free().unwrap();
    let (free2, _) = ctx.mem_get_info().unwrap();
    assert!(
        free2 >= free1 + n / 2,
        "free went from {free1} to {free2} after freeing {n} bytes"
    );
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn ndarrays_of_any_dimension_and_order_round_trip() {
    let ctx = ctx();
    let v = f32s(80, 4 * 5 * 6);
    let c = Array3::from_shape_vec((4, 5, 6), v.clone()).unwrap();
    let f = Array3::from_shape_vec((4, 5, 6).f(), v.clone()).unwrap();
    let dc = ctx.array_to_device(&c).unwrap();
    let df = ctx.array_to_device(&f).unwrap();
    // Both buffers hold the elements in memory order, which is v for both.
    assert_eq!(dc.to_vec().unwrap(), v);
    assert_eq!(df.to_vec().unwrap(), v);
    assert_eq!(ctx.from_device(&dc, (4, 5, 6)).unwrap(), c);
    assert_eq!(ctx.from_device(&df, (4, 5, 6).f()).unwrap(), f);
    let like_f = ctx.from_device_like(&df, &f).unwrap();
    assert_eq!(like_f, f);
    assert!(!like_f.is_standard_layout());
    assert_eq!(ctx.from_device_like(&dc, &c).unwrap(), c);
    // A transposed view is Fortran-ordered: it copies in its memory order too.
    let t = c.t();
    let dt = ctx.array_to_device(&t).unwrap();
    assert_eq!(ctx.from_device_like(&dt, &t).unwrap(), t);
    // A shape smaller than the buffer reads its first elements.
    let head = ctx.from_device(&dc, (2, 3)).unwrap();
    assert_eq!(head.as_slice().unwrap(), &v[..6]);
    // Non-contiguous views are refused.
    let col = c.slice(gpu_runtime::ndarray::s![.., 1, ..]);
    assert!(matches!(
        ctx.array_to_device(&col),
        Err(Error::Copy(CopyError::HostArrayLayout {
            operation: "Context::array_to_device",
            ..
        }))
    ));
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn memsets_match_a_host_reference() {
    let ctx = ctx();
    let n = 10_000;
    let host: Vec<u32> = (0..n).map(|i| (i as u32).wrapping_mul(2_654_435_761)).collect();
    let mut buf = ctx.to_device(&host).unwrap();
    let mut want = host.clone();
    {
        let mut view = buf.slice_mut(100..900).unwrap();
        memset_d32(&mut view, 0xdead_beef, 800).unwrap();
    }
    want[100..900].iter_mut().for_each(|v| *v = 0xdead_beef);
    {
        let mut view = buf.slice_mut(1000..1100).unwrap();
        memset_d16(&mut view, 0x1234, 150).unwrap(); // 75 u32s
    }
    want[1000..1075].iter_mut().for_each(|v| *v = 0x1234_1234);
    {
        let mut view = buf.slice_mut(2000..2010).unwrap();
        memset_d8(&mut view, 0xab, 17).unwrap(); // 4 u32s and one byte
    }
    want[2000..2004].iter_mut().for_each(|v| *v = 0xabab_abab);
    want[2004] = (want[2004] & !0xff) | 0xab;
    assert_eq!(buf.to_vec().unwrap(), want);
    // 2D: a 7 x 5 block of a 40-wide image with a pitch of 160 bytes.
    let (w, h) = (40usize, 12usize);
    let img: Vec<u32> = (0..w * h).map(|i| i as u32 * 7 + 3).collect();
    let mut dimg = ctx.to_device(&img).unwrap();
    let mut want = img.clone();
    {
        let mut view = dimg.slice_mut(3 * w + 2..).unwrap();
        memset_d2d32(&mut view, w * 4, 42, 7, 5).unwrap();
    }
    for y in 3..8 {
        for x in 2..9 {
            want[y * w + x] = 42;
        }
    }
    {
        let mut view = dimg.slice_mut(9 * w..).unwrap();
        memset_d2d8(&mut view, w * 4, 0x01, 8, 2).unwrap(); // 2 u32s per row
        memset_d2d16(&mut view, w * 4, 0x0202, 1, 2).unwrap(); // half of the first
    }
    for y in 9..11 {
        want[y * w] = 0x0101_0202;
        want[y * w + 1] = 0x0101_0101;
    }
    assert_eq!(dimg.to_vec().unwrap(), want);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn unstructured_copies_sync_and_async() {
    let ctx = ctx();
    let host = f32s(90, 123_457);
    let mut a = ctx.alloc::<f32>(host.len()).unwrap();
    memcpy_htod(&mut a, &host).unwrap();
    let mut b = ctx.alloc::<f32>(host.len()).unwrap();
    memcpy_dtod(&mut b, &a).unwrap();
    let mut out = vec![0f32; host.len()];
    memcpy_dtoh(&mut out, &b).unwrap();
    assert_eq!(out, host);
    // Async on a stream, into a view, through pageable memory.
    let stream = Stream::new(&ctx).unwrap();
    let mut c = ctx.alloc_zeros::<f32>(host.len() + 10).unwrap();
    let part = &host[1000..2000];
    {
        let mut view = c.slice_mut(5..1005).unwrap();
        // SAFETY: part outlives the synchronisation below.
        unsafe { memcpy_htod_async_unchecked(&mut view, part, &stream).unwrap() };
    }
    let mut back = vec![0f32; 1000];
    // SAFETY: back is not touched until the stream is synchronised.
    unsafe { memcpy_dtoh_async_unchecked(&mut back, &c.slice(5..1005).unwrap(), &stream).unwrap() };
    stream.synchronize().unwrap();
    assert_eq!(back, part);
    let v = c.to_vec().unwrap();
    assert!(v[..5].iter().all(|x| *x == 0.0) && v[1005..].iter().all(|x| *x == 0.0));
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn pitched_memory_and_2d_copies() {
    let ctx = ctx();
    let (w, h) = (100usize, 37usize);
    let host = f32s(100, w * h);
    let mut p = ctx.alloc_pitch::<f32>(w, h).unwrap();
    assert!(p.pitch() >= w * 4 && p.pitch() & 3 == 0, "pitch {}", p.pitch());
    assert_eq!(p.len(), p.row_len() * h);
    p.copy_from_host(&host).unwrap();
    // Read back two ways: into a slice and into an ndarray, both checked against the host data.
    let mut out = vec![0f32; w * h];
    p.copy_to_host(&mut out).unwrap();
    assert_eq!(out, host);
    assert_eq!(
        p.to_array().unwrap(),
        Array2::from_shape_vec((h, w), host.clone()).unwrap()
    );
    // memset_d2d32 on the pitched rows: a 10 x 4 block at (20, 30).
    {
        let (pitch, start) = (p.pitch(), 30 * p.row_len() + 20);
        let mut view = p.slice_mut(start..).unwrap();
        memset_d2d32(&mut view, pitch, 1.5f32.to_bits(), 10, 4).unwrap();
    }
    let mut want = host.clone();
    for y in 30..34 {
        want[y * w + 20..y * w + 30].iter_mut().for_each(|v| *v = 1.5);
    }
    p.copy_to_host(&mut out).unwrap();
    assert_eq!(out, want);
    // A sub-rectangle from host to device and back through Memcpy2D with offsets.
    let mut d = ctx.alloc_zeros::<f32>(16 * 8).unwrap();
    Memcpy2D::new(16 * 4, 8)
        .src_host(&host, w * 4)
        .src_pos(10 * 4, 20)
        .dst_device(&mut d, 16 * 4)
        .call()
        .unwrap();
    let got = d.to_vec().unwrap();
    for y in 0..8 {
        assert_eq!(
            &got[y * 16..y * 16 + 16],
            &host[(20 + y) * w + 10..(20 + y) * w + 26]
        );
    }
    let stream = Stream::new(&ctx).unwrap();
    let mut back = vec![0f32; 4 * 3];
    // SAFETY: back is not touched until the stream is synchronised.
    unsafe {
        Memcpy2D::new(4 * 4, 3)
            .src_device(&d, 16 * 4)
            .src_pos(2 * 4, 1)
            .dst_host(&mut back, 4 * 4)
            .call_async(&stream)
            .unwrap();
    }
    stream.synchronize().unwrap();
    for y in 0..3 {
        assert_eq!(&back[y * 4..y * 4 + 4], &got[(1 + y) * 16 + 2..(1 + y) * 16 + 6]);
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn memcpy_3d_moves_a_box_between_host_and_device() {
    let ctx = ctx();
    let (nx, ny, nz) = (30usize, 20usize, 10usize);
    let host = f32s(110, nx * ny * nz);
    // Copy the 8 x 6 x 4 box at (3, 5, 2) of the host volume into a packed device buffer.
    let (bx, by, bz) = (8usize, 6usize, 4usize);
    let mut d = ctx.alloc_zeros::<f32>(bx * by * bz).unwrap();
    Memcpy3D::new(bx * 4, by, bz)
        .src_host(&host, nx * 4)
        .src_height(ny)
        .src_pos(3 * 4, 5, 2)
        .dst_device(&mut d, bx * 4)
        .dst_height(by)
        .call()
        .unwrap();
    let got = d.to_vec().unwrap();
    let mut want = Vec::new();
    for z in 2..2 + bz {
        for y in 5..5 + by {
            want.extend_from_slice(&host[(z * ny + y) * nx + 3..(z * ny + y) * nx + 3 + bx]);
        }
    }
    assert_eq!(got, want);
    // And back into a zeroed host volume at another place, asynchronously.
    let mut vol = vec![0f32; nx * ny * nz];
    let stream = Stream::new(&ctx).unwrap();
    // SAFETY: vol is not touched until the stream is synchronised.
    unsafe {
        Memcpy3D::new(bx * 4, by, bz)
            .src_device(&d, bx * 4)
            .src_height(by)
            .dst_host(&mut vol, nx * 4)
            .dst_height(ny)
            .dst_pos(0, 1, 5)
            .call_async(&stream)
            .unwrap();
    }
    stream.synchronize().unwrap();
    let mut i = 0;
    for z in 5..5 + bz {
        for y in 1..1 + by {
            assert_eq!(&vol[(z * ny + y) * nx..(z * ny + y) * nx + bx], &want[i..i + bx]);
            i += bx;
        }
    }
    assert_eq!(
        vol.iter().filter(|v| **v != 0.0).count(),
        want.iter().filter(|v| **v != 0.0).count()
    );
}

// ---- arrays, textures, surfaces ----

#[test]
#[ignore = "needs a CUDA GPU"]
fn cuda_arrays_copy_to_and_from_host_and_device() {
    let ctx = ctx();
    let (w, h, d) = (33usize, 17usize, 5usize);
    let vol = Array3::from_shape_vec((d, h, w), f32s(120, w * h * d)).unwrap();
    let a3 = CudaArray::from_ndarray(&ctx, &vol, ArrayFlags::NONE).unwrap();
    assert_eq!(a3.query_descriptor().unwrap(), (w, h, d, 1));
    assert_eq!(a3.to_vec::<f32>().unwrap(), vol.as_slice().unwrap());
    // Device -> array -> device.
    let dev = ctx.to_device(vol.as_slice().unwrap()).unwrap();
    let mut a = CudaArray::new(&ctx, ArrayDescriptor::new_3d::<f32>(w, h, d)).unwrap();
    a.copy_from_device(&dev).unwrap();
    let mut out = ctx.alloc_zeros::<f32>(w * h * d).unwrap();
    a.copy_to_device(&mut out).unwrap();
    assert_eq!(out.to_vec().unwrap(), vol.as_slice().unwrap());
    // Two-channel u16 2D array through the host.
    let pairs: Vec<[u16; 2]> = (0..w * h)
        .map(|i| [(i * 31 % 65521) as u16, (i * 17 % 4099) as u16])
        .collect();
    let mut a2 = CudaArray::new(&ctx, ArrayDescriptor::new_2d::<[u16; 2]>(w, h)).unwrap();
    a2.copy_from_host(&pairs).unwrap();
    assert_eq!(a2.query_descriptor().unwrap(), (w, h, 0, 2));
    let mut back = vec![[0u16; 2]; w * h];
    a2.copy_to_host(&mut back).unwrap();
    assert_eq!(back, pairs);
    // A row of the 2D array through Memcpy2D, against the host data.
    let mut row = vec![[0u16; 2]; 5];
    Memcpy2D::new(5 * 4, 1)
        .src_array(&a2)
        .src_pos(3 * 4, 9)
        .dst_host(&mut row, 5 * 4)
        .call()
        .unwrap();
    assert_eq!(row, &pairs[9 * w + 3..9 * w + 8]);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn cube_maps_and_unaligned_2d_copies() {
    let ctx = ctx();
    // Six 9 x 9 faces; looking straight at a face hits its centre texel (4, 4).
    let n = 9usize;
    let faces = Array3::from_shape_vec((6, n, n), f32s(125, 6 * n * n)).unwrap();
    let cube = CudaArray::from_ndarray(&ctx, &faces, ArrayFlags::CUBEMAP).unwrap();
    assert_eq!(cube.to_vec::<f32>().unwrap(), faces.as_slice().unwrap());
    let tex = Texture::from_array(&cube, &TextureDesc::default()).unwrap();
    let mut out = ctx.alloc_zeros::<f32>(6).unwrap();
    cube_centres::prepare(&ctx)
        .unwrap()
        .prepared_call(1, 6, tex.object(), &mut out)
        .unwrap();
    let want: Vec<f32> = (0..6).map(|f| faces[[f, 4, 4]]).collect();
    assert_eq!(out.to_vec().unwrap(), want);
    // Not a cube: refused before the driver sees it.
    let e = CudaArray::new(
        &ctx,
        ArrayDescriptor::new_3d::<f32>(8, 9, 6).with_flags(ArrayFlags::CUBEMAP),
    )
    .unwrap_err();
    assert!(
        matches!(
            e,
            Error::Texture(TextureError::CubeMap {
                layered: false,
                width: 8,
                height: 9,
                depth: 6,
            })
        ),
        "{e}"
    );

    // A 2D copy between odd pitches and offsets (PyCUDA's aligned=False): 5 rows of 9 bytes
    // from byte 3 of rows 2.. of a 13-byte-pitch image to byte 1 of the rows of an 11-byte-pitch
    // one.
    let img: Vec<u8> = (0..13 * 9).map(|i| (i * 37 % 251) as u8).collect();
    let src = ctx.to_device(&img).unwrap();
    let mut dst = ctx.alloc_zeros::<u8>(11 * 5).unwrap();
    Memcpy2D::new(9, 5)
        .src_device(&src, 13)
        .src_pos(3, 2)
        .dst_device(&mut dst, 11)
        .dst_pos(1, 0)
        .call_unaligned()
        .unwrap();
    let mut want = vec![0u8; 11 * 5];
    for y in 0..5 {
        want[y * 11 + 1..y * 11 + 10].copy_from_slice(&img[(y + 2) * 13 + 3..(y + 2) * 13 + 12]);
    }
    assert_eq!(dst.to_vec().unwrap(), want);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn textures_over_arrays_sample_like_the_host() {
    let ctx = ctx();
    let (w, h) = (70usize, 45usize);
    let img = Array2::from_shape_vec((h, w), f32s(130, w * h)).unwrap();
    let array = CudaArray::from_ndarray(&ctx, &img, ArrayFlags::NONE).unwrap();
    let k = tex2d_sample::prepare(&ctx).unwrap();
    let mut out = ctx.alloc_zeros::<f32>(w * h).unwrap();
    // Point sampling at texel centres returns the texels.
    let point = Texture::from_array(&array, &TextureDesc::default()).unwrap();
    k.prepared_call(
        (3, h as u32),
        32,
        point.object(),
        &mut out,
        w as i32,
        h as i32,
        0.0,
        0.0,
    )
    .unwrap();
    assert_eq!(out.to_vec().unwrap(), img.as_slice().unwrap());
    // Linear filtering a quarter texel off the centres: bilinear interpolation, clamped.
    let desc = TextureDesc {
        filter_mode: FilterMode::Linear,
        ..TextureDesc::default()
    };
    let linear = Texture::from_array(&array, &desc).unwrap();
    k.prepared_call(
        (3, h as u32),
        32,
        linear.object(),
        &mut out,
        w as i32,
        h as i32,
        0.25,
        0.25,
    )
    .unwrap();
    let at = |x: usize, y: usize| img[[y.min(h - 1), x.min(w - 1)]];
    let mut want = vec![0f32; w * h];
    for y in 0..h {
        for x in 0..w {
            want[y * w + x] =
                0.5625 * at(x, y) + 0.1875 * at(x + 1, y) + 0.1875 * at(x, y + 1) + 0.0625 * at(x + 1, y + 1);
        }
    }
    assert_close(&out.to_vec().unwrap(), &want, 1e-3);
    // Borders: clamping past the right edge returns the edge column.
    k.prepared_call(
        (3, h as u32),
        32,
        point.object(),
        &mut out,
        w as i32,
        h as i32,
        5.0,
        0.0,
    )
    .unwrap();
    let got = out.to_vec().unwrap();
    for y in 0..h {
        assert_eq!(got[y * w + w - 1], img[[y, w - 1]]);
        assert_eq!(got[y * w], img[[y, 5]]);
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn textures_over_linear_memory() {
    let ctx = ctx();
    let n = 5000;
    let host = f32s(140, n);
    // Linear textures start at the texture alignment: place the data at an aligned offset.
    let align = ctx.device().attribute(DeviceAttribute::TextureAlignment).unwrap() as u64;
    let mut buf = ctx.alloc_zeros::<f32>(n + 1024).unwrap();
    let k = ((align - buf.device_ptr() % align) % align / 4) as usize;
    memcpy_htod(&mut buf.slice_mut(k..k + n).unwrap(), &host).unwrap();
    println!(
        "TextureAlignment {align}, buffer at {:#x}, aligned offset {k}",
        buf.device_ptr()
    );
    // One float past an aligned address is refused with the alignment.
    let e = Texture::from_linear(&buf.slice((k + 1)..).unwrap(), &TextureDesc::default()).unwrap_err();
    assert!(
        matches!(e, Error::Texture(TextureError::LinearMisaligned { align: a, .. }) if a == align),
        "{e}"
    );
    let view = buf.slice(k..k + n).unwrap();
    let tex = Texture::from_linear(&view, &TextureDesc::default()).unwrap();
    let mut out = ctx.alloc_zeros::<f32>(n).unwrap();
    tex1d_fetch::prepare(&ctx)
        .unwrap()
        .prepared_call(20, 256, tex.object(), &mut out, n as i32)
        .unwrap();
    assert_eq!(out.to_vec().unwrap(), host);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn textures_over_pitched_memory() {
    let ctx = ctx();
    let (w, h) = (64usize, 20usize);
    let img = f32s(141, w * h);
    let mut p = ctx.alloc_pitch::<f32>(w, h).unwrap();
    p.copy_from_host(&img).unwrap();
    let tex = Texture::from_pitched(&p, &TextureDesc::default()).unwrap();
    let mut out = ctx.alloc_zeros::<f32>(w * h).unwrap();
    tex2d_sample::prepare(&ctx)
        .unwrap()
        .prepared_call(
            (2, h as u32),
            32,
            tex.object(),
            &mut out,
            w as i32,
            h as i32,
            0.0,
            0.0,
        )
        .unwrap();
    assert_eq!(out.to_vec().unwrap(), img);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn surfaces_let_kernels_write_arrays() {
    let ctx = ctx();
    let (w, h) = (50usize, 31usize);
    let src = f32s(150, w * h);
    let mut array = CudaArray::new(
        &ctx,
        ArrayDescriptor::new_2d::<f32>(w, h).with_flags(ArrayFlags::SURFACE_LDST),
    )
    .unwrap();
    let surf = Surface::new(&mut array).unwrap();
    // The convenience call copies src in; the kernel writes 2x+1 into the array.
    surf_write(&ctx, (2, h as u32), 32, surf.object(), &src, w as i32, h as i32).unwrap();
    drop(surf);
    let want: Vec<f32> = src.iter().map(|v| 2.0 * v + 1.0).collect();
    assert_close(&array.to_vec::<f32>().unwrap(), &want, 1e-6);
}

// ---- IPC ----

const IPC_ENV: &str = "GPU_RUNTIME_IPC_CHILD";

/// Runs in a child process (this same test binary) when the environment says so: opens the
/// shared buffer and event, checks the data, and doubles it in place.
fn ipc_child(arg: &str) {
    let ctx = ctx();
    let hex = |s: &str| -> [u8; 64] {
        let mut b = [0u8; 64];
        for (i, byte) in b.iter_mut().enumerate() {
            *byte = u8::from_str_radix(&s[2 * i..2 * i + 2], 16).unwrap();
        }
        b
    };
    let mut parts = arg.split(',');
    let mem = IpcMemHandle::from_bytes(hex(parts.next().unwrap()));
    let event = IpcEventHandle::from_bytes(hex(parts.next().unwrap()));
    let n: usize = parts.next().unwrap().parse().unwrap();
    let seed: u64 = parts.next().unwrap().parse().unwrap();
    // Asking for more than was shared is refused with the sizes.
    // SAFETY: the parent keeps the buffer alive, and neither reads nor writes it, until this
    // process has exited (it waits for it), after the event says its data is ready.
    let e = unsafe { mem.open::<f32>(&ctx, n + 1) }.unwrap_err();
    assert!(
        matches!(
            e,
            Error::Copy(CopyError::SharedAllocationTooSmall { len, element_bytes: 4, .. }) if len == n + 1
        ),
        "{e}"
    );
    let ev = Event::from_ipc_handle(&ctx, &event).unwrap();
    ev.synchronize().unwrap();
    // SAFETY: as above.
    let mut shared = unsafe { mem.open::<f32>(&ctx, n) }.unwrap();
    assert_eq!(shared.to_vec().unwrap(), f32s(seed, n));
    scale::prepare(&ctx)
        .unwrap()
        .prepared_call(n.div_ceil(256) as u32, 256, 2.0, &mut shared, n as i32)
        .unwrap();
    ctx.synchronize().unwrap();
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn ipc_memory_and_event_handles_work_in_another_process() {
    if let Ok(arg) = std::env::var(IPC_ENV) {
        ipc_child(&arg);
        return;
    }
    let ctx = ctx();
    // 2 MiB, so that asking for one element more exceeds the allocation whatever the
    // driver's rounding.
    let (n, seed) = (512 * 1024usize, 160u64);
    let host = f32s(seed, n);
    let buf = ctx.to_device(&host).unwrap();
    let ev = Event::with_flags(&ctx, EventFlags::INTERPROCESS | EventFlags::DISABLE_TIMING).unwrap();
    ev.record(None).unwrap();
    let hex = |b: [u8; 64]| b.iter().map(|x| format!("{x:02x}")).collect::<String>();
    let mem = buf.ipc_handle().unwrap();
    assert_eq!(IpcMemHandle::from_bytes(mem.to_bytes()), mem);
    let arg = format!(
        "{},{},{n},{seed}",
        hex(mem.to_bytes()),
        hex(ev.ipc_handle().unwrap().to_bytes())
    );
    let (passed, log) = rerun_test_in_child(
        &test_path(
            module_path!(),
            "ipc_memory_and_event_handles_work_in_another_process",
        ),
        &[(IPC_ENV, &arg)],
    );
    assert!(passed, "child failed:\n{log}");
    let want: Vec<f32> = host.iter().map(|v| 2.0 * v).collect();
    assert_close(&buf.to_vec().unwrap(), &want, 0.0);
}

// ---- profiler ----

#[test]
#[ignore = "needs a CUDA GPU"]
fn profiler_start_and_stop_around_work() {
    let ctx = ctx();
    profiler::start(&ctx).unwrap();
    let host = f32s(170, 1000);
    let mut x = ctx.to_device(&host).unwrap();
    scale::prepare(&ctx)
        .unwrap()
        .prepared_call(4, 256, 0.5, &mut x, 1000)
        .unwrap();
    profiler::stop(&ctx).unwrap();
    let want: Vec<f32> = host.iter().map(|v| 0.5 * v).collect();
    assert_close(&x.to_vec().unwrap(), &want, 0.0);
}

// ---- bad input ----

#[test]
#[ignore = "needs a CUDA GPU"]
fn bad_input_is_a_typed_error_with_the_sizes() {
    let ctx = ctx();
    let mut d = ctx.alloc_zeros::<f32>(12).unwrap();
    // Host and device sizes differ.
    let e = memcpy_htod(&mut d, &[0f32; 10]).unwrap_err();
    assert!(
        matches!(
            e,
            Error::Copy(CopyError::DestinationSource {
                operation: "memcpy_htod",
                dst: 12,
                src: 10,
                unit: "elements",
            })
        ),
        "{e}"
    );
    let e = memcpy_dtoh(&mut [0f32; 13], &d).unwrap_err();
    assert!(
        matches!(
            e,
            Error::Copy(CopyError::DestinationSource { dst: 13, src: 12, .. })
        ),
        "{e}"
    );
    let other = ctx.alloc_zeros::<f32>(11).unwrap();
    let e = memcpy_dtod(&mut d, &other).unwrap_err();
    assert!(
        matches!(
            e,
            Error::Copy(CopyError::DestinationSource { dst: 12, src: 11, .. })
        ),
        "{e}"
    );
    // A from_device shape larger than the allocation.
    let e = ctx.from_device(&d, (4, 5)).unwrap_err();
    assert!(
        matches!(
            e,
            Error::Copy(CopyError::ShapeLength { ref shape, elements: 20, buffer: 12, .. }) if shape == &[4, 5]
        ),
        "{e}"
    );
    // The wrong element type for an array (the Rust types make it a run-time question only
    // for arrays, whose format is chosen at run time).
    let mut a = CudaArray::new(&ctx, ArrayDescriptor::new_2d::<f32>(4, 3)).unwrap();
    let e = a.copy_from_host(&[0u8; 12]).unwrap_err();
    assert!(
        matches!(
            e,
            Error::Texture(TextureError::ElementFormat {
                ref array_format,
                ref rust_format,
                ..
            }) if array_format == "F32" && rust_format == "U8"
        ),
        "{e}"
    );
    let e = a.copy_from_host(&[0f32; 11]).unwrap_err();
    assert!(
        matches!(
            e,
            Error::Copy(CopyError::ArrayLength {
                len: 11,
                extent: (4, 3, 1),
                array_len: 12,
                ..
            })
        ),
        "{e}"
    );
    // Memsets and structured copies past the end.
    let e = memset_d32(&mut d, 1, 13).unwrap_err();
    assert!(
        matches!(
            e,
            Error::Copy(CopyError::MemsetTooLarge {
                count: 13,
                unit: 4,
                bytes: 48,
                ..
            })
        ),
        "{e}"
    );
    // The message gives the bytes asked for and held (a message test).
    assert!(e.to_string().contains("(52 bytes) do not fit in 48 bytes"), "{e}");
    let e = memset_d2d8(&mut d, 16, 1, 8, 4).unwrap_err();
    assert!(
        matches!(
            e,
            Error::Copy(CopyError::Memset2dTooLarge {
                height: 4,
                row_bytes: 8,
                pitch: 16,
                need: 56,
                bytes: 48,
                ..
            })
        ),
        "{e}"
    );
    let e = Memcpy2D::new(16, 4)
        .src_device(&other, 16)
        .dst_device(&mut d, 16)
        .call()
        .unwrap_err();
    assert!(
        matches!(
            e,
            Error::Copy(CopyError::EndTooSmall {
                which: "source",
                need: 64,
                bytes: 44,
                ..
            })
        ),
        "{e}"
    );
    let e = Memcpy2D::new(8, 2)
        .src_array(&a)
        .src_pos(12, 0)
        .dst_device(&mut d, 8)
        .call()
        .unwrap_err();
    assert!(
        matches!(
            e,
            Error::Copy(CopyError::ArrayEndTooSmall {
                which: "source",
                extent: (8, 2, 1),
                origin: (12, 0, 0),
                array: (16, 3, 1),
                ..
            })
        ),
        "{e}"
    );
    // Surfaces need the flag; pitched memory needs a power-of-two element; flags must agree.
    assert!(matches!(
        Surface::new(&mut a),
        Err(Error::Texture(TextureError::NotSurfaceArray { .. }))
    ));
    assert!(matches!(
        ctx.alloc_pitch::<[f32; 3]>(10, 10),
        Err(Error::Memory(MemoryError::PitchElement { element_bytes: 12 }))
    ));
    let e = Context::create(ctx.device(), ContextFlags::SCHED_SPIN | ContextFlags::SCHED_YIELD).unwrap_err();
    assert!(
        matches!(e, Error::Flags(FlagsError::SchedFlags { sched: 0x3, .. })),
        "{e}"
    );
    assert!(matches!(
        Event::with_flags(&ctx, EventFlags::INTERPROCESS),
        Err(Error::Flags(FlagsError::InterprocessTiming))
    ));
    // An empty buffer has nothing to share.
    assert!(matches!(
        ctx.alloc::<f32>(0).unwrap().ipc_handle(),
        Err(Error::Memory(MemoryError::EmptyIpcBuffer))
    ));
}

// ---- on any machine: NVRTC compiles the kernels above, texture and surface objects included ----

#[test]
fn texture_surface_and_sm_id_kernels_compile_with_nvrtc() {
    let sm90 = Target::Cubin { major: 9, minor: 0 };
    for (name, source) in [
        ("spin", spin::source()),
        ("sm_ids", sm_ids::source()),
        ("scale", scale::source()),
        ("tex2d_sample", tex2d_sample::source()),
        ("tex1d_fetch", tex1d_fetch::source()),
        ("surf_write", surf_write::source()),
    ] {
        let out = source.compile(sm90).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(&out.image[..4], b"\x7fELF", "{name}");
    }
}
