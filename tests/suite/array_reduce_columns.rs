//! Column reductions (along an axis whose lanes are adjacent in memory) on a GPU against the
//! host, on random data, through both paths of the column kernel: four adjacent lanes per
//! thread with one vector load per row (the lanes' axis of unit stride, a multiple of four
//! long, aligned) and one lane per thread (lane counts of 4k + 1 to 4k + 3, a view from column
//! 1, a view from column 4, which is aligned again); rows that are not a multiple of the chunk;
//! 3-d arrays reduced along their first and middle axes; `i8`, `i32`, `f64` and `f32`; a
//! two-array `ReductionKernel` (a dot product down the columns); argmax's first index among
//! ties and first NaN; and the bench's 8192 x 8192.

use gpu_runtime::gpuarray::{DeviceArray, DeviceArrayView, KernelArg, ReductionKernel};
use gpu_runtime::ndarray::{s, Array2, Array3, ArrayD, Axis, Dimension};
use gpu_runtime::Context;
use gpu_suite::Rng;

/// Values on a grid of 1/8 (sums exact in f32 for these sizes, ties common), with NaN and
/// infinities at a few places when `special`.
fn matrix(rng: &mut Rng, rows: usize, cols: usize, special: bool) -> Array2<f32> {
    let mut a = Array2::from_shape_fn((rows, cols), |_| (rng.f32() * 64.0).round() / 8.0);
    if special && rows * cols > 0 {
        for v in [f32::NAN, f32::INFINITY, f32::NEG_INFINITY, f32::NAN] {
            let k = (rng.next_u64() as usize) % (rows * cols);
            a[(k / cols, k % cols)] = v;
        }
    }
    a
}

/// NumPy's argmax of a lane: the first NaN, else the first of the largest.
fn host_argmax(lane: &[f32]) -> i64 {
    if let Some(k) = lane.iter().position(|x| x.is_nan()) {
        return k as i64;
    }
    let mut best = 0;
    for (k, &x) in lane.iter().enumerate() {
        if x > lane[best] {
            best = k;
        }
    }
    best as i64
}

/// NumPy's max of a lane: NaN if any.
fn host_max(lane: &[f32]) -> f32 {
    lane.iter().copied().fold(f32::NEG_INFINITY, |a, b| {
        if a.is_nan() || b.is_nan() {
            f32::NAN
        } else {
            a.max(b)
        }
    })
}

fn same(what: &str, got: &[f32], want: &[f32]) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    for (k, (&g, &w)) in got.iter().zip(want).enumerate() {
        assert!(
            (g.is_nan() && w.is_nan()) || g == w,
            "{what}, lane {k}: {g} vs {w}"
        );
    }
}

/// `sum`, `max` and `argmax` along `axis` of `dev` against the host's `host` (its lanes), exactly:
/// the values are on a grid of 1/8, so every partial sum is exact.
fn check_f32<D: Dimension>(
    what: &str,
    host: &ArrayD<f32>,
    dev: &DeviceArrayView<'_, f32, D>,
    axis: usize,
) -> gpu_runtime::Result<()> {
    let lanes: Vec<Vec<f32>> = host.lanes(Axis(axis)).into_iter().map(|l| l.to_vec()).collect();
    let sums: Vec<f32> = lanes.iter().map(|l| l.iter().sum()).collect();
    same(&format!("{what} sum"), &dev.sum_axis(axis)?.to_vec()?, &sums);
    let maxes: Vec<f32> = lanes.iter().map(|l| host_max(l)).collect();
    same(&format!("{what} max"), &dev.max_axis(axis)?.to_vec()?, &maxes);
    let args: Vec<i64> = lanes.iter().map(|l| host_argmax(l)).collect();
    assert_eq!(dev.argmax_axis(axis)?.to_vec()?, args, "{what} argmax");
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn f32_columns_through_both_paths() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(8192);
    // Lane counts 4k and 4k + 1..3; rows below, at and past a multiple of the chunk (at least
    // 32 rows, and a few hundred chunks at most), and rows short of the column path (< 64).
    for (rows, cols) in [
        (64, 4),
        (65, 8),
        (100, 1024),
        (1000, 1028),
        (1000, 1029),
        (4097, 260),
        (5000, 7),
        (63, 1024),
        (12_345, 36),
    ] {
        for special in [false, true] {
            let h = matrix(&mut rng, rows, cols, special).into_dyn();
            let d = DeviceArray::from_ndarray(&ctx, &h)?;
            let what = format!("{rows}x{cols} special {special}");
            check_f32(&format!("{what} whole"), &h, &d.view(), 0)?;
            if cols > 4 {
                for from in [1usize, 4] {
                    let hv = h.slice(s![.., from..]).to_owned().into_dyn();
                    let dv = d.slice(s![.., from..])?;
                    check_f32(&format!("{what} from column {from}"), &hv, &dv, 0)?;
                }
            }
        }
    }
    Ok(())
}

/// 3-d arrays: along the first axis (lanes over the last two, adjacent along the last) and
/// along the middle one (lanes over the first and last), inner lengths on and off 4k.
#[test]
#[ignore = "needs a CUDA GPU"]
fn columns_of_3d_arrays() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(333);
    for (a, b, c) in [(70, 3, 8), (5, 80, 12), (5, 80, 13), (66, 2, 6)] {
        let h = Array3::from_shape_fn((a, b, c), |_| (rng.f32() * 64.0).round() / 8.0).into_dyn();
        let d = DeviceArray::from_ndarray(&ctx, &h)?;
        for axis in 0..2 {
            check_f32(&format!("{a}x{b}x{c} axis {axis}"), &h, &d.view(), axis)?;
        }
    }
    Ok(())
}

/// Other element widths: `i8` (4-byte vectors), `i32`, `f64` (32-byte vectors, two loads).
#[test]
#[ignore = "needs a CUDA GPU"]
fn columns_of_other_dtypes() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(77);
    for (rows, cols) in [(300, 64), (300, 66), (2049, 8)] {
        let h = Array2::from_shape_fn((rows, cols), |_| rng.next_u64() as i8);
        let d = DeviceArray::from_ndarray(&ctx, &h)?;
        let want: Vec<i8> = h
            .columns()
            .into_iter()
            .map(|c| c.iter().fold(0i8, |a, &b| a.wrapping_add(b)))
            .collect();
        assert_eq!(d.sum_axis(0)?.to_vec()?, want, "i8 {rows}x{cols}");
        let want: Vec<i8> = h
            .columns()
            .into_iter()
            .map(|c| *c.iter().max().unwrap())
            .collect();
        assert_eq!(d.max_axis(0)?.to_vec()?, want, "i8 max {rows}x{cols}");
        let h = Array2::from_shape_fn((rows, cols), |_| rng.next_u64() as i32);
        let d = DeviceArray::from_ndarray(&ctx, &h)?;
        let want: Vec<i32> = h
            .columns()
            .into_iter()
            .map(|c| c.iter().fold(0i32, |a, &b| a.wrapping_add(b)))
            .collect();
        assert_eq!(d.sum_axis(0)?.to_vec()?, want, "i32 {rows}x{cols}");
        let h = Array2::from_shape_fn((rows, cols), |_| rng.f64() * 2.0 - 1.0);
        let d = DeviceArray::from_ndarray(&ctx, &h)?;
        let got = d.sum_axis(0)?.to_vec()?;
        for (k, c) in h.columns().into_iter().enumerate() {
            let want: f64 = c.iter().sum();
            let mag: f64 = c.iter().map(|x| x.abs()).sum();
            assert!(
                (got[k] - want).abs() <= 1e-13 * (1.0 + mag),
                "f64 {rows}x{cols} lane {k}: {} vs {want}",
                got[k]
            );
        }
    }
    Ok(())
}

/// A reduction of two arrays down the columns: both take the vector path, or (one of them a
/// view from column 1) both the scalar one.
#[test]
#[ignore = "needs a CUDA GPU"]
fn a_two_array_kernel_down_the_columns() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(5);
    let dot = ReductionKernel::<f32>::new("const float *x, const float *y", "x * y", "a + b", "0.0f")?;
    let (rows, cols) = (700, 513);
    let x = matrix(&mut rng, rows, cols, false);
    let y = matrix(&mut rng, rows, cols, false);
    let (dx, dy) = (
        DeviceArray::from_ndarray(&ctx, &x)?,
        DeviceArray::from_ndarray(&ctx, &y)?,
    );
    for (from, to) in [(0, 512), (1, 513)] {
        let (hx, hy) = (x.slice(s![.., from..to]), y.slice(s![.., from..to]));
        let got = dot
            .reduce_axis(
                [
                    KernelArg::input(&dx.slice(s![.., from..to])?),
                    KernelArg::input(&dy.slice(s![.., from..to])?),
                ],
                0,
            )?
            .to_vec()?;
        assert_eq!(got.len(), to - from, "columns {from}..{to}: lanes");
        for (k, &g) in got.iter().enumerate() {
            let want: f64 = hx
                .column(k)
                .iter()
                .zip(hy.column(k))
                .map(|(&a, &b)| f64::from(a) * f64::from(b))
                .sum();
            let mag: f64 = hx
                .column(k)
                .iter()
                .zip(hy.column(k))
                .map(|(&a, &b)| f64::from((a * b).abs()))
                .sum();
            assert!(
                (f64::from(g) - want).abs() <= 1e-5 * (1.0 + mag),
                "columns {from}..{to}, lane {k}: {g} vs {want}"
            );
        }
    }
    Ok(())
}

/// The bench's matrix: 8192 x 8192 f32, with ties and a NaN.
#[test]
#[ignore = "needs a CUDA GPU"]
fn the_bench_matrix() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(1 << 13);
    let h = matrix(&mut rng, 8192, 8192, true).into_dyn();
    let d = DeviceArray::from_ndarray(&ctx, &h)?;
    check_f32("8192x8192", &h, &d.view(), 0)
}
