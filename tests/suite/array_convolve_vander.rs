//! `convolve`/`correlate`, `vander` and the float functions `logaddexp`, `logaddexp2` and
//! `heaviside` on a GPU against the host. The convolutions against NumPy's own arrangement
//! (`_pyarray_correlate`: the longer operand first, the result reversed where that swapped
//! them) written on the host, in every mode for every pair of lengths up to 9 and for long
//! ones, of f64, f32, i32, i8, u8 (wrapping), f16, Complex64 and Bool, on contiguous, stepped
//! and reversed views; `vander` against repeated multiplication in NumPy's result type; the
//! float functions against NumPy's formulas on random and special values. Then NumPy's
//! documented examples by value and the refusals of empty operands.

use gpu_runtime::gpuarray::promote::Promote;
use gpu_runtime::gpuarray::{self, math, Bool, ConvolveMode, DeviceArray, DeviceArrayView, Element, Operand};
use gpu_runtime::half::{bf16, f16};
use gpu_runtime::ndarray::{arr1, s, Array1, Ix1};
use gpu_runtime::types::{Complex32, Complex64};
use gpu_runtime::{ArrayShapeError, Context, Error};
use gpu_suite::Rng;

const MODES: [ConvolveMode; 3] = [ConvolveMode::Full, ConvolveMode::Same, ConvolveMode::Valid];

/// How an operand reaches the kernel.
#[derive(Debug, Clone, Copy)]
enum Layout {
    Contiguous,
    /// Every other element of a buffer.
    Stepped,
    /// A reversed view (negative stride).
    Reversed,
}

const LAYOUTS: [Layout; 3] = [Layout::Contiguous, Layout::Stepped, Layout::Reversed];

/// A buffer holding `x` as [`view`] in `layout` sees it.
fn upload<T: Element>(ctx: &Context, x: &[T], layout: Layout) -> gpu_runtime::Result<DeviceArray<T, Ix1>> {
    let host: Vec<T> = match layout {
        Layout::Contiguous => x.to_vec(),
        // Other values in between, which a kernel reading the buffer densely would pick up.
        Layout::Stepped => x.iter().zip(x.iter().rev()).flat_map(|(&p, &q)| [p, q]).collect(),
        Layout::Reversed => x.iter().rev().copied().collect(),
    };
    DeviceArray::from_ndarray(ctx, &Array1::from(host))
}

fn view<T: Element>(
    d: &DeviceArray<T, Ix1>,
    layout: Layout,
) -> gpu_runtime::Result<DeviceArrayView<'_, T, Ix1>> {
    match layout {
        Layout::Contiguous => Ok(d.view()),
        Layout::Stepped => d.slice(s![..;2]),
        Layout::Reversed => d.slice(s![..;-1]),
    }
}

/// The terms `(x[i], y[j])` of each element of NumPy's `_pyarray_correlate(x, y, mode)` for
/// `len(x) >= len(y)`: `z[k] = sum_j x[k - n_left + j] y[j]`, `n_left` the positions the
/// window starts off the left end.
fn correlate_terms<T: Copy>(x: &[T], y: &[T], mode: ConvolveMode) -> Vec<Vec<(T, T)>> {
    let (n1, n) = (x.len(), y.len());
    let (n_left, len) = match mode {
        ConvolveMode::Valid => (0, n1 - n + 1),
        ConvolveMode::Same => (n / 2, n1),
        ConvolveMode::Full => (n - 1, n1 + n - 1),
    };
    (0..len)
        .map(|k| {
            (0..n)
                .filter_map(|j| {
                    (k + j)
                        .checked_sub(n_left)
                        .filter(|&i| i < n1)
                        .map(|i| (x[i], y[j]))
                })
                .collect()
        })
        .collect()
}

/// The terms `(from a, from v)` of each element of NumPy's `convolve(a, v, mode)` or
/// `correlate(a, v, mode)` (`v` not yet conjugated), as NumPy arranges them: `convolve` puts
/// the longer array first and correlates with the other reversed; `correlate` swaps a shorter
/// `a` and reverses the result, which moves its `same` window.
fn numpy_terms<T: Copy>(a: &[T], v: &[T], mode: ConvolveMode, convolve: bool) -> Vec<Vec<(T, T)>> {
    let swap = |t: Vec<Vec<(T, T)>>| -> Vec<Vec<(T, T)>> {
        t.into_iter()
            .map(|e| e.into_iter().map(|(p, q)| (q, p)).collect())
            .collect()
    };
    let rev = |x: &[T]| -> Vec<T> { x.iter().rev().copied().collect() };
    match (convolve, a.len() < v.len()) {
        (true, true) => swap(correlate_terms(v, &rev(a), mode)),
        (true, false) => correlate_terms(a, &rev(v), mode),
        (false, true) => {
            let mut t = swap(correlate_terms(v, a, mode));
            t.reverse();
            t
        }
        (false, false) => correlate_terms(a, v, mode),
    }
}

/// Both operations in every mode of `a` and `v`, laid out as `layouts`, against NumPy's
/// terms: `ok(correlate, terms, got)` judges each element of the result.
fn check<T: Element>(
    ctx: &Context,
    a: &[T],
    v: &[T],
    layouts: (Layout, Layout),
    ok: impl Fn(bool, &[(T, T)], T) -> bool,
) -> gpu_runtime::Result<()> {
    let (da, dv) = (upload(ctx, a, layouts.0)?, upload(ctx, v, layouts.1)?);
    let (va, vv) = (view(&da, layouts.0)?, view(&dv, layouts.1)?);
    for correlate in [false, true] {
        for mode in MODES {
            let got = if correlate {
                gpuarray::correlate(&va, &vv, mode)?
            } else {
                gpuarray::convolve(&va, &vv, mode)?
            };
            let got = got.to_vec()?;
            let want = numpy_terms(a, v, mode, !correlate);
            let name = if correlate { "correlate" } else { "convolve" };
            let what = format!("{name} {mode:?} of {} x {} {layouts:?}", a.len(), v.len());
            assert_eq!(got.len(), want.len(), "{what}");
            for (k, (g, terms)) in got.iter().zip(&want).enumerate() {
                assert!(
                    ok(correlate, terms, *g),
                    "{what}: z[{k}] = {g:?}, terms {terms:?}"
                );
            }
        }
    }
    Ok(())
}

/// A real result within `rel` of the exact sum (for a rounded 16-bit one), `tol` of the sum of
/// the terms' magnitudes (the accumulation's rounding) and `floor` (a subnormal's rounding).
fn float_ok<T: Copy>(
    f: impl Fn(T) -> f64,
    rel: f64,
    tol: f64,
    floor: f64,
) -> impl Fn(bool, &[(T, T)], T) -> bool {
    move |_, terms, got| {
        let (sum, scale) = terms.iter().fold((0.0, 0.0), |(s, m), &(p, q)| {
            let t = f(p) * f(q);
            (s + t, m + t.abs())
        });
        (f(got) - sum).abs() <= rel * sum.abs() + tol * scale + floor
    }
}

fn draw<T>(rng: &mut Rng, n: usize, f: impl Fn(&mut Rng) -> T) -> Vec<T> {
    (0..n).map(|_| f(rng)).collect()
}

/// Operands of `na` and `m` elements drawn by `f`.
fn operands<T>(rng: &mut Rng, (na, m): (usize, usize), f: impl Fn(&mut Rng) -> T) -> (Vec<T>, Vec<T>) {
    (draw(rng, na, &f), draw(rng, m, &f))
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn f64_convolutions_match_numpy_for_every_short_length_pair() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(2718);
    for na in 1..=9 {
        for m in 1..=9 {
            let (a, v) = operands(&mut rng, (na, m), |r| r.f64() * 2.0);
            // Contiguous, then mixed layouts: the kernel must read views through their strides.
            for layouts in [
                (Layout::Contiguous, Layout::Contiguous),
                (LAYOUTS[na % 3], LAYOUTS[(m + 1) % 3]),
            ] {
                check(&ctx, &a, &v, layouts, float_ok(|x| x, 0.0, 1e-12, 0.0))?;
            }
        }
    }
    // NumPy's documented examples (exact: every sum is of dyadic values).
    let a = DeviceArray::from_ndarray(&ctx, &arr1(&[1.0f64, 2.0, 3.0]))?;
    let v = DeviceArray::from_ndarray(&ctx, &arr1(&[0.0f64, 1.0, 0.5]))?;
    let conv = |mode| gpuarray::convolve(&a, &v, mode)?.to_vec();
    assert_eq!(conv(ConvolveMode::Full)?, [0.0, 1.0, 2.5, 4.0, 1.5]);
    assert_eq!(conv(ConvolveMode::Same)?, [1.0, 2.5, 4.0]);
    assert_eq!(conv(ConvolveMode::Valid)?, [2.5]);
    let corr = |mode| gpuarray::correlate(&a, &v, mode)?.to_vec();
    assert_eq!(corr(ConvolveMode::Valid)?, [3.5]);
    assert_eq!(corr(ConvolveMode::Same)?, [2.0, 3.5, 3.0]);
    assert_eq!(corr(ConvolveMode::Full)?, [0.5, 2.0, 3.5, 3.0, 0.0]);
    let c = |re, im| Complex64::new(re, im);
    let ca = DeviceArray::from_ndarray(&ctx, &arr1(&[c(1.0, 1.0), c(2.0, 0.0), c(3.0, -1.0)]))?;
    let cv = DeviceArray::from_ndarray(&ctx, &arr1(&[c(0.0, 0.0), c(1.0, 0.0), c(0.0, 0.5)]))?;
    assert_eq!(
        gpuarray::correlate(&ca, &cv, ConvolveMode::Full)?.to_vec()?,
        [c(0.5, -0.5), c(1.0, 0.0), c(1.5, -1.5), c(3.0, -1.0), c(0.0, 0.0)]
    );
    // An empty operand is refused, as NumPy's ValueError, naming the first empty one.
    let empty = DeviceArray::from_ndarray(&ctx, &Array1::<f64>::zeros(0))?;
    for (x, y, operand) in [(&empty, &v, "a"), (&a, &empty, "v"), (&empty, &empty, "a")] {
        for mode in MODES {
            for (operation, r) in [
                ("convolve", gpuarray::convolve(x, y, mode)),
                ("correlate", gpuarray::correlate(x, y, mode)),
            ] {
                assert!(
                    matches!(
                        &r,
                        Err(Error::Shape(ArrayShapeError::EmptyOperand { operation: o, operand: p }))
                            if *o == operation && *p == operand
                    ),
                    "{operation} {mode:?} with `{operand}` empty: {r:?}"
                );
            }
        }
    }
    Ok(())
}

/// The judge of an integer result: the terms summed with wrapping in the type, as NumPy's
/// (the C++ promotes 8-bit products to int and truncates the sum: the same modulo 2^8).
macro_rules! wraps {
    ($t:ty) => {
        |_, t: &[($t, $t)], g: $t| {
            g == t
                .iter()
                .fold(0, |s: $t, &(p, q)| s.wrapping_add(p.wrapping_mul(q)))
        }
    };
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn convolutions_of_every_element_kind_match_numpy() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(31415);
    let lengths = [(5000, 37), (37, 5000), (64, 64), (1, 7), (8, 1)];
    for (i, n) in lengths.into_iter().enumerate() {
        let layouts = (LAYOUTS[i % 3], LAYOUTS[(i + 2) % 3]);
        let (a, v) = operands(&mut rng, n, |r| r.f32() * 2.0);
        check(&ctx, &a, &v, layouts, float_ok(f64::from, 0.0, 1e-5, 0.0))?;
        // Integers over their whole range, so that the sums wrap.
        let (a, v) = operands(&mut rng, n, |r| r.next_u64() as i32);
        check(&ctx, &a, &v, layouts, wraps!(i32))?;
        let (a, v) = operands(&mut rng, n, |r| r.next_u64() as i8);
        check(&ctx, &a, &v, layouts, wraps!(i8))?;
        let (a, v) = operands(&mut rng, n, |r| r.next_u64() as u8);
        check(&ctx, &a, &v, layouts, wraps!(u8))?;
        // f16 sums in f32 and rounds once: within about an ulp of the exact sum.
        let (a, v) = operands(&mut rng, n, |r| f16::from_f32(r.f32() * 2.0));
        check(&ctx, &a, &v, layouts, float_ok(f16::to_f64, 2e-3, 4e-6, 6e-8))?;
        // Complex: correlate conjugates v, convolve does not.
        let (a, v) = operands(&mut rng, n, |r| Complex64::new(r.f64(), r.f64()));
        check(&ctx, &a, &v, layouts, |correlate, t, g| {
            let (sum, scale) = t.iter().fold((Complex64::new(0.0, 0.0), 0.0), |(s, n), &(p, q)| {
                (
                    s + p * if correlate { q.conj() } else { q },
                    n + p.norm() * q.norm(),
                )
            });
            (g - sum).norm() <= 1e-12 * scale
        })?;
        // Bool: NumPy's dot of booleans, an OR of ANDs (sparse, so that both outcomes occur).
        let (a, v) = operands(&mut rng, n, |r| Bool::from(r.next_u64().is_multiple_of(8)));
        check(&ctx, &a, &v, layouts, |_, t, g| {
            g.get() == t.iter().any(|(p, q)| p.get() && q.get())
        })?;
    }
    Ok(())
}

type Pow<T> = <T as Promote<i64>>::Output;

/// `vander` of the first 0, 1, 5 and 9 elements of `x` (in each layout), for every column
/// count and both orders, against the powers by repeated multiplication on the host in the
/// result type (`to` converts into it, `mul` multiplies, `same` compares).
fn check_vander<T: Promote<i64>>(
    ctx: &Context,
    x: &[T],
    to: impl Fn(T) -> Pow<T>,
    mul: impl Fn(Pow<T>, Pow<T>) -> Pow<T>,
    one: Pow<T>,
    same: impl Fn(Pow<T>, Pow<T>) -> bool,
) -> gpu_runtime::Result<()> {
    for (i, n) in [0usize, 1, 5, 9].into_iter().enumerate() {
        let layout = LAYOUTS[i % 3];
        let d = upload(ctx, &x[..n], layout)?;
        for cols in [None, Some(0), Some(1), Some(3), Some(12)] {
            for increasing in [false, true] {
                let z = view(&d, layout)?.vander(cols, increasing)?;
                let c = cols.unwrap_or(n);
                let what = format!("vander of {n} {layout:?} {cols:?} increasing {increasing}");
                assert_eq!(z.shape(), [n, c], "{what}");
                let got = z.to_vec()?;
                for (k, &g) in got.iter().enumerate() {
                    let (r, j) = (k / c, k % c);
                    let p = if increasing { j } else { c - 1 - j };
                    let e = to(x[r]);
                    // NumPy's multiply.accumulate: ((e * e) * e) ..., left to right.
                    let want = (1..p).fold(if p == 0 { one } else { e }, |w, _| mul(w, e));
                    assert!(same(g, want), "{what}: [{r}, {j}] = {g:?}, not {want:?}");
                }
            }
        }
    }
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn vander_is_repeated_multiplication_in_numpys_type() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(1618);
    let bits = |a: f64, b: f64| a.to_bits() == b.to_bits();
    // Small integers: the 11th powers stay inside i64.
    let x = draw(&mut rng, 9, |r| (r.next_u64() % 81) as i32 - 40);
    check_vander(&ctx, &x, i64::from, i64::wrapping_mul, 1, |a, b| a == b)?;
    let x = draw(&mut rng, 9, |r| (r.next_u64() % 41) as u8);
    check_vander(&ctx, &x, i64::from, i64::wrapping_mul, 1, |a, b| a == b)?;
    // u64 goes to f64 (values above 2^53 round to nearest on both sides).
    let x: Vec<u64> = (0..9)
        .map(|k| {
            if k % 3 == 0 {
                rng.next_u64()
            } else {
                rng.next_u64() % 100
            }
        })
        .collect();
    check_vander(&ctx, &x, |u| u as f64, |a, b| a * b, 1.0, bits)?;
    let x = draw(&mut rng, 9, |r| r.f32() * 3.0);
    check_vander(&ctx, &x, f64::from, |a, b| a * b, 1.0, bits)?;
    let x = draw(&mut rng, 9, |r| r.f64() * 3.0);
    check_vander(&ctx, &x, |e| e, |a, b| a * b, 1.0, bits)?;
    let x = draw(&mut rng, 9, |r| f16::from_f32(r.f32() * 3.0));
    check_vander(&ctx, &x, f16::to_f64, |a, b| a * b, 1.0, bits)?;
    // Complex products may be fused (FMA) on the device: within a few ulps of |x|^p.
    let x = draw(&mut rng, 9, |r| Complex32::new(r.f32() * 1.5, r.f32() * 1.5));
    let widen = |z: Complex32| Complex64::new(f64::from(z.re), f64::from(z.im));
    let one = Complex64::new(1.0, 0.0);
    check_vander(
        &ctx,
        &x,
        widen,
        |a, b| a * b,
        one,
        |g, w| (g - w).norm() <= 1e-13 * w.norm(),
    )?;
    // NumPy's examples, and u8 above 127 (no sign extension on the way to i64).
    let x = DeviceArray::from_ndarray(&ctx, &arr1(&[1i64, 2, 3, 5]))?;
    assert_eq!(
        x.vander(Some(3), false)?.to_vec()?,
        [1, 1, 1, 4, 2, 1, 9, 3, 1, 25, 5, 1]
    );
    assert_eq!(
        x.vander(None, true)?.to_vec()?,
        [1, 1, 1, 1, 1, 2, 4, 8, 1, 3, 9, 27, 1, 5, 25, 125]
    );
    let x = DeviceArray::from_ndarray(&ctx, &arr1(&[200u8, 255]))?;
    assert_eq!(
        x.vander(Some(4), false)?.to_vec()?,
        [8_000_000i64, 40_000, 200, 1, 16_581_375, 65_025, 255, 1]
    );
    Ok(())
}

/// f32 and f64 as the host computes NumPy's formulas in them.
trait Real:
    Copy
    + PartialOrd
    + std::ops::Add<Output = Self>
    + std::ops::Sub<Output = Self>
    + std::ops::Div<Output = Self>
    + std::ops::Neg<Output = Self>
{
    const LN2: Self;
    const ZERO: Self;
    const ONE: Self;
    fn exp(self) -> Self;
    fn exp2(self) -> Self;
    fn ln_1p(self) -> Self;
    fn is_nan(self) -> bool;
}

macro_rules! real {
    ($($t:ident),*) => {$(
        impl Real for $t {
            const LN2: $t = std::$t::consts::LN_2;
            const ZERO: $t = 0.0;
            const ONE: $t = 1.0;
            fn exp(self) -> $t { $t::exp(self) }
            fn exp2(self) -> $t { $t::exp2(self) }
            fn ln_1p(self) -> $t { $t::ln_1p(self) }
            fn is_nan(self) -> bool { $t::is_nan(self) }
        }
    )*};
}
real!(f32, f64);

/// NumPy's `logaddexp` (`base2`: `logaddexp2`): `x + ln 2` (`x + 1`) for equal operands, so
/// equal infinities stay; NaN where the difference is; else the larger plus the log1p of the
/// exponential of minus the gap.
fn logaddexp<F: Real>(x: F, y: F, base2: bool) -> F {
    if x == y {
        return x + if base2 { F::ONE } else { F::LN2 };
    }
    let d = x - y;
    if d.is_nan() {
        return d;
    }
    let (m, t) = if d > F::ZERO { (x, -d) } else { (y, d) };
    if base2 {
        m + t.exp2().ln_1p() / F::LN2
    } else {
        m + t.exp().ln_1p()
    }
}

/// NumPy's `heaviside`: NaN stays, `h0` at either zero, 0 below, 1 above.
fn heaviside<F: Real>(x: F, h0: F) -> F {
    if x.is_nan() {
        x
    } else if x == F::ZERO {
        h0
    } else if x < F::ZERO {
        F::ZERO
    } else {
        F::ONE
    }
}

/// A float type under test: `C` the type the device computes in (f32 for 16-bit types, whose
/// results are rounded once), and the ulps allowed.
trait Case: math::Float + for<'a> Operand<'a, Self> {
    type C: Real;
    const ULPS: i64;
    /// `C`'s epsilon: the absolute slack of a result that cancels.
    const EPS: f64;
    fn from_f64(v: f64) -> Self;
    fn to_f64(self) -> f64;
    fn up(self) -> Self::C;
    fn down(c: Self::C) -> Self;
    /// The bits as an integer in the order of the values (both zeros 0).
    fn ordered(self) -> i64;
}

/// `Case` for `$t`: computed in `$c`; `$bits` its bits as a signed integer; the conversions
/// from f64 and to f64 (both exact but the first), up to `$c` (exact) and down (rounding).
macro_rules! case {
    ($($t:ty: $c:ty, $ulps:expr, $eps:expr, $bits:ty,
        $v:ident => $from:expr, $s:ident => $to:expr, $up:expr, $d:ident => $down:expr;)*) => {$(
        impl Case for $t {
            type C = $c;
            const ULPS: i64 = $ulps;
            const EPS: f64 = $eps;
            fn from_f64($v: f64) -> Self { $from }
            fn to_f64(self) -> f64 { let $s = self; $to }
            fn up(self) -> $c { let $s = self; $up }
            fn down($d: $c) -> Self { $down }
            fn ordered(self) -> i64 {
                let b = self.to_bits() as $bits;
                i64::from(if b < 0 { <$bits>::MIN - b } else { b })
            }
        }
    )*};
}
const EPS32: f64 = f32::EPSILON as f64;
case!(
    f64: f64, 4, f64::EPSILON, i64, v => v, s => s, s, c => c;
    f32: f32, 4, EPS32, i32, v => v as f32, s => f64::from(s), s, c => c;
    f16: f32, 1, EPS32, i16, v => f16::from_f64(v), s => s.to_f64(), s.to_f32(), c => f16::from_f32(c);
    bf16: f32, 1, EPS32, i16, v => bf16::from_f64(v), s => s.to_f64(), s.to_f32(), c => bf16::from_f32(c);
);

/// A function's host reference: its value for two operands.
type HostFn<'f, T> = &'f dyn Fn(T, T) -> T;

/// The three functions in their three forms (a new array, `_into`, an `Expr` step) against
/// the host in the compute type, rounded once, on random and special operands.
fn check_float_fns<T: Case>(ctx: &Context, rng: &mut Rng) -> gpu_runtime::Result<()> {
    // Each special value with either sign (NaN's sign bit too), every pair of them.
    let base = [f64::INFINITY, f64::NAN, 0.0, 1.0, 0.5, 2.0, 30.0, 1e4];
    let special: Vec<f64> = base.iter().flat_map(|&v| [v, -v]).collect();
    let pairs = special.iter().flat_map(|&p| special.iter().map(move |&q| (p, q)));
    let (mut x, mut y): (Vec<f64>, Vec<f64>) = pairs.unzip();
    for k in 0..600 {
        let p = rng.f64() * 20.0;
        x.push(p);
        // Equal, close and unrelated operands.
        y.push(match k % 4 {
            0 => p,
            1 => p + rng.f64() * 1e-3,
            _ => rng.f64() * 20.0,
        });
    }
    let (x, y): (Vec<T>, Vec<T>) = (
        x.into_iter().map(T::from_f64).collect(),
        y.into_iter().map(T::from_f64).collect(),
    );
    let (dx, dy) = (
        upload(ctx, &x, Layout::Contiguous)?,
        upload(ctx, &y, Layout::Contiguous)?,
    );
    let mut out = DeviceArray::<T, Ix1>::zeros(ctx, x.len())?;
    let name = std::any::type_name::<T>();
    let compare = |what: &str, got: &[T], want: HostFn<T>, exact: bool| {
        assert_eq!(got.len(), x.len(), "{what} {name}");
        for ((&g, &p), &q) in got.iter().zip(&x).zip(&y) {
            let w = want(p, q);
            let (gf, wf) = (g.to_f64(), w.to_f64());
            // Where log1p's term cancels the larger operand, a few ulps of the operands.
            let m = p.to_f64().abs().max(q.to_f64().abs());
            let slack = if m.is_finite() {
                4.0 * T::EPS * (m + 1.0)
            } else {
                0.0
            };
            let ok = (gf.is_nan() && wf.is_nan())
                || gf.to_bits() == wf.to_bits()
                || (!exact && ((g.ordered() - w.ordered()).abs() <= T::ULPS || (gf - wf).abs() <= slack));
            assert!(ok, "{what} {name} of {p:?}, {q:?}: {g:?}, not {w:?}");
        }
    };
    let lae = |p: T, q: T| T::down(logaddexp(p.up(), q.up(), false));
    let lae2 = |p: T, q: T| T::down(logaddexp(p.up(), q.up(), true));
    let hs = |p: T, q: T| T::down(heaviside(p.up(), q.up()));
    let fns: [(&str, HostFn<T>, bool); 3] = [
        ("logaddexp", &lae, false),
        ("logaddexp2", &lae2, false),
        ("heaviside", &hs, true),
    ];
    for (k, (name, want, exact)) in fns.into_iter().enumerate() {
        // Each function as a new array, an `Expr` step and `_into`.
        let (new, expr) = match k {
            0 => {
                math::logaddexp_into(&dx, &dy, &mut out)?;
                (math::logaddexp(&dx, &dy)?, dx.expr().logaddexp(&dy))
            }
            1 => {
                math::logaddexp2_into(&dx, &dy, &mut out)?;
                (math::logaddexp2(&dx, &dy)?, dx.expr().logaddexp2(&dy))
            }
            _ => {
                math::heaviside_into(&dx, &dy, &mut out)?;
                (math::heaviside(&dx, &dy)?, dx.expr().heaviside(&dy))
            }
        };
        compare(name, &new.to_vec()?, want, exact);
        compare(&format!("Expr::{name}"), &expr.eval()?.to_vec()?, want, exact);
        compare(&format!("{name}_into"), &out.to_vec()?, want, exact);
    }
    // A scalar h0, as NumPy's heaviside(x, 0.5).
    let half = T::from_f64(0.5);
    let hs_half = |p: T, _: T| T::down(heaviside(p.up(), half.up()));
    compare(
        "heaviside(x, 0.5)",
        &math::heaviside(&dx, half)?.to_vec()?,
        &hs_half,
        true,
    );
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn logaddexp_and_heaviside_follow_numpys_formulas() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(5772);
    check_float_fns::<f64>(&ctx, &mut rng)?;
    check_float_fns::<f32>(&ctx, &mut rng)?;
    check_float_fns::<f16>(&ctx, &mut rng)?;
    check_float_fns::<bf16>(&ctx, &mut rng)?;
    // The edges by value: equal infinities stay, NaN propagates, either zero takes h0.
    let x = DeviceArray::from_ndarray(
        &ctx,
        &arr1(&[f64::NEG_INFINITY, f64::INFINITY, f64::NAN, 0.0, -0.0]),
    )?;
    let y = DeviceArray::from_ndarray(&ctx, &arr1(&[f64::NEG_INFINITY, f64::INFINITY, 1.0, 0.0, 0.0]))?;
    let got = math::logaddexp(&x, &y)?.to_vec()?;
    assert_eq!(got[..2], [f64::NEG_INFINITY, f64::INFINITY]);
    assert!(got[2].is_nan());
    assert_eq!(got[3..], [std::f64::consts::LN_2; 2]);
    let got = math::logaddexp2(&x, &y)?.to_vec()?;
    assert_eq!(got[..2], [f64::NEG_INFINITY, f64::INFINITY]);
    assert!(got[2].is_nan());
    assert_eq!(got[3..], [1.0; 2]);
    let got = math::heaviside(&x, 0.25)?.to_vec()?;
    assert_eq!(got[..2], [0.0, 1.0]);
    assert!(got[2].is_nan());
    assert_eq!(got[3..], [0.25; 2]);
    Ok(())
}
