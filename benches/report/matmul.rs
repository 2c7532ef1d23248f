//! `gpuarray::matmul` and `astype`: sgemm 8192^3 through `gpuarray::on(&stream).matmul_into`
//! against cuBLAS's sgemm called directly through cudarc on cudarc's own slices (same stream, interleaved
//! rounds), and `astype` f32 -> f16, f32 -> f64, f64 -> f32 and i32 -> i64 of 2^26 elements
//! as bandwidth (bytes read + written) next to `cuMemcpyDtoD` of the same floats in the same
//! run; CuPy's `astype` (the same four) and `matmul` beside them where CuPy is importable. Built with the `cublas` feature; the matmul row is skipped,
//! saying why, when libcublas cannot be loaded.

use std::process::Command;
use std::time::{Duration, Instant};

use gpu_runtime::cudarc::cublas::sys::cublasOperation_t::CUBLAS_OP_N;
use gpu_runtime::cudarc::cublas::{Gemm, GemmConfig};
use gpu_runtime::driver::cublas::cublas_on;
use gpu_runtime::gpuarray::{self, DeviceArray};
use gpu_runtime::half::f16;
use gpu_runtime::ndarray::{Array2, Ix1, Ix2};
use gpu_runtime::{Context, Stream};

use crate::best;
use crate::gpu_timer::{timed, timed_copy};
use crate::table::Row;

/// The side of the square sgemm.
const M: usize = 8192;
const CALLS: usize = 3;
const ROUNDS: usize = 7;
/// The elements of the `astype` rows.
const N: usize = 1 << 26;

pub fn rows(ctx: &Context) -> Result<Vec<Row>, Box<dyn std::error::Error>> {
    let theirs = cupy();
    let mut rows = astype_rows(ctx, theirs.map(|c| [c[0], c[1], c[2], c[3]]))?;
    rows.extend(sgemm_rows(ctx, theirs.map(|c| c[4]))?);
    Ok(rows)
}

/// The sgemm row, and beside it CuPy's `matmul` of the same size (`cupy_tflops`) when CuPy ran.
fn sgemm_rows(ctx: &Context, cupy_tflops: Option<f64>) -> Result<Vec<Row>, Box<dyn std::error::Error>> {
    let stream = Stream::new(ctx)?;
    let blas = match cublas_on(&stream) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("bench report: no matmul row: {e}");
            return Ok(Vec::new());
        }
    };
    let c = stream.to_cudarc()?;
    let host: Vec<f32> = (0..M * M).map(|i| (i % 7) as f32 * 0.25).collect();
    let square = Array2::from_shape_vec((M, M), host.clone())?;
    let (a, b) = (
        DeviceArray::from_ndarray(ctx, &square)?,
        DeviceArray::from_ndarray(ctx, &square)?,
    );
    let mut out = DeviceArray::<f32, Ix2>::zeros(ctx, (M, M))?;
    let (ta, tb) = (c.clone_htod(&host)?, c.clone_htod(&host)?);
    let mut tout = c.alloc_zeros::<f32>(M * M)?;
    // Row-major A B is column-major Bᵀ Aᵀ: the call matmul makes for C-order operands.
    let cfg = GemmConfig {
        transa: CUBLAS_OP_N,
        transb: CUBLAS_OP_N,
        m: M as i32,
        n: M as i32,
        k: M as i32,
        alpha: 1.0f32,
        lda: M as i32,
        ldb: M as i32,
        beta: 0.0f32,
        ldc: M as i32,
    };
    let (mut ours_t, mut theirs_t, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
    for round in 0..=ROUNDS {
        let t0 = Instant::now();
        for _ in 0..CALLS {
            gpuarray::on(&stream).matmul_into(&a, &b, &mut out)?;
        }
        stream.synchronize()?;
        let ours = t0.elapsed();
        let t0 = Instant::now();
        for _ in 0..CALLS {
            // SAFETY: every matrix is M x M with leading dimension M in a buffer of M * M
            // elements; the output is its own slice.
            unsafe { blas.gemm(cfg, &tb, &ta, &mut tout) }?;
        }
        c.synchronize()?;
        let theirs = t0.elapsed();
        // Round 0 warms both up (the handles, cuBLAS's kernel selection).
        if round > 0 {
            ours_t.push(ours / CALLS as u32);
            theirs_t.push(theirs / CALLS as u32);
            // The table's ratio is of times (below 1: ours is faster), as for every row.
            ratios.push(ours.as_secs_f64() / theirs.as_secs_f64());
        }
    }
    let tflops = |d: Duration| 2.0 * (M as f64).powi(3) / d.as_secs_f64() / 1e12;
    let mut rows = vec![Row {
        figure: "sgemm 8192^3 through gpuarray::on(&stream).matmul_into (C-order f32 arrays)",
        raw: "cuBLAS sgemm called directly (cudarc, own slices, same stream)",
        ours: tflops(best(&ours_t)),
        theirs: tflops(best(&theirs_t)),
        unit: "TFLOP/s",
        higher_is_better: true,
        target: ">= 0.97x cuBLAS (time ratio <= 1.03)",
        rounds: ratios,
    }];
    if let Some(theirs) = cupy_tflops {
        rows.push(Row::cupy(
            "sgemm 8192^3 through matmul_into vs CuPy cp.matmul(a, b, out=c)",
            "CuPy (subprocess)",
            tflops(best(&ours_t)),
            theirs,
            "TFLOP/s",
        ));
    }
    Ok(rows)
}

fn gbs(bytes_per_elem: usize, d: Duration) -> f64 {
    (bytes_per_elem * N) as f64 / d.as_secs_f64() / 1e9
}

/// The `astype` rows, and beside them CuPy's four conversions (`theirs`) when CuPy ran.
fn astype_rows(ctx: &Context, theirs: Option<[f64; 4]>) -> Result<Vec<Row>, Box<dyn std::error::Error>> {
    let mut x = DeviceArray::<f32, Ix1>::empty(ctx, N)?;
    x.fill_uniform(3)?;
    let mut halves = DeviceArray::<f16, Ix1>::empty(ctx, N)?;
    let mut doubles = DeviceArray::<f64, Ix1>::empty(ctx, N)?;
    let copy = ctx.alloc::<f32>(N)?;
    // The narrowing back and an integer widening share the flat conversion kernel.
    let mut singles = DeviceArray::<f32, Ix1>::empty(ctx, N)?;
    let ints = x.astype::<i32>()?;
    let mut longs = DeviceArray::<i64, Ix1>::empty(ctx, N)?;
    // Compile and load the conversions outside the timings.
    halves.assign(&x)?;
    doubles.assign(&x)?;
    singles.assign(&doubles)?;
    longs.assign(&ints)?;
    let (mut to_f16, mut to_f64, mut raw) = (Vec::new(), Vec::new(), Vec::new());
    let (mut to_f32, mut to_i64) = (Vec::new(), Vec::new());
    for _ in 0..ROUNDS {
        // Into existing arrays: `astype` is this kernel after an allocation.
        to_f16.push(timed(ctx, || halves.assign(&x))?);
        to_f64.push(timed(ctx, || doubles.assign(&x))?);
        to_f32.push(timed(ctx, || singles.assign(&doubles))?);
        to_i64.push(timed(ctx, || longs.assign(&ints))?);
        raw.push(timed_copy(ctx, &copy, x.storage())?);
    }
    let floor = gbs(8, best(&raw));
    let mut rows = vec![
        Row {
            figure: "astype f32 -> f16 of 2^26 elements (bytes read + written)",
            raw: "cuMemcpyDtoD of 2^26 floats",
            ours: gbs(6, best(&to_f16)),
            theirs: floor,
            unit: "GB/s",
            higher_is_better: true,
            target: ">= 0.85x copy bandwidth",
            rounds: Vec::new(),
        },
        Row {
            figure: "astype f32 -> f64 of 2^26 elements (bytes read + written)",
            raw: "cuMemcpyDtoD of 2^26 floats",
            ours: gbs(12, best(&to_f64)),
            theirs: floor,
            unit: "GB/s",
            higher_is_better: true,
            target: ">= 0.85x copy bandwidth",
            rounds: Vec::new(),
        },
        Row {
            figure: "astype f64 -> f32 of 2^26 elements (bytes read + written)",
            raw: "cuMemcpyDtoD of 2^26 floats",
            ours: gbs(12, best(&to_f32)),
            theirs: floor,
            unit: "GB/s",
            higher_is_better: true,
            target: ">= 0.85x copy bandwidth",
            rounds: Vec::new(),
        },
        Row {
            figure: "astype i32 -> i64 of 2^26 elements (bytes read + written)",
            raw: "cuMemcpyDtoD of 2^26 floats",
            ours: gbs(12, best(&to_i64)),
            theirs: floor,
            unit: "GB/s",
            higher_is_better: true,
            target: ">= 0.85x copy bandwidth",
            rounds: Vec::new(),
        },
    ];
    if let Some([c16, c64, c32, ci64]) = theirs {
        println!(
            "CuPy, same run: astype f16 {c16:.1} GB/s, f64 {c64:.1} GB/s, f64 -> f32 {c32:.1} GB/s, i32 -> i64 {ci64:.1} GB/s"
        );
        for (figure, ours, theirs) in [
            (
                "astype f32 -> f16 vs CuPy x.astype(cp.float16)",
                gbs(6, best(&to_f16)),
                c16,
            ),
            (
                "astype f32 -> f64 vs CuPy x.astype(cp.float64)",
                gbs(12, best(&to_f64)),
                c64,
            ),
            (
                "astype f64 -> f32 vs CuPy d.astype(cp.float32)",
                gbs(12, best(&to_f32)),
                c32,
            ),
            (
                "astype i32 -> i64 vs CuPy i.astype(cp.int64)",
                gbs(12, best(&to_i64)),
                ci64,
            ),
        ] {
            rows.push(Row::cupy(figure, "CuPy (subprocess)", ours, theirs, "GB/s"));
        }
    }
    Ok(rows)
}

/// CuPy's `astype` of 2^26 elements, f32 to f16 and to f64, f64 to f32 and i32 to i64 (the
/// rows' four conversions) as GB/s (bytes read + written; its timing includes the output's
/// allocation, from CuPy's pool), then its `matmul` of two 8192 x 8192 `float32` matrices into
/// an existing one as TFLOP/s, in a subprocess, if CuPy is importable.
fn cupy() -> Option<[f64; 5]> {
    if !crate::cupy::importable() {
        return None;
    }
    let script = format!(
        r#"
import cupy as cp
n = {N}
x = cp.random.random(n, dtype=cp.float32)
def t(f):
    best = 1e9
    for _ in range({ROUNDS}):
        s, e = cp.cuda.Event(), cp.cuda.Event()
        s.record(); f(); e.record(); e.synchronize()
        best = min(best, cp.cuda.get_elapsed_time(s, e) / 1e3)
    return best
d = x.astype(cp.float64); i = x.astype(cp.int32)
x.astype(cp.float16); d.astype(cp.float32); i.astype(cp.int64)
print(6 * n / t(lambda: x.astype(cp.float16)) / 1e9, 12 * n / t(lambda: x.astype(cp.float64)) / 1e9,
      12 * n / t(lambda: d.astype(cp.float32)) / 1e9, 12 * n / t(lambda: i.astype(cp.int64)) / 1e9)
del x, d, i
m = {M}
a = cp.asarray((cp.arange(m * m) % 7).reshape(m, m).astype(cp.float32) * 0.25); c = cp.empty_like(a)
cp.matmul(a, a, out=c)
print(2 * m ** 3 / t(lambda: cp.matmul(a, a, out=c)) / 1e12)
"#
    );
    let out = Command::new("python3").args(["-c", &script]).output().ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let mut it = text.split_whitespace().filter_map(|w| w.parse::<f64>().ok());
    Some([it.next()?, it.next()?, it.next()?, it.next()?, it.next()?])
}
