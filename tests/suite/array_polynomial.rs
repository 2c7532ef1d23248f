//! NumPy's polynomial routines of 1-d coefficient arrays (highest power first) on a GPU
//! against host references written here: `polyval` against Horner's rule on the host (in
//! `f64` for the real floats, wrapping for the integers, or of ands for `bool`), `polyadd` and
//! `polysub` against the operands aligned at the constant term, `polymul` against a host
//! convolution of the operands without their leading zeros, `poly` against the factors
//! `x - r` multiplied out on the host, and `roots` against the roots the test polynomials were
//! built from (real roots and complex-conjugate pairs up to degree 30, complex roots, the
//! 200th roots of unity, double roots), each expected root matched to a distinct computed one
//! and the polynomial checked small at every computed root. The floats are checked to the
//! rounding that the sum of the magnitudes of a result's terms allows. Element types `f64`,
//! `f32`, `f16`, `i32`, `u8`, `bool` and complex `f64`; stepped, reversed and transposed views,
//! 2-d, 0-d and empty arguments, the stream forms, the refusals, and values NumPy 2.4 printed.

use std::f64::consts::PI;
use std::fmt::Debug;

use gpu_runtime::gpuarray::promote::TrueDivide;
use gpu_runtime::gpuarray::{self, Bool, DeviceArray, DeviceArrayView, Element};
use gpu_runtime::half::f16;
use gpu_runtime::ndarray::{arr1, s, Array1, ArrayD, Axis, Dimension, Ix1, IxDyn, Slice, SliceInfoElem};
use gpu_runtime::types::Complex64;
use gpu_runtime::{ArgumentError, ArrayShapeError, Context, Error, Stream};
use gpu_suite::Rng;

/// An element type under test and its arithmetic on the host: `Acc` a value there (`f64` for
/// the real floats, the type itself for the integers, wrapping as NumPy's do, `bool` for
/// `Bool`). A device result is right when within `tolerance(scale)` of the host's, `scale`
/// the sum of the magnitudes of the terms that went into it (0 for the exact types).
trait Coef: Element {
    type Acc: Copy + Debug;
    const ZERO: Self::Acc;
    fn random(rng: &mut Rng) -> Self;
    fn acc(self) -> Self::Acc;
    fn add(a: Self::Acc, b: Self::Acc) -> Self::Acc;
    fn sub(a: Self::Acc, b: Self::Acc) -> Self::Acc;
    fn mul(a: Self::Acc, b: Self::Acc) -> Self::Acc;
    /// `|a|`; 0 for the exact types.
    fn magnitude(a: Self::Acc) -> f64;
    /// How far a result whose terms' magnitudes sum to `scale` may be from the host's value.
    fn tolerance(scale: f64) -> f64;
    /// How far `got` is from `want`: for the exact types 0 when equal, else infinite.
    fn distance(got: Self, want: Self::Acc) -> f64;
}

impl Coef for f64 {
    type Acc = f64;
    const ZERO: f64 = 0.0;
    fn random(rng: &mut Rng) -> f64 {
        rng.f64()
    }
    fn acc(self) -> f64 {
        self
    }
    fn add(a: f64, b: f64) -> f64 {
        a + b
    }
    fn sub(a: f64, b: f64) -> f64 {
        a - b
    }
    fn mul(a: f64, b: f64) -> f64 {
        a * b
    }
    fn magnitude(a: f64) -> f64 {
        a.abs()
    }
    fn tolerance(scale: f64) -> f64 {
        1e-12 * scale
    }
    fn distance(got: f64, want: f64) -> f64 {
        (got - want).abs()
    }
}

/// Computed in `float` on the device, in `f64` here.
impl Coef for f32 {
    type Acc = f64;
    const ZERO: f64 = 0.0;
    fn random(rng: &mut Rng) -> f32 {
        rng.f32()
    }
    fn acc(self) -> f64 {
        f64::from(self)
    }
    fn add(a: f64, b: f64) -> f64 {
        a + b
    }
    fn sub(a: f64, b: f64) -> f64 {
        a - b
    }
    fn mul(a: f64, b: f64) -> f64 {
        a * b
    }
    fn magnitude(a: f64) -> f64 {
        a.abs()
    }
    fn tolerance(scale: f64) -> f64 {
        1e-5 * scale + 1e-30
    }
    fn distance(got: f32, want: f64) -> f64 {
        (f64::from(got) - want).abs()
    }
}

/// Computed in `float` on the device and rounded once to `f16`, in `f64` here; the floor is
/// a few of `f16`'s subnormal steps (6e-8).
impl Coef for f16 {
    type Acc = f64;
    const ZERO: f64 = 0.0;
    fn random(rng: &mut Rng) -> f16 {
        f16::from_f64(rng.f64())
    }
    fn acc(self) -> f64 {
        self.to_f64()
    }
    fn add(a: f64, b: f64) -> f64 {
        a + b
    }
    fn sub(a: f64, b: f64) -> f64 {
        a - b
    }
    fn mul(a: f64, b: f64) -> f64 {
        a * b
    }
    fn magnitude(a: f64) -> f64 {
        a.abs()
    }
    fn tolerance(scale: f64) -> f64 {
        1e-2 * scale + 1e-6
    }
    fn distance(got: f16, want: f64) -> f64 {
        (got.to_f64() - want).abs()
    }
}

macro_rules! wrapping {
    ($($t:ty),*) => {$(
        /// Any bits: products and sums wrap, as NumPy's do.
        impl Coef for $t {
            type Acc = $t;
            const ZERO: $t = 0;
            fn random(rng: &mut Rng) -> $t {
                rng.next_u64() as $t
            }
            fn acc(self) -> $t {
                self
            }
            fn add(a: $t, b: $t) -> $t {
                a.wrapping_add(b)
            }
            fn sub(a: $t, b: $t) -> $t {
                a.wrapping_sub(b)
            }
            fn mul(a: $t, b: $t) -> $t {
                a.wrapping_mul(b)
            }
            fn magnitude(_: $t) -> f64 {
                0.0
            }
            fn tolerance(_: f64) -> f64 {
                0.0
            }
            fn distance(got: $t, want: $t) -> f64 {
                if got == want { 0.0 } else { f64::INFINITY }
            }
        }
    )*};
}
wrapping!(i32, u8);

/// NumPy's `bool` arithmetic: `*` is and, `+` is or. A third true, so that not every result is
/// true.
impl Coef for Bool {
    type Acc = bool;
    const ZERO: bool = false;
    fn random(rng: &mut Rng) -> Bool {
        Bool::from(rng.next_u64().is_multiple_of(3))
    }
    fn acc(self) -> bool {
        self.get()
    }
    fn add(a: bool, b: bool) -> bool {
        a || b
    }
    fn sub(_: bool, _: bool) -> bool {
        unreachable!("NumPy refuses `-` on bool, and polysub of Bool with it")
    }
    fn mul(a: bool, b: bool) -> bool {
        a && b
    }
    fn magnitude(_: bool) -> f64 {
        0.0
    }
    fn tolerance(_: f64) -> f64 {
        0.0
    }
    fn distance(got: Bool, want: bool) -> f64 {
        if got.get() == want {
            0.0
        } else {
            f64::INFINITY
        }
    }
}

impl Coef for Complex64 {
    type Acc = Complex64;
    const ZERO: Complex64 = Complex64::new(0.0, 0.0);
    fn random(rng: &mut Rng) -> Complex64 {
        Complex64::new(rng.f64(), rng.f64())
    }
    fn acc(self) -> Complex64 {
        self
    }
    fn add(a: Complex64, b: Complex64) -> Complex64 {
        a + b
    }
    fn sub(a: Complex64, b: Complex64) -> Complex64 {
        a - b
    }
    fn mul(a: Complex64, b: Complex64) -> Complex64 {
        a * b
    }
    fn magnitude(a: Complex64) -> f64 {
        a.norm()
    }
    fn tolerance(scale: f64) -> f64 {
        1e-12 * scale
    }
    fn distance(got: Complex64, want: Complex64) -> f64 {
        (got - want).norm()
    }
}

fn draw<T>(rng: &mut Rng, n: usize, f: impl Fn(&mut Rng) -> T) -> Vec<T> {
    (0..n).map(|_| f(rng)).collect()
}

/// NumPy's `polyval(p, x)` on the host: Horner's rule, with the same rule on the magnitudes
/// (the scale of its rounding).
fn host_polyval<T: Coef>(p: &[T], x: T) -> (T::Acc, f64) {
    let (v, m) = (x.acc(), T::magnitude(x.acc()));
    p.iter().fold((T::ZERO, 0.0), |(s, a), &c| {
        (T::add(T::mul(s, v), c.acc()), a * m + T::magnitude(c.acc()))
    })
}

/// NumPy's `polyadd(a, b)`, or `polysub` where `op` subtracts: the shorter operand given
/// leading zeros; each element with its scale.
fn host_add_sub<T: Coef>(a: &[T], b: &[T], op: fn(T::Acc, T::Acc) -> T::Acc) -> Vec<(T::Acc, f64)> {
    let n = a.len().max(b.len());
    let at = |x: &[T], i: usize| (i + x.len()).checked_sub(n).map_or(T::ZERO, |k| x[k].acc());
    (0..n)
        .map(|i| {
            let (u, w) = (at(a, i), at(b, i));
            (op(u, w), T::magnitude(u) + T::magnitude(w))
        })
        .collect()
}

/// NumPy's `polymul(a, b)`: each operand without its leading zeros (`poly1d`'s `[0]` when
/// nothing is left), convolved; each element with its scale.
fn host_polymul<T: Coef>(a: &[T], b: &[T]) -> Vec<(T::Acc, f64)> {
    let trim = |x: &[T]| -> Vec<T::Acc> {
        let first = x.iter().position(|&c| c != T::zero()).unwrap_or(x.len() - 1);
        x[first..].iter().map(|&c| c.acc()).collect()
    };
    let (a, b) = (trim(a), trim(b));
    (0..a.len() + b.len() - 1)
        .map(|k| {
            (0..a.len())
                .filter(|&j| k >= j && k - j < b.len())
                .fold((T::ZERO, 0.0), |(s, m), j| {
                    let (u, w) = (a[j], b[k - j]);
                    (T::add(s, T::mul(u, w)), m + T::magnitude(u) * T::magnitude(w))
                })
        })
        .collect()
}

/// The coefficients of the product of the factors `x - r` over `roots`, highest power first,
/// multiplied out one factor at a time in complex `f64`, each with the same coefficient of the
/// product of the factors `x + |r|` (its scale).
fn host_poly(roots: &[Complex64]) -> Vec<(Complex64, f64)> {
    let mut c = vec![(Complex64::new(1.0, 0.0), 1.0)];
    for &r in roots {
        let mut next = c.clone();
        next.push((Complex64::new(0.0, 0.0), 0.0));
        for j in 1..next.len() {
            next[j].0 -= r * c[j - 1].0;
            next[j].1 += r.norm() * c[j - 1].1;
        }
        c = next;
    }
    c
}

/// Asserts each element of `got` within its type's tolerance of the host's `(value, scale)`.
#[track_caller]
fn check_close<T: Coef>(what: &str, got: &[T], want: &[(T::Acc, f64)]) {
    assert_eq!(got.len(), want.len(), "{what}: length of {got:?}");
    for (i, (&g, &(w, scale))) in got.iter().zip(want).enumerate() {
        assert!(
            T::distance(g, w) <= T::tolerance(scale),
            "{what}: [{i}] is {g:?}, not {w:?} (scale {scale:e})"
        );
    }
}

/// How an argument reaches the kernel.
#[derive(Debug, Clone, Copy)]
enum Layout {
    Plain,
    /// Every second element (row) of a buffer, other values between them.
    Stepped,
    /// A view with its first axis reversed (a negative stride).
    Reversed,
    /// The transpose of an upload of the reversed shape (a 1-d array is its own).
    Transposed,
}

const LAYOUTS: [Layout; 4] = [
    Layout::Stepped,
    Layout::Reversed,
    Layout::Transposed,
    Layout::Plain,
];

/// A buffer holding `x` as [`view1`] in `layout` sees it.
fn upload1<T: Element>(ctx: &Context, x: &[T], layout: Layout) -> gpu_runtime::Result<DeviceArray<T, Ix1>> {
    let host: Vec<T> = match layout {
        Layout::Plain | Layout::Transposed => x.to_vec(),
        // Other values in between, which a kernel reading the buffer densely would pick up.
        Layout::Stepped => x.iter().zip(x.iter().rev()).flat_map(|(&p, &q)| [p, q]).collect(),
        Layout::Reversed => x.iter().rev().copied().collect(),
    };
    DeviceArray::from_ndarray(ctx, &Array1::from(host))
}

fn view1<T: Element>(
    d: &DeviceArray<T, Ix1>,
    layout: Layout,
) -> gpu_runtime::Result<DeviceArrayView<'_, T, Ix1>> {
    match layout {
        Layout::Plain => Ok(d.view()),
        Layout::Transposed => Ok(d.t()),
        Layout::Stepped => d.slice(s![..;2]),
        Layout::Reversed => d.slice(s![..;-1]),
    }
}

/// A buffer holding `x` as [`view_nd`] in `layout` sees it (a 0-d `x` as it is).
fn upload_nd<T: Coef>(
    ctx: &Context,
    rng: &mut Rng,
    x: &ArrayD<T>,
    layout: Layout,
) -> gpu_runtime::Result<DeviceArray<T, IxDyn>> {
    let host = match layout {
        _ if x.ndim() == 0 => x.clone(),
        Layout::Plain => x.clone(),
        Layout::Transposed => x.t().as_standard_layout().into_owned(),
        Layout::Stepped => {
            let mut shape = x.shape().to_vec();
            shape[0] *= 2;
            let n = shape.iter().product();
            let mut h = ArrayD::from_shape_vec(IxDyn(&shape), draw(rng, n, T::random)).unwrap();
            h.slice_axis_mut(Axis(0), Slice::new(0, None, 2)).assign(x);
            h
        }
        Layout::Reversed => x.slice_axis(Axis(0), Slice::new(0, None, -1)).to_owned(),
    };
    DeviceArray::from_ndarray(ctx, &host)
}

fn view_nd<T: Element>(
    d: &DeviceArray<T, IxDyn>,
    layout: Layout,
) -> gpu_runtime::Result<DeviceArrayView<'_, T, IxDyn>> {
    let v = d.view();
    if v.ndim() == 0 {
        return Ok(v);
    }
    match layout {
        Layout::Plain => Ok(v),
        Layout::Transposed => Ok(v.reversed_axes()),
        Layout::Stepped => {
            let all = SliceInfoElem::Slice {
                start: 0,
                end: None,
                step: 1,
            };
            let mut info = vec![all; v.ndim()];
            info[0] = SliceInfoElem::Slice {
                start: 0,
                end: None,
                step: 2,
            };
            v.slice_move(&info[..])
        }
        Layout::Reversed => v.flip(0),
    }
}

/// `polyval` of `np` random coefficients laid out as `layouts.0` at random points of shape
/// `x_shape` laid out as `layouts.1`, on `stream` when given, against [`host_polyval`].
fn check_polyval<T: Coef>(
    ctx: &Context,
    rng: &mut Rng,
    np: usize,
    x_shape: &[usize],
    layouts: (Layout, Layout),
    stream: Option<&Stream>,
) -> gpu_runtime::Result<()> {
    let p: Vec<T> = draw(rng, np, T::random);
    let n = x_shape.iter().product();
    let x = ArrayD::from_shape_vec(IxDyn(x_shape), draw(rng, n, T::random)).unwrap();
    let (dp, dx) = (upload1(ctx, &p, layouts.0)?, upload_nd(ctx, rng, &x, layouts.1)?);
    let (vp, vx) = (view1(&dp, layouts.0)?, view_nd(&dx, layouts.1)?);
    let what = format!(
        "{} polyval of {np} coefficients at {x_shape:?} points, {layouts:?}",
        std::any::type_name::<T>()
    );
    assert_eq!((vp.len(), vx.shape()), (np, x_shape), "{what}: the views");
    let got = match stream {
        Some(stream) => {
            let got = gpuarray::on(stream).polyval(&vp, &vx)?;
            stream.synchronize()?;
            got
        }
        None => gpuarray::polyval(&vp, &vx)?,
    };
    assert_eq!(got.shape(), x_shape, "{what}");
    let got = got.to_ndarray()?;
    for ((i, g), &xv) in got.indexed_iter().zip(x.iter()) {
        let (w, scale) = host_polyval(&p, xv);
        assert!(
            T::distance(*g, w) <= T::tolerance(scale),
            "{what}: at {:?} (x = {xv:?}) {g:?}, not {w:?} (scale {scale:e})",
            i.slice()
        );
    }
    Ok(())
}

/// Coefficient counts, point shapes (2-d, 0-d, empty) and layouts, rotated together.
fn each_polyval<T: Coef>(ctx: &Context, rng: &mut Rng, stream: Option<&Stream>) -> gpu_runtime::Result<()> {
    const COUNTS: [usize; 5] = [0, 1, 2, 5, 17];
    const SHAPES: [&[usize]; 7] = [&[7], &[300], &[3, 4], &[1], &[0], &[2, 0], &[]];
    for (c, &np) in COUNTS.iter().enumerate() {
        for (k, &shape) in SHAPES.iter().enumerate() {
            check_polyval::<T>(ctx, rng, np, shape, (Layout::Plain, Layout::Plain), stream)?;
            let layouts = (LAYOUTS[(c + k) % 4], LAYOUTS[(c + 2 * k + 1) % 4]);
            check_polyval::<T>(ctx, rng, np, shape, layouts, stream)?;
        }
    }
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn polyval_matches_horner_on_the_host_in_f64() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(401);
    // Printed by NumPy 2.4 (exact: every step is of dyadic values).
    let p = DeviceArray::from_ndarray(&ctx, &arr1(&[1.0f64, -2.0, 0.5, 3.0]))?;
    let x = DeviceArray::from_ndarray(&ctx, &arr1(&[0.0f64, 1.0, -1.5, 2.25]))?;
    assert_eq!(gpuarray::polyval(&p, &x)?.to_vec()?, [3.0, 2.5, -5.625, 5.390625]);
    let p = DeviceArray::from_ndarray(&ctx, &arr1(&[3.0f64, 0.0, 1.0]))?;
    let x = DeviceArray::from_ndarray(&ctx, &arr1(&[5.0f64]))?;
    assert_eq!(gpuarray::polyval(&p, &x)?.to_vec()?, [76.0]);
    // No coefficients: zeros (np.polyval([], [1.5, 2]) is [0., 0.]).
    let none = DeviceArray::from_ndarray(&ctx, &Array1::<f64>::zeros(0))?;
    let x = DeviceArray::from_ndarray(&ctx, &arr1(&[1.5f64, 2.0]))?;
    assert_eq!(gpuarray::polyval(&none, &x)?.to_vec()?, [0.0, 0.0]);
    // A 0-d point gives a 0-d value (np.polyval([2., 3], np.array(4.)) is 11.0).
    let p = DeviceArray::from_ndarray(&ctx, &arr1(&[2.0f64, 3.0]))?;
    let x = DeviceArray::from_ndarray(&ctx, &ArrayD::from_elem(IxDyn(&[]), 4.0f64))?;
    let y = gpuarray::polyval(&p, &x)?;
    assert_eq!((y.shape(), y.to_vec()?), (&[][..], vec![11.0]));
    // Points of a 2-d array keep its shape.
    let x = DeviceArray::from_ndarray(
        &ctx,
        &ArrayD::from_shape_vec(IxDyn(&[2, 3]), vec![0.0, 1.0, 2.0, -1.0, -2.0, 0.5]).unwrap(),
    )?;
    let y = gpuarray::polyval(&p, &x)?;
    assert_eq!(
        (y.shape(), y.to_vec()?),
        (&[2, 3][..], vec![3.0, 5.0, 7.0, 1.0, -1.0, 4.0])
    );
    // Random coefficients and points, contiguous and as views.
    each_polyval::<f64>(&ctx, &mut rng, None)?;
    // On a stream.
    let stream = Stream::new(&ctx)?;
    let cases: [(usize, &[usize], (Layout, Layout)); 4] = [
        (9, &[40, 3], (Layout::Reversed, Layout::Transposed)),
        (4, &[50], (Layout::Stepped, Layout::Stepped)),
        (0, &[5], (Layout::Plain, Layout::Reversed)),
        (3, &[0, 4], (Layout::Plain, Layout::Plain)),
    ];
    for (np, shape, layouts) in cases {
        check_polyval::<f64>(&ctx, &mut rng, np, shape, layouts, Some(&stream))?;
    }
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn polyval_of_every_element_type_matches_the_host() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(402);
    each_polyval::<f32>(&ctx, &mut rng, None)?;
    each_polyval::<f16>(&ctx, &mut rng, None)?;
    each_polyval::<i32>(&ctx, &mut rng, None)?;
    each_polyval::<u8>(&ctx, &mut rng, None)?;
    each_polyval::<Bool>(&ctx, &mut rng, None)?;
    each_polyval::<Complex64>(&ctx, &mut rng, None)?;
    let stream = Stream::new(&ctx)?;
    check_polyval::<i32>(
        &ctx,
        &mut rng,
        6,
        &[3, 5],
        (Layout::Reversed, Layout::Transposed),
        Some(&stream),
    )?;
    check_polyval::<Complex64>(
        &ctx,
        &mut rng,
        6,
        &[33],
        (Layout::Stepped, Layout::Reversed),
        Some(&stream),
    )?;
    // Printed by NumPy 2.4: int32 and uint8 wrap.
    let p = DeviceArray::from_ndarray(&ctx, &arr1(&[65537i32, 3]))?;
    let x = DeviceArray::from_ndarray(&ctx, &arr1(&[65536i32, -7, 2147483647]))?;
    assert_eq!(gpuarray::polyval(&p, &x)?.to_vec()?, [65539, -458756, 2147418114]);
    let p = DeviceArray::from_ndarray(&ctx, &arr1(&[200u8, 100, 7]))?;
    let x = DeviceArray::from_ndarray(&ctx, &arr1(&[3u8, 255, 16]))?;
    assert_eq!(gpuarray::polyval(&p, &x)?.to_vec()?, [59, 107, 71]);
    // bool: or of ands (np.polyval of [T, F, T] at [T, F] is [T, T]; of [F, T, F], [T, F]).
    let (t, f) = (Bool::TRUE, Bool::FALSE);
    let x = DeviceArray::from_ndarray(&ctx, &arr1(&[t, f]))?;
    let p = DeviceArray::from_ndarray(&ctx, &arr1(&[t, f, t]))?;
    assert_eq!(gpuarray::polyval(&p, &x)?.to_vec()?, [true, true]);
    let p = DeviceArray::from_ndarray(&ctx, &arr1(&[f, t, f]))?;
    assert_eq!(gpuarray::polyval(&p, &x)?.to_vec()?, [true, false]);
    // complex128 (exact: small Gaussian integers and halves).
    let c = |re, im| Complex64::new(re, im);
    let p = DeviceArray::from_ndarray(&ctx, &arr1(&[c(1.0, 1.0), c(-2.0, 0.0), c(0.0, 0.5)]))?;
    let x = DeviceArray::from_ndarray(&ctx, &arr1(&[c(0.0, 1.0), c(2.0, -1.0)]))?;
    assert_eq!(gpuarray::polyval(&p, &x)?.to_vec()?, [c(-1.0, -2.5), c(3.0, 1.5)]);
    // f16 is computed in float and rounded once: 1 + 2^-11 + 2^-11 at 1 is 1 + 2^-10, which
    // f16 holds. NumPy 2.4 rounds each step to f16 (1 + 2^-11 is a tie, to 1) and prints 1.0.
    let p = DeviceArray::from_ndarray(
        &ctx,
        &arr1(&[f16::ONE, f16::from_f64(1.0 / 2048.0), f16::from_f64(1.0 / 2048.0)]),
    )?;
    let x = DeviceArray::from_ndarray(&ctx, &arr1(&[f16::ONE]))?;
    assert_eq!(
        gpuarray::polyval(&p, &x)?.to_vec()?,
        [f16::from_f64(1.0 + 1.0 / 1024.0)]
    );
    Ok(())
}

/// `polyadd` and `polysub` (not of `Bool`) of random operands of `lens` laid out as
/// `layouts`, on `stream` when given, against [`host_add_sub`]. An operand of 3 or more
/// starts with a zero, which the result keeps where that operand is the longer.
fn check_add_sub<T: Coef>(
    ctx: &Context,
    rng: &mut Rng,
    lens: (usize, usize),
    layouts: (Layout, Layout),
    stream: Option<&Stream>,
) -> gpu_runtime::Result<()> {
    let operand = |rng: &mut Rng, n: usize| {
        let mut x = draw(rng, n, T::random);
        if n > 2 {
            x[0] = T::zero();
        }
        x
    };
    let (a, b) = (operand(rng, lens.0), operand(rng, lens.1));
    let (da, db) = (upload1(ctx, &a, layouts.0)?, upload1(ctx, &b, layouts.1)?);
    let (va, vb) = (view1(&da, layouts.0)?, view1(&db, layouts.1)?);
    let what = format!("{} of {lens:?} {layouts:?}", std::any::type_name::<T>());
    let on = stream.map(gpuarray::on);
    let sum = match &on {
        Some(on) => on.polyadd(&va, &vb)?,
        None => gpuarray::polyadd(&va, &vb)?,
    };
    let difference = (T::DTYPE != Bool::DTYPE)
        .then(|| match &on {
            Some(on) => on.polysub(&va, &vb),
            None => gpuarray::polysub(&va, &vb),
        })
        .transpose()?;
    if let Some(stream) = stream {
        stream.synchronize()?;
    }
    check_close(
        &format!("polyadd {what}"),
        &sum.to_vec()?,
        &host_add_sub(&a, &b, T::add),
    );
    if let Some(difference) = difference {
        check_close(
            &format!("polysub {what}"),
            &difference.to_vec()?,
            &host_add_sub(&a, &b, T::sub),
        );
    }
    Ok(())
}

fn each_add_sub<T: Coef>(ctx: &Context, rng: &mut Rng) -> gpu_runtime::Result<()> {
    const LENS: [(usize, usize); 9] = [
        (1, 1),
        (3, 3),
        (2, 5),
        (6, 1),
        (0, 4),
        (4, 0),
        (0, 0),
        (17, 40),
        (1000, 3),
    ];
    for (k, &lens) in LENS.iter().enumerate() {
        check_add_sub::<T>(ctx, rng, lens, (Layout::Plain, Layout::Plain), None)?;
        check_add_sub::<T>(ctx, rng, lens, (LAYOUTS[k % 4], LAYOUTS[(k + 1) % 4]), None)?;
    }
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn polyadd_and_polysub_align_the_operands_at_the_constant_term() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(403);
    each_add_sub::<f64>(&ctx, &mut rng)?;
    each_add_sub::<f32>(&ctx, &mut rng)?;
    each_add_sub::<f16>(&ctx, &mut rng)?;
    each_add_sub::<i32>(&ctx, &mut rng)?;
    each_add_sub::<u8>(&ctx, &mut rng)?;
    each_add_sub::<Bool>(&ctx, &mut rng)?;
    each_add_sub::<Complex64>(&ctx, &mut rng)?;
    let stream = Stream::new(&ctx)?;
    check_add_sub::<f64>(
        &ctx,
        &mut rng,
        (7, 3),
        (Layout::Reversed, Layout::Stepped),
        Some(&stream),
    )?;
    check_add_sub::<i32>(
        &ctx,
        &mut rng,
        (2, 9),
        (Layout::Stepped, Layout::Plain),
        Some(&stream),
    )?;
    stream.synchronize()?;
    // Printed by NumPy 2.4.
    let v = |x: &[i32]| DeviceArray::from_ndarray(&ctx, &Array1::from(x.to_vec()));
    let (a, b) = (v(&[1, 2])?, v(&[9, 5, 4])?);
    assert_eq!(gpuarray::polyadd(&a, &b)?.to_vec()?, [9, 6, 6]);
    assert_eq!(gpuarray::polysub(&a, &b)?.to_vec()?, [-9, -4, -2]);
    assert_eq!(gpuarray::polyadd(&b, &a)?.to_vec()?, [9, 6, 6]);
    let (a, b) = (v(&[i32::MIN])?, v(&[1, 1])?);
    assert_eq!(gpuarray::polysub(&a, &b)?.to_vec()?, [-1, 2147483647]);
    // Leading zeros are kept (np.polyadd([0, 0, 1.5], [2.]) is [0., 0., 3.5]; np.polysub of
    // [0., 0, 1] and [0., 1] is [0., 0., 0.]).
    let w = |x: &[f64]| DeviceArray::from_ndarray(&ctx, &Array1::from(x.to_vec()));
    let (a, b) = (w(&[0.0, 0.0, 1.5])?, w(&[2.0])?);
    assert_eq!(gpuarray::polyadd(&a, &b)?.to_vec()?, [0.0, 0.0, 3.5]);
    let (a, b) = (w(&[0.0, 0.0, 1.0])?, w(&[0.0, 1.0])?);
    assert_eq!(gpuarray::polysub(&a, &b)?.to_vec()?, [0.0, 0.0, 0.0]);
    // An empty operand is a polynomial of no terms (np.polyadd([], [1., 2]) is [1., 2.]).
    let (a, b) = (w(&[])?, w(&[1.0, 2.0])?);
    assert_eq!(gpuarray::polyadd(&a, &b)?.to_vec()?, [1.0, 2.0]);
    assert_eq!(gpuarray::polysub(&b, &a)?.to_vec()?, [1.0, 2.0]);
    assert_eq!(gpuarray::polyadd(&a, &a)?.to_vec()?, Vec::<f64>::new());
    // uint8 wraps.
    let u = |x: &[u8]| DeviceArray::from_ndarray(&ctx, &Array1::from(x.to_vec()));
    let (a, b) = (u(&[200, 100])?, u(&[1, 100, 200])?);
    assert_eq!(gpuarray::polyadd(&a, &b)?.to_vec()?, [1, 44, 44]);
    assert_eq!(gpuarray::polysub(&a, &b)?.to_vec()?, [255, 100, 156]);
    // bool adds as or (np.polyadd([T, F], [T, T, F]) is [T, T, F]); `-` is refused, as NumPy
    // raises a TypeError for it, on a stream too.
    let (t, f) = (Bool::TRUE, Bool::FALSE);
    let (a, b) = (
        DeviceArray::from_ndarray(&ctx, &arr1(&[t, f]))?,
        DeviceArray::from_ndarray(&ctx, &arr1(&[t, t, f]))?,
    );
    assert_eq!(gpuarray::polyadd(&a, &b)?.to_vec()?, [true, true, false]);
    let r = gpuarray::polysub(&a, &b);
    assert!(
        matches!(r, Err(Error::Argument(ArgumentError::UndefinedOnElement { .. }))),
        "{r:?}"
    );
    let r = gpuarray::on(&stream).polysub(&a, &b);
    assert!(
        matches!(r, Err(Error::Argument(ArgumentError::UndefinedOnElement { .. }))),
        "{r:?}"
    );
    Ok(())
}

/// `polymul` of random operands of `lens` after `zeros` leading zeros each (an operand of
/// only zeros where its length is 0), laid out as `layouts`, on `stream` when given, against
/// [`host_polymul`].
fn check_polymul<T: Coef>(
    ctx: &Context,
    rng: &mut Rng,
    lens: (usize, usize),
    zeros: (usize, usize),
    layouts: (Layout, Layout),
    stream: Option<&Stream>,
) -> gpu_runtime::Result<()> {
    let operand = |rng: &mut Rng, zeros: usize, n: usize| {
        let mut x = vec![T::zero(); zeros];
        // Nonzero terms: a random zero would be a leading zero of its own.
        x.extend((0..n).map(|_| loop {
            let c = T::random(rng);
            if c != T::zero() {
                break c;
            }
        }));
        x
    };
    let (a, b) = (operand(rng, zeros.0, lens.0), operand(rng, zeros.1, lens.1));
    let (da, db) = (upload1(ctx, &a, layouts.0)?, upload1(ctx, &b, layouts.1)?);
    let (va, vb) = (view1(&da, layouts.0)?, view1(&db, layouts.1)?);
    let got = match stream {
        Some(stream) => {
            let got = gpuarray::on(stream).polymul(&va, &vb)?;
            stream.synchronize()?;
            got
        }
        None => gpuarray::polymul(&va, &vb)?,
    };
    let what = format!(
        "{} polymul of {lens:?} after {zeros:?} zeros, {layouts:?}",
        std::any::type_name::<T>()
    );
    check_close(&what, &got.to_vec()?, &host_polymul(&a, &b));
    Ok(())
}

fn each_polymul<T: Coef>(ctx: &Context, rng: &mut Rng) -> gpu_runtime::Result<()> {
    const LENS: [(usize, usize); 8] = [(1, 1), (1, 4), (3, 5), (7, 2), (20, 33), (300, 9), (0, 3), (0, 0)];
    const ZEROS: [(usize, usize); 4] = [(0, 0), (1, 0), (0, 2), (3, 1)];
    for (k, &lens) in LENS.iter().enumerate() {
        for (j, &zeros) in ZEROS.iter().enumerate() {
            // Of only zeros needs one at least (an empty operand is refused).
            let zeros = (
                zeros.0.max(usize::from(lens.0 == 0)),
                zeros.1.max(usize::from(lens.1 == 0)),
            );
            check_polymul::<T>(ctx, rng, lens, zeros, (Layout::Plain, Layout::Plain), None)?;
            let layouts = (LAYOUTS[(k + j) % 4], LAYOUTS[(k + 2 * j + 1) % 4]);
            check_polymul::<T>(ctx, rng, lens, zeros, layouts, None)?;
        }
    }
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn polymul_convolves_the_operands_without_their_leading_zeros() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(404);
    each_polymul::<f64>(&ctx, &mut rng)?;
    each_polymul::<f32>(&ctx, &mut rng)?;
    each_polymul::<f16>(&ctx, &mut rng)?;
    each_polymul::<i32>(&ctx, &mut rng)?;
    each_polymul::<u8>(&ctx, &mut rng)?;
    each_polymul::<Complex64>(&ctx, &mut rng)?;
    let stream = Stream::new(&ctx)?;
    check_polymul::<f64>(
        &ctx,
        &mut rng,
        (6, 11),
        (2, 1),
        (Layout::Reversed, Layout::Stepped),
        Some(&stream),
    )?;
    check_polymul::<Complex64>(
        &ctx,
        &mut rng,
        (4, 3),
        (0, 2),
        (Layout::Stepped, Layout::Plain),
        Some(&stream),
    )?;
    // Printed by NumPy 2.4.
    let v = |x: &[i32]| DeviceArray::from_ndarray(&ctx, &Array1::from(x.to_vec()));
    let mul = |a: &[i32], b: &[i32]| gpuarray::polymul(&v(a)?, &v(b)?)?.to_vec();
    assert_eq!(mul(&[1, 2, 3], &[9, 5, 1])?, [9, 23, 38, 17, 3]);
    assert_eq!(mul(&[0, 0, 1], &[0, 2, 3])?, [2, 3]);
    assert_eq!(mul(&[0, 0], &[0, 0, 0])?, [0]);
    assert_eq!(mul(&[0, 3, 0], &[2, 0])?, [6, 0, 0]);
    // int32 wraps: (65536 x + 1)(65536 x + 3), 2^32 x^2 wrapping to 0.
    assert_eq!(mul(&[65536, 1], &[65536, 3])?, [0, 262144, 3]);
    let w = |x: &[f64]| DeviceArray::from_ndarray(&ctx, &Array1::from(x.to_vec()));
    assert_eq!(
        gpuarray::polymul(&w(&[0.0, 0.0])?, &w(&[1.0, 2.0])?)?.to_vec()?,
        [0.0, 0.0]
    );
    let c = |re, im| Complex64::new(re, im);
    let a = DeviceArray::from_ndarray(&ctx, &arr1(&[c(0.0, 1.0), c(1.0, 0.0)]))?;
    let b = DeviceArray::from_ndarray(&ctx, &arr1(&[c(1.0, 0.0), c(0.0, -1.0)]))?;
    assert_eq!(
        gpuarray::polymul(&a, &b)?.to_vec()?,
        [c(0.0, 1.0), c(2.0, 0.0), c(0.0, -1.0)]
    );
    // An empty operand is refused, as NumPy's convolve raises a ValueError, naming the first.
    let (empty, one) = (w(&[])?, w(&[1.0])?);
    for (x, y, operand) in [(&empty, &one, "a1"), (&one, &empty, "a2"), (&empty, &empty, "a1")] {
        for r in [gpuarray::polymul(x, y), gpuarray::on(&stream).polymul(x, y)] {
            assert!(
                matches!(
                    &r,
                    Err(Error::Shape(ArrayShapeError::EmptyOperand { operation: "polymul", operand: o }))
                        if *o == operand
                ),
                "polymul with `{operand}` empty: {r:?}"
            );
        }
    }
    Ok(())
}

/// A type of roots for `poly`, and of its coefficients (`Quotient`), both taken as complex
/// `f64` on the host: each coefficient is right within `REL` of its scale and `FLOOR`.
trait Root: TrueDivide + Coef {
    const REL: f64;
    const FLOOR: f64;
    fn c(self) -> Complex64;
    fn q(q: Self::Quotient) -> Complex64;
}

macro_rules! exact_root {
    ($($t:ty: $c:expr),*) => {$(
        /// f64 coefficients, exact (each an integer below 2^53 in these tests).
        impl Root for $t {
            const REL: f64 = 0.0;
            const FLOOR: f64 = 0.0;
            fn c(self) -> Complex64 {
                Complex64::new($c(self), 0.0)
            }
            fn q(q: f64) -> Complex64 {
                Complex64::new(q, 0.0)
            }
        }
    )*};
}
exact_root!(i32: f64::from, u8: f64::from, Bool: |b: Bool| f64::from(u8::from(b.get())));

macro_rules! float_root {
    ($($t:ty: $rel:expr, $floor:expr, $f64:expr),*) => {$(
        /// Multiplied out in the type (`f16` in `float`, rounded at each factor).
        impl Root for $t {
            const REL: f64 = $rel;
            const FLOOR: f64 = $floor;
            fn c(self) -> Complex64 {
                Complex64::new($f64(self), 0.0)
            }
            fn q(q: $t) -> Complex64 {
                Complex64::new($f64(q), 0.0)
            }
        }
    )*};
}
float_root!(f64: 1e-12, 0.0, |x: f64| x, f32: 1e-5, 1e-30, f64::from, f16: 1e-2, 1e-5, f16::to_f64);

impl Root for Complex64 {
    const REL: f64 = 1e-12;
    const FLOOR: f64 = 0.0;
    fn c(self) -> Complex64 {
        self
    }
    fn q(q: Complex64) -> Complex64 {
        q
    }
}

/// `poly` of `roots` laid out as `layout`, on `stream` when given, against [`host_poly`]:
/// the first coefficient 1, each within the type's tolerance.
fn check_poly<T: Root>(
    ctx: &Context,
    roots: &[T],
    layout: Layout,
    stream: Option<&Stream>,
) -> gpu_runtime::Result<()> {
    let d = upload1(ctx, roots, layout)?;
    let v = view1(&d, layout)?;
    let got = match stream {
        Some(stream) => {
            let got = gpuarray::on(stream).poly(&v)?;
            stream.synchronize()?;
            got
        }
        None => gpuarray::poly(&v)?,
    };
    let got = got.to_vec()?;
    let host: Vec<Complex64> = roots.iter().map(|&r| r.c()).collect();
    let want = host_poly(&host);
    let what = format!(
        "{} poly of {} roots, {layout:?}",
        std::any::type_name::<T>(),
        roots.len()
    );
    assert_eq!(got.len(), roots.len() + 1, "{what}");
    assert_eq!(
        T::q(got[0]),
        Complex64::new(1.0, 0.0),
        "{what}: the leading coefficient"
    );
    for (j, (&g, &(w, scale))) in got.iter().zip(&want).enumerate() {
        let g = T::q(g);
        assert!(
            (g - w).norm() <= T::REL * scale + T::FLOOR,
            "{what}: [{j}] is {g}, not {w} (scale {scale:e})"
        );
    }
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn poly_multiplies_out_a_factor_per_root() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(405);
    const COUNTS: [usize; 6] = [0, 1, 2, 5, 10, 20];
    for (k, &n) in COUNTS.iter().enumerate() {
        let layout = LAYOUTS[k % 4];
        // Integers and bool: f64 coefficients, exact (at most 10 roots of magnitude 9 or 4 of
        // 255 keep every coefficient an integer below 2^53).
        let ints = draw(&mut rng, n.min(10), |r| (r.next_u64() % 19) as i32 - 9);
        check_poly(&ctx, &ints, layout, None)?;
        check_poly(&ctx, &draw(&mut rng, n.min(4), u8::random), layout, None)?;
        check_poly(&ctx, &draw(&mut rng, n, Bool::random), layout, None)?;
        // Floats keep their type (f16 too, where NumPy's `poly` returns float64).
        check_poly(&ctx, &draw(&mut rng, n, |r| 2.0 * r.f64()), layout, None)?;
        check_poly(&ctx, &draw(&mut rng, n, f32::random), layout, None)?;
        check_poly(&ctx, &draw(&mut rng, n.min(8), f16::random), layout, None)?;
        check_poly(&ctx, &draw(&mut rng, n, Complex64::random), layout, None)?;
    }
    let stream = Stream::new(&ctx)?;
    let doubles = draw(&mut rng, 25, |r| 2.0 * r.f64());
    check_poly(&ctx, &doubles, Layout::Reversed, Some(&stream))?;
    let complex = draw(&mut rng, 7, Complex64::random);
    check_poly(&ctx, &complex, Layout::Stepped, Some(&stream))?;
    let ints = draw(&mut rng, 6, |r| (r.next_u64() % 19) as i32 - 9);
    check_poly(&ctx, &ints, Layout::Stepped, Some(&stream))?;
    // Printed by NumPy 2.4 (where NumPy gives the real parts of conjugate pairs' coefficients
    // and the scalar 1.0 for no roots).
    let ints = DeviceArray::from_ndarray(&ctx, &arr1(&[1i32, 2, 3]))?;
    assert_eq!(gpuarray::poly(&ints)?.to_vec()?, [1.0, -6.0, 11.0, -6.0]);
    let none = DeviceArray::from_ndarray(&ctx, &Array1::<i32>::zeros(0))?;
    assert_eq!(gpuarray::poly(&none)?.to_vec()?, [1.0]);
    let none = DeviceArray::from_ndarray(&ctx, &Array1::<f32>::zeros(0))?;
    assert_eq!(gpuarray::poly(&none)?.to_vec()?, [1.0f32]);
    let doubles = DeviceArray::from_ndarray(&ctx, &arr1(&[0.5f64, -0.25]))?;
    assert_eq!(gpuarray::poly(&doubles)?.to_vec()?, [1.0, -0.25, -0.125]);
    let bools = DeviceArray::from_ndarray(&ctx, &arr1(&[Bool::TRUE, Bool::FALSE]))?;
    assert_eq!(gpuarray::poly(&bools)?.to_vec()?, [1.0, -1.0, 0.0]);
    let bytes = DeviceArray::from_ndarray(&ctx, &arr1(&[255u8, 1]))?;
    assert_eq!(gpuarray::poly(&bytes)?.to_vec()?, [1.0, -256.0, 255.0]);
    let c = |re, im| Complex64::new(re, im);
    let pair = DeviceArray::from_ndarray(&ctx, &arr1(&[c(0.0, 1.0), c(0.0, -1.0)]))?;
    assert_eq!(
        gpuarray::poly(&pair)?.to_vec()?,
        [c(1.0, 0.0), c(0.0, 0.0), c(1.0, 0.0)]
    );
    let two = DeviceArray::from_ndarray(&ctx, &arr1(&[c(1.0, 2.0), c(3.0, -1.0)]))?;
    assert_eq!(
        gpuarray::poly(&two)?.to_vec()?,
        [c(1.0, 0.0), c(-4.0, -1.0), c(5.0, 5.0)]
    );
    Ok(())
}

/// Asserts that `got` holds, for each expected root `w`, a distinct root within `tol(w)` of
/// it (the nearest one not yet matched), and nothing else.
#[track_caller]
fn match_roots(what: &str, got: &[Complex64], want: &[Complex64], tol: impl Fn(Complex64) -> f64) {
    assert_eq!(got.len(), want.len(), "{what}: {got:?}");
    let mut used = vec![false; got.len()];
    for &w in want {
        let (k, d) = got
            .iter()
            .enumerate()
            .filter(|&(k, _)| !used[k])
            .map(|(k, &z)| (k, (z - w).norm()))
            .min_by(|a, b| a.1.total_cmp(&b.1))
            .unwrap();
        assert!(
            d <= tol(w),
            "{what}: the root nearest {w} is {}, {d:e} away (all: {got:?})",
            got[k]
        );
        used[k] = true;
    }
}

/// Asserts `|p(z)| <= tol * sum |p_k| |z|^(d-k)` at each `z` (Horner's rule in `f64`).
#[track_caller]
fn assert_small_at(what: &str, p: &[Complex64], zs: &[Complex64], tol: f64) {
    for &z in zs {
        let (value, scale) = p.iter().fold((Complex64::new(0.0, 0.0), 0.0), |(v, s), &a| {
            (v * z + a, s * z.norm() + a.norm())
        });
        assert!(
            value.norm() <= tol * scale,
            "{what}: |p({z})| = {:e}, scale {scale:e}",
            value.norm()
        );
    }
}

/// `roots` of `p` (on `stream` when given): the roots `nonzero` within `tol` times their
/// magnitude (and 1e-300), in any order, then `zeros` exact zeros.
#[track_caller]
fn check_roots<T: Element, S: gpuarray::Storage<Elem = T>>(
    what: &str,
    p: &gpuarray::DeviceArrayBase<S, Ix1>,
    nonzero: &[Complex64],
    zeros: usize,
    tol: f64,
    stream: Option<&Stream>,
) -> gpu_runtime::Result<()> {
    let got = match stream {
        Some(stream) => {
            let got = gpuarray::on(stream).roots(p)?;
            stream.synchronize()?;
            got
        }
        None => gpuarray::roots(p)?,
    };
    let got = got.to_vec()?;
    assert_eq!(got.len(), nonzero.len() + zeros, "{what}: {got:?}");
    let (found, last) = got.split_at(nonzero.len());
    assert!(
        last.iter().all(|&z| z == Complex64::new(0.0, 0.0)),
        "{what}: the trailing zeros' roots {last:?} of {got:?}"
    );
    match_roots(what, found, nonzero, |w| tol * w.norm().max(1e-300));
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn roots_of_numpys_examples_and_of_every_element_type() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let c = |re, im| Complex64::new(re, im);
    let r = |x| c(x, 0.0);
    let w = |x: &[f64]| DeviceArray::from_ndarray(&ctx, &Array1::from(x.to_vec()));
    // Printed by NumPy 2.4: np.roots of each (leading zeros dropped, a root 0 per trailing
    // zero, listed last; fewer than two coefficients left, no roots).
    let cases: [(&[f64], Vec<Complex64>, usize); 11] = [
        (&[1.0, -3.0, 2.0], vec![r(2.0), r(1.0)], 0),
        (&[0.0, 0.0, 1.0, 2.0], vec![r(-2.0)], 0),
        (&[1.0, 0.0, 0.0], vec![], 2),
        (&[5.0], vec![], 0),
        (&[0.0, 0.0, 0.0], vec![], 0),
        (&[], vec![], 0),
        (&[1.0, 0.0, -1.0, 0.0, 0.0], vec![r(-1.0), r(1.0)], 2),
        (&[5.0, 0.0], vec![], 1),
        (&[0.0, 2.0, 0.0, 0.0], vec![], 2),
        (&[1.0, 0.0, 1.0], vec![c(0.0, 1.0), c(0.0, -1.0)], 0),
        (&[1.0, -6.0, 11.0, -6.0], vec![r(3.0), r(2.0), r(1.0)], 0),
    ];
    for (p, nonzero, zeros) in &cases {
        check_roots(&format!("roots of {p:?}"), &w(p)?, nonzero, *zeros, 1e-12, None)?;
    }
    // Double roots, to about half the digits (NumPy 2.4's roots of [1, -2, 1] are 1 and 1; of
    // [1j, 2, -1j], i = (x - i)^2 times i, 2.5e-9 apart).
    check_roots(
        "roots of (x - 1)^2",
        &w(&[1.0, -2.0, 1.0])?,
        &[r(1.0), r(1.0)],
        0,
        1e-7,
        None,
    )?;
    check_roots(
        "roots of (x - 1)^2 (x + 2)",
        &w(&[1.0, 0.0, -3.0, 2.0])?,
        &[r(1.0), r(1.0), r(-2.0)],
        0,
        1e-7,
        None,
    )?;
    let cs = |x: &[Complex64]| DeviceArray::from_ndarray(&ctx, &Array1::from(x.to_vec()));
    check_roots(
        "roots of i (x - i)^2",
        &cs(&[c(0.0, 1.0), c(2.0, 0.0), c(0.0, -1.0)])?,
        &[c(0.0, 1.0), c(0.0, 1.0)],
        0,
        1e-7,
        None,
    )?;
    // Complex coefficients: np.roots([1, -3-1j, 2+2j]) is [2, 1+1j].
    let p = cs(&[c(1.0, 0.0), c(-3.0, -1.0), c(2.0, 2.0)])?;
    check_roots(
        "roots of (x - 2)(x - 1 - i)",
        &p,
        &[r(2.0), c(1.0, 1.0)],
        0,
        1e-12,
        None,
    )?;
    // Other element types, taken as complex f64 (NumPy's linalg refuses f16; this does not).
    let ints = DeviceArray::from_ndarray(&ctx, &arr1(&[0i32, 1, -6, 11, -6, 0]))?;
    check_roots("i32 roots", &ints, &[r(1.0), r(2.0), r(3.0)], 1, 1e-12, None)?;
    let bytes = DeviceArray::from_ndarray(&ctx, &arr1(&[1u8, 3, 2]))?;
    check_roots("u8 roots", &bytes, &[r(-1.0), r(-2.0)], 0, 1e-12, None)?;
    let floats = DeviceArray::from_ndarray(&ctx, &arr1(&[2.0f32, -3.0, 1.0]))?;
    check_roots("f32 roots", &floats, &[r(1.0), r(0.5)], 0, 1e-12, None)?;
    let halves = DeviceArray::from_ndarray(&ctx, &arr1(&[2.0f64, -3.0, 1.0, 0.0].map(f16::from_f64)))?;
    check_roots("f16 roots", &halves, &[r(1.0), r(0.5)], 1, 1e-12, None)?;
    // Views: every second element of [1, 9, 0, 9, -1, 9, 0, 9, 0] is [1, 0, -1, 0, 0]; the
    // reverse of [0, 0, 2, -3, 1, 0, 0] is [0, 0, 1, -3, 2, 0, 0].
    let buffer = w(&[1.0, 9.0, 0.0, 9.0, -1.0, 9.0, 0.0, 9.0, 0.0])?;
    let stepped = buffer.slice(s![..;2])?;
    check_roots(
        "roots of a stepped view",
        &stepped,
        &[r(1.0), r(-1.0)],
        2,
        1e-12,
        None,
    )?;
    let buffer = w(&[0.0, 0.0, 2.0, -3.0, 1.0, 0.0, 0.0])?;
    let reversed = buffer.slice(s![..;-1])?;
    check_roots(
        "roots of a reversed view",
        &reversed,
        &[r(1.0), r(2.0)],
        2,
        1e-12,
        None,
    )?;
    // On a stream.
    let stream = Stream::new(&ctx)?;
    check_roots(
        "roots on a stream",
        &reversed,
        &[r(1.0), r(2.0)],
        2,
        1e-12,
        Some(&stream),
    )?;
    check_roots(
        "roots of [0.] on a stream",
        &w(&[0.0])?,
        &[],
        0,
        1e-12,
        Some(&stream),
    )?;
    check_roots(
        "roots of [3., 0.] on a stream",
        &w(&[3.0, 0.0])?,
        &[],
        1,
        1e-12,
        Some(&stream),
    )?;
    Ok(())
}

/// `pairs` complex roots of angles jittered about `pairs` even steps in (0, π) and radii in
/// [0.7, 1.3), with their conjugates, then `reals` real roots alternating in sign, from about
/// ±1.6 outwards in steps of 0.4: none close to another, each well conditioned.
fn spread_roots(rng: &mut Rng, pairs: usize, reals: usize) -> Vec<Complex64> {
    let mut roots = Vec::new();
    for k in 0..pairs {
        let angle = PI * (k as f64 + 0.5 + 0.3 * rng.f64()) / pairs as f64;
        let radius = 1.0 + 0.3 * rng.f64();
        let z = Complex64::from_polar(radius, angle);
        roots.push(z);
        roots.push(z.conj());
    }
    for k in 0..reals {
        let x = 1.6 + 0.4 * (k / 2) as f64 + 0.1 * rng.f64();
        roots.push(Complex64::new(if k % 2 == 0 { x } else { -x }, 0.0));
    }
    roots
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn roots_of_random_polynomials_are_the_roots_they_were_built_from() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let stream = Stream::new(&ctx)?;
    // Real coefficients: conjugate pairs and real roots, multiplied out on the host.
    let mut rng = Rng::new(5);
    let degrees = [(1, 0), (0, 3), (2, 1), (3, 2), (6, 1), (9, 3), (14, 2), (15, 0)];
    for (k, &(pairs, reals)) in degrees.iter().enumerate() {
        let want = spread_roots(&mut rng, pairs, reals);
        let p: Vec<f64> = host_poly(&want).iter().map(|&(c, _)| c.re).collect();
        let what = format!("roots of a real polynomial of {pairs} pairs and {reals} real roots");
        let layout = LAYOUTS[k % 4];
        let d = upload1(&ctx, &p, layout)?;
        let v = view1(&d, layout)?;
        let got = if k % 3 == 2 {
            let got = gpuarray::on(&stream).roots(&v)?;
            stream.synchronize()?;
            got
        } else {
            gpuarray::roots(&v)?
        };
        let got = got.to_vec()?;
        match_roots(&what, &got, &want, |w| 1e-8 * w.norm());
        let pc: Vec<Complex64> = p.iter().map(|&x| Complex64::new(x, 0.0)).collect();
        assert_small_at(&what, &pc, &got, 1e-12);
    }
    // The same with leading and trailing zeros: the trailing ones' roots 0, last.
    let want = spread_roots(&mut rng, 4, 3);
    let mut p = vec![0.0, 0.0];
    p.extend(host_poly(&want).iter().map(|&(c, _)| c.re));
    p.extend([0.0; 3]);
    check_roots(
        "roots with 2 leading and 3 trailing zeros",
        &upload1(&ctx, &p, Layout::Plain)?,
        &want,
        3,
        1e-8,
        None,
    )?;
    // Complex coefficients of complex roots, multiplied out by `poly` on the device.
    let mut rng = Rng::new(7);
    for n in [12, 25] {
        let want: Vec<Complex64> = (0..n)
            .map(|k| {
                let angle = 2.0 * PI * (k as f64 + 0.5 + 0.3 * rng.f64()) / n as f64;
                Complex64::from_polar(1.0 + 0.3 * rng.f64(), angle)
            })
            .collect();
        let p = gpuarray::poly(&DeviceArray::from_ndarray(&ctx, &Array1::from(want.clone()))?)?;
        let what = format!("roots of a complex polynomial of degree {n}");
        let got = gpuarray::roots(&p)?.to_vec()?;
        match_roots(&what, &got, &want, |w| 1e-8 * w.norm());
        assert_small_at(&what, &p.to_vec()?, &got, 1e-12);
    }
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn roots_of_unity_of_degree_200_and_199_and_poly_of_them() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let stream = Stream::new(&ctx)?;
    // z^200 - 1: the 200th roots of unity; z^199 + 1: e^(iπ(2k + 1)/199), -1 among them.
    for (n, constant, offset) in [(200usize, -1.0, 0.0), (199, 1.0, 1.0)] {
        let mut p = vec![0.0f64; n + 1];
        (p[0], p[n]) = (1.0, constant);
        let want: Vec<Complex64> = (0..n)
            .map(|k| Complex64::from_polar(1.0, PI * (2.0 * k as f64 + offset) / n as f64))
            .collect();
        let d = DeviceArray::from_ndarray(&ctx, &Array1::from(p.clone()))?;
        let what = format!("roots of z^{n} {} 1", if constant < 0.0 { '-' } else { '+' });
        let got = if n % 2 == 0 {
            gpuarray::roots(&d)?
        } else {
            let got = gpuarray::on(&stream).roots(&d)?;
            stream.synchronize()?;
            got
        };
        let got = got.to_vec()?;
        match_roots(&what, &got, &want, |_| 1e-8);
        let pc: Vec<Complex64> = p.iter().map(|&x| Complex64::new(x, 0.0)).collect();
        assert_small_at(&what, &pc, &got, 1e-12);
    }
    // `poly` of the 16th roots of unity back (z^16 - 1, to rounding: the partial products of
    // roots in order have larger coefficients, which cost digits, as NumPy's `poly` loses
    // them), and its roots.
    let n = 16;
    let unity: Vec<Complex64> = (0..n)
        .map(|k| Complex64::from_polar(1.0, 2.0 * PI * k as f64 / n as f64))
        .collect();
    let p = gpuarray::poly(&DeviceArray::from_ndarray(&ctx, &Array1::from(unity.clone()))?)?;
    let coefficients = p.to_vec()?;
    for (j, &a) in coefficients.iter().enumerate() {
        let want = match j {
            0 => 1.0,
            j if j == n => -1.0,
            _ => 0.0,
        };
        assert!(
            (a - Complex64::new(want, 0.0)).norm() <= 1e-11,
            "poly of the 16th roots of unity: [{j}] is {a}"
        );
    }
    let got = gpuarray::roots(&p)?.to_vec()?;
    match_roots("roots of poly of the 16th roots of unity", &got, &unity, |_| 1e-8);
    Ok(())
}
