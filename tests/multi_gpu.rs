//! Two GPUs in one process: a context per device, copies between them with and without peer
//! access, a kernel on one device using the other's memory, and a fault on one device, which
//! stops both devices for the faulting process (the driver's doing) but not for others.
//!
//! Every test needs two GPUs and fails saying so on a machine with one, so this file is built
//! only with the `multi-gpu` feature:
//! `cargo test --features multi-gpu --test multi_gpu -- --ignored`.

mod common;

use common::{axpy, raw_alloc_in};
// The ported PyCUDA tests import the driver layer whole, as `from pycuda.driver import *`.
use gpu_runtime::driver::*;
use gpu_runtime::launch::{Arg, ArgType};
use gpu_runtime::*;
use gpu_suite::{assert_close, rerun_test_in_child, Rng};

const CHILD_ENV: &str = "GPU_RUNTIME_MULTI_GPU_CHILD";

/// Contexts on devices 0 and 1; panics with the reason when there are fewer than two GPUs.
fn two_contexts() -> (Context, Context) {
    let n = Device::count().expect("these tests need CUDA GPUs");
    assert!(n >= 2, "these tests need two CUDA GPUs, this machine has {n}");
    let c0 = Context::new(Device::new(0).unwrap()).unwrap();
    let c1 = Context::new(Device::new(1).unwrap()).unwrap();
    (c0, c1)
}

#[kernel(
    r#"
__global__ void vscale(float *v, float f, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) v[i] *= f;
}
__global__ void wild_write(unsigned long long address, int value) {
    *(volatile int *)address = value;
}"#
)]
mod kernels {
    pub fn vscale(v: &mut [f32], f: f32, n: i32);
    pub fn wild_write(address: u64, value: i32);
}

/// Runs axpy on random data in `ctx` and checks it against the host.
fn axpy_works(ctx: &Context, seed: u64) {
    let n = 50_000;
    let mut rng = Rng::new(seed);
    let x = rng.vec_f32(n);
    let mut y = rng.vec_f32(n);
    let want: Vec<f32> = x.iter().zip(&y).map(|(x, y)| 1.5 * x + y).collect();
    axpy(ctx, (n as u32).div_ceil(256), 256, 1.5, &x, &mut y, n as i32).unwrap();
    assert_close(&y, &want, 1e-6);
}

#[test]
#[ignore = "needs two CUDA GPUs"]
fn each_device_has_its_own_context_and_kernels() {
    if std::env::var(CHILD_ENV).as_deref() == Ok("default") {
        let ctx = Context::default().unwrap();
        return println!("child: default device {}", ctx.device().ordinal());
    }
    let (c0, c1) = two_contexts();
    assert_ne!(c0, c1);
    assert_eq!((c0.device().ordinal(), c1.device().ordinal()), (0, 1));
    assert_eq!(Context::new(Device::new(1).unwrap()).unwrap(), c1);
    axpy_works(&c0, 1);
    axpy_works(&c1, 2);
    // A kernel of device 0 refuses device 1's memory while no peer access was given.
    let k0 = kernels::vscale::prepare(&c0).unwrap();
    let mut v1 = c1.to_device(&Rng::new(3).vec_f32(64)).unwrap();
    let e = k0.prepared_call(1, 64, &mut v1, 2.0, 64).unwrap_err();
    assert!(matches!(e, Error::WrongContext { .. }), "{e}");
    assert!(e.to_string().contains("enable_peer_access"), "{e}");
    // The default context follows CUDA_DEVICE (checked in a child, whose default is fresh).
    let (passed, text) = rerun_test_in_child(
        "each_device_has_its_own_context_and_kernels",
        &[(CHILD_ENV, "default"), ("CUDA_DEVICE", "1")],
    );
    assert!(passed && text.contains("child: default device 1"), "{text}");
}

#[test]
#[ignore = "needs two CUDA GPUs"]
fn peer_copies_work_with_and_without_peer_access() {
    let (c0, c1) = two_contexts();
    let n = 1 << 20;
    let host = Rng::new(10).vec_f32(n);
    let src = c0.to_device(&host).unwrap();
    // Without peer access the driver stages the copy through the host.
    assert!(!c1.has_peer_access(&c0));
    let mut dst = c1.alloc::<f32>(n).unwrap();
    memcpy_peer(&mut dst, &src).unwrap();
    assert_eq!(dst.to_vec().unwrap(), host);
    let s0 = Stream::new(&c0).unwrap();
    let mut back = c0.alloc_zeros::<f32>(n).unwrap();
    memcpy_peer_async(&mut back, &dst, &s0).unwrap();
    s0.synchronize().unwrap();
    assert_eq!(back.to_vec().unwrap(), host);
    // The stream must belong to the destination's context.
    let e = memcpy_peer_async(&mut back, &dst, &Stream::new(&c1).unwrap()).unwrap_err();
    assert!(matches!(e, Error::WrongContext { .. }), "{e}");
    // A plain device-to-device copy across devices is refused with advice.
    let e = memcpy_dtod(&mut back, &dst).unwrap_err();
    assert!(e.to_string().contains("memcpy_peer"), "{e}");
    // A box of a volume on device 0 into device 1 (Memcpy3DPeer): 4 slices of 9 rows of 100
    // floats from (x 5, y 3, z 2) of a 128 x 16 x 8 volume.
    let (w, h) = (128usize, 16usize);
    let volume = Rng::new(12).vec_f32(w * h * 8);
    let mut want = Vec::new();
    for z in 2..6 {
        for y in 3..12 {
            want.extend_from_slice(&volume[z * w * h + y * w + 5..][..100]);
        }
    }
    let vol0 = c0.to_device(&volume).unwrap();
    let mut box1 = c1.alloc_zeros::<f32>(want.len()).unwrap();
    Memcpy3D::new(100 * 4, 9, 4)
        .src_device(&vol0, w * 4)
        .src_height(h)
        .src_pos(5 * 4, 3, 2)
        .dst_device(&mut box1, 100 * 4)
        .dst_height(9)
        .call_peer()
        .unwrap();
    assert_eq!(box1.to_vec().unwrap(), want);

    if !Device::new(1).unwrap().can_access_peer(c0.device()).unwrap() {
        // The hardware has no direct path: enabling is refused by the driver, with an error.
        let e = c1.enable_peer_access(&c0).unwrap_err();
        println!("no peer access between devices 1 and 0: {e}");
        assert!(!c1.has_peer_access(&c0));
        return;
    }
    c1.enable_peer_access(&c0).unwrap();
    assert!(c1.has_peer_access(&c0) && !c0.has_peer_access(&c1));
    // Enabling twice is the driver's error, and leaves access enabled.
    assert!(c1.enable_peer_access(&c0).is_err());
    assert!(c1.has_peer_access(&c0));
    let fresh = Rng::new(11).vec_f32(n);
    let src2 = c0.to_device(&fresh).unwrap();
    let s1 = Stream::new(&c1).unwrap();
    memcpy_peer_async(&mut dst, &src2, &s1).unwrap();
    s1.synchronize().unwrap();
    assert_eq!(dst.to_vec().unwrap(), fresh);
}

#[test]
#[ignore = "needs two CUDA GPUs"]
fn a_kernel_uses_the_other_devices_memory_once_given_peer_access() {
    let (c0, c1) = two_contexts();
    if !Device::new(1).unwrap().can_access_peer(c0.device()).unwrap() {
        panic!("device 1 cannot access device 0's memory on this machine (no peer path)");
    }
    let n = 300_001;
    let host = Rng::new(20).vec_f32(n);
    let mut v0 = c0.to_device(&host).unwrap();
    let k1 = kernels::vscale::prepare(&c1).unwrap();
    let grid = (n as u32).div_ceil(256);
    let refused = k1.prepared_call(grid, 256, &mut v0, 3.0, n as i32).unwrap_err();
    assert!(matches!(refused, Error::WrongContext { .. }), "{refused}");
    if !c1.has_peer_access(&c0) {
        c1.enable_peer_access(&c0).unwrap();
    }
    // Device 1's kernel reads and writes device 0's memory in place.
    k1.prepared_call(grid, 256, &mut v0, 3.0, n as i32).unwrap();
    let want: Vec<f32> = host.iter().map(|v| 3.0 * v).collect();
    assert_close(&v0.to_vec().unwrap(), &want, 0.0);
    // The same through the runtime-typed path.
    let dynamic = SourceModule::new(
        "extern \"C\" __global__ void twice(float *v, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) v[i] *= 2.0f; }",
    )
    .load(&c1)
    .unwrap()
    .get_function("twice")
    .unwrap()
    .prepare_args(&[ArgType::MutPtr, ArgType::I32])
    .unwrap();
    dynamic
        .prepared_call(grid, 256, &[Arg::output(&mut v0), Arg::I32(n as i32)])
        .unwrap();
    let want: Vec<f32> = want.iter().map(|v| 2.0 * v).collect();
    assert_close(&v0.to_vec().unwrap(), &want, 0.0);
    // Taking access back makes the argument foreign again.
    c1.disable_peer_access(&c0).unwrap();
    assert!(!c1.has_peer_access(&c0));
    let e = k1.prepared_call(grid, 256, &mut v0, 3.0, n as i32).unwrap_err();
    assert!(matches!(e, Error::WrongContext { .. }), "{e}");
}

/// The child's part of `a_fault_on_one_device_...`: faults on device 0, then checks device 1.
fn child_fault_on_device_0() {
    let (c0, c1) = two_contexts();
    axpy_works(&c0, 30);
    axpy_works(&c1, 31);
    let k = kernels::wild_write::prepare(&c0).unwrap();
    k.prepared_call(1, 1, 0xdead_0000_0000u64, 7).unwrap();
    let e = c0.synchronize().unwrap_err();
    assert!(e.is_launch_failure(), "{e}");
    // The driver fails device 1 too, though nothing ran there ...
    let code = raw_alloc_in(c1.raw());
    assert!(
        [700, 719].contains(&code),
        "device 1 after device 0's fault: driver answered {code}"
    );
    // ... so device 1 is refused up front, naming device 0's fault.
    assert!(c0.is_poisoned() && c1.is_poisoned());
    let refused = c1.alloc::<f32>(4).map(drop).unwrap_err();
    assert!(
        matches!(&refused, Error::ContextPoisoned { device: 0, first_name, .. } if first_name == "CUDA_ERROR_ILLEGAL_ADDRESS"),
        "{refused}"
    );
    println!("child: device 1 fails too (driver code {code}) and is refused: {refused}");
}

#[test]
#[ignore = "needs two CUDA GPUs"]
fn a_fault_on_one_device_stops_every_device_of_that_process_only() {
    if std::env::var(CHILD_ENV).as_deref() == Ok("fault") {
        return child_fault_on_device_0();
    }
    let (c0, c1) = two_contexts();
    let (passed, text) = rerun_test_in_child(
        "a_fault_on_one_device_stops_every_device_of_that_process_only",
        &[(CHILD_ENV, "fault")],
    );
    assert!(
        passed && text.contains("device 1 fails too"),
        "child failed:\n{text}"
    );
    eprintln!(
        "{}",
        text.lines()
            .filter(|l| l.contains("child:"))
            .collect::<Vec<_>>()
            .join("\n")
    );
    // This process, which did not fault, keeps both devices.
    axpy_works(&c0, 34);
    axpy_works(&c1, 35);
}
