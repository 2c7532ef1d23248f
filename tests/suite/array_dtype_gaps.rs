//! The element types that the other tests of five functions leave out, on a GPU against host
//! references written here:
//!
//! - NumPy's quantiles over several axes (`quantile_axes`, `percentile_axes`, `nanquantile_axes`
//!   on a stream, `median_axes`; and `quantile_axis`, `quantile`) in `bf16`, `i8`, `i16`, `u16`,
//!   `u32`, `u64` and `Bool`: random data (a fifth of the `bf16` elements NaN, one lane all NaN),
//!   every set of axes of 2-, 3- and 4-d arrays and of their transposes, with and without
//!   `keepdims`, by `linear` (NumPy's default), `lower`, `higher`, `nearest` and `midpoint`,
//!   against a port of NumPy 2's `_quantile` over the lanes' `f64` values. The signed integers
//!   are drawn where NumPy's `_lerp` (`b - a` in the element type) does not overflow; `Bool` is
//!   0 and 1 (NumPy refuses `quantile` of a `bool` array, whose `_lerp` subtracts, but takes
//!   `median`; the library takes both).
//! - `pad` with `PadMode::ReflectOdd` and `PadMode::SymmetricOdd` (NumPy's `reflect_type='odd'`)
//!   in `f16`, `bf16`, `i8` and `i16`: NumPy 2.4's numbers, then random arrays and transposed
//!   views with borders wider than the axis against a port of NumPy's rounds, bit for bit
//!   (`2 * edge - x` as NumPy's 16-bit loops compute it, in `float` rounded once; wrapping for
//!   the integers, as NumPy's do).
//! - `math::deg2rad`, `math::rad2deg` and `math::reciprocal` in `f16` and `bf16`: within one ulp
//!   of the host's `float` product (or quotient) rounded once (NumPy's `float16` loops), the
//!   special values (±0, ±inf, NaN, overflow) exactly; NumPy's numbers for `f16`.
//! - `nancumsum`, `nancumprod` and their `_axis` forms in `f16`, `bf16`, `i8`, `u8` and `i16`,
//!   flattened and along each axis, of arrays and transposed views: the floats with a third NaN,
//!   on data where every order of summing (or multiplying) is exact, bit for bit, and on random
//!   data within the error bound of any order in the 16-bit type; the integers in their own type,
//!   wrapping (NumPy accumulates them in `int64`; its numbers cast back are the ones here).
//! - `math::floor`, `ceil`, `trunc`, `fix` and `round` of integer arrays of every width that are
//!   strided, reversed, transposed, empty (`(0,)` and `(3, 0)`) and 0-d: the values unchanged, of
//!   their type (the result's type is checked by the compiler), in the same shape.

use std::fmt::Debug;

use gpu_runtime::gpuarray::math::{self, Round};
use gpu_runtime::gpuarray::{
    Bool, DeviceArray, DeviceArrayView, Element, MeanType, Operand, PadMode, QuantileMethod as M,
};
use gpu_runtime::half::{bf16, f16};
use gpu_runtime::ndarray::{arr0, arr1, s, Array, Array1, Array2, ArrayD, ArrayViewD, Axis, IxDyn, Slice};
use gpu_runtime::{Context, Stream};
use gpu_suite::Rng;

// ---------------------------------------------------------------------------------------------
// Quantiles over axes.

/// The methods tested: NumPy's default, and the ones that pick an element or the mean of two.
const METHODS: [M; 5] = [M::Linear, M::Lower, M::Higher, M::Nearest, M::Midpoint];

/// NumPy 2's `_quantile(lane, q, method=m)` for the methods of [`METHODS`], in NumPy's order of
/// operations (`_get_indexes`, `_get_gamma`, `_lerp`): NaN when the lane is empty or holds a NaN.
fn np_quantile(lane: &[f64], q: f64, m: M) -> f64 {
    if lane.is_empty() || lane.iter().any(|x| x.is_nan()) {
        return f64::NAN;
    }
    let mut v = lane.to_vec();
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let (n, last) = (v.len() as f64, v.len() - 1);
    let at = |k: f64| v[(k.max(0.0) as usize).min(last)];
    let index = (n - 1.0) * q;
    let vi = match m {
        M::Lower => return at(index.floor()),
        M::Higher => return at(index.ceil()),
        M::Nearest => return at(index.round_ties_even()),
        M::Midpoint => 0.5 * (index.floor() + index.ceil()),
        _ => index,
    };
    let (below, a, b) = if vi >= n - 1.0 {
        (-1.0, v[last], v[last])
    } else if vi < 0.0 {
        (0.0, v[0], v[0])
    } else {
        let k = vi.floor();
        (k, v[k as usize], v[k as usize + 1])
    };
    let t = match m {
        M::Midpoint if vi % 1.0 == 0.0 => 0.0,
        M::Midpoint => 0.5,
        _ => vi - below,
    };
    let d = b - a;
    if t >= 0.5 {
        b - d * (1.0 - t)
    } else {
        a + d * t
    }
}

/// `np_quantile` of the values that are not NaN (`_nanquantile_1d`).
fn np_nanquantile(lane: &[f64], q: f64, m: M) -> f64 {
    let kept: Vec<f64> = lane.iter().copied().filter(|x| !x.is_nan()).collect();
    np_quantile(&kept, q, m)
}

/// NumPy's `median` of a lane: NaN when it is empty or holds a NaN.
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

/// The distance in ulps between two 16-bit floats (`f16` or `bf16`, sign and magnitude) given
/// by their bits: ±0 are the same, a NaN is far from everything finite.
fn ulps(a: u16, b: u16) -> i32 {
    let key = |x: u16| {
        let m = i32::from(x & 0x7fff);
        if x & 0x8000 != 0 {
            -m
        } else {
            m
        }
    };
    (key(a) - key(b)).abs()
}

/// A quantile's result type ([`MeanType::Mean`]): whether a result agrees with the reference
/// computed in `f64` (`scale`: the largest magnitude of the data).
trait Out: Element + Copy + Debug {
    fn agrees(self, want: f64, scale: f64) -> bool;
}

impl Out for f64 {
    // The kernel computes as the port does, in `f64`; room for the last bits.
    fn agrees(self, want: f64, scale: f64) -> bool {
        (self.is_nan() && want.is_nan()) || self == want || (self - want).abs() <= 1e-13 * scale
    }
}

impl Out for bf16 {
    // Computed in `f64`, rounded once into `bf16` (once more through `f32`, at most): one ulp.
    fn agrees(self, want: f64, _scale: f64) -> bool {
        if want.is_nan() {
            return self.is_nan();
        }
        !self.is_nan() && ulps(self.to_bits(), bf16::from_f64(want).to_bits()) <= 1
    }
}

/// An element type of the quantile tests: its NaN if it has one, a random value, and the value
/// as `f64`.
trait QElem: MeanType<Mean: Out> + Copy {
    const NAN: Option<Self>;
    fn draw(rng: &mut Rng) -> Self;
    fn host(self) -> f64;
}

macro_rules! q_elems {
    ($($t:ty, $nan:expr, $draw:expr, $host:expr;)*) => {$(
        impl QElem for $t {
            const NAN: Option<Self> = $nan;
            fn draw(rng: &mut Rng) -> Self {
                let d: fn(&mut Rng) -> Self = $draw;
                d(rng)
            }
            fn host(self) -> f64 {
                let h: fn(Self) -> f64 = $host;
                h(self)
            }
        }
    )*};
}

q_elems! {
    // Few values of `bf16` in [-4, 4): ties among them.
    bf16, Some(bf16::NAN), |r| bf16::from_f64(r.f64() * 4.0), bf16::to_f64;
    // The signed types where NumPy's `b - a` in the type does not wrap: [-64, 63], [-2^14, 2^14).
    i8, None, |r| (r.next_u64() % 128) as i8 - 64, f64::from;
    i16, None, |r| (r.next_u64() % 32768) as i16 - 16384, f64::from;
    // The unsigned ones over their whole range (`b >= a`: NumPy's `b - a` never wraps).
    u16, None, |r| r.next_u64() as u16, f64::from;
    u32, None, |r| r.next_u64() as u32, f64::from;
    u64, None, |r| r.next_u64(), |x| x as f64;
    Bool, None, |r| Bool::from(r.next_u64() % 2 == 0), |x| if bool::from(x) { 1.0 } else { 0.0 };
}

/// `host`'s lanes over `axes` (`None`: all; negative from the end), each in C order of those
/// axes, one per element of the other axes in C order; and the shape of the result of one `q`
/// (the reduced axes kept at length 1 with `keepdims`).
fn lanes_over(host: ArrayViewD<f64>, axes: Option<&[isize]>, keepdims: bool) -> (Vec<Vec<f64>>, Vec<usize>) {
    let nd = host.ndim();
    let mut reduced: Vec<usize> = match axes {
        None => (0..nd).collect(),
        Some(a) => a.iter().map(|&k| k.rem_euclid(nd as isize) as usize).collect(),
    };
    reduced.sort_unstable();
    let kept: Vec<usize> = (0..nd).filter(|k| !reduced.contains(k)).collect();
    let order: Vec<usize> = kept.iter().chain(&reduced).copied().collect();
    let flat: Vec<f64> = host.view().permuted_axes(IxDyn(&order)).iter().copied().collect();
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

/// A result of a list form (a leading axis of `qs.len()`, then `one`) against `want(lane, q)`
/// for each `q` and lane.
fn check_listed<O: Out>(
    got: &ArrayD<O>,
    one: &[usize],
    lanes: &[Vec<f64>],
    qs: &[f64],
    want: impl Fn(&[f64], f64) -> f64,
    scale: f64,
    what: &str,
) {
    let shape: Vec<usize> = [qs.len()].into_iter().chain(one.iter().copied()).collect();
    assert_eq!(got.shape(), shape.as_slice(), "{what}: shape");
    let values: Vec<O> = got.iter().copied().collect();
    for (k, &q) in qs.iter().enumerate() {
        for (r, lane) in lanes.iter().enumerate() {
            let (g, w) = (values[k * lanes.len() + r], want(lane, q));
            assert!(
                g.agrees(w, scale),
                "{what} q {q} lane {lane:?}: {g:?} against {w}"
            );
        }
    }
}

/// The quantile forms over axes of `T` on random 2-, 3- and 4-d arrays and their transposes.
fn quantiles_of<T: QElem>(ctx: &Context, rng: &mut Rng, stream: &Stream) -> gpu_runtime::Result<()> {
    let name = std::any::type_name::<T>();
    for shape in [vec![6usize, 5], vec![2, 3, 4], vec![3, 1, 4, 2]] {
        let n: usize = shape.iter().product();
        let mut h: Vec<T> = (0..n).map(|_| T::draw(rng)).collect();
        if let Some(nan) = T::NAN {
            for x in h.iter_mut() {
                if rng.next_u64().is_multiple_of(5) {
                    *x = nan;
                }
            }
            // The first lane of the last axis all NaN: NaN from the `nan` forms too.
            h[..shape[shape.len() - 1]].fill(nan);
        }
        let host = ArrayD::from_shape_vec(IxDyn(&shape), h).unwrap();
        let hf = host.mapv(|x| x.host());
        let scale = hf
            .iter()
            .filter(|v| !v.is_nan())
            .fold(1.0f64, |s, v| s.max(v.abs()));
        let d = DeviceArray::from_ndarray(ctx, &host)?;
        let nd = shape.len() as isize;
        // `None`, and every subset of the axes, negative in every other subset, listed backwards.
        let mut sets: Vec<Option<Vec<isize>>> = vec![None];
        for bits in 0u32..1 << nd {
            let set: Vec<isize> = (0..nd)
                .filter(|k| bits & (1 << k) != 0)
                .map(|k| if bits % 2 == 1 { k - nd } else { k })
                .rev()
                .collect();
            sets.push(Some(set));
        }
        let qs = [0.0, 0.25, 0.5, (rng.f64() + 1.0) / 2.0, 1.0];
        let ps: Vec<f64> = qs.iter().map(|q| q * 100.0).collect();
        let ps_as_q: Vec<f64> = ps.iter().map(|p| p / 100.0).collect();
        for (dv, hv) in [(d.view(), hf.view()), (d.t(), hf.t())] {
            for set in &sets {
                let axes = set.as_deref();
                for keepdims in [false, true] {
                    let (lanes, one) = lanes_over(hv.view(), axes, keepdims);
                    let what = format!("{name} {:?} axes {axes:?} keepdims {keepdims}", hv.shape());
                    for m in METHODS {
                        let g = dv.quantile_axes(&qs, axes, keepdims, m)?.to_ndarray()?;
                        let want = |l: &[f64], q| np_quantile(l, q, m);
                        check_listed(&g, &one, &lanes, &qs, want, scale, &format!("{what} {m:?}"));
                    }
                    let g = dv.percentile_axes(&ps, axes, keepdims, M::Linear)?.to_ndarray()?;
                    let want = |l: &[f64], q| np_quantile(l, q, M::Linear);
                    check_listed(
                        &g,
                        &one,
                        &lanes,
                        &ps_as_q,
                        want,
                        scale,
                        &format!("{what} percentile"),
                    );
                    let on = dv.on(stream).nanquantile_axes(&qs, axes, keepdims, M::Linear)?;
                    stream.synchronize()?;
                    let want = |l: &[f64], q| np_nanquantile(l, q, M::Linear);
                    let what_nan = format!("{what} nanquantile on a stream");
                    check_listed(&on.to_ndarray()?, &one, &lanes, &qs, want, scale, &what_nan);
                    let g = dv.median_axes(axes, keepdims)?.to_ndarray()?;
                    assert_eq!(g.shape(), one.as_slice(), "{what} median: shape");
                    for (lane, &v) in lanes.iter().zip(&g) {
                        let w = np_median(lane);
                        assert!(v.agrees(w, scale), "{what} median {lane:?}: {v:?} against {w}");
                    }
                }
            }
            // One axis at a time, and every element.
            for axis in 0..shape.len() {
                let (lanes, one) = lanes_over(hv.view(), Some(&[axis as isize]), false);
                let g = dv.quantile_axis(0.3, axis as isize)?.to_ndarray()?;
                assert_eq!(g.shape(), one.as_slice(), "{name} quantile_axis {axis}: shape");
                for (lane, &v) in lanes.iter().zip(&g) {
                    let w = np_quantile(lane, 0.3, M::Linear);
                    assert!(
                        v.agrees(w, scale),
                        "{name} quantile_axis {axis} {lane:?}: {v:?} against {w}"
                    );
                }
            }
            let all: Vec<f64> = hv.iter().copied().collect();
            let (g, w) = (dv.quantile(0.7)?, np_quantile(&all, 0.7, M::Linear));
            assert!(
                g.agrees(w, scale),
                "{name} {:?} quantile: {g:?} against {w}",
                hv.shape()
            );
            let (g, w) = (dv.nanquantile(0.7)?, np_nanquantile(&all, 0.7, M::Linear));
            assert!(
                g.agrees(w, scale),
                "{name} {:?} nanquantile: {g:?} against {w}",
                hv.shape()
            );
        }
    }
    Ok(())
}

#[test]
fn the_quantile_port_gives_numpys_numbers() {
    // NumPy 2.4: quantile([7, 1, 10, 3, 9, 3], [0, 0.2, 0.5, 0.75, 1], method=...).
    let six = [7.0, 1.0, 10.0, 3.0, 9.0, 3.0];
    let qs = [0.0, 0.2, 0.5, 0.75, 1.0];
    let numpy: [(M, [f64; 5]); 5] = [
        (M::Linear, [1.0, 3.0, 5.0, 8.5, 10.0]),
        (M::Lower, [1.0, 3.0, 3.0, 7.0, 10.0]),
        (M::Higher, [1.0, 3.0, 7.0, 9.0, 10.0]),
        (M::Nearest, [1.0, 3.0, 3.0, 9.0, 10.0]),
        (M::Midpoint, [1.0, 3.0, 5.0, 8.0, 10.0]),
    ];
    for (m, want) in numpy {
        let got = qs.map(|q| np_quantile(&six, q, m));
        assert_eq!(got, want, "{m:?}");
    }
    // NumPy: median([True, False, True, False]) is 0.5.
    assert_eq!(np_median(&[1.0, 0.0, 1.0, 0.0]), 0.5);
    assert!(np_quantile(&[1.0, f64::NAN], 0.5, M::Linear).is_nan());
    assert_eq!(np_nanquantile(&[f64::NAN, 4.0, 2.0], 0.5, M::Linear), 3.0);
    assert_eq!(ulps(0x8000, 0x0000), 0);
    assert_eq!(ulps(0x8001, 0x0001), 2);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn quantiles_over_axes_of_the_other_element_types_match_numpys_definition() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let (mut rng, stream) = (Rng::new(0x9a90a27), Stream::new(&ctx)?);
    quantiles_of::<bf16>(&ctx, &mut rng, &stream)?;
    quantiles_of::<i8>(&ctx, &mut rng, &stream)?;
    quantiles_of::<i16>(&ctx, &mut rng, &stream)?;
    quantiles_of::<u16>(&ctx, &mut rng, &stream)?;
    quantiles_of::<u32>(&ctx, &mut rng, &stream)?;
    quantiles_of::<u64>(&ctx, &mut rng, &stream)?;
    quantiles_of::<Bool>(&ctx, &mut rng, &stream)?;
    // NumPy 2.4: median of [True, False, True, False] is 0.5; and a `u64` lane past 2^53.
    let b: Vec<Bool> = [true, false, true, false].map(Bool::from).to_vec();
    let db = DeviceArray::from_ndarray(&ctx, &Array1::from(b))?;
    assert_eq!(db.median()?, 0.5);
    let big = DeviceArray::from_ndarray(&ctx, &arr1(&[u64::MAX, 0, 1 << 60]))?;
    let got = big
        .quantile_axes(&[0.0, 0.5, 1.0], None, false, M::Lower)?
        .to_vec()?;
    assert_eq!(got, [0.0, (1u64 << 60) as f64, u64::MAX as f64]);
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// `pad` with the odd reflections.

/// A host port of NumPy's `pad(a, widths, mode, reflect_type='odd')` for `'reflect'`
/// (`include_edge` false) and `'symmetric'`: `_set_reflect_both`'s rounds, axis by axis, over
/// the region filled so far, with `twice_less(edge, x)` as NumPy's `2 * edge - x` in `T`.
fn host_pad_odd<T: Copy + Default>(
    a: &ArrayD<T>,
    widths: &[(usize, usize)],
    include_edge: bool,
    twice_less: &impl Fn(T, T) -> T,
) -> ArrayD<T> {
    let mut cur = a.clone();
    for (k, &(before, after)) in widths.iter().enumerate() {
        let len = cur.shape()[k];
        let total = before + len + after;
        let mut shape = cur.shape().to_vec();
        shape[k] = total;
        let mut grown = ArrayD::<T>::from_elem(IxDyn(&shape), T::default());
        grown
            .slice_axis_mut(Axis(k), Slice::from(before..before + len))
            .assign(&cur);
        let mut lanes: Vec<Vec<T>> = grown.lanes(Axis(k)).into_iter().map(|l| l.to_vec()).collect();
        for lane in &mut lanes {
            if len == 1 {
                let e = lane[before];
                lane.iter_mut().for_each(|x| *x = e);
                continue;
            }
            let (mut left, mut right) = (before as isize, after as isize);
            let n = len as isize;
            while left > 0 || right > 0 {
                let filled = total as isize - left - right;
                let (old, off) = if include_edge {
                    (filled / n * n, 1)
                } else {
                    ((filled - 1) / (n - 1) * (n - 1), 0)
                };
                if left > 0 {
                    let chunk = old.min(left);
                    let stop = left - off;
                    let edge = lane[left as usize];
                    let vals: Vec<T> = (0..chunk)
                        .map(|i| twice_less(edge, lane[(stop + chunk - i) as usize]))
                        .collect();
                    for (i, v) in vals.into_iter().enumerate() {
                        lane[(left - chunk) as usize + i] = v;
                    }
                    left -= chunk;
                }
                if right > 0 {
                    let chunk = old.min(right);
                    let start = total as isize - right + off - 2;
                    let edge = lane[(total as isize - right - 1) as usize];
                    let vals: Vec<T> = (0..chunk)
                        .map(|i| twice_less(edge, lane[(start - i) as usize]))
                        .collect();
                    for (i, v) in vals.into_iter().enumerate() {
                        lane[(total as isize - right) as usize + i] = v;
                    }
                    right -= chunk;
                }
            }
        }
        for (mut dst, src) in grown.lanes_mut(Axis(k)).into_iter().zip(lanes) {
            dst.iter_mut().zip(src).for_each(|(d, s)| *d = s);
        }
        cur = grown;
    }
    cur
}

/// NumPy's `2 * edge - x` of `f16`: each operation in `float`, rounded once to `f16`.
fn twice_less_f16(e: f16, x: f16) -> f16 {
    let twice = f16::from_f32(e.to_f32() + e.to_f32());
    f16::from_f32(twice.to_f32() - x.to_f32())
}

/// The same in `bf16`.
fn twice_less_bf16(e: bf16, x: bf16) -> bf16 {
    let twice = bf16::from_f32(e.to_f32() + e.to_f32());
    bf16::from_f32(twice.to_f32() - x.to_f32())
}

/// Both odd modes of random arrays of `T` (and their transposes) against the port, bit for bit
/// (`PartialEq` of the elements; no NaN is drawn), widths within and past the axis.
fn check_odd<T: Element + Copy + Default + PartialEq + Debug>(
    ctx: &Context,
    rng: &mut Rng,
    stream: &Stream,
    draw: impl Fn(&mut Rng) -> T,
    twice_less: impl Fn(T, T) -> T,
) -> gpu_runtime::Result<()> {
    let name = std::any::type_name::<T>();
    for shape in [vec![7usize], vec![2, 3], vec![1, 4], vec![3, 2, 5], vec![4, 1]] {
        let n: usize = shape.iter().product();
        let h = ArrayD::from_shape_vec(IxDyn(&shape), (0..n).map(|_| draw(rng)).collect()).unwrap();
        let d = DeviceArray::from_ndarray(ctx, &h)?;
        let widths_list: Vec<Vec<(usize, usize)>> = vec![
            vec![(1, 1)],
            vec![(2, 0)],
            vec![(0, 3)],
            (0..shape.len()).map(|k| (k + 2, 9 - 2 * k)).collect(),
            (0..shape.len()).map(|_| (13, 1)).collect(),
        ];
        let ht = h.t().to_owned();
        for (dv, hv, view) in [(d.view(), &h, "array"), (d.t(), &ht, "transpose")] {
            for widths in &widths_list {
                let all: Vec<(usize, usize)> = if widths.len() == 1 {
                    vec![widths[0]; shape.len()]
                } else {
                    widths.clone()
                };
                for (include_edge, mode) in [(false, PadMode::ReflectOdd), (true, PadMode::SymmetricOdd)] {
                    let what = format!("{name} {view} {:?} {widths:?} {mode:?}", hv.shape());
                    let want = host_pad_odd(hv, &all, include_edge, &twice_less);
                    let got = dv.pad(widths, mode)?.to_ndarray()?;
                    assert_eq!(got, want, "{what}");
                }
            }
        }
        let on = d.on(stream).pad(&[(3, 5)], PadMode::SymmetricOdd)?;
        stream.synchronize()?;
        let want = host_pad_odd(&h, &vec![(3, 5); shape.len()], true, &twice_less);
        assert_eq!(on.to_ndarray()?, want, "{name} {shape:?} on a stream");
    }
    Ok(())
}

#[test]
fn the_odd_pad_port_gives_numpys_numbers() {
    // NumPy 2.4: np.pad(np.array([100, -100, 5], np.int8), (3, 4), 'reflect'/'symmetric',
    // reflect_type='odd'), wrapping in int8.
    let a = ArrayD::from_shape_vec(IxDyn(&[3]), vec![100i8, -100, 5]).unwrap();
    let wrap = |e: i8, x: i8| e.wrapping_mul(2).wrapping_sub(x);
    let r = host_pad_odd(&a, &[(3, 4)], false, &wrap);
    assert_eq!(
        r.as_slice().unwrap(),
        [90, -61, 44, 100, -100, 5, 110, -90, -34, 71]
    );
    let r = host_pad_odd(&a, &[(3, 4)], true, &wrap);
    assert_eq!(
        r.as_slice().unwrap(),
        [-61, 44, 100, 100, -100, 5, 5, 110, -90, -90]
    );
    // np.pad(np.array([0.1, 0.7, -0.3, 2.9], np.float16), (6, 7), 'reflect', reflect_type='odd').
    let b: ArrayD<f16> =
        ArrayD::from_shape_vec(IxDyn(&[4]), [0.1, 0.7, -0.3, 2.9].map(f16::from_f64).to_vec()).unwrap();
    let r = host_pad_odd(&b, &[(6, 7)], false, &twice_less_f16);
    assert_eq!(r.mapv(f16::to_f64).as_slice().unwrap(), F16_REFLECT);
    let r = host_pad_odd(&b, &[(6, 7)], true, &twice_less_f16);
    assert_eq!(r.mapv(f16::to_f64).as_slice().unwrap(), F16_SYMMETRIC);
    let m = [1.3, -0.7, 0.2, 5.1, 0.01, -2.2].map(f16::from_f64).to_vec();
    let m = ArrayD::from_shape_vec(IxDyn(&[2, 3]), m).unwrap();
    let r = host_pad_odd(&m, &[(1, 2), (3, 4)], false, &twice_less_f16);
    assert_eq!(r.mapv(f16::to_f64).as_slice().unwrap(), F16_REFLECT_2D.concat());
    // np.pad(np.array([3, -7, 120], np.int16), (4, 2), 'reflect', reflect_type='odd').
    let c = ArrayD::from_shape_vec(IxDyn(&[3]), vec![3i16, -7, 120]).unwrap();
    let wrap16 = |e: i16, x: i16| e.wrapping_mul(2).wrapping_sub(x);
    let r = host_pad_odd(&c, &[(4, 2)], false, &wrap16);
    assert_eq!(
        r.as_slice().unwrap(),
        [-231, -241, -114, 13, 3, -7, 120, 247, 237]
    );
}

/// NumPy 2.4's `np.pad(np.array([0.1, 0.7, -0.3, 2.9], np.float16), (6, 7), 'reflect',
/// reflect_type='odd')`, each `f16` as `f64`.
#[rustfmt::skip]
const F16_REFLECT: [f64; 17] = [
    -5.50390625, -4.90234375, -5.90234375, -2.701171875, 0.5, -0.5, 0.0999755859375, 0.7001953125,
    -0.300048828125, 2.900390625, 6.1015625, 5.1015625, 5.69921875, 6.296875, 5.296875, 8.5, 11.6953125,
];
/// The same with `'symmetric'`.
#[rustfmt::skip]
const F16_SYMMETRIC: [f64; 17] = [
    -5.90234375, -2.701171875, -2.701171875, 0.5, -0.5, 0.0999755859375, 0.0999755859375, 0.7001953125,
    -0.300048828125, 2.900390625, 2.900390625, 6.1015625, 5.1015625, 5.69921875, 5.69921875, 6.296875,
    5.296875,
];
/// NumPy 2.4's `np.pad(np.array([[1.3, -0.7, 0.2], [5.1, 0.01, -2.2]], np.float16), ((1, 2),
/// (3, 4)), 'reflect', reflect_type='odd')`, each `f16` as `f64`.
#[rustfmt::skip]
const F16_REFLECT_2D: [[f64; 10]; 5] = [
    [-11.609375, -7.6015625, -3.59375, -2.501953125, -1.41015625, 2.599609375, 6.609375, 7.703125, 8.796875, 12.8046875],
    [1.5, 2.400390625, 3.30078125, 1.2998046875, -0.7001953125, 0.199951171875, 1.099609375, -0.89990234375, -2.8984375, -2.0],
    [14.6171875, 12.40625, 10.1953125, 5.1015625, 0.01000213623046875, -2.19921875, -4.41015625, -9.5, -14.59375, -16.796875],
    [27.71875, 22.40625, 17.09375, 8.90625, 0.72021484375, -4.59765625, -9.9140625, -18.09375, -26.28125, -31.59375],
    [40.8125, 32.40625, 23.984375, 12.7109375, 1.4306640625, -6.99609375, -15.421875, -26.703125, -38.0, -46.40625],
];

#[test]
#[ignore = "needs a CUDA GPU"]
fn odd_reflections_of_16_bit_floats_and_small_integers_match_numpys_rounds() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let (mut rng, stream) = (Rng::new(0x0dd16), Stream::new(&ctx)?);
    // NumPy 2.4's numbers (the calls that printed them are in `the_odd_pad_port_gives_numpys_numbers`).
    let a = DeviceArray::from_ndarray(&ctx, &arr1(&[100i8, -100, 5]))?;
    let got = a.pad(&[(3, 4)], PadMode::ReflectOdd)?.to_vec()?;
    assert_eq!(got, [90, -61, 44, 100, -100, 5, 110, -90, -34, 71], "i8 reflect");
    let got = a.pad(&[(3, 4)], PadMode::SymmetricOdd)?.to_vec()?;
    assert_eq!(
        got,
        [-61, 44, 100, 100, -100, 5, 5, 110, -90, -90],
        "i8 symmetric"
    );
    // np.pad(np.array([3, -7, 120], np.int16), (4, 2), 'reflect', reflect_type='odd').
    let c = DeviceArray::from_ndarray(&ctx, &arr1(&[3i16, -7, 120]))?;
    let got = c.pad(&[(4, 2)], PadMode::ReflectOdd)?.to_vec()?;
    assert_eq!(got, [-231, -241, -114, 13, 3, -7, 120, 247, 237], "i16 reflect");
    let b = DeviceArray::from_ndarray(&ctx, &arr1(&[0.1, 0.7, -0.3, 2.9].map(f16::from_f64)))?;
    let got: Vec<f64> = b
        .pad(&[(6, 7)], PadMode::ReflectOdd)?
        .to_vec()?
        .into_iter()
        .map(f16::to_f64)
        .collect();
    assert_eq!(got, F16_REFLECT, "f16 reflect");
    let got: Vec<f64> = b
        .pad(&[(6, 7)], PadMode::SymmetricOdd)?
        .to_vec()?
        .into_iter()
        .map(f16::to_f64)
        .collect();
    assert_eq!(got, F16_SYMMETRIC, "f16 symmetric");
    let m = Array2::from_shape_vec(
        (2, 3),
        [1.3, -0.7, 0.2, 5.1, 0.01, -2.2].map(f16::from_f64).to_vec(),
    )
    .unwrap();
    let dm = DeviceArray::from_ndarray(&ctx, &m)?;
    let got = dm
        .pad(&[(1, 2), (3, 4)], PadMode::ReflectOdd)?
        .to_ndarray()?
        .mapv(f16::to_f64);
    let want = Array2::from_shape_vec((5, 10), F16_REFLECT_2D.concat()).unwrap();
    assert_eq!(got, want, "f16 2-d reflect");
    // Random data against the port: floats in [-4, 4) (the widest borders here grow to about
    // 10^4, below `f16`'s largest), every value of the integers (the borders wrap).
    check_odd(
        &ctx,
        &mut rng,
        &stream,
        |r| f16::from_f64(r.f64() * 4.0),
        twice_less_f16,
    )?;
    check_odd(
        &ctx,
        &mut rng,
        &stream,
        |r| bf16::from_f64(r.f64() * 4.0),
        twice_less_bf16,
    )?;
    let wrap8 = |e: i8, x: i8| e.wrapping_mul(2).wrapping_sub(x);
    check_odd(&ctx, &mut rng, &stream, |r| r.next_u64() as i8, wrap8)?;
    let wrap16 = |e: i16, x: i16| e.wrapping_mul(2).wrapping_sub(x);
    check_odd(&ctx, &mut rng, &stream, |r| r.next_u64() as i16, wrap16)
}

// ---------------------------------------------------------------------------------------------
// `deg2rad`, `rad2deg`, `reciprocal` and the nan scans of 16-bit floats.

/// `f16` and `bf16`: through `f32`, their bits, their special values, and the largest count of
/// consecutive integers they hold exactly (`2^` their significand's bits).
trait Half: math::Float + Copy + Default + PartialEq + Debug {
    const NAN: Self;
    const SPECIALS: [Self; 8];
    const EXACT: i64;
    /// The unit roundoff, `2^-` the significand's bits.
    const U: f64;
    fn of(x: f32) -> Self;
    fn f(self) -> f32;
    fn bits(self) -> u16;
}

macro_rules! halves {
    ($($t:ty, $exact:expr, $u:expr;)*) => {$(
        impl Half for $t {
            const NAN: Self = <$t>::NAN;
            const SPECIALS: [Self; 8] = [
                <$t>::ZERO, <$t>::NEG_ZERO, <$t>::INFINITY, <$t>::NEG_INFINITY, <$t>::NAN,
                <$t>::MAX, <$t>::MIN, <$t>::MIN_POSITIVE_SUBNORMAL,
            ];
            const EXACT: i64 = $exact;
            const U: f64 = $u;
            fn of(x: f32) -> Self {
                <$t>::from_f32(x)
            }
            fn f(self) -> f32 {
                self.to_f32()
            }
            fn bits(self) -> u16 {
                self.to_bits()
            }
        }
    )*};
}

halves! {
    f16, 1 << 11, 1.0 / 2048.0;
    bf16, 1 << 8, 1.0 / 256.0;
}

/// `got` within one ulp of `want`: a NaN for a NaN, an infinity or a zero (a special value's
/// result) bit for bit, else finite and at most one step of the type away.
fn within_an_ulp<T: Half>(got: T, want: T) -> bool {
    let (g, w) = (got.f(), want.f());
    if w.is_nan() {
        return g.is_nan();
    }
    if w.is_infinite() || w == 0.0 {
        return got.bits() == want.bits();
    }
    g.is_finite() && ulps(got.bits(), want.bits()) <= 1
}

fn all_within_an_ulp<T: Half>(x: &[T], got: &[T], want: &[T], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    for ((x, &g), &w) in x.iter().zip(got).zip(want) {
        assert!(within_an_ulp(g, w), "{what}({x:?}) = {g:?}, not {w:?}");
    }
}

/// `deg2rad`, `rad2deg` and `reciprocal` of `T` on random data and the special values: the
/// array forms, an expression step and a reversed, stepped view.
fn angles_and_reciprocals<T: Half>(ctx: &Context, rng: &mut Rng) -> gpu_runtime::Result<()> {
    use std::f64::consts::PI;
    let name = std::any::type_name::<T>();
    let n = 4099;
    let with_specials = |v: Vec<T>| -> Vec<T> { T::SPECIALS.iter().copied().chain(v).collect() };
    // NumPy's loops: `x * (float)(pi / 180)` in `float`, rounded once.
    let (to_rad, to_deg) = ((PI / 180.0) as f32, (180.0 / PI) as f32);
    let deg = with_specials((0..n).map(|_| T::of((rng.f64() * 720.0) as f32)).collect());
    let dd = DeviceArray::from_ndarray(ctx, &Array1::from(deg.clone()))?;
    let want: Vec<T> = deg.iter().map(|x| T::of(x.f() * to_rad)).collect();
    all_within_an_ulp(
        &deg,
        &math::deg2rad(&dd)?.to_vec()?,
        &want,
        &format!("deg2rad {name}"),
    );
    let fused = dd.expr().deg2rad().eval()?.to_vec()?;
    all_within_an_ulp(
        &deg,
        &fused,
        &want,
        &format!("deg2rad {name}, an expression step"),
    );
    let rad = with_specials((0..n).map(|_| T::of((rng.f64() * 8.0) as f32)).collect());
    let dr = DeviceArray::from_ndarray(ctx, &Array1::from(rad.clone()))?;
    let want: Vec<T> = rad.iter().map(|x| T::of(x.f() * to_deg)).collect();
    all_within_an_ulp(
        &rad,
        &math::rad2deg(&dr)?.to_vec()?,
        &want,
        &format!("rad2deg {name}"),
    );
    // Reciprocals of every magnitude: `1 / x` in `float`, rounded once (subnormal results,
    // and infinities past the largest value).
    let x = with_specials(
        (0..n)
            .map(|k| {
                let scale = [16.0, 1e-4, 1e4, 1e-7][k % 4];
                T::of((rng.f64() * scale) as f32)
            })
            .collect(),
    );
    let dx = DeviceArray::from_ndarray(ctx, &Array1::from(x.clone()))?;
    let want: Vec<T> = x.iter().map(|v| T::of(1.0 / v.f())).collect();
    all_within_an_ulp(
        &x,
        &math::reciprocal(&dx)?.to_vec()?,
        &want,
        &format!("reciprocal {name}"),
    );
    let back = dx.slice(s![..;-3])?;
    let xs: Vec<T> = x.iter().rev().step_by(3).copied().collect();
    let want: Vec<T> = xs.iter().map(|v| T::of(1.0 / v.f())).collect();
    let got = math::reciprocal(&back)?.to_vec()?;
    all_within_an_ulp(&xs, &got, &want, &format!("reciprocal {name} of a view by -3"));
    // The special values exactly: 1/±0 = ±inf, 1/±inf = ±0, deg2rad keeps ±0 and ±inf.
    let s = DeviceArray::from_ndarray(ctx, &Array1::from(T::SPECIALS[..5].to_vec()))?;
    let bits = |v: Vec<T>| v.into_iter().map(T::bits).collect::<Vec<u16>>();
    let [zero, neg_zero, inf, neg_inf, nan] = [0, 1, 2, 3, 4].map(|k| T::SPECIALS[k]);
    let got = math::reciprocal(&s)?.to_vec()?;
    let want = bits(vec![inf, neg_inf, zero, neg_zero]);
    assert_eq!(bits(got[..4].to_vec()), want, "reciprocal {name} of ±0, ±inf");
    assert!(got[4].f().is_nan(), "reciprocal {name} of {nan:?}");
    let got = math::deg2rad(&s)?.to_vec()?;
    let want = bits(vec![zero, neg_zero, inf, neg_inf]);
    assert_eq!(bits(got[..4].to_vec()), want, "deg2rad {name} of ±0, ±inf");
    assert!(got[4].f().is_nan(), "deg2rad {name} of {nan:?}");
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn angles_and_reciprocals_of_16_bit_floats_are_numpys_within_an_ulp() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(0xde916);
    angles_and_reciprocals::<f16>(&ctx, &mut rng)?;
    angles_and_reciprocals::<bf16>(&ctx, &mut rng)?;
    // NumPy 2.4's float16 numbers.
    let f = |v: &[f64]| Array1::from(v.iter().map(|&x| f16::from_f64(x)).collect::<Vec<_>>());
    let cases: [(&str, [f64; 4], [f64; 4]); 3] = [
        // np.deg2rad(np.array([90, 1, -45, 180], np.float16))
        (
            "deg2rad",
            [90.0, 1.0, -45.0, 180.0],
            [1.5703125, 0.0174560546875, -0.78515625, 3.140625],
        ),
        // np.rad2deg(np.array([1, 0.5, -3.140625, 6.28125], np.float16))
        (
            "rad2deg",
            [1.0, 0.5, -3.140625, 6.28125],
            [57.28125, 28.640625, -180.0, 360.0],
        ),
        // np.reciprocal(np.array([3, -0.1, 7, 0.0009765625], np.float16))
        (
            "reciprocal",
            [3.0, -0.1, 7.0, 0.0009765625],
            [0.333251953125, -10.0, 0.142822265625, 1024.0],
        ),
    ];
    for (name, x, want) in cases {
        let (hx, want) = (f(&x), f(&want));
        let d = DeviceArray::from_ndarray(&ctx, &hx)?;
        let got = match name {
            "deg2rad" => math::deg2rad(&d)?,
            "rad2deg" => math::rad2deg(&d)?,
            _ => math::reciprocal(&d)?,
        }
        .to_vec()?;
        all_within_an_ulp(hx.as_slice().unwrap(), &got, want.as_slice().unwrap(), name);
    }
    Ok(())
}

/// The running sums (`prod` false; NaN as 0) or products (NaN as 1) of `lane` in order, in `f64`.
fn nan_run(lane: &[f64], prod: bool) -> Vec<f64> {
    let mut acc = if prod { 1.0 } else { 0.0 };
    lane.iter()
        .map(|&v| {
            if !v.is_nan() {
                acc = if prod { acc * v } else { acc + v };
            }
            acc
        })
        .collect()
}

/// `gamma(m) = m u / (1 - m u)`: the bound on the relative error of `m` operations in `u`.
fn gamma(m: usize, u: f64) -> f64 {
    let mu = m as f64 * u;
    mu / (1.0 - mu)
}

/// One of the two nan scans (`prod`) of `dv` (the device form of `hv`), flattened (the sum on
/// a stream) and along each axis, against `want(lane, prod)` through `agree(got, want, lane,
/// k)` (`k`: the position in the lane).
fn check_scan<T: Element + Copy + Debug>(
    dv: &DeviceArrayView<'_, T, IxDyn>,
    hv: &ArrayD<T>,
    stream: &Stream,
    prod: bool,
    want: &impl Fn(&[T], bool) -> Vec<T>,
    agree: &impl Fn(T, T, &[T], usize) -> bool,
    what: &str,
) -> gpu_runtime::Result<()> {
    let flat: Vec<T> = hv.iter().copied().collect();
    let got = if prod {
        dv.nancumprod()?
    } else {
        let on = dv.on(stream).nancumsum()?;
        stream.synchronize()?;
        on
    };
    let (got, w) = (got.to_vec()?, want(&flat, prod));
    assert_eq!(got.len(), w.len(), "{what} flat: length");
    for (k, (&g, &w)) in got.iter().zip(&w).enumerate() {
        assert!(agree(g, w, &flat, k), "{what} flat [{k}]: {g:?} against {w:?}");
    }
    for axis in 0..hv.ndim() {
        let got = if prod {
            dv.nancumprod_axis(axis)?
        } else {
            dv.nancumsum_axis(axis)?
        }
        .to_ndarray()?;
        assert_eq!(got.shape(), hv.shape(), "{what} axis {axis}: shape");
        for (lane, g) in hv.lanes(Axis(axis)).into_iter().zip(got.lanes(Axis(axis))) {
            let lane = lane.to_vec();
            let w = want(&lane, prod);
            for (k, (&g, &w)) in g.iter().zip(&w).enumerate() {
                let ok = agree(g, w, &lane, k);
                assert!(ok, "{what} axis {axis} lane {lane:?} [{k}]: {g:?} against {w:?}");
            }
        }
    }
    Ok(())
}

/// The in-order nan scan of 16-bit floats computed in `f64`, rounded once into `T`.
fn f64_scan<T: Half>(lane: &[T], prod: bool) -> Vec<T> {
    let x: Vec<f64> = lane.iter().map(|v| f64::from(v.f())).collect();
    nan_run(&x, prod).into_iter().map(|v| T::of(v as f32)).collect()
}

/// The nan scans of `T` (`f16`, `bf16`), a third of the elements NaN, of a `(3, 4, 5)` array and
/// of its transpose: (a) sums of multiples of 1/8 whose magnitudes add up to at most the type's
/// exact integers (in eighths), and products of ±1 with at most twelve factors ±2 or ±1/2, where
/// every order of the scan is exact: bit for bit; (b) random values in [-1, 1), each prefix
/// within `gamma(k) Σ|x|` of the exact sum (any order of `k` additions), and products of values
/// in ±[1/2, 2) along each axis and of a `(3, 4)` array within `2 gamma(k) |Π x|`; (c) 70,001
/// elements, several tiles of the flat scan: eighths by a walk that keeps every partial sum
/// within half the exact range (so the sum of any run within it), bit for bit, and products of
/// ones with twelve factors ±2, 1/2 or -1 among them.
fn half_nan_scans<T: Half>(ctx: &Context, rng: &mut Rng, stream: &Stream) -> gpu_runtime::Result<()> {
    let name = std::any::type_name::<T>();
    let shape = [3usize, 4, 5];
    let n: usize = shape.iter().product();
    let host = |v: Vec<T>| ArrayD::from_shape_vec(IxDyn(&shape), v).unwrap();
    let nan_or = |rng: &mut Rng, v: f64| {
        if rng.next_u64().is_multiple_of(3) {
            T::NAN
        } else {
            T::of(v as f32)
        }
    };
    // (a)
    let k_max = (T::EXACT / 64) as u64;
    let sums: Vec<T> = (0..n)
        .map(|_| {
            let k = (rng.next_u64() % (2 * k_max + 1)) as f64 - k_max as f64;
            nan_or(rng, k / 8.0)
        })
        .collect();
    let mut prods: Vec<T> = (0..n)
        .map(|_| {
            let v = if rng.next_u64().is_multiple_of(2) {
                1.0
            } else {
                -1.0
            };
            nan_or(rng, v)
        })
        .collect();
    for _ in 0..12 {
        let k = (rng.next_u64() % n as u64) as usize;
        prods[k] = T::of([2.0, -2.0, 0.5, -0.5][(rng.next_u64() % 4) as usize]);
    }
    let exact = |g: T, w: T, _: &[T], _: usize| g == w;
    for (h, prod) in [(host(sums), false), (host(prods), true)] {
        let d = DeviceArray::from_ndarray(ctx, &h)?;
        for (dv, hv, view) in [
            (d.view(), h.clone(), "array"),
            (d.t(), h.t().to_owned(), "transpose"),
        ] {
            let what = format!("{name} exact data, {view}, prod {prod}");
            check_scan(&dv, &hv, stream, prod, &f64_scan, &exact, &what)?;
        }
    }
    // (b)
    let rand = host(
        (0..n)
            .map(|_| {
                let v = rng.f64();
                nan_or(rng, v)
            })
            .collect(),
    );
    let near_sum = |g: T, _: T, lane: &[T], k: usize| {
        let x: Vec<f64> = lane[..=k]
            .iter()
            .map(|v| f64::from(v.f()))
            .filter(|v| !v.is_nan())
            .collect();
        let (sum, abs) = (x.iter().sum::<f64>(), x.iter().map(|v| v.abs()).sum::<f64>());
        let g = f64::from(g.f());
        g.is_finite() && (g - sum).abs() <= gamma(k + 1, T::U) * abs
    };
    let d = DeviceArray::from_ndarray(ctx, &rand)?;
    for (dv, hv, view) in [
        (d.view(), rand.clone(), "array"),
        (d.t(), rand.t().to_owned(), "transpose"),
    ] {
        check_scan(
            &dv,
            &hv,
            stream,
            false,
            &f64_scan,
            &near_sum,
            &format!("{name} random {view}"),
        )?;
    }
    let factors: Vec<T> = (0..n)
        .map(|_| {
            let m = 0.5 + 0.75 * (rng.f64() + 1.0);
            let m = if rng.next_u64().is_multiple_of(2) { m } else { -m };
            nan_or(rng, m)
        })
        .collect();
    let near_prod = |g: T, _: T, lane: &[T], k: usize| {
        let p: f64 = lane[..=k]
            .iter()
            .map(|v| f64::from(v.f()))
            .filter(|v| !v.is_nan())
            .product();
        let g = f64::from(g.f());
        g.is_finite() && (g - p).abs() <= 2.0 * gamma(k + 1, T::U) * p.abs()
    };
    let hf = host(factors.clone());
    let df = DeviceArray::from_ndarray(ctx, &hf)?;
    for axis in 0..shape.len() {
        let got = df.nancumprod_axis(axis)?.to_ndarray()?;
        assert_eq!(got.shape(), &shape, "{name} random nancumprod_axis {axis}: shape");
        for (lane, g) in hf.lanes(Axis(axis)).into_iter().zip(got.lanes(Axis(axis))) {
            let lane = lane.to_vec();
            for (k, &g) in g.iter().enumerate() {
                let ok = near_prod(g, g, &lane, k);
                assert!(
                    ok,
                    "{name} random nancumprod_axis {axis} lane {lane:?} [{k}]: {g:?}"
                );
            }
        }
    }
    let twelve = Array2::from_shape_vec((3, 4), factors[..12].to_vec()).unwrap();
    let got = DeviceArray::from_ndarray(ctx, &twelve)?.nancumprod()?.to_vec()?;
    assert_eq!(got.len(), 12, "{name} random nancumprod of (3, 4): length");
    for (k, &g) in got.iter().enumerate() {
        assert!(
            near_prod(g, g, &factors[..12], k),
            "{name} random nancumprod [{k}]: {g:?}"
        );
    }
    // (c)
    let long = 70_001;
    let (mut s, limit) = (0i64, T::EXACT / 2);
    let walk: Vec<T> = (0..long)
        .map(|_| {
            if rng.next_u64().is_multiple_of(8) {
                return T::NAN;
            }
            let mut k = (rng.next_u64() % 17) as i64 - 8;
            if (s + k).abs() > limit {
                k = -k;
            }
            s += k;
            T::of(k as f32 / 8.0)
        })
        .collect();
    let d = DeviceArray::from_ndarray(ctx, &Array1::from(walk.clone()))?;
    let want = f64_scan(&walk, false);
    assert!(d.nancumsum()?.to_vec()? == want, "{name} nancumsum of {long}");
    assert!(
        d.nancumsum_axis(0)?.to_vec()? == want,
        "{name} nancumsum_axis of {long}"
    );
    let mut spread: Vec<T> = (0..long)
        .map(|_| {
            if rng.next_u64().is_multiple_of(8) {
                T::NAN
            } else {
                T::of(1.0)
            }
        })
        .collect();
    for _ in 0..12 {
        let k = (rng.next_u64() % long as u64) as usize;
        spread[k] = T::of([2.0, -2.0, 0.5, -1.0][(rng.next_u64() % 4) as usize]);
    }
    let d = DeviceArray::from_ndarray(ctx, &Array1::from(spread.clone()))?;
    assert!(
        d.nancumprod()?.to_vec()? == f64_scan(&spread, true),
        "{name} nancumprod of {long}"
    );
    Ok(())
}

/// The small integers' scans: in their own type, wrapping.
trait Wrapping: Element + Copy + PartialEq + Debug {
    fn add(self, other: Self) -> Self;
    fn mul(self, other: Self) -> Self;
    fn draw(rng: &mut Rng) -> Self;
    const ZERO: Self;
    const ONE: Self;
}

macro_rules! wrapping {
    ($($t:ty),*) => {$(
        impl Wrapping for $t {
            fn add(self, other: Self) -> Self {
                self.wrapping_add(other)
            }
            fn mul(self, other: Self) -> Self {
                self.wrapping_mul(other)
            }
            fn draw(rng: &mut Rng) -> Self {
                rng.next_u64() as $t
            }
            const ZERO: Self = 0;
            const ONE: Self = 1;
        }
    )*};
}

wrapping!(i8, u8, i16);

/// The running sums or products of `lane` in `T`, wrapping: NumPy's (in `int64`) cast to `T`.
fn wrapping_scan<T: Wrapping>(lane: &[T], prod: bool) -> Vec<T> {
    let mut acc = if prod { T::ONE } else { T::ZERO };
    lane.iter()
        .map(|&v| {
            acc = if prod { acc.mul(v) } else { acc.add(v) };
            acc
        })
        .collect()
}

/// The nan scans of the small integers (`cumsum`/`cumprod`): every value for the sums, odd
/// ones but one in seven for the products (so that they do not all wrap to 0), of a `(3, 4, 5)`
/// array and its transpose, and 70,001 elements flat, against the wrapping scan in order.
fn integer_nan_scans<T: Wrapping>(ctx: &Context, rng: &mut Rng, stream: &Stream) -> gpu_runtime::Result<()> {
    let name = std::any::type_name::<T>();
    let shape = [3usize, 4, 5];
    let n: usize = shape.iter().product();
    let odd = |rng: &mut Rng| {
        let v = T::draw(rng);
        if rng.next_u64().is_multiple_of(7) {
            v
        } else {
            // An odd value without a bit operation on `T`: `2 v + 1`.
            v.add(v).add(T::ONE)
        }
    };
    let exact = |g: T, w: T, _: &[T], _: usize| g == w;
    let sums = ArrayD::from_shape_vec(IxDyn(&shape), (0..n).map(|_| T::draw(rng)).collect()).unwrap();
    let prods = ArrayD::from_shape_vec(IxDyn(&shape), (0..n).map(|_| odd(rng)).collect()).unwrap();
    for (h, prod) in [(sums, false), (prods, true)] {
        let d = DeviceArray::from_ndarray(ctx, &h)?;
        for (dv, hv, view) in [
            (d.view(), h.clone(), "array"),
            (d.t(), h.t().to_owned(), "transpose"),
        ] {
            let what = format!("{name} {view} prod {prod}");
            check_scan(&dv, &hv, stream, prod, &wrapping_scan, &exact, &what)?;
        }
    }
    let long = 70_001;
    let x: Vec<T> = (0..long).map(|_| T::draw(rng)).collect();
    let d = DeviceArray::from_ndarray(ctx, &Array1::from(x.clone()))?;
    assert!(
        d.nancumsum()?.to_vec()? == wrapping_scan(&x, false),
        "{name} nancumsum of {long}"
    );
    let x: Vec<T> = (0..long).map(|_| odd(rng)).collect();
    let d = DeviceArray::from_ndarray(ctx, &Array1::from(x.clone()))?;
    assert!(
        d.nancumprod()?.to_vec()? == wrapping_scan(&x, true),
        "{name} nancumprod of {long}"
    );
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn nan_scans_of_16_bit_floats_and_small_integers_match_the_host() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let (mut rng, stream) = (Rng::new(0x9a95c16), Stream::new(&ctx)?);
    half_nan_scans::<f16>(&ctx, &mut rng, &stream)?;
    half_nan_scans::<bf16>(&ctx, &mut rng, &stream)?;
    integer_nan_scans::<i8>(&ctx, &mut rng, &stream)?;
    integer_nan_scans::<u8>(&ctx, &mut rng, &stream)?;
    integer_nan_scans::<i16>(&ctx, &mut rng, &stream)?;
    // NumPy 2.4: np.nancumsum(np.array([100, 100, -50, 120], np.int8)) is int64 [100, 200, 150,
    // 270], np.nancumprod of it [100, 10000, -500000, -60000000]; here in int8, NumPy's values
    // cast back (`.astype(np.int8)`).
    let a = DeviceArray::from_ndarray(&ctx, &arr1(&[100i8, 100, -50, 120]))?;
    assert_eq!(a.nancumsum()?.to_vec()?, [100, -56, -106, 14]);
    assert_eq!(a.nancumprod()?.to_vec()?, [100, 16, -32, 0]);
    // np.nancumsum(np.array([200, 100, 50], np.uint8)) is uint64 [200, 300, 350].
    let b = DeviceArray::from_ndarray(&ctx, &arr1(&[200u8, 100, 50]))?;
    assert_eq!(b.nancumsum()?.to_vec()?, [200, 44, 94]);
    // np.nancumsum(np.array([30000, 10000, -5], np.int16)) is int64 [30000, 40000, 39995].
    let c = DeviceArray::from_ndarray(&ctx, &arr1(&[30000i16, 10000, -5]))?;
    assert_eq!(c.nancumsum()?.to_vec()?, [30000, -25536, -25541]);
    // np.nancumsum and np.nancumprod of np.array([0.1, nan, 0.2, 1000, nan, 0.3], np.float16):
    // NumPy adds in order, each sum rounded to float16 (1000.5, then 1001); a run this short is
    // one thread's, scanned in order here too.
    let h = [0.1, f64::NAN, 0.2, 1000.0, f64::NAN, 0.3].map(f16::from_f64);
    let d = DeviceArray::from_ndarray(&ctx, &arr1(&h))?;
    let got: Vec<f64> = d.nancumsum()?.to_vec()?.into_iter().map(f16::to_f64).collect();
    assert_eq!(
        got,
        [
            0.0999755859375,
            0.0999755859375,
            0.2998046875,
            1000.5,
            1000.5,
            1001.0
        ]
    );
    let got: Vec<f64> = d.nancumprod()?.to_vec()?.into_iter().map(f16::to_f64).collect();
    let want = [
        0.0999755859375,
        0.0999755859375,
        0.019989013671875,
        19.984375,
        19.984375,
        5.99609375,
    ];
    assert_eq!(got, want);
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// `floor`, `ceil`, `trunc`, `fix` and `round` of integer arrays of every layout.

/// The five rounding functions of `x` (an array or a view of integers) each give `want`: the
/// same values, shape and (checked by the compiler: `DeviceArray<T, _>`) type.
fn keeps<'a, T, X>(x: X, want: &Array<T, X::Dim>, what: &str) -> gpu_runtime::Result<()>
where
    T: Round<Rounded = T> + PartialEq + Debug,
    X: Operand<'a, T> + Copy,
{
    let got: [DeviceArray<T, X::Dim>; 5] = [
        math::floor(x)?,
        math::ceil(x)?,
        math::trunc(x)?,
        math::fix(x)?,
        math::round(x)?,
    ];
    for (name, g) in ["floor", "ceil", "trunc", "fix", "round"].into_iter().zip(got) {
        let g = g.to_ndarray()?;
        assert_eq!(g.shape(), want.shape(), "{name} of {what}: shape");
        assert_eq!(&g, want, "{name} of {what}");
    }
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn rounding_integer_views_empty_and_0_d_arrays_keeps_them() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(0xf1c5);
    macro_rules! integers {
        ($($t:ty),*) => {$({
            let name = stringify!($t);
            let h1 = Array1::from_shape_fn(11, |_| rng.next_u64() as $t);
            let d1 = DeviceArray::from_ndarray(&ctx, &h1)?;
            keeps(&d1.slice(s![..;2])?, &h1.slice(s![..;2]).to_owned(), &format!("{name} [..;2]"))?;
            keeps(&d1.slice(s![1..;3])?, &h1.slice(s![1..;3]).to_owned(), &format!("{name} [1..;3]"))?;
            keeps(&d1.slice(s![..;-1])?, &h1.slice(s![..;-1]).to_owned(), &format!("{name} [..;-1]"))?;
            let h2 = Array2::from_shape_fn((5, 6), |_| rng.next_u64() as $t);
            let d2 = DeviceArray::from_ndarray(&ctx, &h2)?;
            keeps(&d2.t(), &h2.t().to_owned(), &format!("{name} transposed"))?;
            let stepped = s![..;2, 1..;3];
            keeps(&d2.slice(stepped)?, &h2.slice(stepped).to_owned(), &format!("{name} [..;2, 1..;3]"))?;
            keeps(&d2.slice(s![.., 4])?, &h2.column(4).to_owned(), &format!("{name} a column"))?;
            // Empty: (0,), (3, 0), and an empty slice of a view.
            let e1 = Array1::<$t>::from(Vec::new());
            keeps(&DeviceArray::from_ndarray(&ctx, &e1)?, &e1, &format!("{name} (0,)"))?;
            let e2 = Array2::<$t>::from_shape_vec((3, 0), Vec::new()).unwrap();
            keeps(&DeviceArray::from_ndarray(&ctx, &e2)?, &e2, &format!("{name} (3, 0)"))?;
            keeps(&d2.slice(s![2..2, ..;2])?, &h2.slice(s![2..2, ..;2]).to_owned(), &format!("{name} (0, 3) view"))?;
            // 0-d: an array of its own, and an element of a view.
            let z = arr0(h1[3]);
            keeps(&DeviceArray::from_ndarray(&ctx, &z)?, &z, &format!("{name} 0-d"))?;
            keeps(&d1.slice(s![7])?, &arr0(h1[7]), &format!("{name} 0-d view"))?;
            // `out=` of a transposed view, into a fresh array.
            let mut out = DeviceArray::from_ndarray(&ctx, &Array2::from_elem((6, 5), 0 as $t))?;
            math::fix_into(&d2.t(), &mut out)?;
            assert_eq!(out.to_ndarray()?, h2.t(), "fix_into of {name} transposed");
        })*};
    }
    integers!(i8, u8, i16, u16, i32, u32, i64, u64);
    Ok(())
}
