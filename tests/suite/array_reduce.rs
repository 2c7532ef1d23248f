//! Reductions and scans on a GPU against references on the host, on random data: every
//! reduction over all axes and along each axis (with and without `keepdims`) of random 1-3-D
//! shapes (empty axes included) and 0-d arrays, in C and Fortran order and through transposed,
//! stepped and reversed views, for f32, f64, i32, u8 and i64; NaN cases; scans along each
//! axis at lengths around the block and tile sizes and past many concurrent tiles; a user
//! struct as a reduction's accumulator.

use gpu_runtime::gpuarray::{
    DeviceArray, Element, KernelArg, MeanType, ReduceAxis, ReductionKernel, ScanKernel,
};
use gpu_runtime::ndarray::{Array, ArrayD, Axis, IxDyn, ShapeBuilder, SliceInfo, SliceInfoElem};
use gpu_runtime::{ArrayShapeError, Context, DeviceRepr, Error};
use gpu_suite::Rng;

/// An element type under test: random values, the host's arithmetic as the device's (wrapping
/// for integers), and how close results must be.
trait Elem: Element + MeanType<Mean: Into<f64>> + PartialOrd + std::fmt::Debug {
    /// A random value; small for integers so that products stay meaningful.
    fn random(rng: &mut Rng) -> Self;
    fn add(self, other: Self) -> Self;
    fn mul(self, other: Self) -> Self;
    fn one() -> Self;
    /// `-self` (wrapping for integers), so that `a.add(b.neg())` is the device's `a - b`.
    fn neg(self) -> Self;
    fn f64(self) -> f64;
    fn is_nan(self) -> bool {
        false
    }
    /// A NaN of the type, for the float types.
    fn nan() -> Option<Self> {
        None
    }
    /// The longest product checked: signed overflow is undefined in C, so products of signed
    /// integers stay in range.
    const PROD_MAX_N: usize;
    /// Relative tolerance of a sum of `n` elements.
    fn tol(n: usize) -> f64;
}

macro_rules! int_elem {
    ($($t:ty => $range:expr, $prod:expr),*) => {$(
        impl Elem for $t {
            const PROD_MAX_N: usize = $prod;
            fn random(rng: &mut Rng) -> Self { (rng.next_u64() % $range) as $t }
            fn add(self, o: Self) -> Self { self.wrapping_add(o) }
            fn mul(self, o: Self) -> Self { self.wrapping_mul(o) }
            fn one() -> Self { 1 }
            fn neg(self) -> Self { self.wrapping_neg() }
            fn f64(self) -> f64 { self as f64 }
            fn tol(_: usize) -> f64 { 0.0 }
        }
    )*};
}
int_elem!(i32 => 7, 11, u8 => 4, 63, i64 => 1000, 6);

impl Elem for f32 {
    const PROD_MAX_N: usize = 63;
    fn random(rng: &mut Rng) -> Self {
        0.5 + rng.f32()
    }
    fn add(self, o: Self) -> Self {
        self + o
    }
    fn mul(self, o: Self) -> Self {
        self * o
    }
    fn one() -> Self {
        1.0
    }
    fn neg(self) -> Self {
        -self
    }
    fn f64(self) -> f64 {
        self as f64
    }
    fn is_nan(self) -> bool {
        f32::is_nan(self)
    }
    fn nan() -> Option<Self> {
        Some(f32::NAN)
    }
    fn tol(n: usize) -> f64 {
        1e-6 * (n as f64).sqrt().max(8.0)
    }
}

impl Elem for f64 {
    const PROD_MAX_N: usize = 63;
    fn random(rng: &mut Rng) -> Self {
        0.5 + rng.f64()
    }
    fn add(self, o: Self) -> Self {
        self + o
    }
    fn mul(self, o: Self) -> Self {
        self * o
    }
    fn one() -> Self {
        1.0
    }
    fn neg(self) -> Self {
        -self
    }
    fn f64(self) -> f64 {
        self
    }
    fn is_nan(self) -> bool {
        f64::is_nan(self)
    }
    fn nan() -> Option<Self> {
        Some(f64::NAN)
    }
    fn tol(n: usize) -> f64 {
        1e-13 * (n as f64).sqrt().max(8.0)
    }
}

fn close(what: &str, got: f64, want: f64, tol: f64) {
    let ok = (got.is_nan() && want.is_nan()) || got == want || (got - want).abs() <= tol * (1.0 + want.abs());
    assert!(ok, "{what}: {got} vs {want}");
}

/// A random shape of 0 to 3 axes; sometimes an axis of zero, sometimes a long one.
fn shape(rng: &mut Rng) -> Vec<usize> {
    let ndim = (rng.next_u64() % 4) as usize;
    let mut long = false;
    (0..ndim)
        .map(|_| match rng.next_u64() % 10 {
            0 => 0,
            1 if !std::mem::replace(&mut long, true) => 500 + (rng.next_u64() % 3000) as usize,
            _ => 1 + (rng.next_u64() % 9) as usize,
        })
        .collect()
}

fn random<T: Elem>(rng: &mut Rng, shape: &[usize], fortran: bool) -> ArrayD<T> {
    let n: usize = shape.iter().product();
    let data: Vec<T> = (0..n).map(|_| T::random(rng)).collect();
    if fortran {
        Array::from_shape_vec(IxDyn(shape).f(), data).unwrap()
    } else {
        Array::from_shape_vec(IxDyn(shape), data).unwrap()
    }
}

/// The slice of the first axis with `step` (every axis whole when there is none).
fn first_axis_info(ndim: usize, step: isize) -> SliceInfo<Vec<SliceInfoElem>, IxDyn, IxDyn> {
    let elems: Vec<SliceInfoElem> = (0..ndim)
        .map(|k| SliceInfoElem::Slice {
            start: 0,
            end: None,
            step: if k == 0 { step } else { 1 },
        })
        .collect();
    SliceInfo::try_from(elems).unwrap()
}

/// View `kind` of the host array, owned in standard layout: whole, transposed, every other
/// element of the first axis, the first axis reversed.
fn host_view<T: Elem>(a: &ArrayD<T>, kind: u64) -> ArrayD<T> {
    let v = match (kind, a.ndim()) {
        (_, 0) | (0, _) => a.view(),
        (1, _) => a.t(),
        (2, d) => a.slice(first_axis_info(d, 2)),
        (_, d) => a.slice(first_axis_info(d, -1)),
    };
    v.as_standard_layout().to_owned()
}

fn device_view<T: Elem>(
    a: &DeviceArray<T, IxDyn>,
    kind: u64,
) -> gpu_runtime::gpuarray::DeviceArrayView<'_, T, IxDyn> {
    match (kind, a.ndim()) {
        (_, 0) | (0, _) => a.view(),
        (1, _) => a.t(),
        (2, d) => a.slice(first_axis_info(d, 2)).unwrap(),
        (_, d) => a.slice(first_axis_info(d, -1)).unwrap(),
    }
}

/// NumPy's truth of an element: nonzero, NaN included.
fn nonzero<T: Elem>(x: T) -> bool {
    x.f64() != 0.0 || x.is_nan()
}

fn neg<T: Elem>(x: T) -> T {
    x.neg()
}

/// The index of the largest (`max`) or smallest element of `v`, the first on a tie, the first
/// NaN if there is one (NumPy's `argmax`/`argmin`).
fn arg_ext<T: Elem>(v: impl Iterator<Item = T>, max: bool) -> Option<usize> {
    let mut best: Option<(usize, T)> = None;
    for (i, x) in v.enumerate() {
        best = match best {
            None => Some((i, x)),
            Some((_, b)) if b.is_nan() => best,
            Some(_) if x.is_nan() => Some((i, x)),
            Some((_, b)) if (max && x > b) || (!max && x < b) => Some((i, x)),
            keep => keep,
        };
    }
    best.map(|(i, _)| i)
}

/// The relative tolerances of the mean and of the variance and standard deviation: those of
/// `f64` accumulation, and one rounding into the result type when that is `f32` (NumPy's
/// result type for `f32`; `f64` for the others tested here).
fn moment_tols<T: Elem>() -> (f64, f64) {
    if std::mem::size_of::<T::Mean>() == 8 {
        (1e-9, 1e-7)
    } else {
        (1e-6, 1e-6)
    }
}

/// Welford-free reference statistics of `v` in f64: (mean, population M2).
fn moments(v: &[f64]) -> (f64, f64) {
    let n = v.len() as f64;
    let mean = v.iter().sum::<f64>() / n;
    (mean, v.iter().map(|x| (x - mean) * (x - mean)).sum())
}

/// Every reduction of one array, over all axes and along each axis, against the host.
fn check_all<T: Elem>(ctx: &Context, rng: &mut Rng, host: &ArrayD<T>, kind: u64) -> gpu_runtime::Result<()> {
    let fortran = rng.next_u64().is_multiple_of(2);
    let base = if fortran {
        let mut f = Array::from_elem(IxDyn(host.shape()).f(), T::one());
        f.assign(host);
        f
    } else {
        host.clone()
    };
    let d = DeviceArray::from_ndarray(ctx, &base)?;
    let dv = device_view(&d, kind);
    let h = host_view(host, kind);
    let what = format!("{} shape {:?} view {kind}", std::any::type_name::<T>(), h.shape());
    let n = h.len();
    let vals: Vec<T> = h.iter().copied().collect();
    let f64s: Vec<f64> = vals.iter().map(|x| x.f64()).collect();
    // Over all axes.
    let sum = vals.iter().fold(T::zero(), |a, &b| a.add(b));
    close(&format!("{what} sum"), dv.sum()?.f64(), sum.f64(), T::tol(n));
    close(
        &format!("{what} sum_as"),
        dv.sum_as::<f64>()?,
        f64s.iter().sum(),
        1e-12,
    );
    let prod = vals.iter().fold(T::one(), |a, &b| a.mul(b));
    if n <= T::PROD_MAX_N {
        close(&format!("{what} prod"), dv.prod()?.f64(), prod.f64(), 1e-5);
    }
    let (mean, m2) = moments(&f64s);
    let (mean_tol, var_tol) = moment_tols::<T>();
    close(&format!("{what} mean"), dv.mean()?.into(), mean, mean_tol);
    close(&format!("{what} var"), dv.var(0)?.into(), m2 / n as f64, var_tol);
    close(
        &format!("{what} std ddof 1"),
        dv.std(1)?.into(),
        (m2 / (n as f64 - 1.0).max(0.0)).sqrt(),
        var_tol,
    );
    if n == 0 {
        for r in [
            dv.max().map(drop),
            dv.min().map(drop),
            dv.argmax().map(drop),
            dv.argmin().map(drop),
        ] {
            assert!(
                matches!(r, Err(Error::Shape(ArrayShapeError::EmptyReduction { .. }))),
                "{what}"
            );
        }
    } else {
        let imax = arg_ext(vals.iter().copied(), true).unwrap();
        let imin = arg_ext(vals.iter().copied(), false).unwrap();
        assert_eq!(dv.argmax()?, imax, "{what} argmax");
        assert_eq!(dv.argmin()?, imin, "{what} argmin");
        close(&format!("{what} max"), dv.max()?.f64(), vals[imax].f64(), 0.0);
        close(&format!("{what} min"), dv.min()?.f64(), vals[imin].f64(), 0.0);
        // NaN if there is one; integers wrap, through the host's own subtraction.
        let ptp = if vals[imax].is_nan() {
            vals[imax]
        } else {
            vals[imax].add(neg(vals[imin]))
        };
        close(&format!("{what} ptp"), dv.ptp()?.f64(), ptp.f64(), 1e-6);
    }
    // Along each axis, with and without keepdims.
    assert!(matches!(
        dv.sum_axis(h.ndim()),
        Err(Error::Shape(ArrayShapeError::AxisOutOfRange { .. }))
    ));
    for axis in 0..h.ndim() {
        let keep = rng.next_u64().is_multiple_of(2);
        let ra = if keep {
            ReduceAxis::keepdims(axis)
        } else {
            ReduceAxis::new(axis)
        };
        let mut want_shape = h.shape().to_vec();
        if keep {
            want_shape[axis] = 1;
        } else {
            want_shape.remove(axis);
        }
        let m = h.shape()[axis];
        let lanes = |f: &dyn Fn(Vec<T>) -> f64| -> Vec<f64> {
            h.map_axis(Axis(axis), |l| f(l.iter().copied().collect()))
                .iter()
                .copied()
                .collect()
        };
        let check = |name: &str, got: Vec<f64>, shape: &[usize], want: Vec<f64>, tol: f64| {
            assert_eq!(shape, &want_shape[..], "{what} {name} axis {axis} shape");
            assert_eq!(got.len(), want.len(), "{what} {name} axis {axis}");
            for (k, (g, w)) in got.iter().zip(&want).enumerate() {
                close(&format!("{what} {name} axis {axis} lane {k}"), *g, *w, tol);
            }
        };
        let to = |v: Vec<T>| v.into_iter().map(|x| x.f64()).collect::<Vec<f64>>();
        let r = dv.sum_axis(ra)?;
        check(
            "sum",
            to(r.to_vec()?),
            r.shape(),
            lanes(&|l| l.iter().fold(T::zero(), |a, &b| a.add(b)).f64()),
            T::tol(m),
        );
        let r = dv.sum_axis_as::<f64>(ra)?;
        check(
            "sum_as",
            r.to_vec()?,
            r.shape(),
            lanes(&|l| l.iter().map(|x| x.f64()).sum()),
            1e-12,
        );
        if m <= T::PROD_MAX_N {
            let r = dv.prod_axis(ra)?;
            check(
                "prod",
                to(r.to_vec()?),
                r.shape(),
                lanes(&|l| l.iter().fold(T::one(), |a, &b| a.mul(b)).f64()),
                1e-5,
            );
        }
        let (mean_tol, var_tol) = moment_tols::<T>();
        let widen = |v: Vec<T::Mean>| v.into_iter().map(Into::into).collect::<Vec<f64>>();
        let r = dv.mean_axis(ra)?;
        check(
            "mean",
            widen(r.to_vec()?),
            r.shape(),
            lanes(&|l| moments(&to(l)).0),
            mean_tol,
        );
        let r = dv.var_axis(ra, 1)?;
        check(
            "var",
            widen(r.to_vec()?),
            r.shape(),
            lanes(&|l| moments(&to(l.clone())).1 / (l.len() as f64 - 1.0).max(0.0)),
            var_tol,
        );
        let r = dv.std_axis(ra, 0)?;
        check(
            "std",
            widen(r.to_vec()?),
            r.shape(),
            lanes(&|l| (moments(&to(l.clone())).1 / l.len() as f64).sqrt()),
            var_tol,
        );
        let lanes_count: usize = want_shape.iter().product();
        if m == 0 && lanes_count > 0 {
            assert!(matches!(
                dv.max_axis(ra),
                Err(Error::Shape(ArrayShapeError::EmptyReduction { .. }))
            ));
            assert!(matches!(
                dv.argmin_axis(ra),
                Err(Error::Shape(ArrayShapeError::EmptyReduction { .. }))
            ));
            continue;
        }
        let ext = |max: bool| {
            lanes(&|l| {
                l.get(arg_ext(l.iter().copied(), max).unwrap_or(0))
                    .map_or(0.0, |x| x.f64())
            })
        };
        let r = dv.max_axis(ra)?;
        check("max", to(r.to_vec()?), r.shape(), ext(true), 0.0);
        let r = dv.min_axis(ra)?;
        check("min", to(r.to_vec()?), r.shape(), ext(false), 0.0);
        let r = dv.ptp_axis(ra)?;
        let range = |l: Vec<T>| {
            let (hi, lo) = (
                arg_ext(l.iter().copied(), true),
                arg_ext(l.iter().copied(), false),
            );
            match (hi, lo) {
                (Some(h), _) if l[h].is_nan() => f64::NAN,
                (Some(h), Some(o)) => l[h].add(neg(l[o])).f64(),
                _ => 0.0,
            }
        };
        check("ptp", to(r.to_vec()?), r.shape(), lanes(&range), 1e-6);
        let r = dv.any_axis(ra)?;
        let got: Vec<f64> = r.to_vec()?.iter().map(|&b| u8::from(b.get()) as f64).collect();
        check(
            "any",
            got,
            r.shape(),
            lanes(&|l| l.iter().any(|x| nonzero(*x)) as u8 as f64),
            0.0,
        );
        let r = dv.all_axis(ra)?;
        let got: Vec<f64> = r.to_vec()?.iter().map(|&b| u8::from(b.get()) as f64).collect();
        check(
            "all",
            got,
            r.shape(),
            lanes(&|l| l.iter().all(|x| nonzero(*x)) as u8 as f64),
            0.0,
        );
        let idx = |max: bool| lanes(&|l| arg_ext(l.into_iter(), max).unwrap_or(0) as f64);
        let r = dv.argmax_axis(ra)?;
        check(
            "argmax",
            r.to_vec()?.iter().map(|&i| i as f64).collect(),
            r.shape(),
            idx(true),
            0.0,
        );
        let r = dv.argmin_axis(ra)?;
        check(
            "argmin",
            r.to_vec()?.iter().map(|&i| i as f64).collect(),
            r.shape(),
            idx(false),
            0.0,
        );
    }
    Ok(())
}

fn reductions_of<T: Elem>(ctx: &Context, seed: u64, nan: bool) -> gpu_runtime::Result<()> {
    let mut rng = Rng::new(seed);
    for _ in 0..40 {
        let sh = shape(&mut rng);
        let mut host = random::<T>(&mut rng, &sh, false);
        if let (true, Some(nan)) = (nan && !host.is_empty(), T::nan()) {
            // A NaN or two at random places.
            for _ in 0..1 + rng.next_u64() % 2 {
                let k = (rng.next_u64() as usize) % host.len();
                if let Some(v) = host.iter_mut().nth(k) {
                    *v = nan;
                }
            }
        }
        let kind = rng.next_u64() % 4;
        check_all(ctx, &mut rng, &host, kind)?;
    }
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn reductions_match_the_host_for_every_type_and_layout() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    reductions_of::<f32>(&ctx, 1, false)?;
    reductions_of::<f64>(&ctx, 2, false)?;
    reductions_of::<i32>(&ctx, 3, false)?;
    reductions_of::<u8>(&ctx, 4, false)?;
    reductions_of::<i64>(&ctx, 5, false)?;
    Ok(())
}

/// Few long lanes (each split across blocks, then the partials combined) and long columns,
/// in every view.
#[test]
#[ignore = "needs a CUDA GPU"]
fn long_lanes_and_long_columns() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(8);
    for kind in 0..4 {
        let h = random::<f32>(&mut rng, &[3, 50_001], false);
        check_all(&ctx, &mut rng, &h, kind)?;
        let h = random::<i32>(&mut rng, &[70_001, 2], false);
        check_all(&ctx, &mut rng, &h, kind)?;
        let h = random::<f64>(&mut rng, &[2, 3, 40_000], false);
        check_all(&ctx, &mut rng, &h, kind)?;
    }
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn nan_propagates_through_max_and_argmax_finds_the_first() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    reductions_of::<f32>(&ctx, 6, true)?;
    reductions_of::<f64>(&ctx, 7, true)?;
    let x = DeviceArray::from_ndarray(&ctx, &Array::from(vec![1.0f32, f32::NAN, 3.0, f32::NAN]))?;
    assert!(x.max()?.is_nan() && x.min()?.is_nan());
    assert_eq!((x.argmax()?, x.argmin()?), (1, 1));
    let inf = DeviceArray::from_ndarray(&ctx, &Array::from(vec![f32::NEG_INFINITY, f32::INFINITY]))?;
    assert_eq!((inf.argmax()?, inf.argmin()?), (1, 0));
    Ok(())
}

/// `argmax`/`argmin` carry `int` indices while every index fits one and `long long` past
/// `i32::MAX` elements: a 2 x (2^31 + 64) `u8` array (4 GiB) with its extremes at random
/// places past that index, along the long axis and over the whole (flat indices past 2^32).
#[test]
#[ignore = "needs a CUDA GPU"]
fn arg_indices_past_i32_max() -> gpu_runtime::Result<()> {
    use gpu_runtime::ndarray::s;
    let ctx = Context::default()?;
    let mut rng = Rng::new(13);
    let cols = (1usize << 31) + 64;
    let mut x = DeviceArray::<u8, _>::zeros(&ctx, IxDyn(&[2, cols]))?;
    x.fill(100)?;
    let mut set = |row: usize, col: usize, v: u8| x.slice_mut(s![row, col..col + 1])?.fill(v);
    let far = (1usize << 31) + (rng.next_u64() % 60) as usize;
    let near = (rng.next_u64() % 1000) as usize;
    let below = i32::MAX as usize - 1 - (rng.next_u64() % 1000) as usize;
    // Row 0: its maximum past i32::MAX, twice (the first wins); its minimum below it.
    set(0, far, 200)?;
    set(0, far + 2, 200)?;
    set(0, below, 3)?;
    // Row 1: its maximum (equal to row 0's) near the start; its minimum, the array's, last.
    set(1, near, 200)?;
    set(1, cols - 1, 2)?;
    // A column past i32::MAX whose larger element is in row 1.
    set(1, far + 1, 150)?;
    assert_eq!(x.argmax_axis(1)?.to_vec()?, vec![far as i64, near as i64]);
    assert_eq!(x.argmin_axis(1)?.to_vec()?, vec![below as i64, cols as i64 - 1]);
    assert_eq!(x.argmax()?, far);
    assert_eq!(x.argmin()?, 2 * cols - 1);
    // The short axis (length 2) and its lanes past i32::MAX: int indices along it.
    let by_column = x.slice(s![.., far - 1..far + 3])?.argmax_axis(0)?.to_vec()?;
    assert_eq!(by_column, vec![0, 0, 1, 0]);
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn empty_and_zero_d_arrays() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let e = DeviceArray::<f32, _>::zeros(&ctx, IxDyn(&[0, 5]))?;
    assert_eq!((e.sum()?, e.prod()?), (0.0, 1.0));
    assert!(e.mean()?.is_nan());
    assert!(matches!(
        e.max(),
        Err(Error::Shape(ArrayShapeError::EmptyReduction { .. }))
    ));
    assert!(matches!(
        e.max_axis(0),
        Err(Error::Shape(ArrayShapeError::EmptyReduction { .. }))
    ));
    assert_eq!(e.sum_axis(0)?.to_vec()?, vec![0.0; 5]);
    assert_eq!(e.max_axis(1)?.shape(), &[0]);
    assert_eq!(e.sum_axis(ReduceAxis::keepdims(1))?.shape(), &[0, 1]);
    let z = DeviceArray::from_ndarray(&ctx, &Array::from_elem(IxDyn(&[]), 7i32))?;
    assert_eq!(
        (z.sum()?, z.max()?, z.argmax()?, z.sum_as::<i64>()?),
        (7, 7, 0, 7)
    );
    assert!(matches!(
        z.sum_axis(0),
        Err(Error::Shape(ArrayShapeError::AxisOutOfRange { .. }))
    ));
    assert_eq!(z.cumsum()?.to_vec()?, vec![7]);
    assert!(matches!(
        z.cumsum_axis(0),
        Err(Error::Shape(ArrayShapeError::AxisOutOfRange { .. }))
    ));
    Ok(())
}

/// The inclusive or exclusive running `op` of `v` on the host.
fn host_scan<T: Elem>(v: &[T], start: T, op: fn(T, T) -> T, exclusive: bool) -> Vec<T> {
    let mut acc = start;
    v.iter()
        .map(|&x| {
            let next = op(acc, x);
            let r = if exclusive { acc } else { next };
            acc = next;
            r
        })
        .collect()
}

/// Floats: each running sum within a tolerance of the running magnitude.
fn close_running(what: &str, got: &[f64], want: &[f64], mags: &[f64], tol: f64) {
    assert_eq!(got.len(), want.len(), "{what}");
    for (k, ((g, w), m)) in got.iter().zip(want).zip(mags).enumerate() {
        assert!((g - w).abs() <= tol * (1.0 + m), "{what} element {k}: {g} vs {w}");
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn flat_scans_around_block_and_tile_sizes() -> gpu_runtime::Result<()> {
    use gpu_runtime::__testing::scan_tile_of;
    let ctx = Context::default()?;
    let mut rng = Rng::new(11);
    let tile = scan_tile_of::<f32>() as usize;
    let lens = [
        1,
        255,
        256,
        257,
        tile - 1,
        tile,
        tile + 1,
        33 * tile + 7,
        (1 << 20) + 3,
        1 << 26,
    ];
    for n in lens {
        let h: Vec<i32> = (0..n).map(|_| rng.next_u64() as i32).collect();
        let d = DeviceArray::from_ndarray(&ctx, &Array::from(h.clone()))?;
        for exclusive in [false, true] {
            let want = host_scan(&h, 0, i32::wrapping_add, exclusive);
            let got = if exclusive {
                d.cumsum_exclusive()?
            } else {
                d.cumsum()?
            };
            assert!(got.to_vec()? == want, "i32 cumsum n = {n} exclusive {exclusive}");
        }
        // A non-commutative scan: the latest element wins, so any order mistake shows.
        let last = ScanKernel::<i32>::new("b", "-1")?;
        assert!(last.inclusive(&d)?.to_vec()? == h, "n = {n}");
        // Reversed and stepped views of the same.
        let rev = d.slice(gpu_runtime::ndarray::s![..;-3])?;
        let hv: Vec<i32> = h.iter().rev().step_by(3).copied().collect();
        assert!(
            rev.cumsum()?.to_vec()? == host_scan(&hv, 0, i32::wrapping_add, false),
            "reversed n = {n}"
        );
        if n <= (1 << 20) + 3 {
            let f: Vec<f64> = (0..n).map(|_| rng.f64() * 2.0 - 1.0).collect();
            let df = DeviceArray::from_ndarray(&ctx, &Array::from(f.clone()))?;
            let want = host_scan(&f, 0.0, |a, b| a + b, false);
            let mags = host_scan(&f, 0.0, |a, b| a + b.abs(), false);
            close_running(
                &format!("f64 n = {n}"),
                &df.cumsum()?.to_vec()?,
                &want,
                &mags,
                1e-12,
            );
            let p: Vec<f32> = (0..n.min(5000)).map(|_| 0.999 + 0.002 * rng.f32()).collect();
            let dp = DeviceArray::from_ndarray(&ctx, &Array::from(p.clone()))?;
            let want = host_scan(&p, 1.0, |a, b| a * b, false);
            let got = dp.cumprod()?.to_vec()?;
            for (k, (g, w)) in got.iter().zip(&want).enumerate() {
                assert!(
                    (g - w).abs() <= 1e-4 * w.abs(),
                    "cumprod n = {n} element {k}: {g} vs {w}"
                );
            }
        }
    }
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn scans_along_each_axis_of_every_layout() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(12);
    // Few long lanes (the one-pass kernel per lane), many short ones (a thread per lane), and
    // random shapes.
    let mut shapes: Vec<Vec<usize>> = vec![
        vec![3, 20_000],
        vec![20_000, 3],
        vec![2, 3, 9000],
        vec![5000, 4, 2],
    ];
    shapes.extend((0..30).map(|_| shape(&mut rng)).filter(|s| !s.is_empty()));
    for sh in shapes {
        let fortran = rng.next_u64().is_multiple_of(2);
        let host = random::<i64>(&mut rng, &sh, fortran);
        let d = DeviceArray::from_ndarray(&ctx, &host)?;
        let kind = rng.next_u64() % 4;
        let dv = device_view(&d, kind);
        let h = host_view(&host, kind);
        // Flattened, in C order, any layout.
        let flat: Vec<i64> = h.iter().copied().collect();
        assert!(
            dv.cumsum()?.to_vec()? == host_scan(&flat, 0, i64::wrapping_add, false),
            "flat {sh:?} view {kind}"
        );
        for axis in 0..h.ndim() {
            for exclusive in [false, true] {
                let mut want = h.clone();
                for mut lane in want.lanes_mut(Axis(axis)) {
                    let v: Vec<i64> = lane.iter().copied().collect();
                    for (x, y) in lane
                        .iter_mut()
                        .zip(host_scan(&v, 0, i64::wrapping_add, exclusive))
                    {
                        *x = y;
                    }
                }
                let got = if exclusive {
                    dv.cumsum_axis_exclusive(axis)?
                } else {
                    dv.cumsum_axis(axis)?
                };
                assert_eq!(got.shape(), h.shape());
                assert!(
                    got.to_vec()? == want.iter().copied().collect::<Vec<_>>(),
                    "cumsum {sh:?} view {kind} axis {axis} exclusive {exclusive}"
                );
            }
            // -1, 0 or 1: running products stay in range.
            let small = h.mapv(|x| x % 3 - 1);
            let ds = DeviceArray::from_ndarray(&ctx, &small)?;
            let mut want = small.clone();
            want.accumulate_axis_inplace(Axis(axis), |&prev, cur| *cur = cur.wrapping_mul(prev));
            assert!(
                ds.cumprod_axis(axis)?.to_vec()? == want.iter().copied().collect::<Vec<_>>(),
                "cumprod {sh:?} axis {axis}"
            );
        }
    }
    Ok(())
}

#[derive(Clone, Copy)]
#[repr(C)]
struct Welford {
    n: f64,
    mean: f64,
    m2: f64,
}
// SAFETY: repr(C), three f64 fields, every bit pattern valid; the preamble declares the same.
unsafe impl DeviceRepr for Welford {}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_user_struct_accumulates_a_reduction() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(13);
    let preamble = "struct welford { double n, mean, m2; };\n\
        __device__ welford mk(double n, double mean, double m2) { welford w; w.n = n; w.mean = mean; w.m2 = m2; return w; }\n\
        __device__ welford merge(welford a, welford b) { if (a.n == 0) return b; if (b.n == 0) return a;\n\
        double n = a.n + b.n, d = b.mean - a.mean; return mk(n, a.mean + d * b.n / n, a.m2 + b.m2 + d * d * a.n * b.n / n); }";
    let var = ReductionKernel::<f64>::with_struct_accumulator::<Welford>(
        "const float *x",
        "mk(1.0, x, 0.0)",
        "merge(a, b)",
        "mk(0.0, 0.0, 0.0)",
        "welford",
        preamble,
    )?
    .post_map("a.m2 / a.n");
    for n in [1usize, 1000, 123_457] {
        let h: Vec<f32> = (0..n).map(|_| rng.f32() * 10.0).collect();
        let d = DeviceArray::from_ndarray(&ctx, &Array::from(h.clone()))?;
        let (_, m2) = moments(&h.iter().map(|&x| x as f64).collect::<Vec<_>>());
        let got = var.reduce([KernelArg::input(&d)])?.to_vec()?[0];
        close(&format!("welford n = {n}"), got, m2 / n as f64, 1e-9);
    }
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn reductions_over_the_elements_an_index_array_picks() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(14);
    for (len, picks) in [(1usize, 1usize), (1000, 0), (1000, 17), (100_000, 300_000)] {
        let h: Vec<f64> = (0..len).map(|_| rng.f64() * 2.0 - 1.0).collect();
        // Negative indices count from the end, as in NumPy.
        let idx: Vec<i64> = (0..picks)
            .map(|_| {
                let j = (rng.next_u64() % len as u64) as i64;
                if rng.next_u64().is_multiple_of(3) {
                    j - len as i64
                } else {
                    j
                }
            })
            .collect();
        let picked: Vec<f64> = idx
            .iter()
            .map(|&j| h[j.rem_euclid(len as i64) as usize])
            .collect();
        let x = DeviceArray::from_ndarray(&ctx, &Array::from(h.clone()))?;
        let di = DeviceArray::from_ndarray(&ctx, &Array::from(idx.clone()))?;
        close("sum_at", x.sum_at(&di)?, picked.iter().sum(), 1e-12);
        if picks == 0 {
            assert!(matches!(
                x.max_at(&di),
                Err(Error::Shape(ArrayShapeError::EmptyReduction { .. }))
            ));
            assert_eq!(x.prod_at(&di)?, 1.0);
        } else {
            close(
                "max_at",
                x.max_at(&di)?,
                picked.iter().copied().fold(f64::MIN, f64::max),
                0.0,
            );
            close(
                "min_at",
                x.min_at(&di)?,
                picked.iter().copied().fold(f64::MAX, f64::min),
                0.0,
            );
        }
        // A reversed view of the array and every other index.
        let xr = x.slice(gpu_runtime::ndarray::s![..;-1])?;
        let ir = di.slice(gpu_runtime::ndarray::s![..;2])?;
        let want: f64 = idx
            .iter()
            .step_by(2)
            .map(|&j| h[len - 1 - j.rem_euclid(len as i64) as usize])
            .sum();
        close("sum_at reversed", xr.sum_at(&ir)?, want, 1e-12);
        // dot_at (PyCUDA's subset_dot): with a second array, then with it reversed.
        let g: Vec<f64> = (0..len).map(|_| rng.f64() * 2.0 - 1.0).collect();
        let y = DeviceArray::from_ndarray(&ctx, &Array::from(g.clone()))?;
        let at = |j: i64| j.rem_euclid(len as i64) as usize;
        let want: f64 = idx.iter().map(|&j| h[at(j)] * g[at(j)]).sum();
        close("dot_at", x.dot_at(&y, &di)?, want, 1e-12);
        let yr = y.slice(gpu_runtime::ndarray::s![..;-1])?;
        let want: f64 = idx.iter().map(|&j| h[at(j)] * g[len - 1 - at(j)]).sum();
        close("dot_at reversed y", x.dot_at(&yr, &di)?, want, 1e-12);
    }
    // dot_at of a 2-D transposed (non-contiguous) pair, read in C order.
    let h = Array::from_shape_fn((6, 7), |(i, j)| (i * 7 + j) as f64 * 0.25 - 3.0);
    let g = Array::from_shape_fn((7, 6), |(i, j)| (i as f64 - j as f64) * 0.5);
    let (x2, y2) = (
        DeviceArray::from_ndarray(&ctx, &h)?,
        DeviceArray::from_ndarray(&ctx, &g)?,
    );
    let idx: Vec<i64> = (0..42).map(|_| (rng.next_u64() % 42) as i64).collect();
    let di = DeviceArray::from_ndarray(&ctx, &Array::from(idx.clone()))?;
    let (hf, gt): (Vec<f64>, Vec<f64>) = (h.iter().copied().collect(), g.t().iter().copied().collect());
    let want: f64 = idx.iter().map(|&j| hf[j as usize] * gt[j as usize]).sum();
    close("dot_at transposed", x2.dot_at(&y2.t(), &di)?, want, 1e-12);
    assert!(matches!(
        x2.dot_at(&y2.slice(gpu_runtime::ndarray::s![..6, ..])?, &di),
        Err(Error::Shape(ArrayShapeError::ElementCounts {
            first: 42,
            second: 36,
            ..
        }))
    ));
    let x = DeviceArray::from_ndarray(&ctx, &Array::from(vec![1i32, 2, 3]))?;
    let bad = DeviceArray::from_ndarray(&ctx, &Array::from(vec![0i64, 3, -4, 2]))?;
    assert!(matches!(
        x.sum_at(&bad),
        Err(Error::Shape(ArrayShapeError::IndicesOutOfRange {
            count: 2,
            len: 3,
            ..
        }))
    ));
    Ok(())
}

/// Values read back to the host (`sum`, `max`, `count_nonzero`, `any`, `dot`) from eight
/// threads at once, on the legacy stream and on streams of their own, each checked against the
/// host: every read takes a mapped slot of its own, so none sees another's value; and a
/// refused call (shapes that differ) gives its slot back and errs.
#[test]
#[ignore = "needs a CUDA GPU"]
fn values_read_back_from_many_threads_are_each_their_own() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    std::thread::scope(|scope| {
        let workers: Vec<_> = (0..8u64)
            .map(|t| {
                let ctx = ctx.clone();
                scope.spawn(move || -> gpu_runtime::Result<()> {
                    let mut rng = Rng::new(900 + t);
                    let stream = gpu_runtime::Stream::new(&ctx)?;
                    for round in 0..40 {
                        let n = 1 + (rng.next_u64() % 50_000) as usize;
                        let h: Vec<i64> = (0..n).map(|_| (rng.next_u64() % 7) as i64 - 3).collect();
                        let d = DeviceArray::from_ndarray(&ctx, &Array::from(h.clone()))?;
                        let on = if round % 2 == 0 {
                            d.sum()?
                        } else {
                            d.on(&stream).sum()?
                        };
                        assert_eq!(on, h.iter().sum::<i64>(), "thread {t} round {round} sum");
                        assert_eq!(d.max()?, *h.iter().max().unwrap(), "thread {t} round {round} max");
                        let nz = h.iter().filter(|&&v| v != 0).count();
                        assert_eq!(d.count_nonzero()?, nz, "thread {t} round {round} count");
                        assert_eq!(d.any()?, nz > 0);
                        assert_eq!(d.all()?, nz == n);
                        assert_eq!(d.dot(&d)?, h.iter().map(|v| v * v).sum::<i64>());
                        let other = DeviceArray::<i64, _>::zeros(&ctx, n + 1)?;
                        assert!(d.dot(&other).is_err(), "thread {t}: dot of different lengths");
                    }
                    Ok(())
                })
            })
            .collect();
        workers
            .into_iter()
            .try_for_each(|w| w.join().expect("a reading thread panicked"))
    })
}
