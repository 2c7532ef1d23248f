//! Issue 46's reductions and element functions on a GPU against references on the host, on
//! random data: the one-launch reduction over all axes (sizes around the block and grid
//! limits, strided views, launch after launch and on two streams at once), the NaN-ignoring
//! reductions (`nansum` ... `nanargmin`) over all axes and along each axis with and without
//! `keepdims`, of random 0-3-D shapes (empty axes included) through whole, transposed, stepped
//! and reversed views, for f32, f64, i32 and u8, with NaN at random places and lanes of NaN
//! only; `isclose`/`allclose` (NumPy's asymmetric formula, infinities, NaN, broadcasting) and
//! `nan_to_num`.

use gpu_runtime::gpuarray::{
    allclose, isclose, nan_to_num, DeviceArray, Element, KernelArg, MeanType, ReduceAxis, ReductionKernel,
};
use gpu_runtime::ndarray::{Array, ArrayD, Axis, IxDyn, SliceInfo, SliceInfoElem};
use gpu_runtime::{ArrayShapeError, Context, Error, Stream};
use gpu_suite::Rng;

/// An element type under test, seen from the host in `f64`.
trait Elem: Element + MeanType<Mean: Into<f64>> + PartialOrd + std::fmt::Debug {
    fn random(rng: &mut Rng) -> Self;
    fn f64(self) -> f64;
    /// The element type's value of an exact integer `v` (wrapping for integers).
    fn wrap(v: f64) -> Self;
    fn nan() -> Option<Self> {
        None
    }
    /// Relative tolerance of a sum or mean in the element type.
    const TOL: f64;
}

impl Elem for f32 {
    fn random(rng: &mut Rng) -> Self {
        0.5 + rng.f32()
    }
    fn f64(self) -> f64 {
        self as f64
    }
    fn wrap(v: f64) -> Self {
        v as f32
    }
    fn nan() -> Option<Self> {
        Some(f32::NAN)
    }
    const TOL: f64 = 2e-5;
}

impl Elem for f64 {
    fn random(rng: &mut Rng) -> Self {
        0.5 + rng.f64()
    }
    fn f64(self) -> f64 {
        self
    }
    fn wrap(v: f64) -> Self {
        v
    }
    fn nan() -> Option<Self> {
        Some(f64::NAN)
    }
    const TOL: f64 = 1e-12;
}

impl Elem for i32 {
    fn random(rng: &mut Rng) -> Self {
        (rng.next_u64() % 200) as i32 - 100
    }
    fn f64(self) -> f64 {
        self as f64
    }
    fn wrap(v: f64) -> Self {
        v as i64 as i32
    }
    const TOL: f64 = 0.0;
}

impl Elem for u8 {
    fn random(rng: &mut Rng) -> Self {
        (rng.next_u64() % 5) as u8
    }
    fn f64(self) -> f64 {
        self as f64
    }
    fn wrap(v: f64) -> Self {
        v as i64 as u8
    }
    const TOL: f64 = 0.0;
}

fn close(what: &str, got: f64, want: f64, tol: f64) {
    let ok = (got.is_nan() && want.is_nan()) || got == want || (got - want).abs() <= tol * (1.0 + want.abs());
    assert!(ok, "{what}: {got} vs {want}");
}

fn close_all(what: &str, got: &[f64], want: &[f64], tol: f64) {
    assert_eq!(got.len(), want.len(), "{what}: lengths");
    for (k, (&g, &w)) in got.iter().zip(want).enumerate() {
        close(&format!("{what} [{k}]"), g, w, tol);
    }
}

/// A random shape of 0 to 3 axes; sometimes an axis of zero, sometimes a long one.
fn shape(rng: &mut Rng) -> Vec<usize> {
    let ndim = (rng.next_u64() % 4) as usize;
    let mut long = false;
    (0..ndim)
        .map(|_| match rng.next_u64() % 10 {
            0 => 0,
            1 if !std::mem::replace(&mut long, true) => 300 + (rng.next_u64() % 3000) as usize,
            _ => 1 + (rng.next_u64() % 9) as usize,
        })
        .collect()
}

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

/// View `kind` of the host array in standard layout: whole, transposed, every other element
/// of the first axis, the first axis reversed.
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

/// NumPy's NaN-ignoring statistics of one lane, in `f64`.
struct Lane {
    sum: f64,
    count: f64,
    mean: f64,
    m2: f64,
    max: Option<(usize, f64)>,
    min: Option<(usize, f64)>,
}

fn lane(v: &[f64]) -> Lane {
    let kept: Vec<(usize, f64)> = v
        .iter()
        .copied()
        .enumerate()
        .filter(|(_, x)| !x.is_nan())
        .collect();
    let count = kept.len() as f64;
    let sum: f64 = kept.iter().map(|p| p.1).sum();
    let mean = sum / count;
    let m2 = kept.iter().map(|p| (p.1 - mean) * (p.1 - mean)).sum();
    let pick = |better: fn(f64, f64) -> bool| {
        kept.iter()
            .copied()
            .fold(None, |best: Option<(usize, f64)>, (i, x)| match best {
                Some((_, b)) if !better(x, b) => best,
                _ => Some((i, x)),
            })
    };
    Lane {
        sum,
        count,
        mean,
        m2,
        max: pick(|x, b| x > b),
        min: pick(|x, b| x < b),
    }
}

fn var(l: &Lane, ddof: f64) -> f64 {
    if l.count > ddof {
        l.m2 / (l.count - ddof)
    } else {
        f64::NAN
    }
}

/// The lanes of `h` along `axis`, in C order of the other axes.
fn lanes_of(h: &ArrayD<f64>, axis: usize) -> Vec<Vec<f64>> {
    let moved = h.view().permuted_axes(
        (0..h.ndim())
            .filter(|&k| k != axis)
            .chain([axis])
            .collect::<Vec<_>>(),
    );
    let m = h.shape()[axis];
    let flat: Vec<f64> = moved.as_standard_layout().iter().copied().collect();
    if m == 0 {
        let lanes: usize = h
            .shape()
            .iter()
            .enumerate()
            .filter(|&(k, _)| k != axis)
            .map(|(_, &d)| d)
            .product();
        return vec![Vec::new(); lanes];
    }
    flat.chunks(m).map(<[f64]>::to_vec).collect()
}

fn to_f64<T: Elem>(a: &DeviceArray<T, IxDyn>) -> gpu_runtime::Result<Vec<f64>> {
    Ok(a.to_vec()?.into_iter().map(Elem::f64).collect())
}

fn means<M: Into<f64> + Element>(a: &DeviceArray<M, IxDyn>) -> gpu_runtime::Result<Vec<f64>> {
    Ok(a.to_vec()?.into_iter().map(Into::into).collect())
}

/// Every NaN-ignoring reduction of one array (view `kind`), over all axes and along each axis.
fn check_nan_reductions<T: Elem>(ctx: &Context, host: &ArrayD<T>, kind: u64) -> gpu_runtime::Result<()> {
    let d = DeviceArray::from_ndarray(ctx, host)?;
    let dv = device_view(&d, kind);
    let h = host_view(host, kind);
    let what = format!("{} shape {:?} view {kind}", std::any::type_name::<T>(), h.shape());
    let hf: ArrayD<f64> = h.mapv(Elem::f64);
    let all: Vec<f64> = hf.iter().copied().collect();
    let l = lane(&all);
    let (tol, mtol) = (
        T::TOL * 4.0,
        if std::mem::size_of::<T::Mean>() == 4 {
            1e-5
        } else {
            1e-9
        },
    );
    close(
        &format!("{what} nansum"),
        dv.nansum()?.f64(),
        T::wrap(l.sum).f64(),
        tol,
    );
    close(
        &format!("{what} nansum_as f64"),
        dv.nansum_as::<f64>()?,
        l.sum,
        1e-12,
    );
    close(&format!("{what} nanmean"), dv.nanmean()?.into(), l.mean, mtol);
    close(
        &format!("{what} nanvar"),
        dv.nanvar(0)?.into(),
        var(&l, 0.0),
        mtol * 10.0,
    );
    close(
        &format!("{what} nanstd 1"),
        dv.nanstd(1)?.into(),
        var(&l, 1.0).sqrt(),
        mtol * 10.0,
    );
    if all.is_empty() {
        for r in [dv.nanmax().map(drop), dv.nanargmin().map(drop)] {
            assert!(
                matches!(r, Err(Error::Shape(ArrayShapeError::EmptyReduction { .. }))),
                "{what}: {r:?}"
            );
        }
    } else {
        let nan = f64::NAN;
        close(
            &format!("{what} nanmax"),
            dv.nanmax()?.f64(),
            l.max.map_or(nan, |p| p.1),
            0.0,
        );
        close(
            &format!("{what} nanmin"),
            dv.nanmin()?.f64(),
            l.min.map_or(nan, |p| p.1),
            0.0,
        );
        for (got, want, name) in [
            (dv.nanargmax(), l.max, "nanargmax"),
            (dv.nanargmin(), l.min, "nanargmin"),
        ] {
            match want {
                Some((i, _)) => assert_eq!(got?, i, "{what} {name}"),
                None => assert!(
                    matches!(got, Err(Error::Shape(ArrayShapeError::AllNanReduction { .. }))),
                    "{what} {name}: {got:?}"
                ),
            }
        }
    }
    for axis in 0..h.ndim() {
        let lanes: Vec<Lane> = lanes_of(&hf, axis).iter().map(|v| lane(v)).collect();
        let mut kept = h.shape().to_vec();
        kept[axis] = 1;
        let want = |f: &dyn Fn(&Lane) -> f64| lanes.iter().map(f).collect::<Vec<f64>>();
        let ra = ReduceAxis::keepdims(axis);
        let r = dv.nansum_axis(ra)?;
        assert_eq!(r.shape(), &kept[..], "{what} keepdims");
        close_all(
            &format!("{what} nansum axis {axis}"),
            &to_f64(&r)?,
            &want(&|l| T::wrap(l.sum).f64()),
            tol,
        );
        let r = dv.nanmean_axis(axis)?;
        close_all(
            &format!("{what} nanmean axis {axis}"),
            &means(&r)?,
            &want(&|l| l.mean),
            mtol,
        );
        let r = dv.nanvar_axis(axis, 1)?;
        close_all(
            &format!("{what} nanvar axis {axis}"),
            &means(&r)?,
            &want(&|l| var(l, 1.0)),
            mtol * 10.0,
        );
        let r = dv.nanstd_axis(axis, 0)?;
        close_all(
            &format!("{what} nanstd axis {axis}"),
            &means(&r)?,
            &want(&|l| var(l, 0.0).sqrt()),
            mtol * 10.0,
        );
        if h.shape()[axis] == 0 && !lanes.is_empty() {
            let r = dv.nanmax_axis(axis);
            assert!(
                matches!(r, Err(Error::Shape(ArrayShapeError::EmptyReduction { .. }))),
                "{what}: {r:?}"
            );
            continue;
        }
        let r = dv.nanmax_axis(axis)?;
        close_all(
            &format!("{what} nanmax axis {axis}"),
            &to_f64(&r)?,
            &want(&|l| l.max.map_or(f64::NAN, |p| p.1)),
            0.0,
        );
        let r = dv.nanmin_axis(axis)?;
        close_all(
            &format!("{what} nanmin axis {axis}"),
            &to_f64(&r)?,
            &want(&|l| l.min.map_or(f64::NAN, |p| p.1)),
            0.0,
        );
        let idx = |a: DeviceArray<i64, IxDyn>| -> gpu_runtime::Result<Vec<f64>> {
            Ok(a.to_vec()?.into_iter().map(|i| i as f64).collect())
        };
        close_all(
            &format!("{what} nanargmax axis {axis}"),
            &idx(dv.nanargmax_axis(axis)?)?,
            &want(&|l| l.max.map_or(-1.0, |p| p.0 as f64)),
            0.0,
        );
        close_all(
            &format!("{what} nanargmin axis {axis}"),
            &idx(dv.nanargmin_axis(axis)?)?,
            &want(&|l| l.min.map_or(-1.0, |p| p.0 as f64)),
            0.0,
        );
    }
    Ok(())
}

fn nan_reductions_of<T: Elem>(ctx: &Context, seed: u64) -> gpu_runtime::Result<()> {
    let mut rng = Rng::new(seed);
    for round in 0..40 {
        let sh = shape(&mut rng);
        let n: usize = sh.iter().product();
        let mut data: Vec<T> = (0..n).map(|_| T::random(&mut rng)).collect();
        if let Some(nan) = T::nan() {
            // About a third NaN; every fifth array NaN only; and the first axis's first row
            // NaN only, so that some lanes along the other axes have nothing else.
            let row = sh.iter().skip(1).product::<usize>();
            for (k, v) in data.iter_mut().enumerate() {
                if round % 5 == 4 || rng.next_u64().is_multiple_of(3) || (sh.len() > 1 && k < row) {
                    *v = nan;
                }
            }
        }
        let host = Array::from_shape_vec(IxDyn(&sh), data).unwrap();
        check_nan_reductions(ctx, &host, rng.next_u64() % 4)?;
    }
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn nan_reductions_match_numpy_for_every_type_and_layout() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    nan_reductions_of::<f32>(&ctx, 46)?;
    nan_reductions_of::<f64>(&ctx, 47)?;
    nan_reductions_of::<i32>(&ctx, 48)?;
    nan_reductions_of::<u8>(&ctx, 49)?;
    // The 16-bit floats, through f32 (compared with the f32 results of the same values).
    let x = DeviceArray::from_ndarray(
        &ctx,
        &Array::from(vec![1.5f32, f32::NAN, -2.0, 4.0, f32::NAN]).into_dyn(),
    )?;
    let h = x.astype::<gpu_runtime::half::f16>()?;
    assert_eq!(h.nansum()?.to_f32(), 3.5);
    assert_eq!(h.nanmax()?.to_f32(), 4.0);
    assert_eq!(h.nanmin()?.to_f32(), -2.0);
    assert_eq!((h.nanargmax()?, h.nanargmin()?), (3, 2));
    // NumPy's mean of float16 is float16: accumulated wide, rounded once.
    assert_eq!(h.nanmean()?, gpu_runtime::half::f16::from_f64(3.5 / 3.0));
    Ok(())
}

/// The one-launch reduction over all axes: sizes around the block (256), the vector width
/// (4) and the most blocks (1024 of 256 threads, 4 elements each), contiguous and strided,
/// each twice (the ticket must be back at 0), and the same kernel on two streams at once.
#[test]
#[ignore = "needs a CUDA GPU"]
fn one_launch_reductions_at_every_size() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(4646);
    let sizes = [
        1usize,
        3,
        255,
        256,
        257,
        1023,
        1024,
        4 * 256 * 1024 - 1,
        4 * 256 * 1024,
        4 * 256 * 1024 + 5,
        1 << 20,
        (3 << 20) + 7,
        1 << 24,
    ];
    for &n in &sizes {
        let host: Vec<i64> = (0..n).map(|_| (rng.next_u64() % 1000) as i64 - 500).collect();
        let x = DeviceArray::from_ndarray(&ctx, &Array::from(host.clone()))?;
        let want: i64 = host.iter().sum();
        for round in 0..2 {
            assert_eq!(x.sum()?, want, "sum of {n}, round {round}");
        }
        let stepped = x.slice(gpu_runtime::ndarray::s![..;3])?;
        let want3: i64 = host.iter().step_by(3).sum();
        assert_eq!(stepped.sum()?, want3, "sum of every third of {n}");
        let hf: Vec<f32> = host.iter().map(|&v| v as f32).collect();
        let xf = DeviceArray::from_ndarray(&ctx, &Array::from(hf.clone()))?;
        let (max_i, _) = hf
            .iter()
            .enumerate()
            .fold((0, f32::MIN), |b, (i, &v)| if v > b.1 { (i, v) } else { b });
        assert_eq!(xf.argmax()?, max_i, "argmax of {n}");
        close(
            &format!("mean of {n}"),
            xf.mean()? as f64,
            want as f64 / n as f64,
            1e-6,
        );
    }
    // Two streams, each reducing into its own result, many times: the module's scratch is
    // shared, so the launches must be ordered (the crate orders them as writes of it).
    let n = 1 << 22;
    let host: Vec<f64> = (0..n).map(|k| (k % 7) as f64).collect();
    let want: f64 = host.iter().sum();
    let x = DeviceArray::from_ndarray(&ctx, &Array::from(host))?;
    let (s1, s2) = (Stream::new(&ctx)?, Stream::new(&ctx)?);
    let k = ReductionKernel::<f64>::new("const double *x", "x", "a + b", "0.0")?;
    let mut outs: Vec<DeviceArray<f64, IxDyn>> = Vec::new();
    for i in 0..16 {
        let s = if i % 2 == 0 { &s1 } else { &s2 };
        outs.push(k.on(s).reduce([KernelArg::input(&x)])?);
    }
    s1.synchronize()?;
    s2.synchronize()?;
    for (i, o) in outs.iter().enumerate() {
        assert_eq!(o.to_vec()?, vec![want], "stream reduction {i}");
    }
    Ok(())
}

/// NumPy's `isclose(a, b, rtol, atol, equal_nan)` on the host.
fn isclose_host(a: f64, b: f64, rtol: f64, atol: f64, equal_nan: bool) -> bool {
    ((a - b).abs() <= atol + rtol * b.abs() && b.is_finite())
        || a == b
        || (equal_nan && a.is_nan() && b.is_nan())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn isclose_allclose_and_nan_to_num_match_numpy() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(461);
    let specials = [f64::NAN, f64::INFINITY, f64::NEG_INFINITY, 0.0, -0.0, 1e-9];
    let pick = |rng: &mut Rng| -> f64 {
        match rng.next_u64() % 6 {
            0 => specials[(rng.next_u64() % 6) as usize],
            // Close to 1 at several scales, so that both sides of the tolerance occur.
            1 => 1.0 + (rng.f64() - 0.5) * 1e-4,
            2 => 1.0 + (rng.f64() - 0.5) * 1e-7,
            _ => rng.f64() * 2.0,
        }
    };
    for (rows, cols) in [(0usize, 3usize), (1, 1), (7, 13), (64, 65)] {
        let a: Vec<f64> = (0..rows * cols).map(|_| pick(&mut rng)).collect();
        // Half of b near a, so that many pairs are close.
        let b: Vec<f64> = a
            .iter()
            .map(|&x| {
                if rng.next_u64().is_multiple_of(2) {
                    x * (1.0 + (rng.f64() - 0.5) * 2e-5)
                } else {
                    pick(&mut rng)
                }
            })
            .collect();
        let ha = Array::from_shape_vec((rows, cols), a).unwrap();
        let hb = Array::from_shape_vec((rows, cols), b).unwrap();
        let da = DeviceArray::from_ndarray(&ctx, &ha)?;
        let db = DeviceArray::from_ndarray(&ctx, &hb)?;
        for equal_nan in [false, true] {
            for (rtol, atol) in [(1e-5, 1e-8), (0.0, 1e-3), (1e-3, 0.0)] {
                // f64, and the transposed views (strided), and f32.
                let got = isclose(&da, &db, rtol, atol, equal_nan)?.to_vec()?;
                let want: Vec<bool> = ha
                    .iter()
                    .zip(hb.iter())
                    .map(|(&x, &y)| isclose_host(x, y, rtol, atol, equal_nan))
                    .collect();
                let got: Vec<bool> = got.iter().map(|b| b.get()).collect();
                assert_eq!(got, want, "f64 {rows}x{cols} rtol {rtol} atol {atol} {equal_nan}");
                let got_t: Vec<bool> = isclose(&da.t(), &db.t(), rtol, atol, equal_nan)?
                    .to_vec()?
                    .iter()
                    .map(|b| b.get())
                    .collect();
                let want_t: Vec<bool> = ha
                    .t()
                    .iter()
                    .zip(hb.t().iter())
                    .map(|(&x, &y)| isclose_host(x, y, rtol, atol, equal_nan))
                    .collect();
                assert_eq!(got_t, want_t, "transposed");
                assert_eq!(
                    allclose(&da, &db, rtol, atol, equal_nan)?,
                    want.iter().all(|&c| c),
                    "allclose"
                );
                let fa = da.astype::<f32>()?;
                let fb = db.astype::<f32>()?;
                let got: Vec<bool> = isclose(&fa, &fb, rtol as f32, atol as f32, equal_nan)?
                    .to_vec()?
                    .iter()
                    .map(|b| b.get())
                    .collect();
                let want: Vec<bool> = ha
                    .iter()
                    .zip(hb.iter())
                    .map(|(&x, &y)| {
                        let (x, y) = (x as f32, y as f32);
                        ((x - y).abs() <= atol as f32 + rtol as f32 * y.abs() && y.is_finite())
                            || x == y
                            || (equal_nan && x.is_nan() && y.is_nan())
                    })
                    .collect();
                assert_eq!(got, want, "f32 {rows}x{cols}");
            }
        }
        // Broadcast: a row against the matrix (b the reference, as NumPy).
        if rows > 0 {
            let row = DeviceArray::from_ndarray(&ctx, &ha.index_axis(Axis(0), 0).to_owned())?;
            let got: Vec<bool> = isclose(&row, &db, 1e-5, 1e-8, false)?
                .to_vec()?
                .iter()
                .map(|b| b.get())
                .collect();
            let want: Vec<bool> = hb
                .indexed_iter()
                .map(|((_, j), &y)| isclose_host(ha[[0, j]], y, 1e-5, 1e-8, false))
                .collect();
            assert_eq!(got, want, "broadcast");
        }
        // nan_to_num: defaults, and given values.
        let r = nan_to_num(&da, 0.0, None, None)?.to_vec()?;
        let fix = |x: f64, p: f64, n: f64, z: f64| {
            if x.is_nan() {
                z
            } else if x == f64::INFINITY {
                p
            } else if x == f64::NEG_INFINITY {
                n
            } else {
                x
            }
        };
        let want: Vec<f64> = ha.iter().map(|&x| fix(x, f64::MAX, f64::MIN, 0.0)).collect();
        assert_eq!(r, want);
        let r = nan_to_num(&da.t(), -1.0, Some(7.0), Some(-7.0))?.to_vec()?;
        let want: Vec<f64> = ha.t().iter().map(|&x| fix(x, 7.0, -7.0, -1.0)).collect();
        assert_eq!(r, want);
    }
    // 0-d.
    let z = DeviceArray::from_ndarray(&ctx, &gpu_runtime::ndarray::arr0(f32::NAN).into_dyn())?;
    assert!(isclose(&z, &z, 1e-5, 1e-8, true)?.to_vec()?[0].get());
    assert!(!allclose(&z, &z, 1e-5, 1e-8, false)?);
    assert_eq!(nan_to_num(&z, 2.5, None, None)?.to_vec()?, vec![2.5]);
    Ok(())
}

/// Compiler options on an `ElementwiseKernel` (PyCUDA's `options=`): the kernel runs with
/// them (`-use_fast_math` keeps `expf` within its documented error), and an option NVRTC does
/// not know is an error at the first launch, not a crash.
#[test]
#[ignore = "needs a CUDA GPU"]
fn elementwise_kernels_take_compiler_options() -> gpu_runtime::Result<()> {
    use gpu_runtime::gpuarray::ElementwiseKernel;
    let ctx = Context::default()?;
    let mut rng = Rng::new(462);
    let host: Vec<f32> = (0..10_000).map(|_| rng.f32() * 4.0 - 2.0).collect();
    let x = DeviceArray::from_ndarray(&ctx, &Array::from(host.clone()))?;
    let mut y = DeviceArray::<f32, _>::zeros(&ctx, host.len())?;
    let k = ElementwiseKernel::new("const float *x, float *y", "y = expf(x)")?.options(&["-use_fast_math"]);
    k.launch([KernelArg::input(&x), KernelArg::output(&mut y)])?;
    for (g, h) in y.to_vec()?.iter().zip(&host) {
        close("fast expf", *g as f64, (*h as f64).exp(), 1e-5);
    }
    let bad = ElementwiseKernel::new("const float *x, float *y", "y = x")?.options(&["--no-such-option"]);
    let r = bad.launch([KernelArg::input(&x), KernelArg::output(&mut y)]);
    assert!(r.is_err(), "{r:?}");
    Ok(())
}

/// `sum_axes` ... `all_axes` and `count_nonzero_axes` (NumPy's tuple and negative axes,
/// `keepdims` over any of them)
/// against ndarray's reductions over the same axes, on random 3-D arrays of f64 and i32 through
/// whole and transposed views; out-of-range and repeated axes are typed errors.
#[test]
#[ignore = "needs a CUDA GPU"]
fn reductions_over_several_axes() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(463);
    let axis_sets: [&[isize]; 7] = [&[0, 2], &[-1], &[-1, -3], &[0, 1, 2], &[], &[1, 0], &[2, 0, -2]];
    for shape in [[3usize, 4, 5], [1, 7, 2], [0, 3, 2], [6, 1, 300]] {
        let n: usize = shape.iter().product();
        let data: Vec<f64> = (0..n).map(|_| (rng.next_u64() % 9) as f64 - 4.0).collect();
        let h = Array::from_shape_vec(IxDyn(&shape), data).unwrap();
        let d = DeviceArray::from_ndarray(&ctx, &h)?;
        let di = d.astype::<i32>()?;
        for transposed in [false, true] {
            let (hv, dv, dvi) = if transposed {
                (h.t().to_owned(), d.t(), di.t())
            } else {
                (h.clone(), d.view(), di.view())
            };
            for &axes in &axis_sets {
                for keepdims in [false, true] {
                    let nd = hv.ndim() as isize;
                    let mut ks: Vec<usize> = axes.iter().map(|&a| ((a + nd) % nd) as usize).collect();
                    ks.sort_unstable_by(|a, b| b.cmp(a));
                    let fold = |f: &dyn Fn(&ArrayD<f64>, usize) -> ArrayD<f64>| {
                        let mut r = hv.clone();
                        for &k in &ks {
                            r = f(&r, k);
                        }
                        if keepdims {
                            let kept: Vec<usize> = hv
                                .shape()
                                .iter()
                                .enumerate()
                                .map(|(k, &len)| if ks.contains(&k) { 1 } else { len })
                                .collect();
                            // A transposed input folded over no axis is still in F order,
                            // which a C-order reshape refuses: reshape a C-order copy.
                            r = r
                                .as_standard_layout()
                                .into_owned()
                                .into_shape_with_order(IxDyn(&kept))
                                .unwrap();
                        }
                        r
                    };
                    let what = format!("{shape:?} t={transposed} axes {axes:?} keepdims {keepdims}");
                    let want = fold(&|a, k| a.sum_axis(Axis(k)));
                    let got = dv.sum_axes(axes, keepdims)?;
                    assert_eq!(got.shape(), want.shape(), "{what}");
                    assert_eq!(
                        got.to_vec()?,
                        want.iter().copied().collect::<Vec<_>>(),
                        "{what} sum"
                    );
                    let got = dvi.sum_axes(axes, keepdims)?;
                    let wi: Vec<i32> = want.iter().map(|&v| v as i32).collect();
                    assert_eq!(got.to_vec()?, wi, "{what} i32 sum");
                    let want =
                        fold(&|a, k| a.map_axis(Axis(k), |l| l.iter().copied().fold(1.0, |p, x| p * x)));
                    assert_eq!(
                        dv.prod_axes(axes, keepdims)?.to_vec()?,
                        want.iter().copied().collect::<Vec<_>>(),
                        "{what} prod"
                    );
                    // NumPy: `any`/`all` over no axes is `a != 0` (each element's truth), so
                    // the fold's result is made boolean whether or not it reduced anything.
                    let truth = |r: ArrayD<f64>| r.mapv(|x| (x != 0.0) as u8 as f64);
                    let want_any = truth(fold(&|a, k| {
                        a.map_axis(Axis(k), |l| l.iter().any(|&x| x != 0.0) as u8 as f64)
                    }));
                    let got: Vec<f64> = dv
                        .any_axes(axes, keepdims)?
                        .to_vec()?
                        .iter()
                        .map(|b| b.get() as u8 as f64)
                        .collect();
                    assert_eq!(got, want_any.iter().copied().collect::<Vec<_>>(), "{what} any");
                    let want_all = truth(fold(&|a, k| {
                        a.map_axis(Axis(k), |l| l.iter().all(|&x| x != 0.0) as u8 as f64)
                    }));
                    let got: Vec<f64> = dv
                        .all_axes(axes, keepdims)?
                        .to_vec()?
                        .iter()
                        .map(|b| b.get() as u8 as f64)
                        .collect();
                    assert_eq!(got, want_all.iter().copied().collect::<Vec<_>>(), "{what} all");
                    // NumPy's `count_nonzero(a, axis=axes)`: the sums of each element's truth
                    // over the axes (over no axes, the truths themselves).
                    let mut want_count = hv.mapv(|x| (x != 0.0) as u8 as f64);
                    for &k in &ks {
                        want_count = want_count.sum_axis(Axis(k));
                    }
                    let want_count: Vec<i64> = want_count.iter().map(|&c| c as i64).collect();
                    for (dt, got) in [
                        ("f64", dv.count_nonzero_axes(axes, keepdims)?),
                        ("i32", dvi.count_nonzero_axes(axes, keepdims)?),
                    ] {
                        assert_eq!(got.shape(), want_any.shape(), "{what} {dt} count shape");
                        assert_eq!(got.to_vec()?, want_count, "{what} {dt} count_nonzero");
                    }
                    if n == 0 && !axes.is_empty() {
                        continue;
                    }
                    let want =
                        fold(&|a, k| a.map_axis(Axis(k), |l| l.iter().copied().fold(f64::MIN, f64::max)));
                    assert_eq!(
                        dv.max_axes(axes, keepdims)?.to_vec()?,
                        want.iter().copied().collect::<Vec<_>>(),
                        "{what} max"
                    );
                    let want =
                        fold(&|a, k| a.map_axis(Axis(k), |l| l.iter().copied().fold(f64::MAX, f64::min)));
                    assert_eq!(
                        dv.nanmin_axes(axes, keepdims)?.to_vec()?,
                        want.iter().copied().collect::<Vec<_>>(),
                        "{what} nanmin"
                    );
                }
            }
        }
        assert!(matches!(
            d.sum_axes(&[3], false),
            Err(Error::Shape(ArrayShapeError::AxisOutOfRange { .. }))
        ));
        assert!(matches!(
            d.sum_axes(&[1, -2], false),
            Err(Error::Shape(ArrayShapeError::DuplicateAxis { axis: -2 }))
        ));
    }
    Ok(())
}

/// `cumsum_as`/`cumprod_as` (NumPy's `dtype=`): `i8` accumulated in `i64` does not wrap where
/// the plain `cumsum` does, `u8` in `f64`, and along an axis of a transposed view.
#[test]
#[ignore = "needs a CUDA GPU"]
fn scans_in_another_dtype() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(464);
    let host: Vec<i8> = (0..5000).map(|_| (rng.next_u64() % 200) as i8).collect();
    let x = DeviceArray::from_ndarray(&ctx, &Array::from(host.clone()))?;
    let mut run = 0i64;
    let want: Vec<i64> = host
        .iter()
        .map(|&v| {
            run += v as i64;
            run
        })
        .collect();
    assert_eq!(x.cumsum_as::<i64>()?.to_vec()?, want);
    let wrapped: Vec<i8> = want.iter().map(|&v| v as i8).collect();
    assert_eq!(x.cumsum()?.to_vec()?, wrapped);
    // 25 factors of at most 3: every product exact in f64, whatever the order.
    let small: Vec<u8> = (0..25).map(|_| 1 + (rng.next_u64() % 3) as u8).collect();
    let s = DeviceArray::from_ndarray(&ctx, &Array::from(small.clone()))?;
    let mut p = 1.0f64;
    let want: Vec<f64> = small
        .iter()
        .map(|&v| {
            p *= v as f64;
            p
        })
        .collect();
    assert_eq!(s.cumprod_as::<f64>()?.to_vec()?, want);
    let m = Array::from_shape_vec((30, 7), host[..210].to_vec()).unwrap();
    let dm = DeviceArray::from_ndarray(&ctx, &m)?;
    let got = dm.t().cumsum_axis_as::<i64>(1)?;
    let mut want = m.t().mapv(|v| v as i64);
    want.accumulate_axis_inplace(Axis(1), |&prev, cur| *cur += prev);
    assert_eq!(got.to_vec()?, want.iter().copied().collect::<Vec<_>>());
    Ok(())
}

/// NumPy's `nancumsum` and `nancumprod` (flattened and along each axis, transposed views too):
/// a third of the `f64` and `f32` elements NaN, against the host's running sums and products
/// with each NaN as 0 or 1 (in the element type, in order); integers are plain `cumsum`. And
/// NumPy's `rollaxis`, a view, read back against the host's transpose.
#[test]
#[ignore = "needs a CUDA GPU"]
fn nan_scans_and_rollaxis_match_the_host() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let stream = Stream::new(&ctx)?;
    let mut rng = Rng::new(0x9a95c);
    let shape = [3usize, 4, 5];
    let n: usize = shape.iter().product();
    let x: Vec<f64> = (0..n)
        .map(|_| {
            if rng.next_u64().is_multiple_of(3) {
                f64::NAN
            } else {
                1.0 + rng.f64() / 8.0
            }
        })
        .collect();
    let host = ArrayD::from_shape_vec(IxDyn(&shape), x).unwrap();
    let d = DeviceArray::from_ndarray(&ctx, &host)?;
    let run = |lane: &[f64], prod: bool| -> Vec<f64> {
        let mut acc = if prod { 1.0 } else { 0.0 };
        lane.iter()
            .map(|&v| {
                let v = if v.is_nan() {
                    if prod {
                        1.0
                    } else {
                        0.0
                    }
                } else {
                    v
                };
                acc = if prod { acc * v } else { acc + v };
                acc
            })
            .collect()
    };
    // The scan adds in its own order: equal to the host's running sums up to rounding.
    let close = |got: &[f64], want: &[f64], what: &str| {
        assert_eq!(got.len(), want.len(), "{what}");
        for (g, w) in got.iter().zip(want) {
            assert!(
                (g - w).abs() <= 1e-12 * w.abs().max(1.0),
                "{what}: {got:?} against {want:?}"
            );
        }
    };
    for (view, hv) in [(d.view(), host.view()), (d.t(), host.t())] {
        let flat: Vec<f64> = hv.iter().copied().collect();
        let what = format!("{:?}", hv.shape());
        close(
            &view.nancumsum()?.to_vec()?,
            &run(&flat, false),
            &format!("nancumsum {what}"),
        );
        close(
            &view.on(&stream).nancumprod()?.to_vec()?,
            &run(&flat, true),
            &format!("nancumprod {what}"),
        );
        for axis in 0..3 {
            for prod in [false, true] {
                let got = if prod {
                    view.nancumprod_axis(axis)?
                } else {
                    view.nancumsum_axis(axis)?
                }
                .to_ndarray()?;
                let mut want = hv.to_owned();
                for mut lane in want.lanes_mut(Axis(axis)) {
                    let r = run(&lane.to_vec(), prod);
                    lane.iter_mut().zip(r).for_each(|(d, s)| *d = s);
                }
                assert_eq!(got.shape(), want.shape());
                let (g, w): (Vec<f64>, Vec<f64>) =
                    (got.iter().copied().collect(), want.iter().copied().collect());
                close(&g, &w, &format!("prod {prod} axis {axis} {what}"));
            }
        }
    }
    let f: Vec<f32> = [1.5f32, f32::NAN, 2.0, f32::NAN, 0.5].to_vec();
    let df = DeviceArray::from_ndarray(&ctx, &Array::from(f))?;
    assert_eq!(df.nancumsum()?.to_vec()?, [1.5, 1.5, 3.5, 3.5, 4.0]);
    assert_eq!(df.nancumprod()?.to_vec()?, [1.5, 1.5, 3.0, 3.0, 1.5]);
    let i = DeviceArray::from_ndarray(&ctx, &Array::from(vec![3i32, -1, 4]))?;
    assert_eq!(i.nancumsum()?.to_vec()?, [3, 2, 6]);
    // rollaxis: np.rollaxis(a, 2, 0) and (0, 3) of the (3, 4, 5) array.
    for (axis, start, order) in [
        (2isize, 0isize, [2usize, 0, 1]),
        (0, 3, [1, 2, 0]),
        (-1, 1, [0, 2, 1]),
    ] {
        let got = d.view().rollaxis(axis, start)?.to_ndarray()?;
        let want = host.view().permuted_axes(IxDyn(&order)).to_owned();
        assert_eq!(got.shape(), want.shape(), "rollaxis({axis}, {start})");
        let same = got.iter().zip(&want).all(|(a, b)| a.to_bits() == b.to_bits());
        assert!(same, "rollaxis({axis}, {start})");
    }
    Ok(())
}
