//! The benchmark report: every figure of the library next to the same operation done through
//! raw cudarc / `cudarc::driver::sys` in the same process and run, as one table and as JSON.
//!
//! `cargo bench --bench report` on a machine with an NVIDIA GPU (a few minutes; with
//! `--features cublas`, also cuBLAS through cudarc on our buffers against cudarc's own slices). The JSON goes
//! to `$GPU_BENCH_JSON`, else `$OUT/bench-report.json` when `OUT` is set, else
//! `target/bench-report.json`, and the same table in markdown beside it (`.md`: what
//! `guide/performance.md` shows). `GPU_BENCH_ONLY=threads,compile` (section names: launch, threads,
//! compile, memory, graph, dependent, loops, gpuarray, broadcast, math, reduce, nanred, select, rearrange, serve, sort, linalg, cublas, matmul) runs only those sections.

mod broadcast;
mod compile;
#[cfg(feature = "cublas")]
mod cublas;
mod cupy;
mod dependent;
#[path = "../common/dma_floor.rs"]
mod dma_floor;
mod gpu_timer;
mod gpuarray;
mod graph;
mod launch;
mod linalg;
mod loops;
mod math;
#[cfg(feature = "cublas")]
mod matmul;
mod memory;
mod nanred;
mod rearrange;
mod reduce;
mod select;
mod serve;
mod sort;
mod table;
mod threads;

use std::time::Duration;

use gpu_runtime::cudarc::driver::sys;
use gpu_runtime::{kernel, Context};

#[kernel(
    r#"
__global__ void axpy(float a, const float *x, float *y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}"#
)]
fn axpy(a: f32, #[In] x: &[f32], #[InOut] y: &mut [f32], n: i32);

/// Panics on a failed raw driver call: the raw side of a benchmark has no error path.
fn ok(r: sys::CUresult) {
    assert_eq!(r, sys::CUresult::CUDA_SUCCESS, "a raw driver call failed");
}

/// `axpy(a, x, y, n)` with `cuLaunchKernel` on `stream`, grid 4, block 256: the raw side of
/// the launch rows. The context must be current.
fn raw_axpy(func: sys::CUfunction, stream: sys::CUstream, a: f32, x: u64, y: u64, n: i32) {
    let mut params = [
        &a as *const f32 as *mut std::ffi::c_void,
        &x as *const u64 as *mut std::ffi::c_void,
        &y as *const u64 as *mut std::ffi::c_void,
        &n as *const i32 as *mut std::ffi::c_void,
    ];
    // SAFETY: the parameters match axpy's signature and point to live values.
    ok(unsafe {
        sys::cuLaunchKernel(
            func,
            4,
            1,
            1,
            256,
            1,
            1,
            0,
            stream,
            params.as_mut_ptr(),
            std::ptr::null_mut(),
        )
    });
}

/// The fastest of several rounds: the least disturbed by the rest of the machine.
fn best(times: &[Duration]) -> Duration {
    times.iter().copied().min().unwrap_or_default()
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    if let Ok(mode) = std::env::var(compile::CHILD_ENV) {
        return compile::child(&mode);
    }
    let ctx = match Context::default() {
        Ok(ctx) => ctx,
        Err(e) => {
            eprintln!("bench report: {e}");
            std::process::exit(1);
        }
    };
    let device = format!(
        "{} (driver CUDA {:?})",
        ctx.device().name()?,
        gpu_runtime::driver::driver_version()?
    );
    // GPU_BENCH_ONLY=threads,compile runs those sections only (a shorter run for one figure).
    let only = std::env::var("GPU_BENCH_ONLY").ok();
    let wanted = |section: &str| only.as_deref().is_none_or(|o| o.split(',').any(|s| s == section));
    let mut rows = Vec::new();
    type Section = fn(&Context) -> Result<Vec<table::Row>, Box<dyn std::error::Error>>;
    let sections: &[(&str, Section)] = &[
        ("launch", launch::rows),
        ("threads", threads::rows),
        ("compile", compile::rows),
        ("memory", memory::rows),
        ("graph", graph::rows),
        ("dependent", dependent::rows),
        ("loops", loops::rows),
        ("gpuarray", gpuarray::rows),
        ("math", math::rows),
        ("reduce", reduce::rows),
        ("nanred", nanred::rows),
        ("broadcast", broadcast::rows),
        ("select", select::rows),
        ("rearrange", rearrange::rows),
        ("serve", serve::rows),
        ("sort", sort::rows),
        ("linalg", linalg::rows),
        #[cfg(feature = "cublas")]
        ("cublas", cublas::rows),
        #[cfg(feature = "cublas")]
        ("matmul", matmul::rows),
    ];
    for (name, section) in sections {
        if wanted(name) {
            rows.extend(section(&ctx)?);
        }
    }
    print!("{}", table::render(&device, &rows));
    let path = std::env::var_os("GPU_BENCH_JSON")
        .map(std::path::PathBuf::from)
        .or_else(|| std::env::var_os("OUT").map(|o| std::path::PathBuf::from(o).join("bench-report.json")))
        .unwrap_or_else(|| std::path::PathBuf::from("target/bench-report.json"));
    std::fs::write(&path, table::json(&device, &rows))?;
    println!("JSON: {}", path.display());
    // The guide's performance chapter pastes this file's table as is.
    let md = path.with_extension("md");
    std::fs::write(&md, table::markdown(&device, &rows))?;
    println!("markdown: {}", md.display());
    Ok(())
}
