//! NumPy's `linalg.det`, `slogdet`, `inv`, `solve` and `cholesky` on a GPU, against
//! factorizations computed here in `f64` (LU with partial pivoting, Cholesky) on random
//! matrices: stacks of several leading axes, one matrix (0-d results), `1 x 1`, `0 x 0` and
//! empty stacks, matrices of 200 and 300 rows, transposed (strided) inputs, every real element
//! type's result type (`f64` for `i32`, `u8` and `bool`, `f32` for `f32`, `f16` for `f16`);
//! NumPy 2's right-hand sides of `solve` (a vector, `k` columns, broadcast leading axes); the
//! singular and not positive definite matrices named by their index, the upper triangle
//! never read by `cholesky`, and the refusals of shapes; `matrix_power` of integer and float
//! stacks against repeated products on the host (powers 0 to 13, the identity of power 0,
//! integers wrapping as NumPy's), of an inverse, on a stream.

use gpu_runtime::gpuarray::{self, Bool, DeviceArray, Element};
use gpu_runtime::half::f16;
use gpu_runtime::ndarray::{Array, Array2, IxDyn};
use gpu_runtime::{Context, Error, LinAlgError, Stream};
use gpu_suite::Rng;

/// `n x n` matrices in C order, `count` of them, as `f64`.
pub(super) fn random_matrices(rng: &mut Rng, count: usize, n: usize) -> Vec<f64> {
    (0..count * n * n).map(|_| rng.f64()).collect()
}

/// The determinant of the `n x n` matrix `a` (C order) by LU with partial pivoting in `f64`.
pub(super) fn host_det(a: &[f64], n: usize) -> f64 {
    let mut m = a.to_vec();
    let mut det = 1.0;
    for j in 0..n {
        let p = (j..n)
            .max_by(|&x, &y| m[x * n + j].abs().total_cmp(&m[y * n + j].abs()))
            .unwrap();
        if m[p * n + j] == 0.0 {
            return 0.0;
        }
        if p != j {
            for c in 0..n {
                m.swap(j * n + c, p * n + c);
            }
            det = -det;
        }
        det *= m[j * n + j];
        for i in j + 1..n {
            let f = m[i * n + j] / m[j * n + j];
            for c in j..n {
                m[i * n + c] -= f * m[j * n + c];
            }
        }
    }
    det
}

/// `a @ x` for an `n x n` `a` and an `n x k` `x` (C order).
pub(super) fn host_matmul(a: &[f64], x: &[f64], n: usize, k: usize) -> Vec<f64> {
    let mut out = vec![0.0; n * k];
    for i in 0..n {
        for c in 0..k {
            out[i * k + c] = (0..n).map(|j| a[i * n + j] * x[j * k + c]).sum();
        }
    }
    out
}

/// Each of `got` within `tol` (relative to the largest magnitude of `want`, at least 1) of `want`.
pub(super) fn assert_near(got: &[f64], want: &[f64], tol: f64, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}");
    let scale = want.iter().fold(1.0f64, |m, v| m.max(v.abs()));
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            (g - w).abs() <= tol * scale || (g.is_nan() && w.is_nan()),
            "{what}[{i}]: {g} against {w}"
        );
    }
}

pub(super) fn upload<T: Element>(
    ctx: &Context,
    shape: &[usize],
    v: Vec<T>,
) -> gpu_runtime::Result<DeviceArray<T, IxDyn>> {
    DeviceArray::from_ndarray(ctx, &Array::from_shape_vec(IxDyn(shape), v).unwrap())
}

/// An element's value as `f64`, for the host's references.
pub(super) trait Value: Element {
    /// The value as `f64`.
    fn value(self) -> f64;
}

macro_rules! value {
    ($($t:ty: $x:ident => $e:expr),* $(,)?) => {$(
        impl Value for $t {
            fn value(self) -> f64 {
                let $x = self;
                $e
            }
        }
    )*};
}

value!(f64: x => x, f32: x => f64::from(x), i32: x => f64::from(x), u8: x => f64::from(x), f16: x => x.to_f64(), Bool: x => f64::from(u8::from(x.get())));

/// Every element of `v` as `f64`.
pub(super) fn as_f64<T: Value>(v: Vec<T>) -> Vec<f64> {
    v.into_iter().map(Value::value).collect()
}

/// `det` and `slogdet` of a `(2, 3, n, n)` stack of `T`, against the host's LU of the same
/// values, within `tol`.
fn check_dets<T: Value + gpuarray::LinalgType<Out: Value, Real: Value>>(
    ctx: &Context,
    rng: &mut Rng,
    n: usize,
    tol: f64,
    make: impl Fn(f64) -> T,
) -> gpu_runtime::Result<()> {
    let values: Vec<T> = random_matrices(rng, 6, n).into_iter().map(&make).collect();
    let host: Vec<f64> = values.iter().map(|&x| x.value()).collect();
    let a = upload(ctx, &[2, 3, n, n], values)?;
    // The determinant of a 0 x 0 matrix is 1.
    let want: Vec<f64> = (0..6)
        .map(|m| host_det(&host[m * n * n..(m + 1) * n * n], n))
        .collect();
    let d = gpuarray::det(&a)?;
    assert_eq!(d.shape(), [2, 3]);
    let what = format!("det of {} {n} x {n}", std::any::type_name::<T>());
    assert_near(&as_f64(d.to_vec()?), &want, tol, &what);
    let s = gpuarray::slogdet(&a)?;
    let sign = as_f64(s.sign.to_vec()?);
    let logabs = as_f64(s.logabsdet.to_vec()?);
    let back: Vec<f64> = sign.iter().zip(&logabs).map(|(s, l)| s * l.exp()).collect();
    assert_near(&back, &want, tol, &format!("slogdet, {what}"));
    for (s, w) in sign.iter().zip(&want) {
        assert!(*w == 0.0 || *s == w.signum(), "{what}: sign {s} of {w}");
    }
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn det_and_slogdet_of_random_stacks_match_the_host_in_every_real_type() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(41);
    for n in [0, 1, 2, 4, 17] {
        check_dets(&ctx, &mut rng, n, 1e-10, |x| x)?;
        check_dets(&ctx, &mut rng, n, 1e-3, |x| x as f32)?;
        check_dets(&ctx, &mut rng, n, 1e-10, |x| (x * 10.0).round() as i32)?;
        check_dets(&ctx, &mut rng, n, 1e-10, |x| ((x + 1.0) * 4.0) as u8)?;
    }
    check_dets(&ctx, &mut rng, 3, 2e-2, f16::from_f64)?;
    check_dets(&ctx, &mut rng, 5, 1e-10, |x| Bool::from(x > 0.0))?;
    // The result types: f64 for integers, the float's own for floats.
    let i = DeviceArray::from_ndarray(
        &ctx,
        &Array2::from_shape_vec((2, 2), vec![1i32, 2, 3, 4]).unwrap(),
    )?;
    let d: DeviceArray<f64, _> = gpuarray::det(&i)?;
    assert_eq!(d.shape(), &[] as &[usize]);
    assert_near(&d.to_vec()?, &[-2.0], 1e-15, "det of [[1, 2], [3, 4]]");
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn det_of_singular_transposed_large_and_empty_stacks() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(42);
    // A singular matrix (two equal rows) and a zero column: det 0, slogdet (0, -inf).
    let mut m = random_matrices(&mut rng, 2, 4);
    for c in 0..4 {
        m[4 + c] = m[c];
        m[16 + c * 4 + 1] = 0.0;
    }
    let a = upload(&ctx, &[2, 4, 4], m)?;
    let d = gpuarray::det(&a)?.to_vec()?;
    assert!(d[0].abs() < 1e-15 && d[1] == 0.0, "{d:?}");
    let s = gpuarray::slogdet(&a)?;
    assert_eq!(s.sign.to_vec()?[1], 0.0);
    assert_eq!(s.logabsdet.to_vec()?[1], f64::NEG_INFINITY);
    // The transpose (a strided view) has the same determinant.
    let values = random_matrices(&mut rng, 1, 6);
    let a = upload(&ctx, &[6, 6], values.clone())?;
    let t = gpuarray::det(&a.t())?.to_vec()?[0];
    assert_near(&[t], &[host_det(&values, 6)], 1e-12, "det of a transpose");
    // 200 x 200: slogdet against the host's, where det itself may be far from 1.
    let n = 200;
    let values = random_matrices(&mut rng, 1, n);
    let a = upload(&ctx, &[n, n], values.clone())?;
    let s = gpuarray::slogdet(&a)?;
    let want = host_det(&values, n);
    assert_eq!(s.sign.to_vec()?[0], want.signum());
    let got = s.logabsdet.to_vec()?[0];
    assert!(
        (got - want.abs().ln()).abs() < 1e-9,
        "{got} against {}",
        want.abs().ln()
    );
    // No matrices: empty results of the leading axes' shape.
    let none = upload::<f32>(&ctx, &[0, 3, 3], vec![])?;
    assert_eq!(gpuarray::det(&none)?.shape(), [0]);
    assert_eq!(gpuarray::inv(&none)?.shape(), [0, 3, 3]);
    // Shapes refused before anything is launched.
    let v = upload(&ctx, &[4], vec![1.0f64; 4])?;
    assert!(matches!(
        gpuarray::det(&v),
        Err(Error::LinAlg(LinAlgError::TooFewAxes { axes: 1, .. }))
    ));
    let r = upload(&ctx, &[2, 3], vec![1.0f64; 6])?;
    assert!(matches!(
        gpuarray::inv(&r),
        Err(Error::LinAlg(LinAlgError::NotSquare { .. }))
    ));
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn inv_times_a_is_the_identity_and_a_singular_matrix_is_named() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(43);
    let (count, n) = (4, 9);
    let values = random_matrices(&mut rng, count, n);
    let identity: Vec<f64> = (0..n * n).map(|e| f64::from(u8::from(e / n == e % n))).collect();
    let a = upload(&ctx, &[2, 2, n, n], values.clone())?;
    let inv = gpuarray::inv(&a)?;
    assert_eq!(inv.shape(), [2, 2, n, n]);
    let got = inv.to_vec()?;
    for m in 0..count {
        let r = m * n * n..(m + 1) * n * n;
        let product = host_matmul(&values[r.clone()], &got[r], n, n);
        assert_near(&product, &identity, 1e-10, &format!("a @ inv(a), matrix {m}"));
    }
    // f32 and i32 (whose inverse is f64).
    let a32 = upload(&ctx, &[n, n], values[..n * n].iter().map(|&x| x as f32).collect())?;
    let got = as_f64(gpuarray::inv(&a32)?.to_vec()?);
    let host32: Vec<f64> = values[..n * n].iter().map(|&x| f64::from(x as f32)).collect();
    assert_near(
        &host_matmul(&host32, &got, n, n),
        &identity,
        1e-4,
        "f32 a @ inv(a)",
    );
    let ints: Vec<i32> = values[..n * n].iter().map(|&x| (x * 50.0) as i32).collect();
    let hi: Vec<f64> = ints.iter().map(|&x| f64::from(x)).collect();
    let got: Vec<f64> = gpuarray::inv(&upload(&ctx, &[n, n], ints)?)?.to_vec()?;
    assert_near(&host_matmul(&hi, &got, n, n), &identity, 1e-10, "i32 a @ inv(a)");
    // Matrix 2 of 3 is singular (a zero row): named, nothing returned.
    let mut values = random_matrices(&mut rng, 3, 5);
    for c in 0..5 {
        values[2 * 25 + 3 * 5 + c] = 0.0;
    }
    let a = upload(&ctx, &[3, 5, 5], values)?;
    assert!(matches!(
        gpuarray::inv(&a),
        Err(Error::LinAlg(LinAlgError::Singular { matrix: 2, .. }))
    ));
    // On a stream.
    let stream = Stream::new(&ctx)?;
    let one = upload(&ctx, &[1, 1], vec![4.0f32])?;
    assert_eq!(gpuarray::on(&stream).inv(&one)?.to_vec()?, [0.25]);
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn solve_takes_numpys_right_hand_sides_and_broadcasts_the_stack() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(44);
    let n = 7;
    let a_host = random_matrices(&mut rng, 3, n);
    let a = upload(&ctx, &[3, n, n], a_host.clone())?;
    // (3, n, k): k right-hand sides a matrix.
    let k = 4;
    let b_host: Vec<f64> = (0..3 * n * k).map(|_| rng.f64()).collect();
    let b = upload(&ctx, &[3, n, k], b_host.clone())?;
    let x = gpuarray::solve(&a, &b)?;
    assert_eq!(x.shape(), [3, n, k]);
    let xv = x.to_vec()?;
    for m in 0..3 {
        let ax = host_matmul(
            &a_host[m * n * n..(m + 1) * n * n],
            &xv[m * n * k..(m + 1) * n * k],
            n,
            k,
        );
        assert_near(&ax, &b_host[m * n * k..(m + 1) * n * k], 1e-10, "a @ solve(a, b)");
    }
    // One vector for every matrix of the stack: (3, n).
    let v_host: Vec<f64> = (0..n).map(|_| rng.f64()).collect();
    let v = upload(&ctx, &[n], v_host.clone())?;
    let x = gpuarray::solve(&a, &v)?;
    assert_eq!(x.shape(), [3, n]);
    let xv = x.to_vec()?;
    for m in 0..3 {
        let ax = host_matmul(&a_host[m * n * n..(m + 1) * n * n], &xv[m * n..(m + 1) * n], n, 1);
        assert_near(&ax, &v_host, 1e-10, "a @ solve(a, vector)");
    }
    // One matrix, one vector: (n,) of the vector's dimension type.
    let a0 = DeviceArray::from_ndarray(
        &ctx,
        &Array2::from_shape_vec((n, n), a_host[..n * n].to_vec()).unwrap(),
    )?;
    let v1 = DeviceArray::from_ndarray(&ctx, &gpu_runtime::ndarray::Array1::from(v_host.clone()))?;
    let x1 = gpuarray::solve(&a0, &v1)?;
    assert_near(
        &host_matmul(&a_host[..n * n], &x1.to_vec()?, n, 1),
        &v_host,
        1e-10,
        "one system",
    );
    // A strided (every other element) vector.
    let wide = DeviceArray::from_ndarray(
        &ctx,
        &gpu_runtime::ndarray::Array1::from_iter(v_host.iter().flat_map(|&x| [x, 99.0])),
    )?;
    let strided = wide.slice(gpu_runtime::ndarray::s![..;2])?;
    let xs = gpuarray::solve(&a0, &strided)?;
    assert_near(&xs.to_vec()?, &x1.to_vec()?, 1e-12, "a strided right-hand side");
    // (1, n, k) broadcast against three matrices.
    let b1 = upload(&ctx, &[1, n, k], b_host[..n * k].to_vec())?;
    let x = gpuarray::solve(&a, &b1)?;
    assert_eq!(x.shape(), [3, n, k]);
    let xv = x.to_vec()?;
    for m in 0..3 {
        let ax = host_matmul(
            &a_host[m * n * n..(m + 1) * n * n],
            &xv[m * n * k..(m + 1) * n * k],
            n,
            k,
        );
        assert_near(&ax, &b_host[..n * k], 1e-10, "broadcast right-hand sides");
    }
    // f32 on a stream; a large system.
    let stream = Stream::new(&ctx)?;
    let a32 = upload(&ctx, &[n, n], a_host[..n * n].iter().map(|&x| x as f32).collect())?;
    let v32 = upload(&ctx, &[n], v_host.iter().map(|&x| x as f32).collect())?;
    let x32 = as_f64(gpuarray::on(&stream).solve(&a32, &v32)?.to_vec()?);
    let h32: Vec<f64> = a_host[..n * n].iter().map(|&x| f64::from(x as f32)).collect();
    assert_near(&host_matmul(&h32, &x32, n, 1), &v_host, 1e-4, "f32 system");
    let big = 300;
    let a_big = random_matrices(&mut rng, 1, big);
    let b_big: Vec<f64> = (0..big).map(|_| rng.f64()).collect();
    let x = gpuarray::solve(
        &upload(&ctx, &[big, big], a_big.clone())?,
        &upload(&ctx, &[big], b_big.clone())?,
    )?;
    assert_near(
        &host_matmul(&a_big, &x.to_vec()?, big, 1),
        &b_big,
        1e-9,
        "300 x 300 system",
    );
    // Right-hand sides that do not fit, and a singular matrix.
    let wrong = upload(&ctx, &[n + 1], vec![1.0f64; n + 1])?;
    assert!(matches!(
        gpuarray::solve(&a, &wrong),
        Err(Error::LinAlg(LinAlgError::RightHandSide { .. }))
    ));
    let wrong = upload(&ctx, &[2, n, 1], vec![1.0f64; 2 * n])?;
    assert!(matches!(
        gpuarray::solve(&a, &wrong),
        Err(Error::LinAlg(LinAlgError::RightHandSide { .. }))
    ));
    let zero = upload(&ctx, &[n, n], vec![0.0f64; n * n])?;
    assert!(matches!(
        gpuarray::solve(&zero, &v),
        Err(Error::LinAlg(LinAlgError::Singular { matrix: 0, .. }))
    ));
    Ok(())
}

/// `count` random symmetric positive definite `n x n` matrices (`m mᵀ + n I`).
fn spd(rng: &mut Rng, count: usize, n: usize) -> Vec<f64> {
    let mut out = Vec::with_capacity(count * n * n);
    for _ in 0..count {
        let m = random_matrices(rng, 1, n);
        for i in 0..n {
            for j in 0..n {
                let dot: f64 = (0..n).map(|c| m[i * n + c] * m[j * n + c]).sum();
                out.push(dot + if i == j { n as f64 } else { 0.0 });
            }
        }
    }
    out
}

/// `l lᵀ` of the lower triangles of `count` matrices of `n x n`, after checking that their
/// upper triangles are zero.
fn l_lt(l: &[f64], count: usize, n: usize) -> Vec<f64> {
    let mut out = Vec::with_capacity(l.len());
    for m in l.chunks(n * n).take(count) {
        for i in 0..n {
            for j in 0..n {
                if j > i {
                    assert_eq!(m[i * n + j], 0.0, "upper triangle of L");
                }
                out.push((0..n).map(|c| m[i * n + c] * m[j * n + c]).sum());
            }
        }
    }
    out
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn cholesky_reads_the_lower_triangle_and_names_a_matrix_not_positive_definite() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(45);
    let (count, n) = (6, 12);
    let a_host = spd(&mut rng, count, n);
    // Garbage above the diagonal: never read.
    let mut given = a_host.clone();
    for m in 0..count {
        for i in 0..n {
            for j in i + 1..n {
                given[m * n * n + i * n + j] = 1e6;
            }
        }
    }
    let l = gpuarray::cholesky(&upload(&ctx, &[2, 3, n, n], given)?)?;
    assert_eq!(l.shape(), [2, 3, n, n]);
    assert_near(&l_lt(&l.to_vec()?, count, n), &a_host, 1e-12, "L Lᵀ");
    // f32, i32 (f64 result) and one 100 x 100 matrix on a stream.
    let l32 = as_f64(
        gpuarray::cholesky(&upload(
            &ctx,
            &[n, n],
            a_host[..n * n].iter().map(|&x| x as f32).collect(),
        )?)?
        .to_vec()?,
    );
    assert_near(&l_lt(&l32, 1, n), &a_host[..n * n], 1e-5, "f32 L Lᵀ");
    let ints: Vec<i32> = (0..n * n).map(|e| if e / n == e % n { 10 } else { 1 }).collect();
    let want: Vec<f64> = ints.iter().map(|&x| f64::from(x)).collect();
    let li: Vec<f64> = gpuarray::cholesky(&upload(&ctx, &[n, n], ints)?)?.to_vec()?;
    assert_near(&l_lt(&li, 1, n), &want, 1e-12, "i32 L Lᵀ");
    let stream = Stream::new(&ctx)?;
    let big = spd(&mut rng, 1, 100);
    let lb = gpuarray::on(&stream).cholesky(&upload(&ctx, &[100, 100], big.clone())?)?;
    assert_near(&l_lt(&lb.to_vec()?, 1, 100), &big, 1e-11, "100 x 100 L Lᵀ");
    // Matrix 1 of 3 is indefinite; NaN is not positive definite either.
    let mut three = spd(&mut rng, 3, 4);
    three[16 + 2 * 4 + 2] = -50.0;
    assert!(matches!(
        gpuarray::cholesky(&upload(&ctx, &[3, 4, 4], three)?),
        Err(Error::LinAlg(LinAlgError::NotPositiveDefinite { matrix: 1, .. }))
    ));
    let mut nan = spd(&mut rng, 1, 3);
    nan[4] = f64::NAN;
    assert!(matches!(
        gpuarray::cholesky(&upload(&ctx, &[3, 3], nan)?),
        Err(Error::LinAlg(LinAlgError::NotPositiveDefinite { matrix: 0, .. }))
    ));
    assert!(matches!(
        gpuarray::cholesky(&upload(&ctx, &[3, 4], vec![1.0f64; 12])?),
        Err(Error::LinAlg(LinAlgError::NotSquare { .. }))
    ));
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn matrix_power_multiplies_by_repeated_squaring() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(46);
    let (count, n) = (3, 4);
    let ints: Vec<i64> = (0..count * n * n)
        .map(|_| (rng.f64() * 3.0).round() as i64)
        .collect();
    let a = upload(&ctx, &[count, n, n], ints.clone())?;
    for p in 0..14u32 {
        let got = gpuarray::matrix_power(&a, p)?;
        assert_eq!(got.shape(), [count, n, n]);
        let got = got.to_vec()?;
        for m in 0..count {
            let base = &ints[m * n * n..(m + 1) * n * n];
            let mut want: Vec<i64> = (0..n * n).map(|e| i64::from(e / n == e % n)).collect();
            for _ in 0..p {
                want = (0..n * n)
                    .map(|e| {
                        (0..n).fold(0i64, |acc, j| {
                            acc.wrapping_add(want[(e / n) * n + j].wrapping_mul(base[j * n + e % n]))
                        })
                    })
                    .collect();
            }
            assert_eq!(
                &got[m * n * n..(m + 1) * n * n],
                &want[..],
                "matrix {m} to the power {p}"
            );
        }
    }
    // A float matrix to the power 5 on a stream; the inverse squared.
    let values = random_matrices(&mut rng, 1, 5);
    let f = upload(&ctx, &[5, 5], values.clone())?;
    let stream = Stream::new(&ctx)?;
    let got = gpuarray::on(&stream).matrix_power(&f, 5)?.to_vec()?;
    let mut want = values.clone();
    for _ in 1..5 {
        want = host_matmul(&want, &values, 5, 5);
    }
    assert_near(&got, &want, 1e-12, "a^5");
    let inv2 = gpuarray::matrix_power(&gpuarray::inv(&f)?, 2)?.to_vec()?;
    let square = host_matmul(&values, &values, 5, 5);
    let identity: Vec<f64> = (0..25).map(|e| f64::from(u8::from(e / 5 == e % 5))).collect();
    assert_near(&host_matmul(&square, &inv2, 5, 5), &identity, 1e-9, "a^2 a^-2");
    Ok(())
}
