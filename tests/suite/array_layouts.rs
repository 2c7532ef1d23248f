//! Device arrays and generated kernels on a GPU, each compared with `ndarray` on the host on
//! random data: random shapes (empty ones included), C and Fortran order, and views that are
//! not contiguous (steps, negative steps, transposes).

use gpu_runtime::gpuarray::{
    broadcast_shapes, DeviceArray, ElementwiseKernel, KernelArg, PooledArray, ReductionKernel,
};
use gpu_runtime::ndarray::{s, Array, ArrayD, Axis, IxDyn, ShapeBuilder};
use gpu_runtime::{ArgumentError, ArrayShapeError, Context, Error, Stream};
use gpu_suite::Rng;

/// A random shape of 1 to 3 axes; sometimes an axis of zero, sometimes a large one.
fn shape(rng: &mut Rng) -> Vec<usize> {
    let ndim = 1 + (rng.next_u64() % 3) as usize;
    let mut large = false;
    (0..ndim)
        .map(|_| match rng.next_u64() % 10 {
            0 => 0,
            // At most one large axis, so that arrays stay under a few million elements.
            1 if !std::mem::replace(&mut large, true) => 1000 + (rng.next_u64() % 3000) as usize,
            _ => 1 + (rng.next_u64() % 9) as usize,
        })
        .collect()
}

fn random(rng: &mut Rng, shape: &[usize], fortran: bool) -> ArrayD<f32> {
    let n: usize = shape.iter().product();
    let data: Vec<f32> = (0..n).map(|_| rng.f32() * 2.0 - 1.0).collect();
    let sh = IxDyn(shape);
    if fortran {
        Array::from_shape_vec(sh.f(), data).unwrap()
    } else {
        Array::from_shape_vec(sh, data).unwrap()
    }
}

/// One of: the whole array, a transpose, every other element of the first axis, the first
/// axis reversed.
fn view_kind(rng: &mut Rng) -> u64 {
    rng.next_u64() % 4
}

fn host_view(a: &ArrayD<f32>, kind: u64) -> ArrayD<f32> {
    match kind {
        0 => a.clone(),
        1 => a.t().to_owned(),
        2 => a
            .slice_axis(Axis(0), (..).into())
            .slice_axis(Axis(0), gpu_runtime::ndarray::Slice::new(0, None, 2))
            .to_owned(),
        _ => a
            .slice_axis(Axis(0), gpu_runtime::ndarray::Slice::new(0, None, -1))
            .to_owned(),
    }
}

fn device_view<'a>(a: &'a DeviceArray<f32>, kind: u64) -> gpu_runtime::gpuarray::DeviceArrayView<'a, f32> {
    match kind {
        0 => a.view(),
        1 => a.t(),
        2 => first_axis(a, 2),
        _ => first_axis(a, -1),
    }
}

/// The first axis sliced with `step`, for any number of axes.
fn first_axis(a: &DeviceArray<f32>, step: isize) -> gpu_runtime::gpuarray::DeviceArrayView<'_, f32> {
    let mut elems = vec![gpu_runtime::ndarray::SliceInfoElem::Slice {
        start: 0,
        end: None,
        step,
    }];
    elems.extend((1..a.ndim()).map(|_| gpu_runtime::ndarray::SliceInfoElem::Slice {
        start: 0,
        end: None,
        step: 1,
    }));
    let info = gpu_runtime::ndarray::SliceInfo::<_, IxDyn, IxDyn>::try_from(elems).unwrap();
    a.slice(info).unwrap()
}

fn close(got: &[f32], want: &[f32], tol: f32) {
    assert_eq!(got.len(), want.len());
    for (k, (g, w)) in got.iter().zip(want).enumerate() {
        assert!((g - w).abs() <= tol * (1.0 + w.abs()), "element {k}: {g} vs {w}");
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn round_trips_in_every_layout() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(17);
    for round in 0..40 {
        let sh = shape(&mut rng);
        let host = random(&mut rng, &sh, round % 2 == 1);
        let d = DeviceArray::from_ndarray(&ctx, &host)?;
        assert_eq!(d.shape(), host.shape());
        assert_eq!(d.to_ndarray()?, host);
        for kind in 0..4 {
            let want = host_view(&host, kind);
            let got = device_view(&d, kind).to_ndarray()?;
            assert_eq!(got, want, "shape {sh:?} view {kind}");
            assert_eq!(device_view(&d, kind).to_contiguous()?.to_ndarray()?, want);
        }
        // Host views that are not contiguous go up as copies.
        let hv = host.slice_axis(Axis(0), gpu_runtime::ndarray::Slice::new(0, None, -2));
        assert_eq!(DeviceArray::from_ndarray(&ctx, &hv)?.to_ndarray()?, hv);
    }
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn views_reshape_fill_astype_and_pools() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(3);
    let host = random(&mut rng, &[6, 10], false);
    let mut d = DeviceArray::from_ndarray(&ctx, &host)?;
    let flat = d.view().reshape(60)?;
    assert_eq!(flat.to_vec()?, host.iter().copied().collect::<Vec<_>>());
    assert!(matches!(d.t().reshape(60), Err(Error::NotContiguous { .. })));
    assert!(d.slice(s![7, ..]).is_err());
    // Fill a strided view; the rest keeps its values.
    d.slice_mut(s![1..;2, ..;-3])?.fill(5.0)?;
    let mut want = host.clone();
    want.slice_mut(s![1..;2, ..;-3]).fill(5.0);
    assert_eq!(d.to_ndarray()?, want);
    let as_f64 = d.t().astype::<f64>()?;
    assert_eq!(as_f64.to_ndarray()?, want.t().mapv(f64::from));
    let as_i32 = d.astype::<i32>()?;
    assert_eq!(as_i32.to_ndarray()?, want.mapv(|v| v as i32));
    // Arrays from a pool, on a stream, assigned from a transposed view.
    let pool = ctx.device_pool()?;
    let mut p = PooledArray::<f32, _>::empty_in(&pool, IxDyn(&[10, 6]))?;
    let stream = Stream::new(&ctx)?;
    p.on_mut(&stream).assign(&d.t())?;
    stream.synchronize()?;
    assert_eq!(p.to_ndarray()?, want.t());
    let z = DeviceArray::<f32, _>::zeros(&ctx, (3, 4).f())?;
    assert!(z.is_fortran_layout());
    assert_eq!(z.to_ndarray()?, Array::zeros((3, 4)));
    let e = DeviceArray::<f32, _>::zeros(&ctx, IxDyn(&[0, 3]))?;
    assert_eq!(e.to_ndarray()?.shape(), &[0, 3]);
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn elementwise_on_random_layouts() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let axpy = ElementwiseKernel::new(
        "float a, const float *x, const float *y, float *z",
        "z = a * x + y",
    )?;
    let inplace = ElementwiseKernel::with_name("inplace", "float a, const float *x, float *y", "y += a * x")?;
    let mut rng = Rng::new(5);
    let stream = Stream::new(&ctx)?;
    for round in 0..40 {
        let sh = shape(&mut rng);
        let (hx, hy) = (
            random(&mut rng, &sh, false),
            random(&mut rng, &sh, round % 3 == 0),
        );
        let (x, y) = (
            DeviceArray::from_ndarray(&ctx, &hx)?,
            DeviceArray::from_ndarray(&ctx, &hy)?,
        );
        let (kx, ky) = (view_kind(&mut rng), view_kind(&mut rng));
        let (vx, vy) = (device_view(&x, kx), device_view(&y, ky));
        let (wx, wy) = (host_view(&hx, kx), host_view(&hy, ky));
        if wx.shape() != wy.shape() {
            let r = axpy.launch([
                KernelArg::scalar(2.0f32),
                KernelArg::input(&vx),
                KernelArg::input(&vy),
                KernelArg::output(&mut DeviceArray::<f32>::zeros(&ctx, IxDyn(wx.shape()))?),
            ]);
            // Shapes broadcast by NumPy's rules (array_broadcast.rs checks the
            // values); `z` has x's shape, so a larger broadcast is an output error.
            match broadcast_shapes(&[wx.shape(), wy.shape()]) {
                Err(_) => assert!(
                    matches!(r, Err(Error::Shape(ArrayShapeError::Broadcast { .. }))),
                    "{r:?}"
                ),
                Ok(s) if s != wx.shape() => assert!(
                    matches!(r, Err(Error::Shape(ArrayShapeError::OutputShape { .. }))),
                    "{r:?}"
                ),
                Ok(_) => r?,
            }
            continue;
        }
        let a = rng.f32();
        let mut z = DeviceArray::<f32>::empty(&ctx, IxDyn(wx.shape()))?;
        axpy.launch([
            KernelArg::scalar(a),
            KernelArg::input(&vx),
            KernelArg::input(&vy),
            KernelArg::output(&mut z),
        ])?;
        let want = &wx * a + &wy;
        close(&z.to_vec()?, &want.iter().copied().collect::<Vec<_>>(), 1e-6);
        // In place into a transposed (strided) view, on a stream.
        let mut w = DeviceArray::from_ndarray(&ctx, &wy.t().as_standard_layout().into_owned())?;
        let mut vw = w.view_mut().reversed_axes();
        inplace.on(&stream).launch([
            KernelArg::scalar(a),
            KernelArg::input(&vx),
            KernelArg::output(&mut vw),
        ])?;
        stream.synchronize()?;
        close(&vw.to_vec()?, &want.iter().copied().collect::<Vec<_>>(), 1e-6);
    }
    // Wrong types are refused before anything launches.
    let x = DeviceArray::<f64, _>::zeros(&ctx, 4)?.into_dyn();
    let mut z = DeviceArray::<f32>::zeros(&ctx, IxDyn(&[4]))?;
    let r = axpy.launch([
        KernelArg::scalar(1.0f32),
        KernelArg::input(&x),
        KernelArg::input(&z.view()),
        KernelArg::output(&mut DeviceArray::<f32>::zeros(&ctx, IxDyn(&[4]))?),
    ]);
    assert!(matches!(
        r,
        Err(Error::Argument(ArgumentError::KindDiffers { name, given_array: true, .. })) if name == "x"
    ));
    let r = axpy.launch([
        KernelArg::scalar(1.0f64),
        KernelArg::input(&z.view()),
        KernelArg::input(&z.view()),
        KernelArg::output(&mut DeviceArray::<f32>::zeros(&ctx, IxDyn(&[4]))?),
    ]);
    assert!(matches!(
        r,
        Err(Error::Argument(ArgumentError::KindDiffers { name, given_array: false, .. })) if name == "a"
    ));
    z.fill(1.0)?;
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn reductions_on_random_layouts() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(9);
    for round in 0..40 {
        let sh = shape(&mut rng);
        let host = random(&mut rng, &sh, round % 2 == 1);
        let d = DeviceArray::from_ndarray(&ctx, &host)?;
        let kind = view_kind(&mut rng);
        let (v, w) = (device_view(&d, kind), host_view(&host, kind));
        let tol = 1e-4 * (1.0 + w.iter().map(|x| x.abs()).sum::<f32>());
        assert!((v.sum()? - w.sum()).abs() <= tol, "sum of {:?}", w.shape());
        assert!((v.dot(&v)? - w.iter().map(|x| x * x).sum::<f32>()).abs() <= tol);
        if w.is_empty() {
            assert!(v.max().is_err() && v.min().is_err() && v.argmax().is_err());
        } else {
            let max = w.iter().copied().fold(f32::NEG_INFINITY, f32::max);
            assert_eq!(v.max()?, max);
            assert_eq!(v.min()?, w.iter().copied().fold(f32::INFINITY, f32::min));
            let first = w.iter().position(|&x| x == max).unwrap();
            assert_eq!(v.argmax()?, first);
        }
        for axis in 0..w.ndim() {
            let lanes: usize = w
                .shape()
                .iter()
                .enumerate()
                .filter(|&(k, _)| k != axis)
                .map(|(_, &n)| n)
                .product();
            let got = v.sum_axis(axis)?.to_vec()?;
            let want = w.sum_axis(Axis(axis));
            close(
                &got,
                &want.iter().copied().collect::<Vec<_>>(),
                1e-4 * (1 + w.len_of(Axis(axis))) as f32,
            );
            if w.len_of(Axis(axis)) == 0 && lanes > 0 {
                assert!(v.max_axis(axis).is_err());
                continue;
            }
            let mx = v.max_axis(axis)?.to_vec()?;
            let want = w.map_axis(Axis(axis), |l| {
                l.iter().copied().fold(f32::NEG_INFINITY, f32::max)
            });
            assert_eq!(mx, want.iter().copied().collect::<Vec<_>>());
            let mn = v.min_axis(axis)?.to_vec()?;
            let want = w.map_axis(Axis(axis), |l| l.iter().copied().fold(f32::INFINITY, f32::min));
            assert_eq!(mn, want.iter().copied().collect::<Vec<_>>());
            let am = v.argmax_axis(axis)?.to_vec()?;
            let want = w.map_axis(Axis(axis), |l| {
                let m = l.iter().copied().fold(f32::NEG_INFINITY, f32::max);
                l.iter().position(|&x| x == m).unwrap_or(0) as i64
            });
            assert_eq!(am, want.iter().copied().collect::<Vec<_>>());
        }
    }
    // A reduction of the user's own, with a scalar and a post-map.
    let host = random(&mut rng, &[333, 7], false);
    let d = DeviceArray::from_ndarray(&ctx, &host)?;
    let mean =
        ReductionKernel::<f32>::new("const float *x, float w", "w * x", "a + b", "0.0f")?.post_map("a / n");
    let got = mean
        .reduce([KernelArg::input(&d.t()), KernelArg::scalar(3.0f32)])?
        .to_vec()?;
    close(&got, &[3.0 * host.mean().unwrap()], 1e-4);
    let by_row = mean
        .reduce_axis([KernelArg::input(&d), KernelArg::scalar(1.0f32)], 1)?
        .to_vec()?;
    close(
        &by_row,
        &host
            .mean_axis(Axis(1))
            .unwrap()
            .iter()
            .copied()
            .collect::<Vec<_>>(),
        1e-5,
    );
    // Integers, and NaN winning max as in numpy.
    let ints = Array::from_shape_fn(1000, |i| ((i * 7919) % 1013) as i32 - 500);
    let di = DeviceArray::from_ndarray(&ctx, &ints)?;
    assert_eq!(di.sum()?, ints.sum());
    assert_eq!(di.max()?, *ints.iter().max().unwrap());
    let mut nan = Array::from_elem(100, 1.0f32);
    nan[37] = f32::NAN;
    let dn = DeviceArray::from_ndarray(&ctx, &nan)?;
    assert!(dn.max()?.is_nan());
    assert_eq!(dn.argmax()?, 37);
    Ok(())
}

/// Arithmetic through `Expr`: operators fused into one kernel, the `Result` methods, and the
/// in-place forms, on random shapes and views, against `ndarray`.
#[test]
#[ignore = "needs a CUDA GPU"]
fn expressions_on_random_layouts() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(23);
    let vec = |a: &ArrayD<f32>| a.iter().copied().collect::<Vec<_>>();
    for round in 0..40 {
        let sh = shape(&mut rng);
        let (ha, hb) = (
            random(&mut rng, &sh, round % 2 == 1),
            random(&mut rng, &sh, round % 3 == 0),
        );
        let (a, b) = (
            DeviceArray::from_ndarray(&ctx, &ha)?,
            DeviceArray::from_ndarray(&ctx, &hb)?,
        );
        let (ka, kb) = (view_kind(&mut rng), view_kind(&mut rng));
        let (va, vb) = (device_view(&a, ka), device_view(&b, kb));
        let (wa, wb) = (host_view(&ha, ka), host_view(&hb, kb));
        if wa.shape() != wb.shape() {
            // Shapes broadcast by NumPy's rules (array_broadcast.rs checks the
            // values); the result has the broadcast shape.
            let r = (&va + &vb).eval();
            match broadcast_shapes(&[wa.shape(), wb.shape()]) {
                Err(_) => assert!(
                    matches!(r, Err(Error::Shape(ArrayShapeError::Broadcast { .. }))),
                    "{r:?}"
                ),
                Ok(s) => assert_eq!(r?.shape(), s.as_slice()),
            }
            continue;
        }
        let s = rng.f32() + 0.5;
        let got = (&va + &vb * s).eval()?.to_ndarray()?;
        assert_eq!(got.shape(), wa.shape());
        close(&vec(&got), &vec(&(&wa + &(&wb * s))), 1e-6);
        let got = (-&va / 2.0 - &vb).eval()?.to_ndarray()?;
        close(&vec(&got), &vec(&(&wa.mapv(|x| -x / 2.0) - &wb)), 1e-6);
        let got = (s * &va - &vb * &va + (1.0 - &vb)).eval()?.to_ndarray()?;
        let want = &wa * s - &wb * &wa + wb.mapv(|x| 1.0 - x);
        close(&vec(&got), &vec(&want), 1e-5);
        // Divisors kept away from zero.
        let got = (&va / (&vb * &vb + 1.0)).eval()?.to_ndarray()?;
        close(&vec(&got), &vec(&(&wa / &wb.mapv(|x| x * x + 1.0))), 1e-5);
        close(&vec(&va.add(&vb)?.to_ndarray()?), &vec(&(&wa + &wb)), 1e-6);
        close(&vec(&va.mul(3.0)?.to_ndarray()?), &vec(&(&wa * 3.0)), 1e-6);
        close(
            &vec(&va.sub(&vb * 2.0)?.to_ndarray()?),
            &vec(&(&wa - &(&wb * 2.0))),
            1e-6,
        );
        close(&vec(&va.neg()?.to_ndarray()?), &vec(&wa.mapv(|x| -x)), 0.0);
        // In place, into an owned array and into a transposed (strided) view.
        let mut w = va.to_contiguous()?;
        w.add_assign(&vb)?;
        w.mul_assign(2.0)?;
        w.div_assign(&vb * &vb + 1.0)?;
        let want = (&(&wa + &wb) * 2.0) / wb.mapv(|x| x * x + 1.0);
        close(&vec(&w.to_ndarray()?), &vec(&want), 1e-5);
        let mut t = DeviceArray::from_ndarray(&ctx, &wa.t().as_standard_layout().into_owned())?;
        let mut vt = t.view_mut().reversed_axes();
        vt.sub_assign(&vb)?;
        close(&vec(&vt.to_ndarray()?), &vec(&(&wa - &wb)), 1e-6);
        vt.assign_expr(&vb * s)?;
        close(&vec(&vt.to_ndarray()?), &vec(&(&wb * s)), 1e-6);
    }
    // Integers wrap as Rust's wrapping operations.
    let n = 1000 + (rng.next_u64() % 1000) as usize;
    let hi: Vec<i32> = (0..n).map(|_| rng.next_u64() as i32).collect();
    let hj: Vec<i32> = (0..n).map(|_| (rng.next_u64() as i32) | 1).collect();
    let (di, dj) = (
        DeviceArray::from_ndarray(&ctx, &Array::from(hi.clone()))?,
        DeviceArray::from_ndarray(&ctx, &Array::from(hj.clone()))?,
    );
    // `/` of integers is NumPy's true division (f64); `floor_divide` is the integer one.
    let got = (&di * &dj + 7 - di.expr().floor_divide(&dj)).eval()?.to_vec()?;
    let want: Vec<i32> = hi
        .iter()
        .zip(&hj)
        .map(|(&x, &y)| {
            let q = x.wrapping_div(y);
            // Floor: one less where the truncated quotient is inexact and negative.
            let q = if x.wrapping_rem(y) != 0 && ((x < 0) != (y < 0)) {
                q - 1
            } else {
                q
            };
            x.wrapping_mul(y).wrapping_add(7).wrapping_sub(q)
        })
        .collect();
    assert_eq!(got, want);
    let h8: Vec<i8> = (0..n).map(|_| rng.next_u64() as i8).collect();
    let d8 = DeviceArray::from_ndarray(&ctx, &Array::from(h8.clone()))?;
    let got = (-&d8 * 3 + 100).eval()?.to_vec()?;
    let want: Vec<i8> = h8
        .iter()
        .map(|&x| x.wrapping_neg().wrapping_mul(3).wrapping_add(100))
        .collect();
    assert_eq!(got, want);
    // An empty array, and an expression without arrays.
    let e = DeviceArray::<f32>::zeros(&ctx, IxDyn(&[0, 5]))?;
    assert_eq!((&e * 2.0 + &e).eval()?.shape(), &[0, 5]);
    use gpu_runtime::gpuarray::Operand;
    assert!(Operand::<f32>::into_expr(1.0f32).eval().is_err());
    Ok(())
}

/// Prefix sums and a scan of the user's own against the host, for lengths around the tile
/// size and past two levels of tiles, on strided views.
#[test]
#[ignore = "needs a CUDA GPU"]
fn scans_match_the_host() -> gpu_runtime::Result<()> {
    use gpu_runtime::__testing::scan_tile_of;
    use gpu_runtime::gpuarray::ScanKernel;
    let ctx = Context::default()?;
    let mut rng = Rng::new(31);
    let tile = scan_tile_of::<i32>() as usize;
    let mut lens = vec![
        0,
        1,
        2,
        7,
        tile - 1,
        tile,
        tile + 1,
        3 * tile + 5,
        4096 * tile + 3,
    ];
    lens.extend((0..4).map(|_| (rng.next_u64() % 300_000) as usize));
    let last = ScanKernel::<i32>::new("b", "-1")?;
    let max = ScanKernel::<i32>::new("a > b ? a : b", "(-2147483647 - 1)")?;
    for n in lens {
        let h: Vec<i32> = (0..n).map(|_| rng.next_u64() as i32).collect();
        let d = DeviceArray::from_ndarray(&ctx, &Array::from(h.clone()))?;
        let mut acc = 0i32;
        let incl: Vec<i32> = h
            .iter()
            .map(|&x| {
                acc = acc.wrapping_add(x);
                acc
            })
            .collect();
        assert_eq!(d.cumsum()?.to_vec()?, incl, "n = {n}");
        let mut excl = vec![0];
        excl.extend_from_slice(&incl[..n.saturating_sub(1)]);
        excl.truncate(n);
        assert_eq!(d.cumsum_exclusive()?.to_vec()?, excl, "n = {n}");
        // Order matters: `b` keeps the later element. (Only inclusive: `b` has no neutral
        // that is an identity on both sides, which an exclusive scan needs.)
        assert_eq!(last.inclusive(&d)?.to_vec()?, h, "n = {n}");
        let mut m = i32::MIN;
        let run: Vec<i32> = h
            .iter()
            .map(|&x| {
                m = m.max(x);
                m
            })
            .collect();
        assert_eq!(max.inclusive(&d)?.to_vec()?, run);
        // A reversed view with a step.
        let v = d.slice(s![..;-3])?;
        let hv: Vec<i32> = h.iter().rev().step_by(3).copied().collect();
        let mut acc = 0i32;
        let want: Vec<i32> = hv
            .iter()
            .map(|&x| {
                acc = acc.wrapping_add(x);
                acc
            })
            .collect();
        assert_eq!(v.cumsum()?.to_vec()?, want);
        // Floats: compared with a tolerance that grows with the running magnitude.
        let f: Vec<f64> = (0..n).map(|_| rng.f64() * 2.0 - 1.0).collect();
        let df = DeviceArray::from_ndarray(&ctx, &Array::from(f.clone()))?;
        let got = df.cumsum()?.to_vec()?;
        let (mut acc, mut mag) = (0.0f64, 0.0f64);
        for (k, (&g, &x)) in got.iter().zip(&f).enumerate() {
            acc += x;
            mag += x.abs();
            assert!(
                (g - acc).abs() <= 1e-12 * (1.0 + mag),
                "n = {n}, element {k}: {g} vs {acc}"
            );
        }
    }
    // Arrays of any shape scan in C order.
    let host = random(&mut rng, &[37, 60], false);
    let d = DeviceArray::from_ndarray(&ctx, &host)?;
    let got = d.cumsum()?.to_vec()?;
    let mut acc = 0.0f32;
    let want: Vec<f32> = host
        .iter()
        .map(|&x| {
            acc += x;
            acc
        })
        .collect();
    close(&got, &want, 1e-4);
    // Other layouts scan in C order too (NumPy's `axis=None` flattens the view as it reads).
    let got = d.t().cumsum()?.to_vec()?;
    let mut acc = 0.0f32;
    let want: Vec<f32> = host
        .t()
        .iter()
        .map(|&x| {
            acc += x;
            acc
        })
        .collect();
    close(&got, &want, 1e-4);
    Ok(())
}

/// Philox on the device: `u32` words bit for bit against the host implementation, floats
/// from the same words, reproducible per seed and layout, and normal moments.
#[test]
#[ignore = "needs a CUDA GPU"]
fn random_fills_match_philox() -> gpu_runtime::Result<()> {
    use gpu_runtime::__testing::philox4x32_10;
    let ctx = Context::default()?;
    let mut rng = Rng::new(41);
    let word = |seed: u64, i: usize, per: usize| {
        let g = (i / per) as u64;
        philox4x32_10(
            [g as u32, (g >> 32) as u32, 0, 0],
            [seed as u32, (seed >> 32) as u32],
        )
    };
    for n in [
        0usize,
        1,
        3,
        4,
        5,
        1023,
        100_003,
        (rng.next_u64() % 200_000) as usize,
    ] {
        let seed = rng.next_u64();
        let d = DeviceArray::<u32, _>::random_uniform(&ctx, n, seed)?;
        let want: Vec<u32> = (0..n).map(|i| word(seed, i, 4)[i % 4]).collect();
        assert_eq!(d.to_vec()?, want, "n = {n}");
        assert_eq!(
            DeviceArray::<u32, _>::random_uniform(&ctx, n, seed)?.to_vec()?,
            want
        );
        let f = DeviceArray::<f32, _>::random_uniform(&ctx, n, seed)?.to_vec()?;
        let want_f: Vec<f32> = want
            .iter()
            .map(|&w| (w >> 8) as f32 * (1.0 / 16_777_216.0))
            .collect();
        assert_eq!(f, want_f);
        let g = DeviceArray::<f64, _>::random_uniform(&ctx, n, seed)?.to_vec()?;
        let want_g: Vec<f64> = (0..n)
            .map(|i| {
                let r = word(seed, i, 2);
                let (hi, lo) = if i % 2 == 0 { (r[0], r[1]) } else { (r[2], r[3]) };
                ((((hi as u64) << 32) | lo as u64) >> 11) as f64 * (1.0 / 9_007_199_254_740_992.0)
            })
            .collect();
        assert_eq!(g, want_g);
    }
    // Another seed, another stream; a strided view gets the values of its C-order indices.
    let a = DeviceArray::<u32, _>::random_uniform(&ctx, 1000, 1)?.to_vec()?;
    assert_ne!(a, DeviceArray::<u32, _>::random_uniform(&ctx, 1000, 2)?.to_vec()?);
    let mut m = DeviceArray::<u32, _>::zeros(&ctx, (30, 40))?;
    m.slice_mut(s![.., ..;-2])?.fill_uniform(9)?;
    let host = m.to_ndarray()?;
    for r in 0..30 {
        for c in 0..20 {
            let i = r * 20 + c;
            assert_eq!(host[[r, 39 - 2 * c]], word(9, i, 4)[i % 4]);
            assert_eq!(host[[r, 38 - 2 * c]], 0);
        }
    }
    // Normal moments on 2^20 values (standard errors ~1e-3).
    let n = 1 << 20;
    let x = DeviceArray::<f32, _>::random_normal(&ctx, n, 77, 2.0, 3.0)?.to_vec()?;
    let mean = x.iter().map(|&v| v as f64).sum::<f64>() / n as f64;
    let var = x.iter().map(|&v| (v as f64 - mean).powi(2)).sum::<f64>() / n as f64;
    assert!(
        (mean - 2.0).abs() < 0.02 && (var / 9.0 - 1.0).abs() < 0.01,
        "{mean} {var}"
    );
    assert!(x.iter().all(|v| v.is_finite()));
    let y = DeviceArray::<f64, _>::random_normal(&ctx, n + 1, 78, 0.0, 1.0)?.to_vec()?;
    let mean = y.iter().sum::<f64>() / y.len() as f64;
    let var = y.iter().map(|&v| (v - mean).powi(2)).sum::<f64>() / y.len() as f64;
    let within = y.iter().filter(|v| v.abs() < 1.0).count() as f64 / y.len() as f64;
    assert!(mean.abs() < 0.01 && (var - 1.0).abs() < 0.01 && (within - 0.6827).abs() < 0.005);
    // Types without the distribution are refused.
    assert!(DeviceArray::<i32, _>::random_uniform(&ctx, 4, 1).is_err());
    assert!(DeviceArray::<u32, _>::random_normal(&ctx, 4, 1, 0, 1).is_err());
    Ok(())
}

#[gpu_runtime::elementwise("z = a * x + y")]
fn macro_axpy(a: f32, x: &DeviceArray<f32>, y: &DeviceArray<f32>, z: &mut DeviceArray<f32>);

#[gpu_runtime::elementwise("long long t = x * k; w = t - (long long)i; acc += t")]
fn macro_int(k: i64, x: &DeviceArray<i32>, w: &mut DeviceArray<i64>, acc: &mut DeviceArray<i64>);

/// `#[elementwise]` axpy on random arrays and views (contiguous, transposed, stepped,
/// reversed), writing into an array or a transposed view, on the default stream or a stream.
#[test]
#[ignore = "needs a CUDA GPU"]
fn macro_elementwise_matches_ndarray() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let stream = Stream::new(&ctx)?;
    let mut rng = Rng::new(41);
    for round in 0..40 {
        let sh = shape(&mut rng);
        let (hx, hy) = (
            random(&mut rng, &sh, false),
            random(&mut rng, &sh, round % 3 == 0),
        );
        let (x, y) = (
            DeviceArray::from_ndarray(&ctx, &hx)?,
            DeviceArray::from_ndarray(&ctx, &hy)?,
        );
        let (kx, ky) = (view_kind(&mut rng), view_kind(&mut rng));
        let (vx, vy) = (device_view(&x, kx), device_view(&y, ky));
        let (wx, wy) = (host_view(&hx, kx), host_view(&hy, ky));
        if wx.shape() != wy.shape() {
            let mut z = DeviceArray::<f32>::zeros(&ctx, IxDyn(wx.shape()))?;
            let r = macro_axpy(1.0, &vx, &vy, &mut z);
            match broadcast_shapes(&[wx.shape(), wy.shape()]) {
                Err(_) => assert!(
                    matches!(r, Err(Error::Shape(ArrayShapeError::Broadcast { .. }))),
                    "{r:?}"
                ),
                Ok(s) if s != wx.shape() => assert!(
                    matches!(r, Err(Error::Shape(ArrayShapeError::OutputShape { .. }))),
                    "{r:?}"
                ),
                Ok(_) => r?,
            }
            continue;
        }
        let a = rng.f32();
        let want = &wx * a + &wy;
        if round % 2 == 0 {
            let mut z = DeviceArray::<f32>::empty(&ctx, IxDyn(wx.shape()))?;
            macro_axpy(a, &vx, &vy, &mut z)?;
            close(&z.to_vec()?, &want.iter().copied().collect::<Vec<_>>(), 1e-6);
        } else {
            // Into a transposed view of an array of the reversed shape, on a stream.
            let rev: Vec<usize> = wx.shape().iter().rev().copied().collect();
            let mut zt = DeviceArray::<f32>::zeros(&ctx, IxDyn(&rev))?;
            let mut vz = zt.view_mut().reversed_axes();
            macro_axpy_on(&stream, a, &vx, &vy, &mut vz)?;
            stream.synchronize()?;
            let got = zt.to_ndarray()?;
            let got: Vec<f32> = got.t().iter().copied().collect();
            close(&got, &want.iter().copied().collect::<Vec<_>>(), 1e-6);
        }
    }
    Ok(())
}

/// A declared kernel of two statements on integers (a local, the index `i`, an output read
/// and written), over a stepped input and a transposed output, against the host.
#[test]
#[ignore = "needs a CUDA GPU"]
fn macro_elementwise_integers_and_statements() -> gpu_runtime::Result<()> {
    use gpu_runtime::ndarray::Array2;
    let ctx = Context::default()?;
    let mut rng = Rng::new(43);
    for round in 0..12 {
        let (rows, cols) = (
            1 + (rng.next_u64() % 40) as usize,
            1 + (rng.next_u64() % 300) as usize,
        );
        let hx = Array2::from_shape_fn((2 * rows, cols), |_| (rng.next_u64() % 2001) as i32 - 1000);
        let hacc = Array2::from_shape_fn((cols, rows), |_| (rng.next_u64() % 1_000_001) as i64 - 500_000);
        let k = (rng.next_u64() % 100) as i64 - 50;
        let x = DeviceArray::from_ndarray(&ctx, &hx)?;
        let mut acc = DeviceArray::from_ndarray(&ctx, &hacc)?;
        let mut w = DeviceArray::<i64, _>::zeros(&ctx, (rows, cols))?;
        let hv = hx.slice(s![..;2, ..]);
        if round % 2 == 0 {
            // Every other row of x, into w and the transpose of acc: the strided kernel.
            let vx = x.slice(s![..;2, ..])?;
            let mut vacc = acc.view_mut().reversed_axes();
            macro_int(k, &vx, &mut w, &mut vacc)?;
        } else {
            // Contiguous: the first `rows` rows, copied, and a C-order accumulator.
            let xc = DeviceArray::from_ndarray(&ctx, &hv.to_owned())?;
            let mut accc = DeviceArray::from_ndarray(&ctx, &hacc.t().as_standard_layout().into_owned())?;
            macro_int(k, &xc, &mut w, &mut accc)?;
            acc = DeviceArray::from_ndarray(&ctx, &accc.to_ndarray()?.t().as_standard_layout().into_owned())?;
        }
        let (gw, gacc) = (w.to_ndarray()?, acc.to_ndarray()?);
        for r in 0..rows {
            for c in 0..cols {
                let t = i64::from(hv[[r, c]]) * k;
                assert_eq!(
                    gw[[r, c]],
                    t - (r * cols + c) as i64,
                    "w[{r}, {c}] in round {round}"
                );
                assert_eq!(gacc[[c, r]], hacc[[c, r]] + t, "acc[{c}, {r}] in round {round}");
            }
        }
    }
    Ok(())
}

/// `i` is the flat index in C order whatever the layout: a Fortran-ordered output gets the
/// strided kernel when the operation uses `i` (the contiguous one counts in storage order).
#[test]
#[ignore = "needs a CUDA GPU"]
fn the_index_i_counts_in_c_order_for_fortran_arrays() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(1717);
    let k = ElementwiseKernel::new("const int *x, int *z", "z = x + 10 * i")?;
    for (a, b) in [(3usize, 5usize), (1, 7), (16, 33)] {
        let host = Array::from_shape_fn((a, b).f(), |_| (rng.next_u64() % 1000) as i32);
        let x = DeviceArray::from_ndarray(&ctx, &host)?;
        let mut z = DeviceArray::<i32, _>::zeros(&ctx, (a, b).f())?;
        k.launch([KernelArg::input(&x), KernelArg::output(&mut z)])?;
        let want = Array::from_shape_fn((a, b), |(r, c)| host[[r, c]] + 10 * (r * b + c) as i32);
        assert_eq!(z.to_ndarray()?, want, "{a} x {b}");
    }
    Ok(())
}

/// `f32` and `f64` for the cuRAND tests, through `f64`.
trait CurandTestFloat: gpu_runtime::gpuarray::CurandFloat + Into<f64> + PartialEq + std::fmt::Debug {
    fn of(x: f64) -> Self;
}
impl CurandTestFloat for f32 {
    fn of(x: f64) -> Self {
        x as f32
    }
}
impl CurandTestFloat for f64 {
    fn of(x: f64) -> Self {
        x
    }
}

/// Mean, variance and the fraction within `lo..=hi`.
fn moments<T: CurandTestFloat>(v: &[T], lo: f64, hi: f64) -> (f64, f64, f64) {
    let n = v.len() as f64;
    let xs: Vec<f64> = v.iter().map(|&x| x.into()).collect();
    let mean = xs.iter().sum::<f64>() / n;
    let var = xs.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / n;
    let inside = xs.iter().filter(|&&x| (lo..=hi).contains(&x)).count() as f64 / n;
    (mean, var, inside)
}

fn curand_uniform<T: CurandTestFloat>(ctx: &Context) -> gpu_runtime::Result<()> {
    use gpu_runtime::gpuarray::CurandGenerator;
    for n in [0usize, 1, 7, (1 << 20) + 3] {
        let fill = |seed: u64| -> gpu_runtime::Result<Vec<T>> {
            let mut gen = CurandGenerator::new(ctx, seed)?;
            let mut a = DeviceArray::<T, _>::zeros(ctx, n)?;
            gen.fill_uniform(&mut a)?;
            a.to_vec()
        };
        let v = fill(7)?;
        assert_eq!(v.len(), n);
        assert!(
            v.iter().all(|&x| {
                let x: f64 = x.into();
                x > 0.0 && x <= 1.0
            }),
            "n {n}: a value outside (0, 1]"
        );
        assert_eq!(fill(7)?, v, "n {n}: the same seed gave other values");
        if n >= 7 {
            assert_ne!(fill(8)?, v, "n {n}: another seed gave the same values");
        }
        if n > 1000 {
            let (mean, var, _) = moments(&v, 0.0, 1.0);
            assert!((mean - 0.5).abs() < 0.002, "n {n}: mean {mean}");
            assert!((var - 1.0 / 12.0).abs() < 0.001, "n {n}: variance {var}");
        }
    }
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn curand_uniform_fills_are_uniform_and_reproducible() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    println!("cuRAND {}", gpu_runtime::gpuarray::curand_version()?);
    curand_uniform::<f32>(&ctx)?;
    curand_uniform::<f64>(&ctx)
}

fn curand_normal<T: CurandTestFloat>(ctx: &Context) -> gpu_runtime::Result<()> {
    use gpu_runtime::gpuarray::CurandGenerator;
    for n in [1usize, 2, 7, 1 << 20, (1 << 20) + 1] {
        let fill = |seed: u64| -> gpu_runtime::Result<Vec<T>> {
            let mut gen = CurandGenerator::new(ctx, seed)?;
            let mut a = DeviceArray::<T, _>::zeros(ctx, n)?;
            gen.fill_normal(&mut a, T::of(2.0), T::of(3.0))?;
            a.to_vec()
        };
        let v = fill(11)?;
        assert_eq!(v.len(), n);
        // The last value of an odd length comes from the scratch pair: written, and finite.
        let last: f64 = v[n - 1].into();
        assert!(last.is_finite() && last != 0.0, "n {n}: last value {last}");
        assert!(v.iter().all(|&x| Into::<f64>::into(x).is_finite()));
        assert_eq!(fill(11)?, v, "n {n}: the same seed gave other values");
        if n >= 7 {
            assert_ne!(fill(12)?, v, "n {n}: another seed gave the same values");
        }
        if n > 1000 {
            let (mean, var, inside) = moments(&v, 2.0 - 3.0, 2.0 + 3.0);
            assert!((mean - 2.0).abs() < 0.02, "n {n}: mean {mean}");
            assert!((var - 9.0).abs() < 0.06, "n {n}: variance {var}");
            assert!(
                (inside - 0.6827).abs() < 0.003,
                "n {n}: {inside} within one sigma"
            );
        }
    }
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn curand_normal_fills_have_the_mean_and_std_asked() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    curand_normal::<f32>(&ctx)?;
    curand_normal::<f64>(&ctx)
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn curand_fills_on_streams_are_ordered() -> gpu_runtime::Result<()> {
    use gpu_runtime::gpuarray::CurandGenerator;
    let ctx = Context::default()?;
    let (s1, s2) = (Stream::new(&ctx)?, Stream::new(&ctx)?);
    let mut gen = CurandGenerator::new(&ctx, 3)?;
    let n = (1 << 22) + 1;
    for _ in 0..3 {
        // Zeroed on s1, filled on s2: the fill waits for the zeros, so no zero is left.
        let mut a = DeviceArray::<f32, _>::empty(&ctx, n)?;
        a.on_mut(&s1).fill(0.0)?;
        gen.on(&s2).fill_uniform(&mut a)?;
        assert!(a.to_vec()?.iter().all(|&x| x > 0.0 && x <= 1.0));
        let mut b = DeviceArray::<f64, _>::empty(&ctx, n)?;
        b.on_mut(&s1).fill(0.0)?;
        gen.on(&s2).fill_normal(&mut b, 2.0, 3.0)?;
        let v = b.to_vec()?;
        assert!(v.iter().all(|x| x.is_finite()) && v[n - 1] != 0.0);
    }
    // An array dropped right after a fill queued on s2: its memory is not reused before the
    // fill has run, so the array allocated next keeps its own values.
    for _ in 0..3 {
        let mut a = DeviceArray::<f32, _>::empty(&ctx, n)?;
        gen.on(&s2).fill_normal(&mut a, 0.0, 1.0)?;
        drop(a);
        let mut c = DeviceArray::<f32, _>::empty(&ctx, n)?;
        c.on_mut(&s1).fill(7.0)?;
        s1.synchronize()?;
        ctx.synchronize()?;
        assert!(c.to_vec()?.iter().all(|&x| x == 7.0));
    }
    // A stream of another context is refused.
    // (`Context::create` makes a context of its own; `Context::new` is the device's primary one.)
    let other = Context::create(ctx.device(), gpu_runtime::driver::ContextFlags::SCHED_AUTO)?;
    let s = Stream::new(&other)?;
    let mut a = DeviceArray::<f32, _>::zeros(&ctx, 4)?;
    let e = gen.on(&s).fill_uniform(&mut a).unwrap_err();
    assert!(
        matches!(
            e,
            gpu_runtime::gpuarray::CurandError::Cuda(Error::WrongContext { .. })
        ),
        "{e}"
    );
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn curand_fills_contiguous_arrays_only() -> gpu_runtime::Result<()> {
    use gpu_runtime::gpuarray::{CurandError, CurandGenerator};
    let ctx = Context::default()?;
    let mut gen = CurandGenerator::new(&ctx, 5)?;
    // Fortran order is contiguous: filled.
    let mut f = DeviceArray::<f64, _>::zeros(&ctx, (3, 5).f())?;
    gen.fill_uniform(&mut f)?;
    assert!(f.to_vec()?.iter().all(|&x| x > 0.0 && x <= 1.0));
    // A contiguous slice of rows: filled, and nothing else.
    let mut a = DeviceArray::<f32, _>::zeros(&ctx, (8, 6))?;
    gen.fill_normal(&mut a.slice_mut(s![2..5, ..])?, 0.0, 1.0)?;
    let h = a.to_ndarray()?;
    assert!(h
        .slice(s![..2, ..])
        .iter()
        .chain(h.slice(s![5.., ..]).iter())
        .all(|&x| x == 0.0));
    assert!(h.slice(s![2..5, ..]).iter().all(|&x| x != 0.0));
    // Steps: refused with a typed error that says what to do, and nothing is written.
    let mut z = DeviceArray::<f32, _>::zeros(&ctx, (8, 6))?;
    match gen.fill_uniform(&mut z.slice_mut(s![.., ..;2])?) {
        Err(CurandError::NotContiguous {
            operation,
            shape,
            strides,
        }) => {
            assert_eq!(operation, "CurandGenerator::fill_uniform");
            assert_eq!((shape, strides), (vec![8, 3], vec![6, 2]));
        }
        other => panic!("expected CurandError::NotContiguous, got {other:?}"),
    }
    assert!(matches!(
        gen.fill_normal(&mut z.slice_mut(s![..;2, ..])?, 0.0, 1.0),
        Err(CurandError::NotContiguous { .. })
    ));
    assert!(z.to_vec()?.iter().all(|&x| x == 0.0));
    Ok(())
}
