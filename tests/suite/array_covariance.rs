//! `cov` and `corrcoef` on a GPU against NumPy's algorithm written on the host in `f64` (and
//! complex `f64`), on random data of several element types: one and two axes, `rowvar`, a
//! second array `y`, `bias` and `ddof`, frequency and analytic weights, one variable, no
//! variables, and the refusals; `cov_as` (NumPy's `dtype=`) in `f32`, `f16` and `Complex32`;
//! and `unravel_index`/`ravel_multi_index` on a stream.

use gpu_runtime::gpuarray::{self, Cov, DeviceArray, IndexMode};
use gpu_runtime::half::f16;
use gpu_runtime::ndarray::{arr1, Array2};
use gpu_runtime::types::{Complex32, Complex64};
use gpu_runtime::{ArrayShapeError, Context, Error, Stream};
use gpu_suite::Rng;

/// NumPy's `cov` of the variables `x` (rows, already as `f64` complex numbers and transposed
/// for `rowvar`) with the weights `w`, `aw` the analytic ones.
fn host_cov(x: &Array2<Complex64>, ddof: f64, w: Option<&[f64]>, aw: Option<&[f64]>) -> Array2<Complex64> {
    let (p, n) = x.dim();
    let w: Vec<f64> = w.map_or(vec![1.0; n], <[f64]>::to_vec);
    let w_sum: f64 = w.iter().sum();
    let weighted = w.iter().any(|&v| v != 1.0) || aw.is_some();
    let fact = if !weighted {
        n as f64 - ddof
    } else if ddof == 0.0 {
        w_sum
    } else if let Some(aw) = aw {
        w_sum - ddof * w.iter().zip(aw).map(|(a, b)| a * b).sum::<f64>() / w_sum
    } else {
        w_sum - ddof
    };
    let fact = fact.max(0.0);
    let means: Vec<Complex64> = (0..p)
        .map(|a| (0..n).map(|k| x[(a, k)] * w[k]).sum::<Complex64>() / w_sum)
        .collect();
    Array2::from_shape_fn((p, p), |(a, b)| {
        (0..n)
            .map(|k| (x[(a, k)] - means[a]) * ((x[(b, k)] - means[b]) * w[k]).conj())
            .sum::<Complex64>()
            / fact
    })
}

fn close(got: &[Complex64], want: &Array2<Complex64>, tol: f64, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}");
    for (g, w) in got.iter().zip(want.iter()) {
        assert!(
            near(g.re, w.re, tol) && near(g.im, w.im, tol),
            "{what}: {g} against {w}"
        );
    }
}

/// [`close`] of a real result: the real parts (the host's complex arithmetic gives `0 * inf`,
/// NaN, as an imaginary part where a real division by a zero divisor gives none).
fn close_real(got: &[f64], want: &Array2<Complex64>, tol: f64, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}");
    for (g, w) in got.iter().zip(want.iter()) {
        assert!(near(*g, w.re, tol), "{what}: {g} against {w}");
    }
}

fn near(g: f64, w: f64, tol: f64) -> bool {
    g == w || (g - w).abs() <= tol * w.abs().max(1.0) || (g.is_nan() && w.is_nan())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn cov_matches_numpys_algorithm() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(31);
    for (p, n) in [(2usize, 3usize), (3, 7), (1, 5), (5, 2), (4, 40)] {
        let host = Array2::from_shape_fn((p, n), |_| (rng.next_u64() % 64) as f64 / 4.0 - 8.0);
        let y_host = Array2::from_shape_fn((p, n), |_| (rng.next_u64() % 64) as f64 / 4.0);
        let to_c = |a: &Array2<f64>| a.mapv(|v| Complex64::new(v, 0.0));
        for rowvar in [true, false] {
            // With rowvar false the columns are the variables: the host transposes, but for a
            // single row (NumPy keeps it one variable).
            let vars = |a: &Array2<f64>| {
                if rowvar || a.nrows() == 1 {
                    to_c(a)
                } else {
                    to_c(&a.t().to_owned())
                }
            };
            let x = DeviceArray::from_ndarray(&ctx, &host)?;
            let y = DeviceArray::from_ndarray(&ctx, &y_host)?;
            for (bias, ddof) in [
                (false, None),
                (true, None),
                (false, Some(0)),
                (false, Some(2)),
                (true, Some(1)),
            ] {
                let d = ddof.unwrap_or(if bias { 0 } else { 1 }) as f64;
                let opts = Cov {
                    rowvar,
                    bias,
                    ddof,
                    ..Cov::default()
                };
                let what = format!("{p}x{n} rowvar {rowvar} bias {bias} ddof {ddof:?}");
                let want = host_cov(&vars(&host), d, None, None);
                let got = gpuarray::cov(&x, &opts)?;
                let one = want.len() == 1;
                assert_eq!(got.ndim(), if one { 0 } else { 2 }, "{what}");
                close_real(&got.to_vec()?, &want, 1e-12, &what);
                // `y` appended as more variables.
                let both = ndarray_concat(&vars(&host), &vars(&y_host));
                let want = host_cov(&both, d, None, None);
                let got = gpuarray::cov_xy(&x, &y, &opts)?.to_vec()?;
                close_real(&got, &want, 1e-12, &format!("{what} with y"));
            }
            // Weights along the observations.
            let obs = if rowvar || p == 1 { n } else { p };
            let fw: Vec<i64> = (0..obs).map(|_| (rng.next_u64() % 4) as i64 + 1).collect();
            let aw: Vec<f64> = (0..obs).map(|_| rng.f64().abs() + 0.25).collect();
            let (dfw, daw) = (
                DeviceArray::from_ndarray(&ctx, &arr1(&fw))?,
                DeviceArray::from_ndarray(&ctx, &arr1(&aw))?,
            );
            let fwf: Vec<f64> = fw.iter().map(|&v| v as f64).collect();
            let both: Vec<f64> = fwf.iter().zip(&aw).map(|(a, b)| a * b).collect();
            for (f, a, ddof) in [
                (true, false, 1.0),
                (false, true, 1.0),
                (true, true, 1.0),
                (false, true, 0.0),
                (true, true, 3.0),
            ] {
                let opts = Cov {
                    rowvar,
                    ddof: Some(ddof as i64),
                    fweights: f.then(|| dfw.view()),
                    aweights: a.then(|| daw.view()),
                    ..Cov::default()
                };
                let w = match (f, a) {
                    (true, false) => &fwf,
                    (false, true) => &aw,
                    _ => &both,
                };
                let want = host_cov(&vars(&host), ddof, Some(w), a.then_some(&aw[..]));
                let got = gpuarray::cov(&x, &opts)?.to_vec()?;
                close_real(
                    &got,
                    &want,
                    1e-11,
                    &format!("{p}x{n} rowvar {rowvar} weights {f} {a} ddof {ddof}"),
                );
            }
        }
    }
    // Other element types, all computed in f64 (f32, i32, u8, f16) or Complex64 (Complex32).
    let h = Array2::from_shape_fn((3, 6), |(i, j)| ((i * 7 + j * 3) % 11) as f64);
    let want = host_cov(&h.mapv(|v| Complex64::new(v, 0.0)), 1.0, None, None);
    let covs = [
        (
            "f32",
            gpuarray::cov(
                &DeviceArray::from_ndarray(&ctx, &h.mapv(|v| v as f32))?,
                &Cov::default(),
            )?,
        ),
        (
            "i32",
            gpuarray::cov(
                &DeviceArray::from_ndarray(&ctx, &h.mapv(|v| v as i32))?,
                &Cov::default(),
            )?,
        ),
        (
            "u8",
            gpuarray::cov(
                &DeviceArray::from_ndarray(&ctx, &h.mapv(|v| v as u8))?,
                &Cov::default(),
            )?,
        ),
        (
            "f16",
            gpuarray::cov(
                &DeviceArray::from_ndarray(&ctx, &h.mapv(f16::from_f64))?,
                &Cov::default(),
            )?,
        ),
    ];
    for (what, c) in covs {
        close_real(&c.to_vec()?, &want, 1e-12, what);
    }
    let zc = Array2::from_shape_fn((2, 5), |(i, j)| {
        Complex32::new((i + j) as f32, (i * j) as f32 - 1.5)
    });
    let want = host_cov(
        &zc.mapv(|v| Complex64::new(v.re.into(), v.im.into())),
        1.0,
        None,
        None,
    );
    let got: Vec<Complex64> =
        gpuarray::cov(&DeviceArray::from_ndarray(&ctx, &zc)?, &Cov::default())?.to_vec()?;
    close(&got, &want, 1e-12, "Complex32");
    // A 1-d array is one variable (0-d result); two 1-d arrays two (NumPy's cov(x, y)).
    let v = DeviceArray::from_ndarray(&ctx, &arr1(&[1.0f64, 2.0, 4.0, 7.0]))?;
    let w = DeviceArray::from_ndarray(&ctx, &arr1(&[2.0f64, 0.0, -1.0, 3.0]))?;
    let one = gpuarray::cov(&v, &Cov::default())?;
    assert_eq!((one.ndim(), one.to_vec()?), (0, vec![7.0]));
    let two = gpuarray::cov_xy(&v, &w, &Cov::default())?.to_vec()?;
    for (g, w) in two.iter().zip([7.0, 5.0 / 3.0, 5.0 / 3.0, 10.0 / 3.0]) {
        assert!((g - w).abs() < 1e-12, "{two:?}");
    }
    // No variables: 0 x 0 (CuPy's test_cov_empty); ddof past the observations: NumPy's inf/NaN.
    let empty = DeviceArray::<f64, _>::zeros(&ctx, (0, 1))?;
    assert_eq!(gpuarray::cov(&empty, &Cov::default())?.shape(), &[0, 0]);
    let x = DeviceArray::from_ndarray(&ctx, &h)?;
    let opts = Cov {
        ddof: Some(6),
        ..Cov::default()
    };
    let got = gpuarray::cov(&x, &opts)?.to_vec()?;
    assert!(got.iter().all(|v| v.is_infinite() || v.is_nan()), "{got:?}");
    // The refusals: three axes, weights of another length, negative weights.
    let cube = DeviceArray::<f64, _>::zeros(&ctx, (3, 4, 2))?;
    let r = gpuarray::cov(&cube, &Cov::default());
    assert!(
        matches!(r, Err(Error::Shape(ArrayShapeError::TooManyAxes { axes: 3, .. }))),
        "{r:?}"
    );
    let short = DeviceArray::from_ndarray(&ctx, &arr1(&[1i64, 2]))?;
    let opts = Cov {
        fweights: Some(short.view()),
        ..Cov::default()
    };
    let r = gpuarray::cov(&x, &opts);
    assert!(
        matches!(r, Err(Error::Shape(ArrayShapeError::ElementCounts { .. }))),
        "{r:?}"
    );
    let negative = DeviceArray::from_ndarray(&ctx, &arr1(&[1.0f64, 2.0, -1.0, 1.0, 1.0, 1.0]))?;
    let opts = Cov {
        aweights: Some(negative.view()),
        ..Cov::default()
    };
    let r = gpuarray::cov(&x, &opts);
    assert!(
        matches!(r, Err(Error::Shape(ArrayShapeError::NegativeValue { .. }))),
        "{r:?}"
    );
    Ok(())
}

/// The rows of `a` then those of `b`.
fn ndarray_concat(a: &Array2<Complex64>, b: &Array2<Complex64>) -> Array2<Complex64> {
    gpu_runtime::ndarray::concatenate(gpu_runtime::ndarray::Axis(0), &[a.view(), b.view()]).unwrap()
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn corrcoef_divides_by_the_deviations_and_clips() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(4);
    for (p, n) in [(2usize, 3usize), (4, 9), (3, 50)] {
        let host = Array2::from_shape_fn((p, n), |_| rng.f64() * 10.0 - 5.0);
        let c = host_cov(&host.mapv(|v| Complex64::new(v, 0.0)), 1.0, None, None);
        let want = Array2::from_shape_fn((p, p), |(a, b)| {
            let v = c[(a, b)].re / c[(a, a)].re.sqrt() / c[(b, b)].re.sqrt();
            Complex64::new(v.clamp(-1.0, 1.0), 0.0)
        });
        let x = DeviceArray::from_ndarray(&ctx, &host)?;
        let got = gpuarray::corrcoef(&x, true)?.to_vec()?;
        assert!(got.iter().all(|v| (-1.0..=1.0).contains(v)), "{got:?}");
        close_real(&got, &want, 1e-12, &format!("{p}x{n}"));
        // The columns as variables, beside a second array.
        let y = DeviceArray::from_ndarray(&ctx, &host)?;
        let got = gpuarray::corrcoef_xy(&x, &y, false)?;
        assert_eq!(got.shape(), &[2 * n, 2 * n]);
    }
    // Perfectly correlated rows: exactly ±1 after clipping; one variable: c / c.
    let h = Array2::from_shape_vec((2, 4), vec![1.0f32, 2.0, 3.0, 4.0, 8.0, 6.0, 4.0, 2.0]).unwrap();
    let got = gpuarray::corrcoef(&DeviceArray::from_ndarray(&ctx, &h)?, true)?.to_vec()?;
    for (g, w) in got.iter().zip([1.0, -1.0, -1.0, 1.0]) {
        assert!((g - w).abs() <= 1e-15 && g.abs() <= 1.0, "{got:?}");
    }
    let row = DeviceArray::from_ndarray(&ctx, &Array2::from_shape_vec((1, 3), vec![0i32, 1, 2]).unwrap())?;
    let one = gpuarray::corrcoef(&row, true)?;
    assert_eq!((one.ndim(), one.to_vec()?), (0, vec![1.0]));
    let flat = DeviceArray::from_ndarray(&ctx, &Array2::from_shape_vec((1, 3), vec![5.0f64; 3]).unwrap())?;
    assert!(gpuarray::corrcoef(&flat, true)?.to_vec()?[0].is_nan());
    // Complex data: each part clipped.
    let z = Array2::from_shape_fn((2, 5), |(i, j)| {
        Complex64::new((i * j) as f64 + rng.f64(), j as f64 - rng.f64())
    });
    let c = host_cov(&z, 1.0, None, None);
    let clip = |v: f64| v.clamp(-1.0, 1.0);
    let want = Array2::from_shape_fn((2, 2), |(a, b)| {
        let v = c[(a, b)] / c[(a, a)].re.sqrt() / c[(b, b)].re.sqrt();
        Complex64::new(clip(v.re), clip(v.im))
    });
    let got: Vec<Complex64> = gpuarray::corrcoef(&DeviceArray::from_ndarray(&ctx, &z)?, true)?.to_vec()?;
    close(&got, &want, 1e-12, "complex");
    Ok(())
}

/// `cov_as::<R>` (NumPy's `cov(m, dtype=R)`): the data converted to `R` and everything
/// computed in it. On integer data in [-8, 8) over 16 observations every step before the final
/// scaling is exact in each type (the means are multiples of 1/16, the products sum exactly in
/// `float`), so `f32`, `Complex32` and even `f16` are the `f64` result rounded once; then
/// integer data, weights (converted to `R`), `cov_xy_as` of two element types and a stream.
#[test]
#[ignore = "needs a CUDA GPU"]
fn cov_as_computes_in_the_given_type() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(37);
    let (p, n) = (3usize, 16usize);
    let host = Array2::from_shape_fn((p, n), |_| (rng.next_u64() % 16) as f64 - 8.0);
    let to_c = |a: &Array2<f64>| a.mapv(|v| Complex64::new(v, 0.0));
    let want = host_cov(&to_c(&host), 1.0, None, None);
    let x = DeviceArray::from_ndarray(&ctx, &host)?;
    let opts = Cov::default();
    let got: Vec<f64> = gpuarray::cov_as::<f32>(&x, &opts)?
        .to_vec()?
        .into_iter()
        .map(f64::from)
        .collect();
    close_real(&got, &want, 1e-7, "cov_as::<f32>");
    let got: Vec<f64> = gpuarray::cov_as::<f16>(&x, &opts)?
        .to_vec()?
        .into_iter()
        .map(f16::to_f64)
        .collect();
    close_real(&got, &want, 1e-3, "cov_as::<f16>");
    let got: Vec<Complex64> = gpuarray::cov_as::<Complex32>(&x, &opts)?
        .to_vec()?
        .into_iter()
        .map(|z| Complex64::new(f64::from(z.re), f64::from(z.im)))
        .collect();
    close(&got, &want, 1e-7, "cov_as::<Complex32>");
    // The default type is NumPy's: f64 for f64 data, as cov gives.
    let got: Vec<f64> = gpuarray::cov_as::<f64>(&x, &opts)?.to_vec()?;
    assert_eq!(got, gpuarray::cov(&x, &opts)?.to_vec()?);
    // Integer data, the columns as the variables.
    let xi = DeviceArray::from_ndarray(&ctx, &host.mapv(|v| v as i32))?;
    let by_cols = Cov {
        rowvar: false,
        ..Cov::default()
    };
    let want_cols = host_cov(&to_c(&host.t().to_owned()), 1.0, None, None);
    let got: Vec<f64> = gpuarray::cov_as::<f32>(&xi, &by_cols)?
        .to_vec()?
        .into_iter()
        .map(f64::from)
        .collect();
    assert_eq!(got.len(), n * n);
    close_real(&got, &want_cols, 1e-6, "cov_as::<f32> of i32 columns");
    // Weights, converted to f32.
    let fw: Vec<i64> = (0..n).map(|_| (rng.next_u64() % 4) as i64 + 1).collect();
    let aw: Vec<f64> = (0..n).map(|_| rng.f64().abs() + 0.25).collect();
    let (dfw, daw) = (
        DeviceArray::from_ndarray(&ctx, &arr1(&fw))?,
        DeviceArray::from_ndarray(&ctx, &arr1(&aw))?,
    );
    let w: Vec<f64> = fw.iter().zip(&aw).map(|(&f, a)| f as f64 * a).collect();
    let weighted = Cov {
        fweights: Some(dfw.view()),
        aweights: Some(daw.view()),
        ..Cov::default()
    };
    let want_w = host_cov(&to_c(&host), 1.0, Some(&w), Some(&aw));
    let got: Vec<f64> = gpuarray::cov_as::<f32>(&x, &weighted)?
        .to_vec()?
        .into_iter()
        .map(f64::from)
        .collect();
    close_real(&got, &want_w, 1e-5, "weighted cov_as::<f32>");
    // `y` of another element type, its variables appended.
    let y_host = Array2::from_shape_fn((2, n), |_| (rng.next_u64() % 16) as f64 / 4.0);
    let y = DeviceArray::from_ndarray(&ctx, &y_host.mapv(|v| v as f32))?;
    let want_xy = host_cov(&ndarray_concat(&to_c(&host), &to_c(&y_host)), 1.0, None, None);
    let got = gpuarray::cov_xy_as::<f64>(&xi, &y, &opts)?;
    assert_eq!(got.shape(), &[p + 2, p + 2]);
    close_real(&got.to_vec()?, &want_xy, 1e-12, "cov_xy_as::<f64> of i32 and f32");
    // On a stream; one variable gives a 0-d result.
    let stream = Stream::new(&ctx)?;
    let row = DeviceArray::from_ndarray(&ctx, &arr1(&[0.0f64, 1.0, 2.0]))?;
    let one = gpuarray::on(&stream).cov_as::<f32>(&row, &opts)?;
    stream.synchronize()?;
    assert_eq!((one.ndim(), one.to_vec()?), (0, vec![1.0f32]));
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn flat_index_conversions_run_on_a_stream() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let stream = Stream::new(&ctx)?;
    let i = DeviceArray::from_ndarray(&ctx, &arr1(&[22i64, 41, 37]))?;
    let c = gpuarray::on(&stream).unravel_index(&i, &[7, 6])?;
    let back = gpuarray::on(&stream).ravel_multi_index(&[&c[0], &c[1]], &[7, 6], IndexMode::Raise)?;
    stream.synchronize()?;
    assert_eq!((c[0].to_vec()?, c[1].to_vec()?), (vec![3, 6, 6], vec![4, 5, 1]));
    assert_eq!(back.to_vec()?, [22, 41, 37]);
    let r = gpuarray::on(&stream).unravel_index(&i, &[2, 3]);
    assert!(
        matches!(r, Err(Error::Shape(ArrayShapeError::IndexOutOfRange { .. }))),
        "{r:?}"
    );
    Ok(())
}
