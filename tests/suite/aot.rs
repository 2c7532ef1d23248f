//! Kernels compiled at build time and embedded in the binary, typed `__constant__`/`__device__`
//! globals, and C++ kernel templates, on a real GPU.
//!
//! The two embedding tests re-run themselves in a child process that cannot load NVRTC: started
//! through the dynamic loader with `--inhibit-cache` (so the ld cache, which may list the CUDA
//! toolkit, is not searched) and with only the driver's directory as its library path. A kernel
//! that launches in the child was not compiled at run time.

use std::path::PathBuf;
use std::process::Command;

use gpu_runtime::compiler::{pick_embedded, ImageKind};
use gpu_runtime::{kernel, Context};
use gpu_suite::{assert_close, Rng};

const CHILD: &str = "GPU_SUITE_NO_NVRTC_CHILD";

use crate::common::{ctx, test_path};

#[kernel(r#"
__global__ void saxpy_cubin(float a, const float *x, float *y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}"#, embed = ["sm_80", "sm_90"])]
fn saxpy_cubin(a: f32, #[In] x: &[f32], #[InOut] y: &mut [f32], n: i32);

// Only a cubin for sm_80 (which an sm_90 device cannot run) and PTX for compute_75: the
// driver compiles the PTX.
#[kernel(r#"
__global__ void saxpy_ptx(float a, const float *x, float *y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}"#, embed = ["sm_80", "compute_75"])]
fn saxpy_ptx(a: f32, #[In] x: &[f32], #[InOut] y: &mut [f32], n: i32);

// No `embed`: the build ships PTX for the GPU of the machine that builds it, by default (when
// its NVRTC is no newer than that machine's driver).
#[kernel(
    r#"
__global__ void saxpy_shipped(float a, const float *x, float *y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}"#
)]
fn saxpy_shipped(a: f32, #[In] x: &[f32], #[InOut] y: &mut [f32], n: i32);

/// The directory `libcuda.so` was loaded from, read from this process's memory map.
fn driver_dir() -> PathBuf {
    let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
    let path = maps
        .lines()
        .filter_map(|l| l.split_whitespace().nth(5))
        .find(|p| {
            let name = p.rsplit('/').next().unwrap_or("");
            name.starts_with("libcuda.so")
        })
        .expect("libcuda.so is mapped once a context exists");
    PathBuf::from(path).parent().unwrap().to_owned()
}

/// In the parent: runs `test` again in a child without NVRTC and checks that it passed.
/// Returns true in the child, where the caller runs the real test body.
fn in_child_without_nvrtc(test: &str) -> bool {
    if std::env::var_os(CHILD).is_some() {
        // SAFETY: only tries to dlopen NVRTC by its usual names.
        let present = unsafe { cudarc::nvrtc::sys::is_culib_present() };
        assert!(
            !present,
            "NVRTC is still loadable in the child; the test would prove nothing"
        );
        return true;
    }
    drop(ctx());
    let dir = driver_dir();
    let exe = std::env::current_exe().unwrap();
    let out = Command::new("/lib64/ld-linux-x86-64.so.2")
        .arg("--inhibit-cache")
        .arg("--library-path")
        .arg(&dir)
        .arg(&exe)
        .arg(test_path(module_path!(), test))
        .args(["--exact", "--ignored", "--nocapture", "--test-threads=1"])
        .env(CHILD, "1")
        .env("LD_LIBRARY_PATH", &dir)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stdout.contains("1 passed"),
        "the child without NVRTC (LD_LIBRARY_PATH={}) failed:\n{stdout}\n{stderr}",
        dir.display()
    );
    false
}

fn check_saxpy(launch: impl Fn(&Context, f32, &[f32], &mut [f32], i32) -> gpu_runtime::Result<()>) {
    let ctx = ctx();
    let n = 50_001;
    let mut rng = Rng::new(61);
    let x = rng.vec_f32(n);
    let mut y = rng.vec_f32(n);
    let want: Vec<f32> = x.iter().zip(&y).map(|(x, y)| 1.75 * x + y).collect();
    launch(&ctx, 1.75, &x, &mut y, n as i32).unwrap();
    assert_close(&y, &want, 1e-6);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn embedded_cubin_launches_without_nvrtc() {
    if !in_child_without_nvrtc("embedded_cubin_launches_without_nvrtc") {
        return;
    }
    let cc = ctx().compute_capability();
    let image = pick_embedded(saxpy_cubin::source().images(), cc)
        .unwrap_or_else(|| panic!("no embedded image fits compute capability {cc:?}"));
    assert_eq!(image.kind(), ImageKind::Cubin, "expected an sm_80/sm_90 device");
    check_saxpy(|ctx, a, x, y, n| saxpy_cubin(ctx, (n as u32).div_ceil(256), 256, a, x, y, n));
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn embedded_ptx_is_jit_compiled_by_the_driver_when_no_cubin_matches() {
    if !in_child_without_nvrtc("embedded_ptx_is_jit_compiled_by_the_driver_when_no_cubin_matches") {
        return;
    }
    let cc = ctx().compute_capability();
    let image = pick_embedded(saxpy_ptx::source().images(), cc).unwrap();
    assert_eq!(
        (image.kind(), image.arch()),
        (ImageKind::Ptx, 75),
        "on a device of {cc:?}"
    );
    check_saxpy(|ctx, a, x, y, n| saxpy_ptx(ctx, (n as u32).div_ceil(256), 256, a, x, y, n));
}

/// Built on the GPU machine that runs it, or elsewhere with `GPU_RUNTIME_TARGET_GPU` naming its
/// GPU (`../shared/gpu/pack` builds without a GPU: pack with `GPU_RUNTIME_TARGET_GPU=9.0` for an
/// H200), with an NVRTC no newer than its driver (e.g. `GPU_RUNTIME_NVRTC=$GPU_SUITE_NVRTC_13_0`
/// for a CUDA 13.0 driver), a kernel without `embed` carries PTX for that GPU, which launches
/// where NVRTC cannot be loaded.
#[test]
#[ignore = "needs a CUDA GPU"]
fn ptx_shipped_by_default_launches_without_nvrtc() {
    if !in_child_without_nvrtc("ptx_shipped_by_default_launches_without_nvrtc") {
        return;
    }
    let cc = ctx().compute_capability();
    let image = pick_embedded(saxpy_shipped::source().images(), cc).unwrap_or_else(|| {
        panic!(
            "no PTX was shipped for compute capability {cc:?}: the build ships PTX for the build \
             machine's GPU or GPU_RUNTIME_TARGET_GPU's, so build this test on the machine that runs \
             it or with GPU_RUNTIME_TARGET_GPU set to its GPU, with an NVRTC no newer than its \
             driver and without GPU_RUNTIME_EMBED"
        )
    });
    assert_eq!((image.kind(), image.arch()), (ImageKind::Ptx, cc.0 * 10 + cc.1));
    assert_eq!(saxpy_shipped::source().images().len(), 1, "one image per source");
    check_saxpy(|ctx, a, x, y, n| saxpy_shipped(ctx, (n as u32).div_ceil(256), 256, a, x, y, n));
}

#[kernel(
    r#"
__constant__ float coeffs[4];
__constant__ int offset;
__device__ unsigned int hits;
__global__ void poly(const float *x, float *y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v = x[i];
        y[i] = coeffs[0] + v * (coeffs[1] + v * (coeffs[2] + v * coeffs[3])) + offset;
        if (v > 0.5f) atomicAdd(&hits, 1u);
    }
}"#
)]
fn poly(#[In] x: &[f32], #[Out] y: &mut [f32], n: i32);

#[test]
#[ignore = "needs a CUDA GPU"]
fn typed_constants_written_from_rust_are_read_by_the_kernel() {
    let ctx = ctx();
    let n = 70_000;
    let mut rng = Rng::new(62);
    let x = rng.vec_f32(n);
    let c: [f32; 4] = [rng.f32(), rng.f32(), rng.f32(), rng.f32()];
    let coeffs = poly::globals::coeffs(&ctx).unwrap();
    coeffs.set(c).unwrap();
    assert_eq!(coeffs.get().unwrap(), c);
    poly::globals::offset(&ctx).unwrap().set(3).unwrap();
    let hits = poly::globals::hits(&ctx).unwrap();
    hits.set(0).unwrap();
    let mut y = vec![0.0f32; n];
    poly(&ctx, (n as u32).div_ceil(256), 256, &x, &mut y, n as i32).unwrap();
    let want: Vec<f32> = x
        .iter()
        .map(|v| c[0] + v * (c[1] + v * (c[2] + v * c[3])) + 3.0)
        .collect();
    assert_close(&y, &want, 1e-5);
    let want_hits = x.iter().filter(|&&v| v > 0.5).count() as u32;
    assert_eq!(hits.get().unwrap(), want_hits);
}

#[kernel(r#"
template <typename T>
__global__ void scale_add(T *x, const T *y, T a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = a * x[i] + y[i];
}"#, instantiate = [f32, f64, i32])]
fn scale_add<T>(#[InOut] x: &mut [T], #[In] y: &[T], a: T, n: i32);

#[test]
#[ignore = "needs a CUDA GPU"]
fn template_instantiations_for_three_types() {
    let ctx = ctx();
    let n = 40_000;
    let mut rng = Rng::new(63);
    let grid = (n as u32).div_ceil(128);

    let (mut x, y) = (rng.vec_f32(n), rng.vec_f32(n));
    let want: Vec<f32> = x.iter().zip(&y).map(|(x, y)| 2.5 * x + y).collect();
    scale_add::<f32>(&ctx, grid, 128, &mut x, &y, 2.5, n as i32).unwrap();
    assert_close(&x, &want, 1e-6);

    let xd: Vec<f64> = rng.vec_f32(n).into_iter().map(|v| v as f64 / 3.0).collect();
    let yd: Vec<f64> = rng.vec_f32(n).into_iter().map(|v| v as f64 / 7.0).collect();
    let want: Vec<f64> = xd.iter().zip(&yd).map(|(x, y)| -1.25 * x + y).collect();
    let k = scale_add::prepare::<f64>(&ctx).unwrap();
    let mut xdev = ctx.to_device(&xd).unwrap();
    let ydev = ctx.to_device(&yd).unwrap();
    k.prepared_call(grid, 128, &mut xdev, &ydev, -1.25, n as i32)
        .unwrap();
    let got = xdev.to_vec().unwrap();
    for (g, w) in got.iter().zip(&want) {
        assert!((g - w).abs() <= 1e-12 * w.abs().max(1.0), "{g} vs {w}");
    }

    let mut xi: Vec<i32> = (0..n).map(|_| (rng.f32() * 1000.0) as i32 - 500).collect();
    let yi: Vec<i32> = (0..n).map(|_| (rng.f32() * 1000.0) as i32).collect();
    let want: Vec<i32> = xi.iter().zip(&yi).map(|(x, y)| 3 * x + y).collect();
    scale_add::<i32>(&ctx, grid, 128, &mut xi, &yi, 3, n as i32).unwrap();
    assert_eq!(xi, want);
}

#[kernel(r#"
__global__ void saxpy_future(float a, const float *x, float *y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}"#, embed = ["compute_75"])]
fn saxpy_future(a: f32, #[In] x: &[f32], #[InOut] y: &mut [f32], n: i32);

/// `saxpy_future`'s source with its embedded PTX claiming PTX ISA 99.9, newer than any
/// driver: what a binary built with an NVRTC newer than the driver carries.
fn with_future_ptx() -> (&'static gpu_runtime::compiler::ModuleSource, Vec<u8>) {
    use gpu_runtime::compiler::{EmbeddedImage, ModuleSource};
    let real = saxpy_future::source();
    let image = &real.images()[0];
    assert_eq!(image.kind(), ImageKind::Ptx);
    let text = String::from_utf8(image.bytes().to_vec()).unwrap();
    let version = text.lines().find(|l| l.starts_with(".version ")).unwrap();
    let doctored = text.replacen(version, ".version 99.9", 1).into_bytes();
    let bytes: &'static [u8] = doctored.clone().leak();
    let images: &'static [EmbeddedImage] = Vec::leak(vec![EmbeddedImage::new(
        ImageKind::Ptx,
        image.arch(),
        bytes,
        image.lowered_names(),
    )]);
    let source =
        ModuleSource::new(real.name(), real.source(), real.kernels(), real.options()).with_images(images);
    (Box::leak(Box::new(source)), doctored)
}

/// Embedded PTX that the driver refuses as too new (`CUDA_ERROR_UNSUPPORTED_PTX_VERSION`) is
/// replaced by a compile of the embedded source with the run-time NVRTC, and the kernel works.
#[test]
#[ignore = "needs a CUDA GPU"]
fn embedded_ptx_newer_than_the_driver_falls_back_to_nvrtc() {
    use gpu_runtime::driver::{Function, JitOptions, Module};
    use gpu_runtime::launch::Arg;
    let ctx = ctx();
    let (source, doctored) = with_future_ptx();
    let refused = Module::from_image(&ctx, &doctored, &JitOptions::default()).unwrap_err();
    assert!(
        matches!(refused, gpu_runtime::Error::ModuleLoad { code: 222, .. }),
        "the driver should refuse PTX ISA 99.9 as unsupported: {refused}"
    );
    let f = Function::prepare(&ctx, source, 0).unwrap();
    let n = 40_000;
    let mut rng = Rng::new(7);
    let x = rng.vec_f32(n);
    let mut y = rng.vec_f32(n);
    let want: Vec<f32> = x.iter().zip(&y).map(|(x, y)| -0.5 * x + y).collect();
    f.call(
        (n as u32).div_ceil(256),
        256,
        &mut [
            Arg::F32(-0.5),
            Arg::host_in(&x),
            Arg::host_in_out(&mut y),
            Arg::I32(n as i32),
        ],
    )
    .unwrap();
    assert_close(&y, &want, 1e-6);
}

/// Without NVRTC the same image is an error that says who built the PTX, which driver
/// refused it, and how to fix the build.
#[test]
#[ignore = "needs a CUDA GPU"]
fn embedded_ptx_newer_than_the_driver_without_nvrtc_says_how_to_fix_it() {
    if !in_child_without_nvrtc("embedded_ptx_newer_than_the_driver_without_nvrtc_says_how_to_fix_it") {
        return;
    }
    let ctx = ctx();
    let (source, _) = with_future_ptx();
    let e = gpu_runtime::driver::Function::prepare(&ctx, source, 0).unwrap_err();
    let (major, minor) = gpu_runtime::driver::driver_version().unwrap();
    let text = e.to_string();
    assert!(
        matches!(e, gpu_runtime::Error::EmbeddedPtxTooNew { .. }),
        "{text}"
    );
    for want in [
        "PTX ISA 99.9",
        &format!("(CUDA {major}.{minor})") as &str,
        &format!("no newer than CUDA {major}.{minor}"),
        "compiler of CUDA",
        "saxpy_future",
    ] {
        assert!(text.contains(want), "{want:?} missing from: {text}");
    }
}
