//! Reductions and scans (`reduce` section): `sum`, `max` and `argmax` of 2^26 floats over all
//! axes and along each axis of an 8192 x 8192 matrix (axis 0: columns, the strided case; axis
//! 1: rows), `cumsum` of 2^26 floats, and `sum` at 2^20 and 2^28 to show how the cost grows.
//! Each row is GB/s of the bytes that must move (4 per element read; 8 for the scan, read and
//! written) next to `cuMemcpyDtoD` of the same elements in the same run (its read and write
//! bytes), best of [`ROUNDS`]; and, where CuPy is importable, the same operation through CuPy.
//!
//! Over all axes the result stays on the device (as CuPy's 0-d result): the rows call
//! `sum_into`, `max_into` and `argmax_into` (NumPy's `out=`) with a 0-d array, the kernels
//! `x.sum()`, `x.max()` and `x.argmax()` run, without the read back to the host. Along an axis
//! they call `sum_axis`, `max_axis` and `argmax_axis`; results are dropped after the timing
//! ends.
//!
//! `cumsum()` allocates its output inside the timed region; a row in microseconds times that
//! allocation alone next to the whole call, its ratio the allocation's share.

use std::time::Duration;

use gpu_runtime::gpuarray::DeviceArray;
use gpu_runtime::ndarray::{Ix0, Ix1};
use gpu_runtime::Context;

use crate::best;
use crate::gpu_timer::{best_time, copy_floor, gbs, rate, timed, timed_copies, ROUNDS};
use crate::table::Row;

/// Rows and columns of the matrix: 2^26 floats.
const SIDE: usize = 8192;

/// The operations of the rows through CuPy in a subprocess, as GB/s in the rows' order (`count`
/// of them), if CuPy is importable.
fn cupy(count: usize) -> Option<Vec<f64>> {
    let body = format!(
        r#"n = {SIDE} * {SIDE}
x = cp.random.random(n, dtype=cp.float32); m = x.reshape({SIDE}, {SIDE})
out = []
for f in [lambda: x.sum(), lambda: m.sum(axis=0), lambda: m.sum(axis=1),
          lambda: x.max(), lambda: m.max(axis=0), lambda: m.max(axis=1),
          lambda: x.argmax(), lambda: m.argmax(axis=0), lambda: m.argmax(axis=1)]:
    out.append(4 * n / t(f) / 1e9)
out.append(8 * n / t(lambda: cp.cumsum(x)) / 1e9)
o = cp.empty_like(x)
out.append(8 * n / t(lambda: cp.cumsum(x, out=o)) / 1e9)
for k in (1 << 20, 1 << 28):
    y = cp.random.random(k, dtype=cp.float32)
    out.append(4 * k / t(lambda: y.sum()) / 1e9)
y = cp.random.random(1 << 20, dtype=cp.float32)
out.append(4 * 20 * (1 << 20) / t(lambda: [y.sum() for _ in range(20)]) / 1e9)
print(*out)
"#
    );
    crate::cupy::timed_figures(ROUNDS, &body, count)
}

/// A small sum's time next to a copy's of the same floats, with issue 46's target for it: at
/// least 0.6x the copy's speed, so at most 1/0.6 of its time.
pub(crate) fn time_row(figure: &'static str, raw: &'static str, sum_us: f64, copy_us: f64) -> Row {
    Row {
        figure,
        raw,
        ours: sum_us,
        theirs: copy_us,
        unit: "us",
        higher_is_better: false,
        target: "<= 1.67x the copy's time (>= 0.6x its speed)",
        rounds: Vec::new(),
    }
}

fn row(figure: &'static str, ours: f64, floor: f64) -> Row {
    Row {
        figure,
        raw: "cuMemcpyDtoD of the same floats",
        ours,
        theirs: floor,
        unit: "GB/s",
        higher_is_better: true,
        target: ">= 0.85x copy bandwidth",
        rounds: Vec::new(),
    }
}

pub fn rows(ctx: &Context) -> Result<Vec<Row>, Box<dyn std::error::Error>> {
    let n = SIDE * SIDE;
    let mut x = DeviceArray::<f32, Ix1>::empty(ctx, n)?;
    x.fill_uniform(3)?;
    let m = x.view().reshape((SIDE, SIDE))?;
    let floor = copy_floor(ctx, x.storage())?;
    let mut total = DeviceArray::<f32, Ix0>::zeros(ctx, ())?;
    let mut index = DeviceArray::<i64, Ix0>::zeros(ctx, ())?;
    let mut scanned = DeviceArray::<f32, Ix1>::zeros(ctx, n)?;
    let bytes = 4 * n;
    let ours = vec![
        rate(ctx, bytes, || x.sum_into(&mut total))?,
        rate(ctx, bytes, || m.sum_axis(0))?,
        rate(ctx, bytes, || m.sum_axis(1))?,
        rate(ctx, bytes, || x.max_into(&mut total))?,
        rate(ctx, bytes, || m.max_axis(0))?,
        rate(ctx, bytes, || m.max_axis(1))?,
        rate(ctx, bytes, || x.argmax_into(&mut index))?,
        rate(ctx, bytes, || m.argmax_axis(0))?,
        rate(ctx, bytes, || m.argmax_axis(1))?,
        rate(ctx, 2 * bytes, || x.cumsum())?,
        rate(ctx, 2 * bytes, || x.cumsum_into(&mut scanned, false))?,
    ];
    let figures = [
        "sum of 2^26 floats, all axes (bytes read)",
        "sum along axis 0 of 8192 x 8192 floats (columns)",
        "sum along axis 1 of 8192 x 8192 floats (rows)",
        "max of 2^26 floats, all axes (bytes read)",
        "max along axis 0 of 8192 x 8192 floats (columns)",
        "max along axis 1 of 8192 x 8192 floats (rows)",
        "argmax of 2^26 floats, all axes (bytes read)",
        "argmax along axis 0 of 8192 x 8192 floats (columns)",
        "argmax along axis 1 of 8192 x 8192 floats (rows)",
        "cumsum of 2^26 floats (bytes read + written)",
        "cumsum_into an existing array (NumPy's out=), 2^26 floats (bytes read + written)",
    ];
    let mut rows: Vec<Row> = figures
        .iter()
        .zip(&ours)
        .map(|(&f, &o)| row(f, o, floor))
        .collect();
    // The cumsum row times the whole call, the allocation of its 2^26-float output included
    // (the event timing spans the host's cuMemAlloc too): this row is that allocation alone,
    // against the whole call, so that its share (the ratio) is not hidden in the scan's.
    let alloc = best_time(ctx, || DeviceArray::<f32, Ix1>::empty(ctx, n))?;
    let scan_us = 2.0 * bytes as f64 / ours[9] / 1e3;
    rows.push(Row {
        figure: "cumsum's output allocation alone (DeviceArray::empty, 2^26 f32; inside the cumsum row)",
        raw: "the whole cumsum() call, same run",
        ours: alloc.as_secs_f64() * 1e6,
        theirs: scan_us,
        unit: "us",
        higher_is_better: false,
        target: "",
        rounds: Vec::new(),
    });
    // How the cost of a sum grows: 2^20 and 2^28 floats, each against its own copy.
    let mut sizes = Vec::new();
    for (k, figure) in [
        (1usize << 20, "sum of 2^20 floats, all axes (bytes read)"),
        (1 << 28, "sum of 2^28 floats, all axes (bytes read)"),
    ] {
        let mut y = DeviceArray::<f32, Ix1>::empty(ctx, k)?;
        y.fill_uniform(5)?;
        let floor = copy_floor(ctx, y.storage())?;
        let r = rate(ctx, 4 * k, || y.sum_into(&mut total))?;
        sizes.push(r);
        let mut rw = row(figure, r, floor);
        // The bandwidth row counts the sum's bytes read against the copy's bytes read and
        // written, a bar twice the copy's own time; issue 46's "0.6x of the copy" for a small
        // sum compares times ("a fixed cost of about 15 us per reduction where the copy takes
        // about 4 us": 0.27x), the row after this one. The large sum has no target of its own.
        rw.target = "";
        rows.push(rw);
        if k == 1 << 20 {
            rows.push(time_row(
                "sum of 2^20 floats, all axes, against a copy of them (time, us)",
                "cuMemcpyDtoD of the same floats",
                4.0 * k as f64 / r / 1e3,
                8.0 * k as f64 / floor / 1e3,
            ));
        }
    }
    // The same small sum queued 20 times back to back, against 20 copies likewise: what a sum
    // costs the GPU inside a program that keeps it busy, where one call alone also waits for
    // its launch to reach the GPU (an empty kernel timed alone this way already takes about
    // 4 us on an H200, more than half of the single copy's time).
    let queued = {
        const QUEUED: usize = 20;
        let k = 1usize << 20;
        let mut y = DeviceArray::<f32, Ix1>::empty(ctx, k)?;
        y.fill_uniform(6)?;
        let copy = ctx.alloc::<f32>(k)?;
        let mut copies = Vec::new();
        let mut sums = Vec::new();
        y.sum_into(&mut total)?;
        for _ in 0..ROUNDS {
            copies.push(timed_copies(ctx, &copy, y.storage(), QUEUED)?);
            sums.push(timed(ctx, || {
                for _ in 0..QUEUED {
                    y.sum_into(&mut total)?;
                }
                Ok(())
            })?);
        }
        let per = |d: Duration| d / QUEUED as u32;
        let mut rw = row(
            "sum of 2^20 floats, all axes, 20 queued back to back (bytes read per sum)",
            gbs(4 * k, per(best(&sums))),
            gbs(8 * k, per(best(&copies))),
        );
        rw.raw = "cuMemcpyDtoD of the same floats, 20 queued back to back";
        rw.target = "";
        let r = rw.ours;
        rows.push(rw);
        rows.push(time_row(
            "sum of 2^20 floats, all axes, 20 queued back to back, against 20 copies (time per sum, us)",
            "cuMemcpyDtoD of the same floats, 20 queued back to back",
            per(best(&sums)).as_secs_f64() * 1e6,
            per(best(&copies)).as_secs_f64() * 1e6,
        ));
        r
    };
    let all: Vec<f64> = ours.iter().chain(&sizes).chain([&queued]).copied().collect();
    let names: Vec<&'static str> = figures
        .iter()
        .copied()
        .chain([
            "sum of 2^20 floats, all axes (bytes read)",
            "sum of 2^28 floats, all axes (bytes read)",
            "sum of 2^20 floats, all axes, 20 queued back to back (bytes read per sum)",
        ])
        .collect();
    match cupy(names.len()) {
        Some(c) => {
            for ((figure, o), theirs) in names.into_iter().zip(all).zip(c) {
                println!("reduce vs CuPy: {figure}: ours {o:.1} GB/s, CuPy {theirs:.1} GB/s");
                rows.push(Row::cupy(
                    figure,
                    "CuPy (subprocess), same operation",
                    o,
                    theirs,
                    "GB/s",
                ));
            }
        }
        None => println!("reduce: CuPy rows skipped: `python3 -c \"import cupy\"` failed here"),
    }
    Ok(rows)
}
