//! Complex arrays (`Complex32`, `Complex64`) on a GPU, each operation compared with
//! `num_complex` on the host on seeded random data: construction and copies (views stepped,
//! reversed, transposed; empty and 0-d arrays), `fill`, `astype` to and from every type,
//! `==`/`!=`, arithmetic with arrays and complex scalars (broadcasting), `where_`, the math
//! functions NumPy defines on complex numbers (with NaN and infinite parts where its result is
//! defined), `isnan`/`isinf`/`isfinite`, `conj`/`real`/`imag`/`angle`/`complex_abs`, `sum`/`prod`/`mean_as` over all and
//! one axis, `vdot` (conjugating) against `dot` (not), the complex normal fill, and the typed
//! errors of what complex numbers do not define.

use gpu_runtime::gpuarray::{math, Bool, DeviceArray, Expr, Operand};
use gpu_runtime::ndarray::{arr0, s, Array1, Array2, ArrayD, Axis, IxDyn};
use gpu_runtime::types::{Complex, Complex32, Complex64};
use gpu_runtime::Context;
use gpu_suite::Rng;

/// The complex types under test, with their host conversions to and from `Complex64`, where
/// references are computed.
trait C:
    gpu_runtime::gpuarray::math::ComplexElement
    + gpu_runtime::gpuarray::promote::TrueDivide<Quotient = Self>
    + for<'a> gpu_runtime::gpuarray::Operand<'a, Self>
    + std::fmt::Debug
    + Copy
{
    fn from_c64(z: Complex64) -> Self;
    fn to_c64(self) -> Complex64;
    /// The relative error allowed of a function computed in this type.
    const TOL: f64;
}

impl C for Complex32 {
    fn from_c64(z: Complex64) -> Self {
        Complex32::new(z.re as f32, z.im as f32)
    }
    fn to_c64(self) -> Complex64 {
        Complex64::new(f64::from(self.re), f64::from(self.im))
    }
    const TOL: f64 = 2e-5;
}

impl C for Complex64 {
    fn from_c64(z: Complex64) -> Self {
        z
    }
    fn to_c64(self) -> Complex64 {
        self
    }
    const TOL: f64 = 1e-12;
}

fn random<T: C>(rng: &mut Rng, n: usize, scale: f64) -> Vec<T> {
    (0..n)
        .map(|_| T::from_c64(Complex64::new(rng.f64() * scale, rng.f64() * scale)))
        .collect()
}

/// `got` is `want` within `tol` relative to `|want|` (plus `tol` absolute near zero); NaN
/// parts must be NaN, infinite parts the same infinity.
#[track_caller]
fn check<T: C>(what: &str, got: &[T], want: &[Complex64], tol: f64) {
    assert_eq!(got.len(), want.len(), "{what}: lengths");
    for (k, (g, w)) in got.iter().zip(want).enumerate() {
        let g = g.to_c64();
        // An infinite part is compared exactly; the other part's tolerance stays finite.
        let scale = if w.norm().is_finite() { 1.0 + w.norm() } else { 1.0 };
        for (gp, wp, part) in [(g.re, w.re, "re"), (g.im, w.im, "im")] {
            if wp.is_nan() {
                assert!(gp.is_nan(), "{what}[{k}].{part}: {g}, want {w}");
            } else if wp.is_infinite() {
                assert_eq!(gp, wp, "{what}[{k}].{part}: {g}, want {w}");
            } else {
                assert!(
                    (gp - wp).abs() <= tol * scale,
                    "{what}[{k}].{part}: {g}, want {w}"
                );
            }
        }
    }
}

#[track_caller]
fn check_real(what: &str, got: &[f64], want: &[f64], tol: f64) {
    assert_eq!(got.len(), want.len(), "{what}: lengths");
    for (k, (&g, &w)) in got.iter().zip(want).enumerate() {
        if w.is_nan() {
            assert!(g.is_nan(), "{what}[{k}]: {g}, want NaN");
        } else if w.is_infinite() {
            assert_eq!(g, w, "{what}[{k}]");
        } else {
            assert!(
                (g - w).abs() <= tol * (1.0 + w.abs()),
                "{what}[{k}]: {g}, want {w}"
            );
        }
    }
}

fn copies_and_conversions<T: C>(ctx: &Context, seed: u64) -> gpu_runtime::Result<()> {
    let mut rng = Rng::new(seed);
    let host = Array2::from_shape_vec((37, 70), random::<T>(&mut rng, 37 * 70, 10.0)).unwrap();
    let a = DeviceArray::from_ndarray(ctx, &host)?;
    assert_eq!(a.to_ndarray()?, host);
    // Views: stepped, reversed, transposed (the tiled copy), a column.
    assert_eq!(
        a.slice(s![..;3, ..;-2])?.to_ndarray()?,
        host.slice(s![..;3, ..;-2])
    );
    assert_eq!(a.t().to_contiguous()?.to_ndarray()?, host.t());
    assert_eq!(a.slice(s![.., 5])?.to_ndarray()?, host.column(5));
    // Empty and 0-d.
    let empty = DeviceArray::<T, _>::zeros(ctx, (0, 4))?;
    assert_eq!(empty.to_vec()?, Vec::<T>::new());
    let z0 = T::from_c64(Complex64::new(1.5, -2.5));
    let zero_d = DeviceArray::from_ndarray(ctx, &arr0(z0))?;
    assert_eq!(zero_d.to_vec()?, vec![z0]);
    // zeros, full, fill (through a stepped view), ones.
    assert!(DeviceArray::<T, _>::zeros(ctx, 100)?
        .to_vec()?
        .iter()
        .all(|z| z.to_c64() == Complex64::new(0.0, 0.0)));
    let mut f = DeviceArray::full(ctx, (5, 6), z0)?;
    assert!(f.to_vec()?.iter().all(|z| *z == z0));
    let z1 = T::from_c64(Complex64::new(-0.0, f64::INFINITY));
    f.slice_mut(s![.., ..;2])?.fill(z1)?;
    let back = f.to_ndarray()?;
    for ((_, j), v) in back.indexed_iter() {
        assert_eq!(*v, if j % 2 == 0 { z1 } else { z0 });
    }
    let ones = DeviceArray::<T, _>::ones(ctx, 3)?.to_vec()?;
    assert!(ones.iter().all(|z| z.to_c64() == Complex64::new(1.0, 0.0)));

    // astype: complex -> complex, real -> complex, complex -> real (the real part), -> bool.
    let c64 = a.astype::<Complex64>()?.to_ndarray()?;
    assert_eq!(c64, host.mapv(T::to_c64).mapv(<Complex64 as C>::from_c64));
    let c32 = a.astype::<Complex32>()?.to_ndarray()?;
    assert_eq!(c32, host.mapv(|z| Complex32::from_c64(z.to_c64())));
    let re = a.astype::<f64>()?.to_ndarray()?;
    assert_eq!(re, host.mapv(|z| z.to_c64().re));
    let ints = a.astype::<i32>()?.to_ndarray()?;
    assert_eq!(ints, host.mapv(|z| z.to_c64().re as i32));
    let mut with_zeros = host.clone();
    with_zeros[[0, 0]] = T::from_c64(Complex64::new(0.0, 0.0));
    with_zeros[[0, 1]] = T::from_c64(Complex64::new(0.0, 1.0));
    with_zeros[[0, 2]] = T::from_c64(Complex64::new(-0.0, 0.0));
    let b = DeviceArray::from_ndarray(ctx, &with_zeros)?
        .astype::<Bool>()?
        .to_ndarray()?;
    assert_eq!(
        b,
        with_zeros.mapv(|z| Bool::from(z.to_c64() != Complex64::new(0.0, 0.0)))
    );
    let reals = Array1::from_iter((0..200).map(|i| (i as f32 - 100.0) * 0.37));
    let from_f32 = DeviceArray::from_ndarray(ctx, &reals)?.astype::<T>()?.to_vec()?;
    let want: Vec<Complex64> = reals.iter().map(|&r| Complex64::new(f64::from(r), 0.0)).collect();
    check("f32 -> complex", &from_f32, &want, 0.0);
    let ints = Array1::from_iter((0..200).map(|i| i as i64 - 100));
    let from_i64 = DeviceArray::from_ndarray(ctx, &ints)?.astype::<T>()?.to_vec()?;
    let want: Vec<Complex64> = ints.iter().map(|&r| Complex64::new(r as f64, 0.0)).collect();
    check("i64 -> complex", &from_i64, &want, 0.0);
    let flags = Array1::from_iter((0..10).map(|i| Bool::from(i % 3 == 0)));
    let from_bool = DeviceArray::from_ndarray(ctx, &flags)?.astype::<T>()?.to_vec()?;
    let want: Vec<Complex64> = flags
        .iter()
        .map(|&f| Complex64::new(if f.get() { 1.0 } else { 0.0 }, 0.0))
        .collect();
    check("bool -> complex", &from_bool, &want, 0.0);
    let halves = Array1::from_iter((0..10).map(|i| gpu_runtime::half::f16::from_f32(i as f32 * 0.5)));
    let from_f16 = DeviceArray::from_ndarray(ctx, &halves)?.astype::<T>()?.to_vec()?;
    let want: Vec<Complex64> = halves
        .iter()
        .map(|&h| Complex64::new(f64::from(h), 0.0))
        .collect();
    check("f16 -> complex", &from_f16, &want, 0.0);

    // == and != (NaN parts are unequal, -0 equals 0).
    let mut other = host.clone();
    for (k, z) in other.iter_mut().enumerate() {
        if k % 5 == 0 {
            *z = T::from_c64(z.to_c64() + Complex64::new(0.0, 1.0));
        }
    }
    other[[1, 1]] = T::from_c64(Complex64::new(f64::NAN, 0.0));
    let mut host_nan = host.clone();
    host_nan[[1, 1]] = other[[1, 1]];
    let (da, db) = (
        DeviceArray::from_ndarray(ctx, &host_nan)?,
        DeviceArray::from_ndarray(ctx, &other)?,
    );
    let eq = da.eq(&db)?.to_vec()?;
    let ne = da.ne(&db)?.to_vec()?;
    for (k, (x, y)) in host_nan.iter().zip(other.iter()).enumerate() {
        let same = x.to_c64() == y.to_c64();
        assert_eq!(
            (eq[k].get(), ne[k].get()),
            (same, !same),
            "element {k}: {x:?} vs {y:?}"
        );
    }
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn complex_arrays_copy_convert_and_compare() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    copies_and_conversions::<Complex32>(&ctx, 1)?;
    copies_and_conversions::<Complex64>(&ctx, 2)
}

fn arithmetic<T: C>(ctx: &Context, seed: u64) -> gpu_runtime::Result<()> {
    let mut rng = Rng::new(seed);
    let (n, m) = (33, 65);
    let xs = random::<T>(&mut rng, n * m, 4.0);
    let ys = random::<T>(&mut rng, n * m, 4.0);
    let row = random::<T>(&mut rng, m, 4.0);
    let hx = Array2::from_shape_vec((n, m), xs).unwrap();
    let hy = Array2::from_shape_vec((n, m), ys).unwrap();
    let (x, y) = (
        DeviceArray::from_ndarray(ctx, &hx)?,
        DeviceArray::from_ndarray(ctx, &hy)?,
    );
    let r = DeviceArray::from_ndarray(ctx, &Array1::from(row.clone()))?;
    let k = T::from_c64(Complex64::new(0.75, -1.25));
    let kc = k.to_c64();
    let host = |f: &dyn Fn(Complex64, Complex64, Complex64) -> Complex64| -> Vec<Complex64> {
        hx.indexed_iter()
            .map(|((i, j), a)| f(a.to_c64(), hy[[i, j]].to_c64(), row[j].to_c64()))
            .collect()
    };
    let got = (&x + &y * k).eval()?.to_vec()?;
    check("x + y * k", &got, &host(&|a, b, _| a + b * kc), T::TOL * 10.0);
    let got = (&x - &y).eval()?.to_vec()?;
    check("x - y", &got, &host(&|a, b, _| a - b), T::TOL);
    let got = (&x * &y).eval()?.to_vec()?;
    check("x * y", &got, &host(&|a, b, _| a * b), T::TOL * 10.0);
    let got = (&x / &y).eval()?.to_vec()?;
    check("x / y", &got, &host(&|a, b, _| a / b), T::TOL * 10.0);
    let got = (Operand::into_expr(k) / &x).eval()?.to_vec()?;
    check("k / x", &got, &host(&|a, _, _| kc / a), T::TOL * 10.0);
    let got = (-&x).eval()?.to_vec()?;
    check("-x", &got, &host(&|a, _, _| -a), 0.0);
    // Broadcasting: (n, m) with (m,), and a reversed, stepped view.
    let got = (&x * &r).eval()?.to_vec()?;
    check("x * row", &got, &host(&|a, _, c| a * c), T::TOL * 10.0);
    let xv = x.slice(s![..;-2, ..;3])?;
    let got = (&xv + k).eval()?.to_ndarray()?;
    let want = hx.slice(s![..;-2, ..;3]).mapv(|a| a.to_c64() + kc);
    check(
        "view + k",
        &got.iter().copied().collect::<Vec<_>>(),
        &want.iter().copied().collect::<Vec<_>>(),
        T::TOL,
    );
    // In place, and where_.
    let mut z = x.to_contiguous()?;
    z.mul_assign(&y)?;
    check("x *= y", &z.to_vec()?, &host(&|a, b, _| a * b), T::TOL * 10.0);
    // The data has no NaN: every element equals itself.
    let cond = x.eq(&x)?;
    let got = math::where_(&cond, &x, &y)?.to_vec()?;
    check("where", &got, &host(&|a, _, _| a), 0.0);
    let picks = DeviceArray::from_ndarray(
        ctx,
        &Array2::from_shape_fn((n, m), |(i, j)| Bool::from((i + j) % 2 == 0)),
    )?;
    let got = Expr::where_(&picks, &x, k).eval()?.to_ndarray()?;
    for (idx, v) in got.indexed_iter() {
        let (i, j) = (idx[0], idx[1]);
        let want = if (i + j) % 2 == 0 { hx[[i, j]] } else { k };
        assert_eq!(*v, want, "where at ({i}, {j})");
    }
    // pow with a complex exponent.
    let got = math::pow(&x, &y)?.to_vec()?;
    check("pow", &got, &host(&|a, b, _| a.powc(b)), T::TOL * 1e3);
    // 0-d and empty operands.
    let zero_d = DeviceArray::from_ndarray(ctx, &arr0(k).into_dyn())?;
    let got = (&x * &zero_d).eval()?.to_vec()?;
    check("x * 0-d", &got, &host(&|a, _, _| a * kc), T::TOL * 10.0);
    let empty = DeviceArray::<T, _>::zeros(ctx, IxDyn(&[0, 3]))?;
    assert_eq!((&empty + k).eval()?.shape(), &[0, 3]);
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn complex_arithmetic_matches_num_complex() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    arithmetic::<Complex32>(&ctx, 3)?;
    arithmetic::<Complex64>(&ctx, 4)
}

/// Inputs for the math functions: random values of modest magnitude (so that the references
/// in `f64` are meaningful for `Complex32` too), and parts of ±0 on both axes.
/// Real with complex operands by NumPy 2's promotion (`promote::add` and the others): the
/// real operand converts to the complex type of the table (`f32` with `Complex64` is
/// `Complex64`, `i32` with `Complex32` is `Complex64`, `f16` with `Complex32` is `Complex32`),
/// on views that are reversed and stepped.
#[test]
#[ignore = "needs a CUDA GPU"]
fn real_and_complex_operands_promote_as_numpy_2() -> gpu_runtime::Result<()> {
    use gpu_runtime::gpuarray::promote;
    use gpu_runtime::half::f16;
    let ctx = Context::default()?;
    let mut rng = Rng::new(31);
    let n = 3001;
    let z32: Vec<Complex32> = random(&mut rng, n, 4.0);
    let z64: Vec<Complex64> = random(&mut rng, n, 4.0);
    let r32: Vec<f32> = (0..n).map(|_| (rng.f64() * 8.0) as f32).collect();
    let i32s: Vec<i32> = (0..n).map(|_| (rng.next_u64() % 2001) as i32 - 1000).collect();
    let h: Vec<f16> = (0..n).map(|_| f16::from_f64(rng.f64() * 4.0)).collect();
    fn up<T: gpu_runtime::gpuarray::Element>(ctx: &Context, v: &[T]) -> gpu_runtime::Result<DeviceArray<T>> {
        DeviceArray::from_ndarray(ctx, &Array1::from_vec(v.to_vec()).into_dyn())
    }
    let (dz32, dz64, dr32) = (up(&ctx, &z32)?, up(&ctx, &z64)?, up(&ctx, &r32)?);
    let (di32, dh) = (up(&ctx, &i32s)?, up(&ctx, &h)?);

    // f32 + Complex64 -> Complex64, the real operand reversed.
    let got: DeviceArray<Complex64> = promote::add(&dr32.slice(s![..;-1])?, &dz64).eval()?;
    let want: Vec<Complex64> = r32
        .iter()
        .rev()
        .zip(&z64)
        .map(|(r, z)| Complex64::new(f64::from(*r), 0.0) + z)
        .collect();
    check("f32 + c64", &got.to_vec()?, &want, 1e-15);
    // Complex32 * i32 -> Complex64 (the integer needs f64 parts).
    let got: DeviceArray<Complex64> = promote::mul(&dz32, &di32).eval()?;
    let want: Vec<Complex64> = z32
        .iter()
        .zip(&i32s)
        .map(|(z, i)| z.to_c64() * f64::from(*i))
        .collect();
    check("c32 * i32", &got.to_vec()?, &want, 1e-15);
    // f16 - Complex32 -> Complex32, every other element.
    let got: DeviceArray<Complex32> = promote::sub(&dh.slice(s![..;2])?, &dz32.slice(s![..;2])?).eval()?;
    let want: Vec<Complex64> = h
        .iter()
        .zip(&z32)
        .step_by(2)
        .map(|(h, z)| Complex64::new(h.to_f64(), 0.0) - z.to_c64())
        .collect();
    check("f16 - c32", &got.to_vec()?, &want, Complex32::TOL);
    // Complex64 / f16 -> Complex64.
    let got: DeviceArray<Complex64> = promote::div(&dz64, &dh).eval()?;
    let want: Vec<Complex64> = z64.iter().zip(&h).map(|(z, h)| z / h.to_f64()).collect();
    check("c64 / f16", &got.to_vec()?, &want, 1e-14);
    Ok(())
}

fn math_inputs<T: C>(rng: &mut Rng) -> Vec<T> {
    let mut v = random::<T>(rng, 2000, 3.0);
    for (re, im) in [
        (0.0, 0.0),
        (-0.0, 0.0),
        (1.0, 0.0),
        (-1.0, 0.0),
        (0.0, 1.0),
        (-2.0, -0.0),
        (0.5, 2.5),
    ] {
        v.push(T::from_c64(Complex64::new(re, im)));
    }
    v
}

fn math_functions<T: C>(ctx: &Context, seed: u64) -> gpu_runtime::Result<()>
where
    <T as gpu_runtime::gpuarray::math::ComplexElement>::Part: Into<f64>,
{
    let mut rng = Rng::new(seed);
    let xs = math_inputs::<T>(&mut rng);
    let x = DeviceArray::from_ndarray(ctx, &Array1::from(xs.clone()))?;
    let host =
        |f: fn(Complex64) -> Complex64| -> Vec<Complex64> { xs.iter().map(|z| f(z.to_c64())).collect() };
    // Relative tolerances: the header's formulas are a few roundings each.
    let tol = T::TOL * 100.0;
    check("exp", &math::exp(&x)?.to_vec()?, &host(|z| z.exp()), tol);
    let finite_log = |f: fn(Complex64) -> Complex64| -> Vec<Complex64> {
        xs.iter()
            .map(|z| {
                let z = z.to_c64();
                if z == Complex64::new(0.0, 0.0) {
                    // log(±0 + ±0i) = -inf + i arg: num_complex agrees, via ln(0) = -inf.
                    Complex64::new(f64::NEG_INFINITY, z.im.atan2(z.re))
                } else {
                    f(z)
                }
            })
            .collect()
    };
    let logs = math::log(&x)?.to_vec()?;
    check("log", &logs, &finite_log(|z| z.ln()), tol);
    let log10s = math::log10(&x)?.to_vec()?;
    let want10: Vec<Complex64> = finite_log(|z| z.ln())
        .iter()
        .map(|l| Complex64::new(l.re / std::f64::consts::LN_10, l.im / std::f64::consts::LN_10))
        .collect();
    check("log10", &log10s, &want10, tol);
    check("sqrt", &math::sqrt(&x)?.to_vec()?, &host(|z| z.sqrt()), tol);
    check("sin", &math::sin(&x)?.to_vec()?, &host(|z| z.sin()), tol);
    check("cos", &math::cos(&x)?.to_vec()?, &host(|z| z.cos()), tol);
    check("tan", &math::tan(&x)?.to_vec()?, &host(|z| z.tan()), tol);
    check("sinh", &math::sinh(&x)?.to_vec()?, &host(|z| z.sinh()), tol);
    check("cosh", &math::cosh(&x)?.to_vec()?, &host(|z| z.cosh()), tol);
    check("tanh", &math::tanh(&x)?.to_vec()?, &host(|z| z.tanh()), tol);
    check("conj", &math::conj(&x)?.to_vec()?, &host(|z| z.conj()), 0.0);
    let parts = |v: Vec<<T as gpu_runtime::gpuarray::math::ComplexElement>::Part>| -> Vec<f64> {
        v.into_iter().map(Into::into).collect()
    };
    let want_re: Vec<f64> = xs.iter().map(|z| z.to_c64().re).collect();
    let want_im: Vec<f64> = xs.iter().map(|z| z.to_c64().im).collect();
    check_real("real", &parts(math::real(&x)?.to_vec()?), &want_re, 0.0);
    check_real("imag", &parts(math::imag(&x)?.to_vec()?), &want_im, 0.0);
    let want: Vec<f64> = xs.iter().map(|z| z.to_c64().norm()).collect();
    check_real("abs", &parts(math::complex_abs(&x)?.to_vec()?), &want, tol);
    let want: Vec<f64> = xs.iter().map(|z| z.to_c64().arg()).collect();
    check_real("angle", &parts(math::angle(&x)?.to_vec()?), &want, tol);
    // Fused: one kernel of several functions, through a reversed view.
    let xr = x.slice(s![..;-1])?;
    let got = (xr.expr().exp() * xr.expr().conj()).sqrt().eval()?.to_vec()?;
    let want: Vec<Complex64> = xs
        .iter()
        .rev()
        .map(|z| (z.to_c64().exp() * z.to_c64().conj()).sqrt())
        .collect();
    check("sqrt(exp(x) * conj(x))", &got, &want, tol * 10.0);

    // NaN and infinite parts where NumPy's result is defined (C99 Annex G).
    let inf = f64::INFINITY;
    let special = [
        Complex64::new(inf, f64::NAN),
        Complex64::new(f64::NAN, -inf),
        Complex64::new(inf, 0.0),
        Complex64::new(-inf, 0.0),
        Complex64::new(-4.0, 0.0),
        Complex64::new(-4.0, -0.0),
        Complex64::new(0.0, 0.0),
    ];
    let d = DeviceArray::from_ndarray(ctx, &Array1::from_iter(special.iter().map(|&z| T::from_c64(z))))?;
    let abs = parts(math::complex_abs(&d)?.to_vec()?);
    check_real("abs of special", &abs[..4], &[inf, inf, inf, inf], 0.0);
    let exp = math::exp(&d)?.to_vec()?;
    check(
        "exp(inf + 0i)",
        &exp[2..4],
        &[Complex64::new(inf, 0.0), Complex64::new(0.0, 0.0)],
        0.0,
    );
    let sqrt = math::sqrt(&d)?.to_vec()?;
    check(
        "sqrt(-4 ± 0i)",
        &sqrt[4..7],
        &[
            Complex64::new(0.0, 2.0),
            Complex64::new(0.0, -2.0),
            Complex64::new(0.0, 0.0),
        ],
        T::TOL,
    );
    assert!(
        sqrt[5].to_c64().im.is_sign_negative(),
        "sqrt(-4 - 0i) is on the lower side"
    );
    // isnan/isinf: either part; isfinite: both parts (inf + NaN i is NaN and infinite).
    let flags = |v: Vec<Bool>| v.iter().map(|b| b.get()).collect::<Vec<_>>();
    assert_eq!(
        flags(math::isnan(&d)?.to_vec()?),
        [true, true, false, false, false, false, false]
    );
    assert_eq!(
        flags(math::isinf(&d)?.to_vec()?),
        [true, true, true, true, false, false, false]
    );
    assert_eq!(
        flags(math::isfinite(&d)?.to_vec()?),
        [false, false, false, false, true, true, true]
    );
    let log = math::log(&d)?.to_vec()?;
    check("log(0)", &log[6..7], &[Complex64::new(-inf, 0.0)], 0.0);
    check(
        "log(-4 ± 0i)",
        &log[4..6],
        &[
            Complex64::new(4f64.ln(), std::f64::consts::PI),
            Complex64::new(4f64.ln(), -std::f64::consts::PI),
        ],
        T::TOL,
    );
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn complex_math_matches_num_complex() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    math_functions::<Complex32>(&ctx, 5)?;
    math_functions::<Complex64>(&ctx, 6)
}

fn reductions<T: C>(ctx: &Context, seed: u64) -> gpu_runtime::Result<()> {
    let mut rng = Rng::new(seed);
    let (n, m) = (129, 70);
    let host = Array2::from_shape_vec((n, m), random::<T>(&mut rng, n * m, 1.0)).unwrap();
    let a = DeviceArray::from_ndarray(ctx, &host)?;
    let c = host.mapv(|z| z.to_c64());
    let tol = T::TOL * 1e3;
    let sum: Complex64 = c.iter().sum();
    check("sum", &[a.sum()?], &[sum], tol);
    check("mean", &[a.mean_as::<T>()?], &[sum / (n * m) as f64], tol);
    check(
        "mean as Complex64",
        &[a.mean_as::<Complex64>()?],
        &[sum / (n * m) as f64],
        tol,
    );
    for axis in 0..2 {
        let got = a.sum_axis(axis)?.to_vec()?;
        let want: Vec<Complex64> = c.sum_axis(Axis(axis)).to_vec();
        check(&format!("sum_axis({axis})"), &got, &want, tol);
        let got = a.mean_axis_as::<T>(axis)?.to_vec()?;
        let count = c.len_of(Axis(axis)) as f64;
        let want: Vec<Complex64> = c.sum_axis(Axis(axis)).iter().map(|z| z / count).collect();
        check(&format!("mean_axis({axis})"), &got, &want, tol);
    }
    // A product of values near the unit circle, so that it stays finite.
    let units: Vec<T> = (0..300)
        .map(|k| T::from_c64(Complex64::from_polar(1.0 + 1e-3 * (k % 7) as f64, 0.1 * k as f64)))
        .collect();
    let u = DeviceArray::from_ndarray(ctx, &Array1::from(units.clone()))?;
    let prod: Complex64 = units.iter().map(|z| z.to_c64()).product();
    check("prod", &[u.prod()?], &[prod], tol);
    let got = a.prod_axis(1)?.to_vec()?;
    let want: Vec<Complex64> = c.map_axis(Axis(1), |r| r.iter().product()).to_vec();
    check("prod_axis(1)", &got, &want, tol);
    // Over a stepped, reversed view; empty arrays give the neutral elements.
    let v = a.slice(s![..;-3, 1..;2])?;
    let want: Complex64 = c.slice(s![..;-3, 1..;2]).iter().sum();
    check("sum of a view", &[v.sum()?], &[want], tol);
    let empty = DeviceArray::<T, _>::zeros(ctx, (0, 5))?;
    check("empty sum", &[empty.sum()?], &[Complex64::new(0.0, 0.0)], 0.0);
    check("empty prod", &[empty.prod()?], &[Complex64::new(1.0, 0.0)], 0.0);
    // vdot conjugates the first operand; dot does not.
    let x = Array1::from(random::<T>(&mut rng, 1000, 1.0));
    let y = Array1::from(random::<T>(&mut rng, 1000, 1.0));
    let (dx, dy) = (
        DeviceArray::from_ndarray(ctx, &x)?,
        DeviceArray::from_ndarray(ctx, &y)?,
    );
    let vdot: Complex64 = x
        .iter()
        .zip(&y)
        .map(|(a, b)| a.to_c64().conj() * b.to_c64())
        .sum();
    let dot: Complex64 = x.iter().zip(&y).map(|(a, b)| a.to_c64() * b.to_c64()).sum();
    check("vdot", &[dx.vdot(&dy)?], &[vdot], tol);
    check("dot", &[dx.dot(&dy)?], &[dot], tol);
    // any/all: a complex number is true when either part is nonzero.
    let zi = DeviceArray::from_ndarray(
        ctx,
        &Array1::from(vec![
            T::from_c64(Complex64::new(0.0, 1.0)),
            T::from_c64(Complex64::new(0.0, 0.0)),
        ]),
    )?;
    assert!(math::any(&zi)? && !math::all(&zi)?);
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn complex_reductions_match_num_complex() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    reductions::<Complex32>(&ctx, 7)?;
    reductions::<Complex64>(&ctx, 8)
}

/// The complex normal fill: `Complex64` element `i` from the Philox block `i` exactly as the
/// module docs define it (Box-Muller on the `f64` stream, times `sqrt(1/2)`), and the moments
/// of `Complex32`'s (each part of variance 1/2, independent).
#[test]
#[ignore = "needs a CUDA GPU"]
fn complex_normal_fill_is_the_documented_stream() -> gpu_runtime::Result<()> {
    use gpu_runtime::__testing::philox4x32_10;
    let ctx = Context::default()?;
    let seed = 0x1234_5678_9abc_def0u64;
    let n = 5000;
    let mean = Complex64::new(1.0, -2.0);
    let std = Complex64::new(0.5, 0.5);
    let got = DeviceArray::<Complex64, _>::random_normal(&ctx, n, seed, mean, std)?.to_vec()?;
    let s = 1.110_223_024_625_156_5e-16;
    let want: Vec<Complex64> = (0..n as u64)
        .map(|g| {
            let r = philox4x32_10(
                [g as u32, (g >> 32) as u32, 0, 0],
                [seed as u32, (seed >> 32) as u32],
            );
            let u1 = ((((u64::from(r[0]) << 32) | u64::from(r[1])) >> 11) + 1) as f64 * s;
            let u2 = (((u64::from(r[2]) << 32) | u64::from(r[3])) >> 11) as f64 * s;
            let q = (-2.0 * u1.ln()).sqrt();
            let (sn, cs) = (std::f64::consts::PI * 2.0 * u2).sin_cos();
            let h = std::f64::consts::FRAC_1_SQRT_2;
            mean + std * Complex64::new(h * q * cs, h * q * sn)
        })
        .collect();
    check("complex normal", &got, &want, 1e-12);

    let z = DeviceArray::<Complex32, _>::random_normal(
        &ctx,
        (200, 500),
        7,
        Complex32::new(0.0, 0.0),
        Complex32::new(1.0, 0.0),
    )?
    .to_vec()?;
    let count = z.len() as f64;
    let (mut mr, mut mi, mut vr, mut vi, mut cov) = (0.0, 0.0, 0.0, 0.0, 0.0);
    for w in &z {
        let (r, i) = (f64::from(w.re), f64::from(w.im));
        mr += r;
        mi += i;
        vr += r * r;
        vi += i * i;
        cov += r * i;
    }
    let (mr, mi, vr, vi, cov) = (mr / count, mi / count, vr / count, vi / count, cov / count);
    // 10^5 draws: the standard errors are about 0.002 (means, covariance) and 0.0022 (variances).
    assert!(mr.abs() < 0.01 && mi.abs() < 0.01, "means {mr} {mi}");
    assert!(
        (vr - 0.5).abs() < 0.012 && (vi - 0.5).abs() < 0.012,
        "variances {vr} {vi}"
    );
    assert!(cov.abs() < 0.01, "covariance {cov}");
    // NumPy draws no complex uniforms: a typed error.
    let mut u = DeviceArray::<Complex32, _>::zeros(&ctx, 4)?;
    assert!(u.fill_uniform(1).is_err());
    Ok(())
}

/// What complex numbers do not define is a typed error when evaluated, never a kernel that
/// computes garbage.
#[test]
#[ignore = "needs a CUDA GPU"]
fn undefined_complex_operations_are_errors() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let a = DeviceArray::from_ndarray(&ctx, &ArrayD::from_elem(IxDyn(&[4]), Complex32::new(1.0, 2.0)))?;
    assert!(a.gt(&a).is_err());
    assert!(a.rem(&a).is_err());
    assert!(math::maximum(&a, &a).is_err());
    assert!(math::abs(&a).is_err());
    // `max`/`min`/`ptp` are lexicographic (array_complex_reduce.rs); `argmax` is refused.
    assert!(a.argmax().is_err());
    // `mean`, `var` and `std` need a `MeanType` (their result type), which complex elements
    // have not: a compile error; `mean_as::<Complex64>()` is the complex mean.
    let _: Complex<f32> = a.sum()?;
    Ok(())
}

/// `cumsum` and `cumprod` of complex arrays (flattened, exclusive, along an axis), across the
/// look-back's tile boundaries (2048 elements a tile for `Complex64`, 4096 for `Complex32`),
/// against running sums and products on the host.
#[test]
#[ignore = "needs a CUDA GPU"]
fn complex_scans_match_the_host() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(77);
    for n in [0usize, 1, 2047, 2049, 4095, 4097, 3 * 4096 + 5, 100_003] {
        let h32: Vec<Complex32> = (0..n)
            .map(|_| Complex32::new(rng.f32() - 0.5, rng.f32() - 0.5))
            .collect();
        let h64: Vec<Complex64> = h32
            .iter()
            .map(|z| Complex64::new(z.re as f64, z.im as f64))
            .collect();
        let d32 =
            DeviceArray::from_ndarray(&ctx, &ArrayD::from_shape_vec(IxDyn(&[n]), h32.clone()).unwrap())?;
        let d64 =
            DeviceArray::from_ndarray(&ctx, &ArrayD::from_shape_vec(IxDyn(&[n]), h64.clone()).unwrap())?;
        let mut acc = Complex64::new(0.0, 0.0);
        let want: Vec<Complex64> = h64
            .iter()
            .map(|&z| {
                acc += z;
                acc
            })
            .collect();
        let got64 = d64.cumsum()?.to_vec()?;
        let got32 = d32.cumsum()?.to_vec()?;
        // Rounding grows with the magnitudes summed (the parts drift: `f32()` is in [-1, 1)).
        let mut mass = 0.0f64;
        for k in 0..n {
            mass += h64[k].norm();
            assert!(
                (got64[k] - want[k]).norm() <= 1e-13 * (1.0 + mass),
                "Complex64 n = {n} at {k}: {} vs {}",
                got64[k],
                want[k]
            );
            let g = Complex64::new(got32[k].re as f64, got32[k].im as f64);
            assert!(
                (g - want[k]).norm() <= 1e-6 * (1.0 + mass),
                "Complex32 n = {n} at {k}: {g} vs {}",
                want[k]
            );
        }
        let excl = d64.cumsum_exclusive()?.to_vec()?;
        for k in 0..n {
            let w = if k == 0 {
                Complex64::new(0.0, 0.0)
            } else {
                want[k - 1]
            };
            assert!(
                (excl[k] - w).norm() <= 1e-13 * (1.0 + mass),
                "exclusive n = {n} at {k}"
            );
        }
        // Products of unit-magnitude numbers stay on the unit circle.
        let units: Vec<Complex64> = (0..n.min(5000))
            .map(|_| Complex64::from_polar(1.0, rng.f32() as f64 * 6.0))
            .collect();
        let du = DeviceArray::from_ndarray(
            &ctx,
            &ArrayD::from_shape_vec(IxDyn(&[units.len()]), units.clone()).unwrap(),
        )?;
        let mut p = Complex64::new(1.0, 0.0);
        let gotp = du.cumprod()?.to_vec()?;
        for (k, &z) in units.iter().enumerate() {
            p *= z;
            assert!((gotp[k] - p).norm() <= 1e-9, "cumprod n = {n} at {k}");
        }
    }
    // Along an axis of a 2-D array.
    let (r, c) = (37usize, 5000usize);
    let h: Vec<Complex64> = (0..r * c)
        .map(|_| Complex64::new(rng.f32() as f64, rng.f32() as f64 - 0.5))
        .collect();
    let d = DeviceArray::from_ndarray(&ctx, &ArrayD::from_shape_vec(IxDyn(&[r, c]), h.clone()).unwrap())?;
    for axis in 0..2 {
        let got = d.cumsum_axis(axis)?.to_vec()?;
        for i in 0..r {
            for j in 0..c {
                let mut want = Complex64::new(0.0, 0.0);
                if axis == 0 {
                    for ii in 0..=i {
                        want += h[ii * c + j];
                    }
                } else {
                    for jj in 0..=j {
                        want += h[i * c + jj];
                    }
                }
                assert!((got[i * c + j] - want).norm() <= 1e-9, "axis {axis} at {i},{j}");
            }
        }
    }
    Ok(())
}
