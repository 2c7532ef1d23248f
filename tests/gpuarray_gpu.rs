//! Device arrays and generated kernels on a GPU, each compared with `ndarray` on the host on
//! random data: random shapes (empty ones included), C and Fortran order, and views that are
//! not contiguous (steps, negative steps, transposes).

use gpu_runtime::gpuarray::{DeviceArray, ElementwiseKernel, KernelArg, PooledArray, ReductionKernel};
use gpu_runtime::ndarray::{s, Array, ArrayD, Axis, IxDyn, ShapeBuilder};
use gpu_runtime::{Context, Error, Stream};
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
    p.assign_on(&stream, &d.t())?;
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
            assert!(matches!(r, Err(Error::SizeMismatch { .. })));
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
        inplace.launch_on(
            &stream,
            [
                KernelArg::scalar(a),
                KernelArg::input(&vx),
                KernelArg::output(&mut vw),
            ],
        )?;
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
    assert!(matches!(r, Err(Error::ArgumentMismatch { .. })));
    let r = axpy.launch([
        KernelArg::scalar(1.0f64),
        KernelArg::input(&z.view()),
        KernelArg::input(&z.view()),
        KernelArg::output(&mut DeviceArray::<f32>::zeros(&ctx, IxDyn(&[4]))?),
    ]);
    assert!(matches!(r, Err(Error::ArgumentMismatch { .. })));
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
