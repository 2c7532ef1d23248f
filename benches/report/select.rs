//! Compaction, counting into bins and random integers (`select` section), on 2^26 elements:
//! `count_nonzero` and `flatnonzero` of `f32` half zeros, `a[mask]` (`masked`) with a mask half
//! true, `bincount` of `i32` in `0..1000`, `histogram` of `f32` into 100 bins of a given range,
//! and `randint` into `i32`. Each row is GB/s of the bytes that must move (the input read once,
//! the output written once) next to `cuMemcpyDtoD` of 2^26 floats in the same run, best of
//! [`ROUNDS`]; and, where CuPy is importable, the same operation through CuPy.
//!
//! The compactions read their mask twice (a count sizes the result before it is written, and
//! the host waits for it: CuPy's do the same); `bincount` of values below 1024 reads its input
//! once (the counts and the values' range in one pass; the host then waits for the range). The
//! rows count the bytes once, so that the ratio to the copy is what a user sees.

use gpu_runtime::gpuarray::{Bins, Bool, DeviceArray};
use gpu_runtime::ndarray::Ix1;
use gpu_runtime::Context;

use crate::gpu_timer::{copy_floor, rate, ROUNDS};
use crate::table::Row;

/// Elements of every row.
const N: usize = 1 << 26;

/// The rows' operations through CuPy in a subprocess, as GB/s of the same bytes, if CuPy is
/// importable (`count` of them, one a row).
fn cupy(count: usize) -> Option<Vec<f64>> {
    let body = format!(
        r#"n = {N}
x = cp.random.randint(0, 2, n, dtype=cp.int32).astype(cp.float32)
m = cp.random.randint(0, 2, n, dtype=cp.int32).astype(cp.bool_)
v = cp.random.randint(0, 1000, n, dtype=cp.int32)
u = cp.random.random(n, dtype=cp.float32)
c = int(cp.count_nonzero(x)); k = int(cp.count_nonzero(m))
out = [4 * n / t(lambda: cp.count_nonzero(x)) / 1e9,
       (4 * n + 8 * c) / t(lambda: cp.flatnonzero(x)) / 1e9,
       (5 * n + 4 * k) / t(lambda: u[m]) / 1e9,
       4 * n / t(lambda: cp.bincount(v)) / 1e9,
       4 * n / t(lambda: cp.histogram(u, 100, range=(0.0, 1.0))) / 1e9,
       4 * n / t(lambda: cp.random.randint(0, 1000, n, dtype=cp.int32)) / 1e9]
print(*out)
"#
    );
    crate::cupy::timed_figures(ROUNDS, &body, count)
}

pub fn rows(ctx: &Context) -> Result<Vec<Row>, Box<dyn std::error::Error>> {
    let x = DeviceArray::<i32, Ix1>::randint(ctx, N, 0, 2, 1)?.astype::<f32>()?;
    let m = DeviceArray::<i32, Ix1>::randint(ctx, N, 0, 2, 2)?.astype::<Bool>()?;
    let v = DeviceArray::<i32, Ix1>::randint(ctx, N, 0, 1000, 3)?;
    let mut u = DeviceArray::<f32, Ix1>::empty(ctx, N)?;
    u.fill_uniform(4)?;
    let (c, k) = (x.count_nonzero()?, m.count_nonzero()?);
    let floor = copy_floor(ctx, x.storage())?;
    let ours = [
        rate(ctx, 4 * N, || x.count_nonzero())?,
        rate(ctx, 4 * N + 8 * c, || x.flatnonzero())?,
        rate(ctx, 5 * N + 4 * k, || u.masked(&m))?,
        rate(ctx, 4 * N, || v.bincount(0))?,
        rate(ctx, 4 * N, || {
            u.histogram(Bins::Count {
                bins: 100,
                range: Some((0.0, 1.0)),
            })
        })?,
        rate(ctx, 4 * N, || {
            DeviceArray::<i32, Ix1>::randint(ctx, N, 0, 1000, 5)
        })?,
    ];
    let figures = [
        "count_nonzero of 2^26 f32, half zeros (bytes read)",
        "flatnonzero of 2^26 f32, half zeros (bytes read + i64 indices written)",
        "a[mask] (masked) of 2^26 f32, mask half true (bytes read + written)",
        "bincount of 2^26 i32 in 0..1000 (bytes read)",
        "histogram of 2^26 f32, 100 bins of a given range (bytes read)",
        "randint of 2^26 i32 in 0..1000 (bytes written)",
    ];
    let mut rows: Vec<Row> = figures
        .iter()
        .zip(&ours)
        .map(|(&figure, &o)| Row {
            figure,
            raw: "cuMemcpyDtoD of 2^26 floats",
            ours: o,
            theirs: floor,
            unit: "GB/s",
            higher_is_better: true,
            target: ">= 0.85x copy bandwidth",
            rounds: Vec::new(),
        })
        .collect();
    match cupy(figures.len()) {
        Some(theirs) => {
            for ((&figure, &o), t) in figures.iter().zip(&ours).zip(theirs) {
                println!("select vs CuPy: {figure}: ours {o:.1} GB/s, CuPy {t:.1} GB/s");
                rows.push(Row::cupy(
                    figure,
                    "CuPy (subprocess), same operation",
                    o,
                    t,
                    "GB/s",
                ));
            }
        }
        None => println!("select: CuPy rows skipped: `python3 -c \"import cupy\"` failed here"),
    }
    Ok(rows)
}
