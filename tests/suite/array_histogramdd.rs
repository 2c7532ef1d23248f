//! `histogramdd`, `histogram2d` (and their weighted and stream forms) on a GPU against NumPy
//! 2.4's `histogramdd` algorithm written on the host (edges from `_get_outer_edges` and
//! `linspace` in the data's type, bins by `searchsorted(side='right')` with the last edge
//! kept, outliers and NaN dropped, `f64` counts, weights summed, density over the total and
//! the bins' widths, `np.diff` of the edges in their own type), as CuPy's `TestHistogramdd`
//! and `TestHistogram2d`: random samples of `f64`, `f32`, `f16`, `i32`, `i64` and `u8`, one
//! bin count for all variables, a count for each, explicit edges, given ranges, weights of
//! ones and random ones, density; points on the last edge, NaN points, one variable against
//! `histogram`, a few results NumPy computed, and the refusals. And `mask_indices` against
//! `triu_indices`/`tril_indices`, `nonzero` and the host.

use gpu_runtime::gpuarray::{self, Bins, Bool, DeviceArray, Element};
use gpu_runtime::half::f16;
use gpu_runtime::ndarray::{arr2, Array1, Array2, Array3, Ix1};
use gpu_runtime::types::Complex64;
use gpu_runtime::{ArgumentError, ArrayShapeError, Context, Error, Stream};
use gpu_suite::Rng;

/// How NumPy computes the edges of a variable of an element type from its minimum and
/// maximum: `linspace` in `float64` (integers, and every given range), `float32` or `float16`.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Kind {
    F64,
    F32,
    F16,
}

/// An element type of the samples: its edge type and its values as `f64` (exact).
trait Point: Element {
    const EDGE_KIND: Kind;
    const INTEGER: bool;
    const LABEL: &'static str;
    fn make(v: f64) -> Self;
    fn get(self) -> f64;
}

macro_rules! point {
    ($t:ty, $kind:ident, $integer:expr, $make:expr, $get:expr) => {
        impl Point for $t {
            const EDGE_KIND: Kind = Kind::$kind;
            const INTEGER: bool = $integer;
            const LABEL: &'static str = stringify!($t);
            fn make(v: f64) -> Self {
                $make(v)
            }
            fn get(self) -> f64 {
                $get(self)
            }
        }
    };
}

point!(f64, F64, false, |v| v, |v| v);
point!(f32, F32, false, |v| v as f32, f64::from);
point!(f16, F16, false, f16::from_f64, |v: f16| v.to_f64());
point!(i32, F64, true, |v| v as i32, f64::from);
point!(i64, F64, true, |v| v as i64, |v| v as f64);
point!(u8, F64, true, |v| v as u8, f64::from);

/// NumPy's `linspace(start, stop, num)` computed in `kind` (`start` and `stop` already of
/// it): `delta = stop - start`, `step = delta / div`, `arange(num) * step + start`, each
/// operation rounded to `kind`, the last element `stop`.
fn np_linspace(start: f64, stop: f64, num: usize, kind: Kind) -> Vec<f64> {
    let div = num - 1;
    let mut y: Vec<f64> = match kind {
        Kind::F64 => {
            let delta = stop - start;
            let step = delta / div as f64;
            (0..num)
                .map(|i| {
                    if step == 0.0 {
                        i as f64 / div as f64 * delta + start
                    } else {
                        i as f64 * step + start
                    }
                })
                .collect()
        }
        Kind::F32 => {
            let (start, stop) = (start as f32, stop as f32);
            let delta = stop - start;
            let step = delta / div as f32;
            (0..num).map(|i| f64::from(i as f32 * step + start)).collect()
        }
        Kind::F16 => {
            let (start, stop) = (f16::from_f64(start), f16::from_f64(stop));
            let delta = stop - start;
            let step = delta / f16::from_f64(div as f64);
            (0..num)
                .map(|i| (f16::from_f64(i as f64) * step + start).to_f64())
                .collect()
        }
    };
    y[div] = stop;
    y
}

/// NumPy's edges of one variable (`col`, its points as `f64`, of element kind `kind`):
/// `_get_outer_edges` and `linspace` for a count, the edges as given else; and their type.
fn np_edges(col: &[f64], kind: Kind, bins: Bins<'_>) -> (Vec<f64>, Kind) {
    match bins {
        Bins::Edges(e) => (e.to_vec(), Kind::F64),
        Bins::Count { bins, range } => {
            // A given range is two Python floats: `float64` throughout.
            let (kind, (lo, hi)) = match range {
                Some(r) => (Kind::F64, r),
                None if col.is_empty() => (Kind::F64, (0.0, 1.0)),
                None => {
                    let lo = col.iter().copied().fold(f64::INFINITY, f64::min);
                    let hi = col.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                    (kind, (lo, hi))
                }
            };
            let (lo, hi) = if lo == hi {
                // `first_edge - 0.5` in the scalar's type (an integer's becomes `float64`).
                match kind {
                    Kind::F64 => (lo - 0.5, hi + 0.5),
                    Kind::F32 => (f64::from(lo as f32 - 0.5), f64::from(hi as f32 + 0.5)),
                    Kind::F16 => {
                        let half = f16::from_f64(0.5);
                        (
                            (f16::from_f64(lo) - half).to_f64(),
                            (f16::from_f64(hi) + half).to_f64(),
                        )
                    }
                }
            } else {
                (lo, hi)
            };
            (np_linspace(lo, hi, bins + 1, kind), kind)
        }
    }
}

/// NumPy's `histogramdd` of the variables `cols` over `edges`, in C order: each point's bin by
/// `searchsorted(edges, x, side='right')` (NaN past every edge), one less on the last edge,
/// outliers dropped; `weights` summed; with `density`, each bin over its widths in axis order
/// (`np.diff(edges)`, in the edges' type `kinds`: `float32` or `float16` edges give widths
/// rounded to that type), then over the total.
fn np_histogramdd(
    cols: &[Vec<f64>],
    edges: &[Vec<f64>],
    kinds: &[Kind],
    weights: Option<&[f64]>,
    density: bool,
) -> Vec<f64> {
    let dims: Vec<usize> = edges.iter().map(|e| e.len() - 1).collect();
    let mut hist = vec![0.0; dims.iter().product()];
    'points: for p in 0..cols[0].len() {
        let mut flat = 0;
        for (c, e) in cols.iter().zip(edges) {
            let x = c[p];
            let mut at = if x.is_nan() {
                e.len()
            } else {
                e.partition_point(|&v| v <= x)
            };
            if x == e[e.len() - 1] {
                at -= 1;
            }
            if at == 0 || at == e.len() {
                continue 'points;
            }
            flat = flat * (e.len() - 1) + at - 1;
        }
        hist[flat] += weights.map_or(1.0, |w| w[p]);
    }
    if density {
        let total: f64 = hist.iter().sum();
        for (flat, h) in hist.iter_mut().enumerate() {
            let mut rest = flat;
            let mut at = vec![0; dims.len()];
            for i in (0..dims.len()).rev() {
                at[i] = rest % dims[i];
                rest /= dims[i];
            }
            for (i, e) in edges.iter().enumerate() {
                let (a, b) = (e[at[i]], e[at[i] + 1]);
                *h /= match kinds[i] {
                    Kind::F64 => b - a,
                    Kind::F32 => f64::from(b as f32 - a as f32),
                    Kind::F16 => (f16::from_f64(b) - f16::from_f64(a)).to_f64(),
                };
            }
            *h /= total;
        }
    }
    hist
}

/// The bins of variable `i` among `bins` (one for all, or one each).
fn bins_of<'a>(bins: &[Bins<'a>], i: usize) -> Bins<'a> {
    bins[if bins.len() == 1 { 0 } else { i }]
}

/// NumPy's histogram of `cols` (of element kind `kind`): the counts and the edges.
fn np_histogram_of(
    cols: &[Vec<f64>],
    kind: Kind,
    bins: &[Bins<'_>],
    weights: Option<&[f64]>,
    density: bool,
) -> (Vec<f64>, Vec<Vec<f64>>) {
    let (edges, kinds): (Vec<Vec<f64>>, Vec<Kind>) = cols
        .iter()
        .enumerate()
        .map(|(i, c)| np_edges(c, kind, bins_of(bins, i)))
        .unzip();
    (np_histogramdd(cols, &edges, &kinds, weights, density), edges)
}

/// Compares a GPU histogram (shape, values, edges) with the host's: the edges and shape
/// exactly, the values exactly when `exact` (counts, sums of ones), else to 1e-12 relative.
fn check(
    what: &str,
    shape: &[usize],
    got: &[f64],
    got_edges: &[Vec<f64>],
    (want, want_edges): &(Vec<f64>, Vec<Vec<f64>>),
    exact: bool,
) {
    assert_eq!(
        got_edges.len(),
        want_edges.len(),
        "{what}: the number of edge arrays"
    );
    for (i, (g, w)) in got_edges.iter().zip(want_edges).enumerate() {
        assert_eq!(g, w, "{what}: the edges of variable {i}");
    }
    let dims: Vec<usize> = want_edges.iter().map(|e| e.len() - 1).collect();
    assert_eq!(shape, dims.as_slice(), "{what}: the shape");
    assert_eq!(got.len(), want.len(), "{what}: the number of bins");
    for (k, (&g, &w)) in got.iter().zip(want).enumerate() {
        let ok = g == w || (!exact && (g - w).abs() <= 1e-12 * w.abs());
        assert!(ok, "{what}: bin {k} (flat, C order) is {g}, NumPy's {w}");
    }
}

fn edges_to_host(edges: &[DeviceArray<f64, Ix1>]) -> gpu_runtime::Result<Vec<Vec<f64>>> {
    edges.iter().map(|e| e.to_vec()).collect()
}

/// `0, step, 2 step, ...` below `stop` (NumPy's `arange(0, stop, step)`).
fn arange(stop: f64, step: f64) -> Vec<f64> {
    (0..).map(|i| i as f64 * step).take_while(|&v| v < stop).collect()
}

/// A random value of `[0, 100)` as `T` (a whole one for integers).
fn draw<T: Point>(rng: &mut Rng) -> T {
    if T::INTEGER {
        T::make((rng.next_u64() % 100) as f64)
    } else {
        T::make(50.0 * (rng.f64() + 1.0))
    }
}

/// Every bins, range, weights and density case of a `(100, 3)` sample of `T`, with three rows
/// on the edges that end the explicit lists and the ranges; and the stream forms.
fn histogramdd_of<T: Point>(ctx: &Context, stream: &Stream, rng: &mut Rng) -> gpu_runtime::Result<()> {
    let (n, d) = (100, 3);
    let mut host: Vec<T> = (0..n * d).map(|_| draw::<T>(rng)).collect();
    let special = [[96.0, 90.0, 24.0], [50.0, 100.0, 40.0], [20.0, 10.0, 0.0]];
    for (r, row) in special.iter().enumerate() {
        for (j, &v) in row.iter().enumerate() {
            host[(r + 17) * d + j] = T::make(v);
        }
    }
    let cols: Vec<Vec<f64>> = (0..d)
        .map(|j| (0..n).map(|i| host[i * d + j].get()).collect())
        .collect();
    let sample = DeviceArray::from_ndarray(ctx, &Array2::from_shape_vec((n, d), host).unwrap())?;

    let (e4, e10, e1) = (arange(100.0, 4.0), arange(100.0, 10.0), arange(25.0, 1.0));
    let ranges = [(20.0, 50.0), (10.0, 100.0), (0.0, 40.0)];
    let mut sets: Vec<(String, Vec<Bins<'_>>)> = Vec::new();
    for ranged in [false, true] {
        let r = |i: usize| ranged.then_some(ranges[i]);
        let one: Vec<Bins<'_>> = if ranged {
            (0..d)
                .map(|i| Bins::Count {
                    bins: 10,
                    range: r(i),
                })
                .collect()
        } else {
            vec![Bins::Count {
                bins: 10,
                range: None,
            }]
        };
        sets.push((format!("bins 10, ranges {ranged}"), one));
        let each = [8, 16, 12]
            .iter()
            .enumerate()
            .map(|(i, &b)| Bins::Count { bins: b, range: r(i) })
            .collect();
        sets.push((format!("bins (8, 16, 12), ranges {ranged}"), each));
    }
    sets.push((
        "bins 10 over (20, 50) for all".into(),
        vec![Bins::Count {
            bins: 10,
            range: Some((20.0, 50.0)),
        }],
    ));
    sets.push((
        "edges arange(0, 100, 4), arange(0, 100, 10), arange(25)".into(),
        vec![Bins::Edges(&e4), Bins::Edges(&e10), Bins::Edges(&e1)],
    ));

    let ones_i = DeviceArray::from_ndarray(ctx, &Array1::from_elem(n, 1i32))?;
    let ones_f = DeviceArray::from_ndarray(ctx, &Array1::from_elem(n, 1.0f64))?;
    let random_w: Vec<f64> = (0..n).map(|_| 0.5 * (rng.f64() + 1.0)).collect();
    let random_d = DeviceArray::from_ndarray(ctx, &Array1::from(random_w.clone()))?;
    let ones = vec![1.0; n];
    for (name, bins) in &sets {
        for (weighted, host_w) in [
            ("none", None),
            ("ones i32", Some(&ones)),
            ("ones f64", Some(&ones)),
            ("random f64", Some(&random_w)),
        ] {
            for density in [false, true] {
                let what = format!("{} {name}, weights {weighted}, density {density}", T::LABEL);
                let (hist, edges) = match weighted {
                    "none" => gpuarray::histogramdd(&sample, bins, density)?,
                    "ones i32" => gpuarray::histogramdd_weighted(&sample, bins, &ones_i, density)?,
                    "ones f64" => gpuarray::histogramdd_weighted(&sample, bins, &ones_f, density)?,
                    _ => gpuarray::histogramdd_weighted(&sample, bins, &random_d, density)?,
                };
                let want = np_histogram_of(&cols, T::EDGE_KIND, bins, host_w.map(Vec::as_slice), density);
                let exact = !density && weighted != "random f64";
                check(
                    &what,
                    hist.shape(),
                    &hist.to_vec()?,
                    &edges_to_host(&edges)?,
                    &want,
                    exact,
                );
            }
        }
    }

    // The stream forms, of the per-variable counts over the data's range.
    let bins = &sets[1].1;
    let on = gpuarray::on(stream);
    let (hist, edges) = on.histogramdd(&sample, bins, false)?;
    let (whist, wedges) = on.histogramdd_weighted(&sample, bins, &random_d, true)?;
    stream.synchronize()?;
    let what = format!("{} on a stream", T::LABEL);
    let want = np_histogram_of(&cols, T::EDGE_KIND, bins, None, false);
    check(
        &what,
        hist.shape(),
        &hist.to_vec()?,
        &edges_to_host(&edges)?,
        &want,
        true,
    );
    let want = np_histogram_of(&cols, T::EDGE_KIND, bins, Some(&random_w), true);
    let what = format!("{} weighted density on a stream", T::LABEL);
    check(
        &what,
        whist.shape(),
        &whist.to_vec()?,
        &edges_to_host(&wedges)?,
        &want,
        false,
    );
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn histogramdd_matches_numpys_algorithm() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let stream = Stream::new(&ctx)?;
    let mut rng = Rng::new(47);
    histogramdd_of::<f64>(&ctx, &stream, &mut rng)?;
    histogramdd_of::<f32>(&ctx, &stream, &mut rng)?;
    histogramdd_of::<f16>(&ctx, &stream, &mut rng)?;
    histogramdd_of::<i32>(&ctx, &stream, &mut rng)?;
    histogramdd_of::<i64>(&ctx, &stream, &mut rng)?;
    histogramdd_of::<u8>(&ctx, &stream, &mut rng)?;
    Ok(())
}

/// `histogram2d` of random `x` and `y` of `T` (with points on the last edges), as NumPy's
/// `histogramdd` of the two, in every bins, weights and density case; and its stream forms.
fn histogram2d_of<T: Point>(ctx: &Context, stream: &Stream, rng: &mut Rng) -> gpu_runtime::Result<()> {
    let n = 100;
    let mut x: Vec<T> = (0..n).map(|_| draw::<T>(rng)).collect();
    let mut y: Vec<T> = (0..n).map(|_| draw::<T>(rng)).collect();
    for (i, (a, b)) in [(96.0, 90.0), (50.0, 100.0), (20.0, 10.0), (24.0, 24.0)]
        .into_iter()
        .enumerate()
    {
        x[3 * i + 1] = T::make(a);
        y[3 * i + 1] = T::make(b);
    }
    let cols = vec![
        x.iter().map(|&v| v.get()).collect::<Vec<f64>>(),
        y.iter().map(|&v| v.get()).collect::<Vec<f64>>(),
    ];
    let x_d = DeviceArray::from_ndarray(ctx, &Array1::from(x))?;
    let y_d = DeviceArray::from_ndarray(ctx, &Array1::from(y))?;
    let (e4, e10, e1) = (arange(100.0, 4.0), arange(100.0, 10.0), arange(25.0, 1.0));
    let count = |bins, range| Bins::Count { bins, range };
    let sets: [(&str, [Bins<'_>; 2]); 5] = [
        ("bins 10", [count(10, None), count(10, None)]),
        ("bins (8, 16)", [count(8, None), count(16, None)]),
        (
            "bins (8, 16) over (20, 50), (10, 100)",
            [count(8, Some((20.0, 50.0))), count(16, Some((10.0, 100.0)))],
        ),
        (
            "edges arange(0, 100, 4), arange(0, 100, 10)",
            [Bins::Edges(&e4), Bins::Edges(&e10)],
        ),
        ("bins 5 and edges arange(25)", [count(5, None), Bins::Edges(&e1)]),
    ];
    let ones_i = DeviceArray::from_ndarray(ctx, &Array1::from_elem(n, 1i32))?;
    let random_w: Vec<f64> = (0..n).map(|_| 0.5 * (rng.f64() + 1.0)).collect();
    let random_d = DeviceArray::from_ndarray(ctx, &Array1::from(random_w.clone()))?;
    let ones = vec![1.0; n];
    for (name, bins) in &sets {
        for (weighted, host_w) in [
            ("none", None),
            ("ones i32", Some(&ones)),
            ("random f64", Some(&random_w)),
        ] {
            for density in [false, true] {
                let what = format!(
                    "{} histogram2d {name}, weights {weighted}, density {density}",
                    T::LABEL
                );
                let (hist, xe, ye) = match weighted {
                    "none" => gpuarray::histogram2d(&x_d, &y_d, *bins, density)?,
                    "ones i32" => gpuarray::histogram2d_weighted(&x_d, &y_d, *bins, &ones_i, density)?,
                    _ => gpuarray::histogram2d_weighted(&x_d, &y_d, *bins, &random_d, density)?,
                };
                let want = np_histogram_of(&cols, T::EDGE_KIND, bins, host_w.map(Vec::as_slice), density);
                let exact = !density && weighted != "random f64";
                let edges = [xe.to_vec()?, ye.to_vec()?];
                check(&what, hist.shape(), &hist.to_vec()?, &edges, &want, exact);
            }
        }
    }

    let bins = sets[4].1;
    let on = gpuarray::on(stream);
    let (hist, xe, ye) = on.histogram2d(&x_d, &y_d, bins, false)?;
    let (whist, wxe, wye) = on.histogram2d_weighted(&x_d, &y_d, bins, &random_d, true)?;
    stream.synchronize()?;
    let what = format!("{} histogram2d on a stream", T::LABEL);
    let want = np_histogram_of(&cols, T::EDGE_KIND, &bins, None, false);
    check(
        &what,
        hist.shape(),
        &hist.to_vec()?,
        &[xe.to_vec()?, ye.to_vec()?],
        &want,
        true,
    );
    let what = format!("{} weighted density histogram2d on a stream", T::LABEL);
    let want = np_histogram_of(&cols, T::EDGE_KIND, &bins, Some(&random_w), true);
    check(
        &what,
        whist.shape(),
        &whist.to_vec()?,
        &[wxe.to_vec()?, wye.to_vec()?],
        &want,
        false,
    );
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn histogram2d_matches_numpys_algorithm() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let stream = Stream::new(&ctx)?;
    let mut rng = Rng::new(53);
    histogram2d_of::<f64>(&ctx, &stream, &mut rng)?;
    histogram2d_of::<f32>(&ctx, &stream, &mut rng)?;
    histogram2d_of::<f16>(&ctx, &stream, &mut rng)?;
    histogram2d_of::<i32>(&ctx, &stream, &mut rng)?;
    histogram2d_of::<u8>(&ctx, &stream, &mut rng)?;
    Ok(())
}

/// The histogram of a 5 x 2 sample as `T` over bins (7, 3) against NumPy 2.4's counts and
/// edges (`np.histogramdd(x.astype(t), bins=(7, 3))`).
fn numpy_example<T: Point>(
    ctx: &Context,
    want_x_edges: &[f64],
    want_y_edges: &[f64],
) -> gpu_runtime::Result<()> {
    let x = [[0.1, 5.0], [3.3, 7.25], [99.7, 5.0], [42.42, 6.0], [17.0, 5.5]];
    let sample = DeviceArray::from_ndarray(ctx, &arr2(&x).mapv(T::make))?;
    let bins = [
        Bins::Count { bins: 7, range: None },
        Bins::Count { bins: 3, range: None },
    ];
    let (hist, edges) = gpuarray::histogramdd(&sample, &bins, false)?;
    let want: [[f64; 3]; 7] = [
        [1.0, 0.0, 1.0],
        [1.0, 0.0, 0.0],
        [0.0, 1.0, 0.0],
        [0.0, 0.0, 0.0],
        [0.0, 0.0, 0.0],
        [0.0, 0.0, 0.0],
        [1.0, 0.0, 0.0],
    ];
    let want: Vec<f64> = want.iter().flatten().copied().collect();
    let what = format!("NumPy's example in {}", T::LABEL);
    let want = (want, vec![want_x_edges.to_vec(), want_y_edges.to_vec()]);
    check(
        &what,
        hist.shape(),
        &hist.to_vec()?,
        &edges_to_host(&edges)?,
        &want,
        true,
    );
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn histogramdd_edge_cases_match_numpy() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(59);

    // Values NumPy 2.4 printed: the edges in the data's type when the range is the data's.
    numpy_example::<f32>(
        &ctx,
        &[
            0.10000000149011612,
            14.328571319580078,
            28.55714225769043,
            42.78571319580078,
            57.0142822265625,
            71.24285125732422,
            85.47142791748047,
            99.69999694824219,
        ],
        &[5.0, 5.75, 6.5, 7.25],
    )?;
    numpy_example::<f16>(
        &ctx,
        &[
            0.0999755859375,
            14.328125,
            28.546875,
            42.78125,
            57.0,
            71.25,
            85.5,
            99.6875,
        ],
        &[5.0, 5.75, 6.5, 7.25],
    )?;
    numpy_example::<u8>(
        &ctx,
        &[
            0.0,
            14.142857142857142,
            28.285714285714285,
            42.42857142857143,
            56.57142857142857,
            70.71428571428571,
            84.85714285714286,
            99.0,
        ],
        &[5.0, 5.666666666666667, 6.333333333333333, 7.0],
    )?;
    // np.histogramdd(x, bins=(arange(0, 100, 10.), 3), range=[None, (5, 7)], density=True,
    // weights=[1, 2, 3, 4, 5.5]).
    let x = arr2(&[[0.1, 5.0], [3.3, 7.25], [99.7, 5.0], [42.42, 6.0], [17.0, 5.5]]);
    let sample = DeviceArray::from_ndarray(&ctx, &x)?;
    let w = DeviceArray::from_ndarray(&ctx, &Array1::from(vec![1.0, 2.0, 3.0, 4.0, 5.5]))?;
    let e10 = arange(100.0, 10.0);
    let bins = [
        Bins::Edges(&e10),
        Bins::Count {
            bins: 3,
            range: Some((5.0, 7.0)),
        },
    ];
    let (hist, edges) = gpuarray::histogramdd_weighted(&sample, &bins, &w, true)?;
    let mut want = vec![0.0; 27];
    want[0] = 0.01428571428571428;
    want[3] = 0.07857142857142854;
    want[13] = 0.0571428571428572;
    let want_edges = vec![e10.clone(), vec![5.0, 5.666666666666667, 6.333333333333333, 7.0]];
    check(
        "NumPy's weighted density example",
        hist.shape(),
        &hist.to_vec()?,
        &edges_to_host(&edges)?,
        &(want, want_edges),
        false,
    );
    // A variable of one value: its range widened by 0.5 each way, in its type.
    let one = DeviceArray::from_ndarray(&ctx, &arr2(&[[3.1f32], [3.1]]))?;
    let (hist, edges) = gpuarray::histogramdd(&one, &[Bins::Count { bins: 3, range: None }], false)?;
    let want_edges = vec![vec![
        2.5999999046325684,
        2.933333158493042,
        3.2666666507720947,
        3.5999999046325684,
    ]];
    check(
        "one value, f32",
        hist.shape(),
        &hist.to_vec()?,
        &edges_to_host(&edges)?,
        &(vec![0.0, 2.0, 0.0], want_edges),
        true,
    );
    let one = DeviceArray::from_ndarray(&ctx, &arr2(&[[f16::from_f64(3.0)], [f16::from_f64(3.0)]]))?;
    let (hist, edges) = gpuarray::histogramdd(&one, &[Bins::Count { bins: 3, range: None }], false)?;
    let want_edges = vec![vec![2.5, 2.833984375, 3.166015625, 3.5]];
    check(
        "one value, f16",
        hist.shape(),
        &hist.to_vec()?,
        &edges_to_host(&edges)?,
        &(vec![0.0, 2.0, 0.0], want_edges),
        true,
    );

    // NaN points are dropped (NumPy's `searchsorted` puts NaN past the last edge); points on
    // the last edge are counted in the last bin.
    let (n, d) = (100, 3);
    let mut host: Vec<f64> = (0..n * d).map(|_| 50.0 * (rng.f64() + 1.0)).collect();
    for i in [3, 10, 11, 29, 50, 77, 150, 151, 152, 299] {
        host[i] = f64::NAN;
    }
    for (i, v) in [
        (30, 50.0),
        (31, 100.0),
        (32, 40.0),
        (60, 50.0),
        (94, 40.0),
        (95, 50.0),
    ] {
        host[i] = v;
    }
    let cols: Vec<Vec<f64>> = (0..d)
        .map(|j| (0..n).map(|i| host[i * d + j]).collect())
        .collect();
    let sample = DeviceArray::from_ndarray(&ctx, &Array2::from_shape_vec((n, d), host).unwrap())?;
    let (e4, e10, e1) = (arange(100.0, 4.0), arange(100.0, 10.0), arange(25.0, 1.0));
    let ranged: Vec<Bins<'_>> = [(20.0, 50.0), (10.0, 100.0), (0.0, 40.0)]
        .into_iter()
        .map(|r| Bins::Count {
            bins: 10,
            range: Some(r),
        })
        .collect();
    let listed = [Bins::Edges(&e4), Bins::Edges(&e10), Bins::Edges(&e1)];
    let w: Vec<f64> = (0..n).map(|_| 0.5 * (rng.f64() + 1.0)).collect();
    let w_d = DeviceArray::from_ndarray(&ctx, &Array1::from(w.clone()))?;
    for (name, bins) in [("ranges", ranged.as_slice()), ("edges", &listed[..])] {
        let (hist, edges) = gpuarray::histogramdd(&sample, bins, false)?;
        let want = np_histogram_of(&cols, Kind::F64, bins, None, false);
        let what = format!("NaN points, {name}");
        check(
            &what,
            hist.shape(),
            &hist.to_vec()?,
            &edges_to_host(&edges)?,
            &want,
            true,
        );
        let (hist, edges) = gpuarray::histogramdd_weighted(&sample, bins, &w_d, true)?;
        let want = np_histogram_of(&cols, Kind::F64, bins, Some(&w), true);
        let what = format!("NaN points, {name}, weighted density");
        check(
            &what,
            hist.shape(),
            &hist.to_vec()?,
            &edges_to_host(&edges)?,
            &want,
            false,
        );
    }
    // NumPy refuses an autodetected range with NaN in it ("autodetected range of [nan, nan]
    // is not finite").
    let r = gpuarray::histogramdd(
        &sample,
        &[Bins::Count {
            bins: 10,
            range: None,
        }],
        false,
    );
    assert!(
        matches!(r, Err(Error::Shape(ArrayShapeError::HistogramRange { .. }))),
        "NaN points without a range: {r:?}"
    );

    // One variable, `(N,)` and `(N, 1)`: `histogram`'s counts and edges, and NumPy's.
    let v: Vec<f64> = (0..n)
        .map(|_| 50.0 * (rng.f64() + 1.0))
        .chain([50.0, 96.0])
        .collect();
    let cols = vec![v.clone()];
    let flat = DeviceArray::from_ndarray(&ctx, &Array1::from(v.clone()))?;
    let column = DeviceArray::from_ndarray(&ctx, &Array2::from_shape_vec((v.len(), 1), v.clone()).unwrap())?;
    let flat32 = DeviceArray::from_ndarray(
        &ctx,
        &Array1::from(v.iter().map(|&x| x as f32).collect::<Vec<_>>()),
    )?;
    let cols32 = vec![v.iter().map(|&x| f64::from(x as f32)).collect::<Vec<f64>>()];
    for bins in [
        Bins::Count {
            bins: 10,
            range: None,
        },
        Bins::Count {
            bins: 7,
            range: Some((20.0, 50.0)),
        },
        Bins::Edges(&e4),
    ] {
        let (counts, h_edges) = flat.histogram(bins)?;
        let counts: Vec<f64> = counts.to_vec()?.into_iter().map(|c| c as f64).collect();
        let h_edges = vec![h_edges.to_vec()?];
        let want = np_histogram_of(&cols, Kind::F64, &[bins], None, false);
        let what = format!("one variable, {bins:?}");
        check(
            &format!("histogram, {what}"),
            &[counts.len()],
            &counts,
            &h_edges,
            &want,
            true,
        );
        for (form, (hist, edges)) in [
            ("(N,)", gpuarray::histogramdd(&flat, &[bins], false)?),
            ("(N, 1)", gpuarray::histogramdd(&column, &[bins], false)?),
        ] {
            let got = hist.to_vec()?;
            assert_eq!(got, counts, "{what} {form}: histogramdd against histogram");
            assert_eq!(
                edges_to_host(&edges)?,
                h_edges,
                "{what} {form}: the edges against histogram's"
            );
            check(
                &format!("{what} {form}"),
                hist.shape(),
                &got,
                &edges_to_host(&edges)?,
                &want,
                true,
            );
        }
        if !matches!(bins, Bins::Count { range: Some(_), .. }) {
            // `f32` data over its own range: `float32` edges in both functions.
            let (counts, h_edges) = flat32.histogram(bins)?;
            let (hist, edges) = gpuarray::histogramdd(&flat32, &[bins], false)?;
            let counts: Vec<f64> = counts.to_vec()?.into_iter().map(|c| c as f64).collect();
            assert_eq!(
                hist.to_vec()?,
                counts,
                "f32 {what}: histogramdd against histogram"
            );
            assert_eq!(
                edges_to_host(&edges)?,
                vec![h_edges.to_vec()?],
                "f32 {what}: the edges"
            );
            let want = np_histogram_of(&cols32, Kind::F32, &[bins], None, false);
            check(
                &format!("f32 {what}"),
                hist.shape(),
                &hist.to_vec()?,
                &edges_to_host(&edges)?,
                &want,
                true,
            );
        }
    }
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn histogramdd_refusals() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let sample =
        DeviceArray::from_ndarray(&ctx, &Array2::from_shape_fn((10, 3), |(i, j)| (i * 3 + j) as f64))?;
    let ten = Bins::Count {
        bins: 10,
        range: None,
    };
    let r = gpuarray::histogramdd(&sample, &[ten, ten], false);
    assert!(
        matches!(r, Err(Error::Shape(ArrayShapeError::ElementCounts { .. }))),
        "two bins for three variables: {r:?}"
    );
    let r = gpuarray::histogramdd(&sample, &[Bins::Count { bins: 0, range: None }], false);
    assert!(
        matches!(r, Err(Error::Shape(ArrayShapeError::HistogramRange { .. }))),
        "no bins: {r:?}"
    );
    let r = gpuarray::histogramdd(
        &sample,
        &[Bins::Count {
            bins: 4,
            range: Some((5.0, 2.0)),
        }],
        false,
    );
    assert!(
        matches!(r, Err(Error::Shape(ArrayShapeError::HistogramRange { .. }))),
        "a falling range: {r:?}"
    );
    let r = gpuarray::histogramdd(&sample, &[ten, Bins::Edges(&[0.0, 2.0, 1.0]), ten], false);
    assert!(
        matches!(r, Err(Error::Shape(ArrayShapeError::HistogramEdges { .. }))),
        "edges out of order: {r:?}"
    );
    let cube = DeviceArray::from_ndarray(&ctx, &Array3::<f64>::zeros((2, 3, 4)))?;
    let r = gpuarray::histogramdd(&cube, &[ten], false);
    assert!(
        matches!(r, Err(Error::Shape(ArrayShapeError::TooManyAxes { .. }))),
        "a 3-d sample: {r:?}"
    );
    let w = DeviceArray::from_ndarray(&ctx, &Array1::from_elem(9, 1.0f64))?;
    let r = gpuarray::histogramdd_weighted(&sample, &[ten], &w, false);
    assert!(
        matches!(r, Err(Error::Shape(ArrayShapeError::ElementCounts { .. }))),
        "9 weights for 10 points: {r:?}"
    );
    let x = DeviceArray::from_ndarray(&ctx, &Array1::from_elem(5, 1.0f64))?;
    let y = DeviceArray::from_ndarray(&ctx, &Array1::from_elem(4, 1.0f64))?;
    let r = gpuarray::histogram2d(&x, &y, [ten, ten], false);
    assert!(
        matches!(r, Err(Error::Shape(ArrayShapeError::ElementCounts { .. }))),
        "x and y of other lengths: {r:?}"
    );
    let z = DeviceArray::from_ndarray(&ctx, &Array2::from_elem((4, 2), Complex64::new(1.0, 0.0)))?;
    let r = gpuarray::histogramdd(&z, &[ten], false);
    assert!(
        matches!(r, Err(Error::Argument(ArgumentError::UndefinedOnElement { .. }))),
        "complex points: {r:?}"
    );
    Ok(())
}

/// The rows and columns of the `true` elements of an `n` x `n` host mask, in C order.
fn host_indices(n: usize, keep: impl Fn(usize, usize) -> bool) -> (Vec<i64>, Vec<i64>) {
    let (mut rows, mut cols) = (Vec::new(), Vec::new());
    for i in 0..n {
        for j in 0..n {
            if keep(i, j) {
                rows.push(i as i64);
                cols.push(j as i64);
            }
        }
    }
    (rows, cols)
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn mask_indices_match_numpy() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let n = 10;
    // np.mask_indices(10, np.triu, 1) is np.triu_indices(10, 1).
    let (rows, cols) = gpuarray::mask_indices(&ctx, n, |m| m.triu(1))?;
    let (tr, tc) = gpuarray::triu_indices(&ctx, n, 1, n)?;
    let got = (rows.to_vec()?, cols.to_vec()?);
    assert_eq!(got, (tr.to_vec()?, tc.to_vec()?), "triu(1) against triu_indices");
    assert_eq!(got, host_indices(n, |i, j| j > i), "triu(1) against the host");
    assert_eq!(got.0.len(), 45, "triu(1) of 10 x 10");

    let (rows, cols) = gpuarray::mask_indices(&ctx, n, |m| m.tril(-2))?;
    let (tr, tc) = gpuarray::tril_indices(&ctx, n, -2, n)?;
    let got = (rows.to_vec()?, cols.to_vec()?);
    assert_eq!(got, (tr.to_vec()?, tc.to_vec()?), "tril(-2) against tril_indices");
    assert_eq!(
        got,
        host_indices(n, |i, j| j + 2 <= i),
        "tril(-2) against the host"
    );

    // A closure that ignores its input: the indices of its mask's true elements.
    let mut rng = Rng::new(61);
    let host = Array2::from_shape_fn((n, n), |_| Bool::from(rng.next_u64().is_multiple_of(3)));
    let mask = DeviceArray::from_ndarray(&ctx, &host)?;
    let (rows, cols) = gpuarray::mask_indices(&ctx, n, |_| mask.copy())?;
    let got = (rows.to_vec()?, cols.to_vec()?);
    let nz = mask.nonzero()?;
    assert_eq!(
        got,
        (nz[0].to_vec()?, nz[1].to_vec()?),
        "a random mask against its nonzero()"
    );
    let want = host_indices(n, |i, j| bool::from(host[(i, j)]));
    assert_eq!(got, want, "a random mask against the host");

    // n = 0: no indices.
    let (rows, cols) = gpuarray::mask_indices(&ctx, 0, |m| m.triu(1))?;
    assert_eq!((rows.to_vec()?, cols.to_vec()?), (vec![], vec![]), "n = 0");

    // A mask of other than two axes is refused.
    let r = gpuarray::mask_indices(&ctx, n, |m| m.triu(0)?.reshape(n * n));
    assert!(
        matches!(r, Err(Error::Shape(ArrayShapeError::Dimension { .. }))),
        "a 1-d mask: {r:?}"
    );
    Ok(())
}
