//! cudarc and this crate on one GPU: cudarc's libraries on this crate's memory, cudarc's slices
//! in this crate's launches, streams both ways. Each test provokes the hazard it guards against
//! in a loop, with kernels that wait before they read or write (so that a missing wait would
//! show), on random data, against a CPU reference; none synchronises by hand where the crate
//! or cudarc is supposed to order.
//!
//! Run on a GPU machine: `cargo test --features cublas --test cudarc -- --ignored interop::`
//! (without `cublas`, the cuBLAS test is not built). cuBLAS is loaded at run time: when
//! libcublas cannot be found the cuBLAS test fails saying so.

use gpu_runtime::cudarc::driver::CudaContext;
use gpu_runtime::driver::cudarc_interop::{Lend, LendMut};
use gpu_runtime::driver::{DeviceAttribute, StreamFlags};
use gpu_runtime::{kernel, Context, Stream};
use gpu_suite::{assert_close, Rng};

use crate::common::ctx;

/// `late_map` alone, for the run-time typed launch.
const LATE_MAP: &str = r#"
__device__ void wait_cycles(long long cycles) {
    if (cycles <= 0) return;
    long long t0 = clock64();
    while (clock64() - t0 < cycles) {}
}
__global__ void late_map(const float *x, float *y, int n, long long cycles) {
    wait_cycles(cycles);
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = 2.0f * x[i] + 1.0f;
}
"#;

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

// Waits, then scales x in place.
__global__ void late_scale(float *x, float s, int n, long long cycles) {
    wait_cycles(cycles);
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] *= s;
}
"#
)]
mod k {
    fn late_fill(y: &mut [f32], a: f32, b: f32, n: i32, cycles: i64);
    fn late_map(x: &[f32], y: &mut [f32], n: i32, cycles: i64);
    fn late_scale(x: &mut [f32], s: f32, n: i32, cycles: i64);
}

/// Cycles of `clock64()` for about `ms` milliseconds.
fn cycles(ctx: &Context, ms: f64) -> i64 {
    let khz = ctx.device().attribute(DeviceAttribute::ClockRate).unwrap() as f64;
    (khz * ms) as i64
}

fn grid(n: usize) -> u32 {
    (n as u32).div_ceil(256)
}

fn filled(a: f32, b: f32, n: usize) -> Vec<f32> {
    (0..n).map(|i| a.mul_add(i as f32, b)).collect()
}

fn mapped(x: &[f32]) -> Vec<f32> {
    x.iter().map(|v| 2.0f32.mul_add(*v, 1.0)).collect()
}

const TOL: f32 = 1e-6;
const N: usize = 1 << 16;

fn non_blocking(ctx: &Context) -> Stream {
    Stream::with_flags(ctx, StreamFlags::NonBlocking).unwrap()
}

#[cfg(feature = "cublas")]
/// `C = A B`, column-major, `m x k` times `k x n`, in f64 for the reference.
fn matmul(a: &[f32], b: &[f32], m: usize, n: usize, k: usize) -> Vec<f32> {
    let mut c = vec![0f32; m * n];
    for j in 0..n {
        for i in 0..m {
            let s: f64 = (0..k).map(|p| a[i + p * m] as f64 * b[p + j * k] as f64).sum();
            c[i + j * m] = s as f32;
        }
    }
    c
}

#[cfg(feature = "cublas")]
#[test]
#[ignore = "needs a CUDA GPU"]
fn cublas_sgemm_on_our_buffers_on_stream_a_then_our_kernel_reads_the_result_on_stream_b() {
    use gpu_runtime::cudarc::cublas::sys::cublasOperation_t::CUBLAS_OP_N;
    use gpu_runtime::cudarc::cublas::GemmConfig;
    use gpu_runtime::driver::cublas::{cublas_on, gemm};

    let ctx = ctx();
    let (sa, sb) = (non_blocking(&ctx), non_blocking(&ctx));
    let blas = match cublas_on(&sa) {
        Ok(b) => b,
        Err(e) => panic!("cuBLAS could not be loaded, so this test cannot run: {e}"),
    };
    let (scale, map) = (
        k::late_scale::prepare(&ctx).unwrap(),
        k::late_map::prepare(&ctx).unwrap(),
    );
    let (m, n, kk) = (96usize, 80usize, 64usize);
    let mut rng = Rng::new(25);
    for round in 0..10 {
        let (a, b, s) = (rng.vec_f32(m * kk), rng.vec_f32(kk * n), 0.5 + rng.f32());
        let mut da = ctx.to_device(&a).unwrap();
        let db = ctx.to_device(&b).unwrap();
        let mut dc = ctx.alloc_zeros::<f32>(m * n).unwrap();
        let mut out = ctx.alloc_zeros::<f32>(m * n).unwrap();
        // A late kernel on stream A scales A; cuBLAS on A follows it in stream order.
        scale
            .prepared_async_call(
                grid(m * kk),
                256,
                &sa,
                &mut da,
                s,
                (m * kk) as i32,
                cycles(&ctx, 5.0),
            )
            .unwrap();
        let cfg = GemmConfig {
            transa: CUBLAS_OP_N,
            transb: CUBLAS_OP_N,
            m: m as i32,
            n: n as i32,
            k: kk as i32,
            alpha: 1.0f32,
            lda: m as i32,
            ldb: kk as i32,
            beta: 0.0f32,
            ldc: m as i32,
        };
        gemm(&blas, cfg, &da, &db, &mut dc).unwrap();
        // Stream B reads C at once: it must wait for cuBLAS on the GPU.
        map.prepared_async_call(grid(m * n), 256, &sb, &dc, &mut out, (m * n) as i32, 0)
            .unwrap();
        let scaled: Vec<f32> = a.iter().map(|x| x * s).collect();
        let want = mapped(&matmul(&scaled, &b, m, n, kk));
        let got = out.to_vec().unwrap();
        if let Some((i, g, w)) = gpu_suite::first_mismatch(&got, &want, 1e-4) {
            panic!("round {round}: element {i}: got {g}, want {w}");
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn our_kernel_writing_a_cudarc_slice_is_read_back_by_cudarc() {
    let ctx = ctx();
    let cudarc = ctx.cudarc_context().unwrap();
    let theirs = cudarc.new_stream().unwrap();
    let ours = non_blocking(&ctx);
    let fill = k::late_fill::prepare(&ctx).unwrap();
    let mut rng = Rng::new(26);
    for round in 0..10 {
        let (a, b) = (rng.f32(), rng.f32());
        let mut y = theirs.alloc_zeros::<f32>(N).unwrap();
        y.lend_mut(&ours, |y| {
            fill.prepared_async_call(grid(N), 256, &ours, y, a, b, N as i32, cycles(&ctx, 5.0))
        })
        .unwrap()
        .unwrap();
        // cudarc's copy on its own stream waits for cudarc's write event, recorded after our
        // late kernel.
        let got = theirs.clone_dtoh(&y).unwrap();
        if let Some((i, g, w)) = gpu_suite::first_mismatch(&got, &filled(a, b, N), TOL) {
            panic!("round {round}: element {i}: got {g}, want {w}");
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_cudarc_slice_written_by_us_on_one_stream_is_read_by_us_on_another() {
    let ctx = ctx();
    let cudarc = ctx.cudarc_context().unwrap();
    let theirs = Stream::from_cudarc(cudarc.new_stream().unwrap()).unwrap();
    let ours = non_blocking(&ctx);
    let (fill, map) = (
        k::late_fill::prepare(&ctx).unwrap(),
        k::late_map::prepare(&ctx).unwrap(),
    );
    let mut rng = Rng::new(27);
    for round in 0..10 {
        let (a, b) = (rng.f32(), rng.f32());
        let mut x = cudarc.default_stream().alloc_zeros::<f32>(N).unwrap();
        let mut out = ctx.alloc_zeros::<f32>(N).unwrap();
        x.lend_mut(&theirs, |x| {
            fill.prepared_async_call(grid(N), 256, &theirs, x, a, b, N as i32, cycles(&ctx, 5.0))
        })
        .unwrap()
        .unwrap();
        // A second lend on another stream: ordered after the first through cudarc's events.
        x.lend(&ours, |x| {
            map.prepared_async_call(grid(N), 256, &ours, x, &mut out, N as i32, 0)
        })
        .unwrap()
        .unwrap();
        assert_close(&out.to_vec().unwrap(), &mapped(&filled(a, b, N)), TOL);
        let _ = round;
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn cudarc_reads_our_buffer_on_a_stream_we_know_and_on_one_we_do_not() {
    let ctx = ctx();
    let cudarc = ctx.cudarc_context().unwrap();
    let writer = non_blocking(&ctx);
    // cudarc's handle keeps the stream known after ours is gone.
    let known = non_blocking(&ctx).to_cudarc().unwrap();
    let unknown = cudarc.new_stream().unwrap();
    let fill = k::late_fill::prepare(&ctx).unwrap();
    let mut rng = Rng::new(28);
    for round in 0..10 {
        let (a, b) = (rng.f32(), rng.f32());
        let mut y = ctx.alloc_zeros::<f32>(N).unwrap();
        let reader = if round % 2 == 0 { &known } else { &unknown };
        fill.prepared_async_call(grid(N), 256, &writer, &mut y, a, b, N as i32, cycles(&ctx, 5.0))
            .unwrap();
        // cudarc's copy takes our buffer through DevicePtr: on `known` it waits on the GPU,
        // on `unknown` the host waits.
        let got = reader.clone_dtoh(&y).unwrap();
        if let Some((i, g, w)) = gpu_suite::first_mismatch(&got, &filled(a, b, N), TOL) {
            panic!("round {round}: element {i}: got {g}, want {w}");
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_cudarc_write_of_our_buffer_waits_for_our_late_read() {
    let ctx = ctx();
    let reader = non_blocking(&ctx);
    let writer = non_blocking(&ctx).to_cudarc().unwrap();
    let map = k::late_map::prepare(&ctx).unwrap();
    let mut rng = Rng::new(29);
    for round in 0..10 {
        let (x0, x1) = (rng.vec_f32(N), rng.vec_f32(N));
        let mut x = ctx.to_device(&x0).unwrap();
        let mut out = ctx.alloc_zeros::<f32>(N).unwrap();
        map.prepared_async_call(grid(N), 256, &reader, &x, &mut out, N as i32, cycles(&ctx, 5.0))
            .unwrap();
        // cudarc overwrites x on another stream: the copy must wait for the late read.
        writer.memcpy_htod(&x1, &mut x).unwrap();
        if let Some((i, g, w)) = gpu_suite::first_mismatch(&out.to_vec().unwrap(), &mapped(&x0), TOL) {
            panic!("round {round}: element {i}: got {g}, want {w}");
        }
        assert_close(&x.to_vec().unwrap(), &x1, 0.0);
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn streams_and_contexts_cross_both_ways() {
    let ctx = ctx();
    let cudarc = ctx.cudarc_context().unwrap();
    assert_eq!(cudarc.cu_ctx(), ctx.raw());
    assert!(std::sync::Arc::ptr_eq(&cudarc, &ctx.cudarc_context().unwrap()));
    assert_eq!(Context::from_cudarc(&cudarc).unwrap(), ctx);
    let s = Stream::new(&ctx).unwrap();
    let c = s.to_cudarc().unwrap();
    assert_eq!(c.cu_stream(), s.raw());
    assert!(std::sync::Arc::ptr_eq(&c, &s.to_cudarc().unwrap()));
    // A cudarc stream becomes ours, once: the same stream of ours while one is alive.
    let theirs = cudarc.new_stream().unwrap();
    let a = Stream::from_cudarc(theirs.clone()).unwrap();
    let b = Stream::from_cudarc(theirs.clone()).unwrap();
    assert_eq!(a.raw(), theirs.cu_stream());
    assert_eq!(a.raw(), b.raw());
    // Ours outlives cudarc's handles: dropping ours first leaves cudarc's working.
    drop((a, b));
    theirs.synchronize().unwrap();
    drop(s);
    c.synchronize().unwrap();
    // A non-primary context is not ours to share.
    let other = CudaContext::new_non_primary(ctx.device().ordinal(), 0).unwrap();
    assert!(matches!(
        Context::from_cudarc(&other),
        Err(gpu_runtime::Error::WrongContext { .. })
    ));
    let foreign = other.new_stream().unwrap();
    let slice = foreign.alloc_zeros::<f32>(16).unwrap();
    let ours = Stream::new(&ctx).unwrap();
    assert!(matches!(
        slice.lend(&ours, |_| ()),
        Err(gpu_runtime::Error::WrongContext { .. })
    ));
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_lend_ends_after_our_work_on_every_stream_inside_it() {
    let ctx = ctx();
    let cudarc = ctx.cudarc_context().unwrap();
    let theirs = cudarc.new_stream().unwrap();
    let (start, other) = (non_blocking(&ctx), non_blocking(&ctx));
    let fill = k::late_fill::prepare(&ctx).unwrap();
    let mut rng = Rng::new(30);
    for round in 0..10 {
        let (a, b) = (rng.f32(), rng.f32());
        let mut y = theirs.alloc_zeros::<f32>(N).unwrap();
        // Lent on `start`, written late on `other`: the lend's end makes `start` wait for
        // `other` before cudarc's write event is recorded on it.
        y.lend_mut(&start, |y| {
            fill.prepared_async_call(grid(N), 256, &other, y, a, b, N as i32, cycles(&ctx, 5.0))
        })
        .unwrap()
        .unwrap();
        let got = theirs.clone_dtoh(&y).unwrap();
        if let Some((i, g, w)) = gpu_suite::first_mismatch(&got, &filled(a, b, N), TOL) {
            panic!("round {round}: element {i}: got {g}, want {w}");
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn curand_through_cudarc_fills_our_buffer_and_our_kernel_on_another_stream_reads_it() {
    use gpu_runtime::cudarc::curand::CudaRng;
    // SAFETY: loads libcurand by the names cudarc would, running only its initialisers.
    let present = unsafe { gpu_runtime::cudarc::curand::sys::is_culib_present() };
    assert!(present, "libcurand cannot be loaded, so this test cannot run");
    let ctx = ctx();
    let (gen_stream, reader) = (non_blocking(&ctx), non_blocking(&ctx));
    let scale = k::late_scale::prepare(&ctx).unwrap();
    let map = k::late_map::prepare(&ctx).unwrap();
    let mut rng = Rng::new(31);
    for round in 0..10 {
        let seed = rng.next_u64();
        // The reference: the same generator filling cudarc's own slice.
        let c = gen_stream.to_cudarc().unwrap();
        let reference = CudaRng::new(seed, c.clone()).unwrap();
        let mut want = c.alloc_zeros::<f32>(N).unwrap();
        reference.fill_with_uniform(&mut want).unwrap();
        let want = c.clone_dtoh(&want).unwrap();

        let gen = CudaRng::new(seed, c).unwrap();
        let mut x = ctx.alloc_zeros::<f32>(N).unwrap();
        // A late kernel of ours on the generator's stream first, so the fill is late too.
        scale
            .prepared_async_call(
                grid(N),
                256,
                &gen_stream,
                &mut x,
                0.0,
                N as i32,
                cycles(&ctx, 5.0),
            )
            .unwrap();
        gen.fill_with_uniform(&mut x).unwrap();
        let mut out = ctx.alloc_zeros::<f32>(N).unwrap();
        map.prepared_async_call(grid(N), 256, &reader, &x, &mut out, N as i32, 0)
            .unwrap();
        if let Some((i, g, w)) = gpu_suite::first_mismatch(&out.to_vec().unwrap(), &mapped(&want), TOL) {
            panic!("round {round}: element {i}: got {g}, want {w}");
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_lent_cudarc_slice_goes_into_run_time_typed_launches_graphs_and_copies() {
    use gpu_runtime::driver::memcpy_dtod_async;
    use gpu_runtime::launch::{Arg, ArgType, Capture, GraphBuffer, GraphInput};
    use gpu_runtime::SourceModule;

    let ctx = ctx();
    let cudarc = ctx.cudarc_context().unwrap();
    let theirs = cudarc.new_stream().unwrap();
    let (ours, other) = (non_blocking(&ctx), non_blocking(&ctx));
    let map = k::late_map::prepare(&ctx).unwrap();
    let module = SourceModule::new(LATE_MAP).load(&ctx).unwrap();
    let dynamic = module
        .get_function("late_map")
        .unwrap()
        .prepare_args(&[ArgType::ConstPtr, ArgType::MutPtr, ArgType::I32, ArgType::I64])
        .unwrap();
    let mut rng = Rng::new(32);
    for round in 0..10 {
        let (x0, x1) = (rng.vec_f32(N), rng.vec_f32(N));
        let mut x = theirs.clone_htod(&x0).unwrap();
        let mut o1 = ctx.alloc_zeros::<f32>(N).unwrap();
        let mut o2 = ctx.alloc_zeros::<f32>(N).unwrap();
        let mut o3 = ctx.alloc_zeros::<f32>(N).unwrap();
        x.lend(&ours, |x| -> gpu_runtime::Result<()> {
            // A late run-time typed read on another stream than the lend's.
            dynamic.prepared_async_call(
                grid(N),
                256,
                &other,
                &[
                    Arg::input(x),
                    Arg::output(&mut o1),
                    Arg::I32(N as i32),
                    Arg::I64(cycles(&ctx, 5.0)),
                ],
            )?;
            let xg = GraphInput::new(x);
            let mut og = GraphBuffer::new(&mut o2);
            let mut cap = Capture::begin(&ctx)?;
            map.capture(&mut cap, grid(N), 256, &xg, &mut og, N as i32, 0)?;
            let mut exec = cap.end()?.instantiate()?;
            exec.launch(&ours)?;
            memcpy_dtod_async(&mut o3, x, &other)
        })
        .unwrap()
        .unwrap();
        // cudarc overwrites x at once on its stream: it must wait for every read above.
        theirs.memcpy_htod(&x1, &mut x).unwrap();
        let want = mapped(&x0);
        for (what, got, want) in [
            ("run-time typed", &o1, &want),
            ("graph", &o2, &want),
            ("copy", &o3, &x0),
        ] {
            if let Some((i, g, w)) = gpu_suite::first_mismatch(&got.to_vec().unwrap(), want, TOL) {
                panic!("round {round}, {what}: element {i}: got {g}, want {w}");
            }
        }
        assert_close(&theirs.clone_dtoh(&x).unwrap(), &x1, 0.0);
    }
}

// ---- The borders of issue 41: per-thread handles, captures by cudarc, lends of one slice ----

use gpu_runtime::cudarc::driver::sys::CUstreamCaptureMode;
use gpu_runtime::{BorderError, Error, Event};

fn refused_as_captured<T: std::fmt::Debug>(r: gpu_runtime::Result<T>) -> bool {
    matches!(r, Err(Error::Border(BorderError::CapturedElsewhere { .. })))
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_per_thread_stream_is_refused_and_the_default_stream_is_the_legacy_one() {
    let ctx = ctx();
    let cudarc = ctx.cudarc_context().unwrap();
    match Stream::from_cudarc(cudarc.per_thread_stream()) {
        Err(Error::Border(BorderError::PerThreadStream { handle })) => assert_eq!(handle, 2),
        other => panic!("the per-thread stream was not refused: {other:?}"),
    }
    let legacy = Stream::from_cudarc(cudarc.default_stream()).unwrap();
    assert!(legacy.raw().is_null());
    // Work from eight threads on the legacy stream through that handle stays ordered.
    let fill = k::late_fill::prepare(&ctx).unwrap();
    let map = k::late_map::prepare(&ctx).unwrap();
    std::thread::scope(|sc| {
        for t in 0..8u32 {
            let (ctx, legacy, fill, map) = (&ctx, &legacy, &fill, &map);
            sc.spawn(move || {
                let mut rng = Rng::new(4100 + u64::from(t));
                for _ in 0..13 {
                    let (a, b) = (rng.f32(), rng.f32());
                    let mut x = ctx.alloc_zeros::<f32>(N).unwrap();
                    let mut y = ctx.alloc_zeros::<f32>(N).unwrap();
                    fill.prepared_async_call(grid(N), 256, legacy, &mut x, a, b, N as i32, cycles(ctx, 1.0))
                        .unwrap();
                    map.prepared_async_call(grid(N), 256, legacy, &x, &mut y, N as i32, 0)
                        .unwrap();
                    assert_close(&y.to_vec().unwrap(), &mapped(&filled(a, b, N)), TOL);
                }
            });
        }
    });
}

/// cudarc captures a stream of ours (`to_cudarc`, then its safe `begin_capture`): our launches,
/// copies, callbacks and event records on it are refused with a typed error, the capture is
/// invalidated (cudarc's `end_capture` fails and makes no graph to replay over memory handed
/// out again), a buffer dropped during the capture keeps its memory until the work queued
/// before the capture has run, and a stream of ours that would wait for the captured one is
/// not pulled into the capture. 100 rounds, in each capture mode.
#[test]
#[ignore = "needs a CUDA GPU"]
fn work_of_ours_never_enters_a_capture_cudarc_began_on_our_stream() {
    let ctx = ctx();
    let (fill, map) = (
        k::late_fill::prepare(&ctx).unwrap(),
        k::late_map::prepare(&ctx).unwrap(),
    );
    let s = non_blocking(&ctx);
    let c = s.to_cudarc().unwrap();
    let other = non_blocking(&ctx);
    let mut rng = Rng::new(4101);
    for round in 0..100 {
        let mode = [
            CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_RELAXED,
            CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL,
            CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_GLOBAL,
        ][round % 3];
        let relaxed = round % 3 == 0;
        let (a, b) = (rng.f32(), rng.f32());
        // Written late on `s` before the capture.
        let mut x = ctx.alloc_zeros::<f32>(N).unwrap();
        fill.prepared_async_call(grid(N), 256, &s, &mut x, a, b, N as i32, cycles(&ctx, 2.0))
            .unwrap();
        let mut y = ctx.alloc_zeros::<f32>(N).unwrap();
        // Made before the capture: in the thread-local and global modes the capturing thread
        // may not allocate.
        let src = ctx.alloc_zeros::<f32>(N).unwrap();
        let event = Event::new(&ctx).unwrap();
        c.begin_capture(mode).unwrap();
        let r = fill.prepared_async_call(grid(N), 256, &s, &mut y, 1.0, 0.0, N as i32, 0);
        assert!(
            refused_as_captured(r),
            "round {round}: a launch into cudarc's capture"
        );
        assert!(refused_as_captured(gpu_runtime::driver::memcpy_dtod_async(
            &mut y, &src, &s
        )));
        assert!(refused_as_captured(s.add_callback(|| {})));
        assert!(refused_as_captured(event.record(Some(&s))));
        if relaxed {
            // Reading `x` on another stream waits for `s`: refused, not joined to the capture.
            let mut z = ctx.alloc_zeros::<f32>(N).unwrap();
            let r = map.prepared_async_call(grid(N), 256, &other, &x, &mut z, N as i32, 0);
            assert!(refused_as_captured(r), "round {round}: a wait joined the capture");
            // `x` dropped during the capture: its memory must outlive the late fill.
            drop(x);
            let mut fresh = ctx.alloc_zeros::<f32>(N).unwrap();
            fill.prepared_async_call(grid(N), 256, &other, &mut fresh, 3.0, -1.0, N as i32, 0)
                .unwrap();
            other.synchronize().unwrap();
            assert!(
                c.end_capture(gpu_runtime::cudarc::driver::sys::CUgraphInstantiate_flags(0))
                    .is_err(),
                "round {round}: the capture made a graph"
            );
            s.synchronize().unwrap();
            assert_close(&fresh.to_vec().unwrap(), &filled(3.0, -1.0, N), TOL);
        } else {
            assert!(
                c.end_capture(gpu_runtime::cudarc::driver::sys::CUgraphInstantiate_flags(0))
                    .is_err(),
                "round {round}: the capture made a graph"
            );
            assert_close(&x.to_vec().unwrap(), &filled(a, b, N), TOL);
        }
        // After the capture the stream is ours again.
        fill.prepared_async_call(grid(N), 256, &s, &mut y, a, b, N as i32, 0)
            .unwrap();
        assert_close(&y.to_vec().unwrap(), &filled(a, b, N), TOL);
    }
}

/// Nested read lends of one cudarc slice on two streams, the inner one's reader the slowest,
/// then a write lend on a third: the write waits for both readers (cudarc's one read event
/// would name only the last reader). 100 rounds.
#[test]
#[ignore = "needs a CUDA GPU"]
fn a_write_lend_waits_for_every_earlier_read_lend_nested_or_not() {
    let ctx = ctx();
    let cudarc = ctx.cudarc_context().unwrap();
    let theirs = cudarc.new_stream().unwrap();
    let (s1, s2, s3) = (non_blocking(&ctx), non_blocking(&ctx), non_blocking(&ctx));
    let (fill, map) = (
        k::late_fill::prepare(&ctx).unwrap(),
        k::late_map::prepare(&ctx).unwrap(),
    );
    let mut rng = Rng::new(4102);
    for round in 0..100 {
        let host: Vec<f32> = (0..N).map(|_| rng.f32()).collect();
        let mut x = theirs.clone_htod(&host).unwrap();
        let (mut out1, mut out2, mut out3) = (
            ctx.alloc_zeros::<f32>(N).unwrap(),
            ctx.alloc_zeros::<f32>(N).unwrap(),
            ctx.alloc_zeros::<f32>(N).unwrap(),
        );
        x.lend(&s1, |x1| {
            map.prepared_async_call(grid(N), 256, &s1, x1, &mut out1, N as i32, cycles(&ctx, 1.0))
                .unwrap();
            x.lend(&s2, |x2| {
                map.prepared_async_call(grid(N), 256, &s2, x2, &mut out2, N as i32, cycles(&ctx, 4.0))
            })
            .unwrap()
            .unwrap();
        })
        .unwrap();
        // A read lend after them, not nested, on a third stream.
        x.lend(&s3, |x3| {
            map.prepared_async_call(grid(N), 256, &s3, x3, &mut out3, N as i32, cycles(&ctx, 2.0))
        })
        .unwrap()
        .unwrap();
        let w = non_blocking(&ctx);
        x.lend_mut(&w, |x| {
            fill.prepared_async_call(grid(N), 256, &w, x, 0.0, -7.0, N as i32, 0)
        })
        .unwrap()
        .unwrap();
        let want = mapped(&host);
        for (name, out) in [("outer", &out1), ("inner", &out2), ("after", &out3)] {
            let got = out.to_vec().unwrap();
            if let Some((i, g, e)) = gpu_suite::first_mismatch(&got, &want, TOL) {
                panic!("round {round}: the {name} reader saw the write: element {i}: got {g}, want {e}");
            }
        }
    }
}

/// Two threads write the two halves of one cudarc slice (`split_at_mut`) through lends on two
/// streams, late; then cudarc reads the whole slice: it must see both halves (the two ends
/// cover each other, or one write event would replace the other). 100 rounds.
#[test]
#[ignore = "needs a CUDA GPU"]
fn two_threads_lending_the_halves_of_a_split_slice_are_both_waited_for() {
    let ctx = ctx();
    let cudarc = ctx.cudarc_context().unwrap();
    let theirs = cudarc.new_stream().unwrap();
    let fill = k::late_fill::prepare(&ctx).unwrap();
    let (sa, sb) = (non_blocking(&ctx), non_blocking(&ctx));
    let mut rng = Rng::new(4103);
    let h = N / 2;
    for round in 0..100 {
        let (a, b) = (rng.f32(), rng.f32());
        let mut x = theirs.alloc_zeros::<f32>(N).unwrap();
        {
            let (mut lo, mut hi) = x.split_at_mut(h);
            std::thread::scope(|sc| {
                let (fill, ctx, sa, sb) = (&fill, &ctx, &sa, &sb);
                let ta = sc.spawn(move || {
                    lo.lend_mut(sa, |v| {
                        fill.prepared_async_call(grid(h), 256, sa, v, a, b, h as i32, cycles(ctx, 3.0))
                    })
                    .unwrap()
                    .unwrap()
                });
                hi.lend_mut(sb, |v| {
                    fill.prepared_async_call(grid(h), 256, sb, v, a, b + 1.0, h as i32, cycles(ctx, 1.0))
                })
                .unwrap()
                .unwrap();
                ta.join().unwrap();
            });
        }
        let got = theirs.clone_dtoh(&x).unwrap();
        let mut want = filled(a, b, h);
        want.extend(filled(a, b + 1.0, h));
        if let Some((i, g, w)) = gpu_suite::first_mismatch(&got, &want, TOL) {
            panic!("round {round}: element {i}: got {g}, want {w}");
        }
    }
}
