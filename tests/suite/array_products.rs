//! `gpuarray::inner`, `outer`, `cross` and `cross_axes`, and `DeviceArray::trace` and
//! `trace_axes`, on a GPU against host references written here from NumPy's definitions
//! (`inner`: the sums of products over the last axes, a 0-d operand multiplying; `outer`: the
//! products of the flattened operands; `cross`: NumPy's formula per component, a missing third
//! component 0, the other axes broadcast, two 2-vectors giving the `z` component alone;
//! `trace`: the sum of a diagonal in NumPy 2's sum type) on random data of `f32`, `f64`, small
//! `i32`, wrapping `u8`, `f16` (eighths, whose products and sums here are exact) and complex
//! `f64` (no conjugate), with transposed, stepped and reversed views as operands. Anchored by
//! values NumPy 2.4 printed (CuPy's cross and trace cases); then the refusals and the stream
//! forms.

use std::any::type_name;
use std::ops::{Add, Mul, Sub};

use gpu_runtime::gpuarray::{self, Bool, DeviceArray, Element, SumType};
use gpu_runtime::half::f16;
use gpu_runtime::ndarray::{arr1, arr2, s, ArrayD, ArrayViewD, Axis, Dimension, IxDyn};
use gpu_runtime::types::Complex64;
use gpu_runtime::{ArgumentError, ArrayShapeError, Context, Error, Stream};
use gpu_suite::Rng;

/// An element type's host arithmetic (NumPy's: integers wrap, `f16` rounds each operation),
/// random values, and how near a device result must come to the host's (the device sums in
/// another order and may fuse a multiply and an add).
trait Num: Element {
    const ZERO: Self;
    fn random(rng: &mut Rng) -> Self;
    fn add(self, o: Self) -> Self;
    fn mul(self, o: Self) -> Self;
    fn sub(self, o: Self) -> Self;
    fn near(got: Self, want: Self) -> bool;
}

macro_rules! num {
    ($($t:ty: $zero:expr, $draw:expr, $near:expr, [$add:expr, $mul:expr, $sub:expr];)*) => {$(
        impl Num for $t {
            const ZERO: $t = $zero;
            fn random(rng: &mut Rng) -> $t { let draw: fn(&mut Rng) -> $t = $draw; draw(rng) }
            fn add(self, o: $t) -> $t { ($add)(self, o) }
            fn mul(self, o: $t) -> $t { ($mul)(self, o) }
            fn sub(self, o: $t) -> $t { ($sub)(self, o) }
            fn near(got: $t, want: $t) -> bool { let near: fn($t, $t) -> bool = $near; near(got, want) }
        }
    )*};
}
macro_rules! float_num {
    ($($t:ty: $zero:expr, $draw:expr, $near:expr;)*) => {
        num! { $($t: $zero, $draw, $near, [Add::add, Mul::mul, Sub::sub];)* }
    };
}
macro_rules! int_num {
    ($($t:ty: $draw:expr;)*) => {
        num! { $(
            $t: 0, $draw, |g, w| g == w, [<$t>::wrapping_add, <$t>::wrapping_mul, <$t>::wrapping_sub];
        )* }
    };
}
float_num! {
    f32: 0.0, |r| r.f32(), |g, w| (g - w).abs() <= 1e-5 * (1.0 + w.abs());
    f64: 0.0, |r| r.f64(), |g, w| (g - w).abs() <= 1e-12 * (1.0 + w.abs());
    // Eighths in [-1, 1]: each product (a multiple of 1/64 of at most 1) and each sum of a few
    // is exact in `f16`, so neither the device's order nor its rounding shows.
    f16: f16::ZERO, |r| f16::from_f64((r.next_u64() % 17) as f64 / 8.0 - 1.0),
        |g, w| (g.to_f64() - w.to_f64()).abs() <= 1e-3 * (1.0 + w.to_f64().abs());
    Complex64: Complex64::new(0.0, 0.0), |r| Complex64::new(r.f64(), r.f64()),
        |g, w| (g - w).norm() <= 1e-12 * (1.0 + w.norm());
}
// `i32` small, as NumPy's tests keep it (exact), and so the sum types; `u8` any bits (wrapping).
int_num! {
    i32: |r| (r.next_u64() % 17) as i32 - 8;
    i64: |r| (r.next_u64() % 17) as i64 - 8;
    u64: |r| r.next_u64() % 17;
    u8: |r| r.next_u64() as u8;
}

/// An element in its `trace` sum type (`i32` as `i64`, `u8` as `u64`, the others as they are).
trait Widen: Num + SumType<Sum: Num> {
    fn widen(self) -> Self::Sum;
}
macro_rules! widen {
    ($($t:ty => $w:expr),*) => {$(
        impl Widen for $t {
            fn widen(self) -> Self::Sum { let w: fn($t) -> Self::Sum = $w; w(self) }
        }
    )*};
}
widen!(f32 => |x| x, f64 => |x| x, i32 => i64::from, u8 => u64::from, f16 => |x| x, Complex64 => |x| x);

type Dev<T> = DeviceArray<T, IxDyn>;
type R<T> = gpu_runtime::Result<T>;

/// Asserts that the device's `got` has `want`'s shape and, in C order, elements near its.
fn check<T: Num, D: Dimension>(got: &DeviceArray<T, D>, want: &ArrayD<T>, what: &str) -> R<()> {
    let (got, what) = (got.to_ndarray()?, format!("{} {what}", type_name::<T>()));
    assert_eq!(got.shape(), want.shape(), "{what}: shape");
    for (i, (&g, &w)) in got.iter().zip(want).enumerate() {
        assert!(T::near(g, w), "{what}: element {i} is {g:?}, want {w:?}");
    }
    Ok(())
}

/// Every product `x * y` of an element of `a` by one of `b`, `a`'s index the slower.
fn products<T: Num>(a: &ArrayViewD<T>, b: &ArrayViewD<T>) -> Vec<T> {
    a.iter().flat_map(|&x| b.iter().map(move |&y| x.mul(y))).collect()
}

/// NumPy's `inner`: the sums of products over the last axes (a 0-d operand multiplies).
fn host_inner<T: Num>(a: &ArrayViewD<T>, b: &ArrayViewD<T>) -> ArrayD<T> {
    if a.ndim() == 0 || b.ndim() == 0 {
        return ArrayD::from_shape_vec([a.shape(), b.shape()].concat(), products(a, b)).expect("shape");
    }
    let (av, bv): (Vec<T>, Vec<T>) = (a.iter().copied().collect(), b.iter().copied().collect());
    let (ra, rb) = (&a.shape()[..a.ndim() - 1], &b.shape()[..b.ndim() - 1]);
    let (n, k) = (rb.iter().product::<usize>(), a.shape()[a.ndim() - 1]);
    let sums = (0..ra.iter().product::<usize>() * n).map(|ij| {
        let (i, j) = (ij / n, ij % n);
        (0..k).fold(T::ZERO, |s, l| s.add(av[i * k + l].mul(bv[j * k + l])))
    });
    ArrayD::from_shape_vec([ra, rb].concat(), sums.collect()).expect("shape")
}

/// NumPy's `outer`: `out[i, j] = a.flat[i] * b.flat[j]`.
fn host_outer<T: Num>(a: &ArrayViewD<T>, b: &ArrayViewD<T>) -> ArrayD<T> {
    ArrayD::from_shape_vec(vec![a.len(), b.len()], products(a, b)).expect("shape")
}

fn broadcast_shape(x: &[usize], y: &[usize]) -> Vec<usize> {
    let n = x.len().max(y.len());
    let at = |s: &[usize], i: usize| if i + s.len() >= n { s[i + s.len() - n] } else { 1 };
    (0..n)
        .map(|i| if at(x, i) == 1 { at(y, i) } else { at(x, i) })
        .collect()
}

/// `v` with its axis `axis` moved to the end.
fn to_end<'a, T>(v: &ArrayViewD<'a, T>, axis: isize) -> ArrayViewD<'a, T> {
    let k = axis.rem_euclid(v.ndim() as isize) as usize;
    v.clone()
        .permuted_axes((0..v.ndim()).filter(|&i| i != k).chain([k]).collect::<Vec<_>>())
}

/// NumPy's `cross(a, b, axisa, axisb, axisc)`, its formula per component (a missing third
/// component 0), the other axes broadcast.
fn host_cross<T: Num>(a: &ArrayViewD<T>, b: &ArrayViewD<T>, axes: [isize; 3]) -> ArrayD<T> {
    let (va, vb) = (to_end(a, axes[0]), to_end(b, axes[1]));
    let rest = |v: &ArrayViewD<'_, T>| v.shape()[..v.ndim() - 1].to_vec();
    let shape = broadcast_shape(&rest(&va), &rest(&vb));
    let size: usize = shape.iter().product();
    let components = |v: &ArrayViewD<'_, T>| -> Vec<Vec<T>> {
        let last = Axis(v.ndim() - 1);
        let broadcast = |i| {
            v.index_axis(last, i)
                .broadcast(IxDyn(&shape))
                .map(|c| c.iter().copied().collect())
        };
        let mut c: Vec<Vec<T>> = (0..v.len_of(last))
            .map(|i| broadcast(i).expect("broadcast"))
            .collect();
        c.resize(3, vec![T::ZERO; size]);
        c
    };
    let two = va.shape()[va.ndim() - 1] == 2 && vb.shape()[vb.ndim() - 1] == 2;
    let (ca, cb) = (components(&va), components(&vb));
    let term = |x: usize, y: usize| -> Vec<T> {
        (0..size)
            .map(|i| ca[x][i].mul(cb[y][i]).sub(ca[y][i].mul(cb[x][i])))
            .collect()
    };
    if two {
        return ArrayD::from_shape_vec(shape, term(0, 1)).expect("shape");
    }
    let c = [term(1, 2), term(2, 0), term(0, 1)];
    let flat: Vec<T> = (0..size * 3).map(|i| c[i % 3][i / 3]).collect();
    let out = ArrayD::from_shape_vec([&shape[..], &[3]].concat(), flat).expect("shape");
    let mut perm: Vec<usize> = (0..shape.len()).collect();
    perm.insert(axes[2].rem_euclid(shape.len() as isize + 1) as usize, shape.len());
    out.permuted_axes(perm)
}

/// NumPy's `trace(a, offset, axis1, axis2)`: the sums of `a[.., i, .., i + offset, ..]`, widened.
fn host_trace<T: Widen>(a: &ArrayViewD<T>, offset: isize, axis1: isize, axis2: isize) -> ArrayD<T::Sum> {
    let n = a.ndim() as isize;
    let (k1, k2) = (axis1.rem_euclid(n) as usize, axis2.rem_euclid(n) as usize);
    let rest: Vec<usize> = (0..a.ndim()).filter(|&k| k != k1 && k != k2).collect();
    let shape: Vec<usize> = rest.iter().map(|&k| a.shape()[k]).collect();
    ArrayD::from_shape_fn(IxDyn(&shape), |idx| {
        let mut full = vec![0; a.ndim()];
        for (p, &k) in rest.iter().enumerate() {
            full[k] = idx[p];
        }
        let mut sum = <T::Sum as Num>::ZERO;
        for i in 0..a.shape()[k1] {
            let j = i as isize + offset;
            if j >= 0 && (j as usize) < a.shape()[k2] {
                (full[k1], full[k2]) = (i, j as usize);
                sum = sum.add(a[&full[..]].widen());
            }
        }
        sum
    })
}

/// `$f::<T>(ctx, rng)` for each element type of the random cases.
macro_rules! each_type {
    ($f:ident($ctx:expr, $rng:expr)) => {{
        let (ctx, rng) = ($ctx, $rng);
        $f::<f32>(ctx, rng)?;
        $f::<f64>(ctx, rng)?;
        $f::<i32>(ctx, rng)?;
        $f::<u8>(ctx, rng)?;
        $f::<f16>(ctx, rng)?;
        $f::<Complex64>(ctx, rng)
    }};
}

/// A random `T` array of `shape` and its upload.
fn pair<T: Num>(ctx: &Context, rng: &mut Rng, shape: &[usize]) -> R<(ArrayD<T>, Dev<T>)> {
    let a = ArrayD::from_shape_fn(IxDyn(shape), |_| T::random(rng));
    let d = DeviceArray::from_ndarray(ctx, &a)?;
    Ok((a, d))
}

fn inner_outer_cases<T: Num>(ctx: &Context, rng: &mut Rng) -> R<()> {
    // N-d by 2-d, vectors (a 0-d result), a vector by a matrix, empty sums, 0-d operands.
    let shapes: [(&[usize], &[usize]); 6] = [
        (&[2, 3, 4], &[5, 4]),
        (&[7], &[7]),
        (&[6], &[3, 6]),
        (&[2, 0], &[3, 0]),
        (&[], &[2, 3]),
        (&[4, 2], &[]),
    ];
    for (sa, sb) in shapes {
        let ((a, da), (b, db)) = (pair::<T>(ctx, rng, sa)?, pair::<T>(ctx, rng, sb)?);
        let (a, b, what) = (a.view(), b.view(), format!("{sa:?} {sb:?}"));
        let (inner, outer) = (gpuarray::inner(&da, &db)?, gpuarray::outer(&da, &db)?);
        check(&inner, &host_inner(&a, &b), &format!("inner {what}"))?;
        check(&outer, &host_outer(&a, &b), &format!("outer {what}"))?;
    }
    // Views: a transposed upload, every second row, the last axis reversed by twos.
    let ((at, dat), (b, db)) = (pair::<T>(ctx, rng, &[4, 3])?, pair::<T>(ctx, rng, &[10, 4])?);
    let (c, dc) = pair::<T>(ctx, rng, &[3, 8])?;
    let (hb, db) = (b.slice(s![..;2, ..]).into_dyn(), db.slice(s![..;2, ..])?);
    let (hc, dc) = (c.slice(s![.., ..;-2]).into_dyn(), dc.slice(s![.., ..;-2])?);
    let got = gpuarray::inner(&dat.t(), &db)?;
    check(&got, &host_inner(&at.t(), &hb), "inner of views")?;
    let got = gpuarray::inner(&dc, &db)?;
    check(&got, &host_inner(&hc, &hb), "inner of a reversed view")?;
    let got = gpuarray::outer(&dat.t(), &dc)?;
    check(&got, &host_outer(&at.t(), &hc), "outer of views")
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn inner_and_outer_match_host_products() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    each_type!(inner_outer_cases(&ctx, &mut Rng::new(41)))
}

/// Broadcast batches, CuPy's 4-d shapes with vectors along the first and the last axes, the
/// result's vectors along another axis, mixed 2 and 3 components, 2-vectors (a `z` per pair;
/// `axisc` unused and so not checked, as NumPy), an empty batch.
type CrossCase = (&'static [usize], &'static [usize], [isize; 3]);
const CROSS_CASES: [CrossCase; 12] = [
    (&[4, 1, 3], &[5, 3], [-1, -1, -1]),
    (&[3, 2, 4, 3], &[3, 2, 4, 3], [0, 0, 0]),
    (&[3, 2, 4, 3], &[3, 2, 4, 3], [-1, -1, -1]),
    (&[2, 4, 5, 3], &[2, 4, 5, 3], [-1, -1, 0]),
    (&[5, 3], &[3, 5], [-1, 0, 0]),
    (&[4, 2], &[4, 3], [-1, -1, -1]),
    (&[3], &[6, 2], [-1, -1, 1]),
    (&[2, 5], &[5, 3], [0, -1, -2]),
    (&[7, 2], &[7, 2], [-1, -1, -1]),
    (&[2], &[2], [-1, -1, -1]),
    (&[2, 3, 1, 2], &[4, 2], [-1, -1, 5]),
    (&[0, 3], &[0, 3], [-1, -1, -1]),
];

fn cross_cases<T: Num>(ctx: &Context, rng: &mut Rng) -> R<()> {
    for (sa, sb, axes) in CROSS_CASES {
        let ((a, da), (b, db)) = (pair::<T>(ctx, rng, sa)?, pair::<T>(ctx, rng, sb)?);
        let got = match axes {
            [-1, -1, -1] => gpuarray::cross(&da, &db)?,
            [x, y, z] => gpuarray::cross_axes(&da, &db, x, y, z)?,
        };
        let want = host_cross(&a.view(), &b.view(), axes);
        check(&got, &want, &format!("cross {sa:?} {sb:?} {axes:?}"))?;
    }
    // Views: a transposed upload by every second row; a reversed batch by 2-vectors.
    let ((at, dat), (b, db)) = (pair::<T>(ctx, rng, &[3, 6])?, pair::<T>(ctx, rng, &[12, 3])?);
    let (hb, db2) = (b.slice(s![..;2, ..]).into_dyn(), db.slice(s![..;2, ..])?);
    let got = gpuarray::cross(&dat.t(), &db2)?;
    check(&got, &host_cross(&at.t(), &hb, [-1; 3]), "cross of views")?;
    let (hr, dr) = (b.slice(s![..;-2, 1..]).into_dyn(), db.slice(s![..;-2, 1..])?);
    let got = gpuarray::cross_axes(&dr, &dat.t(), -1, -1, 0)?;
    check(&got, &host_cross(&hr, &at.t(), [-1, -1, 0]), "reversed view")
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn cross_matches_numpys_formula() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    each_type!(cross_cases(&ctx, &mut Rng::new(42)))
}

fn trace_cases<T: Widen>(ctx: &Context, rng: &mut Rng) -> R<()> {
    let near = |got: T::Sum, want: ArrayD<T::Sum>, what: &str| {
        let want = want[[]];
        assert!(T::Sum::near(got, want), "{what}: {got:?}, want {want:?}");
    };
    for shape in [[4, 6], [5, 3], [1, 1]] {
        let (a, da) = pair::<T>(ctx, rng, &shape)?;
        near(da.trace()?, host_trace(&a.view(), 0, 0, 1), &format!("{shape:?}"));
    }
    // Views: transposed, every second row.
    let (a, da) = pair::<T>(ctx, rng, &[8, 5])?;
    near(da.t().trace()?, host_trace(&a.t(), 0, 0, 1), "transposed");
    let stepped = host_trace(&a.slice(s![1..;2, ..]).into_dyn(), 0, 0, 1);
    near(da.slice(s![1..;2, ..])?.trace()?, stepped, "stepped");
    let got = da.trace_axes(2, 0, 1)?;
    check(&got, &host_trace(&a.view(), 2, 0, 1), "2-d trace_axes")?;
    // The planes of other axes, offsets above, below and past the edges.
    let (b, db) = pair::<T>(ctx, rng, &[3, 4, 5])?;
    for (offset, x1, x2) in [(-5, 1, 2), (1, 0, 2), (-2, 2, 1), (2, -1, -3), (7, 0, 1)] {
        let want = host_trace(&b.view(), offset, x1, x2);
        let got = db.trace_axes(offset, x1, x2)?;
        check(&got, &want, &format!("trace_axes({offset}, {x1}, {x2})"))?;
    }
    let (c, dc) = pair::<T>(ctx, rng, &[2, 3, 4, 5])?;
    check(&dc.trace_axes(1, 3, 2)?, &host_trace(&c.view(), 1, 3, 2), "4-d")?;
    let got = dc.t().trace_axes(-1, 0, 2)?;
    check(&got, &host_trace(&c.t(), -1, 0, 2), "4-d transposed")
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn trace_sums_diagonals_in_numpys_type() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    each_type!(trace_cases(&ctx, &mut Rng::new(43)))
}

/// An `i32` array of `shape` whose element of flat index `i` is `f(i)`.
fn numbered(ctx: &Context, shape: &[usize], f: fn(i32) -> i32) -> R<Dev<i32>> {
    let n = shape.iter().product::<usize>() as i32;
    let host = ArrayD::from_shape_vec(shape, (0..n).map(f).collect()).expect("shape");
    DeviceArray::from_ndarray(ctx, &host)
}

/// The shape and `(sum |v|, sum v * (i % 7 + 1))`: what NumPy printed of the larger results.
fn checksum(a: &Dev<i32>) -> R<(Vec<usize>, i64, i64)> {
    let v = a.to_vec()?.into_iter().map(i64::from);
    let abs = v.clone().map(i64::abs).sum();
    let weighted = v.enumerate().map(|(i, x)| x * (i as i64 % 7 + 1)).sum();
    Ok((a.shape().to_vec(), abs, weighted))
}

/// Asserts that `$r` is `Err($p)`.
macro_rules! refuses {
    ($r:expr, $p:pat) => {
        match $r {
            Err($p) => {}
            other => panic!("{}: {other:?}", stringify!($p)),
        }
    };
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn products_and_traces_match_numpy_literals() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    // CuPy's cross shapes and axes (TestCrossProduct, TestCrossProductDeprecated and more), `a`
    // numbered 1.., `b` holding `i * i % 11`: NumPy's shape and values, or checksums.
    let n1 = |shape: &[usize]| numbered(&ctx, shape, |i| i + 1);
    let cross = |(sa, sb, [x, y, z]): CrossCase| {
        let (a, b) = (n1(sa)?, numbered(&ctx, sb, |i| i * i % 11)?);
        gpuarray::cross_axes(&a, &b, x, y, z)
    };
    let small: [(CrossCase, &[usize], &[i32]); 8] = [
        ((&[3], &[3], [-1, -1, -1]), &[3], &[5, -4, 1]),
        ((&[1, 3], &[1, 3], [1, -1, -1]), &[1, 3], &[5, -4, 1]),
        ((&[1, 2], &[1, 2], [-1, -1, 1]), &[1], &[1]),
        ((&[1, 2], &[1, 3], [-1, -1, 1]), &[1, 3], &[8, -4, 1]),
        ((&[2, 2], &[1, 3], [-1, -1, 0]), &[3, 2], &[8, 16, -4, -12, 1, 3]),
        (
            (&[3, 3], &[1, 2], [0, -1, -1]),
            &[3, 3],
            &[-7, 0, 1, -8, 0, 2, -9, 0, 3],
        ),
        ((&[0, 3], &[0, 3], [-1, -1, -1]), &[0, 3], &[]),
        ((&[2, 0, 3], &[2, 0, 3], [0, 0, 0]), &[0, 3], &[]),
    ];
    for (case, shape, want) in small {
        let got = cross(case)?;
        assert_eq!((got.shape(), &got.to_vec()?[..]), (shape, want), "{case:?}");
    }
    type Summed = (&'static [usize], [isize; 3], &'static [usize], [i64; 2]);
    let large: [Summed; 4] = [
        (&[2, 4, 5, 3], [-1, -1, 0], &[3, 2, 4, 5], [22867, 1500]),
        (&[2, 4, 5, 2], [0, 0, -1], &[4, 5, 2], [8125, -22721]),
        (&[3, 2, 4, 3], [0, 0, 0], &[3, 2, 4, 3], [12650, -4382]),
        (&[3, 2, 4, 3], [-1, -1, -1], &[3, 2, 4, 3], [8166, -616]),
    ];
    for (shape, axes, s, [abs, weighted]) in large {
        let got = checksum(&cross((shape, shape, axes))?)?;
        assert_eq!(got, (s.to_vec(), abs, weighted), "{shape:?} {axes:?}");
    }
    // Wrapping `u8`: 3 by 3, 2 by 3, 3 by 2, 2 by 2; and `outer`.
    let a = DeviceArray::from_ndarray(&ctx, &arr1(&[200u8, 3, 250]))?;
    let b = DeviceArray::from_ndarray(&ctx, &arr1(&[7u8, 255, 100]))?;
    let (a2, b2) = (a.slice(s![..2])?, b.slice(s![..2])?);
    assert_eq!(gpuarray::cross(&a, &b)?.to_vec()?, [38, 182, 35]);
    assert_eq!(gpuarray::cross(&a2, &b)?.to_vec()?, [44, 224, 35]);
    assert_eq!(gpuarray::cross(&a, &b2)?.to_vec()?, [250, 214, 35]);
    assert_eq!(gpuarray::cross(&a2, &b2)?.to_vec()?, [35]);
    let want = [120, 56, 32, 21, 253, 44, 214, 6, 168];
    assert_eq!(gpuarray::outer(&a, &b)?.to_vec()?, want);
    // CuPy's inner and outer cases on numbered data; complex without a conjugate.
    let (v, r) = (n1(&[5])?, numbered(&ctx, &[5], |i| 5 - i)?);
    assert_eq!(gpuarray::inner(&v, &r)?.to_vec()?, [35]);
    let got = checksum(&gpuarray::inner(&n1(&[2, 3, 4])?, &n1(&[3, 2, 4])?)?)?;
    assert_eq!(got, (vec![2, 3, 3, 2], 22680, 84910));
    let (a, b) = (
        n1(&[2, 4, 3])?.permuted_axes(&[2, 0, 1])?,
        n1(&[4, 2, 3])?.permuted_axes(&[1, 2, 0])?,
    );
    assert_eq!(
        checksum(&gpuarray::inner(&a, &b)?)?,
        (vec![3, 2, 2, 3], 25740, 100876)
    );
    let got = checksum(&gpuarray::outer(&n1(&[2, 3])?, &n1(&[4, 5])?)?.into_dyn())?;
    assert_eq!(got, (vec![6, 20], 4410, 17346));
    let (a, b) = (n1(&[5])?, n1(&[4])?);
    let got = gpuarray::outer(&a.slice(s![..;-1])?, &b.slice(s![..;-1])?)?.to_vec()?;
    let want = [20, 15, 10, 5, 16, 12, 8, 4, 12, 9, 6, 3, 8, 6, 4, 2, 4, 3, 2, 1];
    assert_eq!(got, want);
    let c = |re, im| Complex64::new(re, im);
    let z = DeviceArray::from_ndarray(&ctx, &arr1(&[c(1.0, 2.0), c(3.0, -1.0)]))?;
    let w = DeviceArray::from_ndarray(&ctx, &arr1(&[c(2.0, -1.0), c(0.0, 1.0)]))?;
    assert_eq!(gpuarray::inner(&z, &w)?.to_vec()?, [c(5.0, 6.0)]);
    // CuPy's `a.trace(1, 3, 2)` of a numbered (2, 3, 4, 5), summed as `i64`, `f64` and `u64`.
    let want = [36, 96, 156, 216, 276, 336];
    let a = n1(&[2, 3, 4, 5])?;
    let got: Dev<i64> = a.trace_axes(1, 3, 2)?;
    assert_eq!(
        (got.shape(), got.to_vec()?),
        (&[2, 3][..], want.map(i64::from).to_vec())
    );
    let got = a.astype::<f64>()?.trace_axes(1, 3, 2)?.to_vec()?;
    assert_eq!(got, want.map(f64::from));
    let got: Vec<u64> = a.astype::<u8>()?.trace_axes(1, 3, 2)?.to_vec()?;
    assert_eq!(got, want.map(|x| x as u64));
    // `trace(arange(24).reshape(2, 3, 4), -1, 2, 0)`; offsets on a (3, 4) of ones; bool.
    let got = numbered(&ctx, &[2, 3, 4], |i| i)?.trace_axes(-1, 2, 0)?;
    assert_eq!(got.to_vec()?, [15, 23, 31]);
    let ones = DeviceArray::from_ndarray(&ctx, &ArrayD::from_elem(IxDyn(&[3, 4]), 1.0f64))?;
    for (offset, want) in [(5, 0.0), (-3, 0.0), (3, 1.0), (-2, 1.0), (1, 3.0)] {
        let got = ones.trace_axes(offset, 0, 1)?.to_vec()?;
        assert_eq!(got, [want], "offset {offset}");
    }
    let (t, f) = (Bool::from(true), Bool::from(false));
    let bools = DeviceArray::from_ndarray(&ctx, &arr2(&[[t, f], [t, t]]))?;
    assert_eq!(bools.trace()?, 2i64);
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn products_refuse_what_numpy_refuses() -> gpu_runtime::Result<()> {
    use ArgumentError::UndefinedOnElement;
    use ArrayShapeError::{CrossDimension, Dimension, Einsum, RepeatedAxis};
    use Error::{Argument, Shape};
    let ctx = Context::default()?;
    let ones = |shape: &[usize]| DeviceArray::from_ndarray(&ctx, &ArrayD::from_elem(IxDyn(shape), 1.0f32));
    let (v4, m, wide, other) = (ones(&[4])?, ones(&[3, 1])?, ones(&[4, 3])?, ones(&[5, 3])?);
    let v3 = v4.slice(s![..3])?;
    refuses!(gpuarray::cross(&v4, &v3), Shape(CrossDimension { a: 4, b: 3 }));
    let r = gpuarray::cross_axes(&m, &v3, -1, -1, -1);
    refuses!(r, Shape(CrossDimension { a: 1, b: 3 }));
    assert_eq!(gpuarray::cross_axes(&m, &v3, 0, 0, 0)?.shape(), [3, 1]);
    assert!(gpuarray::cross(&wide, &other).is_err(), "batches of 4 and 5");
    let bools = DeviceArray::from_ndarray(&ctx, &arr1(&[Bool::from(true); 3]))?;
    refuses!(
        gpuarray::cross(&bools, &bools),
        Argument(UndefinedOnElement { .. })
    );
    refuses!(gpuarray::inner(&wide, &other.t()), Shape(Einsum { .. }));
    let cube = DeviceArray::from_ndarray(&ctx, &ArrayD::from_elem(IxDyn(&[2, 2, 2]), 1i32))?;
    refuses!(cube.trace(), Shape(Dimension { axes: 3, fixed: 2 }));
    refuses!(v4.trace(), Shape(Dimension { axes: 1, fixed: 2 }));
    refuses!(cube.trace_axes(0, 1, -2), Shape(RepeatedAxis { axis: 1, .. }));
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn products_and_traces_run_on_a_stream() -> gpu_runtime::Result<()> {
    let (ctx, rng) = (&Context::default()?, &mut Rng::new(44));
    let stream = Stream::new(ctx)?;
    let ((a, da), (b, db)) = (pair::<f64>(ctx, rng, &[4, 1, 3])?, pair(ctx, rng, &[5, 3])?);
    let inner = gpuarray::on(&stream).inner(&da, &db)?;
    let outer = gpuarray::on(&stream).outer(&da, &db)?;
    let cross = gpuarray::on(&stream).cross_axes(&da, &db, -1, -1, 0)?;
    let along = da.on(&stream).trace_axes(0, 0, 2)?;
    let trace = db.slice(s![..3, ..])?.on(&stream).trace()?;
    stream.synchronize()?;
    let (a, b) = (a.view(), b.view());
    check(&inner, &host_inner(&a, &b), "stream inner")?;
    check(&outer, &host_outer(&a, &b), "stream outer")?;
    check(&cross, &host_cross(&a, &b, [-1, -1, 0]), "stream cross")?;
    check(&along, &host_trace(&a, 0, 0, 2), "stream trace_axes")?;
    let want = host_trace(&b.slice(s![..3, ..]).into_dyn(), 0, 0, 1)[[]];
    assert!(f64::near(trace, want), "stream trace: {trace}, want {want}");
    Ok(())
}
