//! Issue 46's NaN-ignoring reductions and element functions (`nanred` section): `nansum` and
//! `nanmax` of 2^26 floats over all axes (and `nansum` of 2^20, the small-array fixed cost),
//! `nansum` along each axis of an 8192 x 8192 matrix, `nanmean`, `nanmax` and `nanargmax`
//! along its rows, `isclose` of two 2^26-float arrays and `nan_to_num` of one. Each row is GB/s
//! of the bytes that must move (4 per float read; `isclose` reads 8 and writes 1 per element,
//! `nan_to_num` reads and writes 4) next to `cuMemcpyDtoD` of the same floats in the same run,
//! best of [`ROUNDS`]; and, where CuPy is importable, the same operation through CuPy.
//!
//! Over all axes the result stays on the device (as CuPy's 0-d result): those rows run the
//! kernel text `nansum`/`nanmax` generate (a NaN skipped in the map, a NaN neutral for the
//! maximum), through [`ReductionKernel::reduce_into`], without the read back to the host that
//! `x.nansum()` adds. Along an axis they call the array methods themselves.

use gpu_runtime::gpuarray::{isclose, nan_to_num, DeviceArray, KernelArg, ReductionKernel};
use gpu_runtime::ndarray::{Ix0, Ix1};
use gpu_runtime::Context;

use crate::gpu_timer::{copy_floor, rate, ROUNDS};
use crate::table::Row;

/// Rows and columns of the matrix: 2^26 floats.
const SIDE: usize = 8192;

/// The rows' operations through CuPy in a subprocess, as GB/s in the rows' order, if CuPy is
/// importable.
fn cupy() -> Option<Vec<f64>> {
    let body = format!(
        r#"n = {SIDE} * {SIDE}
x = cp.random.random(n, dtype=cp.float32); m = x.reshape({SIDE}, {SIDE})
y = cp.random.random(n, dtype=cp.float32)
small = cp.random.random(1 << 20, dtype=cp.float32)
out = []
for f in [lambda: cp.nansum(x), lambda: cp.nanmax(x), lambda: cp.nansum(m, axis=0),
          lambda: cp.nansum(m, axis=1), lambda: cp.nanmean(m, axis=1), lambda: cp.nanmax(m, axis=1),
          lambda: cp.nanargmax(m, axis=1)]:
    out.append(4 * n / t(f) / 1e9)
out.append(9 * n / t(lambda: cp.isclose(x, y)) / 1e9)
out.append(8 * n / t(lambda: cp.nan_to_num(x)) / 1e9)
out.append(4 * (1 << 20) / t(lambda: cp.nansum(small)) / 1e9)
print(*out)
"#
    );
    crate::cupy::timed_figures(ROUNDS, &body, FIGURES.len())
}

const FIGURES: [&str; 10] = [
    "nansum of 2^26 floats, all axes (bytes read)",
    "nanmax of 2^26 floats, all axes (bytes read)",
    "nansum along axis 0 of 8192 x 8192 floats (columns)",
    "nansum along axis 1 of 8192 x 8192 floats (rows)",
    "nanmean along axis 1 of 8192 x 8192 floats (rows)",
    "nanmax along axis 1 of 8192 x 8192 floats (rows)",
    "nanargmax along axis 1 of 8192 x 8192 floats (rows)",
    "isclose of two 2^26-float arrays (bytes read + written)",
    "nan_to_num of 2^26 floats (bytes read + written)",
    "nansum of 2^20 floats, all axes (bytes read)",
];

pub fn rows(ctx: &Context) -> Result<Vec<Row>, Box<dyn std::error::Error>> {
    let n = SIDE * SIDE;
    let mut x = DeviceArray::<f32, Ix1>::empty(ctx, n)?;
    x.fill_uniform(3)?;
    let mut y = DeviceArray::<f32, Ix1>::empty(ctx, n)?;
    y.fill_uniform(4)?;
    let mut small = DeviceArray::<f32, Ix1>::empty(ctx, 1 << 20)?;
    small.fill_uniform(5)?;
    let m = x.view().reshape((SIDE, SIDE))?;
    let floor = copy_floor(ctx, x.storage())?;
    let small_floor = copy_floor(ctx, small.storage())?;
    // The texts `nansum` and `nanmax` generate for `f32` (see `reduce/nan.rs`).
    let nansum_k = ReductionKernel::<f32>::new("const float *x", "((x) != (x)) ? 0.0f : x", "a + b", "0.0f")?;
    let nanmax_k = ReductionKernel::<f32>::new(
        "const float *x",
        "x",
        "(a != a) ? b : ((b != b) ? a : (b > a ? b : a))",
        "__int_as_float(0x7fc00000)",
    )?;
    let mut total = DeviceArray::<f32, Ix0>::zeros(ctx, ())?;
    let bytes = 4 * n;
    let ours = [
        rate(ctx, bytes, || {
            nansum_k.reduce_into([KernelArg::input(&x)], &mut total)
        })?,
        rate(ctx, bytes, || {
            nanmax_k.reduce_into([KernelArg::input(&x)], &mut total)
        })?,
        rate(ctx, bytes, || m.nansum_axis(0))?,
        rate(ctx, bytes, || m.nansum_axis(1))?,
        rate(ctx, bytes, || m.nanmean_axis(1))?,
        rate(ctx, bytes, || m.nanmax_axis(1))?,
        rate(ctx, bytes, || m.nanargmax_axis(1))?,
        rate(ctx, 9 * n, || isclose(&x, &y, 1e-5f32, 1e-8f32, false))?,
        rate(ctx, 8 * n, || nan_to_num(&x, 0.0f32, None, None))?,
        rate(ctx, 4 << 20, || {
            nansum_k.reduce_into([KernelArg::input(&small)], &mut total)
        })?,
    ];
    let mut rows: Vec<Row> = FIGURES
        .iter()
        .zip(&ours)
        .enumerate()
        .map(|(k, (&figure, &o))| Row {
            figure,
            raw: "cuMemcpyDtoD of the same floats",
            ours: o,
            theirs: if k == FIGURES.len() - 1 {
                small_floor
            } else {
                floor
            },
            unit: "GB/s",
            higher_is_better: true,
            // The small one's target is of times, the next row (see the `reduce` section's).
            target: if k == FIGURES.len() - 1 {
                ""
            } else {
                ">= 0.85x copy bandwidth"
            },
            rounds: Vec::new(),
        })
        .collect();
    let small_bytes = 4.0 * small.len() as f64;
    rows.push(crate::reduce::time_row(
        "nansum of 2^20 floats, all axes, against a copy of them (time, us)",
        "cuMemcpyDtoD of the same floats",
        small_bytes / ours[FIGURES.len() - 1] / 1e3,
        2.0 * small_bytes / small_floor / 1e3,
    ));
    match cupy() {
        Some(c) => {
            for ((&figure, &o), theirs) in FIGURES.iter().zip(&ours).zip(c) {
                println!("nanred vs CuPy: {figure}: ours {o:.1} GB/s, CuPy {theirs:.1} GB/s");
                rows.push(Row::cupy(
                    figure,
                    "CuPy (subprocess), same operation",
                    o,
                    theirs,
                    "GB/s",
                ));
            }
        }
        None => println!("nanred: CuPy rows skipped: `python3 -c \"import cupy\"` failed here"),
    }
    Ok(rows)
}
