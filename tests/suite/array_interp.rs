//! `interp` on a GPU against NumPy's loop written on the host (`numpy/_core/src/multiarray/
//! compiled_base.c`: the interval by binary search, the slope's line from the left end, the
//! fallbacks where it is NaN), on random sorted points with repeats, values inside, outside,
//! on the points, NaN and infinite, of f64, f32 and i32 inputs; then NumPy's documented
//! examples by value and the refusals.

use gpu_runtime::gpuarray::{self, DeviceArray};
use gpu_runtime::ndarray::{arr1, Array1, Array2};
use gpu_runtime::{ArrayShapeError, Context, Error, Stream};
use gpu_suite::Rng;

fn numpy_interp(x: f64, xp: &[f64], fp: &[f64], left: f64, right: f64) -> f64 {
    let n = xp.len();
    if x.is_nan() {
        return x;
    }
    if x < xp[0] {
        return left;
    }
    if x > xp[n - 1] {
        return right;
    }
    if x == xp[n - 1] {
        return fp[n - 1];
    }
    // The last j with xp[j] <= x.
    let j = (0..n).rev().find(|&j| xp[j] <= x).unwrap();
    if x == xp[j] {
        return fp[j];
    }
    let slope = (fp[j + 1] - fp[j]) / (xp[j + 1] - xp[j]);
    let mut r = slope * (x - xp[j]) + fp[j];
    if r.is_nan() {
        r = slope * (x - xp[j + 1]) + fp[j + 1];
        if r.is_nan() && fp[j] == fp[j + 1] {
            r = fp[j];
        }
    }
    r
}

fn close(got: f64, want: f64) -> bool {
    (got.is_nan() && want.is_nan()) || got == want || (got - want).abs() <= 1e-12 * want.abs().max(1.0)
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn interpolation_matches_numpys_loop() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(8128);
    for n in [1usize, 2, 3, 10, 257] {
        let mut xp: Vec<f64> = (0..n)
            .map(|_| (rng.next_u64() % 200) as f64 / 4.0 - 20.0)
            .collect();
        xp.sort_by(f64::total_cmp);
        let fp: Vec<f64> = (0..n).map(|_| rng.f64() * 10.0 - 5.0).collect();
        let mut x: Vec<f64> = (0..600).map(|_| rng.f64() * 60.0 - 30.0).collect();
        x.extend(&xp);
        x.extend([
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            xp[0] - 1.0,
            xp[n - 1] + 1.0,
        ]);
        // A whole number of rows of 5 (the points are taken as a 2-d array).
        while !x.len().is_multiple_of(5) {
            x.push(xp[0]);
        }
        let dx = DeviceArray::from_ndarray(
            &ctx,
            &Array2::from_shape_vec((x.len() / 5, 5), x.clone()).unwrap(),
        )?;
        let dxp = DeviceArray::from_ndarray(&ctx, &Array1::from(xp.clone()))?;
        let dfp = DeviceArray::from_ndarray(&ctx, &Array1::from(fp.clone()))?;
        for (left, right) in [(None, None), (Some(-100.0), Some(f64::NAN))] {
            let got = gpuarray::interp(&dx, &dxp, &dfp, left, right)?;
            assert_eq!(got.shape(), dx.shape());
            let got = got.to_vec()?;
            let (l, r) = (left.unwrap_or(fp[0]), right.unwrap_or(fp[n - 1]));
            for (i, (&g, &xi)) in got.iter().zip(&x).enumerate() {
                let want = numpy_interp(xi, &xp, &fp, l, r);
                assert!(close(g, want), "n {n}, x[{i}] = {xi}: {g} against {want}");
            }
        }
        // f32 and i32 inputs are computed in f64.
        let x32: Vec<f32> = x.iter().map(|&v| v as f32).collect();
        let xp32: Vec<f32> = xp.iter().map(|&v| v as f32).collect();
        let fp32: Vec<f32> = fp.iter().map(|&v| v as f32).collect();
        let got = gpuarray::interp(
            &DeviceArray::from_ndarray(&ctx, &Array1::from(x32.clone()))?,
            &DeviceArray::from_ndarray(&ctx, &Array1::from(xp32.clone()))?,
            &DeviceArray::from_ndarray(&ctx, &Array1::from(fp32.clone()))?,
            None,
            None,
        )?
        .to_vec()?;
        let xp64: Vec<f64> = xp32.iter().map(|&v| f64::from(v)).collect();
        let fp64: Vec<f64> = fp32.iter().map(|&v| f64::from(v)).collect();
        for (&g, &xi) in got.iter().zip(&x32) {
            let want = numpy_interp(f64::from(xi), &xp64, &fp64, fp64[0], fp64[n - 1]);
            assert!(close(g, want), "f32 n {n}, x = {xi}: {g} against {want}");
        }
        let xi: Vec<i32> = (0..100).map(|k| k - 50).collect();
        let xpi: Vec<i32> = xp.iter().map(|&v| v as i32).collect();
        let fpi: Vec<i32> = fp.iter().map(|&v| (v * 10.0) as i32).collect();
        let got = gpuarray::interp(
            &DeviceArray::from_ndarray(&ctx, &Array1::from(xi.clone()))?,
            &DeviceArray::from_ndarray(&ctx, &Array1::from(xpi.clone()))?,
            &DeviceArray::from_ndarray(&ctx, &Array1::from(fpi.clone()))?,
            None,
            None,
        )?
        .to_vec()?;
        let xpf: Vec<f64> = xpi.iter().map(|&v| f64::from(v)).collect();
        let fpf: Vec<f64> = fpi.iter().map(|&v| f64::from(v)).collect();
        for (&g, &x) in got.iter().zip(&xi) {
            let want = numpy_interp(f64::from(x), &xpf, &fpf, fpf[0], fpf[n - 1]);
            assert!(close(g, want), "i32 n {n}, x = {x}: {g} against {want}");
        }
    }
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn numpys_interp_examples_by_value() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let xp = DeviceArray::from_ndarray(&ctx, &arr1(&[1.0, 2.0, 3.0]))?;
    let fp = DeviceArray::from_ndarray(&ctx, &arr1(&[3.0, 2.0, 0.0]))?;
    let x = DeviceArray::from_ndarray(&ctx, &arr1(&[2.5]))?;
    assert_eq!(gpuarray::interp(&x, &xp, &fp, None, None)?.to_vec()?, [1.0]);
    let x = DeviceArray::from_ndarray(&ctx, &arr1(&[0.0, 1.0, 1.5, 2.72, 3.25]))?;
    let got = gpuarray::interp(&x, &xp, &fp, None, None)?.to_vec()?;
    for (g, w) in got.iter().zip([3.0, 3.0, 2.5, 0.56, 0.0]) {
        assert!((g - w).abs() < 1e-12, "{got:?}");
    }
    let x = DeviceArray::from_ndarray(&ctx, &arr1(&[3.25]))?;
    assert_eq!(
        gpuarray::interp(&x, &xp, &fp, None, Some(-99.0))?.to_vec()?,
        [-99.0]
    );
    // Repeated points and infinite values: np.interp([0.5, 2, 5, nan, -inf, inf], [1, 2, 2, 3], [1, 5, 7, 8]).
    let xp = DeviceArray::from_ndarray(&ctx, &arr1(&[1.0, 2.0, 2.0, 3.0]))?;
    let fp = DeviceArray::from_ndarray(&ctx, &arr1(&[1.0, 5.0, 7.0, 8.0]))?;
    let x = DeviceArray::from_ndarray(
        &ctx,
        &arr1(&[0.5, 2.0, 5.0, f64::NAN, f64::NEG_INFINITY, f64::INFINITY]),
    )?;
    let got = gpuarray::interp(&x, &xp, &fp, None, None)?.to_vec()?;
    assert_eq!(
        [got[0], got[1], got[2], got[4], got[5]],
        [1.0, 7.0, 8.0, 1.0, 8.0]
    );
    assert!(got[3].is_nan());
    // Flat infinite ends: np.interp([1.5], [1, 2], [inf, inf]) is inf.
    let xp2 = DeviceArray::from_ndarray(&ctx, &arr1(&[1.0, 2.0]))?;
    let inf = DeviceArray::from_ndarray(&ctx, &arr1(&[f64::INFINITY, f64::INFINITY]))?;
    let x = DeviceArray::from_ndarray(&ctx, &arr1(&[1.5]))?;
    assert_eq!(
        gpuarray::interp(&x, &xp2, &inf, None, None)?.to_vec()?,
        [f64::INFINITY]
    );
    // On a stream; no points and fp of another length are refused.
    let stream = Stream::new(&ctx)?;
    let y = gpuarray::on(&stream).interp(&x, &xp2, &inf, None, None)?;
    stream.synchronize()?;
    assert_eq!(y.to_vec()?, [f64::INFINITY]);
    let none = DeviceArray::<f64, _>::zeros(&ctx, 0)?;
    assert!(matches!(
        gpuarray::interp(&x, &none, &none, None, None),
        Err(Error::Shape(ArrayShapeError::ElementCounts { first: 0, .. }))
    ));
    assert!(matches!(
        gpuarray::interp(&x, &xp, &xp2, None, None),
        Err(Error::Shape(ArrayShapeError::ElementCounts {
            first: 4,
            second: 2,
            ..
        }))
    ));
    Ok(())
}
