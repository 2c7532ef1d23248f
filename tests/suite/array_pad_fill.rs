//! NumPy's `pad` modes that compute their border, on a GPU: `pad_stat` (`maximum`, `minimum`,
//! `mean`, `median`, with `stat_length` none, one pair, one per axis and past the axis),
//! `pad_constant_values`, `pad_linear_ramp` / `PadMode::LinearRamp` and `PadMode::Empty`, on
//! random `f64`, `f32`, `f16`, `i32`, `u8` and `i64` data over 0-d to 3-d shapes and transposed
//! views, widths one pair for every axis and one per axis. The reference is NumPy's algorithm
//! written again on the host over `ndarray` lanes: the axes are padded in turn, each border
//! computed from the middle of the array padded so far (so a corner is the later axis's
//! value); statistics from sorted lanes and exact integer sums (integers rounded half to even,
//! NumPy's `_round_if_needed`); the ramp as NumPy's `linspace(end, edge, width,
//! endpoint=False)`, with its other formula where any step of a border is 0. Then CuPy's
//! `test_pad.py` cases and NumPy's quirks by value (NumPy 2.4), the stream forms and the
//! refusals.
//!
//! Floats: a mean or median may be an ulp off the host's (the device sums in another order;
//! both sum in `f64`, as the library documents, where NumPy sums `float32` in `float32`, a few
//! ulps apart).
//! The ramp is computed as NumPy's `linspace` computes it from what `_as_pairs` hands it: one
//! pair of end values for every axis (NumPy scalars) in `f64`, rounded once; a pair per axis
//! (Python numbers) in a float element type, each operation rounded to it; `f32` and `f64`
//! compared exactly, `f16` within an ulp because the host rounds with
//! `half::f16::from_f64`, which goes through `f32` on x86 with F16C (a double rounding that the
//! device's `__double2half` does not make).

use std::any::type_name;

use gpu_runtime::gpuarray::{DeviceArray, DeviceArrayView, MeanType, PadMode, PadStat};
use gpu_runtime::half::f16;
use gpu_runtime::ndarray::{Array, ArrayD, ArrayViewMut1, Axis, IxDyn, Slice};
use gpu_runtime::types::Complex64;
use gpu_runtime::{ArgumentError, ArrayShapeError, Context, Error, Result, Stream};
use gpu_suite::Rng;

/// An element type of these tests, through `f64` (exact for every value drawn here).
trait Num: MeanType + PartialOrd {
    /// Integers: compared exactly, means and medians rounded, ramps floored.
    const INT: bool;
    /// The type's epsilon, and the spacing of its values nearest 0 (0 for integers).
    const EPS: (f64, f64);
    /// The ulps a ramp may be off the host's (see the module's comment).
    const RAMP_ULPS: f64;
    fn f(self) -> f64;
    /// `x` rounded to the nearest value (integers: `x` is integral already).
    fn from_f(x: f64) -> Self;
    fn draw(r: &mut Rng) -> Self;
}

macro_rules! num {
    ($($t:ty: $int:expr, $eps:expr, $ramp:expr, |$x:ident| $to:expr, |$y:ident| $from:expr,
       |$r:ident| $draw:expr;)*) => {$(
        impl Num for $t {
            const INT: bool = $int;
            const EPS: (f64, f64) = $eps;
            const RAMP_ULPS: f64 = $ramp;
            fn f(self) -> f64 { let $x = self; $to }
            fn from_f($y: f64) -> Self { $from }
            fn draw($r: &mut Rng) -> Self { $draw }
        }
    )*};
}

// Floats within 4; `i64` within 2^39, where a mean's sum and a median's two middle elements
// stay exact in `f64`.
num! {
    f64: false, (f64::EPSILON, 5e-324), 0.0, |x| x, |y| y, |r| r.f64() * 4.0;
    f32: false, (f32::EPSILON as f64, 1.5e-45), 0.0, |x| x.into(), |y| y as f32, |r| r.f32() * 4.0;
    f16: false, (9.765625e-4, 5.960464477539063e-8), 1.0, |x| x.to_f64(), |y| f16::from_f64(y),
        |r| f16::from_f32(r.f32() * 4.0);
    i32: true, (0.0, 0.0), 0.0, |x| x.into(), |y| y as i32, |r| r.next_u64() as i32;
    u8: true, (0.0, 0.0), 0.0, |x| x.into(), |y| y as u8, |r| r.next_u64() as u8;
    i64: true, (0.0, 0.0), 0.0, |x| x as f64, |y| y as i64, |r| (r.next_u64() as i64) >> 24;
}

/// Whether `got` is within `ulps` of `want`, each ulp with `1e-13` more (the error of an `f64`
/// sum of a dozen elements within 4, which a mean near 0 keeps); integers exactly.
fn near<T: Num>(got: T, want: T, ulps: f64) -> bool {
    if T::INT || ulps == 0.0 {
        return got == want;
    }
    (got.f() - want.f()).abs() <= ulps * ((T::EPS.0 * want.f().abs()).max(T::EPS.1) + 1e-13)
}

fn check<T: Num>(got: &DeviceArray<T, IxDyn>, want: &ArrayD<T>, ulps: f64, what: &str) -> Result<()> {
    assert_eq!(got.shape(), want.shape(), "{what}");
    for (i, (g, &w)) in got.to_vec()?.into_iter().zip(want.iter()).enumerate() {
        assert!(near(g, w, ulps), "{what}: element {i}: got {g:?}, want {w:?}");
    }
    Ok(())
}

fn host<T: Num>(shape: &[usize], values: impl IntoIterator<Item = f64>) -> ArrayD<T> {
    let values = values.into_iter().map(T::from_f).collect();
    Array::from_shape_vec(IxDyn(shape), values).expect("as many values as the shape holds")
}

/// NumPy's result `want` (of `shape`), exactly.
fn check_numpy<T: Num>(got: &DeviceArray<T, IxDyn>, shape: &[usize], want: &[f64], what: &str) -> Result<()> {
    check(
        got,
        &host(shape, want.iter().copied()),
        0.0,
        &format!("{} {what}", type_name::<T>()),
    )
}

fn pairs<T: Num>(v: &[(usize, usize)]) -> Vec<(T, T)> {
    v.iter()
        .map(|&(x, y)| (T::from_f(x as f64), T::from_f(y as f64)))
        .collect()
}

fn ints(v: &[i32]) -> Vec<f64> {
    v.iter().map(|&x| x.into()).collect()
}

/// One pair for every axis, or one per axis (NumPy's `pad_width`, `stat_length`, ...).
fn expand<P: Copy>(pairs: &[P], nd: usize) -> Vec<P> {
    if pairs.len() == 1 {
        vec![pairs[0]; nd]
    } else {
        pairs.to_vec()
    }
}

/// NumPy's `pad`: axis by axis, the array so far in the middle of one grown along axis `k`,
/// then `border(k, lanes, b, n)` writes the borders of each lane along `k` (its middle at
/// `b..b + n`).
fn host_pad<T: Num>(
    a: &ArrayD<T>,
    widths: &[(usize, usize)],
    mut border: impl FnMut(usize, &mut [ArrayViewMut1<'_, T>], usize, usize),
) -> ArrayD<T> {
    let mut cur = a.clone();
    for (k, &(b, e)) in expand(widths, a.ndim()).iter().enumerate() {
        if b + e == 0 {
            continue;
        }
        let n = cur.shape()[k];
        let mut shape = cur.shape().to_vec();
        shape[k] = b + n + e;
        let mut out = ArrayD::from_elem(IxDyn(&shape), T::from_f(0.0));
        out.slice_axis_mut(Axis(k), Slice::from(b..b + n)).assign(&cur);
        let mut lanes: Vec<_> = out.lanes_mut(Axis(k)).into_iter().collect();
        border(k, &mut lanes, b, n);
        cur = out;
    }
    cur
}

/// Fills a lane's borders (its middle at `b..b + n`) with `first` and `last`.
fn fill_ends<T: Num>(lane: &mut ArrayViewMut1<'_, T>, b: usize, n: usize, first: T, last: T) {
    lane.slice_axis_mut(Axis(0), Slice::from(..b)).fill(first);
    lane.slice_axis_mut(Axis(0), Slice::from(b + n..)).fill(last);
}

/// `num / den` rounded to the nearest integer, ties to even.
fn round_ratio(num: i128, den: i128) -> f64 {
    let (q, r) = (num.div_euclid(den), num.rem_euclid(den));
    (q + i128::from(2 * r > den || (2 * r == den && q % 2 != 0))) as f64
}

fn stat_of<T: Num>(v: &[T], stat: PadStat) -> T {
    let mut s = v.to_vec();
    s.sort_by(|x, y| x.partial_cmp(y).expect("no NaN drawn"));
    let (n, int) = (s.len(), |x: T| x.f() as i128);
    match stat {
        PadStat::Maximum => s[n - 1],
        PadStat::Minimum => s[0],
        PadStat::Mean if T::INT => T::from_f(round_ratio(s.iter().map(|&x| int(x)).sum(), n as i128)),
        PadStat::Mean => T::from_f(s.iter().map(|x| x.f()).sum::<f64>() / n as f64),
        PadStat::Median if n % 2 == 1 => s[n / 2],
        PadStat::Median if T::INT => T::from_f(round_ratio(int(s[n / 2 - 1]) + int(s[n / 2]), 2)),
        PadStat::Median => T::from_f((s[n / 2 - 1].f() + s[n / 2].f()) / 2.0),
    }
}

/// `lengths` empty is NumPy's `stat_length=None`: the whole axis, as is a length past it.
fn host_stat<T: Num>(
    a: &ArrayD<T>,
    widths: &[(usize, usize)],
    stat: PadStat,
    lengths: &[(usize, usize)],
) -> ArrayD<T> {
    let lengths = if lengths.is_empty() {
        vec![(usize::MAX, usize::MAX); a.ndim()]
    } else {
        expand(lengths, a.ndim())
    };
    host_pad(a, widths, |k, lanes, b, n| {
        let (lb, la) = (lengths[k].0.min(n), lengths[k].1.min(n));
        for lane in lanes {
            let middle: Vec<T> = lane.iter().skip(b).take(n).copied().collect();
            let (first, last) = (stat_of(&middle[..lb], stat), stat_of(&middle[n - la..], stat));
            fill_ends(lane, b, n, first, last);
        }
    })
}

fn host_constant<T: Num>(a: &ArrayD<T>, widths: &[(usize, usize)], values: &[(T, T)]) -> ArrayD<T> {
    let values = expand(values, a.ndim());
    host_pad(a, widths, |k, lanes, b, n| {
        let (first, last) = values[k];
        lanes
            .iter_mut()
            .for_each(|lane| fill_ends(lane, b, n, first, last))
    })
}

/// NumPy's `linspace(end, edge, width, endpoint=False)` for the edges of one border: in `f64`
/// (integers then floored), or for a float `in_t` each operation rounded to `T`; where any
/// step of the border is 0, every value is `t / width * delta + end`, else
/// `t * (delta / width) + end`.
fn linspace<T: Num>(edges: impl Iterator<Item = f64>, end: f64, width: usize, in_t: bool) -> Vec<Vec<T>> {
    let r = |x: f64| if T::INT || !in_t { x } else { T::from_f(x).f() };
    let w = width as f64;
    let deltas: Vec<f64> = edges.map(|e| r(e - end)).collect();
    let any_zero = deltas.iter().any(|&d| r(d / w) == 0.0);
    let value = |t: f64, d: f64| {
        let y = r(if any_zero { r(t / w) * d } else { t * r(d / w) });
        let y = r(y + end);
        T::from_f(if T::INT { y.floor() } else { y })
    };
    let ramp = |d: f64| (0..width).map(|t| value(t as f64, d)).collect();
    deltas.into_iter().map(ramp).collect()
}

/// `linear_ramp`: the border after an axis is the ramp toward its last element, reversed; in
/// the element type for end values per axis, as NumPy's `_as_pairs` hands them on.
fn host_ramp<T: Num>(a: &ArrayD<T>, widths: &[(usize, usize)], ends: &[(T, T)]) -> ArrayD<T> {
    let in_t = ends.len() > 1;
    let ends = expand(ends, a.ndim());
    host_pad(a, widths, |k, lanes, b, n| {
        let e = lanes.first().map_or(0, |l| l.len() - b - n);
        let left = linspace::<T>(lanes.iter().map(|l| l[b].f()), ends[k].0.f(), b, in_t);
        let right = linspace::<T>(lanes.iter().map(|l| l[b + n - 1].f()), ends[k].1.f(), e, in_t);
        for ((lane, l), r) in lanes.iter_mut().zip(&left).zip(&right) {
            lane.iter_mut().zip(l).for_each(|(x, &v)| *x = v);
            let after = lane.iter_mut().skip(b + n);
            after.zip(r.iter().rev()).for_each(|(x, &v)| *x = v);
        }
    })
}

/// Runs `f` on random arrays of 0 to 3 axes, and on the transposed views of the 2-d and 3-d.
fn each_view<T: Num>(
    ctx: &Context,
    rng: &mut Rng,
    mut f: impl FnMut(&mut Rng, &ArrayD<T>, &DeviceArrayView<'_, T, IxDyn>) -> Result<()>,
) -> Result<()> {
    for shape in [vec![], vec![7], vec![4, 5], vec![2, 3, 4]] {
        let n: usize = shape.iter().product();
        let h = host::<T>(&shape, (0..n).map(|_| T::draw(rng).f()).collect::<Vec<_>>());
        let d = DeviceArray::from_ndarray(ctx, &h)?;
        f(rng, &h, &d.view())?;
        if shape.len() > 1 {
            f(rng, &h.t().to_owned(), &d.t())?;
        }
    }
    Ok(())
}

/// The statistics, and the ulps each may be off the host's.
const STATS: [(PadStat, f64); 4] = [
    (MAX, 0.0),
    (MIN, 0.0),
    (PadStat::Mean, 1.0),
    (PadStat::Median, 1.0),
];
const MAX: PadStat = PadStat::Maximum;
const MIN: PadStat = PadStat::Minimum;

fn stats_match<T: Num>(ctx: &Context, rng: &mut Rng) -> Result<()> {
    each_view::<T>(ctx, rng, |_, host, dev| {
        let nd = host.ndim();
        let per_axis: Vec<_> = (0..nd).map(|k| (k % 3, (2 * k + 1) % 4)).collect();
        let lengths: Vec<_> = (0..nd).map(|k| (k + 1, 3 - k)).collect();
        let cases = [
            (vec![(2, 3)], vec![]),
            (per_axis.clone(), vec![(2, 1)]),
            (vec![(1, 0)], lengths.clone()),
            (per_axis, vec![(9, 50)]),
            (vec![(3, 2)], lengths),
        ];
        for (widths, lengths) in &cases {
            for (stat, ulps) in STATS {
                let want = host_stat(host, widths, stat, lengths);
                let what = format!(
                    "{} {:?} {stat:?} {widths:?} {lengths:?}",
                    type_name::<T>(),
                    host.shape()
                );
                check(&dev.pad_stat(widths, stat, lengths)?, &want, ulps, &what)?;
            }
        }
        Ok(())
    })
}

fn ramps_and_constants_match<T: Num>(ctx: &Context, rng: &mut Rng) -> Result<()> {
    each_view::<T>(ctx, rng, |rng, host, dev| {
        let nd = host.ndim();
        let mut pair = || (T::draw(rng), T::draw(rng));
        let per_axis: Vec<_> = (0..nd).map(|k| ((k + 2) % 4, (k + 1) % 3)).collect();
        let values: Vec<_> = (0..nd).map(|_| pair()).collect();
        // The first element is on the border before axis 0, a step of 0: NumPy's other formula.
        let first = *host.iter().next().expect("an element");
        let cases = [
            (vec![(2, 3)], vec![pair()]),
            (per_axis, values),
            (vec![(3, 1)], vec![(first, pair().1)]),
        ];
        for (widths, ends) in &cases {
            let what = format!("{} {:?} {widths:?} {ends:?}", type_name::<T>(), host.shape());
            let (got, want) = (dev.pad_linear_ramp(widths, ends)?, host_ramp(host, widths, ends));
            check(&got, &want, T::RAMP_ULPS, &format!("ramp {what}"))?;
            let (got, want) = (
                dev.pad_constant_values(widths, ends)?,
                host_constant(host, widths, ends),
            );
            check(&got, &want, 0.0, &format!("constant {what}"))?;
        }
        let v = pair().0;
        let (got, want) = (
            dev.pad(&[(1, 2)], PadMode::LinearRamp(v))?,
            host_ramp(host, &[(1, 2)], &[(v, v)]),
        );
        check(
            &got,
            &want,
            T::RAMP_ULPS,
            &format!("{} {:?} LinearRamp({v:?})", type_name::<T>(), host.shape()),
        )
    })
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn statistics_match_the_host() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(0x9AD5);
    stats_match::<f64>(&ctx, &mut rng)?;
    stats_match::<f32>(&ctx, &mut rng)?;
    stats_match::<f16>(&ctx, &mut rng)?;
    stats_match::<i32>(&ctx, &mut rng)?;
    stats_match::<u8>(&ctx, &mut rng)?;
    stats_match::<i64>(&ctx, &mut rng)
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn linear_ramps_and_constants_match_the_host() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(0x4A3B);
    ramps_and_constants_match::<f64>(&ctx, &mut rng)?;
    ramps_and_constants_match::<f32>(&ctx, &mut rng)?;
    ramps_and_constants_match::<f16>(&ctx, &mut rng)?;
    ramps_and_constants_match::<i32>(&ctx, &mut rng)?;
    ramps_and_constants_match::<u8>(&ctx, &mut rng)?;
    ramps_and_constants_match::<i64>(&ctx, &mut rng)
}

// NumPy 2.4's results for CuPy's `test_pad.py` arrays: `np.pad(np.arange(60).reshape(5, 12), ...)`
// and `np.pad(np.arange(6).reshape(2, 3), ...)`.
const MAX_60: [i32; 152] = [
    14, 14, 14, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 23, 23, 23, 23, 2, 2, 2, 0, 1, 2, 3, 4, 5, 6,
    7, 8, 9, 10, 11, 11, 11, 11, 11, 14, 14, 14, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 23, 23, 23,
    23, 26, 26, 26, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 35, 35, 35, 35, 38, 38, 38, 36, 37, 38,
    39, 40, 41, 42, 43, 44, 45, 46, 47, 47, 47, 47, 47, 50, 50, 50, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57,
    58, 59, 59, 59, 59, 59, 50, 50, 50, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 59, 59, 59, 59, 50,
    50, 50, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 59, 59, 59, 59,
];
const MIN_60: [i32; 120] = [
    0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 8, 8, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 8, 8, 12, 12, 13,
    14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 20, 20, 24, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 32,
    32, 36, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 44, 44, 48, 48, 49, 50, 51, 52, 53, 54, 55, 56,
    57, 58, 59, 56, 56, 12, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 20, 20, 12, 12, 13, 14, 15, 16,
    17, 18, 19, 20, 21, 22, 23, 20, 20,
];
const MEAN_60_SL2: [i32; 98] = [
    6, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 16, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 10, 12, 12,
    13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 22, 24, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 34,
    36, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 46, 48, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58,
    59, 58, 42, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 52,
];
const MEDIAN_60: [i32; 152] = [
    7, 7, 7, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 15, 15, 15, 15, 1, 1, 1, 0, 1, 2, 3, 4, 5, 6, 7, 8,
    9, 10, 11, 9, 9, 9, 9, 13, 13, 13, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 21, 21, 21, 21, 25,
    25, 25, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 33, 33, 33, 33, 37, 37, 37, 36, 37, 38, 39, 40,
    41, 42, 43, 44, 45, 46, 47, 45, 45, 45, 45, 49, 49, 49, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59,
    57, 57, 57, 57, 31, 31, 31, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 39, 39, 39, 39, 31, 31, 31,
    30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 39, 39, 39, 39,
];
const CONST_1: [i32; 20] = [3, 3, 3, 3, 3, 3, 0, 1, 2, 3, 3, 3, 4, 5, 3, 3, 3, 3, 3, 3];
const CONST_12: [i32; 30] = [
    3, 3, 3, 3, 4, 4, 3, 0, 1, 2, 4, 4, 3, 3, 4, 5, 4, 4, 3, 4, 4, 4, 4, 4, 3, 4, 4, 4, 4, 4,
];
const CONST_AXES: [i32; 50] = [
    5, 5, 5, 3, 3, 3, 6, 6, 6, 6, 5, 5, 5, 0, 1, 2, 6, 6, 6, 6, 5, 5, 5, 3, 4, 5, 6, 6, 6, 6, 5, 5, 5, 4, 4,
    4, 6, 6, 6, 6, 5, 5, 5, 4, 4, 4, 6, 6, 6, 6,
];
const RAMP_1: [f64; 20] = [
    0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 3.0, 4.0, 5.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
];
const RAMP_12: [f64; 30] = [
    0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 2.0, 1.0, 0.0, 0.0, 3.0, 4.0, 5.0, 2.5, 0.0, 0.0, 1.5, 2.0,
    2.5, 1.25, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
];
const RAMP_AXES: [f64; 50] = [
    0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 2.0, 1.5, 1.0, 0.5, 0.0, 0.0,
    1.0, 2.0, 3.0, 4.0, 5.0, 3.75, 2.5, 1.25, 0.0, 0.0, 0.5, 1.0, 1.5, 2.0, 2.5, 1.875, 1.25, 0.625, 0.0,
    0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
];
const RAMP_INT_AXES: [i32; 50] = [
    9, 8, 7, 7, 7, 7, 5, 4, 2, 1, 9, 6, 3, 0, 1, 2, 1, 1, 1, 1, 9, 7, 5, 3, 4, 5, 4, 3, 2, 1, 9, 6, 3, 0, 1,
    1, 1, 1, 1, 1, 9, 5, 1, -2, -2, -2, -2, -1, 0, 1,
];
const MEAN_6: [f64; 50] = [
    2.5, 2.5, 2.5, 1.5, 2.5, 3.5, 2.5, 2.5, 2.5, 2.5, 1.0, 1.0, 1.0, 0.0, 1.0, 2.0, 1.0, 1.0, 1.0, 1.0, 4.0,
    4.0, 4.0, 3.0, 4.0, 5.0, 4.0, 4.0, 4.0, 4.0, 2.5, 2.5, 2.5, 1.5, 2.5, 3.5, 2.5, 2.5, 2.5, 2.5, 2.5, 2.5,
    2.5, 1.5, 2.5, 3.5, 2.5, 2.5, 2.5, 2.5,
];

type Pairs = &'static [(usize, usize)];
/// NumPy's result: its shape and values.
type Numpy = ([usize; 2], &'static [i32]);

/// `np.arange(60).reshape(5, 12)`: the statistic, widths, `stat_length`, NumPy's result.
const STAT_CASES: [(PadStat, Pairs, Pairs, Numpy); 4] = [
    (MAX, W, L, ([8, 19], &MAX_60)),
    (MIN, &[(1, 2)], &[(2, 4)], ([8, 15], &MIN_60)),
    // Integers only: means and medians rounded half to even, axis by axis (a corner from the
    // rounded border of axis 0).
    (PadStat::Mean, &[(1, 1)], &[(2, 2)], ([7, 14], &MEAN_60_SL2)),
    (PadStat::Median, W, L, ([8, 19], &MEDIAN_60)),
];
const W: Pairs = &[(1, 2), (3, 4)];
const L: Pairs = &[(2, 4), (3, 5)];

/// `np.arange(6).reshape(2, 3)`: widths, `constant_values`, NumPy's result.
const CONSTANT_CASES: [(Pairs, Pairs, Numpy); 3] = [
    (&[(1, 1)], &[(3, 3)], ([4, 5], &CONST_1)),
    (&[(1, 2)], &[(3, 4)], ([5, 6], &CONST_12)),
    (W, &[(3, 4), (5, 6)], ([5, 10], &CONST_AXES)),
];

fn cupy_cases<T: Num>(ctx: &Context) -> Result<()> {
    let a = DeviceArray::from_ndarray(ctx, &host::<T>(&[5, 12], (0..60).map(f64::from)))?;
    let b = DeviceArray::from_ndarray(ctx, &host::<T>(&[2, 3], (0..6).map(f64::from)))?;
    for (stat, widths, lengths, (shape, want)) in STAT_CASES {
        if T::INT || stat == MAX || stat == MIN {
            let what = format!("{stat:?} {widths:?} stat_length {lengths:?}");
            check_numpy(&a.pad_stat(widths, stat, lengths)?, &shape, &ints(want), &what)?;
        }
    }
    for (widths, values, (shape, want)) in CONSTANT_CASES {
        let got = b.pad_constant_values(widths, &pairs::<T>(values))?;
        check_numpy(
            &got,
            &shape,
            &ints(want),
            &format!("{widths:?} constant_values {values:?}"),
        )?;
    }
    if T::INT {
        return Ok(());
    }
    // `linear_ramp` to NumPy's default end 0 (exact in every float type; CuPy tests floats).
    let ramp = |w| b.pad(w, PadMode::LinearRamp(T::from_f(0.0)));
    let cases: [(Pairs, [usize; 2], &[f64]); 3] = [
        (&[(1, 1)], [4, 5], &RAMP_1),
        (&[(1, 2)], [5, 6], &RAMP_12),
        (W, [5, 10], &RAMP_AXES),
    ];
    for (widths, shape, want) in cases {
        check_numpy(&ramp(widths)?, &shape, want, &format!("linear_ramp {widths:?}"))?;
    }
    // np.pad(np.arange(6.).reshape(2, 3), ((1, 2), (3, 4)), 'mean'); 'median' the same.
    for stat in [PadStat::Mean, PadStat::Median] {
        check_numpy(
            &b.pad_stat(W, stat, &[])?,
            &[5, 10],
            &MEAN_6,
            &format!("{stat:?}"),
        )?;
    }
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn cupy_cases_by_value() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    cupy_cases::<f64>(&ctx)?;
    cupy_cases::<f32>(&ctx)?;
    cupy_cases::<f16>(&ctx)?;
    cupy_cases::<i32>(&ctx)?;
    cupy_cases::<u8>(&ctx)?;
    cupy_cases::<i64>(&ctx)?;
    // Integers ramp in f64, floored: np.pad(np.arange(6, dtype=np.int32).reshape(2, 3),
    // ((1, 2), (3, 4)), 'linear_ramp', end_values=((7, -2), (9, 1))).
    let b = DeviceArray::from_ndarray(&ctx, &host::<i32>(&[2, 3], (0..6).map(f64::from)))?;
    let got = b.pad_linear_ramp(W, &[(7, -2), (9, 1)])?;
    check_numpy(&got, &[5, 10], &ints(&RAMP_INT_AXES), "linear_ramp end_values")
}

/// Along a border where any element's step is 0, NumPy's `linspace` takes `t / width * delta`
/// for every element, not `t * (delta / width)`, which rounds otherwise.
#[test]
#[ignore = "needs a CUDA GPU"]
fn linear_ramp_with_a_zero_step_by_value() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let column = |a: &[i32], k: usize| -> Result<Vec<i32>> {
        let d = DeviceArray::from_ndarray(&ctx, &host::<i32>(&[1, a.len()], ints(a)))?;
        let got = d.pad_linear_ramp(&[(11, 0), (0, 0)], &[(0, 0)])?.to_ndarray()?;
        Ok(got.index_axis(Axis(1), k).iter().copied().collect())
    };
    // np.pad(np.array([[0, 55]], np.int32), ((11, 0), (0, 0)), 'linear_ramp')[:, 1] floors
    // 3 / 11 * 55 to 14; alone, np.pad([[55]], ...) floors 3 * (55 / 11) to 15.
    let want = [0, 5, 10, 14, 20, 25, 29, 35, 40, 45, 50, 55];
    assert_eq!(column(&[0, 55], 1)?, want);
    assert_eq!(column(&[55], 0)?, [0, 5, 10, 15, 20, 25, 30, 35, 40, 45, 50, 55]);
    // float32, the end values per axis (Python ints: computed in float32):
    // np.pad(np.array([[0, 5]], np.float32), ((3, 0), (0, 0)), 'linear_ramp',
    // end_values=((0, 0), (0, 0)))[:, 1], then [[5]] alone.
    let column = |a: &[f64], k: usize| -> Result<Vec<f64>> {
        let d = DeviceArray::from_ndarray(&ctx, &host::<f32>(&[1, a.len()], a.iter().copied()))?;
        let got = d
            .pad_linear_ramp(&[(3, 0), (0, 0)], &[(0.0, 0.0); 2])?
            .to_ndarray()?;
        Ok(got.index_axis(Axis(1), k).iter().map(|&x| x.into()).collect())
    };
    let want = [0.0, 1.6666667461395264, 3.3333334922790527, 5.0];
    assert_eq!(column(&[0.0, 5.0], 1)?, want);
    let want = [0.0, 1.6666666269302368, 3.3333332538604736, 5.0];
    assert_eq!(column(&[5.0], 0)?, want);
    // One pair of end values (NumPy scalars): in float64, rounded once.
    // np.pad(np.float32([1]), (6, 0), 'linear_ramp').
    let one = DeviceArray::from_ndarray(&ctx, &host::<f32>(&[1], [1.0]))?;
    let got: Vec<f64> = one
        .pad(&[(6, 0)], PadMode::LinearRamp(0.0))?
        .to_vec()?
        .into_iter()
        .map(f64::from)
        .collect();
    let want = [
        0.0,
        0.1666666716337204,
        0.3333333432674408,
        0.5,
        0.6666666865348816,
        0.8333333134651184,
        1.0,
    ];
    assert_eq!(got, want);
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn empty_mode_keeps_the_middle() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(0xE3);
    let h = host::<f64>(&[3, 4, 5], (0..60).map(|_| rng.f64()).collect::<Vec<_>>());
    let d = DeviceArray::from_ndarray(&ctx, &h)?;
    for (host, dev) in [(h.clone(), d.view()), (h.t().to_owned(), d.t())] {
        for widths in [vec![(2, 1)], vec![(0, 3), (1, 0), (2, 2)]] {
            let got = dev.pad(&widths, PadMode::Empty)?.to_ndarray()?;
            let mut middle = got.view();
            for (k, &(b, e)) in expand(&widths, 3).iter().enumerate() {
                let n = host.shape()[k];
                assert_eq!(got.shape()[k], b + n + e, "{widths:?}");
                middle.slice_axis_inplace(Axis(k), Slice::from(b..b + n));
            }
            assert_eq!(middle, host.view(), "{widths:?}");
        }
    }
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn stream_forms_match_the_host() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(0x57);
    let h = host::<f32>(&[4, 5], (0..20).map(|_| rng.f64()).collect::<Vec<_>>());
    let hi = h.mapv(|x| (x * 1000.0) as i32);
    let d = DeviceArray::from_ndarray(&ctx, &h)?;
    let di = DeviceArray::from_ndarray(&ctx, &hi)?;
    let (widths, ends, lengths) = ([(1, 2), (3, 0)], [(1.5, -2.0), (0.25, 4.0)], [(2, 1), (4, 3)]);
    let stream = Stream::new(&ctx)?;
    let median = d.on(&stream).pad_stat(&widths, PadStat::Median, &lengths)?;
    let mean = di.on(&stream).pad_stat(&widths, PadStat::Mean, &lengths)?;
    let constant = d.on(&stream).pad_constant_values(&widths, &ends)?;
    let ramp = d.on(&stream).pad_linear_ramp(&widths, &ends)?;
    let mode = d.on(&stream).pad(&widths, PadMode::LinearRamp(0.5))?;
    stream.synchronize()?;
    let want = host_stat(&h, &widths, PadStat::Median, &lengths);
    check(&median, &want, 1.0, "median")?;
    let want = host_stat(&hi, &widths, PadStat::Mean, &lengths);
    check(&mean, &want, 0.0, "mean")?;
    check(&constant, &host_constant(&h, &widths, &ends), 0.0, "constant")?;
    check(&ramp, &host_ramp(&h, &widths, &ends), 0.0, "linear_ramp")?;
    check(&mode, &host_ramp(&h, &widths, &[(0.5, 0.5)]), 0.0, "LinearRamp")
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn refusals_and_empty_axes() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    // An empty axis: only constants and `Empty` extend it (NumPy's ValueError); unpadded, every
    // mode passes it through.
    let h = ArrayD::<i32>::zeros(IxDyn(&[2, 0, 3]));
    let e = DeviceArray::from_ndarray(&ctx, &h)?;
    let padded = [
        e.pad_stat(&[(1, 1)], PadStat::Maximum, &[]).err(),
        e.pad_stat(&[(0, 0), (0, 1), (0, 0)], PadStat::Mean, &[]).err(),
        e.pad_linear_ramp(&[(1, 1)], &[(0, 0)]).err(),
        e.pad(&[(1, 1)], PadMode::LinearRamp(0)).err(),
    ];
    for err in padded {
        let refused = matches!(err, Some(Error::Shape(ArrayShapeError::PadEmptyAxis { axis: 1 })));
        assert!(refused, "{err:?}");
    }
    let unpadded = [(1, 0), (0, 0), (0, 2)];
    for (stat, _) in STATS {
        assert_eq!(e.pad_stat(&unpadded, stat, &[])?.shape(), [3, 0, 5], "{stat:?}");
    }
    assert_eq!(e.pad_linear_ramp(&unpadded, &[(1, 2)])?.shape(), [3, 0, 5]);
    assert_eq!(e.pad(&[(1, 1)], PadMode::Empty)?.shape(), [4, 2, 5]);
    // np.pad(np.zeros((2, 0, 3)), 1, constant_values=((1, 2), (3, 4), (5, 6))): axis 1's border
    // (all of it) over axis 0's, axis 2's over both.
    let values = [(1, 2), (3, 4), (5, 6)];
    let got = e.pad_constant_values(&[(1, 1)], &values)?;
    check(&got, &host_constant(&h, &[(1, 1)], &values), 0.0, "constants")?;
    let g = got.to_ndarray()?;
    assert_eq!(
        (0..5).map(|j| g[&[0, 0, j][..]]).collect::<Vec<_>>(),
        [5, 3, 3, 3, 6]
    );

    // One pair, or one per axis, of widths, stat lengths and values.
    let m = DeviceArray::from_ndarray(&ctx, &host::<i32>(&[2, 2], [1.0, 2.0, 3.0, 4.0]))?;
    let counts = [
        m.pad_stat(&[(1, 1); 3], PadStat::Mean, &[]).err(),
        m.pad_stat(&[(1, 1)], PadStat::Mean, &[(1, 1); 3]).err(),
        m.pad_constant_values(&[(1, 1)], &[(0, 0); 3]).err(),
        m.pad_linear_ramp(&[(1, 1)], &[(0, 0); 3]).err(),
    ];
    for err in counts {
        let Some(Error::Shape(ArrayShapeError::ElementCounts { first, second, .. })) = err else {
            panic!("{err:?}");
        };
        assert_eq!((first, second), (2, 3));
    }
    // A maximum or minimum of no element (NumPy: "stat_length of 0 yields no value").
    for stat in [PadStat::Maximum, PadStat::Minimum] {
        let err = m.pad_stat(&[(1, 1)], stat, &[(0, 2)]).err();
        let refused = matches!(err, Some(Error::Shape(ArrayShapeError::EmptyReduction { .. })));
        assert!(refused, "{stat:?}: {err:?}");
    }
    // Complex elements have no ramp here (NumPy would draw a complex line).
    let z = Complex64::new(1.0, -2.0);
    let c = DeviceArray::from_ndarray(&ctx, &Array::from_elem(IxDyn(&[3]), z))?;
    let refusals = [
        c.pad_linear_ramp(&[(1, 1)], &[(z, z)]).err(),
        c.pad(&[(1, 1)], PadMode::LinearRamp(z)).err(),
    ];
    for err in refusals {
        let refused = matches!(
            err,
            Some(Error::Argument(ArgumentError::UndefinedOnElement { .. }))
        );
        assert!(refused, "{err:?}");
    }
    Ok(())
}
