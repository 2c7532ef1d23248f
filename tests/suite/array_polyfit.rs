//! `Poly1d` (NumPy's and CuPy's `poly1d`) and `polyfit`, `polyfit_weighted` and
//! `polyfit_full` on a GPU. `Poly1d`: leading zeros dropped on construction (only zeros or no
//! coefficients: `[0]`), a copy of its source, NumPy's `p[k]` read and set (growing by leading
//! zeros, a leading zero set by it kept), `+`, `-`, `*`, unary `-` and `**` against values
//! NumPy 2.4 printed and against host sums and convolutions of random polynomials, evaluation
//! against the host's Horner rule, roots (zero roots last) and `poly1d(r, True)`, and `bool`
//! coefficients refused by `-`. `polyfit`: against values NumPy 2.4 printed (`full=True`:
//! coefficients, residuals, rank, singular values, `rcond`; weighted, with `rcond=`, of 2-d
//! `y`, of `int32` points, of deficient rank, of fewer points than coefficients), exact
//! polynomials recovered, and noisy fits of `f64`, `f32`, `f16`, `i32` and `u8` points
//! (up to 100 000 of them, weighted, of several columns, of views) against a least-squares
//! solution computed here as NumPy defines it (Vandermonde matrix, rows weighted, columns
//! scaled to norm 1, Householder QR, singular values of `R` by one-sided Jacobi); the stream
//! forms, and the refusals (empty, mismatched and complex operands, `y` of 0 or 3 axes).

use gpu_runtime::gpuarray::{self, Bool, DeviceArray, Element, Poly1d, PolyFit};
use gpu_runtime::half::f16;
use gpu_runtime::ndarray::{arr0, s, Array1, Array2, Array3, Dimension, Ix1, ShapeBuilder};
use gpu_runtime::types::Complex64;
use gpu_runtime::{ArgumentError, ArrayShapeError, Context, Error, Stream};
use gpu_suite::Rng;

/// A 1-d device array of `v`.
fn upload<T: Element>(ctx: &Context, v: &[T]) -> gpu_runtime::Result<DeviceArray<T, Ix1>> {
    DeviceArray::from_ndarray(ctx, &Array1::from(v.to_vec()))
}

/// The polynomial of coefficients `c`, highest power first.
fn poly1d<T: Element>(ctx: &Context, c: &[T]) -> gpu_runtime::Result<Poly1d<T>> {
    Poly1d::new(&upload(ctx, c)?)
}

/// `p(x)` by Horner's rule, `p` highest power first.
fn host_polyval(p: &[f64], x: f64) -> f64 {
    p.iter().fold(0.0, |acc, &c| acc * x + c)
}

/// `c` without its leading zeros, `[0]` when only zeros are left (NumPy's `poly1d(c).coeffs`).
fn host_trim(c: &[f64]) -> Vec<f64> {
    match c.iter().position(|&v| v != 0.0) {
        Some(f) => c[f..].to_vec(),
        None => vec![0.0],
    }
}

/// NumPy's `polyadd(a, sign * b)`: the shorter aligned at the constant term.
fn host_add(a: &[f64], b: &[f64], sign: f64) -> Vec<f64> {
    let n = a.len().max(b.len());
    let at = |v: &[f64], k: usize| {
        if k + v.len() >= n {
            v[k + v.len() - n]
        } else {
            0.0
        }
    };
    (0..n).map(|k| at(a, k) + sign * at(b, k)).collect()
}

/// NumPy's `polymul(a, b)`: the full convolution.
fn host_mul(a: &[f64], b: &[f64]) -> Vec<f64> {
    let mut c = vec![0.0; a.len() + b.len() - 1];
    for (i, &x) in a.iter().enumerate() {
        for (j, &y) in b.iter().enumerate() {
            c[i + j] += x * y;
        }
    }
    c
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// Each element of `got` within `tol` times the largest magnitude in `want` (at least 1) of
/// the element of `want`.
fn assert_near(got: &[f64], want: &[f64], tol: f64, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: {got:?} against {want:?}");
    let scale = want.iter().fold(1.0f64, |m, v| m.max(v.abs()));
    for (k, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            (g - w).abs() <= tol * scale,
            "{what}: [{k}] {g} against {w}\n got {got:?}\nwant {want:?}"
        );
    }
}

/// Each element of `got` within `tol` times its own magnitude of the element of `want`.
fn assert_rel(got: &[f64], want: &[f64], tol: f64, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: {got:?} against {want:?}");
    for (k, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            (g - w).abs() <= tol * w.abs(),
            "{what}: [{k}] {g} against {w}\n got {got:?}\nwant {want:?}"
        );
    }
}

/// A least-squares fit computed on the host as NumPy defines it.
#[derive(Debug)]
struct HostFit {
    /// The coefficients of each column of `y`, highest power first.
    coeffs: Vec<Vec<f64>>,
    /// The weighted sum of squared residuals of each column.
    residuals: Vec<f64>,
    /// The singular values of the scaled Vandermonde matrix, largest first.
    singular_values: Vec<f64>,
}

impl HostFit {
    /// The coefficients as the device gives them: `(deg + 1, k)` in C order (for one column of
    /// `y`, the `deg + 1` coefficients).
    fn row_major(&self) -> Vec<f64> {
        let n = self.coeffs[0].len();
        (0..n)
            .flat_map(|i| self.coeffs.iter().map(move |c| c[i]))
            .collect()
    }
}

/// NumPy's `polyfit(x, y, deg, w=w, full=True)` on the host in `f64`, for a fit of full rank
/// and more points than coefficients: the Vandermonde matrix of `x` (highest power first),
/// rows weighted by `w`, each column scaled to norm 1, reduced with the columns of `ys` by
/// Householder reflections to `R` and `Qᵀy`, `R c = Qᵀy` solved back and `c` divided by the
/// scales; the residuals are the squares of `Qᵀy` below `R`, the singular values those of
/// `R` (one-sided Jacobi).
fn host_fit(x: &[f64], ys: &[Vec<f64>], deg: usize, w: Option<&[f64]>) -> HostFit {
    let (m, n) = (x.len(), deg + 1);
    assert!(m > n, "the host fit takes more points than coefficients");
    let weight = |i: usize| w.map_or(1.0, |w| w[i]);
    let mut cols: Vec<Vec<f64>> = (0..n)
        .map(|c| {
            (0..m)
                .map(|i| weight(i) * x[i].powi((n - 1 - c) as i32))
                .collect()
        })
        .collect();
    let scales: Vec<f64> = cols.iter().map(|c| dot(c, c).sqrt()).collect();
    for (col, s) in cols.iter_mut().zip(&scales) {
        col.iter_mut().for_each(|v| *v /= s);
    }
    cols.extend(
        ys.iter()
            .map(|y| (0..m).map(|i| weight(i) * y[i]).collect::<Vec<f64>>()),
    );
    for c in 0..n {
        // H = I - 2 v vᵀ / vᵀv, v = a + sign(a_0) |a| e_0, takes a to -sign(a_0) |a| e_0.
        let mut v = cols[c][c..].to_vec();
        let norm = dot(&v, &v).sqrt();
        v[0] += if v[0] >= 0.0 { norm } else { -norm };
        let vv = dot(&v, &v);
        for col in cols[c..].iter_mut() {
            let f = 2.0 * dot(&v, &col[c..]) / vv;
            for (a, b) in col[c..].iter_mut().zip(&v) {
                *a -= f * b;
            }
        }
    }
    let r = |i: usize, j: usize| cols[j][i];
    let coeffs = (0..ys.len())
        .map(|j| {
            let b = &cols[n + j];
            let mut c = vec![0.0; n];
            for i in (0..n).rev() {
                let s: f64 = (i + 1..n).map(|l| r(i, l) * c[l]).sum();
                c[i] = (b[i] - s) / r(i, i);
            }
            c.iter().zip(&scales).map(|(c, s)| c / s).collect()
        })
        .collect();
    let residuals = (0..ys.len())
        .map(|j| cols[n + j][n..].iter().map(|v| v * v).sum())
        .collect();
    let triangle: Vec<Vec<f64>> = (0..n)
        .map(|j| (0..n).map(|i| if i <= j { r(i, j) } else { 0.0 }).collect())
        .collect();
    HostFit {
        coeffs,
        residuals,
        singular_values: host_singular_values(triangle),
    }
}

/// The singular values of the matrix of columns `a`, largest first: one-sided Jacobi
/// rotations of pairs of columns until every pair is orthogonal, the singular values the
/// norms of the columns.
fn host_singular_values(mut a: Vec<Vec<f64>>) -> Vec<f64> {
    let n = a.len();
    for _sweep in 0..100 {
        let mut worst = 0.0f64;
        for p in 0..n {
            for q in p + 1..n {
                let (alpha, beta, gamma) = (dot(&a[p], &a[p]), dot(&a[q], &a[q]), dot(&a[p], &a[q]));
                if gamma == 0.0 {
                    continue;
                }
                worst = worst.max(gamma.abs() / (alpha * beta).sqrt());
                let zeta = (beta - alpha) / (2.0 * gamma);
                let t = zeta.signum() / (zeta.abs() + (1.0 + zeta * zeta).sqrt());
                let c = 1.0 / (1.0 + t * t).sqrt();
                let s = c * t;
                for i in 0..a[p].len() {
                    let (x, y) = (a[p][i], a[q][i]);
                    a[p][i] = c * x - s * y;
                    a[q][i] = s * x + c * y;
                }
            }
        }
        if worst <= 1e-15 {
            break;
        }
    }
    let mut s: Vec<f64> = a.iter().map(|c| dot(c, c).sqrt()).collect();
    s.sort_by(|a, b| b.total_cmp(a));
    s
}

/// A device fit against the host's: coefficients and residuals to `tol`, full rank, the
/// singular values to 1e-10 of the largest, NumPy's default `rcond` of `m` points.
fn check_fit<D: Dimension>(
    fit: &PolyFit<D>,
    want: &HostFit,
    m: usize,
    tol: f64,
    what: &str,
) -> gpu_runtime::Result<()> {
    let n = want.coeffs[0].len();
    assert_near(
        &fit.coeffs.to_vec()?,
        &want.row_major(),
        tol,
        &format!("{what}: coefficients"),
    );
    assert_rel(
        &fit.residuals,
        &want.residuals,
        tol,
        &format!("{what}: residuals"),
    );
    assert_eq!(fit.rank, n, "{what}: rank");
    assert_near(
        &fit.singular_values,
        &want.singular_values,
        1e-10,
        &format!("{what}: singular values"),
    );
    assert_eq!(fit.rcond, m as f64 * f64::EPSILON, "{what}: rcond");
    Ok(())
}

/// `m` points uniform in `[-1, 1)`.
fn random_points(rng: &mut Rng, m: usize) -> Vec<f64> {
    (0..m).map(|_| rng.f64()).collect()
}

/// The values of `p` at `x`, plus `noise` times a uniform `[-1, 1)` draw each.
fn noisy_values(rng: &mut Rng, p: &[f64], x: &[f64], noise: f64) -> Vec<f64> {
    x.iter()
        .map(|&x| host_polyval(p, x) + noise * rng.f64())
        .collect()
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn poly1d_drops_leading_zeros_and_copies_its_coefficients() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let p = poly1d(&ctx, &[0.0f64, 0.0, 1.0, -3.0, 2.0])?;
    assert_eq!(p.coeffs().to_vec()?, [1.0, -3.0, 2.0]);
    assert_eq!(p.order(), 2);
    assert_eq!(p.variable(), "x");
    let p = p.with_variable("z");
    assert_eq!(p.variable(), "z");
    assert_eq!(p.coeffs().to_vec()?, [1.0, -3.0, 2.0]);
    assert_eq!(p.into_coeffs().to_vec()?, [1.0, -3.0, 2.0]);
    // Only zeros, or no coefficients at all: NumPy's poly1d([0]).
    for zeros in [vec![0.0f64; 3], vec![0.0]] {
        let p = poly1d(&ctx, &zeros)?;
        assert_eq!((p.coeffs().to_vec()?, p.order()), (vec![0.0], 0), "{zeros:?}");
    }
    let p = Poly1d::new(&DeviceArray::<f64, Ix1>::empty(&ctx, 0)?)?;
    assert_eq!((p.coeffs().to_vec()?, p.order()), (vec![0.0], 0));
    let p = poly1d(&ctx, &[0i32, 5, 0, -1])?;
    assert_eq!((p.coeffs().to_vec()?, p.order()), (vec![5, 0, -1], 2));
    // A copy: setting a coefficient leaves the source as it was.
    let src = upload(&ctx, &[1.0f64, 2.0, 3.0])?;
    let mut p = Poly1d::new(&src)?;
    p.set_coefficient(0, 9.0)?;
    p.set_coefficient(2, -1.0)?;
    assert_eq!(src.to_vec()?, [1.0, 2.0, 3.0]);
    assert_eq!(p.coeffs().to_vec()?, [-1.0, 2.0, 9.0]);
    // Of views: reversed ([3, 2, 1, 0, 0] read backwards) and stepped.
    let stored = upload(&ctx, &[3.0f64, 2.0, 1.0, 0.0, 0.0])?;
    let p = Poly1d::new(&stored.view().flip(0)?)?;
    assert_eq!((p.coeffs().to_vec()?, p.order()), (vec![1.0, 2.0, 3.0], 2));
    let stored = upload(&ctx, &[0.0f64, 9.0, 0.0, 9.0, 4.0, 9.0, 5.0])?;
    let p = Poly1d::new(&stored.view().slice_move(s![..;2])?)?;
    assert_eq!((p.coeffs().to_vec()?, p.order()), (vec![4.0, 5.0], 1));
    assert_eq!(stored.to_vec()?, [0.0, 9.0, 0.0, 9.0, 4.0, 9.0, 5.0]);
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn poly1d_coefficients_are_read_and_set_as_numpy_indexes_them() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let p = poly1d(&ctx, &[1i32, 2, 3])?;
    let read: Vec<i32> = [0, 1, 2, 3, 50]
        .into_iter()
        .map(|k| p.coefficient(k))
        .collect::<gpu_runtime::Result<_>>()?;
    assert_eq!(read, [3, 2, 1, 0, 0]);
    // NumPy: p = poly1d([1, 2, 3]); p[2] = 0 gives poly1d([0, 2, 3]) of order 2.
    let mut p = poly1d(&ctx, &[1i32, 2, 3])?;
    p.set_coefficient(2, 0)?;
    assert_eq!((p.coeffs().to_vec()?, p.order()), (vec![0, 2, 3], 2));
    assert_eq!(p.coefficient(2)?, 0);
    assert_eq!(p.coefficient(1)?, 2);
    // Not equal to poly1d([2, 3]): NumPy compares the coefficient arrays, leading zero too.
    assert!(!p.equals(&poly1d(&ctx, &[2i32, 3])?)?);
    let x = upload(&ctx, &[0i32, 1, 2])?;
    assert_eq!(p.eval(&x)?.to_vec()?, [3, 5, 7]);
    // NumPy: p = poly1d([1, 2, 3]); p[5] = 7 gives poly1d([7, 0, 0, 1, 2, 3]) of order 5.
    let mut p = poly1d(&ctx, &[1i32, 2, 3])?;
    p.set_coefficient(5, 7)?;
    assert_eq!((p.coeffs().to_vec()?, p.order()), (vec![7, 0, 0, 1, 2, 3], 5));
    assert_eq!(
        (p.coefficient(5)?, p.coefficient(3)?, p.coefficient(0)?),
        (7, 0, 3)
    );
    let mut p = poly1d(&ctx, &[1i32, 2, 3])?;
    p.set_coefficient(1, -4)?;
    assert_eq!((p.coeffs().to_vec()?, p.order()), (vec![1, -4, 3], 2));
    let mut p = poly1d(&ctx, &[5.0f64])?;
    p.set_coefficient(0, 0.0)?;
    assert_eq!((p.coeffs().to_vec()?, p.order()), (vec![0.0], 0));
    p.set_coefficient(1, 2.5)?;
    assert_eq!((p.coeffs().to_vec()?, p.order()), (vec![2.5, 0.0], 1));
    // equals: the same coefficients after the leading zeros are dropped.
    let p = poly1d(&ctx, &[1i32, 2, 3])?;
    assert!(p.equals(&poly1d(&ctx, &[0i32, 1, 2, 3])?)?);
    assert!(p.equals(&p)?);
    assert!(!p.equals(&poly1d(&ctx, &[1i32, 2, 4])?)?);
    assert!(!p.equals(&poly1d(&ctx, &[1i32, 2])?)?);
    assert!(!p.equals(&poly1d(&ctx, &[9i32, 1, 2, 3])?)?);
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn poly1d_arithmetic_matches_numpy() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let p12 = poly1d(&ctx, &[1i32, 2])?;
    let p15 = poly1d(&ctx, &[1i32, 5])?;
    // NumPy: poly1d([1, 2]) - poly1d([1, 5]) is poly1d([-3]).
    let d = (&p12 - &p15)?;
    assert_eq!((d.coeffs().to_vec()?, d.order()), (vec![-3], 0));
    // poly1d([1, 2]) ** 3 is poly1d([1, 6, 12, 8]); ** 0 is poly1d([1]).
    assert_eq!(p12.pow(3)?.coeffs().to_vec()?, [1, 6, 12, 8]);
    assert_eq!(p12.pow(3)?.order(), 3);
    let one = p12.pow(0)?;
    assert_eq!((one.coeffs().to_vec()?, one.order()), (vec![1], 0));
    assert!(p12.pow(1)?.equals(&p12)?);
    assert!(p12.pow(2)?.equals(&(&p12 * &p12)?)?);
    let p123 = poly1d(&ctx, &[1i32, 2, 3])?;
    // poly1d([1, 2, 3]) + poly1d([1]) is poly1d([1, 2, 4]); p - p is poly1d([0]).
    assert_eq!((&p123 + &poly1d(&ctx, &[1i32])?)?.coeffs().to_vec()?, [1, 2, 4]);
    let zero = (&p123 - &p123)?;
    assert_eq!((zero.coeffs().to_vec()?, zero.order()), (vec![0], 0));
    // p * poly1d([0]) is poly1d([0]).
    let z = (&p123 * &poly1d(&ctx, &[0i32])?)?;
    assert_eq!((z.coeffs().to_vec()?, z.order()), (vec![0], 0));
    // A sum whose leading coefficients cancel loses them.
    let s = (&p123 + &poly1d(&ctx, &[-1i32, 0, 0])?)?;
    assert_eq!((s.coeffs().to_vec()?, s.order()), (vec![2, 3], 1));
    let s = (&p123 - &poly1d(&ctx, &[1i32, 2, 0])?)?;
    assert_eq!((s.coeffs().to_vec()?, s.order()), (vec![3], 0));
    // Unary minus: a trailing zero stays, [0] stays [0].
    let n = (-&poly1d(&ctx, &[1i32, -2, 0])?)?;
    assert_eq!(n.coeffs().to_vec()?, [-1, 2, 0]);
    let n = (-&poly1d(&ctx, &[0i32])?)?;
    assert_eq!(n.coeffs().to_vec()?, [0]);
    // Products: (x^2 - 3x + 2)^2, and of different lengths.
    let q = poly1d(&ctx, &[1.0f64, -3.0, 2.0])?;
    assert_eq!((&q * &q)?.coeffs().to_vec()?, [1.0, -6.0, 13.0, -12.0, 4.0]);
    assert_eq!(
        (&q * &poly1d(&ctx, &[2.0f64, 1.0])?)?.coeffs().to_vec()?,
        [2.0, -5.0, 1.0, 2.0]
    );
    assert_eq!((&p123 * &p12)?.coeffs().to_vec()?, [1, 4, 7, 6]);
    // The operands are left as they were.
    assert_eq!(p12.coeffs().to_vec()?, [1, 2]);
    assert_eq!(p15.coeffs().to_vec()?, [1, 5]);
    assert_eq!(p123.coeffs().to_vec()?, [1, 2, 3]);
    assert_eq!(q.coeffs().to_vec()?, [1.0, -3.0, 2.0]);
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn poly1d_arithmetic_of_random_polynomials_against_the_host() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(0x9017_0001);
    for la in 1..=6 {
        for lb in 1..=6 {
            let a: Vec<f64> = random_points(&mut rng, la);
            let b: Vec<f64> = random_points(&mut rng, lb);
            let (pa, pb) = (poly1d(&ctx, &a)?, poly1d(&ctx, &b)?);
            let what = format!("{a:?} and {b:?}");
            // One rounding each: the same as the host's.
            let sum = (&pa + &pb)?;
            assert_eq!(
                sum.coeffs().to_vec()?,
                host_trim(&host_add(&a, &b, 1.0)),
                "{what}: +"
            );
            assert_eq!(sum.order() + 1, sum.coeffs().len(), "{what}: +");
            let diff = (&pa - &pb)?;
            assert_eq!(
                diff.coeffs().to_vec()?,
                host_trim(&host_add(&a, &b, -1.0)),
                "{what}: -"
            );
            let neg = (-&pa)?;
            assert_eq!(
                neg.coeffs().to_vec()?,
                a.iter().map(|v| -v).collect::<Vec<_>>(),
                "{what}: neg"
            );
            let prod = (&pa * &pb)?;
            assert_eq!(prod.order(), la + lb - 2, "{what}: *");
            assert_near(
                &prod.coeffs().to_vec()?,
                &host_mul(&a, &b),
                1e-13,
                &format!("{what}: *"),
            );
            let cube = pa.pow(3)?;
            assert_near(
                &cube.coeffs().to_vec()?,
                &host_mul(&host_mul(&a, &a), &a),
                1e-13,
                &format!("{what}: ** 3"),
            );
        }
    }
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn poly1d_evaluates_as_polyval() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(0x9017_0002);
    let c = random_points(&mut rng, 5);
    let p = poly1d(&ctx, &c)?;
    let xs = random_points(&mut rng, 1000);
    let got = p.eval(&upload(&ctx, &xs)?)?.to_vec()?;
    let want: Vec<f64> = xs.iter().map(|&x| host_polyval(&c, x)).collect();
    assert_near(&got, &want, 1e-14, "eval of 1000 points");
    let x2 = Array2::from_shape_vec((3, 5), random_points(&mut rng, 15)).unwrap();
    let dx2 = DeviceArray::from_ndarray(&ctx, &x2)?;
    let got = p.eval(&dx2)?;
    assert_eq!(got.shape(), [3, 5]);
    let want: Vec<f64> = x2.iter().map(|&x| host_polyval(&c, x)).collect();
    assert_near(&got.to_vec()?, &want, 1e-14, "eval of (3, 5) points");
    assert_eq!(got.to_vec()?, gpuarray::polyval(p.coeffs(), &dx2)?.to_vec()?);
    // NumPy: poly1d([2, -1, 3])([[0, 1], [2, -3]]) is [[3, 4], [9, 24]].
    let p = poly1d(&ctx, &[2i32, -1, 3])?;
    let x = DeviceArray::from_ndarray(
        &ctx,
        &Array2::from_shape_vec((2, 2), vec![0i32, 1, 2, -3]).unwrap(),
    )?;
    assert_eq!(p.eval(&x)?.to_vec()?, [3, 4, 9, 24]);
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn poly1d_roots_and_from_roots() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    // NumPy: poly1d([1, -3, 2, 0, 0]).roots is [2, 1, 0, 0]: the zero roots last.
    let r = poly1d(&ctx, &[1.0f64, -3.0, 2.0, 0.0, 0.0])?.roots()?.to_vec()?;
    assert_eq!(r.len(), 4, "{r:?}");
    assert!(r[2..].iter().all(|z| z.re == 0.0 && z.im == 0.0), "{r:?}");
    let mut re: Vec<f64> = r[..2].iter().map(|z| z.re).collect();
    re.sort_by(f64::total_cmp);
    assert_near(&re, &[1.0, 2.0], 1e-10, "roots of x^4 - 3x^3 + 2x^2");
    assert!(r.iter().all(|z| z.im.abs() <= 1e-10), "{r:?}");
    // x^2 + 1: +-i.
    let mut r = poly1d(&ctx, &[1.0f64, 0.0, 1.0])?.roots()?.to_vec()?;
    r.sort_by(|a, b| a.im.total_cmp(&b.im));
    assert_eq!(r.len(), 2);
    assert!((r[0] - Complex64::new(0.0, -1.0)).norm() <= 1e-10, "{r:?}");
    assert!((r[1] - Complex64::new(0.0, 1.0)).norm() <= 1e-10, "{r:?}");
    // Constants have no roots.
    assert!(poly1d(&ctx, &[5.0f64])?.roots()?.to_vec()?.is_empty());
    assert!(poly1d(&ctx, &[0.0f64])?.roots()?.to_vec()?.is_empty());
    // A leading zero set by set_coefficient: poly1d([0, -3, 2]).roots is [2/3].
    let mut p = poly1d(&ctx, &[1.0f64, -3.0, 2.0])?;
    p.set_coefficient(2, 0.0)?;
    let r = p.roots()?.to_vec()?;
    assert_eq!(r.len(), 1, "{r:?}");
    assert!((r[0] - Complex64::new(2.0 / 3.0, 0.0)).norm() <= 1e-12, "{r:?}");
    // NumPy: poly1d([1, 2, 3], True) is poly1d([1., -6., 11., -6.]), in float64.
    let p = Poly1d::<f64>::from_roots(&upload(&ctx, &[1i32, 2, 3])?)?;
    assert_eq!(
        (p.coeffs().to_vec()?, p.order()),
        (vec![1.0, -6.0, 11.0, -6.0], 3)
    );
    let mut back: Vec<f64> = p.roots()?.to_vec()?.iter().map(|z| z.re).collect();
    back.sort_by(f64::total_cmp);
    assert_near(&back, &[1.0, 2.0, 3.0], 1e-9, "roots of (x - 1)(x - 2)(x - 3)");
    // Five roots apart: the product of the factors, zero at each root.
    let zeros = [0.15, -0.9, 0.85, -0.4, 0.5];
    let dz = upload(&ctx, &zeros)?;
    let p = Poly1d::<f64>::from_roots(&dz)?;
    let want = zeros.iter().fold(vec![1.0], |acc, &z| host_mul(&acc, &[1.0, -z]));
    assert_near(
        &p.coeffs().to_vec()?,
        &want,
        1e-13,
        "from_roots of 5 random roots",
    );
    assert_near(
        &p.eval(&dz)?.to_vec()?,
        &[0.0; 5],
        1e-13,
        "the polynomial at its roots",
    );
    let mut found: Vec<f64> = p.roots()?.to_vec()?.iter().map(|z| z.re).collect();
    found.sort_by(f64::total_cmp);
    let mut sorted = zeros.to_vec();
    sorted.sort_by(f64::total_cmp);
    assert_near(&found, &sorted, 1e-9, "the roots of the polynomial of five roots");
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn poly1d_of_bool_adds_but_refuses_sub_and_neg() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let (t, f) = (Bool::TRUE, Bool::FALSE);
    let p = poly1d(&ctx, &[f, t, f])?;
    assert_eq!((p.coeffs().to_vec()?, p.order()), (vec![t, f], 1));
    let q = poly1d(&ctx, &[t])?;
    // NumPy: poly1d([True, False]) + poly1d([True]) is poly1d([True, True]).
    assert_eq!((&p + &q)?.coeffs().to_vec()?, [t, t]);
    // NumPy refuses `-` on booleans.
    let r = &p - &q;
    assert!(
        matches!(r, Err(Error::Argument(ArgumentError::UndefinedOnElement { .. }))),
        "{r:?}"
    );
    let r = -&p;
    assert!(
        matches!(r, Err(Error::Argument(ArgumentError::UndefinedOnElement { .. }))),
        "{r:?}"
    );
    Ok(())
}

/// The six points of the NumPy anchors.
const X6: [f64; 6] = [0.0, 1.0, 2.0, 3.0, 4.0, 5.0];
const Y6: [f64; 6] = [1.0, 1.8, 3.3, 4.5, 6.3, 7.9];

#[test]
#[ignore = "needs a CUDA GPU"]
fn polyfit_full_matches_numpy() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let (x, y) = (upload(&ctx, &X6)?, upload(&ctx, &Y6)?);
    // np.polyfit(x, y, 2, full=True)
    let fit = gpuarray::polyfit_full(&x, &y, 2, None, None)?;
    let coeffs = [0.09285714285714285, 0.9414285714285716, 0.928571428571431];
    assert_near(&fit.coeffs.to_vec()?, &coeffs, 1e-10, "coefficients");
    assert_rel(&fit.residuals, &[0.07085714285714265], 1e-10, "residuals");
    assert_eq!(fit.rank, 3);
    let sv = [1.6369574560505735, 0.5527665599747659, 0.12173502887048274];
    assert_near(&fit.singular_values, &sv, 1e-12, "singular values");
    assert_eq!(fit.rcond, 1.3322676295501878e-15);
    assert_eq!(fit.rcond, 6.0 * f64::EPSILON);
    assert_eq!(gpuarray::polyfit(&x, &y, 2)?.to_vec()?, fit.coeffs.to_vec()?);
    // The fit against the host's least squares too.
    let want = host_fit(&X6, &[Y6.to_vec()], 2, None);
    check_fit(&fit, &want, 6, 1e-12, "six points")?;

    // np.polyfit(x, y, 2, w=[1, 2, 1, 0.5, 3, 1], full=True)
    let wv = [1.0, 2.0, 1.0, 0.5, 3.0, 1.0];
    let w = upload(&ctx, &wv)?;
    let fit = gpuarray::polyfit_full(&x, &y, 2, Some(w.view()), None)?;
    let coeffs = [0.08627473072243065, 1.024658614628867, 0.7897111181215936];
    assert_near(&fit.coeffs.to_vec()?, &coeffs, 1e-10, "weighted coefficients");
    assert_rel(&fit.residuals, &[0.1407269367704732], 1e-10, "weighted residuals");
    assert_eq!(fit.rank, 3);
    let sv = [1.6713517352062879, 0.4494859003231462, 0.06742256768785555];
    assert_near(&fit.singular_values, &sv, 1e-12, "weighted singular values");
    assert_eq!(
        gpuarray::polyfit_weighted(&x, &y, 2, &w)?.to_vec()?,
        fit.coeffs.to_vec()?
    );
    check_fit(
        &fit,
        &host_fit(&X6, &[Y6.to_vec()], 2, Some(&wv)),
        6,
        1e-12,
        "six weighted points",
    )?;

    // np.polyfit(x, y, 2, rcond=0.1, full=True): the smallest singular value cut, rank 2, no
    // residuals.
    let fit = gpuarray::polyfit_full(&x, &y, 2, None, Some(0.1))?;
    let coeffs = [0.15392630846505942, 0.6177953178295132, 1.1816036681671485];
    assert_near(&fit.coeffs.to_vec()?, &coeffs, 1e-10, "rcond=0.1 coefficients");
    assert!(fit.residuals.is_empty(), "{fit:?}");
    assert_eq!(fit.rank, 2);
    let sv = [1.6369574560505735, 0.5527665599747659, 0.12173502887048274];
    assert_near(&fit.singular_values, &sv, 1e-12, "rcond=0.1 singular values");
    assert_eq!(fit.rcond, 0.1);

    // np.polyfit(x, np.stack([y, y**2, -y], axis=1), 1, full=True)
    let cols = Array2::from_shape_fn((6, 3), |(i, j)| match j {
        0 => Y6[i],
        1 => Y6[i] * Y6[i],
        _ => -Y6[i],
    });
    let fit = gpuarray::polyfit_full(&x, &DeviceArray::from_ndarray(&ctx, &cols)?, 1, None, None)?;
    assert_eq!(fit.coeffs.shape(), [2, 3]);
    let coeffs = [
        1.4057142857142852,
        12.164571428571426,
        -1.4057142857142852,
        0.6190476190476181,
        -7.498095238095245,
        -0.6190476190476181,
    ];
    assert_near(
        &fit.coeffs.to_vec()?,
        &coeffs,
        1e-10,
        "coefficients of three columns",
    );
    let residuals = [0.39276190476190453, 270.7373676190477, 0.39276190476190453];
    assert_rel(&fit.residuals, &residuals, 1e-10, "residuals of three columns");
    assert_eq!(fit.rank, 2);
    let sv = [1.351193111233465, 0.41746517957217644];
    assert_near(
        &fit.singular_values,
        &sv,
        1e-12,
        "singular values of three columns",
    );
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn polyfit_of_i32_points_matches_numpy() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let xs = [-3i32, -1, 0, 2, 5, 7];
    let ys = [4i32, -2, 7, 1, 3, 9];
    let (x, y) = (upload(&ctx, &xs)?, upload(&ctx, &ys)?);
    // np.polyfit(np.int32 x, np.int32 y, 3, full=True): in float64.
    let fit = gpuarray::polyfit_full(&x, &y, 3, None, None)?;
    let coeffs = [
        0.02607504793207341,
        0.01697732416497283,
        -0.473433378021883,
        2.259784630022055,
    ];
    assert_near(&fit.coeffs.to_vec()?, &coeffs, 1e-10, "coefficients");
    assert_rel(&fit.residuals, &[46.3031757701567], 1e-10, "residuals");
    assert_eq!(fit.rank, 4);
    let sv = [
        1.788342944220435,
        0.8099548130781684,
        0.3593465564747344,
        0.12912306911720012,
    ];
    assert_near(&fit.singular_values, &sv, 1e-12, "singular values");
    assert_eq!(fit.rcond, 6.0 * f64::EPSILON);
    assert_eq!(gpuarray::polyfit(&x, &y, 3)?.to_vec()?, fit.coeffs.to_vec()?);
    // w=np.int32([1, 2, 3, 1, 2, 1])
    let w = upload(&ctx, &[1i32, 2, 3, 1, 2, 1])?;
    let fit = gpuarray::polyfit_full(&x, &y, 3, Some(w.view()), None)?;
    let coeffs = [
        0.05099676454928944,
        -0.3153275359153233,
        0.16786344668787223,
        4.391701410219656,
    ];
    assert_near(&fit.coeffs.to_vec()?, &coeffs, 1e-10, "weighted coefficients");
    assert_rel(&fit.residuals, &[229.4784373364642], 1e-10, "weighted residuals");
    assert_eq!(fit.rank, 4);
    let sv = [
        1.7702473415084066,
        0.8561217472319076,
        0.32608350353891097,
        0.16416288410841295,
    ];
    assert_near(&fit.singular_values, &sv, 1e-12, "weighted singular values");
    assert_eq!(
        gpuarray::polyfit_weighted(&x, &y, 3, &w)?.to_vec()?,
        fit.coeffs.to_vec()?
    );
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn polyfit_of_deficient_rank_is_numpys_least_norm_fit() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    // x = [1., 2.] * 10, y = [0.5, 2.5] * 10 + [0.1 * i for i in range(20)], deg 3: two
    // distinct points, rank 2 (NumPy warns RankWarning without full=True).
    let xs: Vec<f64> = (0..20).map(|i| if i % 2 == 0 { 1.0 } else { 2.0 }).collect();
    let ys: Vec<f64> = (0..20)
        .map(|i| (if i % 2 == 0 { 0.5 } else { 2.5 }) + 0.1 * f64::from(i))
        .collect();
    let (x, y) = (upload(&ctx, &xs)?, upload(&ctx, &ys)?);
    let fit = gpuarray::polyfit_full(&x, &y, 3, None, None)?;
    let coeffs = [
        0.12954747994850968,
        0.25126250123774624,
        0.43938013664719305,
        0.5798098821665519,
    ];
    assert_near(&fit.coeffs.to_vec()?, &coeffs, 1e-9, "coefficients");
    assert_eq!(fit.rank, 2, "{fit:?}");
    assert!(fit.residuals.is_empty(), "{fit:?}");
    assert_eq!(fit.rcond, 4.440892098500626e-15);
    // NumPy's singular values: 1.9382258601205216, 0.4932347465052156, then two of rounding
    // (2.7e-16, 1.9e-17), below the cut.
    assert_eq!(fit.singular_values.len(), 4, "{fit:?}");
    assert_near(
        &fit.singular_values[..2],
        &[1.9382258601205216, 0.4932347465052156],
        1e-12,
        "singular values",
    );
    let cut = fit.rcond * fit.singular_values[0];
    assert!(
        fit.singular_values[2..].iter().all(|&s| (0.0..=cut).contains(&s)),
        "{fit:?}"
    );
    // The fit passes through the mean of the points at each x: 1.4 at 1, 3.5 at 2.
    let c = fit.coeffs.to_vec()?;
    assert_near(
        &[host_polyval(&c, 1.0), host_polyval(&c, 2.0)],
        &[1.4, 3.5],
        1e-12,
        "fitted values",
    );
    assert_eq!(gpuarray::polyfit(&x, &y, 3)?.to_vec()?, c);
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn polyfit_of_fewer_points_than_coefficients_matches_numpy() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    // np.polyfit([0., 1, 2], [1., 3, 2], 4, full=True): the interpolating polynomial of least
    // norm (of the scaled coefficients), rank 3, no residuals, three singular values (LAPACK's
    // min(M, N) of the 3 x 5 matrix).
    let (xs, ys) = ([0.0f64, 1.0, 2.0], [1.0f64, 3.0, 2.0]);
    let (x, y) = (upload(&ctx, &xs)?, upload(&ctx, &ys)?);
    let fit = gpuarray::polyfit_full(&x, &y, 4, None, None)?;
    let coeffs = [
        -0.1634130761620614,
        -0.18217120689252234,
        0.19040515381199816,
        2.1551791292425846,
        1.0000000000000009,
    ];
    let c = fit.coeffs.to_vec()?;
    assert_near(&c, &coeffs, 1e-9, "coefficients");
    let through: Vec<f64> = xs.iter().map(|&x| host_polyval(&c, x)).collect();
    assert_near(&through, &ys, 1e-12, "the fit through the points");
    assert_eq!(fit.rank, 3, "{fit:?}");
    assert!(fit.residuals.is_empty(), "{fit:?}");
    assert_eq!(fit.rcond, 3.0 * f64::EPSILON);
    let sv = [2.1091003473189858, 0.7051188842743652, 0.23345895566160904];
    assert_near(&fit.singular_values[..3], &sv, 1e-12, "singular values");
    // As many singular values as NumPy gives.
    assert_eq!(fit.singular_values.len(), 3, "{fit:?}");
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn polyfit_recovers_exact_polynomials() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(0x9017_0004);
    for deg in 0..=6 {
        let n = deg + 1;
        let p = random_points(&mut rng, n);
        // As many points as coefficients (Chebyshev points, well apart): interpolation, no
        // residuals.
        let xs: Vec<f64> = (0..n)
            .map(|i| (std::f64::consts::PI * (i as f64 + 0.5) / n as f64).cos())
            .collect();
        let ys = noisy_values(&mut rng, &p, &xs, 0.0);
        let fit = gpuarray::polyfit_full(&upload(&ctx, &xs)?, &upload(&ctx, &ys)?, deg, None, None)?;
        assert_near(
            &fit.coeffs.to_vec()?,
            &p,
            1e-9,
            &format!("deg {deg} through {n} points"),
        );
        assert!(fit.residuals.is_empty(), "deg {deg}: {fit:?}");
        assert_eq!(fit.rank, n, "deg {deg}: {fit:?}");
        for m in [50, 64, 257, 1000] {
            let xs = random_points(&mut rng, m);
            let ys = noisy_values(&mut rng, &p, &xs, 0.0);
            let what = format!("deg {deg} of {m} points");
            let fit = gpuarray::polyfit_full(&upload(&ctx, &xs)?, &upload(&ctx, &ys)?, deg, None, None)?;
            assert_near(&fit.coeffs.to_vec()?, &p, 1e-9, &what);
            let sum_sq: f64 = ys.iter().map(|y| y * y).sum();
            assert_eq!(fit.residuals.len(), 1, "{what}: {fit:?}");
            assert!(fit.residuals[0] <= 1e-20 * sum_sq.max(1.0), "{what}: {fit:?}");
            assert_eq!(fit.rank, n, "{what}: {fit:?}");
            assert_eq!(fit.singular_values.len(), n, "{what}: {fit:?}");
            // The columns have norm 1: the squares of the singular values sum to their count.
            let sq: f64 = fit.singular_values.iter().map(|s| s * s).sum();
            assert!((sq - n as f64).abs() <= 1e-10 * n as f64, "{what}: {fit:?}");
        }
    }
    // Points in [0, 10], degree 4 and 5.
    for deg in [4, 5] {
        let p = random_points(&mut rng, deg + 1);
        let xs: Vec<f64> = (0..300).map(|_| 5.0 + 5.0 * rng.f64()).collect();
        let ys = noisy_values(&mut rng, &p, &xs, 0.0);
        let got = gpuarray::polyfit(&upload(&ctx, &xs)?, &upload(&ctx, &ys)?, deg)?.to_vec()?;
        assert_near(&got, &p, 1e-9, &format!("deg {deg} of points in [0, 10]"));
    }
    // Degree 0: the mean.
    let ys = random_points(&mut rng, 100);
    let xs = random_points(&mut rng, 100);
    let got = gpuarray::polyfit(&upload(&ctx, &xs)?, &upload(&ctx, &ys)?, 0)?.to_vec()?;
    let mean = ys.iter().sum::<f64>() / 100.0;
    assert_near(&got, &[mean], 1e-13, "deg 0");
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn polyfit_of_noisy_points_is_the_least_squares_fit() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(0x9017_0005);
    for (m, deg) in [
        (2, 0),
        (3, 1),
        (20, 1),
        (50, 3),
        (200, 5),
        (1000, 2),
        (3000, 8),
        (513, 4),
    ] {
        let p = random_points(&mut rng, deg + 1);
        let xs = random_points(&mut rng, m);
        let ys = noisy_values(&mut rng, &p, &xs, 0.1);
        let fit = gpuarray::polyfit_full(&upload(&ctx, &xs)?, &upload(&ctx, &ys)?, deg, None, None)?;
        let want = host_fit(&xs, &[ys], deg, None);
        check_fit(&fit, &want, m, 1e-9, &format!("deg {deg} of {m} points"))?;
    }
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn polyfit_of_100_000_points() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(0x9017_0006);
    let m = 100_000;
    let p = [0.75, -0.5, 2.0, -1.25];
    let xs = random_points(&mut rng, m);
    let x = upload(&ctx, &xs)?;
    let exact = noisy_values(&mut rng, &p, &xs, 0.0);
    let got = gpuarray::polyfit(&x, &upload(&ctx, &exact)?, 3)?.to_vec()?;
    assert_near(&got, &p, 1e-9, "an exact cubic of 100 000 points");
    let ys = noisy_values(&mut rng, &p, &xs, 0.2);
    let fit = gpuarray::polyfit_full(&x, &upload(&ctx, &ys)?, 3, None, None)?;
    let want = host_fit(&xs, std::slice::from_ref(&ys), 3, None);
    check_fit(&fit, &want, m, 1e-9, "a noisy cubic of 100 000 points")?;
    // Weighted, the weights in [0.5, 1.5).
    let ws: Vec<f64> = (0..m).map(|_| 1.0 + 0.5 * rng.f64()).collect();
    let w = upload(&ctx, &ws)?;
    let fit = gpuarray::polyfit_full(&x, &upload(&ctx, &ys)?, 3, Some(w.view()), None)?;
    let want = host_fit(&xs, &[ys], 3, Some(&ws));
    check_fit(&fit, &want, m, 1e-9, "a weighted noisy cubic of 100 000 points")?;
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn polyfit_weighted_is_the_weighted_least_squares_fit() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(0x9017_0007);
    for (m, deg) in [(10, 1), (300, 3), (1000, 6)] {
        let p = random_points(&mut rng, deg + 1);
        let xs = random_points(&mut rng, m);
        let ys = noisy_values(&mut rng, &p, &xs, 0.1);
        let ws: Vec<f64> = (0..m).map(|_| 1.1 + rng.f64()).collect();
        let (x, y, w) = (upload(&ctx, &xs)?, upload(&ctx, &ys)?, upload(&ctx, &ws)?);
        let what = format!("deg {deg} of {m} weighted points");
        let fit = gpuarray::polyfit_full(&x, &y, deg, Some(w.view()), None)?;
        let want = host_fit(&xs, std::slice::from_ref(&ys), deg, Some(&ws));
        check_fit(&fit, &want, m, 1e-9, &what)?;
        let c = gpuarray::polyfit_weighted(&x, &y, deg, &w)?.to_vec()?;
        assert_eq!(c, fit.coeffs.to_vec()?, "{what}");
        // Weights four times as large: the same fit, residuals 16 times as large.
        let w4: Vec<f64> = ws.iter().map(|w| 4.0 * w).collect();
        let fit4 = gpuarray::polyfit_full(&x, &y, deg, Some(upload(&ctx, &w4)?.view()), None)?;
        assert_near(
            &fit4.coeffs.to_vec()?,
            &c,
            1e-12,
            &format!("{what}, weights times 4"),
        );
        let r16: Vec<f64> = fit.residuals.iter().map(|r| 16.0 * r).collect();
        assert_rel(&fit4.residuals, &r16, 1e-12, &format!("{what}, weights times 4"));
        // Negated weights: the same fit.
        let neg: Vec<f64> = ws.iter().map(|w| -w).collect();
        let c_neg = gpuarray::polyfit_weighted(&x, &y, deg, &upload(&ctx, &neg)?)?.to_vec()?;
        assert_near(&c_neg, &c, 1e-9, &format!("{what}, weights negated"));
        // All weights 1: the unweighted fit.
        let ones = upload(&ctx, &vec![1.0f64; m])?;
        let c1 = gpuarray::polyfit_weighted(&x, &y, deg, &ones)?.to_vec()?;
        assert_eq!(c1, gpuarray::polyfit(&x, &y, deg)?.to_vec()?, "{what}, weights 1");
    }
    // Points of weight 0 drop out: the fit of the others.
    let m = 600;
    let p = random_points(&mut rng, 4);
    let xs = random_points(&mut rng, m);
    let ys = noisy_values(&mut rng, &p, &xs, 0.1);
    let ws: Vec<f64> = (0..m)
        .map(|i| if i % 3 == 0 { 0.0 } else { 1.0 + 0.5 * rng.f64() })
        .collect();
    let kept: Vec<usize> = (0..m).filter(|i| i % 3 != 0).collect();
    let (kx, ky, kw): (Vec<f64>, Vec<f64>, Vec<f64>) = (
        kept.iter().map(|&i| xs[i]).collect(),
        kept.iter().map(|&i| ys[i]).collect(),
        kept.iter().map(|&i| ws[i]).collect(),
    );
    let got = gpuarray::polyfit_weighted(&upload(&ctx, &xs)?, &upload(&ctx, &ys)?, 3, &upload(&ctx, &ws)?)?;
    let want = gpuarray::polyfit_weighted(&upload(&ctx, &kx)?, &upload(&ctx, &ky)?, 3, &upload(&ctx, &kw)?)?;
    assert_near(
        &got.to_vec()?,
        &want.to_vec()?,
        1e-12,
        "weights 0 against the points dropped",
    );
    let host = host_fit(&kx, &[ky], 3, Some(&kw));
    assert_near(
        &got.to_vec()?,
        &host.row_major(),
        1e-9,
        "weights 0 against the host",
    );
    // Degree 0: the mean weighted by the squares of the weights.
    let ws: Vec<f64> = (0..m).map(|_| 1.0 + 0.5 * rng.f64()).collect();
    let got = gpuarray::polyfit_weighted(&upload(&ctx, &xs)?, &upload(&ctx, &ys)?, 0, &upload(&ctx, &ws)?)?;
    let mean =
        ws.iter().zip(&ys).map(|(w, y)| w * w * y).sum::<f64>() / ws.iter().map(|w| w * w).sum::<f64>();
    assert_near(&got.to_vec()?, &[mean], 1e-13, "weighted deg 0");
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn polyfit_of_columns_fits_each_column() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(0x9017_0008);
    let (m, k, deg) = (500, 4, 3);
    let xs = random_points(&mut rng, m);
    let cols: Vec<Vec<f64>> = (0..k)
        .map(|_| {
            let p = random_points(&mut rng, deg + 1);
            noisy_values(&mut rng, &p, &xs, 0.1)
        })
        .collect();
    let yh = Array2::from_shape_fn((m, k), |(i, j)| cols[j][i]);
    let x = upload(&ctx, &xs)?;
    let want = host_fit(&xs, &cols, deg, None);
    // C order.
    let y = DeviceArray::from_ndarray(&ctx, &yh)?;
    let fit = gpuarray::polyfit_full(&x, &y, deg, None, None)?;
    assert_eq!(fit.coeffs.shape(), [deg + 1, k]);
    check_fit(&fit, &want, m, 1e-9, "four columns")?;
    // Each column as its own fit.
    let c = fit.coeffs.to_ndarray()?;
    for (j, col) in cols.iter().enumerate() {
        let one = gpuarray::polyfit(&x, &upload(&ctx, col)?, deg)?.to_vec()?;
        assert_near(
            &c.column(j).to_vec(),
            &one,
            1e-12,
            &format!("column {j} against its own fit"),
        );
    }
    // Fortran order, a transposed view of a (k, m) upload, and of a dynamic dimension.
    let fortran = Array2::from_shape_vec((m, k).f(), cols.concat()).unwrap();
    assert_eq!(fortran, yh);
    let yf = DeviceArray::from_ndarray(&ctx, &fortran)?;
    check_fit(
        &gpuarray::polyfit_full(&x, &yf, deg, None, None)?,
        &want,
        m,
        1e-9,
        "Fortran order",
    )?;
    let yt = DeviceArray::from_ndarray(&ctx, &Array2::from_shape_fn((k, m), |(j, i)| cols[j][i]))?;
    let view = yt.t();
    assert_eq!(view.shape(), [m, k]);
    check_fit(
        &gpuarray::polyfit_full(&x, &view, deg, None, None)?,
        &want,
        m,
        1e-9,
        "transposed view",
    )?;
    let yd = DeviceArray::from_ndarray(&ctx, &yh.clone().into_dyn())?;
    let fit = gpuarray::polyfit_full(&x, &yd, deg, None, None)?;
    assert_eq!(fit.coeffs.shape(), [deg + 1, k]);
    check_fit(&fit, &want, m, 1e-9, "IxDyn")?;
    let y1 = DeviceArray::from_ndarray(&ctx, &Array1::from(cols[0].clone()).into_dyn())?;
    let c1 = gpuarray::polyfit(&x, &y1, deg)?;
    assert_eq!(c1.shape(), [deg + 1]);
    assert_near(&c1.to_vec()?, &want.coeffs[0], 1e-9, "IxDyn of one axis");
    // One column: (deg + 1, 1).
    let single = DeviceArray::from_ndarray(&ctx, &yh.slice(s![.., 1..2]).to_owned())?;
    let c = gpuarray::polyfit(&x, &single, deg)?;
    assert_eq!(c.shape(), [deg + 1, 1]);
    assert_near(&c.to_vec()?, &want.coeffs[1], 1e-9, "one column");
    // Weighted columns.
    let ws: Vec<f64> = (0..m).map(|_| 1.0 + 0.5 * rng.f64()).collect();
    let fit = gpuarray::polyfit_full(&x, &y, deg, Some(upload(&ctx, &ws)?.view()), None)?;
    check_fit(
        &fit,
        &host_fit(&xs, &cols, deg, Some(&ws)),
        m,
        1e-9,
        "four weighted columns",
    )?;
    let c = gpuarray::polyfit_weighted(&x, &y, deg, &upload(&ctx, &ws)?)?;
    assert_eq!(c.to_vec()?, fit.coeffs.to_vec()?);
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn polyfit_of_f32_f16_i32_and_u8_points() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(0x9017_0009);
    // f32: fitted in f64 from the f32 values.
    let (m, deg) = (400, 4);
    let xs: Vec<f32> = (0..m).map(|_| rng.f32()).collect();
    let ys: Vec<f32> = (0..m).map(|_| rng.f32()).collect();
    let ws: Vec<f32> = (0..m).map(|_| 1.0 + 0.5 * rng.f32()).collect();
    let wide = |v: &[f32]| v.iter().map(|&v| f64::from(v)).collect::<Vec<f64>>();
    let (x, y, w) = (upload(&ctx, &xs)?, upload(&ctx, &ys)?, upload(&ctx, &ws)?);
    let fit = gpuarray::polyfit_full(&x, &y, deg, None, None)?;
    check_fit(
        &fit,
        &host_fit(&wide(&xs), &[wide(&ys)], deg, None),
        m,
        1e-9,
        "f32",
    )?;
    let fit = gpuarray::polyfit_full(&x, &y, deg, Some(w.view()), None)?;
    let want = host_fit(&wide(&xs), &[wide(&ys)], deg, Some(&wide(&ws)));
    check_fit(&fit, &want, m, 1e-9, "weighted f32")?;
    assert_eq!(
        gpuarray::polyfit_weighted(&x, &y, deg, &w)?.to_vec()?,
        fit.coeffs.to_vec()?
    );
    // f32 points on an exact cubic: k / 64 and dyadic coefficients, exact in f32.
    let p = [0.5, -1.25, 2.0, 0.75];
    let xs: Vec<f32> = (-64..=64).map(|k| k as f32 / 64.0).collect();
    let ys: Vec<f32> = xs
        .iter()
        .map(|&x| host_polyval(&p, f64::from(x)) as f32)
        .collect();
    let got = gpuarray::polyfit(&upload(&ctx, &xs)?, &upload(&ctx, &ys)?, 3)?.to_vec()?;
    assert_near(&got, &p, 1e-9, "an exact f32 cubic");

    // f16: eighths on an exact quadratic, then random points against the host.
    let p = [0.5, -1.0, 0.25];
    let xs: Vec<f16> = (-8..=8).map(|k| f16::from_f64(f64::from(k) / 8.0)).collect();
    let ys: Vec<f16> = xs
        .iter()
        .map(|x| f16::from_f64(host_polyval(&p, x.to_f64())))
        .collect();
    let ws: Vec<f16> = (0..xs.len())
        .map(|i| f16::from_f64([1.0, 2.0, 0.5][i % 3]))
        .collect();
    assert!(ys
        .iter()
        .zip(&xs)
        .all(|(y, x)| y.to_f64() == host_polyval(&p, x.to_f64())));
    let (x, y) = (upload(&ctx, &xs)?, upload(&ctx, &ys)?);
    assert_near(
        &gpuarray::polyfit(&x, &y, 2)?.to_vec()?,
        &p,
        1e-9,
        "an exact f16 quadratic",
    );
    let got = gpuarray::polyfit_weighted(&x, &y, 2, &upload(&ctx, &ws)?)?.to_vec()?;
    assert_near(&got, &p, 1e-9, "an exact weighted f16 quadratic");
    let m = 300;
    let xs: Vec<f16> = (0..m).map(|_| f16::from_f64(rng.f64())).collect();
    let ys: Vec<f16> = (0..m).map(|_| f16::from_f64(rng.f64())).collect();
    let wide16 = |v: &[f16]| v.iter().map(|v| v.to_f64()).collect::<Vec<f64>>();
    let fit = gpuarray::polyfit_full(&upload(&ctx, &xs)?, &upload(&ctx, &ys)?, 3, None, None)?;
    check_fit(
        &fit,
        &host_fit(&wide16(&xs), &[wide16(&ys)], 3, None),
        m,
        1e-9,
        "f16",
    )?;

    // i32: an exact cubic of -20..=20, and noisy points weighted against the host.
    let xs: Vec<i32> = (-20..=20).collect();
    let ys: Vec<i32> = xs
        .iter()
        .map(|&x| 3 * x * x * x - 2 * x * x + 7 * x - 5)
        .collect();
    let got = gpuarray::polyfit(&upload(&ctx, &xs)?, &upload(&ctx, &ys)?, 3)?.to_vec()?;
    assert_near(&got, &[3.0, -2.0, 7.0, -5.0], 1e-9, "an exact i32 cubic");
    let m = 200;
    let xs: Vec<i32> = (0..m).map(|_| (rng.next_u64() % 41) as i32 - 20).collect();
    let ys: Vec<i32> = (0..m).map(|_| (rng.next_u64() % 2001) as i32 - 1000).collect();
    let ws: Vec<i32> = (0..m).map(|_| (rng.next_u64() % 4) as i32 + 1).collect();
    let widei = |v: &[i32]| v.iter().map(|&v| f64::from(v)).collect::<Vec<f64>>();
    let fit = gpuarray::polyfit_full(
        &upload(&ctx, &xs)?,
        &upload(&ctx, &ys)?,
        2,
        Some(upload(&ctx, &ws)?.view()),
        None,
    )?;
    let want = host_fit(&widei(&xs), &[widei(&ys)], 2, Some(&widei(&ws)));
    check_fit(&fit, &want, m, 1e-9, "weighted i32")?;

    // u8: x^2 + 1 of 0..=10.
    let xs: Vec<u8> = (0..=10).collect();
    let ys: Vec<u8> = xs.iter().map(|&x| x * x + 1).collect();
    let got = gpuarray::polyfit(&upload(&ctx, &xs)?, &upload(&ctx, &ys)?, 2)?.to_vec()?;
    assert_near(&got, &[1.0, 0.0, 1.0], 1e-9, "an exact u8 quadratic");
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn polyfit_of_views_is_the_fit_of_their_elements() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(0x9017_000a);
    let m = 333;
    let p = random_points(&mut rng, 3);
    // x: every second element of 2m, from the second; y: reversed; w: reversed.
    let stored_x = random_points(&mut rng, 2 * m);
    let xs: Vec<f64> = stored_x.iter().skip(1).step_by(2).copied().collect();
    let ys = noisy_values(&mut rng, &p, &xs, 0.1);
    let stored_y: Vec<f64> = ys.iter().rev().copied().collect();
    let ws: Vec<f64> = (0..m).map(|_| 1.0 + 0.5 * rng.f64()).collect();
    let stored_w: Vec<f64> = ws.iter().rev().copied().collect();
    let (dx, dy, dw) = (
        upload(&ctx, &stored_x)?,
        upload(&ctx, &stored_y)?,
        upload(&ctx, &stored_w)?,
    );
    let xv = dx.view().slice_move(s![1..;2])?;
    let yv = dy.view().flip(0)?;
    let wv = dw.view().flip(0)?;
    assert_eq!(xv.to_vec()?, xs);
    assert_eq!(yv.to_vec()?, ys);
    let (x, y, w) = (upload(&ctx, &xs)?, upload(&ctx, &ys)?, upload(&ctx, &ws)?);
    assert_eq!(
        gpuarray::polyfit(&xv, &yv, 2)?.to_vec()?,
        gpuarray::polyfit(&x, &y, 2)?.to_vec()?
    );
    let of_views = gpuarray::polyfit_full(&xv, &yv, 2, Some(wv), None)?;
    let of_copies = gpuarray::polyfit_full(&x, &y, 2, Some(w.view()), None)?;
    assert_eq!(of_views.coeffs.to_vec()?, of_copies.coeffs.to_vec()?);
    assert_eq!(of_views.residuals, of_copies.residuals);
    assert_eq!(of_views.singular_values, of_copies.singular_values);
    check_fit(
        &of_views,
        &host_fit(&xs, std::slice::from_ref(&ys), 2, Some(&ws)),
        m,
        1e-9,
        "views",
    )?;
    assert_eq!(
        gpuarray::polyfit_weighted(&xv, &yv, 2, &dw.view().flip(0)?)?.to_vec()?,
        of_copies.coeffs.to_vec()?
    );
    Ok(())
}

/// Whether `r` is the refusal of an element type.
fn undefined<T>(r: &gpu_runtime::Result<T>) -> bool {
    matches!(r, Err(Error::Argument(ArgumentError::UndefinedOnElement { .. })))
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn polyfit_refuses_what_it_cannot_fit() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let empty = DeviceArray::<f64, Ix1>::empty(&ctx, 0)?;
    let r = gpuarray::polyfit(&empty, &empty, 1);
    assert!(
        matches!(
            r,
            Err(Error::Shape(ArrayShapeError::EmptyOperand {
                operation: "polyfit",
                operand: "x"
            }))
        ),
        "{r:?}"
    );
    let x = upload(&ctx, &[0.0f64, 1.0, 2.0, 3.0, 4.0])?;
    let y4 = upload(&ctx, &[0.0f64, 1.0, 2.0, 3.0])?;
    let r = gpuarray::polyfit(&x, &y4, 1);
    assert!(
        matches!(
            r,
            Err(Error::Shape(ArrayShapeError::ElementCounts {
                first: 5,
                second: 4,
                ..
            }))
        ),
        "{r:?}"
    );
    let r = gpuarray::polyfit(
        &x,
        &DeviceArray::from_ndarray(&ctx, &Array2::<f64>::zeros((4, 2)))?,
        1,
    );
    assert!(
        matches!(
            r,
            Err(Error::Shape(ArrayShapeError::ElementCounts {
                first: 5,
                second: 4,
                ..
            }))
        ),
        "{r:?}"
    );
    let w6 = upload(&ctx, &[1.0f64; 6])?;
    let y5 = upload(&ctx, &[1.0f64, 2.0, 3.0, 4.0, 5.0])?;
    let r = gpuarray::polyfit_weighted(&x, &y5, 1, &w6);
    assert!(
        matches!(
            r,
            Err(Error::Shape(ArrayShapeError::ElementCounts {
                first: 5,
                second: 6,
                ..
            }))
        ),
        "{r:?}"
    );
    let r = gpuarray::polyfit_full(&x, &y5, 1, Some(w6.view()), None);
    assert!(
        matches!(
            r,
            Err(Error::Shape(ArrayShapeError::ElementCounts {
                first: 5,
                second: 6,
                ..
            }))
        ),
        "{r:?}"
    );
    // y of 3 axes, or of none.
    let y3 = DeviceArray::from_ndarray(&ctx, &Array3::<f64>::zeros((5, 2, 2)))?;
    let r = gpuarray::polyfit(&x, &y3, 1);
    assert!(
        matches!(
            r,
            Err(Error::Shape(ArrayShapeError::Dimension { axes: 3, fixed: 2 }))
        ),
        "{r:?}"
    );
    let y3d = DeviceArray::from_ndarray(&ctx, &Array3::<f64>::zeros((5, 2, 2)).into_dyn())?;
    let r = gpuarray::polyfit(&x, &y3d, 1);
    assert!(
        matches!(r, Err(Error::Shape(ArrayShapeError::Dimension { axes: 3, .. }))),
        "{r:?}"
    );
    let y0 = DeviceArray::from_ndarray(&ctx, &arr0(1.0f64))?;
    let r = gpuarray::polyfit(&x, &y0, 1);
    assert!(
        matches!(r, Err(Error::Shape(ArrayShapeError::Dimension { axes: 0, .. }))),
        "{r:?}"
    );
    // Complex points.
    let cx: Vec<Complex64> = (0..4).map(|i| Complex64::new(f64::from(i), 0.0)).collect();
    let cy: Vec<Complex64> = (0..4).map(|i| Complex64::new(1.0, f64::from(i))).collect();
    let (cx, cy) = (upload(&ctx, &cx)?, upload(&ctx, &cy)?);
    let r = gpuarray::polyfit(&cx, &cy, 1);
    assert!(undefined(&r), "{r:?}");
    let r = gpuarray::polyfit_weighted(&cx, &cy, 1, &cx);
    assert!(undefined(&r), "{r:?}");
    let r = gpuarray::polyfit_full(&cx, &cy, 1, None, None);
    assert!(undefined(&r), "{r:?}");
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn polyfit_on_a_stream() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let stream = Stream::new(&ctx)?;
    let mut rng = Rng::new(0x9017_000b);
    let m = 5000;
    let p = [0.25, -1.5, 0.5, 2.0];
    let xs = random_points(&mut rng, m);
    let x = upload(&ctx, &xs)?;
    // y written on the stream, fitted on the stream.
    let c = upload(&ctx, &p)?;
    let y = gpuarray::on(&stream).polyval(&c, &x)?;
    let got = gpuarray::on(&stream).polyfit(&x, &y, 3)?.to_vec()?;
    assert_near(&got, &p, 1e-9, "a cubic fitted on a stream");
    // The stream forms give what the others give.
    let ys = noisy_values(&mut rng, &p, &xs, 0.1);
    let ws: Vec<f64> = (0..m).map(|_| 1.0 + 0.5 * rng.f64()).collect();
    let (y, w) = (upload(&ctx, &ys)?, upload(&ctx, &ws)?);
    let on = gpuarray::on(&stream);
    assert_eq!(
        on.polyfit(&x, &y, 3)?.to_vec()?,
        gpuarray::polyfit(&x, &y, 3)?.to_vec()?
    );
    assert_eq!(
        on.polyfit_weighted(&x, &y, 3, &w)?.to_vec()?,
        gpuarray::polyfit_weighted(&x, &y, 3, &w)?.to_vec()?
    );
    let a = on.polyfit_full(&x, &y, 3, Some(w.view()), Some(1e-3))?;
    let b = gpuarray::polyfit_full(&x, &y, 3, Some(w.view()), Some(1e-3))?;
    assert_eq!(a.coeffs.to_vec()?, b.coeffs.to_vec()?);
    assert_eq!(
        (&a.residuals, a.rank, &a.singular_values, a.rcond),
        (&b.residuals, b.rank, &b.singular_values, 1e-3)
    );
    let want = host_fit(&xs, std::slice::from_ref(&ys), 3, Some(&ws));
    assert_near(
        &a.coeffs.to_vec()?,
        &want.row_major(),
        1e-9,
        "weighted on a stream",
    );
    // Two columns on the stream.
    let y2 = DeviceArray::from_ndarray(
        &ctx,
        &Array2::from_shape_fn((m, 2), |(i, j)| if j == 0 { ys[i] } else { xs[i] - ys[i] }),
    )?;
    let c = on.polyfit(&x, &y2, 3)?;
    assert_eq!(c.shape(), [4, 2]);
    assert_eq!(c.to_vec()?, gpuarray::polyfit(&x, &y2, 3)?.to_vec()?);
    stream.synchronize()?;
    Ok(())
}
