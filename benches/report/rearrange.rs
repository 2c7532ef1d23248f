//! Copies that move or repeat elements, and the triangles (`rearrange` section), on 2^26 `f32`
//! as 8192 x 8192 (or half of it, repeated to that size): `roll` along the first axis (two
//! contiguous pieces) and along the last (two strided ones), `tile` and `repeat` to twice the
//! size, `tril`, and `isin` of `i32` against 1000 values. Each row is GB/s of the bytes that
//! must move (the input read once, the output written once) next to `cuMemcpyDtoD` of 2^26
//! floats in the same run, best of [`ROUNDS`]; and, where CuPy is importable, the same
//! operation through CuPy.

use gpu_runtime::gpuarray::DeviceArray;
use gpu_runtime::ndarray::{Ix1, Ix2};
use gpu_runtime::Context;

use crate::gpu_timer::{copy_floor, rate, ROUNDS};
use crate::table::Row;

/// Elements of every result.
const N: usize = 1 << 26;
/// The side of the square.
const SIDE: usize = 1 << 13;

/// The rows' operations through CuPy in a subprocess, as GB/s of the same bytes, if CuPy is
/// importable (`count` of them, one a row).
fn cupy(count: usize) -> Option<Vec<f64>> {
    let body = format!(
        r#"n, side = {N}, {SIDE}
x = cp.random.random((side, side), dtype=cp.float32)
h = cp.random.random((side // 2, side), dtype=cp.float32)
w = cp.random.random((side, side // 2), dtype=cp.float32)
v = cp.random.randint(0, 100000, n, dtype=cp.int32)
test = cp.random.randint(0, 100000, 1000, dtype=cp.int32)
out = [8 * n / t(lambda: cp.roll(x, 1000, axis=0)) / 1e9,
       8 * n / t(lambda: cp.roll(x, 1000, axis=1)) / 1e9,
       6 * n / t(lambda: cp.tile(h, (2, 1))) / 1e9,
       6 * n / t(lambda: cp.repeat(w, 2, axis=1)) / 1e9,
       8 * n / t(lambda: cp.tril(x)) / 1e9,
       5 * n / t(lambda: cp.isin(v, test)) / 1e9]
print(*out)
"#
    );
    crate::cupy::timed_figures(ROUNDS, &body, count)
}

pub fn rows(ctx: &Context) -> Result<Vec<Row>, Box<dyn std::error::Error>> {
    let uniform = |shape: (usize, usize), seed: u64| -> gpu_runtime::Result<DeviceArray<f32, Ix2>> {
        let mut a = DeviceArray::<f32, Ix2>::empty(ctx, shape)?;
        a.fill_uniform(seed)?;
        Ok(a)
    };
    let x = uniform((SIDE, SIDE), 1)?;
    let h = uniform((SIDE / 2, SIDE), 2)?;
    let w = uniform((SIDE, SIDE / 2), 3)?;
    let v = DeviceArray::<i32, Ix1>::randint(ctx, N, 0, 100_000, 4)?;
    let test = DeviceArray::<i32, Ix1>::randint(ctx, 1000, 0, 100_000, 5)?;
    let floor = copy_floor(ctx, x.storage())?;
    let ours = [
        rate(ctx, 8 * N, || x.roll(1000, Some(0)))?,
        rate(ctx, 8 * N, || x.roll(1000, Some(1)))?,
        rate(ctx, 6 * N, || h.tile(&[2, 1]))?,
        rate(ctx, 6 * N, || w.repeat(2, Some(1)))?,
        rate(ctx, 8 * N, || x.tril(0))?,
        rate(ctx, 5 * N, || v.isin(&test, false))?,
    ];
    let figures = [
        "roll of 8192 x 8192 f32 along axis 0 (bytes read + written)",
        "roll of 8192 x 8192 f32 along axis 1 (bytes read + written)",
        "tile of 4096 x 8192 f32 by (2, 1) (bytes read + written)",
        "repeat of 8192 x 4096 f32, 2 along axis 1 (bytes read + written)",
        "tril of 8192 x 8192 f32 (bytes read + written)",
        "isin of 2^26 i32 in 1000 values (bytes read + bools written)",
    ];
    // The copies and the elementwise `tril` have the copy's target; `isin` searches (a sort of
    // the test values, a binary search per element), for which no target was set.
    let targets = [
        ">= 0.85x copy bandwidth",
        ">= 0.85x copy bandwidth",
        ">= 0.85x copy bandwidth",
        ">= 0.85x copy bandwidth",
        ">= 0.85x copy bandwidth",
        "",
    ];
    let mut rows: Vec<Row> = figures
        .iter()
        .zip(&ours)
        .zip(targets)
        .map(|((&figure, &o), target)| Row {
            figure,
            raw: "cuMemcpyDtoD of 2^26 floats",
            ours: o,
            theirs: floor,
            unit: "GB/s",
            higher_is_better: true,
            target,
            rounds: Vec::new(),
        })
        .collect();
    match cupy(figures.len()) {
        Some(theirs) => {
            for ((&figure, &o), t) in figures.iter().zip(&ours).zip(theirs) {
                println!("rearrange vs CuPy: {figure}: ours {o:.1} GB/s, CuPy {t:.1} GB/s");
                rows.push(Row::cupy(
                    figure,
                    "CuPy (subprocess), same operation",
                    o,
                    t,
                    "GB/s",
                ));
            }
        }
        None => println!("rearrange: CuPy rows skipped: `python3 -c \"import cupy\"` failed here"),
    }
    Ok(rows)
}
