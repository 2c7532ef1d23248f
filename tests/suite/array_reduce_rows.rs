//! Reductions along the rows and the columns of matrices on a GPU against the host, on random
//! data, through each path the launch picks by layout: rows whose length is a multiple of four
//! and that start aligned (four elements per load), rows that are not (lengths of 4k + 1 to
//! 4k + 3, a view from column 1), stepped and reversed rows, transposed matrices, long
//! columns (chunks of rows, then their partials), one-element lanes, empty matrices; `max` and
//! `argmax` (the first index among ties, the first NaN), and `var`/`std` of lanes that hold
//! NaN or inf (NaN, as NumPy's).

use gpu_runtime::gpuarray::DeviceArray;
use gpu_runtime::ndarray::{s, Array2, ArrayView1, ArrayView2, Axis};
use gpu_runtime::Context;
use gpu_suite::Rng;

fn close(what: &str, got: f64, want: f64, tol: f64) {
    let ok = (got.is_nan() && want.is_nan()) || got == want || (got - want).abs() <= tol * (1.0 + want.abs());
    assert!(ok, "{what}: {got} vs {want}");
}

/// Random values on a grid of 1/8 so that ties are common; NaN, inf and -inf at a few places
/// when `special`.
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
fn host_argmax(v: ArrayView1<'_, f32>) -> i64 {
    if let Some(k) = v.iter().position(|x| x.is_nan()) {
        return k as i64;
    }
    let mut best = 0;
    for (k, &x) in v.iter().enumerate() {
        if x > v[best] {
            best = k;
        }
    }
    best as i64
}

/// NumPy's var of a lane (ddof 0), in f64: NaN when any element is NaN or inf.
fn host_var(v: ArrayView1<'_, f32>) -> f64 {
    let n = v.len() as f64;
    let mean = v.iter().map(|&x| x as f64).sum::<f64>() / n;
    v.iter()
        .map(|&x| (x as f64 - mean) * (x as f64 - mean))
        .sum::<f64>()
        / n
}

/// Sums, maxima, argmaxes, variances and standard deviations along both axes of `dev`,
/// against the same of `host` (the same view's elements).
fn check(what: &str, host: ArrayView2<'_, f32>, dev: &DeviceArrayView2<'_>) -> gpu_runtime::Result<()> {
    for axis in 0..2 {
        let lanes: Vec<ArrayView1<'_, f32>> = host.axis_iter(Axis(1 - axis)).collect();
        if host.len_of(Axis(axis)) == 0 {
            continue;
        }
        let sums = dev.sum_axis(axis)?.to_vec()?;
        let maxes = dev.max_axis(axis)?.to_vec()?;
        let args = dev.argmax_axis(axis)?.to_vec()?;
        let vars = dev.var_axis(axis, 0)?.to_vec()?;
        let stds = dev.std_axis(axis, 0)?.to_vec()?;
        assert_eq!(sums.len(), lanes.len(), "{what} axis {axis}: lanes");
        for (k, lane) in lanes.iter().enumerate() {
            let w = format!("{what} axis {axis} lane {k}");
            let sum: f64 = lane.iter().map(|&x| x as f64).sum();
            close(&format!("{w} sum"), sums[k] as f64, sum, 1e-5);
            let max = lane.iter().copied().fold(f32::NEG_INFINITY, |a, b| {
                if a.is_nan() || b.is_nan() {
                    f32::NAN
                } else {
                    a.max(b)
                }
            });
            close(&format!("{w} max"), maxes[k] as f64, max as f64, 0.0);
            assert_eq!(args[k], host_argmax(lane.view()), "{w} argmax");
            let var = host_var(lane.view());
            // In `f32`, NumPy's type for `f32`: accumulated in `f64`, rounded once.
            close(&format!("{w} var"), vars[k] as f64, var, 1e-6);
            close(&format!("{w} std"), stds[k] as f64, var.sqrt(), 1e-6);
        }
    }
    Ok(())
}

type DeviceArrayView2<'a> = gpu_runtime::gpuarray::DeviceArrayView<'a, f32, gpu_runtime::ndarray::Ix2>;

/// One matrix in every view: whole, from column 1 (lanes that start unaligned), every other
/// column, columns reversed, transposed.
fn every_view(ctx: &Context, what: &str, h: &Array2<f32>) -> gpu_runtime::Result<()> {
    let d = DeviceArray::from_ndarray(ctx, h)?;
    check(&format!("{what} whole"), h.view(), &d.view())?;
    check(&format!("{what} transposed"), h.t(), &d.t())?;
    if h.ncols() > 1 {
        check(
            &format!("{what} from column 1"),
            h.slice(s![.., 1..]),
            &d.slice(s![.., 1..])?,
        )?;
        check(
            &format!("{what} stepped"),
            h.slice(s![.., ..;2]),
            &d.slice(s![.., ..;2])?,
        )?;
        check(
            &format!("{what} reversed"),
            h.slice(s![.., ..;-1]),
            &d.slice(s![.., ..;-1])?,
        )?;
    }
    Ok(())
}

/// Rows of lengths on and off multiples of four, long enough for a block per row, a few or
/// many of them; long columns.
#[test]
#[ignore = "needs a CUDA GPU"]
fn rows_and_columns_of_every_alignment() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(21);
    for (rows, cols) in [
        (3, 4096),
        (300, 1024),
        (300, 1027),
        (7, 1025),
        (2500, 130),
        (64, 66),
        (5000, 96),
        (2, 3000),
    ] {
        for special in [false, true] {
            let h = matrix(&mut rng, rows, cols, special);
            every_view(&ctx, &format!("{rows}x{cols} special {special}"), &h)?;
        }
    }
    Ok(())
}

/// Lanes of one element (NaN, inf, finite), empty matrices, and a lane of NaN only.
#[test]
#[ignore = "needs a CUDA GPU"]
fn one_element_lanes_and_empty_matrices() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let h = Array2::from_shape_vec((4, 1), vec![f32::NAN, f32::INFINITY, 1.5, f32::NEG_INFINITY]).unwrap();
    every_view(&ctx, "4x1", &h)?;
    every_view(&ctx, "1x4", &h.t().to_owned())?;
    let h = Array2::from_elem((3, 200), f32::NAN);
    every_view(&ctx, "NaN only", &h)?;
    for (rows, cols) in [(0, 5), (5, 0), (0, 0)] {
        let h = Array2::<f32>::zeros((rows, cols));
        every_view(&ctx, &format!("{rows}x{cols}"), &h)?;
    }
    Ok(())
}
