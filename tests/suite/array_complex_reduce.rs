//! Complex `max`/`min`/`ptp` (NumPy's lexicographic order, NaN propagating), `complex_var`/
//! `complex_std` (real: the mean of `|x - mean|²`), and `expm1`/`exp2`/`log2`/`log1p` of
//! complex arrays, on a GPU against host references on seeded random data: whole arrays,
//! along each axis, transposed and stepped views, 0-d, and NaN elements.

use gpu_runtime::gpuarray::{math, DeviceArray};
use gpu_runtime::ndarray::{s, Array2, ArrayD, Axis, IxDyn};
use gpu_runtime::types::{Complex32, Complex64};
use gpu_runtime::Context;
use gpu_suite::Rng;

/// The complex types under test and their host conversions.
trait C: gpu_runtime::gpuarray::math::ComplexElement + std::fmt::Debug + Copy + PartialEq {
    fn from_c64(z: Complex64) -> Self;
    fn to_c64(self) -> Complex64;
    fn sub(self, o: Self) -> Self;
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
    fn sub(self, o: Self) -> Self {
        self - o
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
    fn sub(self, o: Self) -> Self {
        self - o
    }
    const TOL: f64 = 1e-12;
}

/// Random elements whose real parts repeat (one of 8 values), so that the imaginary part
/// breaks many ties.
fn random<T: C>(rng: &mut Rng, n: usize) -> Vec<T> {
    (0..n)
        .map(|_| {
            let re = ((rng.f64() * 8.0).floor() - 4.0) / 2.0;
            T::from_c64(Complex64::new(re, rng.f64() * 4.0 - 2.0))
        })
        .collect()
}

fn is_nan(z: Complex64) -> bool {
    z.re.is_nan() || z.im.is_nan()
}

/// NumPy's `maximum` of complex numbers: the first if it has a NaN part or is greater.
fn lex_max(a: Complex64, b: Complex64) -> Complex64 {
    if is_nan(a) || a.re > b.re || (a.re == b.re && a.im > b.im) {
        a
    } else {
        b
    }
}

fn lex_min(a: Complex64, b: Complex64) -> Complex64 {
    if is_nan(a) || a.re < b.re || (a.re == b.re && a.im < b.im) {
        a
    } else {
        b
    }
}

fn fold(v: &[Complex64], f: fn(Complex64, Complex64) -> Complex64) -> Complex64 {
    v.iter().copied().reduce(f).unwrap()
}

/// The population-or-sample variance of complex numbers on the host, in `f64`.
fn host_var(v: &[Complex64], ddof: usize) -> f64 {
    let n = v.len() as f64;
    let mean = v.iter().fold(Complex64::new(0.0, 0.0), |a, &b| a + b) / n;
    v.iter().map(|&z| (z - mean).norm_sqr()).sum::<f64>() / (n - ddof as f64)
}

fn close(what: &str, got: f64, want: f64, tol: f64) {
    assert!(
        (got - want).abs() <= tol * want.abs().max(1e-300) + tol * 1e-3,
        "{what}: {got}, want {want}"
    );
}

fn ordered_of<T: C>(ctx: &Context, seed: u64) -> gpu_runtime::Result<()> {
    let mut rng = Rng::new(seed);
    let (r, c) = (37, 530);
    let host: Vec<T> = random(&mut rng, r * c);
    let h64: Vec<Complex64> = host.iter().map(|z| z.to_c64()).collect();
    let a = DeviceArray::from_ndarray(ctx, &Array2::from_shape_vec((r, c), host.clone()).unwrap())?;
    let want_max = fold(&h64, lex_max);
    let want_min = fold(&h64, lex_min);
    assert_eq!(a.max()?.to_c64(), want_max, "max");
    assert_eq!(a.min()?.to_c64(), want_min, "min");
    // ptp in the element type: max - min rounded as the device rounds it.
    assert_eq!(a.ptp()?, T::from_c64(want_max).sub(T::from_c64(want_min)), "ptp");
    let h2 = Array2::from_shape_vec((r, c), h64.clone()).unwrap();
    for axis in [0, 1] {
        let lanes: Vec<Vec<Complex64>> = h2.axis_iter(Axis(1 - axis)).map(|l| l.to_vec()).collect();
        let got_max = a.max_axis(axis)?.to_vec()?;
        let got_min = a.min_axis(axis)?.to_vec()?;
        let got_ptp = a.ptp_axis(axis)?.to_vec()?;
        for (k, lane) in lanes.iter().enumerate() {
            let (mx, mn) = (fold(lane, lex_max), fold(lane, lex_min));
            assert_eq!(got_max[k].to_c64(), mx, "max_axis({axis})[{k}]");
            assert_eq!(got_min[k].to_c64(), mn, "min_axis({axis})[{k}]");
            assert_eq!(
                got_ptp[k],
                T::from_c64(mx).sub(T::from_c64(mn)),
                "ptp_axis({axis})[{k}]"
            );
        }
    }
    // Transposed and stepped views.
    assert_eq!(a.t().max()?.to_c64(), want_max, "max of a.t()");
    let stepped: Vec<Complex64> = h2.slice(s![..;3, ..;-2]).iter().copied().collect();
    assert_eq!(
        a.slice(s![..;3, ..;-2])?.min()?.to_c64(),
        fold(&stepped, lex_min),
        "stepped min"
    );
    // 0-d.
    let z = DeviceArray::from_ndarray(ctx, &ArrayD::from_elem(IxDyn(&[]), host[3]))?;
    assert_eq!(z.max()?, host[3]);
    // A NaN element wins both.
    let mut with_nan = host.clone();
    with_nan[1234] = T::from_c64(Complex64::new(1.0, f64::NAN));
    let n = DeviceArray::from_ndarray(ctx, &Array2::from_shape_vec((r, c), with_nan).unwrap())?;
    assert!(is_nan(n.max()?.to_c64()) && is_nan(n.min()?.to_c64()));
    // Empty: NumPy's error.
    let e = DeviceArray::from_ndarray(ctx, &ArrayD::<T>::from_shape_vec(IxDyn(&[0]), vec![]).unwrap())?;
    assert!(e.max().is_err());
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn complex_max_min_ptp_are_lexicographic() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    ordered_of::<Complex32>(&ctx, 11)?;
    ordered_of::<Complex64>(&ctx, 12)
}

fn var_of<T: C>(ctx: &Context, seed: u64) -> gpu_runtime::Result<()>
where
    T::Part: Into<f64>,
{
    let mut rng = Rng::new(seed);
    let (r, c) = (41, 300);
    // Offset from 0 so that a one-pass E[x²] - E[x]² would lose digits.
    let host: Vec<T> = (0..r * c)
        .map(|_| T::from_c64(Complex64::new(100.0 + rng.f64(), -50.0 + rng.f64() * 3.0)))
        .collect();
    let h64: Vec<Complex64> = host.iter().map(|z| z.to_c64()).collect();
    let a = DeviceArray::from_ndarray(ctx, &Array2::from_shape_vec((r, c), host).unwrap())?;
    for ddof in [0u64, 1] {
        let want = host_var(&h64, ddof as usize);
        close("var", a.complex_var(ddof)?.into(), want, T::TOL * 10.0);
        close("std", a.complex_std(ddof)?.into(), want.sqrt(), T::TOL * 10.0);
    }
    let h2 = Array2::from_shape_vec((r, c), h64).unwrap();
    for axis in [0, 1] {
        let got = a.complex_var_axis(axis, 1)?.to_vec()?;
        let got_std = a.t().complex_std_axis(1 - axis, 0)?.to_vec()?;
        for (k, lane) in h2.axis_iter(Axis(1 - axis)).enumerate() {
            let lane = lane.to_vec();
            close("var_axis", got[k].into(), host_var(&lane, 1), T::TOL * 10.0);
            close(
                "std_axis of a.t()",
                got_std[k].into(),
                host_var(&lane, 0).sqrt(),
                T::TOL * 10.0,
            );
        }
    }
    // One element: 0 (ddof 0), NaN (ddof 1); an empty array: NaN.
    let one = DeviceArray::from_ndarray(
        ctx,
        &ArrayD::from_elem(IxDyn(&[]), T::from_c64(Complex64::new(2.0, 3.0))),
    )?;
    assert_eq!(one.complex_var(0)?.into(), 0.0);
    assert!(one.complex_var(1)?.into().is_nan());
    let e = DeviceArray::from_ndarray(ctx, &ArrayD::<T>::from_shape_vec(IxDyn(&[0]), vec![]).unwrap())?;
    assert!(e.complex_var(0)?.into().is_nan());
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn complex_var_std_are_real_and_match_host() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    var_of::<Complex32>(&ctx, 21)?;
    var_of::<Complex64>(&ctx, 22)
}

/// Host references in `f64` by the textbook formulas (accurate near 0 where they must be).
fn host_fn(name: &str, z: Complex64) -> Complex64 {
    let (x, y) = (z.re, z.im);
    match name {
        "expm1" => {
            let s = (y / 2.0).sin();
            Complex64::new(x.exp_m1() * y.cos() - 2.0 * s * s, x.exp() * y.sin())
        }
        "exp2" => (z * std::f64::consts::LN_2).exp(),
        "log2" => z.ln() / std::f64::consts::LN_2,
        _ => {
            let re = if x.abs() < 0.5 && y.abs() < 0.5 {
                0.5 * (x * (2.0 + x) + y * y).ln_1p()
            } else {
                (1.0 + x).hypot(y).ln()
            };
            Complex64::new(re, y.atan2(1.0 + x))
        }
    }
}

fn funcs_of<T: C>(ctx: &Context, seed: u64) -> gpu_runtime::Result<()> {
    let mut rng = Rng::new(seed);
    let n = 4000;
    // Half near 0 (where expm1/log1p must not cancel), half over a wide range.
    let host: Vec<T> = (0..n)
        .map(|k| {
            let scale = if k % 2 == 0 { 1e-4 } else { 6.0 };
            T::from_c64(Complex64::new(
                (rng.f64() - 0.5) * scale,
                (rng.f64() - 0.5) * scale,
            ))
        })
        .collect();
    let a = DeviceArray::from_ndarray(
        ctx,
        &ArrayD::from_shape_vec(IxDyn(&[40, 100]), host.clone()).unwrap(),
    )?;
    let t = a.t();
    let host_t: Vec<T> = {
        let h = Array2::from_shape_vec((40, 100), host.clone()).unwrap();
        h.t().iter().copied().collect()
    };
    type F<T> = fn(&DeviceArray<T, IxDyn>) -> gpu_runtime::Result<DeviceArray<T, IxDyn>>;
    let fns: [(&str, F<T>); 4] = [
        ("expm1", |a| math::expm1(a)),
        ("exp2", |a| math::exp2(a)),
        ("log2", |a| math::log2(a)),
        ("log1p", |a| math::log1p(a)),
    ];
    for (name, f) in fns {
        for (what, got, inputs) in [
            ("", f(&a)?.to_vec()?, &host),
            (" of a.t()", f(&t.to_contiguous()?)?.to_vec()?, &host_t),
        ] {
            for (k, (&g, &x)) in got.iter().zip(inputs.iter()).enumerate() {
                let want = host_fn(name, x.to_c64());
                let err = (g.to_c64() - want).norm() / want.norm().max(1e-300);
                assert!(
                    err <= T::TOL * 4.0,
                    "{name}{what}({x:?}) [{k}]: {g:?}, want {want}"
                );
            }
        }
    }
    // Math of a real-imaginary-zero number stays exact in the imaginary part.
    let real = DeviceArray::from_ndarray(
        ctx,
        &ArrayD::from_elem(IxDyn(&[3]), T::from_c64(Complex64::new(0.5, 0.0))),
    )?;
    assert!(math::expm1(&real)?.to_vec()?.iter().all(|z| z.to_c64().im == 0.0));
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn complex_expm1_exp2_log2_log1p_match_host() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    funcs_of::<Complex32>(&ctx, 31)?;
    funcs_of::<Complex64>(&ctx, 32)
}
