//! `gpuarray::math` on a GPU, each function compared with Rust's on the host on random data
//! in its domain plus NaN, ±inf and ±0: the cumath functions on f32 and f64 (within a few ulps
//! of the correctly rounded value), comparisons with NaN, logic, `where_`, `any`/`all`,
//! NumPy's integer rules (division and remainder by zero, `MIN / -1`, `abs(MIN)`, integer
//! powers), `Bool` arrays, and views that are stepped or reversed, empty and 0-d arrays; the
//! mixed-type binary functions of `promote` (bitwise, shifts, `gcd`/`lcm`, `nextafter`,
//! `hypot`, `atan2`, `maximum`) against NumPy 2.4's values and result types; `sinc` of
//! integers and `bool` in `f64`, as NumPy's.

use gpu_runtime::gpuarray::{math, Bool, DeviceArray, Expr};
use gpu_runtime::ndarray::{arr0, s, Array1, ArrayD, IxDyn};
use gpu_runtime::Context;
use gpu_suite::Rng;

/// The float types under test: conversions to and from `f64` (where the references are
/// computed, then rounded), and the distance in ulps.
trait F: gpu_runtime::gpuarray::math::Float + Copy + PartialOrd + std::fmt::Debug {
    fn from_f64(v: f64) -> Self;
    fn to_f64(self) -> f64;
    fn ordered_bits(self) -> i64;
    /// The ulps a CUDA function may be off (its documented bound, with room).
    const ULPS: i64;
}

impl F for f32 {
    fn from_f64(v: f64) -> Self {
        v as f32
    }
    fn to_f64(self) -> f64 {
        f64::from(self)
    }
    fn ordered_bits(self) -> i64 {
        let b = self.to_bits() as i32;
        i64::from(if b < 0 { i32::MIN - b } else { b })
    }
    const ULPS: i64 = 8;
}

impl F for f64 {
    fn from_f64(v: f64) -> Self {
        v
    }
    fn to_f64(self) -> f64 {
        self
    }
    fn ordered_bits(self) -> i64 {
        let b = self.to_bits() as i64;
        if b < 0 {
            i64::MIN - b
        } else {
            b
        }
    }
    const ULPS: i64 = 8;
}

/// `got` is `want` (NaN for NaN, the same infinity), or within `ulps` of it.
fn check_ulps<T: F>(what: &str, inputs: &[T], got: &[T], want: &[T], ulps: i64) {
    assert_eq!(got.len(), want.len(), "{what}");
    for (k, (&g, &w)) in got.iter().zip(want).enumerate() {
        let (gf, wf) = (g.to_f64(), w.to_f64());
        if wf.is_nan() {
            assert!(gf.is_nan(), "{what}({:?}): {g:?}, want NaN", inputs.get(k));
            continue;
        }
        let d = (g.ordered_bits() - w.ordered_bits()).abs();
        assert!(
            d <= ulps,
            "{what}({:?}): {g:?}, want {w:?} ({d} ulps)",
            inputs.get(k)
        );
    }
}

/// `n` values uniform in `[lo, hi)`, then NaN, ±inf, ±0 and the ends of the range.
fn inputs<T: F>(rng: &mut Rng, n: usize, lo: f64, hi: f64) -> Vec<T> {
    let mut v: Vec<T> = (0..n)
        .map(|_| T::from_f64(lo + (rng.f64() * 0.5 + 0.5) * (hi - lo)))
        .collect();
    for x in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY, 0.0, -0.0, lo, hi] {
        v.push(T::from_f64(x));
    }
    v
}

type Unary<T> = (
    &'static str,
    fn(&DeviceArray<T>) -> gpu_runtime::Result<DeviceArray<T, IxDyn>>,
    fn(f64) -> f64,
    f64,
    f64,
);

/// Every unary function: name, the device form, the host reference (in f64), the domain.
fn unary_table<T: F>() -> Vec<Unary<T>> {
    vec![
        ("fabs", |a| math::fabs(a), f64::abs, -100.0, 100.0),
        ("ceil", |a| math::ceil(a), f64::ceil, -100.0, 100.0),
        ("floor", |a| math::floor(a), f64::floor, -100.0, 100.0),
        ("exp", |a| math::exp(a), f64::exp, -80.0, 80.0),
        ("expm1", |a| math::expm1(a), f64::exp_m1, -10.0, 10.0),
        ("exp2", |a| math::exp2(a), f64::exp2, -100.0, 100.0),
        ("log", |a| math::log(a), f64::ln, 0.0, 1e6),
        ("log1p", |a| math::log1p(a), f64::ln_1p, -1.0, 10.0),
        ("log10", |a| math::log10(a), f64::log10, 0.0, 1e6),
        ("log2", |a| math::log2(a), f64::log2, 0.0, 1e6),
        ("sqrt", |a| math::sqrt(a), f64::sqrt, -1.0, 1e6),
        ("cbrt", |a| math::cbrt(a), f64::cbrt, -1e6, 1e6),
        ("sin", |a| math::sin(a), f64::sin, -10.0, 10.0),
        ("cos", |a| math::cos(a), f64::cos, -10.0, 10.0),
        ("tan", |a| math::tan(a), f64::tan, -1.5, 1.5),
        ("asin", |a| math::asin(a), f64::asin, -1.1, 1.1),
        ("acos", |a| math::acos(a), f64::acos, -1.1, 1.1),
        ("atan", |a| math::atan(a), f64::atan, -100.0, 100.0),
        ("sinh", |a| math::sinh(a), f64::sinh, -10.0, 10.0),
        ("cosh", |a| math::cosh(a), f64::cosh, -10.0, 10.0),
        ("tanh", |a| math::tanh(a), f64::tanh, -10.0, 10.0),
        ("asinh", |a| math::asinh(a), f64::asinh, -100.0, 100.0),
        ("acosh", |a| math::acosh(a), acosh_ref, 0.5, 100.0),
        ("atanh", |a| math::atanh(a), atanh_ref, -1.0, 1.0),
        ("rint", |a| math::rint(a), f64::round_ties_even, -100.0, 100.0),
        ("round", |a| math::round(a), f64::round_ties_even, -100.0, 100.0),
        ("trunc", |a| math::trunc(a), f64::trunc, -100.0, 100.0),
    ]
}

/// `acosh` without the cancellation of `ln(x + sqrt(x² - 1))` near 1, which Rust's `f64::acosh`
/// computes: 13 ulps off at 1.0006 against CUDA's (correct) result.
fn acosh_ref(x: f64) -> f64 {
    if x < 1.0 {
        return f64::NAN;
    }
    let t = x - 1.0;
    (t + (t * (t + 2.0)).sqrt()).ln_1p()
}

/// `atanh` as `(ln(1 + x) - ln(1 - x)) / 2`: Rust's `f64::atanh` takes `ln_1p` of a value
/// near -1 for `x` near ±1 and loses digits there (46 ulps at -0.99922 against CUDA's result).
fn atanh_ref(x: f64) -> f64 {
    0.5 * (x.ln_1p() - (-x).ln_1p())
}

fn unary_all<T: F>(ctx: &Context, seed: u64) -> gpu_runtime::Result<()> {
    let mut rng = Rng::new(seed);
    for (name, device, host, lo, hi) in unary_table::<T>() {
        let x = inputs::<T>(&mut rng, 5000, lo, hi);
        let d = DeviceArray::from_ndarray(
            ctx,
            &ArrayD::from_shape_vec(IxDyn(&[x.len()]), x.clone()).unwrap(),
        )?;
        let got = device(&d)?.to_vec()?;
        // The reference in f64, rounded once: within half an ulp of the true value for f32.
        let want: Vec<T> = x.iter().map(|&v| T::from_f64(host(v.to_f64()))).collect();
        check_ulps(name, &x, &got, &want, T::ULPS);
    }
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn unary_math_matches_the_host_in_f32_and_f64() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    unary_all::<f32>(&ctx, 1)?;
    unary_all::<f64>(&ctx, 2)
}

fn binary_all<T: F>(ctx: &Context, seed: u64) -> gpu_runtime::Result<()> {
    let mut rng = Rng::new(seed);
    let x = inputs::<T>(&mut rng, 3000, -50.0, 50.0);
    let mut y = inputs::<T>(&mut rng, 3000, -50.0, 50.0);
    y.reverse();
    let up = |v: &[T]| DeviceArray::from_ndarray(ctx, &Array1::from_vec(v.to_vec()).into_dyn());
    let (dx, dy) = (up(&x)?, up(&y)?);
    let host = |f: fn(f64, f64) -> f64| -> Vec<T> {
        x.iter()
            .zip(&y)
            .map(|(&a, &b)| T::from_f64(f(a.to_f64(), b.to_f64())))
            .collect()
    };
    check_ulps(
        "fmod",
        &x,
        &math::fmod(&dx, &dy)?.to_vec()?,
        &host(|a, b| a % b),
        0,
    );
    check_ulps(
        "atan2",
        &x,
        &math::atan2(&dx, &dy)?.to_vec()?,
        &host(f64::atan2),
        T::ULPS,
    );
    check_ulps(
        "hypot",
        &x,
        &math::hypot(&dx, &dy)?.to_vec()?,
        &host(f64::hypot),
        T::ULPS,
    );
    check_ulps(
        "copysign",
        &x,
        &math::copysign(&dx, &dy)?.to_vec()?,
        &host(f64::copysign),
        0,
    );
    let ax: Vec<T> = x.iter().map(|v| T::from_f64(v.to_f64().abs())).collect();
    let dax = up(&ax)?;
    let py: Vec<T> = y.iter().map(|v| T::from_f64(v.to_f64() / 10.0)).collect();
    let dpy = up(&py)?;
    let pw: Vec<T> = ax
        .iter()
        .zip(&py)
        .map(|(a, b)| T::from_f64(a.to_f64().powf(b.to_f64())))
        .collect();
    check_ulps("power", &ax, &math::power(&dax, &dpy)?.to_vec()?, &pw, T::ULPS);
    // NumPy's maximum/minimum propagate NaN; fmax/fmin (Rust's max/min) ignore it.
    let nan_max = host(|a, b| {
        if a.is_nan() || b.is_nan() {
            f64::NAN
        } else {
            a.max(b)
        }
    });
    let nan_min = host(|a, b| {
        if a.is_nan() || b.is_nan() {
            f64::NAN
        } else {
            a.min(b)
        }
    });
    check_ulps("maximum", &x, &math::maximum(&dx, &dy)?.to_vec()?, &nan_max, 0);
    check_ulps("minimum", &x, &math::minimum(&dx, &dy)?.to_vec()?, &nan_min, 0);
    check_ulps("fmax", &x, &math::fmax(&dx, &dy)?.to_vec()?, &host(f64::max), 0);
    check_ulps("fmin", &x, &math::fmin(&dx, &dy)?.to_vec()?, &host(f64::min), 0);
    // Python's % and //.
    let py_mod = |a: f64, b: f64| {
        let r = a % b;
        if b == 0.0 {
            r
        } else if r != 0.0 && ((r < 0.0) != (b < 0.0)) {
            r + b
        } else if r == 0.0 {
            0f64.copysign(b)
        } else {
            r
        }
    };
    check_ulps(
        "remainder",
        &x,
        &math::remainder(&dx, &dy)?.to_vec()?,
        &host(py_mod),
        0,
    );
    let got = (&dx % &dy).eval()?.to_vec()?;
    check_ulps("%", &x, &got, &host(py_mod), 0);
    let fd = math::floor_divide(&dx, &dy)?.to_vec()?;
    for ((&a, &b), &g) in x.iter().zip(&y).zip(&fd) {
        let (a, b, g) = (a.to_f64(), b.to_f64(), g.to_f64());
        if b == 0.0 || !a.is_finite() || !b.is_finite() {
            continue;
        }
        assert_eq!(g, ((a - py_mod(a, b)) / b).round(), "{a} // {b}");
    }
    let fixed = math::floor_divide(
        &up(&[T::from_f64(7.0), T::from_f64(-7.5), T::from_f64(1.0)])?,
        &up(&[T::from_f64(-2.0), T::from_f64(2.0), T::from_f64(0.0)])?,
    )?
    .to_vec()?;
    assert_eq!(
        fixed.iter().map(|v| v.to_f64()).collect::<Vec<_>>(),
        vec![-4.0, -4.0, f64::INFINITY]
    );
    // ldexp with an i32 exponent array; frexp and modf give two arrays.
    let e: Vec<i32> = (0..x.len()).map(|k| (k as i32 % 40) - 20).collect();
    let de = DeviceArray::from_ndarray(ctx, &Array1::from_vec(e.clone()).into_dyn())?;
    let want: Vec<T> = x
        .iter()
        .zip(&e)
        .map(|(&a, &k)| T::from_f64(a.to_f64() * 2f64.powi(k)))
        .collect();
    check_ulps("ldexp", &x, &math::ldexp(&dx, &de)?.to_vec()?, &want, 0);
    let (m, ex) = math::frexp(&dx)?;
    let (m, ex) = (m.to_vec()?, ex.to_vec()?);
    for (k, &v) in x.iter().enumerate() {
        let v = v.to_f64();
        if v.is_finite() && v != 0.0 {
            let mm = m[k].to_f64();
            assert!((0.5..1.0).contains(&mm.abs()), "frexp({v}) mantissa {mm}");
            assert_eq!(mm * 2f64.powi(ex[k]), v, "frexp({v})");
        } else if v.is_nan() {
            assert!(m[k].to_f64().is_nan());
        } else if v == 0.0 {
            assert_eq!((m[k].to_f64(), ex[k]), (v, 0), "frexp({v})");
        } else {
            // An infinity is its own mantissa; C leaves the exponent unspecified.
            assert_eq!(m[k].to_f64(), v, "frexp({v})");
        }
    }
    let (frac, int) = math::modf(&dx)?;
    let (frac, int) = (frac.to_vec()?, int.to_vec()?);
    for (k, &v) in x.iter().enumerate() {
        let v = v.to_f64();
        let (f, i) = (frac[k].to_f64(), int[k].to_f64());
        if v.is_nan() {
            assert!(f.is_nan() && i.is_nan());
        } else if v.is_infinite() {
            assert_eq!((f, i), (0f64.copysign(v), v));
        } else {
            assert_eq!(
                (f, i),
                (T::from_f64(v - v.trunc()).to_f64(), v.trunc()),
                "modf({v})"
            );
        }
    }
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn binary_math_matches_the_host_in_f32_and_f64() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    binary_all::<f32>(&ctx, 3)?;
    binary_all::<f64>(&ctx, 4)
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn predicates_sign_abs_and_clip_with_nan_and_infinities() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(5);
    let x = inputs::<f32>(&mut rng, 1000, -3.0, 3.0);
    let d = DeviceArray::from_ndarray(&ctx, &Array1::from_vec(x.clone()).into_dyn())?;
    let bools = |a: DeviceArray<Bool, IxDyn>| -> gpu_runtime::Result<Vec<bool>> {
        Ok(a.to_vec()?.into_iter().map(bool::from).collect())
    };
    assert_eq!(
        bools(math::isnan(&d)?)?,
        x.iter().map(|v| v.is_nan()).collect::<Vec<_>>()
    );
    assert_eq!(
        bools(math::isinf(&d)?)?,
        x.iter().map(|v| v.is_infinite()).collect::<Vec<_>>()
    );
    assert_eq!(
        bools(math::isfinite(&d)?)?,
        x.iter().map(|v| v.is_finite()).collect::<Vec<_>>()
    );
    assert_eq!(
        bools(math::signbit(&d)?)?,
        x.iter().map(|v| v.is_sign_negative()).collect::<Vec<_>>()
    );
    let sign = math::sign(&d)?.to_vec()?;
    for (&v, &g) in x.iter().zip(&sign) {
        let want = if v.is_nan() {
            f32::NAN
        } else if v > 0.0 {
            1.0
        } else if v < 0.0 {
            -1.0
        } else {
            0.0
        };
        assert!(g == want || (g.is_nan() && want.is_nan()), "sign({v}) = {g}");
    }
    check_ulps(
        "abs",
        &x,
        &math::absolute(&d)?.to_vec()?,
        &x.iter().map(|v| v.abs()).collect::<Vec<_>>(),
        0,
    );
    // clip: minimum(maximum(x, lo), hi), so hi wins when lo > hi.
    let clipped = math::clip(&d, -1.0f32, 1.0f32)?.to_vec()?;
    let want: Vec<f32> = x
        .iter()
        .map(|&v| if v.is_nan() { v } else { v.clamp(-1.0, 1.0) })
        .collect();
    check_ulps("clip", &x, &clipped, &want, 0);
    assert!(math::clip(&d, 2.0f32, 1.0f32)?
        .to_vec()?
        .iter()
        .zip(&x)
        .all(|(g, v)| v.is_nan() || *g == 1.0));
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn comparisons_logic_where_any_all() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(6);
    let x = inputs::<f32>(&mut rng, 2000, -2.0, 2.0);
    let mut y = x.clone();
    rng_shuffle(&mut rng, &mut y);
    let (dx, dy) = (
        DeviceArray::from_ndarray(&ctx, &Array1::from_vec(x.clone()).into_dyn())?,
        DeviceArray::from_ndarray(&ctx, &Array1::from_vec(y.clone()).into_dyn())?,
    );
    let as_bools = |a: DeviceArray<Bool, IxDyn>| -> gpu_runtime::Result<Vec<bool>> {
        Ok(a.to_vec()?.into_iter().map(bool::from).collect())
    };
    let pairs = || x.iter().zip(&y);
    assert_eq!(
        as_bools(dx.gt(&dy)?)?,
        pairs().map(|(a, b)| a > b).collect::<Vec<_>>()
    );
    assert_eq!(
        as_bools(dx.lt(&dy)?)?,
        pairs().map(|(a, b)| a < b).collect::<Vec<_>>()
    );
    assert_eq!(
        as_bools(dx.ge(&dy)?)?,
        pairs().map(|(a, b)| a >= b).collect::<Vec<_>>()
    );
    assert_eq!(
        as_bools(dx.le(&dy)?)?,
        pairs().map(|(a, b)| a <= b).collect::<Vec<_>>()
    );
    assert_eq!(
        as_bools(dx.eq(&dy)?)?,
        pairs().map(|(a, b)| a == b).collect::<Vec<_>>()
    );
    assert_eq!(
        as_bools(dx.ne(&dy)?)?,
        pairs().map(|(a, b)| a != b).collect::<Vec<_>>()
    );
    assert_eq!(
        as_bools(dx.gt(0.5f32)?)?,
        x.iter().map(|a| *a > 0.5).collect::<Vec<_>>()
    );
    // A scalar on the left: 0.5 < x.
    assert_eq!(
        as_bools(math::less(0.5f32, &dx)?)?,
        x.iter().map(|a| 0.5 < *a).collect::<Vec<_>>()
    );
    // NaN compares false except !=.
    let nan = DeviceArray::from_ndarray(&ctx, &arr0(f32::NAN).into_dyn())?;
    for (got, want) in [
        (nan.eq(&nan)?, false),
        (nan.ne(&nan)?, true),
        (nan.lt(1.0f32)?, false),
        (nan.ge(1.0f32)?, false),
    ] {
        assert_eq!(got.shape(), &[] as &[usize]);
        assert_eq!(as_bools(got)?, vec![want]);
    }
    // Logic, fused with the comparisons.
    let p = dx.expr().gt(0.0f32);
    let q = dy.expr().lt(0.0f32);
    let and = as_bools(p.logical_and(q).eval()?)?;
    assert_eq!(
        and,
        pairs().map(|(a, b)| *a > 0.0 && *b < 0.0).collect::<Vec<_>>()
    );
    let xor = as_bools(math::logical_xor(&dx, &dy)?)?;
    assert_eq!(
        xor,
        pairs()
            .map(|(a, b)| (*a != 0.0) != (*b != 0.0))
            .collect::<Vec<_>>()
    );
    let or = as_bools(math::logical_or(&dx, 0.0f32)?)?;
    assert_eq!(or, x.iter().map(|a| *a != 0.0).collect::<Vec<_>>());
    let not = as_bools(math::logical_not(&dx)?)?;
    assert_eq!(not, x.iter().map(|a| *a == 0.0).collect::<Vec<_>>());
    // where_, with array and scalar branches; the condition is a Bool array or an expression.
    let cond = dx.gt(&dy)?;
    let w = math::where_(&cond, &dx, &dy)?.to_vec()?;
    let want: Vec<f32> = pairs().map(|(a, b)| if a > b { *a } else { *b }).collect();
    check_ulps("where", &x, &w, &want, 0);
    let w = Expr::where_(dx.expr().lt(0.0f32), 0.0f32, &dx).eval()?.to_vec()?;
    let want: Vec<f32> = x.iter().map(|a| if *a < 0.0 { 0.0 } else { *a }).collect();
    check_ulps("where scalar", &x, &w, &want, 0);
    // any / all, empty arrays included.
    assert!(math::any(&cond)? == want_any(&x, &y));
    assert!(!dx.all()?, "x holds a 0");
    let empty = DeviceArray::<f32>::zeros(&ctx, IxDyn(&[0]))?;
    assert!(!empty.any()? && empty.all()?);
    let ones = DeviceArray::from_ndarray(&ctx, &Array1::from_elem(100_000, 1u8).into_dyn())?;
    assert!(ones.all()? && ones.any()?);
    Ok(())
}

fn want_any(x: &[f32], y: &[f32]) -> bool {
    x.iter().zip(y).any(|(a, b)| a > b)
}

fn rng_shuffle(rng: &mut Rng, v: &mut [f32]) {
    for k in (1..v.len()).rev() {
        let j = (rng.next_u64() % (k as u64 + 1)) as usize;
        v.swap(k, j);
    }
}

/// NumPy's integer rules: division and remainder by zero give 0, `MIN / -1` and `abs(MIN)`
/// wrap, `%` and `//` follow Python's signs, powers by squaring wrap.
#[test]
#[ignore = "needs a CUDA GPU"]
fn integer_division_remainder_abs_and_pow_as_numpy() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(7);
    let mut a: Vec<i32> = (0..3000).map(|_| (rng.next_u64() % 2001) as i32 - 1000).collect();
    let mut b: Vec<i32> = (0..3000).map(|_| (rng.next_u64() % 21) as i32 - 10).collect();
    a.extend([i32::MIN, i32::MIN, i32::MAX, 7, -7, 0]);
    b.extend([-1, 0, -1, 0, 2, 0]);
    let up = |v: &[i32]| DeviceArray::from_ndarray(&ctx, &Array1::from_vec(v.to_vec()).into_dyn());
    let (da, db) = (up(&a)?, up(&b)?);
    let div: Vec<i32> = a
        .iter()
        .zip(&b)
        .map(|(&x, &y)| if y == 0 { 0 } else { x.wrapping_div(y) })
        .collect();
    let floor_div: Vec<i32> = a
        .iter()
        .zip(&b)
        .map(|(&x, &y)| {
            if y == 0 {
                0
            } else if y == -1 {
                x.wrapping_neg()
            } else {
                x.div_euclid(y) - i32::from(y < 0 && x.rem_euclid(y) != 0)
            }
        })
        .collect();
    let rem: Vec<i32> = a
        .iter()
        .zip(&b)
        .map(|(&x, &y)| {
            if y == 0 || y == -1 {
                0
            } else {
                let r = x % y;
                if r != 0 && ((r < 0) != (y < 0)) {
                    r + y
                } else {
                    r
                }
            }
        })
        .collect();
    // `/` is NumPy's true division, in f64 (x / 0 is an infinity or NaN, as NumPy's).
    let true_div: Vec<f64> = a.iter().zip(&b).map(|(&x, &y)| x as f64 / y as f64).collect();
    for got in [(&da / &db).eval()?.to_vec()?, da.div(&db)?.to_vec()?] {
        assert_eq!(got.len(), true_div.len());
        assert!(
            got.iter()
                .zip(&true_div)
                .all(|(g, w)| g == w || (g.is_nan() && w.is_nan())),
            "{got:?}"
        );
    }
    assert_eq!(da.rem(&db)?.to_vec()?, rem);
    assert_eq!(math::floor_divide(&da, &db)?.to_vec()?, floor_div);
    let mut inplace = da.to_contiguous()?;
    inplace.div_assign(&db)?;
    assert_eq!(inplace.to_vec()?, div);
    assert_eq!(
        math::absolute(&da)?.to_vec()?,
        a.iter().map(|x| x.wrapping_abs()).collect::<Vec<_>>()
    );
    assert_eq!(
        math::sign(&da)?.to_vec()?,
        a.iter().map(|x| x.signum()).collect::<Vec<_>>()
    );
    let m = math::maximum(&da, &db)?.to_vec()?;
    assert_eq!(m, a.iter().zip(&b).map(|(x, y)| *x.max(y)).collect::<Vec<_>>());
    // Powers: exact, wrapping; negative exponents give what 1 / x^|e| gives in integers.
    let e: Vec<i32> = (0..a.len()).map(|k| (k % 13) as i32 - 2).collect();
    let de = up(&e)?;
    let want: Vec<i32> = a
        .iter()
        .zip(&e)
        .map(|(&x, &k)| {
            if k < 0 {
                match x {
                    1 => 1,
                    -1 => {
                        if k % 2 == 0 {
                            1
                        } else {
                            -1
                        }
                    }
                    _ => 0,
                }
            } else {
                x.wrapping_pow(k as u32)
            }
        })
        .collect();
    assert_eq!(math::power(&da, &de)?.to_vec()?, want);
    // Narrow and unsigned types: u8 wraps, i8 MIN / -1 wraps, u64 by zero gives 0.
    let i8s = DeviceArray::from_ndarray(&ctx, &Array1::from_vec(vec![i8::MIN, 100, -100, 5]).into_dyn())?;
    let got = i8s.floor_divide(-1i8)?.to_vec()?;
    assert_eq!(got, vec![i8::MIN, -100, 100, -5]);
    let got = (&i8s * 2i8).eval()?.to_vec()?;
    assert_eq!(got, vec![0, -56, 56, 10]);
    let u64s = DeviceArray::from_ndarray(&ctx, &Array1::from_vec(vec![u64::MAX, 7, 0]).into_dyn())?;
    assert_eq!(u64s.floor_divide(0u64)?.to_vec()?, vec![0, 0, 0]);
    assert_eq!((&u64s % 3u64).eval()?.to_vec()?, vec![u64::MAX % 3, 1, 0]);
    assert_eq!(math::power(&u64s, 2u64)?.to_vec()?, vec![1, 49, 0]);
    Ok(())
}

/// `Bool` arrays: up and down, `fill`, `astype` to and from every type.
#[test]
#[ignore = "needs a CUDA GPU"]
fn bool_arrays_copy_fill_and_convert() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(8);
    let host: Vec<Bool> = (0..1001)
        .map(|_| Bool::from(rng.next_u64().is_multiple_of(2)))
        .collect();
    let mut d = DeviceArray::from_ndarray(&ctx, &Array1::from_vec(host.clone()).into_dyn())?;
    assert_eq!(d.to_vec()?, host);
    let f = d.astype::<f32>()?.to_vec()?;
    assert_eq!(
        f,
        host.iter()
            .map(|b| if b.get() { 1.0 } else { 0.0 })
            .collect::<Vec<_>>()
    );
    assert_eq!(
        d.astype::<i64>()?.to_vec()?,
        host.iter().map(|b| i64::from(b.get())).collect::<Vec<_>>()
    );
    assert_eq!(
        d.astype::<u8>()?.to_vec()?,
        host.iter().map(|b| u8::from(b.get())).collect::<Vec<_>>()
    );
    // To bool is `x != 0`: NaN and -0.0 included.
    let x = DeviceArray::from_ndarray(
        &ctx,
        &Array1::from_vec(vec![0.0f64, -0.0, 0.5, f64::NAN, -3.0]).into_dyn(),
    )?;
    let b: Vec<bool> = x
        .astype::<Bool>()?
        .to_vec()?
        .into_iter()
        .map(bool::from)
        .collect();
    assert_eq!(b, vec![false, false, true, true, true]);
    let i = DeviceArray::from_ndarray(&ctx, &Array1::from_vec(vec![0i32, 256, -1]).into_dyn())?;
    let b: Vec<bool> = i
        .astype::<Bool>()?
        .to_vec()?
        .into_iter()
        .map(bool::from)
        .collect();
    assert_eq!(b, vec![false, true, true]);
    d.slice_mut(s![..;2])?.fill(Bool::TRUE)?;
    let got = d.to_vec()?;
    for (k, g) in got.iter().enumerate() {
        assert_eq!(*g, if k % 2 == 0 { Bool::TRUE } else { host[k] });
    }
    Ok(())
}

/// Stepped and reversed views, 0-d and empty arrays, and the `_into`/`_on` forms.
#[test]
#[ignore = "needs a CUDA GPU"]
fn views_empty_and_zero_dimensional_arrays() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(9);
    let host = ArrayD::from_shape_vec(IxDyn(&[37, 23]), rng.vec_f32(37 * 23)).unwrap();
    let d = DeviceArray::from_ndarray(&ctx, &host)?;
    for (dv, hv) in [
        (
            d.slice(s![..;-1, ..])?.into_dyn(),
            host.slice(s![..;-1, ..]).to_owned().into_dyn(),
        ),
        (
            d.slice(s![1..;3, ..;-2])?.into_dyn(),
            host.slice(s![1..;3, ..;-2]).to_owned().into_dyn(),
        ),
        (d.t(), host.t().to_owned()),
    ] {
        let got = math::exp(&dv)?.to_ndarray()?;
        let want = hv.mapv(|v| (f64::from(v).exp()) as f32);
        check_ulps(
            "exp view",
            &[],
            &got.iter().copied().collect::<Vec<_>>(),
            &want.iter().copied().collect::<Vec<_>>(),
            8,
        );
        let fused = (&dv * 2.0f32).sin().eval()?.to_ndarray()?;
        let want = hv.mapv(|v| (f64::from(v * 2.0).sin()) as f32);
        check_ulps(
            "sin fused",
            &[],
            &fused.iter().copied().collect::<Vec<_>>(),
            &want.iter().copied().collect::<Vec<_>>(),
            8,
        );
        let gt = dv.gt(0.0f32)?.to_ndarray()?;
        assert_eq!(gt.mapv(bool::from), hv.mapv(|v| v > 0.0));
    }
    // Into a reversed view of an existing array (NumPy's out=), and on a stream.
    let mut out = DeviceArray::<f32>::zeros(&ctx, IxDyn(&[37, 23]))?;
    math::sqrt_into(&d.slice(s![..;-1, ..])?, &mut out.slice_mut(s![..;-1, ..])?)?;
    let want = host.mapv(|v| (f64::from(v).sqrt()) as f32);
    check_ulps(
        "sqrt into",
        &[],
        &out.to_vec()?,
        &want.iter().copied().collect::<Vec<_>>(),
        8,
    );
    let stream = gpu_runtime::Stream::new(&ctx)?;
    let c = d.expr().cos().on(&stream).eval()?;
    stream.synchronize()?;
    let want = host.mapv(|v| (f64::from(v).cos()) as f32);
    check_ulps(
        "cos on",
        &[],
        &c.to_vec()?,
        &want.iter().copied().collect::<Vec<_>>(),
        8,
    );
    // 0-d and empty.
    let z = DeviceArray::from_ndarray(&ctx, &arr0(0.25f64).into_dyn())?;
    let got = math::atan(&z)?;
    assert_eq!(got.shape(), &[] as &[usize]);
    check_ulps("atan 0-d", &[0.25], &got.to_vec()?, &[0.25f64.atan()], f64::ULPS);
    let e = DeviceArray::<f64>::zeros(&ctx, IxDyn(&[0, 4]))?;
    assert_eq!(math::log(&e)?.shape(), &[0, 4]);
    assert_eq!(e.gt(1.0f64)?.shape(), &[0, 4]);
    let (m, x) = math::frexp(&e)?;
    assert_eq!((m.len(), x.len()), (0, 0));
    Ok(())
}

/// Mixed element types by NumPy 2's promotion, and `cast` inside a fused expression.
#[test]
#[ignore = "needs a CUDA GPU"]
fn mixed_types_promote_as_numpy_2() -> gpu_runtime::Result<()> {
    use gpu_runtime::gpuarray::promote;
    let ctx = Context::default()?;
    let mut rng = Rng::new(10);
    let a: Vec<i32> = (0..4099).map(|_| rng.next_u64() as i32).collect();
    let b: Vec<f32> = rng.vec_f32(4099);
    let da = DeviceArray::from_ndarray(&ctx, &Array1::from_vec(a.clone()).into_dyn())?;
    let db = DeviceArray::from_ndarray(&ctx, &Array1::from_vec(b.clone()).into_dyn())?;
    // i32 + f32 -> f64: exact in double.
    let sum: DeviceArray<f64> = promote::add(&da, &db.slice(s![..;-1])?).eval()?;
    let want: Vec<f64> = a
        .iter()
        .zip(b.iter().rev())
        .map(|(x, y)| f64::from(*x) + f64::from(*y))
        .collect();
    assert_eq!(sum.to_vec()?, want);
    // u8 * i8 -> i16, wrapping in i16.
    let u: Vec<u8> = (0..=255).collect();
    let i: Vec<i8> = (0..=255u8).map(|v| v.wrapping_mul(7) as i8).collect();
    let du = DeviceArray::from_ndarray(&ctx, &Array1::from_vec(u.clone()).into_dyn())?;
    let di = DeviceArray::from_ndarray(&ctx, &Array1::from_vec(i.clone()).into_dyn())?;
    let prod: DeviceArray<i16> = promote::mul(&du, &di).eval()?;
    let want: Vec<i16> = u
        .iter()
        .zip(&i)
        .map(|(x, y)| i16::from(*x).wrapping_mul(i16::from(*y)))
        .collect();
    assert_eq!(prod.to_vec()?, want);
    // cast: f32 -> i32 (C truncation) fused with a comparison.
    let c = (db.expr() * 100.0f32).cast::<i32>().gt(10i32).eval()?.to_vec()?;
    let want: Vec<bool> = b.iter().map(|v| ((v * 100.0) as i32) > 10).collect();
    assert_eq!(c.into_iter().map(bool::from).collect::<Vec<_>>(), want);
    Ok(())
}

/// Comparisons, `maximum`/`minimum`, `abs`, `sign`, `where_` and `clip` on every integer
/// type and `f64`, against the host on random data (including each type's extremes).
#[test]
#[ignore = "needs a CUDA GPU"]
fn every_element_type_compares_and_selects() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(11);
    macro_rules! each {
        ($($t:ty),*) => {$({
            let mut a: Vec<$t> = (0..2000).map(|_| rng.next_u64() as $t).collect();
            let mut b: Vec<$t> = (0..2000).map(|_| (rng.next_u64() % 7) as $t).collect();
            a.extend([<$t>::MIN, <$t>::MAX, 0 as $t]);
            b.extend([<$t>::MAX, <$t>::MIN, 0 as $t]);
            let up = |v: &[$t]| DeviceArray::from_ndarray(&ctx, &Array1::from_vec(v.to_vec()).into_dyn());
            let (da, db) = (up(&a)?, up(&b)?);
            let name = stringify!($t);
            let bools = |x: DeviceArray<Bool, IxDyn>| -> gpu_runtime::Result<Vec<bool>> {
                Ok(x.to_vec()?.into_iter().map(bool::from).collect())
            };
            let pairs = || a.iter().zip(&b);
            assert_eq!(bools(da.gt(&db)?)?, pairs().map(|(x, y)| x > y).collect::<Vec<_>>(), "{name} >");
            assert_eq!(bools(da.le(&db)?)?, pairs().map(|(x, y)| x <= y).collect::<Vec<_>>(), "{name} <=");
            assert_eq!(bools(da.eq(&db)?)?, pairs().map(|(x, y)| x == y).collect::<Vec<_>>(), "{name} ==");
            assert_eq!(bools(math::not_equal(&da, 3 as $t)?)?, a.iter().map(|x| *x != 3 as $t).collect::<Vec<_>>(), "{name} !=");
            let max: Vec<$t> = pairs().map(|(x, y)| if x >= y { *x } else { *y }).collect();
            assert_eq!(math::maximum(&da, &db)?.to_vec()?, max, "{name} maximum");
            let min: Vec<$t> = pairs().map(|(x, y)| if x <= y { *x } else { *y }).collect();
            assert_eq!(math::minimum(&da, &db)?.to_vec()?, min, "{name} minimum");
            let sel = math::where_(&da.gt(&db)?, &da, &db.slice(s![..;-1])?.into_dyn())?.to_vec()?;
            let b_rev: Vec<$t> = b.iter().rev().copied().collect();
            let want: Vec<$t> = (0..a.len()).map(|k| if a[k] > b[k] { a[k] } else { b_rev[k] }).collect();
            assert_eq!(sel, want, "{name} where");
            let lo = 1 as $t;
            let hi = 5 as $t;
            let clipped: Vec<$t> = a.iter().map(|x| { let m = if *x >= lo { *x } else { lo }; if m <= hi { m } else { hi } }).collect();
            assert_eq!(math::clip(&da, lo, hi)?.to_vec()?, clipped, "{name} clip");
            let abs = math::absolute(&da)?.to_vec()?;
            let sign = math::sign(&da)?.to_vec()?;
            for (k, x) in a.iter().enumerate() {
                #[allow(unused_comparisons)]
                let neg = *x < 0 as $t;
                let want_abs = if neg { (0 as $t).wrapping_sub(*x) } else { *x };
                assert_eq!(abs[k], want_abs, "{name} abs({x})");
                let want_sign = if neg { (0 as $t).wrapping_sub(1) } else if *x > 0 as $t { 1 } else { 0 };
                assert_eq!(sign[k], want_sign, "{name} sign({x})");
            }
        })*};
    }
    each!(i8, u8, i16, u16, i32, u32, i64, u64);
    Ok(())
}

/// NumPy's `deg2rad`/`rad2deg` (one multiplication by the same constant: the same bits as the
/// host's in `f32` and `f64`, integers converted as NumPy 2 converts them), `reciprocal` (in the
/// element type: integers toward zero), `negative` (integers wrap), `positive` and
/// `float_power` (in `f64` whatever the operands), on random data against the host.
#[test]
#[ignore = "needs a CUDA GPU"]
fn angles_reciprocals_negatives_and_float_power_match_the_host() -> gpu_runtime::Result<()> {
    use std::f64::consts::PI;
    let ctx = Context::default()?;
    let mut rng = Rng::new(0xde9);
    let n = 4099;
    let deg: Vec<f64> = (0..n).map(|_| rng.f64() * 720.0).collect();
    let d64 = DeviceArray::from_ndarray(&ctx, &Array1::from(deg.clone()))?;
    let want: Vec<f64> = deg.iter().map(|x| x * (PI / 180.0)).collect();
    assert_eq!(math::deg2rad(&d64)?.to_vec()?, want, "deg2rad f64");
    let back: Vec<f64> = want.iter().map(|x| x * (180.0 / PI)).collect();
    let r64 = DeviceArray::from_ndarray(&ctx, &Array1::from(want.clone()))?;
    assert_eq!(math::rad2deg(&r64)?.to_vec()?, back, "rad2deg f64");
    let deg32: Vec<f32> = deg.iter().map(|&x| x as f32).collect();
    let d32 = DeviceArray::from_ndarray(&ctx, &Array1::from(deg32.clone()))?;
    let want32: Vec<f32> = deg32.iter().map(|x| x * (PI / 180.0) as f32).collect();
    assert_eq!(math::deg2rad(&d32)?.to_vec()?, want32, "deg2rad f32");
    let fused = d32.expr().rad2deg().eval()?.to_vec()?;
    let want32: Vec<f32> = deg32.iter().map(|x| x * (180.0 / PI) as f32).collect();
    assert_eq!(fused, want32, "rad2deg f32, as a step of an expression");
    // i16 computes in f32 (NumPy 2's loop), i32 in f64.
    let ints: Vec<i16> = (0..n).map(|_| (rng.next_u64() % 2001) as i16 - 1000).collect();
    let di = DeviceArray::from_ndarray(&ctx, &Array1::from(ints.clone()))?;
    let want: Vec<f32> = ints.iter().map(|&x| f32::from(x) * (PI / 180.0) as f32).collect();
    assert_eq!(math::deg2rad(&di)?.to_vec()?, want, "deg2rad i16 -> f32");
    let ints32: Vec<i32> = ints.iter().map(|&x| i32::from(x) * 977).collect();
    let di32 = DeviceArray::from_ndarray(&ctx, &Array1::from(ints32.clone()))?;
    let want: Vec<f64> = ints32.iter().map(|&x| f64::from(x) * (180.0 / PI)).collect();
    assert_eq!(math::rad2deg(&di32)?.to_vec()?, want, "rad2deg i32 -> f64");

    // reciprocal: floats 1/x; integers toward zero, 1/0 = 0 here.
    let x: Vec<f64> = (0..n).map(|_| rng.f64() * 100.0).collect();
    let dx = DeviceArray::from_ndarray(&ctx, &Array1::from(x.clone()))?;
    let want: Vec<f64> = x.iter().map(|v| 1.0 / v).collect();
    assert_eq!(math::reciprocal(&dx)?.to_vec()?, want, "reciprocal f64");
    let small: Vec<i32> = (0..n).map(|_| (rng.next_u64() % 7) as i32 - 3).collect();
    let ds = DeviceArray::from_ndarray(&ctx, &Array1::from(small.clone()))?;
    let want: Vec<i32> = small.iter().map(|&v| if v == 0 { 0 } else { 1 / v }).collect();
    assert_eq!(math::reciprocal(&ds)?.to_vec()?, want, "reciprocal i32");
    let want: Vec<i32> = small.iter().map(|v| v.wrapping_neg()).collect();
    assert_eq!(math::negative(&ds)?.to_vec()?, want, "negative i32");
    assert_eq!(math::positive(&ds)?.to_vec()?, small, "positive i32");
    let bytes: Vec<u8> = (0..n).map(|_| rng.next_u64() as u8).collect();
    let db = DeviceArray::from_ndarray(&ctx, &Array1::from(bytes.clone()))?;
    let want: Vec<u8> = bytes.iter().map(|v| v.wrapping_neg()).collect();
    assert_eq!(math::negative(&db)?.to_vec()?, want, "negative u8 wraps");
    let want: Vec<u8> = bytes.iter().map(|&v| 1u8.checked_div(v).unwrap_or(0)).collect();
    assert_eq!(math::reciprocal(&db)?.to_vec()?, want, "reciprocal u8");

    // float_power: i32 ** i32 and f32 ** f32 computed in f64.
    let base: Vec<i32> = (0..n).map(|_| (rng.next_u64() % 50) as i32 + 1).collect();
    let expo: Vec<i32> = (0..n).map(|_| (rng.next_u64() % 9) as i32 - 4).collect();
    let (db, de) = (
        DeviceArray::from_ndarray(&ctx, &Array1::from(base.clone()))?,
        DeviceArray::from_ndarray(&ctx, &Array1::from(expo.clone()))?,
    );
    let got = math::float_power(&db, &de)?.to_vec()?;
    for ((&b, &e), g) in base.iter().zip(&expo).zip(&got) {
        let w = f64::from(b).powf(f64::from(e));
        assert!(
            (g - w).abs() <= 4.0 * f64::EPSILON * w.abs(),
            "float_power({b}, {e}) = {g}, not {w}"
        );
    }
    let xf: Vec<f32> = (0..n).map(|_| rng.f32().abs() * 10.0).collect();
    let dxf = DeviceArray::from_ndarray(&ctx, &Array1::from(xf.clone()))?;
    let got = math::float_power(&dxf, 0.5f32)?.to_vec()?;
    for (&v, g) in xf.iter().zip(&got) {
        let w = f64::from(v).powf(0.5);
        assert!(
            (g - w).abs() <= 4.0 * f64::EPSILON * w.abs(),
            "float_power({v}, 0.5) = {g}, not {w}"
        );
    }
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn mixed_type_binary_functions_promote_as_numpy() -> gpu_runtime::Result<()> {
    use gpu_runtime::gpuarray::promote;
    use gpu_runtime::half::f16;
    let ctx = Context::default()?;
    let up = |v: &[i8]| DeviceArray::from_ndarray(&ctx, &Array1::from(v.to_vec()));
    let a = up(&[1, -2, 3, 100])?;
    let b = DeviceArray::from_ndarray(&ctx, &Array1::from(vec![3u8, 5, 250, 7]))?;
    // int8 with uint8 is int16 (NumPy 2).
    let and: DeviceArray<i16, IxDyn> = promote::bitwise_and(&a, &b).eval()?;
    assert_eq!(and.to_vec()?, [1, 4, 2, 4]);
    assert_eq!(promote::bitwise_or(&a, &b).eval()?.to_vec()?, [3, -1, 251, 103]);
    assert_eq!(promote::bitwise_xor(&a, &b).eval()?.to_vec()?, [2, -5, 249, 99]);
    assert_eq!(promote::gcd(&a, &b).eval()?.to_vec()?, [1, 1, 1, 1]);
    assert_eq!(promote::lcm(&a, &b).eval()?.to_vec()?, [3, 10, 750, 700]);
    let counts = DeviceArray::from_ndarray(&ctx, &Array1::from(vec![1u8, 2, 0, 1]))?;
    assert_eq!(
        promote::left_shift(&a, &counts).eval()?.to_vec()?,
        [2, -8, 3, 200]
    );
    assert_eq!(
        promote::right_shift(&a, &counts).eval()?.to_vec()?,
        [0, -1, 3, 50]
    );
    // f32 toward f64 steps by f64's spacing.
    let x = DeviceArray::from_ndarray(&ctx, &Array1::from(vec![1.0f32, 2.0, 3.0]))?;
    let y = DeviceArray::from_ndarray(&ctx, &Array1::from(vec![2.0f64, 0.0, 3.0]))?;
    let n: DeviceArray<f64, IxDyn> = promote::nextafter(&x, &y).eval()?;
    assert_eq!(n.to_vec()?, [1.0000000000000002, 1.9999999999999998, 3.0]);
    // int32 with int16: f64; int8 with int8: f16.
    let i = DeviceArray::from_ndarray(&ctx, &Array1::from(vec![3i32, 4, -5]))?;
    let j = DeviceArray::from_ndarray(&ctx, &Array1::from(vec![4i16, 3, 12]))?;
    let h: DeviceArray<f64, IxDyn> = promote::hypot(&i, &j).eval()?;
    assert_eq!(h.to_vec()?, [5.0, 5.0, 13.0]);
    let one = up(&[1])?;
    let t: DeviceArray<f16, IxDyn> = promote::atan2(&one, &one).eval()?;
    assert!((t.to_vec()?[0].to_f64() - std::f64::consts::FRAC_PI_4).abs() < 1e-3);
    // int8 with float32: float32.
    let m = DeviceArray::from_ndarray(&ctx, &Array1::from(vec![3.5f32, 2.0]))?;
    let mx: DeviceArray<f32, IxDyn> = promote::maximum(&up(&[1, 5])?, &m).eval()?;
    assert_eq!(mx.to_vec()?, [3.5, 5.0]);
    assert_eq!(promote::minimum(&up(&[1, 5])?, &m).eval()?.to_vec()?, [1.0, 2.0]);
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn sinc_of_integers_and_bool_is_f64() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let host = |x: f64| {
        if x == 0.0 {
            1.0
        } else {
            (std::f64::consts::PI * x).sin() / (std::f64::consts::PI * x)
        }
    };
    let i = DeviceArray::from_ndarray(&ctx, &Array1::from(vec![0i32, 1, 2, -3, 1000]))?;
    let got: DeviceArray<f64, _> = math::sinc(&i)?;
    for (g, x) in got.to_vec()?.into_iter().zip([0.0, 1.0, 2.0, -3.0, 1000.0]) {
        assert!((g - host(x)).abs() < 1e-15, "sinc({x}) = {g}");
    }
    let u = DeviceArray::from_ndarray(&ctx, &Array1::from(vec![0u8, 255]))?;
    let got: DeviceArray<f64, _> = math::sinc(&u)?;
    assert_eq!(got.to_vec()?[0], 1.0);
    assert!((got.to_vec()?[1] - host(255.0)).abs() < 1e-15);
    let b = DeviceArray::from_ndarray(&ctx, &Array1::from(vec![Bool::from(false), Bool::from(true)]))?;
    let got: DeviceArray<f64, IxDyn> = b.expr().sinc().eval()?;
    assert_eq!(got.to_vec()?[0], 1.0);
    assert!(got.to_vec()?[1].abs() < 1e-15);
    Ok(())
}
