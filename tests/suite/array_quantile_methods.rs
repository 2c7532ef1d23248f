//! NumPy's `method=` of `quantile`/`percentile` and their `nan` forms on a GPU
//! (`quantile_method`, `quantile_axis_method`, `percentile_method`, `percentile_axis_method`,
//! `nanquantile_method`, ..., and their stream forms), for all thirteen [`QuantileMethod`]s.
//!
//! The reference is [`np_quantile`], a port of NumPy 2's `_quantile` (`_QuantileMethods`,
//! `_compute_virtual_index`, `_get_indexes`, `_get_gamma`, `_lerp`, `_inverted_cdf`,
//! `_closest_observation`, `_discrete_interpolation_to_boundaries`) on the host over the sorted
//! `f64` values, in NumPy's order of operations (so `f64` results agree bit for bit). It is
//! checked against numbers printed by NumPy 2.4 ([`NUMPY`], a test that needs no GPU), and the
//! library against both: the literals on `f64`, `f32`, `f16`, `i32` and `u8`; the port on random
//! data of lengths 1 to 1000, along each axis of 2-D and 3-D arrays and transposed views, with
//! NaNs, and on CuPy's test shapes (`statistics_tests/test_order.py`). Methods that take an
//! element (or the mean of two) must match exactly, the interpolating ones within a tolerance.

use gpu_runtime::gpuarray::{DeviceArray, Element, MeanType, QuantileMethod as M};
use gpu_runtime::half::f16;
use gpu_runtime::ndarray::{Array1, ArrayD, Axis, IxDyn};
use gpu_runtime::{ArrayShapeError, Context, Error, Stream};
use gpu_suite::Rng;

#[rustfmt::skip]
const METHODS: [M; 13] = [
    M::Linear, M::Midpoint, M::AveragedInvertedCdf, M::InterpolatedInvertedCdf, M::Hazen, M::Weibull,
    M::MedianUnbiased, M::NormalUnbiased, M::Lower, M::Higher, M::Nearest, M::InvertedCdf,
    M::ClosestObservation,
];
/// The methods that interpolate; the others give an element or the mean of two (exact in
/// binary), the same bits as NumPy.
#[rustfmt::skip]
const INTERPOLATING: [M; 6] =
    [M::Linear, M::InterpolatedInvertedCdf, M::Hazen, M::Weibull, M::MedianUnbiased, M::NormalUnbiased];

/// NumPy 2's `_quantile(lane, q, method=m)`: NaN when the lane is empty or holds a NaN.
fn np_quantile(lane: &[f64], q: f64, m: M) -> f64 {
    if lane.is_empty() || lane.iter().any(|x| x.is_nan()) {
        return f64::NAN;
    }
    let mut v = lane.to_vec();
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let (n, last) = (v.len() as f64, v.len() - 1);
    let at = |k: f64| v[(k.max(0.0) as usize).min(last)];
    // `_discrete_interpolation_to_boundaries`: the index below where `keep(gamma, below)`, else
    // the one above, clipped at 0.
    let boundary = |index: f64, keep: fn(f64, f64) -> bool| {
        let below = index.floor();
        let k = if keep(index - below, below) {
            below
        } else {
            below + 1.0
        };
        at(k)
    };
    let (alpha, beta) = match m {
        M::InterpolatedInvertedCdf => (0.0, 1.0),
        M::Hazen => (0.5, 0.5),
        M::Weibull => (0.0, 0.0),
        M::MedianUnbiased => (1.0 / 3.0, 1.0 / 3.0),
        M::NormalUnbiased => (3.0 / 8.0, 3.0 / 8.0),
        _ => (1.0, 1.0),
    };
    let vi = match m {
        M::Lower => return at(((n - 1.0) * q).floor()),
        M::Higher => return at(((n - 1.0) * q).ceil()),
        M::Nearest => return at(((n - 1.0) * q).round_ties_even()),
        M::InvertedCdf => return boundary(n * q - 1.0, |g, _| g == 0.0),
        M::ClosestObservation => {
            return boundary(n * q - 1.0 - 0.5, |g, b| g == 0.0 && b.rem_euclid(2.0) == 1.0)
        }
        M::Linear => (n - 1.0) * q,
        M::Midpoint => 0.5 * (((n - 1.0) * q).floor() + ((n - 1.0) * q).ceil()),
        M::AveragedInvertedCdf => n * q - 1.0,
        _ => n * q + (alpha + q * (1.0 - alpha - beta)) - 1.0,
    };
    // `_get_indexes`: past the last index both are the last (-1), before the first the first.
    let (below, a, b) = if vi >= n - 1.0 {
        (-1.0, v[last], v[last])
    } else if vi < 0.0 {
        (0.0, v[0], v[0])
    } else {
        let k = vi.floor();
        (k, v[k as usize], v[k as usize + 1])
    };
    // `_get_gamma` with the method's `fix_gamma`, then `_lerp`.
    let t = match m {
        M::AveragedInvertedCdf if vi - below == 0.0 => 0.5,
        M::AveragedInvertedCdf => 1.0,
        M::Midpoint if vi % 1.0 == 0.0 => 0.0,
        M::Midpoint => 0.5,
        _ => vi - below,
    };
    let d = b - a;
    // `_lerp`: `a + d t`, replaced by `b - d (1 - t)` where `t >= 0.5`.
    let lerp = a + d * t;
    if t >= 0.5 {
        b - d * (1.0 - t)
    } else {
        lerp
    }
}

/// `np_quantile` of the values that are not NaN (`_nanquantile_1d`).
fn np_nanquantile(lane: &[f64], q: f64, m: M) -> f64 {
    let kept: Vec<f64> = lane.iter().copied().filter(|x| !x.is_nan()).collect();
    np_quantile(&kept, q, m)
}

const SIX: [f64; 6] = [7.0, 1.0, 10.0, 3.0, 9.0, 3.0];
const SIX_Q: [f64; 5] = [0.0, 0.2, 0.5, 0.75, 1.0];
const THREE: [f64; 3] = [9.0, 2.0, 5.0];
const THREE_Q: [f64; 5] = [0.1, 0.25, 0.5, 0.6, 0.9];

/// NumPy 2.4, per method: `quantile(SIX, SIX_Q)`; `quantile(THREE, THREE_Q)`;
/// `quantile(arange(1, 1002), [0.99, 0.999])` and `percentile(arange(1, 1002), [99, 99.9])`
/// (`99.9 / 100` is not `0.999`); and the cases where NumPy rounds `n * q` before subtracting 1,
/// `quantile(arange(10), 0.1)`, `percentile(arange(10), 10)`, `quantile(THREE, 1/3)` and
/// `quantile(arange(5), 0.3)` (a fused multiply-add picks another element in `inverted_cdf`,
/// `averaged_inverted_cdf`, `closest_observation`).
type Row = (M, [f64; 5], [f64; 5], [f64; 4], [f64; 4]);
#[rustfmt::skip]
const NUMPY: [Row; 13] = [
    (M::Linear, [1.0, 3.0, 5.0, 8.5, 10.0], [2.6, 3.5, 5.0, 5.8, 8.2], [991.0, 1000.0, 991.0, 1000.0000000000001], [0.9, 0.9, 4.0, 1.2]),
    (M::Midpoint, [1.0, 3.0, 5.0, 8.0, 10.0], [3.5, 3.5, 5.0, 7.0, 7.0], [991.0, 1000.0, 991.0, 1000.5], [0.5, 0.5, 3.5, 1.5]),
    (M::AveragedInvertedCdf, [1.0, 3.0, 5.0, 9.0, 10.0], [2.0, 2.0, 5.0, 5.0, 9.0], [991.0, 1000.0, 991.0, 1000.0], [0.5, 0.5, 3.5, 1.0]),
    (M::InterpolatedInvertedCdf, [1.0, 1.4000000000000004, 3.0, 8.0, 10.0], [2.0, 2.0, 3.5, 4.3999999999999995, 7.800000000000001], [990.99, 999.999, 990.99, 999.9990000000001], [0.0, 0.0, 2.0, 0.5]),
    (M::Hazen, [1.0, 2.4000000000000004, 5.0, 9.0, 10.0], [2.0, 2.75, 5.0, 6.199999999999999, 9.0], [991.49, 1000.499, 991.49, 1000.4990000000001], [0.5, 0.5, 3.5, 1.0]),
    (M::Weibull, [1.0, 1.8000000000000003, 5.0, 9.25, 10.0], [2.0, 2.0, 5.0, 6.6, 9.0], [991.98, 1000.998, 991.98, 1000.9980000000002], [0.10000000000000009, 0.10000000000000009, 3.0, 0.8]),
    (M::MedianUnbiased, [1.0, 2.2, 5.0, 9.083333333333332, 10.0], [2.0, 2.5, 5.0, 6.333333333333332, 9.0], [991.6533333333333, 1000.6653333333334, 991.6533333333333, 1000.6653333333335], [0.3666666666666667, 0.3666666666666667, 3.333333333333333, 0.9333333333333333]),
    (M::NormalUnbiased, [1.0, 2.2500000000000004, 5.0, 9.0625, 10.0], [2.0, 2.5625, 5.0, 6.299999999999999, 9.0], [991.6125, 1000.62375, 991.6125, 1000.6237500000001], [0.3999999999999999, 0.3999999999999999, 3.375, 0.95]),
    (M::Lower, [1.0, 3.0, 3.0, 7.0, 10.0], [2.0, 2.0, 5.0, 5.0, 5.0], [991.0, 1000.0, 991.0, 1000.0], [0.0, 0.0, 2.0, 1.0]),
    (M::Higher, [1.0, 3.0, 7.0, 9.0, 10.0], [5.0, 5.0, 5.0, 9.0, 9.0], [991.0, 1000.0, 991.0, 1001.0], [1.0, 1.0, 5.0, 2.0]),
    (M::Nearest, [1.0, 3.0, 3.0, 9.0, 10.0], [2.0, 2.0, 5.0, 5.0, 9.0], [991.0, 1000.0, 991.0, 1000.0], [1.0, 1.0, 5.0, 1.0]),
    (M::InvertedCdf, [1.0, 3.0, 3.0, 9.0, 10.0], [2.0, 2.0, 5.0, 5.0, 9.0], [991.0, 1000.0, 991.0, 1000.0], [0.0, 0.0, 2.0, 1.0]),
    (M::ClosestObservation, [1.0, 1.0, 3.0, 7.0, 10.0], [2.0, 2.0, 5.0, 5.0, 9.0], [991.0, 1000.0, 991.0, 1000.0], [0.0, 0.0, 2.0, 1.0]),
];

/// The arrays and quantiles of [`NUMPY`]'s last column: `(data, q, percentile)`.
#[rustfmt::skip]
fn rounded_cases() -> [(Vec<f64>, f64, bool); 4] {
    let arange = |n: usize| (0..n).map(|i| i as f64).collect::<Vec<_>>();
    [(arange(10), 0.1, false), (arange(10), 10.0, true), (THREE.to_vec(), 1.0 / 3.0, false), (arange(5), 0.3, false)]
}

/// A result type ([`MeanType::Mean`]) as `f64`, an `f64` rounded into it, and its tolerance.
trait Out: Element + Copy {
    const TOL: f64;
    fn f(self) -> f64;
    fn round(x: f64) -> f64;
}
/// An element type of the tests: NaN if it has one, a random value (`[-1, 1)` for floats,
/// `±10^6` for `i32`, where NumPy's `_lerp` does not overflow `int32`, any `u8`), from and to `f64`.
trait Elem: Element + MeanType<Mean: Out> + Copy {
    const NAN: Option<Self>;
    fn draw(rng: &mut Rng) -> Self;
    fn of(x: f64) -> Self;
    fn host(self) -> f64;
}
macro_rules! types {
    (out { $($o:ty, $tol:expr, $f:expr, $round:expr;)* } elem { $($t:ty, $nan:expr, $draw:expr, $of:expr, $host:expr;)* }) => {
        $(impl Out for $o {
            const TOL: f64 = $tol;
            fn f(self) -> f64 { let f: fn(Self) -> f64 = $f; f(self) }
            fn round(x: f64) -> f64 { let r: fn(f64) -> f64 = $round; r(x) }
        })*
        $(impl Elem for $t {
            const NAN: Option<Self> = $nan;
            fn draw(rng: &mut Rng) -> Self { let d: fn(&mut Rng) -> Self = $draw; d(rng) }
            fn of(x: f64) -> Self { let o: fn(f64) -> Self = $of; o(x) }
            fn host(self) -> f64 { let h: fn(Self) -> f64 = $host; h(self) }
        })*
    };
}
types! {
    out {
        f64, 1e-13, |x| x, |x| x;
        f32, 1e-6, |x| x as f64, |x| x as f32 as f64;
        f16, 2e-3, f16::to_f64, |x| f16::from_f64(x).to_f64();
    }
    elem {
        f64, Some(f64::NAN), Rng::f64, |x| x, |x| x;
        f32, Some(f32::NAN), Rng::f32, |x| x as f32, |x| x as f64;
        f16, Some(f16::NAN), |r| f16::from_f32(r.f32()), f16::from_f64, f16::to_f64;
        i32, None, |r| r.next_u64() as i32 % 1_000_000, |x| x as i32, |x| x as f64;
        u8, None, |r| r.next_u64() as u8, |x| x as u8, |x| x as f64;
    }
}

/// The size the interpolating methods' tolerance is relative to: the largest magnitude.
fn scale(x: &[f64]) -> f64 {
    x.iter().filter(|v| !v.is_nan()).fold(1.0, |s, v| s.max(v.abs()))
}

/// Each of `got` against NumPy's `want` (rounded into the result type) for method `m`.
fn expect<O: Out>(got: &[O], want: &[f64], m: M, scale: f64, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}");
    for (k, (g, &w)) in got.iter().zip(want).enumerate() {
        let (g, w, tol) = (g.f(), O::round(w), O::TOL * scale);
        let ok = (g.is_nan() && w.is_nan()) || g == w || (INTERPOLATING.contains(&m) && (g - w).abs() <= tol);
        assert!(ok, "{what} {m:?} (form {k}): {g} against NumPy's {w}");
    }
}

fn device<T: Elem>(ctx: &Context, x: &[f64], shape: &[usize]) -> gpu_runtime::Result<DeviceArray<T, IxDyn>> {
    let h = ArrayD::from_shape_vec(IxDyn(shape), x.iter().map(|&v| T::of(v)).collect()).unwrap();
    DeviceArray::from_ndarray(ctx, &h)
}

/// Each of `qs` with each method.
fn pairs(qs: &[f64]) -> impl Iterator<Item = (f64, M)> + '_ {
    qs.iter().flat_map(|&q| METHODS.map(|m| (q, m)))
}

#[test]
fn the_host_port_gives_numpys_numbers() {
    let a: Vec<f64> = (1..=1001).map(f64::from).collect();
    for (m, six, three, arange, rounded) in NUMPY {
        let mut got: Vec<f64> = SIX_Q.iter().map(|&q| np_quantile(&SIX, q, m)).collect();
        got.extend(THREE_Q.map(|q| np_quantile(&THREE, q, m)));
        got.extend([0.99, 0.999, 99.0 / 100.0, 99.9 / 100.0].map(|q| np_quantile(&a, q, m)));
        got.extend(rounded_cases().map(|(x, q, p)| np_quantile(&x, if p { q / 100.0 } else { q }, m)));
        let want = [&six[..], &three, &arange, &rounded].concat();
        for (g, w) in got.into_iter().zip(want) {
            assert_eq!(g.to_bits(), w.to_bits(), "{m:?}: {g} against NumPy's {w}");
        }
    }
    assert!(np_quantile(&[1.0, f64::NAN], 0.5, M::Lower).is_nan());
    let nan = f64::NAN;
    assert_eq!(np_nanquantile(&[nan, 4.0, nan, 2.0], 0.0, M::Higher), 2.0);
}

/// [`NUMPY`]'s first three columns on the GPU as `T` (`arange(1, 1002)` where `T` holds it), and
/// `SIX` with NaNs among it for the `nan` forms.
fn literals<T: Elem>(ctx: &Context, arange: bool) -> gpu_runtime::Result<()> {
    let name = std::any::type_name::<T>();
    let (six, three) = (device::<T>(ctx, &SIX, &[6])?, device::<T>(ctx, &THREE, &[3])?);
    let a = device::<T>(ctx, &(1..=1001).map(f64::from).collect::<Vec<_>>(), &[1001])?;
    let nan = T::NAN.map_or(3.0, |v| v.host());
    let with_nan = device::<T>(ctx, &[nan, 7.0, 1.0, 10.0, nan, 3.0, 9.0, 3.0, nan], &[9])?;
    for (m, w6, w3, wa, _) in NUMPY {
        for (&q, w) in SIX_Q.iter().zip(w6) {
            let got = [six.quantile_method(q, m)?, six.percentile_method(q * 100.0, m)?];
            expect(&got, &[w, w], m, 10.0, &format!("{name} SIX q {q}"));
            if T::NAN.is_some() {
                let mut got = vec![with_nan.nanquantile_method(q, m)?];
                got.push(with_nan.nanpercentile_method(q * 100.0, m)?);
                got.push(with_nan.quantile_method(q, m)?);
                let what = format!("{name} SIX with NaNs q {q}");
                expect(&got, &[w, w, f64::NAN], m, 10.0, &what);
            }
        }
        let got: Vec<_> = THREE_Q
            .iter()
            .map(|&q| three.quantile_method(q, m))
            .collect::<Result<_, _>>()?;
        expect(&got, &w3, m, 10.0, &format!("{name} THREE at {THREE_Q:?}"));
        if arange {
            let mut got = vec![a.quantile_method(0.99, m)?, a.quantile_method(0.999, m)?];
            got.extend([a.percentile_method(99.0, m)?, a.percentile_method(99.9, m)?]);
            expect(&got, &wa, m, 1001.0, &format!("{name} arange(1, 1002)"));
        }
    }
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn every_method_gives_numpys_numbers() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    literals::<f64>(&ctx, true)?;
    literals::<f32>(&ctx, true)?;
    literals::<f16>(&ctx, true)?;
    literals::<i32>(&ctx, true)?;
    literals::<u8>(&ctx, false)
}

/// Where `n * q` is not whole but rounds to a whole number NumPy's index is `fl(n q) - 1`; a
/// kernel that fuses `n * q - 1` into one rounding (an FMA) picks another element.
#[test]
#[ignore = "needs a CUDA GPU"]
fn the_index_rounds_n_times_q_before_subtracting_as_numpy() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    for (k, (x, q, p)) in rounded_cases().into_iter().enumerate() {
        let d = device::<f64>(&ctx, &x, &[x.len()])?;
        let di = device::<i32>(&ctx, &x, &[x.len()])?;
        for (m, .., rounded) in NUMPY {
            let what = format!("{x:?} {} {q}", if p { "percentile" } else { "quantile" });
            if p {
                expect(&[d.percentile_method(q, m)?], &[rounded[k]], m, 10.0, &what);
                expect(&[di.percentile_method(q, m)?], &[rounded[k]], m, 10.0, &what);
            } else {
                expect(&[d.quantile_method(q, m)?], &[rounded[k]], m, 10.0, &what);
                expect(&[di.quantile_method(q, m)?], &[rounded[k]], m, 10.0, &what);
            }
        }
    }
    Ok(())
}

/// Random 1-D data of lengths 1 to 1000, each method at q = 0, 1, 1/2, 1/3 and two random, by
/// every flat form; then with two NaNs (NaN, but from the `nan` forms the quantile of the rest).
fn random_lanes<T: Elem>(ctx: &Context, rng: &mut Rng) -> gpu_runtime::Result<()> {
    let name = std::any::type_name::<T>();
    for n in [1usize, 2, 3, 10, 1000] {
        let h: Vec<T> = (0..n).map(|_| T::draw(rng)).collect();
        let hf: Vec<f64> = h.iter().map(|x| x.host()).collect();
        let d = DeviceArray::from_ndarray(ctx, &Array1::from(h.clone()))?;
        let s = scale(&hf);
        let random = [(rng.f64() + 1.0) / 2.0, (rng.f64() + 1.0) / 2.0];
        for (q, m) in pairs(&[0.0, 1.0, 0.5, 1.0 / 3.0, random[0], random[1]]) {
            let (w, p) = (np_quantile(&hf, q, m), q * 100.0);
            let mut got = vec![d.quantile_method(q, m)?, d.percentile_method(p, m)?];
            got.push(d.nanquantile_method(q, m)?);
            let want = [w, np_quantile(&hf, p / 100.0, m), w];
            expect(&got, &want, m, s, &format!("{name} n {n} q {q}"));
        }
        let Some(nan) = T::NAN else { continue };
        let mut hn = h.clone();
        hn[rng.next_u64() as usize % n] = nan;
        hn[rng.next_u64() as usize % n] = nan;
        let hnf: Vec<f64> = hn.iter().map(|x| x.host()).collect();
        let dn = DeviceArray::from_ndarray(ctx, &Array1::from(hn))?;
        for (q, m) in pairs(&[0.0, 0.25, 1.0 / 3.0, 1.0]) {
            let mut got = vec![dn.quantile_method(q, m)?, dn.nanquantile_method(q, m)?];
            got.push(dn.nanpercentile_method(q * 100.0, m)?);
            let w = np_nanquantile(&hnf, q, m);
            let want = [f64::NAN, w, np_nanquantile(&hnf, q * 100.0 / 100.0, m)];
            expect(&got, &want, m, s, &format!("{name} n {n} with NaNs q {q}"));
        }
    }
    Ok(())
}

/// Every `_axis` form along each axis (negative every other time) of 2-D and 3-D arrays and of
/// their transposes, a third of the elements NaN for floats with one lane all NaN: the plain
/// forms give NaN on a lane with a NaN, the `nan` forms the quantile of the rest. The flat `nan`
/// form of the transpose too (not in C order: a copy first).
fn along_axes<T: Elem>(ctx: &Context, rng: &mut Rng) -> gpu_runtime::Result<()> {
    let name = std::any::type_name::<T>();
    for shape in [vec![7usize, 10], vec![4, 3, 5], vec![2, 3, 4]] {
        let n: usize = shape.iter().product();
        let mut h: Vec<T> = (0..n).map(|_| T::draw(rng)).collect();
        if let Some(nan) = T::NAN {
            for x in h.iter_mut().filter(|_| rng.next_u64().is_multiple_of(3)) {
                *x = nan;
            }
            h[..shape[shape.len() - 1]].fill(nan);
        }
        let host = ArrayD::from_shape_vec(IxDyn(&shape), h).unwrap();
        let hf = host.mapv(|x| x.host());
        let s = scale(hf.as_slice().unwrap());
        let d = DeviceArray::from_ndarray(ctx, &host)?;
        for (q, m) in pairs(&[0.3, 0.1, 0.5, 0.9, (rng.f64() + 1.0) / 2.0]) {
            for (dv, hv) in [(d.view(), hf.view()), (d.t(), hf.t())] {
                let what = format!("{name} {:?} q {q}", hv.shape());
                let flat: Vec<f64> = hv.iter().copied().collect();
                let w = np_nanquantile(&flat, q, m);
                expect(&[dv.nanquantile_method(q, m)?], &[w], m, s, &what);
                for axis in 0..shape.len() {
                    let ax = axis as isize - if axis % 2 == 1 { shape.len() as isize } else { 0 };
                    let got = [
                        dv.quantile_axis_method(q, ax, m)?.to_ndarray()?,
                        dv.percentile_axis_method(q * 100.0, ax, m)?.to_ndarray()?,
                        dv.nanquantile_axis_method(q, ax, m)?.to_ndarray()?,
                        dv.nanpercentile_axis_method(q * 100.0, ax, m)?.to_ndarray()?,
                    ];
                    let mut kept = hv.shape().to_vec();
                    kept.remove(axis);
                    for (form, g) in got.iter().enumerate() {
                        assert_eq!(g.shape(), kept.as_slice(), "{what} axis {ax} form {form}");
                        let qq = if form % 2 == 1 { q * 100.0 / 100.0 } else { q };
                        for (lane, &v) in hv.lanes(Axis(axis)).into_iter().zip(g) {
                            let l: Vec<f64> = lane.to_vec();
                            let w = [np_quantile, np_nanquantile][form / 2](&l, qq, m);
                            let what = format!("{what} axis {ax} form {form} lane {l:?}");
                            expect(&[v], &[w], m, s, &what);
                        }
                    }
                }
            }
        }
    }
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn every_form_matches_the_numpy_port_on_random_data() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(0x9_0a27);
    random_lanes::<f64>(&ctx, &mut rng)?;
    random_lanes::<f32>(&ctx, &mut rng)?;
    random_lanes::<i32>(&ctx, &mut rng)?;
    random_lanes::<u8>(&ctx, &mut rng)?;
    along_axes::<f64>(&ctx, &mut rng)?;
    along_axes::<f32>(&ctx, &mut rng)?;
    along_axes::<i32>(&ctx, &mut rng)?;
    along_axes::<u8>(&ctx, &mut rng)
}

/// CuPy's `TestQuantileMethods` cases: `shaped_random((2, 3, 8))` (values in `[0, 10)`) at
/// q = 0.1337 and 0.3, `shaped_arange((1001,))` (1 to 1001, wrapping in `u8`) at `[.99, .999]`,
/// `(2, 3, 4)` at 0.3 and `[0.1, 0.5, 0.9]`, flat and along each axis, by `percentile` too and
/// by the stream forms, which must give the same bits; `(4, 3, 10, 2, 8)` along axis -1 at
/// q = 0.1337 and `percentile` 13.37.
fn cupy_cases<T: Elem>(ctx: &Context, rng: &mut Rng, stream: &Stream) -> gpu_runtime::Result<()> {
    let name = std::any::type_name::<T>();
    let uniform = |rng: &mut Rng, n: usize| -> Vec<f64> {
        (0..n).map(|_| T::of((rng.f64() + 1.0) * 5.0).host()).collect()
    };
    let wrap = if size_of::<T>() == 1 { 256 } else { 1 << 20 };
    let arange: Vec<f64> = (1..=1001).map(|i| T::of(f64::from(i % wrap)).host()).collect();
    let cases = [
        (uniform(rng, 48), vec![2, 3, 8], vec![0.1337, 0.3]),
        (arange, vec![1001], vec![0.99, 0.999]),
        (uniform(rng, 24), vec![2, 3, 4], vec![0.3, 0.1, 0.5, 0.9]),
    ];
    let bits = |x: &T::Mean| x.f().to_bits();
    for (x, shape, qs) in cases {
        let (d, s) = (device::<T>(ctx, &x, &shape)?, scale(&x));
        for (q, m) in pairs(&qs) {
            let (what, p, on) = (format!("{name} {shape:?} q {q} {m:?}"), q * 100.0, d.on(stream));
            let got = [d.quantile_method(q, m)?, d.percentile_method(p, m)?];
            let want = [np_quantile(&x, q, m), np_quantile(&x, p / 100.0, m)];
            expect(&got, &want, m, s, &what);
            let quantiles = [on.quantile_method(q, m)?, on.nanquantile_method(q, m)?];
            let percentiles = [on.percentile_method(p, m)?, on.nanpercentile_method(p, m)?];
            let same = quantiles.iter().all(|g| bits(g) == bits(&got[0]));
            assert!(same, "stream {what}: {quantiles:?} against {got:?}");
            let same = percentiles.iter().all(|g| bits(g) == bits(&got[1]));
            assert!(same, "stream {what}: {percentiles:?} against {got:?}");
            for ax in (-(shape.len() as isize)..0).rev() {
                let plain = d.quantile_axis_method(q, ax, m)?.to_ndarray()?;
                let plain_p = d.percentile_axis_method(p, ax, m)?.to_ndarray()?;
                let streamed = [
                    (on.quantile_axis_method(q, ax, m)?, &plain),
                    (on.percentile_axis_method(p, ax, m)?, &plain_p),
                    (on.nanquantile_axis_method(q, ax, m)?, &plain),
                    (on.nanpercentile_axis_method(p, ax, m)?, &plain_p),
                ];
                stream.synchronize()?;
                for (k, (g, want)) in streamed.iter().enumerate() {
                    let g = g.to_ndarray()?;
                    let same =
                        g.shape() == want.shape() && g.iter().zip(*want).all(|(a, b)| bits(a) == bits(b));
                    assert!(same, "stream form {k} {what} axis {ax}: {g:?} against {want:?}");
                }
            }
        }
    }
    let x = uniform(rng, 1920);
    let hf = ArrayD::from_shape_vec(IxDyn(&[4, 3, 10, 2, 8]), x.clone()).unwrap();
    let d = device::<T>(ctx, &x, &[4, 3, 10, 2, 8])?;
    for m in METHODS {
        let got = d.quantile_axis_method(0.1337, -1, m)?.to_ndarray()?;
        let gotp = d.percentile_axis_method(13.37, -1, m)?.to_ndarray()?;
        assert!(got.shape() == [4, 3, 10, 2] && gotp.shape() == [4, 3, 10, 2]);
        for ((lane, &g), &gp) in hf.lanes(Axis(4)).into_iter().zip(&got).zip(&gotp) {
            let (l, what) = (lane.to_vec(), format!("{name} (4, 3, 10, 2, 8) lane {lane:?}"));
            let want = [np_quantile(&l, 0.1337, m), np_quantile(&l, 13.37 / 100.0, m)];
            expect(&[g, gp], &want, m, 10.0, &what);
        }
    }
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn cupys_shapes_and_the_stream_forms_match() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let (mut rng, stream) = (Rng::new(0xc0_9e), Stream::new(&ctx)?);
    cupy_cases::<f64>(&ctx, &mut rng, &stream)?;
    cupy_cases::<f32>(&ctx, &mut rng, &stream)?;
    cupy_cases::<i32>(&ctx, &mut rng, &stream)?;
    cupy_cases::<u8>(&ctx, &mut rng, &stream)
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_quantile_outside_its_range_is_an_error_in_every_form() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let stream = Stream::new(&ctx)?;
    let d = device::<f64>(&ctx, &[3.0, 1.0, 2.0, 5.0, 4.0, 6.0], &[2, 3])?;
    let i = device::<u8>(&ctx, &[3.0, 1.0, 2.0], &[3])?;
    let bad = [1.5, -0.1, 1.0 + f64::EPSILON, -1e-300, f64::NAN, f64::INFINITY];
    for (q, m) in pairs(&bad) {
        let p = q * 100.0;
        // The quantile forms, then the percentile forms.
        let results = [
            d.quantile_method(q, m).map(drop),
            d.quantile_axis_method(q, -1, m).map(drop),
            d.nanquantile_method(q, m).map(drop),
            d.nanquantile_axis_method(q, 0, m).map(drop),
            i.quantile_method(q, m).map(drop),
            d.on(&stream).quantile_axis_method(q, 1, m).map(drop),
            d.percentile_method(p, m).map(drop),
            d.percentile_axis_method(p, 1, m).map(drop),
            d.nanpercentile_method(p, m).map(drop),
            d.nanpercentile_axis_method(p, -2, m).map(drop),
            i.percentile_method(p, m).map(drop),
            d.on(&stream).nanpercentile_method(p, m).map(drop),
        ];
        for (k, r) in results.into_iter().enumerate() {
            let (v, range) = if k < 6 { (q, "0..=1") } else { (p, "0..=100") };
            match r {
                Err(Error::Shape(ArrayShapeError::QuantileOutOfRange { q: got, range: r, .. })) => {
                    let what = format!("form {k} {m:?}: {got} outside {r}");
                    assert!(got.to_bits() == v.to_bits() && r == range, "{what}");
                }
                Err(e) => panic!("form {k} {m:?} {v}: {e}"),
                Ok(()) => panic!("form {k} {m:?}: {v} accepted"),
            }
        }
    }
    // The ends are in range, for every method; a bad axis is another error. A 0-d array is its
    // one element; an empty one's `nan` forms NaN (NumPy's `nanquantile`; `quantile` raises).
    let (zero_d, empty) = (device::<f64>(&ctx, &[4.0], &[])?, device::<f64>(&ctx, &[], &[0])?);
    for m in METHODS {
        assert_eq!(zero_d.quantile_method(0.3, m)?, 4.0, "0-d {m:?}");
        assert!(empty.nanquantile_method(0.3, m)?.is_nan() && empty.nanpercentile_method(30.0, m)?.is_nan());
        let ends = [d.quantile_method(0.0, m)?, d.percentile_method(100.0, m)?];
        let ends_u8 = [i.nanquantile_method(1.0, m)?, i.percentile_method(0.0, m)?];
        assert_eq!((ends, ends_u8), ([1.0, 6.0], [3.0, 1.0]), "{m:?}");
        assert!(d.quantile_axis_method(0.5, 2, m).is_err());
    }
    Ok(())
}

/// NumPy's `median` of a lane: NaN when it is empty or holds a NaN, else the middle element or
/// the mean of the two middle ones.
fn np_median(lane: &[f64]) -> f64 {
    if lane.is_empty() || lane.iter().any(|x| x.is_nan()) {
        return f64::NAN;
    }
    let mut v = lane.to_vec();
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let h = v.len() / 2;
    if v.len() % 2 == 1 {
        v[h]
    } else {
        (v[h - 1] + v[h]) / 2.0
    }
}

/// `host`'s lanes over `axes` (`None`: all; negative from the end), each in C order of those
/// axes, one per element of the other axes in C order; and the shape NumPy gives the result
/// of one `q` (the reduced axes at length 1 with `keepdims`).
fn lanes_over(host: &ArrayD<f64>, axes: Option<&[isize]>, keepdims: bool) -> (Vec<Vec<f64>>, Vec<usize>) {
    let nd = host.ndim();
    let mut reduced: Vec<usize> = match axes {
        None => (0..nd).collect(),
        Some(a) => a
            .iter()
            .map(|&k| {
                if k < 0 {
                    (k + nd as isize) as usize
                } else {
                    k as usize
                }
            })
            .collect(),
    };
    reduced.sort_unstable();
    let kept: Vec<usize> = (0..nd).filter(|k| !reduced.contains(k)).collect();
    let order: Vec<usize> = kept.iter().chain(&reduced).copied().collect();
    let moved = host.view().permuted_axes(IxDyn(&order));
    let flat: Vec<f64> = moved.iter().copied().collect();
    let m: usize = reduced.iter().map(|&k| host.shape()[k]).product();
    let rows: usize = kept.iter().map(|&k| host.shape()[k]).product();
    let lanes = (0..rows).map(|r| flat[r * m..(r + 1) * m].to_vec()).collect();
    let shape = (0..nd)
        .filter_map(|k| match (reduced.contains(&k), keepdims) {
            (false, _) => Some(host.shape()[k]),
            (true, true) => Some(1),
            (true, false) => None,
        })
        .collect();
    (lanes, shape)
}

/// The list forms over several axes (`quantile_axes`, `percentile_axes`, `nanquantile_axes`,
/// `nanpercentile_axes`, `median_axes`, `nanmedian_axes`; NumPy's `quantile(a, q, axis=(..),
/// keepdims=)` with `q` an array, CuPy's `test_percentile_*`/`test_quantile_*` and
/// `test_median_axis_sequence`): every set of axes of 3-D and 4-D arrays (and transposed views),
/// `None`, negative axes, with and without `keepdims`, against the port lane by lane.
fn listed<T: Elem>(ctx: &Context, rng: &mut Rng, stream: &Stream) -> gpu_runtime::Result<()> {
    let name = std::any::type_name::<T>();
    for shape in [vec![2usize, 3, 4], vec![4, 2, 3, 2], vec![3, 1, 5]] {
        let n: usize = shape.iter().product();
        let mut h: Vec<T> = (0..n).map(|_| T::draw(rng)).collect();
        if let Some(nan) = T::NAN {
            for x in h.iter_mut().filter(|_| rng.next_u64().is_multiple_of(5)) {
                *x = nan;
            }
        }
        let host = ArrayD::from_shape_vec(IxDyn(&shape), h).unwrap();
        let hf = host.mapv(|x| x.host());
        let s = scale(hf.as_slice().unwrap());
        let d = DeviceArray::from_ndarray(ctx, &host)?;
        let nd = shape.len() as isize;
        // Every subset of the axes, each axis negative in every other subset, and `None`.
        let mut sets: Vec<Option<Vec<isize>>> = vec![None];
        for bits in 0u32..1 << nd {
            let set: Vec<isize> = (0..nd)
                .filter(|k| bits & (1 << k) != 0)
                .map(|k| if bits % 2 == 1 { k - nd } else { k })
                .rev()
                .collect();
            sets.push(Some(set));
        }
        let qs: Vec<f64> = (0..5)
            .map(|_| (rng.f64() + 1.0) / 2.0)
            .chain([0.0, 1.0])
            .collect();
        let ps: Vec<f64> = qs.iter().map(|q| q * 100.0).collect();
        for (dv, hv) in [(d.view(), hf.view()), (d.t(), hf.t())] {
            let hv = hv.to_owned();
            for set in &sets {
                let axes = set.as_deref();
                for keepdims in [false, true] {
                    let (lanes, one) = lanes_over(&hv, axes, keepdims);
                    let what = format!("{name} {:?} axes {axes:?} keepdims {keepdims}", hv.shape());
                    let listed_shape: Vec<usize> =
                        [qs.len()].into_iter().chain(one.iter().copied()).collect();
                    for m in METHODS {
                        let got = [
                            dv.quantile_axes(&qs, axes, keepdims, m)?,
                            dv.percentile_axes(&ps, axes, keepdims, m)?,
                            dv.nanquantile_axes(&qs, axes, keepdims, m)?,
                            dv.on(stream).nanpercentile_axes(&ps, axes, keepdims, m)?,
                        ];
                        for (form, g) in got.iter().enumerate() {
                            let g = g.to_ndarray()?;
                            assert_eq!(g.shape(), listed_shape.as_slice(), "{what} form {form}");
                            let per_q = g.len() / qs.len();
                            for (k, &q) in qs.iter().enumerate() {
                                let q = if form % 2 == 1 { ps[k] / 100.0 } else { q };
                                let values: Vec<T::Mean> =
                                    g.iter().skip(k * per_q).take(per_q).copied().collect();
                                let want: Vec<f64> = lanes
                                    .iter()
                                    .map(|l| [np_quantile, np_nanquantile][form / 2](l, q, m))
                                    .collect();
                                expect(&values, &want, m, s, &format!("{what} form {form} q {q}"));
                            }
                        }
                    }
                    let medians = [
                        dv.median_axes(axes, keepdims)?,
                        dv.on(stream).nanmedian_axes(axes, keepdims)?,
                    ];
                    for (form, g) in medians.iter().enumerate() {
                        let g = g.to_ndarray()?;
                        assert_eq!(g.shape(), one.as_slice(), "{what} median form {form}");
                        let want: Vec<f64> = lanes
                            .iter()
                            .map(|l| {
                                let kept: Vec<f64> =
                                    l.iter().copied().filter(|x| form == 0 || !x.is_nan()).collect();
                                np_median(&kept)
                            })
                            .collect();
                        let got: Vec<T::Mean> = g.iter().copied().collect();
                        // The mean of two middle elements is exact in `f64`, then rounded once.
                        expect(&got, &want, M::Midpoint, s, &format!("{what} median form {form}"));
                    }
                }
            }
        }
    }
    // The one-number forms over all axes and one axis agree with the list forms bit for bit.
    let x: Vec<f64> = (0..60).map(|_| T::draw(rng).host()).collect();
    let d = device::<T>(ctx, &x, &[3, 4, 5])?;
    let bits = |v: &T::Mean| v.f().to_bits();
    for m in METHODS {
        let all = d.quantile_axes(&[0.3], None, false, m)?.to_vec()?;
        assert_eq!(
            bits(&all[0]),
            bits(&d.quantile_method(0.3, m)?),
            "{name} {m:?} all axes"
        );
        let one = d.quantile_axes(&[0.3], Some(&[1]), false, m)?.to_vec()?;
        let axis = d.quantile_axis_method(0.3, 1, m)?.to_vec()?;
        assert!(
            one.iter().zip(&axis).all(|(a, b)| bits(a) == bits(b)),
            "{name} {m:?} axis 1"
        );
    }
    assert_eq!(
        bits(&d.median_axes(None, false)?.to_vec()?[0]),
        bits(&d.median()?)
    );
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn lists_of_q_over_several_axes_match_the_numpy_port() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let (mut rng, stream) = (Rng::new(0x11_57ed), Stream::new(&ctx)?);
    listed::<f64>(&ctx, &mut rng, &stream)?;
    listed::<f32>(&ctx, &mut rng, &stream)?;
    listed::<f16>(&ctx, &mut rng, &stream)?;
    listed::<i32>(&ctx, &mut rng, &stream)?;
    listed::<u8>(&ctx, &mut rng, &stream)
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn the_list_forms_refuse_bad_axes_and_numbers_and_keep_an_empty_list() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let d = device::<f64>(&ctx, &[3.0, 1.0, 2.0, 5.0, 4.0, 6.0], &[2, 3])?;
    let m = M::Linear;
    match d.quantile_axes(&[0.5, 1.5], None, false, m) {
        Err(Error::Shape(ArrayShapeError::QuantileOutOfRange { q, .. })) => assert_eq!(q, 1.5),
        other => panic!("q 1.5: {other:?}"),
    }
    match d.percentile_axes(&[50.0, -1.0], Some(&[0]), true, m) {
        Err(Error::Shape(ArrayShapeError::QuantileOutOfRange { q, .. })) => assert_eq!(q, -1.0),
        other => panic!("p -1: {other:?}"),
    }
    for axes in [&[0, -2][..], &[1, 1], &[2], &[-3]] {
        let dup = axes.len() == 2 && (axes[0] == axes[1] || axes[1] == -2);
        match d.median_axes(Some(axes), false) {
            Err(Error::Shape(ArrayShapeError::DuplicateAxis { .. })) if dup => {}
            Err(Error::Shape(ArrayShapeError::AxisOutOfBounds { .. })) if !dup => {}
            other => panic!("axes {axes:?}: {other:?}"),
        }
    }
    // No `q`: a leading axis of length 0. No axes: each element its own lane.
    assert_eq!(d.quantile_axes(&[], Some(&[1]), false, m)?.shape(), &[0, 2]);
    let none = d.quantile_axes(&[0.2, 0.9], Some(&[]), false, m)?.to_vec()?;
    assert_eq!(none, [3.0, 1.0, 2.0, 5.0, 4.0, 6.0, 3.0, 1.0, 2.0, 5.0, 4.0, 6.0]);
    // All axes kept as length 1.
    let kept = d.median_axes(None, true)?;
    assert_eq!((kept.shape(), kept.to_vec()?), (&[1usize, 1][..], vec![3.5]));
    Ok(())
}
