//! `sort`, `argsort`, `unique`, `searchsorted`, `median`, `quantile` and `percentile` (and their
//! `nan` forms) on a GPU
//! against a stable sort on the host in NumPy's order (NaN last, `-0.0` equal to `0.0`), on
//! random data of every real element type: random bits (every NaN payload, infinities,
//! subnormals) and draws from a few values (long runs of equal keys, which the sort must keep
//! in order), at lengths around the radix tile (4096 keys of up to 4 bytes, 2048 of 8), along
//! each axis of 2-D and 3-D arrays, of transposed and stepped views, 0-d and empty.

use std::cmp::Ordering;

use gpu_runtime::gpuarray::{Bool, DeviceArray, Element, MeanType, Side, UniqueOptions};
use gpu_runtime::half::{bf16, f16};
use gpu_runtime::ndarray::{s, Array1, ArrayD, Axis, IxDyn};
use gpu_runtime::Context;
use gpu_suite::Rng;

/// An element type with NumPy's order on the host.
trait Sortable: Element + MeanType {
    /// Random bits of the type.
    fn bits(rng: &mut Rng) -> Self;
    /// One of a few values (some of them NaN and both zeros, for floats).
    fn few(rng: &mut Rng) -> Self;
    /// NumPy's order: NaN after everything, NaNs equal, `-0.0 == 0.0`.
    fn ord(a: &Self, b: &Self) -> Ordering;
    /// The value as `f64`.
    fn f64v(self) -> f64;
}

/// A mean type's value as `f64`.
trait AsF64: Copy {
    fn as_f64(self) -> f64;
}
impl AsF64 for f64 {
    fn as_f64(self) -> f64 {
        self
    }
}
impl AsF64 for f32 {
    fn as_f64(self) -> f64 {
        self as f64
    }
}
impl AsF64 for f16 {
    fn as_f64(self) -> f64 {
        self.to_f64()
    }
}
impl AsF64 for bf16 {
    fn as_f64(self) -> f64 {
        self.to_f64()
    }
}

fn float_ord(a: f64, b: f64) -> Ordering {
    match (a.is_nan(), b.is_nan()) {
        (true, true) => Ordering::Equal,
        (true, false) => Ordering::Greater,
        (false, true) => Ordering::Less,
        _ => a.partial_cmp(&b).unwrap(),
    }
}

macro_rules! int_sortable {
    ($($t:ty),*) => {$(
        impl Sortable for $t {
            fn bits(rng: &mut Rng) -> Self {
                rng.next_u64() as $t
            }
            fn few(rng: &mut Rng) -> Self {
                [0 as $t, 1 as $t, <$t>::MAX, <$t>::MIN, 7 as $t, (0 as $t).wrapping_sub(3)][(rng.next_u64() % 6) as usize]
            }
            fn ord(a: &Self, b: &Self) -> Ordering {
                a.cmp(b)
            }
            fn f64v(self) -> f64 {
                self as f64
            }
        }
    )*};
}
int_sortable!(i8, u8, i16, u16, i32, u32, i64, u64);

impl Sortable for Bool {
    fn bits(rng: &mut Rng) -> Self {
        Bool::from(rng.next_u64() & 1 == 1)
    }
    fn few(rng: &mut Rng) -> Self {
        Bool::from(rng.next_u64().is_multiple_of(5))
    }
    fn ord(a: &Self, b: &Self) -> Ordering {
        bool::from(*a).cmp(&bool::from(*b))
    }
    fn f64v(self) -> f64 {
        f64::from(u8::from(bool::from(self)))
    }
}

macro_rules! float_sortable {
    ($t:ty, $from_bits:expr, $from_f64:expr, $to_f64:expr, $nan_neg:expr) => {
        impl Sortable for $t {
            fn bits(rng: &mut Rng) -> Self {
                $from_bits(rng.next_u64())
            }
            fn few(rng: &mut Rng) -> Self {
                let vals = [
                    0.0,
                    -0.0,
                    f64::NAN,
                    1.5,
                    -2.25,
                    f64::INFINITY,
                    f64::NEG_INFINITY,
                    1.5,
                ];
                let i = (rng.next_u64() % 9) as usize;
                if i == 8 {
                    $nan_neg
                } else {
                    $from_f64(vals[i])
                }
            }
            fn ord(a: &Self, b: &Self) -> Ordering {
                float_ord($to_f64(*a), $to_f64(*b))
            }
            fn f64v(self) -> f64 {
                $to_f64(self)
            }
        }
    };
}
float_sortable!(
    f32,
    |b: u64| f32::from_bits(b as u32),
    |v: f64| v as f32,
    |v: f32| v as f64,
    f32::from_bits(0xFFC0_0001)
);
float_sortable!(
    f64,
    f64::from_bits,
    |v: f64| v,
    |v: f64| v,
    f64::from_bits(0xFFF8_0000_0000_0001)
);
float_sortable!(
    f16,
    |b: u64| f16::from_bits(b as u16),
    f16::from_f64,
    |v: f16| v.to_f64(),
    f16::from_bits(0xFE01)
);
float_sortable!(
    bf16,
    |b: u64| bf16::from_bits(b as u16),
    bf16::from_f64,
    |v: bf16| v.to_f64(),
    bf16::from_bits(0xFFC1)
);

/// Half random bits, half a few values; in `few_only` mode only the few (long runs).
fn data<T: Sortable>(rng: &mut Rng, n: usize, few_only: bool) -> Vec<T> {
    (0..n)
        .map(|_| {
            if few_only || rng.next_u64() & 1 == 0 {
                T::few(rng)
            } else {
                T::bits(rng)
            }
        })
        .collect()
}

/// The stable argsort of `h` on the host.
fn host_argsort<T: Sortable>(h: &[T]) -> Vec<i64> {
    let mut idx: Vec<i64> = (0..h.len() as i64).collect();
    idx.sort_by(|&a, &b| T::ord(&h[a as usize], &h[b as usize]));
    idx
}

fn assert_same<T: Sortable>(got: &[T], want: &[T], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: lengths");
    for (i, (a, b)) in got.iter().zip(want).enumerate() {
        assert_eq!(
            T::ord(a, b),
            Ordering::Equal,
            "{what}: element {i}: {a:?} against {b:?}"
        );
    }
}

/// Lengths around the radix tiles.
fn lengths(rng: &mut Rng) -> Vec<usize> {
    let mut v = vec![
        0,
        1,
        2,
        31,
        33,
        2047,
        2048,
        2049,
        4095,
        4096,
        4097,
        3 * 4096 + 17,
        65536 + 5,
    ];
    v.push(300_000 + (rng.next_u64() % 1000) as usize);
    v
}

/// Flat sorts and argsorts of one type against the host.
fn check_flat<T: Sortable>(ctx: &Context, rng: &mut Rng) -> gpu_runtime::Result<()> {
    let name = std::any::type_name::<T>();
    for n in lengths(rng) {
        for few in [false, true] {
            let h: Vec<T> = data(rng, n, few);
            let d = DeviceArray::from_ndarray(ctx, &Array1::from(h.clone()))?;
            let want_idx = host_argsort(&h);
            let want: Vec<T> = want_idx.iter().map(|&i| h[i as usize]).collect();
            let what = format!("{name}, n = {n}, few = {few}");
            assert_same(&d.sort()?.to_vec()?, &want, &format!("sort {what}"));
            assert_same(&d.sort_flat()?.to_vec()?, &want, &format!("sort_flat {what}"));
            assert_eq!(d.argsort()?.to_vec()?, want_idx, "argsort {what}");
            assert_eq!(d.argsort_flat()?.to_vec()?, want_idx, "argsort_flat {what}");
        }
    }
    Ok(())
}

/// Sorts along each axis of n-d arrays and views, against the host lane by lane.
fn check_axes<T: Sortable>(ctx: &Context, rng: &mut Rng) -> gpu_runtime::Result<()> {
    let name = std::any::type_name::<T>();
    for shape in [
        vec![37, 300],
        vec![300, 5],
        vec![3, 5000],
        vec![4, 6, 7],
        vec![2, 0, 3],
        vec![600, 1],
    ] {
        let n: usize = shape.iter().product();
        let few = rng.next_u64() & 1 == 0;
        let host = ArrayD::from_shape_vec(IxDyn(&shape), data::<T>(rng, n, few)).unwrap();
        let d = DeviceArray::from_ndarray(ctx, &host)?;
        let t = d.view().reversed_axes();
        let ht = host.view().reversed_axes();
        for (dv, hv, kind) in [(d.view(), host.view(), "C"), (t, ht, "transposed")] {
            for axis in 0..shape.len() as isize {
                for ax in [axis, axis - shape.len() as isize] {
                    let got = dv.sort_axis(ax)?.to_ndarray()?;
                    let goti = dv.argsort_axis(ax)?.to_ndarray()?;
                    let a = axis as usize;
                    for (lane, (g, gi)) in hv
                        .lanes(Axis(a))
                        .into_iter()
                        .zip(got.lanes(Axis(a)).into_iter().zip(goti.lanes(Axis(a))))
                    {
                        let h: Vec<T> = lane.iter().copied().collect();
                        let wi = host_argsort(&h);
                        let w: Vec<T> = wi.iter().map(|&i| h[i as usize]).collect();
                        let what = format!("{name} {kind} {shape:?} axis {ax} lane");
                        assert_same(&g.iter().copied().collect::<Vec<_>>(), &w, &what);
                        assert_eq!(gi.iter().copied().collect::<Vec<_>>(), wi, "{what}");
                    }
                }
            }
        }
        // A stepped view: every other row.
        if shape.len() == 2 && shape[0] > 1 {
            let v = d.slice(s![..;2, ..])?;
            let hv = host.slice(gpu_runtime::ndarray::s![..;2, ..]);
            let got = v.sort_axis(0)?.to_ndarray()?;
            for (lane, g) in hv.lanes(Axis(0)).into_iter().zip(got.lanes(Axis(0))) {
                let h: Vec<T> = lane.iter().copied().collect();
                let w: Vec<T> = host_argsort(&h).iter().map(|&i| h[i as usize]).collect();
                assert_same(
                    &g.iter().copied().collect::<Vec<_>>(),
                    &w,
                    &format!("{name} stepped {shape:?}"),
                );
            }
        }
    }
    // 0-d: no axis to sort along (NumPy's AxisError); flattened, one element.
    let z = DeviceArray::from_ndarray(ctx, &ArrayD::from_elem(IxDyn(&[]), T::few(rng)))?;
    assert!(z.sort().is_err() && z.argsort().is_err());
    assert_eq!(z.sort_flat()?.len(), 1);
    assert_eq!(z.argsort_flat()?.to_vec()?, vec![0]);
    Ok(())
}

/// `unique` with every option against the host.
fn check_unique<T: Sortable>(ctx: &Context, rng: &mut Rng) -> gpu_runtime::Result<()> {
    let name = std::any::type_name::<T>();
    for n in [0usize, 1, 5, 4097, 100_003] {
        for few in [false, true] {
            let h: Vec<T> = data(rng, n, few);
            let idx = host_argsort(&h);
            // The first of each run of equal values in the stable order.
            let mut values = Vec::new();
            let mut first = Vec::new();
            let mut counts: Vec<i64> = Vec::new();
            let mut inverse = vec![0i64; n];
            for &i in &idx {
                let x = h[i as usize];
                if values.last().is_none_or(|l: &T| T::ord(l, &x) != Ordering::Equal) {
                    values.push(x);
                    first.push(i);
                    counts.push(0);
                }
                *counts.last_mut().unwrap() += 1;
                inverse[i as usize] = values.len() as i64 - 1;
            }
            // A 2-D input: the inverse comes back in its shape.
            let rows = if n.is_multiple_of(5) && n > 0 { 5 } else { 1 };
            let host = ArrayD::from_shape_vec(IxDyn(&[rows, n / rows]), h.clone()).unwrap();
            let d = DeviceArray::from_ndarray(ctx, &host)?;
            let what = format!("unique {name}, n = {n}, few = {few}");
            assert_same(&d.unique()?.to_vec()?, &values, &what);
            let u = d.unique_with(UniqueOptions {
                return_index: true,
                return_inverse: true,
                return_counts: true,
            })?;
            assert_same(&u.values.to_vec()?, &values, &what);
            assert_eq!(u.indices.unwrap().to_vec()?, first, "{what}: index");
            assert_eq!(u.counts.unwrap().to_vec()?, counts, "{what}: counts");
            let inv = u.inverse.unwrap();
            assert_eq!(inv.shape(), &[rows, n / rows], "{what}: inverse shape");
            assert_eq!(inv.to_vec()?, inverse, "{what}: inverse");
        }
    }
    Ok(())
}

/// `searchsorted` on both sides against the host, queries of a 2-D strided array.
fn check_searchsorted<T: Sortable>(ctx: &Context, rng: &mut Rng) -> gpu_runtime::Result<()> {
    let name = std::any::type_name::<T>();
    for n in [0usize, 1, 7, 5000] {
        let mut a: Vec<T> = data(rng, n, true);
        a.sort_by(T::ord);
        let few = rng.next_u64() & 1 == 0;
        let v: Vec<T> = data(rng, 2 * 301, few);
        let da = DeviceArray::from_ndarray(ctx, &Array1::from(a.clone()))?;
        let hv = ArrayD::from_shape_vec(IxDyn(&[301, 2]), v).unwrap();
        let dv = DeviceArray::from_ndarray(ctx, &hv)?;
        let dvt = dv.view().reversed_axes();
        for side in [Side::Left, Side::Right] {
            let got = da.searchsorted(&dvt, side)?;
            assert_eq!(got.shape(), &[2, 301]);
            let want: Vec<i64> = hv
                .t()
                .iter()
                .map(|x| {
                    a.partition_point(|y| match side {
                        Side::Left => T::ord(y, x) == Ordering::Less,
                        Side::Right => T::ord(y, x) != Ordering::Greater,
                    }) as i64
                })
                .collect();
            assert_eq!(got.to_vec()?, want, "searchsorted {name}, n = {n}, {side:?}");
        }
    }
    // NumPy's `sorter=`: an unsorted array read through its stable argsort (host's), the
    // indices as `i64` and as `i32`, against the search in the host's sorted copy.
    for n in [1usize, 9, 3000] {
        let a: Vec<T> = data(rng, n, true);
        let order = host_argsort(&a);
        let sorted: Vec<T> = order.iter().map(|&i| a[i as usize]).collect();
        let few = rng.next_u64() & 1 == 0;
        let v: Vec<T> = data(rng, 257, few);
        let da = DeviceArray::from_ndarray(ctx, &Array1::from(a.clone()))?;
        let dv = DeviceArray::from_ndarray(ctx, &Array1::from(v.clone()))?;
        let sorter = DeviceArray::from_ndarray(ctx, &Array1::from(order.clone()))?;
        let sorter32 = sorter.astype::<i32>()?;
        for side in [Side::Left, Side::Right] {
            let want: Vec<i64> = v
                .iter()
                .map(|x| {
                    sorted.partition_point(|y| match side {
                        Side::Left => T::ord(y, x) == Ordering::Less,
                        Side::Right => T::ord(y, x) != Ordering::Greater,
                    }) as i64
                })
                .collect();
            let what = format!("searchsorted_sorter {name}, n = {n}, {side:?}");
            assert_eq!(
                da.searchsorted_sorter(&dv, side, &sorter)?.to_vec()?,
                want,
                "{what}"
            );
            assert_eq!(
                da.searchsorted_sorter(&dv, side, &sorter32)?.to_vec()?,
                want,
                "{what} (i32)"
            );
        }
    }
    let two_d = DeviceArray::from_ndarray(ctx, &ArrayD::from_elem(IxDyn(&[2, 2]), T::few(rng)))?;
    assert!(two_d.searchsorted(&two_d, Side::Left).is_err());
    Ok(())
}

/// CuPy's `TestSearchSortedWithSorter`: NumPy 2.4's numbers, a sorter of the wrong length
/// (NumPy's `ValueError`) and one reaching past the end.
#[test]
#[ignore = "needs a CUDA GPU"]
fn searchsorted_reads_through_a_sorter_as_numpy() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let bins = DeviceArray::from_ndarray(&ctx, &Array1::from(vec![10i64, 4, 2, 1, 8]))?.astype::<f64>()?;
    let x = DeviceArray::<f64, _>::arange(&ctx, 0.0, 12.0, 1.0)?;
    let sorter = DeviceArray::from_ndarray(&ctx, &Array1::from(vec![3i64, 2, 1, 4, 0]))?;
    let left = bins.searchsorted_sorter(&x, Side::Left, &sorter)?.to_vec()?;
    assert_eq!(left, [0, 0, 1, 2, 2, 3, 3, 3, 3, 4, 4, 5]);
    let stream = gpu_runtime::Stream::new(&ctx)?;
    let right = bins
        .on(&stream)
        .searchsorted_sorter(&x, Side::Right, &sorter)?
        .to_vec()?;
    assert_eq!(right, [0, 1, 2, 2, 3, 3, 3, 3, 4, 4, 5, 5]);
    let short = DeviceArray::from_ndarray(&ctx, &Array1::from(vec![0i64]))?;
    match bins.searchsorted_sorter(&x, Side::Left, &short) {
        Err(gpu_runtime::Error::Shape(gpu_runtime::ArrayShapeError::ElementCounts {
            first: 5,
            second: 1,
            ..
        })) => {}
        other => panic!("a sorter of one index: {other:?}"),
    }
    let past = DeviceArray::from_ndarray(&ctx, &Array1::from(vec![3i64, 2, 1, 5, 0]))?;
    match bins.searchsorted_sorter(&x, Side::Left, &past) {
        Err(gpu_runtime::Error::Shape(gpu_runtime::ArrayShapeError::IndexOutOfRange { .. })) => Ok(()),
        other => panic!("a sorter index past the end: {other:?}"),
    }
}

/// NumPy's `linear` quantile (and `median`) of a lane on the host.
fn host_quantile(lane: &[f64], q: f64, median: bool) -> f64 {
    let mut v = lane.to_vec();
    v.sort_by(|a, b| float_ord(*a, *b));
    let m = v.len();
    if m == 0 || v[m - 1].is_nan() {
        return f64::NAN;
    }
    if median {
        return if m % 2 == 1 {
            v[m / 2]
        } else {
            (v[m / 2 - 1] + v[m / 2]) / 2.0
        };
    }
    let vi = q * (m - 1) as f64;
    let lo = (vi.floor() as usize).min(m - 1);
    let hi = (lo + 1).min(m - 1);
    let t = vi - lo as f64;
    let d = v[hi] - v[lo];
    if t >= 0.5 {
        v[hi] - d * (1.0 - t)
    } else {
        v[lo] + d * t
    }
}

fn close(got: f64, want: f64, tol: f64) -> bool {
    (got.is_nan() && want.is_nan()) || got == want || (got - want).abs() <= tol * want.abs().max(1.0)
}

/// `median`, `quantile` and `percentile`, flattened and along each axis, against the host.
fn check_quantiles<T: Sortable>(ctx: &Context, rng: &mut Rng, tol: f64) -> gpu_runtime::Result<()>
where
    T::Mean: AsF64,
{
    let name = std::any::type_name::<T>();
    for shape in [vec![1usize], vec![6], vec![7, 33], vec![4, 3, 5], vec![3, 0]] {
        let n: usize = shape.iter().product();
        // Random values without NaN, then a NaN in one lane (when floats).
        let mut h: Vec<T> = (0..n)
            .map(|_| T::bits(rng))
            .filter(|x| !x.f64v().is_nan())
            .collect();
        while h.len() < n {
            let x = T::few(rng);
            if !x.f64v().is_nan() {
                h.push(x);
            }
        }
        if n > 3 && T::few(rng).f64v().is_finite() {
            if let Some(nan) = (0..64).map(|_| T::few(rng)).find(|x| x.f64v().is_nan()) {
                h[2] = nan;
            }
        }
        let host = ArrayD::from_shape_vec(IxDyn(&shape), h.clone()).unwrap();
        let hf = host.mapv(|x| x.f64v());
        let d = DeviceArray::from_ndarray(ctx, &host)?;
        for q in [0.0, 0.25, 0.5, 0.9, 1.0] {
            let all: Vec<f64> = hf.iter().copied().collect();
            let want = host_quantile(&all, q, false);
            let got = d.quantile(q)?.as_f64();
            assert!(
                close(got, want, tol),
                "quantile {name} {shape:?} q {q}: {got} against {want}"
            );
            let gotp = d.percentile(q * 100.0)?.as_f64();
            assert!(
                close(gotp, want, tol),
                "percentile {name} {shape:?}: {gotp} against {want}"
            );
            for axis in 0..shape.len() {
                let got = d
                    .quantile_axis(q, axis as isize - shape.len() as isize)?
                    .to_ndarray()?;
                let med = d.median_axis(axis as isize)?.to_ndarray()?;
                for ((lane, g), m) in hf.lanes(Axis(axis)).into_iter().zip(got.iter()).zip(med.iter()) {
                    let l: Vec<f64> = lane.iter().copied().collect();
                    let (w, wm) = (host_quantile(&l, q, false), host_quantile(&l, 0.5, true));
                    assert!(
                        close(g.as_f64(), w, tol),
                        "quantile_axis {name} {shape:?} axis {axis}: {:?} against {w}",
                        g.as_f64()
                    );
                    assert!(
                        close(m.as_f64(), wm, tol),
                        "median_axis {name} {shape:?} axis {axis}: {:?} against {wm}",
                        m.as_f64()
                    );
                }
            }
        }
        let all: Vec<f64> = hf.iter().copied().collect();
        let (got, want) = (d.median()?.as_f64(), host_quantile(&all, 0.5, true));
        assert!(
            close(got, want, tol),
            "median {name} {shape:?}: {got} against {want}"
        );
    }
    let d = DeviceArray::from_ndarray(ctx, &Array1::from(vec![T::few(rng); 3]))?;
    assert!(d.quantile(1.5).is_err() && d.percentile(-1.0).is_err() && d.quantile(f64::NAN).is_err());
    Ok(())
}

/// `nanmedian`, `nanquantile` and `nanpercentile`, flattened and along each axis, against the
/// host's quantile of the values that are not NaN: data about a third NaN, one lane all NaN
/// (NaN, as NumPy's), and an empty array.
fn check_nan_quantiles<T: Sortable>(ctx: &Context, rng: &mut Rng, tol: f64) -> gpu_runtime::Result<()>
where
    T::Mean: AsF64,
{
    let name = std::any::type_name::<T>();
    let nan = (0..256).map(|_| T::few(rng)).find(|x| x.f64v().is_nan());
    let without_nan = |x: &[f64]| -> Vec<f64> { x.iter().copied().filter(|v| !v.is_nan()).collect() };
    for shape in [vec![1usize], vec![9], vec![5, 7], vec![4, 3, 5], vec![3, 0]] {
        let n: usize = shape.iter().product();
        let mut h: Vec<T> = Vec::with_capacity(n);
        while h.len() < n {
            let x = T::bits(rng);
            match nan {
                Some(v) if rng.next_u64().is_multiple_of(3) => h.push(v),
                _ if !x.f64v().is_nan() => h.push(x),
                _ => {}
            }
        }
        // The first lane along the last axis all NaN.
        if let (Some(v), Some(&last)) = (nan, shape.last()) {
            if n > last {
                h[..last].fill(v);
            }
        }
        let host = ArrayD::from_shape_vec(IxDyn(&shape), h).unwrap();
        let hf = host.mapv(|x| x.f64v());
        let d = DeviceArray::from_ndarray(ctx, &host)?;
        let all = without_nan(&hf.iter().copied().collect::<Vec<_>>());
        let what = format!("{name} {shape:?}");
        let (got, want) = (d.nanmedian()?.as_f64(), host_quantile(&all, 0.5, true));
        assert!(close(got, want, tol), "nanmedian {what}: {got} against {want}");
        for q in [0.0, 0.3, 0.5, 1.0] {
            let want = host_quantile(&all, q, false);
            let got = d.nanquantile(q)?.as_f64();
            assert!(
                close(got, want, tol),
                "nanquantile {what} q {q}: {got} against {want}"
            );
            let got = d.nanpercentile(q * 100.0)?.as_f64();
            assert!(
                close(got, want, tol),
                "nanpercentile {what} q {q}: {got} against {want}"
            );
            for axis in 0..shape.len() {
                let ax = axis as isize - shape.len() as isize;
                let got = d.nanquantile_axis(q, ax)?.to_ndarray()?;
                let gotp = d.nanpercentile_axis(q * 100.0, axis as isize)?.to_ndarray()?;
                let med = d.nanmedian_axis(ax)?.to_ndarray()?;
                let mut kept = shape.clone();
                kept.remove(axis);
                assert_eq!(
                    got.shape(),
                    kept.as_slice(),
                    "nanquantile_axis {what} axis {axis}"
                );
                for (((lane, g), p), m) in hf.lanes(Axis(axis)).into_iter().zip(&got).zip(&gotp).zip(&med) {
                    let l = without_nan(&lane.to_vec());
                    let (w, wm) = (host_quantile(&l, q, false), host_quantile(&l, 0.5, true));
                    assert!(
                        close(g.as_f64(), w, tol),
                        "nanquantile_axis {what} axis {axis}: {:?} against {w}",
                        g.as_f64()
                    );
                    assert!(
                        close(p.as_f64(), w, tol),
                        "nanpercentile_axis {what} axis {axis}: {:?} against {w}",
                        p.as_f64()
                    );
                    assert!(
                        close(m.as_f64(), wm, tol),
                        "nanmedian_axis {what} axis {axis}: {:?} against {wm}",
                        m.as_f64()
                    );
                }
            }
        }
    }
    let d = DeviceArray::from_ndarray(ctx, &Array1::from(vec![T::few(rng); 3]))?;
    assert!(d.nanquantile(1.5).is_err() && d.nanpercentile(101.0).is_err());
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn nan_quantiles_leave_the_nans_out() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(9137);
    check_nan_quantiles::<f64>(&ctx, &mut rng, 1e-12)?;
    check_nan_quantiles::<f32>(&ctx, &mut rng, 1e-6)?;
    check_nan_quantiles::<f16>(&ctx, &mut rng, 2e-3)?;
    check_nan_quantiles::<bf16>(&ctx, &mut rng, 1e-2)?;
    // Integers have no NaN: the nan forms are the plain ones.
    check_nan_quantiles::<i32>(&ctx, &mut rng, 1e-12)?;
    check_nan_quantiles::<u8>(&ctx, &mut rng, 1e-12)?;
    Ok(())
}

macro_rules! for_every_type {
    ($f:ident, $ctx:expr, $rng:expr) => {{
        $f::<Bool>($ctx, $rng)?;
        $f::<i8>($ctx, $rng)?;
        $f::<u8>($ctx, $rng)?;
        $f::<i16>($ctx, $rng)?;
        $f::<u16>($ctx, $rng)?;
        $f::<i32>($ctx, $rng)?;
        $f::<u32>($ctx, $rng)?;
        $f::<i64>($ctx, $rng)?;
        $f::<u64>($ctx, $rng)?;
        $f::<f16>($ctx, $rng)?;
        $f::<bf16>($ctx, $rng)?;
        $f::<f32>($ctx, $rng)?;
        $f::<f64>($ctx, $rng)?;
    }};
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn sort_and_argsort_of_every_type_match_the_host() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(46);
    for_every_type!(check_flat, &ctx, &mut rng);
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn sorts_along_each_axis_of_every_type_match_the_host() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(47);
    for_every_type!(check_axes, &ctx, &mut rng);
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn unique_of_every_type_matches_the_host() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(48);
    for_every_type!(check_unique, &ctx, &mut rng);
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn searchsorted_of_every_type_matches_the_host() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(49);
    for_every_type!(check_searchsorted, &ctx, &mut rng);
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn quantiles_match_numpys_linear_method() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(50);
    check_quantiles::<f64>(&ctx, &mut rng, 1e-12)?;
    check_quantiles::<f32>(&ctx, &mut rng, 1e-6)?;
    check_quantiles::<f16>(&ctx, &mut rng, 2e-3)?;
    check_quantiles::<bf16>(&ctx, &mut rng, 1e-2)?;
    check_quantiles::<i32>(&ctx, &mut rng, 1e-12)?;
    check_quantiles::<u8>(&ctx, &mut rng, 1e-12)?;
    check_quantiles::<i64>(&ctx, &mut rng, 1e-9)?;
    check_quantiles::<Bool>(&ctx, &mut rng, 1e-12)?;
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_long_sort_and_argsort_match_the_host_and_streams_give_the_same() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(51);
    let n = (1 << 24) + 12345;
    let h: Vec<f32> = data(&mut rng, n, false);
    let d = DeviceArray::from_ndarray(&ctx, &Array1::from(h.clone()))?;
    let want_idx = host_argsort(&h);
    let want: Vec<f32> = want_idx.iter().map(|&i| h[i as usize]).collect();
    assert_same(&d.sort()?.to_vec()?, &want, "2^24 f32 sort");
    assert_eq!(d.argsort()?.to_vec()?, want_idx, "2^24 f32 argsort");
    let stream = gpu_runtime::Stream::new(&ctx)?;
    let s = d.on(&stream).sort()?;
    let a = d.on(&stream).argsort()?;
    stream.synchronize()?;
    assert_same(&s.to_vec()?, &want, "2^24 f32 sort on a stream");
    assert_eq!(a.to_vec()?, want_idx, "2^24 f32 argsort on a stream");
    // Complex numbers have no order here.
    let c = DeviceArray::from_ndarray(
        &ctx,
        &Array1::from(vec![gpu_runtime::types::Complex32::new(1.0, 0.0); 3]),
    )?;
    assert!(c.sort().is_err());
    Ok(())
}
