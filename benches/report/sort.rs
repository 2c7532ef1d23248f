//! Sorting (`sort` section): `sort` and `argsort` of 2^26 random `f32`, and `unique` of 2^26
//! `i32` of which 1/16 are distinct, each the best of [`ROUNDS`] in milliseconds, next to the
//! same operation through CuPy (CUB's radix sort) in a subprocess in the same run, when CuPy
//! is importable; the issue's targets are CuPy's times on an H200 (1.86 ms, 3.15 ms, 3.8 ms).
//! Each call allocates its result inside the timed region, as CuPy's does; `unique` waits for
//! its count of values (both do).

use gpu_runtime::gpuarray::DeviceArray;
use gpu_runtime::ndarray::{Array1, Ix1};
use gpu_runtime::Context;

use crate::gpu_timer::best_ms;
use crate::table::Row;

const ROUNDS: usize = 20;
const N: usize = 1 << 26;

/// The rows' operations through CuPy, in milliseconds, in the rows' order.
fn cupy() -> Option<Vec<f64>> {
    let body = format!(
        r#"n = {N}
x = cp.random.random(n, dtype=cp.float32)
u = cp.random.randint(0, n // 16, n, dtype=cp.int32)
print(*[1e3 * t(f) for f in (lambda: cp.sort(x), lambda: cp.argsort(x), lambda: cp.unique(u))])
"#
    );
    crate::cupy::timed_figures(ROUNDS, &body, 3)
}

pub fn rows(ctx: &Context) -> Result<Vec<Row>, Box<dyn std::error::Error>> {
    let mut x = DeviceArray::<f32, Ix1>::empty(ctx, N)?;
    x.fill_uniform(46)?;
    // 1/16 distinct: N / 16 values, scattered by a multiplicative hash.
    let distinct = (N / 16) as u64;
    let host: Vec<i32> = (0..N as u64)
        .map(|i| ((i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 20) % distinct) as i32)
        .collect();
    let u = DeviceArray::from_ndarray(ctx, &Array1::from(host))?;
    let ours = [
        best_ms(ctx, ROUNDS, || x.sort())?,
        best_ms(ctx, ROUNDS, || x.argsort())?,
        best_ms(ctx, ROUNDS, || u.unique())?,
    ];
    let figures = [
        "sort of 2^26 random f32 (ms, best of 20)",
        "argsort of 2^26 random f32 (ms, best of 20)",
        "unique of 2^26 i32, 1/16 distinct (ms, best of 20)",
    ];
    let targets = [
        "<= CuPy (1.86 ms on an H200)",
        "<= CuPy (3.15 ms on an H200)",
        "<= CuPy (3.8 ms on an H200)",
    ];
    let mut rows = Vec::new();
    match cupy() {
        Some(c) => {
            for (((figure, target), o), theirs) in figures.into_iter().zip(targets).zip(ours).zip(c) {
                println!("sort vs CuPy: {figure}: ours {o:.3} ms, CuPy {theirs:.3} ms");
                rows.push(Row {
                    target,
                    ..Row::cupy(figure, "CuPy (subprocess), same operation", o, theirs, "ms")
                });
            }
        }
        None => {
            println!("sort: CuPy rows skipped: `python3 -c \"import cupy\"` failed here; ours only");
            for ((figure, target), o) in figures.into_iter().zip(targets).zip(ours) {
                println!("sort: {figure}: ours {o:.3} ms (target {target})");
            }
        }
    }
    Ok(rows)
}
