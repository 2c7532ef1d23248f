//! NumPy 2's array-API `unique_all`, `unique_counts`, `unique_inverse` and `unique_values`
//! (each NaN a value of its own), `unique` with `equal_nan` either way, and `unique(a, axis=k)`
//! (`unique_axis`: distinct slices in lexicographic order) on a GPU, on every real element
//! type, plain and on a stream. The reference is computed here on the host: a stable sort of
//! the elements (or of the slices, lexicographically) in NumPy's order (NaN last, `-0.0` equal
//! to `0.0`), a new value wherever an element differs from the one before (NaN differs from
//! NaN unless `equal_nan`), and from that the first positions, counts and inverse; the data
//! are drawn from a few values (CuPy's `shaped_random((100, 100))`), so that values and
//! slices repeat. Small cases are checked against literals printed by NumPy 2.4.

use std::any::type_name;
use std::cmp::Ordering;

use gpu_runtime::gpuarray::{
    Bool, DeviceArray, DeviceArrayView, Element, Unique, UniqueAll, UniqueAxis, UniqueOptions,
};
use gpu_runtime::half::{bf16, f16};
use gpu_runtime::ndarray::{arr0, arr2, s, ArrayD, ArrayViewD, Axis, Ix1, IxDyn};
use gpu_runtime::types::Complex64;
use gpu_runtime::{ArgumentError, ArrayShapeError, Context, Error, Stream};
use gpu_suite::Rng;

const NAN: f64 = f64::NAN;

/// Every part of `unique`.
const ALL: UniqueOptions = UniqueOptions {
    return_index: true,
    return_inverse: true,
    return_counts: true,
};

/// An element type, made from a small code or a value and compared as `f64`.
trait Val: Element {
    /// One of eleven values for a code in `0..11`: NaN, `-0.0` and `0.0` among them for floats.
    fn code(c: u64) -> Self;
    /// The value `v` (literals).
    fn of(v: f64) -> Self;
    /// The value as `f64`.
    fn f(self) -> f64;
    const FLOAT: bool;
}

macro_rules! int_val {
    ($($t:ty: $off:expr),*) => {$(
        impl Val for $t {
            fn code(c: u64) -> Self {
                (c as i64 - $off) as $t
            }
            fn of(v: f64) -> Self {
                v as $t
            }
            fn f(self) -> f64 {
                self as f64
            }
            const FLOAT: bool = false;
        }
    )*};
}
int_val!(i8: 5, i16: 5, i32: 5, i64: 5, u8: 0, u16: 0, u32: 0, u64: 0);

impl Val for Bool {
    fn code(c: u64) -> Self {
        Bool::from(c.is_multiple_of(3))
    }
    fn of(v: f64) -> Self {
        Bool::from(v != 0.0)
    }
    fn f(self) -> f64 {
        f64::from(u8::from(bool::from(self)))
    }
    const FLOAT: bool = false;
}

macro_rules! float_val {
    ($($t:ty: $from:expr, $to:expr);*) => {$(
        impl Val for $t {
            fn code(c: u64) -> Self {
                $from(match c {
                    10 => NAN,
                    9 => -0.0,
                    _ => (c as f64 - 4.0) * 0.25,
                })
            }
            fn of(v: f64) -> Self {
                $from(v)
            }
            fn f(self) -> f64 {
                $to(self)
            }
            const FLOAT: bool = true;
        }
    )*};
}
float_val!(
    f16: f16::from_f64, |v: f16| v.to_f64();
    bf16: bf16::from_f64, |v: bf16| v.to_f64();
    f32: |v: f64| v as f32, |v: f32| v as f64;
    f64: |v: f64| v, |v: f64| v
);

/// `$f::<T>(ctx, rng)?` for every real element type `T`.
macro_rules! for_every_type {
    ($f:ident, $ctx:expr, $rng:expr) => {
        for_every_type!(@ $f, $ctx, $rng; Bool, i8, u8, i16, u16, i32, u32, i64, u64, f16, bf16, f32, f64)
    };
    (@ $f:ident, $ctx:expr, $rng:expr; $($t:ty),*) => {{
        $($f::<$t>($ctx, $rng)?;)*
    }};
}

/// NumPy's order: NaN after everything and equal to NaN, `-0.0 == 0.0`.
fn float_ord(a: f64, b: f64) -> Ordering {
    match (a.is_nan(), b.is_nan()) {
        (true, true) => Ordering::Equal,
        (true, false) => Ordering::Greater,
        (false, true) => Ordering::Less,
        _ => a.partial_cmp(&b).unwrap(),
    }
}

fn same(a: f64, b: f64) -> bool {
    a == b || (a.is_nan() && b.is_nan())
}

/// NumPy's `unique` on the host: the distinct slices, each one's first position, the inverse
/// and the counts.
struct HostUnique {
    values: Vec<Vec<f64>>,
    first: Vec<i64>,
    inverse: Vec<i64>,
    counts: Vec<i64>,
}

/// The unique slices in lexicographic order (stable: ties keep their order); a slice starts a
/// new value where an element differs from the slice before (NaN from NaN unless `equal_nan`).
fn host_unique(slices: &[Vec<f64>], equal_nan: bool) -> HostUnique {
    let lex = |a: &Vec<f64>, b: &Vec<f64>| {
        let o = a.iter().zip(b).map(|(&x, &y)| float_ord(x, y));
        o.into_iter().find(|o| o.is_ne()).unwrap_or(Ordering::Equal)
    };
    let mut order: Vec<usize> = (0..slices.len()).collect();
    order.sort_by(|&a, &b| lex(&slices[a], &slices[b]));
    let differ = |x: f64, y: f64| !(x == y || (equal_nan && x.is_nan() && y.is_nan()));
    let mut u = HostUnique {
        values: Vec::new(),
        first: Vec::new(),
        inverse: vec![0; slices.len()],
        counts: Vec::new(),
    };
    for &i in &order {
        let s = &slices[i];
        let new = u
            .values
            .last()
            .is_none_or(|l: &Vec<f64>| l.iter().zip(s).any(|(&x, &y)| differ(x, y)));
        if new {
            u.values.push(s.clone());
            u.first.push(i as i64);
            u.counts.push(0);
        }
        *u.counts.last_mut().unwrap() += 1;
        u.inverse[i] = u.values.len() as i64 - 1;
    }
    u
}

/// The flat unique of the elements (in C order).
fn host_unique_flat(h: &[f64], equal_nan: bool) -> HostUnique {
    host_unique(&h.iter().map(|&x| vec![x]).collect::<Vec<_>>(), equal_nan)
}

/// A flat `unique`'s parts, brought to the host: the values as `f64`, the first positions,
/// the inverse with its shape and the counts, `None` where not computed.
struct Got(Vec<f64>, Option<Vec<i64>>, Option<Inverse>, Option<Vec<i64>>);

type Inverse = (Vec<usize>, Vec<i64>);

fn vals<T: Val>(v: &DeviceArray<T, Ix1>) -> gpu_runtime::Result<Vec<f64>> {
    Ok(v.to_vec()?.into_iter().map(T::f).collect())
}

fn inv(v: &DeviceArray<i64, IxDyn>) -> gpu_runtime::Result<Inverse> {
    Ok((v.shape().to_vec(), v.to_vec()?))
}

fn from_unique<T: Val>(u: Unique<T>) -> gpu_runtime::Result<Got> {
    let (index, counts) = (u.indices.map(|i| i.to_vec()), u.counts.map(|c| c.to_vec()));
    let inverse = u.inverse.as_ref().map(inv).transpose()?;
    Ok(Got(
        vals(&u.values)?,
        index.transpose()?,
        inverse,
        counts.transpose()?,
    ))
}

fn from_all<T: Val>(u: UniqueAll<T>) -> gpu_runtime::Result<Got> {
    let (index, counts) = (Some(u.indices.to_vec()?), Some(u.counts.to_vec()?));
    Ok(Got(
        vals(&u.values)?,
        index,
        Some(inv(&u.inverse_indices)?),
        counts,
    ))
}

/// The flat forms of `$x` (an array, or an array on a stream), brought to the host: with each
/// NaN a value of its own, `unique_all`, `unique_counts`, `unique_inverse`, `unique_values`
/// and `unique_equal_nan(false)` with every part and with the counts alone; with the NaNs one
/// value, `unique_equal_nan(true)` both ways and `unique_with`.
macro_rules! flat_forms {
    ($x:expr) => {{
        let x = $x;
        let only = UniqueOptions {
            return_counts: true,
            ..Default::default()
        };
        let (c, i) = (x.unique_counts()?, x.unique_inverse()?);
        let all = from_all(x.unique_all()?)?;
        let counts = Got(vals(&c.values)?, None, None, Some(c.counts.to_vec()?));
        let inverse = Got(vals(&i.values)?, None, Some(inv(&i.inverse_indices)?), None);
        let values = Got(vals(&x.unique_values()?)?, None, None, None);
        let (d_all, d_counts) = (x.unique_equal_nan(ALL, false)?, x.unique_equal_nan(only, false)?);
        let (e_all, e_counts) = (x.unique_equal_nan(ALL, true)?, x.unique_equal_nan(only, true)?);
        let with = from_unique(x.unique_with(ALL)?)?;
        let distinct = [
            ("unique_all", all),
            ("unique_counts", counts),
            ("unique_inverse", inverse),
            ("unique_values", values),
            ("unique_equal_nan(false)", from_unique(d_all)?),
            ("unique_equal_nan(false) counts", from_unique(d_counts)?),
        ];
        let equal = [
            ("unique_equal_nan(true)", from_unique(e_all)?),
            ("unique_equal_nan(true) counts", from_unique(e_counts)?),
            ("unique_with", with),
        ];
        (distinct, equal)
    }};
}

type Forms = ([(&'static str, Got); 6], [(&'static str, Got); 3]);

fn assert_values(got: &[f64], want: &[f64], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: number of values");
    for (i, (&g, &w)) in got.iter().zip(want).enumerate() {
        assert!(same(g, w), "{what}: value {i}: {g} against {w}");
    }
}

/// The parts that came back against the host's; the inverse in the input's `shape`.
fn check_got(got: &Got, want: &HostUnique, shape: &[usize], what: &str) {
    assert_values(&got.0, &want.values.concat(), what);
    if let Some(i) = &got.1 {
        assert_eq!(i, &want.first, "{what}: indices");
    }
    if let Some((s, v)) = &got.2 {
        assert_eq!(&s[..], shape, "{what}: inverse shape");
        assert_eq!(v, &want.inverse, "{what}: inverse");
    }
    if let Some(c) = &got.3 {
        assert_eq!(c, &want.counts, "{what}: counts");
    }
}

/// The flat forms of an array of `shape` against the host's unique with NaNs distinct and
/// with NaNs one value.
fn check_forms(forms: Forms, distinct: &HostUnique, equal: &HostUnique, shape: &[usize], what: &str) {
    let (d, e) = forms;
    for (want, forms) in [(distinct, &d[..]), (equal, &e[..])] {
        for (name, got) in forms {
            check_got(got, want, shape, &format!("{what}: {name}"));
            if name.ends_with("counts") && name.starts_with("unique_equal_nan") {
                assert!(
                    got.1.is_none() && got.2.is_none(),
                    "{what}: {name}: parts not asked for"
                );
            }
        }
    }
}

/// The flat forms of `d` against the host, whose elements in `d`'s C order are `h`.
fn check_flat<T: Val>(d: &DeviceArrayView<'_, T, IxDyn>, h: &[f64], what: &str) -> gpu_runtime::Result<()> {
    let (distinct, equal) = (host_unique_flat(h, false), host_unique_flat(h, true));
    check_forms(flat_forms!(d), &distinct, &equal, d.shape(), what);
    Ok(())
}

/// A host result written out (NumPy's literals), of flat values.
fn lit(values: &[f64], first: &[i64], inverse: &[i64], counts: &[i64]) -> HostUnique {
    HostUnique {
        values: values.iter().map(|&v| vec![v]).collect(),
        first: first.to_vec(),
        inverse: inverse.to_vec(),
        counts: counts.to_vec(),
    }
}

/// The slices of `h` along `ax`, each in C order.
fn slices_of(h: &ArrayViewD<'_, f64>, ax: usize) -> Vec<Vec<f64>> {
    h.axis_iter(Axis(ax))
        .map(|s| s.iter().copied().collect())
        .collect()
}

/// The parts of `unique_axis(ax)` of an array of `shape` against `want` (its slices' values
/// in C order).
fn check_axis_got<T: Val>(
    u: UniqueAxis<T>,
    ax: usize,
    shape: &[usize],
    want: &HostUnique,
    what: &str,
) -> gpu_runtime::Result<()> {
    let mut vshape = shape.to_vec();
    vshape[ax] = want.values.len();
    assert_eq!(u.values.shape(), &vshape[..], "{what}: values shape");
    let values = u.values.to_ndarray()?;
    for (k, (g, w)) in values.axis_iter(Axis(ax)).zip(&want.values).enumerate() {
        let g: Vec<f64> = g.iter().map(|&x| x.f()).collect();
        assert_values(&g, w, &format!("{what}: value {k}"));
    }
    let host = |v: Option<DeviceArray<i64, Ix1>>| v.map(|v| v.to_vec()).transpose();
    let parts = [
        ("indices", host(u.indices)?, &want.first),
        ("inverse", host(u.inverse)?, &want.inverse),
        ("counts", host(u.counts)?, &want.counts),
    ];
    for (name, part, want) in parts {
        if let Some(part) = part {
            assert_eq!(&part, want, "{what}: {name}");
        }
    }
    Ok(())
}

/// `unique_axis(axis)` of `d` against the host `h` (the same values, in the same shape), with
/// every part and with none.
fn check_axis<T: Val>(
    d: &DeviceArrayView<'_, T, IxDyn>,
    h: &ArrayViewD<'_, f64>,
    axis: isize,
    what: &str,
) -> gpu_runtime::Result<()> {
    let what = format!("{what}, axis {axis}");
    let ax = if axis < 0 { axis + h.ndim() as isize } else { axis } as usize;
    let want = host_unique(&slices_of(h, ax), false);
    check_axis_got(d.unique_axis(axis, ALL)?, ax, h.shape(), &want, &what)?;
    let v = d.unique_axis(axis, UniqueOptions::default())?;
    assert!(
        v.indices.is_none() && v.inverse.is_none() && v.counts.is_none(),
        "{what}: parts"
    );
    check_axis_got(v, ax, h.shape(), &want, &what)
}

/// Random codes `0..k` of `shape`.
fn random_codes(rng: &mut Rng, shape: &[usize], k: u64) -> ArrayD<u64> {
    let n = shape.iter().product();
    let v = (0..n).map(|_| rng.next_u64() % k).collect();
    ArrayD::from_shape_vec(IxDyn(shape), v).unwrap()
}

/// `n` random positions in `0..of`.
fn pick(rng: &mut Rng, n: usize, of: u64) -> Vec<usize> {
    (0..n).map(|_| (rng.next_u64() % of) as usize).collect()
}

/// The array of `T` of the codes on the device and the same values as `f64` on the host.
fn upload<T: Val>(
    ctx: &Context,
    codes: &ArrayD<u64>,
) -> gpu_runtime::Result<(DeviceArray<T, IxDyn>, ArrayD<f64>)> {
    let host = codes.mapv(T::code);
    Ok((DeviceArray::from_ndarray(ctx, &host)?, host.mapv(T::f)))
}

/// The flat forms of one type: CuPy's `(100, 100)` of few values, its transpose, a slice at
/// an offset, 3-D, one element, 0-d and empty.
fn flat_case<T: Val>(ctx: &Context, rng: &mut Rng) -> gpu_runtime::Result<()> {
    let name = type_name::<T>();
    let (d, h) = upload::<T>(ctx, &random_codes(rng, &[100, 100], 11))?;
    let flat = |v: ArrayViewD<'_, f64>| v.iter().copied().collect::<Vec<_>>();
    check_flat(&d.view(), &flat(h.view()), &format!("{name} (100, 100)"))?;
    let t = d.view().reversed_axes();
    check_flat(&t, &flat(h.view().reversed_axes()), &format!("{name} transposed"))?;
    let sl = d.slice(s![37.., ..])?.into_dyn();
    check_flat(
        &sl,
        &flat(h.slice(s![37.., ..]).into_dyn()),
        &format!("{name} rows 37.."),
    )?;
    for shape in [vec![4, 5, 6], vec![1], vec![], vec![0], vec![2, 0, 3]] {
        let (d, h) = upload::<T>(ctx, &random_codes(rng, &shape, 11))?;
        check_flat(&d.view(), &flat(h.view()), &format!("{name} {shape:?}"))?;
    }
    Ok(())
}

/// `unique_axis` of one type: `(100, 100)` with repeated rows and columns (zeros of either
/// sign, for floats) along each axis and transposed, CuPy's plain random `(100, 100)`, and
/// 3-D with repeated slices along the last axis (NaN in some, for floats).
fn axis_case<T: Val>(ctx: &Context, rng: &mut Rng) -> gpu_runtime::Result<()> {
    let name = type_name::<T>();
    let (rows, cols) = (pick(rng, 100, 6), pick(rng, 100, 7));
    let mut codes = random_codes(rng, &[6, 7], 10)
        .select(Axis(0), &rows)
        .select(Axis(1), &cols);
    if T::FLOAT {
        // Codes 4 and 9 are `0.0` and `-0.0`: equal, so the repeats stay repeats.
        codes.mapv_inplace(|c| {
            if (c == 4 || c == 9) && rng.next_u64() & 1 == 1 {
                13 - c
            } else {
                c
            }
        });
    }
    let (d, h) = upload::<T>(ctx, &codes)?;
    for axis in [0, 1, -1, -2] {
        check_axis(&d.view(), &h.view(), axis, &format!("{name} (100, 100)"))?;
        let (t, ht) = (d.view().reversed_axes(), h.view().reversed_axes());
        check_axis(&t, &ht, axis, &format!("{name} transposed"))?;
    }
    let (d, h) = upload::<T>(ctx, &random_codes(rng, &[100, 100], 10))?;
    check_axis(&d.view(), &h.view(), 0, &format!("{name} random (100, 100)"))?;
    check_axis(&d.view(), &h.view(), 1, &format!("{name} random (100, 100)"))?;
    let cls = pick(rng, 30, 5);
    let (d, h) = upload::<T>(ctx, &random_codes(rng, &[3, 4, 5], 11).select(Axis(2), &cls))?;
    for axis in [-1, 0, 1] {
        check_axis(&d.view(), &h.view(), axis, &format!("{name} (3, 4, 30)"))?;
    }
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn unique_all_counts_inverse_values_of_every_type_match_the_host() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(0x0411_0ae1);
    for_every_type!(flat_case, &ctx, &mut rng);
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn unique_axis_of_every_type_matches_the_host() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(0xa815_0a11);
    for_every_type!(axis_case, &ctx, &mut rng);
    Ok(())
}

/// NumPy 2.4's `unique(a, return_index=True, return_inverse=True, return_counts=True,
/// equal_nan=...)` (and `unique_all`) of `[3, 1, 3, nan, nan, 2]`, of zeros and NaNs of both
/// signs, and of CuPy's `test_unique_equal_nan` case `[2, nan, 2, nan, 1]`.
fn small_literals<T: Val>(ctx: &Context, _: &mut Rng) -> gpu_runtime::Result<()> {
    let name = type_name::<T>();
    type Case<'a> = (&'a [f64], [&'a [f64]; 2], [&'a [i64]; 6]);
    let cases: [Case; 3] = [
        (
            &[3.0, 1.0, 3.0, NAN, NAN, 2.0],
            [&[1.0, 2.0, 3.0, NAN, NAN], &[1.0, 2.0, 3.0, NAN]],
            [
                &[1, 5, 0, 3, 4],
                &[2, 0, 2, 3, 4, 1],
                &[1, 1, 2, 1, 1],
                &[1, 5, 0, 3],
                &[2, 0, 2, 3, 3, 1],
                &[1, 1, 2, 2],
            ],
        ),
        (
            &[0.0, -0.0, NAN, -NAN, 1.0],
            [&[0.0, 1.0, NAN, NAN], &[0.0, 1.0, NAN]],
            [
                &[0, 4, 2, 3],
                &[0, 0, 2, 3, 1],
                &[2, 1, 1, 1],
                &[0, 4, 2],
                &[0, 0, 2, 2, 1],
                &[2, 1, 2],
            ],
        ),
        (
            &[2.0, NAN, 2.0, NAN, 1.0],
            [&[1.0, 2.0, NAN, NAN], &[1.0, 2.0, NAN]],
            [
                &[4, 0, 1, 3],
                &[1, 2, 1, 3, 0],
                &[1, 2, 1, 1],
                &[4, 0, 1],
                &[1, 2, 1, 2, 0],
                &[1, 2, 2],
            ],
        ),
    ];
    for (a, v, p) in cases {
        let d =
            DeviceArray::from_ndarray(ctx, &ArrayD::from_shape_fn(IxDyn(&[a.len()]), |i| T::of(a[i[0]])))?;
        let (distinct, equal) = (lit(v[0], p[0], p[1], p[2]), lit(v[1], p[3], p[4], p[5]));
        check_forms(
            flat_forms!(d.view()),
            &distinct,
            &equal,
            &[a.len()],
            &format!("{name} {a:?}"),
        );
    }
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn unique_all_and_equal_nan_match_numpy_literals() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(1);
    small_literals::<f16>(&ctx, &mut rng)?;
    small_literals::<bf16>(&ctx, &mut rng)?;
    small_literals::<f32>(&ctx, &mut rng)?;
    small_literals::<f64>(&ctx, &mut rng)?;
    // 0-d: one value, a 0-d inverse; empty: no values, an inverse of the input's shape;
    // integers: the inverse in the input's shape.
    let zero_d = DeviceArray::from_ndarray(&ctx, &arr0(3.0f64).into_dyn())?;
    let want = lit(&[3.0], &[0], &[0], &[1]);
    check_forms(flat_forms!(zero_d.view()), &want, &want, &[], "0-d");
    let empty = DeviceArray::<f32, _>::zeros(&ctx, IxDyn(&[3, 0]))?;
    let want = lit(&[], &[], &[], &[]);
    check_forms(flat_forms!(empty.view()), &want, &want, &[3, 0], "(3, 0)");
    let ints = DeviceArray::from_ndarray(&ctx, &arr2(&[[3i32, 1], [3, 2]]).into_dyn())?;
    let want = lit(&[1.0, 2.0, 3.0], &[1, 3, 0], &[2, 0, 2, 1], &[1, 1, 2]);
    check_forms(flat_forms!(ints.view()), &want, &want, &[2, 2], "i32 (2, 2)");
    Ok(())
}

/// NumPy 2.4's `unique(a, axis, return_index=True, return_inverse=True, return_counts=True)`
/// of `a` (as `T`): the unique slices `values` (each in C order), first positions, inverse and
/// counts.
fn axis_literal<T: Val>(
    ctx: &Context,
    a: &ArrayD<f64>,
    axis: isize,
    values: &[&[f64]],
    parts: [&[i64]; 3],
) -> gpu_runtime::Result<()> {
    let d = DeviceArray::from_ndarray(ctx, &a.mapv(T::of))?;
    let ax = if axis < 0 { axis + a.ndim() as isize } else { axis } as usize;
    let want = HostUnique {
        values: values.iter().map(|v| v.to_vec()).collect(),
        first: parts[0].to_vec(),
        inverse: parts[1].to_vec(),
        counts: parts[2].to_vec(),
    };
    let what = format!("{} {:?} axis {axis}", type_name::<T>(), a.shape());
    check_axis_got(d.unique_axis(axis, ALL)?, ax, a.shape(), &want, &what)
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn unique_axis_matches_numpy_literals() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    // CuPy's test_unique_equal_nan 2-D case: a slice holding NaN equals no other slice.
    let y = arr2(&[[2.0, NAN, 2.0], [NAN, 1.0, NAN], [NAN, 1.0, NAN]]).into_dyn();
    let rows: [&[f64]; 3] = [&[2.0, NAN, 2.0], &[NAN, 1.0, NAN], &[NAN, 1.0, NAN]];
    let cols: [&[f64]; 3] = [&[2.0, NAN, NAN], &[2.0, NAN, NAN], &[NAN, 1.0, 1.0]];
    for axis_literal in [axis_literal::<f32>, axis_literal::<f64>, axis_literal::<f16>] {
        axis_literal(&ctx, &y, 0, &rows, [&[0, 1, 2], &[0, 1, 2], &[1, 1, 1]])?;
        axis_literal(&ctx, &y, 1, &cols, [&[0, 2, 1], &[0, 2, 1], &[1, 1, 1]])?;
    }
    // -0.0 equals 0.0; NaN sorts last, equal to NaN in the order but never the same slice.
    let z = arr2(&[
        [0.0, 1.0],
        [-0.0, 1.0],
        [NAN, 0.0],
        [NAN, -1.0],
        [1.0, NAN],
        [-1.0, 2.0],
        [0.0, 1.0],
    ]);
    let zv: [&[f64]; 5] = [&[-1.0, 2.0], &[0.0, 1.0], &[1.0, NAN], &[NAN, -1.0], &[NAN, 0.0]];
    let zp: [&[i64]; 3] = [&[5, 0, 4, 3, 2], &[1, 1, 4, 3, 2, 0, 1], &[1, 3, 1, 1, 1]];
    axis_literal::<f64>(&ctx, &z.clone().into_dyn(), 0, &zv, zp)?;
    axis_literal::<bf16>(&ctx, &z.clone().into_dyn(), -2, &zv, zp)?;
    // The same along the last axis of its transpose (an F-order host array).
    axis_literal::<f32>(&ctx, &z.t().to_owned().into_dyn(), -1, &zv, zp)?;
    // Booleans and integers (the doc example).
    let b = arr2(&[[1.0, 0.0], [0.0, 1.0], [1.0, 0.0]]).into_dyn();
    axis_literal::<Bool>(
        &ctx,
        &b,
        0,
        &[&[0.0, 1.0], &[1.0, 0.0]],
        [&[1, 0], &[1, 0, 1], &[1, 2]],
    )?;
    let bv: [&[f64]; 2] = [&[0.0, 1.0, 0.0], &[1.0, 0.0, 1.0]];
    axis_literal::<Bool>(&ctx, &b, 1, &bv, [&[1, 0], &[1, 0], &[1, 1]])?;
    let n = arr2(&[[1.0, 0.0], [2.0, 2.0], [1.0, 0.0]]).into_dyn();
    axis_literal::<i32>(
        &ctx,
        &n,
        0,
        &[&[1.0, 0.0], &[2.0, 2.0]],
        [&[0, 1], &[0, 1, 0], &[2, 1]],
    )?;
    let nv: [&[f64]; 2] = [&[0.0, 2.0, 0.0], &[1.0, 2.0, 1.0]];
    axis_literal::<u16>(&ctx, &n, -1, &nv, [&[1, 0], &[1, 0], &[1, 1]])?;
    // Empty: no slices, or slices without elements (one value that they all are).
    let e = |shape: &[usize]| ArrayD::<f64>::zeros(IxDyn(shape));
    axis_literal::<f64>(&ctx, &e(&[3, 0, 2]), 0, &[&[]], [&[0], &[0, 0, 0], &[3]])?;
    axis_literal::<f64>(&ctx, &e(&[3, 0, 2]), 1, &[], [&[], &[], &[]])?;
    axis_literal::<f64>(&ctx, &e(&[3, 0, 2]), 2, &[&[]], [&[0], &[0, 0], &[2]])?;
    axis_literal::<i8>(&ctx, &e(&[3, 0, 2]), -1, &[&[]], [&[0], &[0, 0], &[2]])?;
    axis_literal::<f32>(&ctx, &e(&[0, 3]), 1, &[&[]], [&[0], &[0, 0, 0], &[3]])?;
    axis_literal::<f32>(&ctx, &e(&[0, 0]), 0, &[], [&[], &[], &[]])?;
    // No such axis; a 0-d array has none.
    let d = DeviceArray::from_ndarray(&ctx, &n)?;
    let no_axis = |r: gpu_runtime::Result<UniqueAxis<f64>>| {
        assert!(
            matches!(r, Err(Error::Shape(ArrayShapeError::NoSuchAxis { .. }))),
            "{r:?}"
        )
    };
    no_axis(d.unique_axis(2, ALL));
    no_axis(d.unique_axis(-3, ALL));
    no_axis(DeviceArray::from_ndarray(&ctx, &arr0(1.0))?.unique_axis(0, ALL));
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn unique_forms_on_a_stream_match_the_host() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let stream = Stream::new(&ctx)?;
    let mut rng = Rng::new(0x5eed);
    let (rows, cols) = (pick(&mut rng, 60, 8), pick(&mut rng, 50, 9));
    let codes = random_codes(&mut rng, &[8, 9], 11)
        .select(Axis(0), &rows)
        .select(Axis(1), &cols);
    let (d, h) = upload::<f32>(&ctx, &codes)?;
    // The transpose (50, 60), whose C order is `h`'s transposed.
    let (t, ht) = (d.view().reversed_axes(), h.view().reversed_axes());
    let flat: Vec<f64> = ht.iter().copied().collect();
    let on = t.on(&stream);
    let (axis0, axis1) = (on.unique_axis(0, ALL)?, on.unique_axis(-1, ALL)?);
    let forms = flat_forms!(&on);
    stream.synchronize()?;
    let (distinct, equal) = (host_unique_flat(&flat, false), host_unique_flat(&flat, true));
    check_forms(forms, &distinct, &equal, t.shape(), "f32 transposed on a stream");
    for (u, ax) in [(axis0, 0), (axis1, 1)] {
        let want = host_unique(&slices_of(&ht, ax), false);
        check_axis_got(u, ax, t.shape(), &want, &format!("unique_axis {ax} on a stream"))?;
    }
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn unique_of_complex_is_refused() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let c = DeviceArray::from_ndarray(&ctx, &arr2(&[[Complex64::new(1.0, 2.0); 3]; 2]))?;
    let stream = Stream::new(&ctx)?;
    let refused = |r: gpu_runtime::Result<()>, function: &str| match r {
        Err(Error::Argument(ArgumentError::UndefinedOnElement { function: f, .. })) => {
            assert_eq!(&*f, function)
        }
        other => panic!("{function}: {other:?}"),
    };
    refused(c.unique_all().map(drop), "DeviceArray::unique");
    refused(c.unique_counts().map(drop), "DeviceArray::unique");
    refused(c.unique_inverse().map(drop), "DeviceArray::unique");
    refused(c.unique_values().map(drop), "DeviceArray::unique");
    refused(c.unique_equal_nan(ALL, false).map(drop), "DeviceArray::unique");
    refused(c.unique_axis(0, ALL).map(drop), "DeviceArray::unique_axis");
    refused(c.on(&stream).unique_all().map(drop), "DeviceArray::unique");
    refused(c.on(&stream).unique_counts().map(drop), "DeviceArray::unique");
    refused(
        c.on(&stream).unique_axis(-1, ALL).map(drop),
        "DeviceArray::unique_axis",
    );
    Ok(())
}
