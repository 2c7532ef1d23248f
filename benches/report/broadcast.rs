//! Broadcasting and PyCUDA's kernel text, at 2^26 floats, as bandwidth (the bytes that must
//! move) next to a device-to-device copy of 2^26 floats in the same run: `(n, m) + (m,)` and
//! `(n, m) + (n, 1)` (the strided variant walking rows in tiles; reads n*m + m or n*m + n
//! floats, writes n*m), a transpose copy (`a.t().to_contiguous()` of a square array), and
//! PyCUDA's indexed `z[i] = a*x[i] + b*y[i]`; and, where CuPy is importable, the same four
//! through CuPy.

use std::process::Command;
use std::time::Duration;

use gpu_runtime::gpuarray::{DeviceArray, ElementwiseKernel, KernelArg};
use gpu_runtime::ndarray::{Ix1, Ix2};
use gpu_runtime::Context;

use crate::best;
use crate::gpu_timer::{timed, timed_copy};
use crate::table::Row;

/// Rows and columns of the 2-D arrays: 2^13 x 2^13 = 2^26 floats.
const SIDE: usize = 1 << 13;
const N: usize = SIDE * SIDE;
const ROUNDS: usize = 9;

fn gbs(bytes: usize, d: Duration) -> f64 {
    bytes as f64 / d.as_secs_f64() / 1e9
}

/// Bytes of `(n, m) + (m,)` (or `(n, 1)`): both operands read once, the result written.
const BROADCAST_BYTES: usize = 4 * (2 * N + SIDE);

/// The four operations through CuPy in a subprocess, as GB/s of the same bytes, if CuPy is
/// importable: `(n,m)+(m,)`, `(n,m)+(n,1)`, `cp.ascontiguousarray(a.T)`, `a*x + b*y`.
fn cupy() -> Option<[f64; 4]> {
    if !crate::cupy::importable() {
        return None;
    }
    let script = format!(
        r#"
import cupy as cp
s = {SIDE}; n = s * s
a = cp.random.random((s, s), dtype=cp.float32); row = cp.random.random(s, dtype=cp.float32)
col = cp.random.random((s, 1), dtype=cp.float32); z = cp.empty_like(a)
x = cp.random.random(n, dtype=cp.float32); y = cp.random.random(n, dtype=cp.float32); w = cp.empty_like(x)
lin = cp.ElementwiseKernel('float32 a, raw float32 x, float32 b, raw float32 y', 'float32 z', 'z = a * x[i] + b * y[i]', 'lin')
def t(f):
    f()
    best = 1e9
    for _ in range({ROUNDS}):
        st, e = cp.cuda.Event(), cp.cuda.Event()
        st.record(); f(); e.record(); e.synchronize()
        best = min(best, cp.cuda.get_elapsed_time(st, e) / 1e3)
    return best
bb = 4 * (2 * n + s)
print(bb / t(lambda: cp.add(a, row, out=z)) / 1e9,
      bb / t(lambda: cp.add(a, col, out=z)) / 1e9,
      8 * n / t(lambda: cp.ascontiguousarray(a.T)) / 1e9,
      12 * n / t(lambda: lin(cp.float32(2), x, cp.float32(3), y, w)) / 1e9)
"#
    );
    let out = Command::new("python3").args(["-c", &script]).output().ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let v: Vec<f64> = text
        .split_whitespace()
        .filter_map(|w| w.parse::<f64>().ok())
        .collect();
    Some([*v.first()?, *v.get(1)?, *v.get(2)?, *v.get(3)?])
}

fn row(figure: &'static str, ours: f64, floor: f64, target: &'static str) -> Row {
    Row {
        figure,
        raw: "cuMemcpyDtoD of 2^26 floats",
        ours,
        theirs: floor,
        unit: "GB/s",
        higher_is_better: true,
        target,
        rounds: Vec::new(),
    }
}

fn cupy_row(figure: &'static str, ours: f64, theirs: f64) -> Row {
    Row::cupy(figure, "CuPy (subprocess)", ours, theirs, "GB/s")
}

pub fn rows(ctx: &Context) -> Result<Vec<Row>, Box<dyn std::error::Error>> {
    let add = ElementwiseKernel::new("const float *x, const float *y, float *z", "z = x + y")?;
    let lin = ElementwiseKernel::with_name(
        "lin_comb",
        "float a, const float *x, float b, const float *y, float *z",
        "z[i] = a*x[i] + b*y[i]",
    )?;
    let mut a = DeviceArray::<f32, Ix2>::empty(ctx, (SIDE, SIDE))?;
    a.fill(1.0)?;
    let mut along_rows = DeviceArray::<f32, Ix1>::empty(ctx, SIDE)?;
    along_rows.fill(2.0)?;
    let mut column = DeviceArray::<f32, Ix2>::empty(ctx, (SIDE, 1))?;
    column.fill(3.0)?;
    let mut z = DeviceArray::<f32, Ix2>::empty(ctx, (SIDE, SIDE))?;
    let mut x = DeviceArray::<f32, Ix1>::empty(ctx, N)?;
    x.fill(1.0)?;
    let mut y = DeviceArray::<f32, Ix1>::empty(ctx, N)?;
    y.fill(2.0)?;
    let mut w = DeviceArray::<f32, Ix1>::empty(ctx, N)?;
    let copy = ctx.alloc::<f32>(N)?;
    let by_row = |z: &mut DeviceArray<f32, Ix2>| {
        add.launch([
            KernelArg::input(&a),
            KernelArg::input(&along_rows),
            KernelArg::output(z),
        ])
    };
    let by_column = |z: &mut DeviceArray<f32, Ix2>| {
        add.launch([
            KernelArg::input(&a),
            KernelArg::input(&column),
            KernelArg::output(z),
        ])
    };
    let pycuda = |w: &mut DeviceArray<f32, Ix1>| {
        lin.launch([
            2.0f32.into(),
            KernelArg::input(&x),
            3.0f32.into(),
            KernelArg::input(&y),
            KernelArg::output(w),
        ])
    };
    // Compile and load every kernel outside the timings.
    by_row(&mut z)?;
    by_column(&mut z)?;
    pycuda(&mut w)?;
    std::hint::black_box(a.t().to_contiguous()?);
    let (mut rows_t, mut cols_t, mut trans_t, mut lin_t, mut raw) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut t_out = DeviceArray::<f32, Ix2>::empty(ctx, (SIDE, SIDE))?;
    for _ in 0..ROUNDS {
        rows_t.push(timed(ctx, || by_row(&mut z))?);
        cols_t.push(timed(ctx, || by_column(&mut z))?);
        // Into an allocated array (`assign`), as `to_contiguous` does after allocating.
        trans_t.push(timed(ctx, || t_out.assign(&a.t()))?);
        lin_t.push(timed(ctx, || pycuda(&mut w))?);
        raw.push(timed_copy(ctx, &copy, x.storage())?);
    }
    let floor = gbs(8 * N, best(&raw));
    let ours = [
        gbs(BROADCAST_BYTES, best(&rows_t)),
        gbs(BROADCAST_BYTES, best(&cols_t)),
        gbs(8 * N, best(&trans_t)),
        gbs(12 * N, best(&lin_t)),
    ];
    let mut rows = vec![
        row(
            "broadcast (n,m)+(m,), 2^13 x 2^13 floats (bytes moved)",
            ours[0],
            floor,
            ">= 0.85x copy bandwidth",
        ),
        row(
            "broadcast (n,m)+(n,1), 2^13 x 2^13 floats (bytes moved)",
            ours[1],
            floor,
            ">= 0.85x copy bandwidth",
        ),
        row(
            "transpose copy a.t() into C order, 2^13 x 2^13 floats",
            ours[2],
            floor,
            ">= 0.85x copy bandwidth",
        ),
        row(
            "PyCUDA z[i] = a*x[i] + b*y[i], 2^26 floats (bytes moved)",
            ours[3],
            floor,
            ">= 0.9x copy bandwidth",
        ),
    ];
    match cupy() {
        Some(c) => {
            println!(
                "CuPy, same run: (n,m)+(m,) {:.1}, (n,m)+(n,1) {:.1}, transpose {:.1}, a*x[i]+b*y[i] {:.1} GB/s",
                c[0], c[1], c[2], c[3]
            );
            rows.push(cupy_row("broadcast (n,m)+(m,) vs CuPy cp.add", ours[0], c[0]));
            rows.push(cupy_row("broadcast (n,m)+(n,1) vs CuPy cp.add", ours[1], c[1]));
            rows.push(cupy_row(
                "transpose copy vs CuPy ascontiguousarray(a.T)",
                ours[2],
                c[2],
            ));
            rows.push(cupy_row(
                "z[i] = a*x[i] + b*y[i] vs CuPy raw ElementwiseKernel",
                ours[3],
                c[3],
            ));
        }
        None => println!("CuPy broadcast rows skipped: `python3 -c \"import cupy\"` failed here"),
    }
    Ok(rows)
}
