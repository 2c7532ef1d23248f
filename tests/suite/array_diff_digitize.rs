//! `diff`, `digitize` and `array_equal` on a GPU against the host, on random data: `diff` along
//! every axis (negative ones too), `n` from 0 past the axis' length, of floats, wrapping
//! integers and booleans (`!=`), whole and transposed; `digitize` of floats (NaN, values on
//! the edges) and integers into rising, falling and constant bins, both `right`s, checked
//! against NumPy's definition of the bins; `array_equal` with and without `equal_nan`.

use std::cmp::Ordering;

use gpu_runtime::gpuarray::{array_equal, Bool, DeviceArray, Element};
use gpu_runtime::ndarray::{Array, Array1, ArrayD, Axis, IxDyn, Slice};
use gpu_runtime::types::Complex64;
use gpu_runtime::{ArgumentError, ArrayShapeError, Context, Error};
use gpu_suite::Rng;

/// NumPy's `diff` on the host: `a[1:] - a[:-1]` along `k` by `sub`, `n` times.
fn host_diff<T: Clone>(a: &ArrayD<T>, n: usize, k: usize, sub: impl Fn(&T, &T) -> T) -> ArrayD<T> {
    let mut cur = a.clone();
    for _ in 0..n {
        let len = cur.shape()[k];
        if len <= 1 {
            let mut shape = cur.shape().to_vec();
            shape[k] = 0;
            return ArrayD::from_shape_vec(IxDyn(&shape), Vec::new()).unwrap();
        }
        let hi = cur.slice_axis(Axis(k), Slice::from(1..));
        let lo = cur.slice_axis(Axis(k), Slice::from(..len - 1));
        let mut out = hi.to_owned();
        out.zip_mut_with(&lo, |h, l| *h = sub(h, l));
        cur = out;
    }
    cur
}

/// `diff` of `h` (uploaded, and transposed) along every axis and for `n` in `0..=len+1`.
fn check_diff<T: Element + Clone + PartialEq + std::fmt::Debug>(
    ctx: &Context,
    h: &ArrayD<T>,
    sub: impl Fn(&T, &T) -> T + Copy,
) -> gpu_runtime::Result<()> {
    let d = DeviceArray::from_ndarray(ctx, h)?;
    for (host, dev) in [(h.clone(), d.view()), (h.t().to_owned(), d.t())] {
        let nd = host.ndim() as isize;
        for axis in -nd..nd {
            let k = ((axis + nd) % nd) as usize;
            for n in 0..=host.shape()[k] + 1 {
                let want = host_diff(&host, n, k, sub);
                let got = dev.diff(n, axis)?;
                let what = format!(
                    "{} {:?} axis {axis} n {n}",
                    std::any::type_name::<T>(),
                    host.shape()
                );
                assert_eq!(got.shape(), want.shape(), "{what}");
                assert_eq!(got.to_vec()?, want.iter().cloned().collect::<Vec<_>>(), "{what}");
            }
        }
    }
    Ok(())
}

fn random<T>(rng: &mut Rng, shape: &[usize], draw: impl Fn(&mut Rng) -> T) -> ArrayD<T> {
    let n = shape.iter().product();
    Array::from_shape_vec(IxDyn(shape), (0..n).map(|_| draw(rng)).collect()).unwrap()
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn diff_matches_the_host_along_every_axis() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(4711);
    for shape in [[4usize, 5, 3], [1, 3, 2], [0, 3, 2], [2, 1, 7]] {
        let f = random(&mut rng, &shape, |r| (r.next_u64() % 1000) as f64 / 8.0 - 60.0);
        check_diff(&ctx, &f, |a, b| a - b)?;
        let i = random(&mut rng, &shape, |r| r.next_u64() as i32);
        check_diff(&ctx, &i, |a, b| a.wrapping_sub(*b))?;
        let u = random(&mut rng, &shape, |r| r.next_u64() as u8);
        check_diff(&ctx, &u, |a, b| a.wrapping_sub(*b))?;
        let b = random(&mut rng, &shape, |r| Bool::from(r.next_u64().is_multiple_of(3)));
        check_diff(&ctx, &b, |a, b| Bool::from(a != b))?;
        let c = random(&mut rng, &shape, |r| Complex64::new(r.f64(), -r.f64()));
        check_diff(&ctx, &c, |a, b| a - b)?;
    }
    let scalar = DeviceArray::from_ndarray(&ctx, &gpu_runtime::ndarray::arr0(1.5f64))?;
    assert!(matches!(
        scalar.diff(1, 0),
        Err(Error::Shape(ArrayShapeError::AxisOutOfRange { .. }))
    ));
    let v = DeviceArray::from_ndarray(&ctx, &Array1::from(vec![1.0f32, 4.0, 9.0]))?;
    assert!(matches!(
        v.diff(1, 1),
        Err(Error::Shape(ArrayShapeError::AxisOutOfRange { .. }))
    ));
    Ok(())
}

/// NumPy's order: NaN after every number.
fn nan_last(a: f64, b: f64) -> Ordering {
    match (a.is_nan(), b.is_nan()) {
        (true, true) => Ordering::Equal,
        (true, false) => Ordering::Greater,
        (false, true) => Ordering::Less,
        _ => a.partial_cmp(&b).unwrap(),
    }
}

/// NumPy's definition of `digitize`: the `i` with `bins[i-1] <= x < bins[i]` for rising bins
/// (`<` and `<=` swapped with `right`), `bins[i-1] > x >= bins[i]` for falling ones, as the
/// count of the bins on the lower side of `x` (NaN above every number).
fn host_digitize(x: f64, bins: &[f64], right: bool) -> i64 {
    let rising = bins.windows(2).all(|w| w[0] <= w[1]);
    bins.iter()
        .filter(|&&b| {
            let o = nan_last(b, x);
            match (rising, right) {
                (true, false) => o != Ordering::Greater,
                (true, true) => o == Ordering::Less,
                (false, false) => o == Ordering::Greater,
                (false, true) => o != Ordering::Less,
            }
        })
        .count() as i64
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn digitize_matches_numpys_definition_of_the_bins() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(2024);
    for nb in [0usize, 1, 2, 7, 100] {
        let mut rising: Vec<f64> = (0..nb)
            .map(|_| (rng.next_u64() % 40) as f64 / 2.0 - 10.0)
            .collect();
        rising.sort_by(|a, b| a.partial_cmp(b).unwrap());
        let falling: Vec<f64> = rising.iter().rev().copied().collect();
        let constant = vec![3.0; nb];
        // Values on the edges, between them, beyond them, and NaN.
        let mut xs: Vec<f64> = (0..3000)
            .map(|_| match rng.next_u64() % 4 {
                0 if nb > 0 => rising[(rng.next_u64() % nb as u64) as usize],
                1 => f64::NAN,
                _ => (rng.next_u64() % 100) as f64 / 3.0 - 16.0,
            })
            .collect();
        xs.extend([3.0, f64::INFINITY, f64::NEG_INFINITY]);
        let x = Array::from_shape_vec(IxDyn(&[xs.len() / 3, 3]), xs.clone()).unwrap();
        let dx = DeviceArray::from_ndarray(&ctx, &x)?;
        let xi: ArrayD<i32> = x.mapv(|v| if v.is_finite() { v.floor() as i32 } else { 0 });
        let dxi = DeviceArray::from_ndarray(&ctx, &xi)?;
        for bins in [&rising, &falling, &constant] {
            let db = DeviceArray::from_ndarray(&ctx, &Array1::from(bins.clone()))?;
            let bi: Vec<i32> = bins.iter().map(|v| v.floor() as i32).collect();
            let dbi = DeviceArray::from_ndarray(&ctx, &Array1::from(bi.clone()))?;
            let bif: Vec<f64> = bi.iter().map(|&v| v as f64).collect();
            for right in [false, true] {
                let what = format!("{nb} bins {bins:?} right {right}");
                let got = dx.digitize(&db, right)?;
                assert_eq!(got.shape(), x.shape(), "{what}");
                let want: Vec<i64> = xs.iter().map(|&v| host_digitize(v, bins, right)).collect();
                assert_eq!(got.to_vec()?, want, "f64 {what}");
                let want: Vec<i64> = xi.iter().map(|&v| host_digitize(v as f64, &bif, right)).collect();
                assert_eq!(dxi.digitize(&dbi, right)?.to_vec()?, want, "i32 {what}");
            }
        }
    }
    let dx = DeviceArray::from_ndarray(&ctx, &Array1::from(vec![1.0f32, 2.0]))?;
    let zigzag = DeviceArray::from_ndarray(&ctx, &Array1::from(vec![0.0f32, 2.0, 1.0]))?;
    assert!(matches!(
        dx.digitize(&zigzag, false),
        Err(Error::Shape(ArrayShapeError::BinsNotMonotonic))
    ));
    let dc = DeviceArray::from_ndarray(&ctx, &Array1::from(vec![Complex64::new(1.0, 0.0)]))?;
    assert!(matches!(
        dc.digitize(&dc, false),
        Err(Error::Argument(ArgumentError::UndefinedOnElement { .. }))
    ));
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn array_equal_compares_shapes_then_every_element() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(77);
    let h = random(&mut rng, &[37, 41], |r| {
        if r.next_u64().is_multiple_of(9) {
            f64::NAN
        } else {
            r.f64()
        }
    });
    let a = DeviceArray::from_ndarray(&ctx, &h)?;
    let b = DeviceArray::from_ndarray(&ctx, &h)?;
    assert!(!array_equal(&a, &b, false)?, "NaN != NaN without equal_nan");
    assert!(array_equal(&a, &b, true)?);
    let clean = h.mapv(|v| if v.is_nan() { 0.5 } else { v });
    let (c1, c2) = (
        DeviceArray::from_ndarray(&ctx, &clean)?,
        DeviceArray::from_ndarray(&ctx, &clean)?,
    );
    assert!(array_equal(&c1, &c2, false)?);
    let mut changed = clean.clone();
    changed[[36, 40]] += 1.0;
    assert!(!array_equal(
        &c1,
        &DeviceArray::from_ndarray(&ctx, &changed)?,
        true
    )?);
    // Same elements, another shape; a transposed view of a transposed copy is equal.
    let flat = DeviceArray::from_ndarray(&ctx, &Array1::from(clean.iter().copied().collect::<Vec<_>>()))?;
    assert!(!array_equal(&c1, &flat, false)?);
    let t = DeviceArray::from_ndarray(&ctx, &clean.t().to_owned())?;
    assert!(array_equal(&c1, &t.t(), false)?);
    let e1 = DeviceArray::<i32, _>::zeros(&ctx, [0, 3])?;
    let e2 = DeviceArray::<i32, _>::zeros(&ctx, [0, 3])?;
    assert!(array_equal(&e1, &e2, false)?);
    let z = random(&mut rng, &[50], |r| {
        Complex64::new(
            r.f64(),
            if r.next_u64().is_multiple_of(5) {
                f64::NAN
            } else {
                1.0
            },
        )
    });
    let (z1, z2) = (
        DeviceArray::from_ndarray(&ctx, &z)?,
        DeviceArray::from_ndarray(&ctx, &z)?,
    );
    assert!(!array_equal(&z1, &z2, false)?);
    assert!(array_equal(&z1, &z2, true)?);
    Ok(())
}
