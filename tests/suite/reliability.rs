//! What users and GPUs do to the library: buffers shorter than a kernel is told, launches past
//! the device's limits, kernels that fault, many threads at once, and long alloc/free and
//! prepare/drop loops. Every test needs a GPU: `cargo test --test suite -- --ignored reliability::`.
//!
//! The fault tests run the faulting kernel in a child process (the same test, run again with
//! an environment variable set), because a fault breaks every context of its process; the
//! parent checks that its own context keeps working meanwhile.
//!
//! Figures (operations, durations, memory before and after) are printed, and appended to
//! `$OUT/reliability-figures.txt` when `OUT` is set.

use crate::common;

use std::io::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use common::*;
use gpu_runtime::driver::ContextFlags;
use gpu_runtime::{kernel, Context, Device, Error, LaunchConfigError, Stream};
use gpu_suite::{assert_close, rerun_test_in_child, Rng};

fn figure(line: String) {
    eprintln!("{line}");
    if let Some(dir) = std::env::var_os("OUT") {
        let path = std::path::Path::new(&dir).join("reliability-figures.txt");
        if let Ok(mut f) = std::fs::OpenOptions::new().create(true).append(true).open(path) {
            let _ = writeln!(f, "{line}");
        }
    }
}

fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

#[kernel(
    r#"
__global__ void scale_rows(const float *src, float *dst, int width, int height, float f) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y;
    if (x < width && y < height) dst[y * width + x] = f * src[y * width + x];
}"#
)]
fn scale_rows(
    #[In]
    #[len = width * height]
    src: &[f32],
    #[Out]
    #[len = width * height]
    dst: &mut [f32],
    width: i32,
    height: i32,
    f: f32,
);

#[kernel(
    r#"
__global__ void scale(float *v, float f, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) v[i] *= f;
}"#
)]
fn scale(
    #[InOut]
    #[len = n]
    v: &mut [f32],
    f: f32,
    n: i32,
);

#[kernel(
    r#"
__global__ void wild_write(unsigned long long address, int value) {
    *(volatile int *)address = value;
}
__global__ void trap_if(int n) {
    if ((int)threadIdx.x < n) __trap();
}"#
)]
mod faulty {
    pub fn wild_write(address: u64, value: i32);
    pub fn trap_if(n: i32);
}

#[kernel(
    r#"
__global__ void double_then_trap(float *y, int n, int trap_block) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] *= 2.0f;
    if ((int)blockIdx.x == trap_block) __trap();
}"#
)]
fn double_then_trap(
    #[InOut]
    #[len = n]
    y: &mut [f32],
    n: i32,
    trap_block: i32,
);

// ---------------------------------------------------------------------------------------------
// Launch validation

#[test]
#[ignore = "needs a CUDA GPU"]
fn len_attribute_rejects_short_buffers_before_launching() {
    let ctx = ctx();
    let (w, h) = (300, 7);
    let mut rng = Rng::new(71);
    let src = rng.vec_f32(w * h);
    let k = scale_rows::prepare(&ctx).unwrap();

    // Long enough: runs, and matches the CPU.
    let mut dst = vec![0.0f32; w * h];
    k.call(
        (w.div_ceil(128) as u32, h as u32),
        128,
        &src,
        &mut dst,
        w as i32,
        h as i32,
        1.5,
    )
    .unwrap();
    let want: Vec<f32> = src.iter().map(|v| 1.5 * v).collect();
    assert_close(&dst, &want, 1e-6);

    // One element short, on device buffers: a typed error naming the argument, and the output
    // buffer is untouched because nothing ran.
    let short = ctx.to_device(&src[..w * h - 1]).unwrap();
    let before = rng.vec_f32(w * h);
    let mut out = ctx.to_device(&before).unwrap();
    let err = k
        .prepared_call((3, h as u32), 128, &short, &mut out, w as i32, h as i32, 2.0)
        .unwrap_err();
    match &err {
        Error::ArgumentTooShort {
            kernel,
            arg,
            len,
            expr,
            required,
        } => {
            assert_eq!(
                (kernel.as_str(), *arg, *len, *required),
                ("scale_rows", "src", w * h - 1, (w * h) as i64)
            );
            assert_eq!(*expr, "width * height");
        }
        other => panic!("expected ArgumentTooShort, got {other}"),
    }
    assert!(
        err.to_string()
            .contains("`#[len = width * height]` requires at least 2100"),
        "{err}"
    );
    ctx.synchronize().unwrap();
    assert_eq!(out.to_vec().unwrap(), before);

    // The output too, through the convenience call; and a width * height that overflows i32
    // is computed without overflow and rejected.
    let mut small = vec![0.0f32; 10];
    let err = k
        .call(1, 128, &src, &mut small, w as i32, h as i32, 1.0)
        .unwrap_err();
    assert!(
        matches!(
            err,
            Error::ArgumentTooShort {
                arg: "dst",
                len: 10,
                ..
            }
        ),
        "{err}"
    );
    let err = k.call(1, 128, &src, &mut dst, 1 << 20, 1 << 20, 1.0).unwrap_err();
    assert!(
        matches!(err, Error::ArgumentTooShort { required, .. } if required == 1i64 << 40),
        "{err}"
    );

    // A view is checked by its own length.
    let mut v = ctx.to_device(&src).unwrap();
    let mut view = v.slice_mut(..100).unwrap();
    let err = scale::prepare(&ctx)
        .unwrap()
        .prepared_call(1, 128, &mut view, 2.0, 101)
        .unwrap_err();
    assert!(
        matches!(
            err,
            Error::ArgumentTooShort {
                arg: "v",
                len: 100,
                ..
            }
        ),
        "{err}"
    );
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn shared_memory_up_to_the_opt_in_maximum_runs_and_past_it_is_rejected() {
    let ctx = ctx();
    let limits = *ctx.limits();
    let n = 4096;
    let input = Rng::new(72).vec_f32(n);
    let k = block_reverse::prepare(&ctx).unwrap();
    let xd = ctx.to_device(&input).unwrap();

    // Past the default 48 KiB, up to the opt-in maximum less the kernel's static shared memory.
    let most = limits
        .max_shared_memory_per_block_optin
        .max(limits.max_shared_memory_per_block)
        - k.function().limits().unwrap().static_shared_bytes;
    let mut out = ctx.alloc_zeros::<f32>(n).unwrap();
    k.clone()
        .with_shared_mem(most)
        .prepared_call(n as u32 / 256, 256, &xd, &mut out, n as i32)
        .unwrap();
    let got = out.to_vec().unwrap();
    let want: Vec<f32> = input
        .chunks(256)
        .flat_map(|c| c.iter().rev().copied().collect::<Vec<_>>())
        .collect();
    assert_close(&got, &want, 0.0);

    let before = Rng::new(73).vec_f32(n);
    let mut out = ctx.to_device(&before).unwrap();
    let err = k
        .with_shared_mem(most + 1)
        .prepared_call(n as u32 / 256, 256, &xd, &mut out, n as i32)
        .unwrap_err();
    assert!(
        matches!(err, Error::InvalidLaunch(LaunchConfigError::SharedMemoryTooLarge { requested, .. }) if requested == most as u64 + 1),
        "{err}"
    );
    ctx.synchronize().unwrap();
    assert_eq!(out.to_vec().unwrap(), before);
}

// ---------------------------------------------------------------------------------------------
// Faults

const CHILD_ENV: &str = "GPU_SUITE_FAULT_CHILD";

/// Runs `test` again in a child process with `CHILD_ENV` set, so that it plays the faulting
/// child, and returns its output after checking it ran to the end.
fn run_child(test: &str) -> String {
    let (passed, text) = rerun_test_in_child(&test_path(module_path!(), test), &[(CHILD_ENV, "1")]);
    assert!(passed, "child `{test}` failed:\n{text}");
    assert!(
        text.contains("child: done"),
        "child `{test}` did not run:\n{text}"
    );
    text
}

/// Runs axpy on random data and checks it: proof that a context works.
fn axpy_works(ctx: &Context, seed: u64) {
    let n = 10_000;
    let mut rng = Rng::new(seed);
    let x = rng.vec_f32(n);
    let mut y = rng.vec_f32(n);
    let want: Vec<f32> = x.iter().zip(&y).map(|(x, y)| 0.5 * x + y).collect();
    axpy(ctx, (n as u32).div_ceil(256), 256, 0.5, &x, &mut y, n as i32).unwrap();
    assert_close(&y, &want, 1e-6);
}

/// The child's side: fault, check the first error and the fail-fast refusals, then drop every
/// handle and try a fresh context.
fn fault_then_check_refusals(fault: impl FnOnce(&Context), expected_code: &str) {
    let dev = Device::new(0).unwrap();
    let ctx = Context::new(dev).unwrap();
    axpy_works(&ctx, 80);
    let k = axpy::prepare(&ctx).unwrap();
    let x = ctx.to_device(&Rng::new(81).vec_f32(64)).unwrap();
    let mut y = ctx.to_device(&Rng::new(82).vec_f32(64)).unwrap();
    let stream = Stream::new(&ctx).unwrap();
    // Bystanders: a second context of the same device, and the next device when there is one.
    let other = Context::create(dev, ContextFlags::SCHED_AUTO).unwrap();
    axpy_works(&other, 88);
    let next_device = match Device::count().unwrap() {
        n if n > 1 => Some(Context::new(Device::new(1).unwrap()).unwrap()),
        _ => None,
    };

    fault(&ctx);
    let first = ctx.synchronize().unwrap_err();
    println!("child: first error: {first}");
    assert!(first.is_launch_failure(), "{first}");
    let first_name = match &first {
        Error::Driver { name, .. } => name.clone(),
        other => panic!("expected a driver error, got {other}"),
    };
    assert_eq!(first_name, expected_code);
    let msg = first.to_string();
    assert!(
        msg.contains("CUDA contexts unusable") && msg.contains("restart the process"),
        "{msg}"
    );
    assert!(ctx.is_poisoned());

    // Every later call in the context is refused with the same information.
    let later: Vec<(&str, Error)> = vec![
        ("synchronize", ctx.synchronize().unwrap_err()),
        ("mem_get_info", ctx.mem_get_info().unwrap_err()),
        ("alloc", ctx.alloc::<f32>(16).map(drop).unwrap_err()),
        ("to_vec", x.to_vec().map(drop).unwrap_err()),
        ("Stream::new", Stream::new(&ctx).map(drop).unwrap_err()),
        ("stream.synchronize", stream.synchronize().unwrap_err()),
        (
            "prepared_call",
            k.prepared_call(1, 64, 1.0, &x, &mut y, 64).unwrap_err(),
        ),
        ("prepare", scale::prepare(&ctx).map(drop).unwrap_err()),
        (
            "Context::new",
            Context::new(dev).unwrap().synchronize().unwrap_err(),
        ),
    ];
    for (what, e) in &later {
        match e {
            Error::ContextPoisoned {
                first_name: n,
                device: 0,
                ..
            } if *n == first_name => {
                assert!(e.is_launch_failure());
            }
            other => panic!("{what}: expected ContextPoisoned({first_name}), got {other}"),
        }
    }
    println!("child: later call refused: {}", later[0].1);

    // Every other context is refused up front too: the bystanders made before the fault, and a
    // context made after it.
    let fresh = Context::create(dev, ContextFlags::SCHED_AUTO);
    let mut bystanders: Vec<(&str, Error)> = vec![
        ("other context", other.alloc::<f32>(16).map(drop).unwrap_err()),
        ("new context", fresh.and_then(|c| c.synchronize()).unwrap_err()),
    ];
    if let Some(next) = &next_device {
        bystanders.push(("device 1", next.alloc::<f32>(16).map(drop).unwrap_err()));
    }
    for (what, e) in &bystanders {
        match e {
            Error::ContextPoisoned {
                first_name: n,
                device: 0,
                ..
            } if *n == first_name => {}
            e => panic!("{what}: expected ContextPoisoned({first_name}) from device 0, got {e}"),
        }
    }
    println!("child: the other contexts are refused too: {}", bystanders.len());

    // Why: the driver itself fails them all. Asked directly, bypassing the refusal, a context
    // made before the fault, one made after it, and (when there is one) the context of the next
    // device all fail with the fault's error. Should a future driver spare them, this fails,
    // and refusing them would be wrong.
    let mut probes = vec![
        ("other context", raw_alloc_in(other.raw())),
        ("new context", raw_new_context_alloc(dev)),
    ];
    if let Some(next) = &next_device {
        probes.push(("device 1", raw_alloc_in(next.raw())));
    }
    for (what, code) in &probes {
        assert!(
            [700, 719].contains(code),
            "{what}: the driver answered {code} after the fault, not the fault's error"
        );
    }
    println!("child: the driver fails them too: {probes:?}");

    // Dropping every handle does not bring the GPU back either (the documented recovery is a
    // new process, which the parent test checks).
    drop((k, x, y, stream, later, ctx, other, next_device, bystanders));
    let e = Context::new(dev).and_then(|c| c.synchronize()).unwrap_err();
    assert!(matches!(e, Error::ContextPoisoned { .. }), "{e}");
    println!("child: done");
}

/// The child's part of the wild-write test.
fn child_wild_write() {
    fault_then_check_refusals(
        |ctx| {
            let k = faulty::wild_write::prepare(ctx).unwrap();
            k.prepared_call(1, 1, 0xdead_0000_0000u64, 7).unwrap();
        },
        "CUDA_ERROR_ILLEGAL_ADDRESS",
    );
}

/// The child's part of the trap test.
fn child_trap() {
    fault_then_check_refusals(
        |ctx| {
            let k = faulty::trap_if::prepare(ctx).unwrap();
            k.prepared_call(4, 32, 1).unwrap();
        },
        "CUDA_ERROR_LAUNCH_FAILED",
    );
}

/// The child's part of the staged-call fault test: a kernel that traps inside an In/Out
/// convenience call large enough for many chunks and copy threads. The call returns the
/// fault (none of its copy threads waits forever for a chunk that never comes), and later
/// calls are refused.
fn child_staged_trap() {
    let ctx = Context::new(Device::new(0).unwrap()).unwrap();
    let n = (6 << 20) + 5;
    let mut y = Rng::new(89).vec_f32(n);
    let want: Vec<f32> = y.iter().map(|v| 2.0 * v).collect();
    let grid = (n as u32).div_ceil(256);
    // Without the trap first: the call works and matches the host.
    double_then_trap(&ctx, grid, 256, &mut y, n as i32, -1).unwrap();
    assert_close(&y, &want, 0.0);
    let t = std::time::Instant::now();
    let e = double_then_trap(&ctx, grid, 256, &mut y, n as i32, grid as i32 / 2).unwrap_err();
    println!("child: staged call failed after {:?}: {e}", t.elapsed());
    assert!(e.is_launch_failure(), "{e}");
    assert!(t.elapsed() < std::time::Duration::from_secs(20));
    let again = double_then_trap(&ctx, grid, 256, &mut y, n as i32, -1).unwrap_err();
    assert!(again.is_launch_failure(), "{again}");
    println!("child: done");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn fault_in_a_staged_call_is_returned_by_the_call() {
    if std::env::var_os(CHILD_ENV).is_some() {
        return child_staged_trap();
    }
    let ctx = ctx();
    axpy_works(&ctx, 90);
    let out = run_child("fault_in_a_staged_call_is_returned_by_the_call");
    figure(format!("fault in a staged call, child output:\n{}", out.trim()));
    assert!(!ctx.is_poisoned());
    axpy_works(&ctx, 91);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn fault_wild_write_is_reported_refused_after_and_other_processes_keep_working() {
    if std::env::var_os(CHILD_ENV).is_some() {
        return child_wild_write();
    }
    let ctx = ctx();
    axpy_works(&ctx, 84);
    let out = run_child("fault_wild_write_is_reported_refused_after_and_other_processes_keep_working");
    figure(format!("fault (wild write), child output:\n{}", out.trim()));
    assert!(!ctx.is_poisoned());
    axpy_works(&ctx, 85);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn fault_trap_is_reported_refused_after_and_other_processes_keep_working() {
    if std::env::var_os(CHILD_ENV).is_some() {
        return child_trap();
    }
    let ctx = ctx();
    axpy_works(&ctx, 86);
    let out = run_child("fault_trap_is_reported_refused_after_and_other_processes_keep_working");
    figure(format!("fault (__trap), child output:\n{}", out.trim()));
    assert!(!ctx.is_poisoned());
    axpy_works(&ctx, 87);
}

// ---------------------------------------------------------------------------------------------
// Threads

#[test]
#[ignore = "needs a CUDA GPU"]
fn stress_many_threads_launch_allocate_and_prepare_at_once() {
    let secs: u64 = env_or("GPU_STRESS_SECS", 10);
    let threads: u64 = env_or("GPU_STRESS_THREADS", 8);
    let ctx = ctx();
    let shared = axpy::prepare(&ctx).unwrap();
    let (launches, allocs, prepares, checks, clears) = (
        AtomicU64::new(0),
        AtomicU64::new(0),
        AtomicU64::new(0),
        AtomicU64::new(0),
        AtomicU64::new(0),
    );
    let start = Instant::now();
    let until = Duration::from_secs(secs);
    std::thread::scope(|s| {
        for t in 0..threads {
            let (ctx, shared) = (&ctx, &shared);
            let (launches, allocs, prepares, checks, clears) =
                (&launches, &allocs, &prepares, &checks, &clears);
            s.spawn(move || {
                // Half the threads reach the context through their own handle.
                let ctx = if t % 2 == 0 {
                    ctx.clone()
                } else {
                    Context::new(Device::new(0).unwrap()).unwrap()
                };
                let stream = Stream::new(&ctx).unwrap();
                let mut rng = Rng::new(1000 + t);
                let mut i = 0u64;
                while start.elapsed() < until {
                    i += 1;
                    let n = 1 + (rng.next_u64() % 40_000) as usize;
                    let (x, y) = (rng.vec_f32(n), rng.vec_f32(n));
                    let (a, f) = (rng.f32(), rng.f32());
                    // Every other iteration prepares its own handle (a cache lookup, or a
                    // compile after thread 0 cleared the cache); the others share one.
                    let own;
                    let k = if i.is_multiple_of(2) {
                        own = axpy::prepare(&ctx).unwrap();
                        prepares.fetch_add(1, Ordering::Relaxed);
                        &own
                    } else {
                        shared
                    };
                    let sc = scale::prepare(&ctx).unwrap();
                    prepares.fetch_add(1, Ordering::Relaxed);
                    let xd = ctx.to_device(&x).unwrap();
                    let mut yd = ctx.to_device(&y).unwrap();
                    let scratch = ctx.alloc::<f64>(1 + n / 3).unwrap();
                    allocs.fetch_add(3, Ordering::Relaxed);
                    let grid = (n as u32).div_ceil(256);
                    k.prepared_async_call(grid, 256, &stream, a, &xd, &mut yd, n as i32)
                        .unwrap();
                    sc.prepared_async_call(grid, 256, &stream, &mut yd, f, n as i32)
                        .unwrap();
                    launches.fetch_add(2, Ordering::Relaxed);
                    stream.synchronize().unwrap();
                    drop(scratch);
                    let want: Vec<f32> = x.iter().zip(&y).map(|(x, y)| f * (a * x + y)).collect();
                    assert_close(&yd.to_vec().unwrap(), &want, 1e-5);
                    checks.fetch_add(1, Ordering::Relaxed);
                    if t == 0 && i.is_multiple_of(500) {
                        ctx.clear_module_cache();
                        clears.fetch_add(1, Ordering::Relaxed);
                    }
                }
            });
        }
    });
    let elapsed = start.elapsed().as_secs_f64();
    let (l, a, p, c, x) = (
        launches.into_inner(),
        allocs.into_inner(),
        prepares.into_inner(),
        checks.into_inner(),
        clears.into_inner(),
    );
    figure(format!(
        "stress: {threads} threads for {elapsed:.1} s: {l} launches, {a} allocations (and frees), \
         {p} prepares, {x} module-cache clears, {c} results checked against the CPU"
    ));
    assert!(c >= threads, "every thread checked at least one result");
}

// ---------------------------------------------------------------------------------------------
// Leaks

fn rss_bytes() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap();
    let pages: u64 = statm.split_whitespace().nth(1).unwrap().parse().unwrap();
    pages * 4096
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn allocate_free_and_prepare_drop_cycles_leave_memory_flat() {
    const MIB: i64 = 1 << 20;
    let cycles: usize = env_or("GPU_LEAK_CYCLES", 100_000);
    let reloads: usize = env_or("GPU_LEAK_RELOADS", 50);
    let ctx = ctx();
    let cycle = |i: usize| {
        let len = 1 + (i * 7919) % (1 << 18);
        let b = ctx.alloc::<f32>(len).unwrap();
        drop(b);
        let k = scale::prepare(&ctx).unwrap();
        drop(k);
    };
    let reload = || {
        ctx.clear_module_cache();
        drop(scale::prepare(&ctx).unwrap());
    };
    // Warm up: the driver's and the allocator's first-use growth is not a leak.
    for i in 0..1000 {
        cycle(i);
    }
    for _ in 0..5 {
        reload();
    }
    ctx.synchronize().unwrap();
    let (free0, _) = ctx.mem_get_info().unwrap();
    let rss0 = rss_bytes();
    let t = Instant::now();
    for i in 0..cycles {
        cycle(i);
    }
    for _ in 0..reloads {
        reload();
    }
    ctx.synchronize().unwrap();
    let (free1, _) = ctx.mem_get_info().unwrap();
    let rss1 = rss_bytes();
    let dev_growth = free0 as i64 - free1 as i64;
    let host_growth = rss1 as i64 - rss0 as i64;
    figure(format!(
        "leaks: {cycles} alloc/free + prepare/drop cycles and {reloads} module unload/reload cycles \
         in {:.1} s: device free {free0} -> {free1} bytes (grew by {dev_growth}), host RSS \
         {rss0} -> {rss1} bytes (grew by {host_growth})",
        t.elapsed().as_secs_f64()
    ));
    // Slack: the driver may keep up to 2 MiB of its own bookkeeping (one allocation granule);
    // the host heap may keep 8 MiB of freed-but-unreturned pages.
    assert!(dev_growth <= 2 * MIB, "device memory grew by {dev_growth} bytes");
    assert!(host_growth <= 8 * MIB, "host memory grew by {host_growth} bytes");
    axpy_works(&ctx, 88);
}
