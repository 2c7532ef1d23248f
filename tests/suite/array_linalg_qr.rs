//! `gpuarray::qr` (NumPy's `linalg.qr`) on a GPU, against its own definition and against a
//! Householder QR computed here on the host in `f64` (LAPACK's choice of reflections, so
//! NumPy's signs): seeded random matrices of `f64` (tight tolerance), `f32`, `f16` (loose) and
//! `i32`, tall, wide and square, `1 x 1`, `1 x N` and `M x 1`, up to 200 rows, and stacks of
//! shape `(2, 3, M, N)`, in all three modes: NumPy's shapes, `q @ r = a`, `q`'s columns
//! orthonormal (a complete `q` a whole orthogonal matrix), `r` upper triangular with exact
//! zeros below the diagonal, `r` equal to the host's up to the sign of each row, and mode
//! `R`'s `r` the reduced one's; NumPy's own factors of a 2 x 2 matrix. Rank-deficient and zero
//! matrices (`q @ r` still `a`, `q` still orthonormal), NaN staying in its own matrix, a
//! transposed (strided) input, the stream form, empty stacks and matrices with `M` or `N`
//! zero (NumPy's shapes, the complete `q` of an `M x 0` matrix the identity), and 1-d input
//! (`TooFewAxes`).
//!
//! `cargo test --test suite -- --ignored array_linalg_qr::`

use gpu_runtime::gpuarray::{self, DeviceArray, Element, MeanType, QrMode};
use gpu_runtime::half::f16;
use gpu_runtime::ndarray::{ArrayD, IxDyn};
use gpu_runtime::{Context, Error, LinAlgError, Stream};
use gpu_suite::Rng;

const MODES: [QrMode; 3] = [QrMode::Reduced, QrMode::Complete, QrMode::R];

/// A device array of `shape` holding `v` in C order.
fn upload<T: Element>(
    ctx: &Context,
    shape: &[usize],
    v: Vec<T>,
) -> gpu_runtime::Result<DeviceArray<T, IxDyn>> {
    let host = ArrayD::from_shape_vec(IxDyn(shape), v).expect("the shape holds the elements");
    DeviceArray::from_ndarray(ctx, &host)
}

/// `v` as `f64`s.
fn as_f64<T: Copy + Into<f64>>(v: Vec<T>) -> Vec<f64> {
    v.into_iter().map(Into::into).collect()
}

/// `count` random `m x n` matrices, elements in `[-1, 1)`, one after another in C order.
fn random_matrices(rng: &mut Rng, count: usize, m: usize, n: usize) -> Vec<f64> {
    (0..count * m * n).map(|_| rng.f64()).collect()
}

/// The batch axes, `M` and `N` of `shape`, and the matrices it holds.
fn dims(shape: &[usize]) -> (usize, usize, usize) {
    let axes = shape.len();
    (
        shape[..axes - 2].iter().product(),
        shape[axes - 2],
        shape[axes - 1],
    )
}

/// The shapes NumPy gives `q` (`None` in mode `R`) and `r` of an `(..., m, n)` stack.
fn numpy_shapes(shape: &[usize], mode: QrMode) -> (Option<Vec<usize>>, Vec<usize>) {
    let (_, m, n) = dims(shape);
    let k = m.min(n);
    let batch = &shape[..shape.len() - 2];
    let with = |tail: [usize; 2]| batch.iter().chain(&tail).copied().collect::<Vec<_>>();
    match mode {
        QrMode::Reduced => (Some(with([m, k])), with([k, n])),
        QrMode::Complete => (Some(with([m, m])), with([m, n])),
        QrMode::R => (None, with([k, n])),
    }
}

/// The Frobenius norm of `a`, at least 1: what the errors of its factors scale with.
fn frobenius(a: &[f64]) -> f64 {
    a.iter().map(|x| x * x).sum::<f64>().sqrt().max(1.0)
}

/// `r` (`K x N`, C order) of the `m x n` matrix `a` by Householder reflections on the host in
/// `f64`: LAPACK's `geqr2`, each reflection mapping its column onto `-sign(alpha) |x|`.
fn host_r(a: &[f64], m: usize, n: usize) -> Vec<f64> {
    let mut a = a.to_vec();
    let k = m.min(n);
    for c in 0..k {
        let s: f64 = (c + 1..m).map(|i| a[i * n + c] * a[i * n + c]).sum();
        if s == 0.0 {
            continue;
        }
        let alpha = a[c * n + c];
        let norm = (alpha * alpha + s).sqrt();
        let beta = if alpha >= 0.0 { -norm } else { norm };
        let tau = (beta - alpha) / beta;
        let mut v = vec![0.0; m];
        v[c] = 1.0;
        for i in c + 1..m {
            v[i] = a[i * n + c] / (alpha - beta);
        }
        for j in c..n {
            let d: f64 = (c..m).map(|i| v[i] * a[i * n + j]).sum::<f64>() * tau;
            for i in c..m {
                a[i * n + j] -= d * v[i];
            }
        }
    }
    (0..k * n)
        .map(|e| if e / n <= e % n { a[e] } else { 0.0 })
        .collect()
}

/// Checks `qr`'s results for the `m x n` matrices `a` in `mode`: `r` upper triangular with
/// exact zeros below the diagonal; with `q`, its columns orthonormal (within `tol`) and `q @
/// r = a` (within `tol` times the matrix's Frobenius norm, at least 1, where the error scales
/// with it).
#[allow(clippy::too_many_arguments)]
fn check_qr(
    a: &[f64],
    count: usize,
    m: usize,
    n: usize,
    mode: QrMode,
    q: Option<&[f64]>,
    r: &[f64],
    tol: f64,
    what: &str,
) {
    let k = m.min(n);
    let (qcols, rrows) = match mode {
        QrMode::Complete => (m, m),
        _ => (k, k),
    };
    assert_eq!(r.len(), count * rrows * n, "{what}: r's length");
    assert_eq!(q.is_some(), mode != QrMode::R, "{what}: q formed or not");
    for b in 0..count {
        let a = &a[b * m * n..(b + 1) * m * n];
        let r = &r[b * rrows * n..(b + 1) * rrows * n];
        for i in 0..rrows {
            for j in 0..n.min(i) {
                assert_eq!(
                    r[i * n + j],
                    0.0,
                    "{what}: matrix {b}: r[{i}][{j}] below the diagonal"
                );
            }
        }
        let Some(q) = q else { continue };
        assert_eq!(q.len(), count * m * qcols, "{what}: q's length");
        let q = &q[b * m * qcols..(b + 1) * m * qcols];
        let scale = frobenius(a);
        for i in 0..m {
            for j in 0..n {
                let x: f64 = (0..qcols).map(|l| q[i * qcols + l] * r[l * n + j]).sum();
                assert!(
                    (x - a[i * n + j]).abs() <= tol * scale,
                    "{what}: matrix {b}: (q @ r)[{i}][{j}] = {x} against {}",
                    a[i * n + j]
                );
            }
        }
        for p in 0..qcols {
            for s in 0..qcols {
                let d: f64 = (0..m).map(|i| q[i * qcols + p] * q[i * qcols + s]).sum();
                let want = if p == s { 1.0 } else { 0.0 };
                assert!(
                    (d - want).abs() <= tol,
                    "{what}: matrix {b}: (qᵀq)[{p}][{s}] = {d}"
                );
            }
        }
    }
}

/// Checks the first `K` rows of `r` (`rrows x n` each) against the host's, each row up to its
/// sign, within `tol` times the matrix's Frobenius norm (at least 1). For matrices of full
/// rank, where `R` is unique up to those signs.
fn check_r_against_host(a: &[f64], count: usize, m: usize, n: usize, r: &[f64], tol: f64, what: &str) {
    let k = m.min(n);
    let rrows = r.len() / (count * n).max(1);
    for b in 0..count {
        let a = &a[b * m * n..(b + 1) * m * n];
        let r = &r[b * rrows * n..(b + 1) * rrows * n];
        let want = host_r(a, m, n);
        let scale = frobenius(a);
        for i in 0..k {
            let (got, want) = (&r[i * n..(i + 1) * n], &want[i * n..(i + 1) * n]);
            let agree: f64 = got.iter().zip(want).map(|(x, y)| x * y).sum();
            let sign = if agree >= 0.0 { 1.0 } else { -1.0 };
            for j in 0..n {
                assert!(
                    (got[j] - sign * want[j]).abs() <= tol * scale,
                    "{what}: matrix {b}: r row {i} {got:?} against the host's {want:?}"
                );
            }
        }
    }
}

/// `qr` of the matrices `a` (shape `shape`) uploaded as `T`, in `mode`, with its results as
/// `f64` and their shapes checked against NumPy's.
fn device_qr<T: MeanType>(
    ctx: &Context,
    shape: &[usize],
    a: &[f64],
    mode: QrMode,
    to: impl Fn(f64) -> T,
) -> gpu_runtime::Result<(Option<Vec<f64>>, Vec<f64>)>
where
    T::Mean: Into<f64>,
{
    let d = upload(ctx, shape, a.iter().map(|&x| to(x)).collect())?;
    let f = gpuarray::qr(&d, mode)?;
    let (q_shape, r_shape) = numpy_shapes(shape, mode);
    assert_eq!(f.r.shape(), &r_shape[..], "r of {shape:?} in {mode:?}");
    assert_eq!(
        f.q.as_ref().map(|q| q.shape().to_vec()),
        q_shape,
        "q of {shape:?} in {mode:?}"
    );
    let q = match f.q {
        Some(q) => Some(as_f64(q.to_vec()?)),
        None => None,
    };
    Ok((q, as_f64(f.r.to_vec()?)))
}

/// `qr` of the matrices `a` of `shape` as `T` in every mode, each checked by [`check_qr`]
/// within `tol`; mode `R`'s `r` checked against the reduced one's. Gives the reduced `r`.
fn check_every_mode<T: MeanType>(
    ctx: &Context,
    shape: &[usize],
    a: &[f64],
    to: impl Fn(f64) -> T + Copy,
    tol: f64,
    what: &str,
) -> gpu_runtime::Result<Vec<f64>>
where
    T::Mean: Into<f64>,
{
    let (count, m, n) = dims(shape);
    let mut reduced = Vec::new();
    for mode in MODES {
        let (q, r) = device_qr(ctx, shape, a, mode, to)?;
        let what = format!("{what} {shape:?} {mode:?}");
        check_qr(a, count, m, n, mode, q.as_deref(), &r, tol, &what);
        match mode {
            QrMode::Reduced => reduced = r,
            QrMode::R => {
                // The same steps without Q (the kernels are compiled apart, so within a last
                // place of the result type).
                for (x, y) in r.iter().zip(&reduced) {
                    assert!(
                        (x - y).abs() <= tol * frobenius(a),
                        "{what}: r {r:?} against the reduced mode's {reduced:?}"
                    );
                }
            }
            QrMode::Complete => {}
        }
    }
    Ok(reduced)
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn qr_of_random_f64_matrices_of_every_shape() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(0x9a_0001);
    let shapes: [&[usize]; 14] = [
        &[1, 1],
        &[5, 3],
        &[3, 5],
        &[4, 4],
        &[1, 6],
        &[6, 1],
        &[2, 9],
        &[17, 16],
        &[16, 17],
        &[40, 7],
        &[64, 64],
        &[2, 3, 4, 6],
        &[2, 3, 6, 4],
        &[2, 3, 5, 5],
    ];
    for shape in shapes {
        let (count, m, n) = dims(shape);
        let a = random_matrices(&mut rng, count, m, n);
        let r = check_every_mode(&ctx, shape, &a, |x| x, 1e-12, "f64")?;
        // Random matrices have full rank: R is the host's up to the sign of each row (within
        // what the two summation orders leave, amplified by the matrix's condition).
        check_r_against_host(&a, count, m, n, &r, 1e-10, &format!("f64 {shape:?}"));
    }
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn qr_of_200_row_matrices() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(0x9a_0002);
    for (m, n) in [(200, 200), (200, 30), (30, 200)] {
        let a = random_matrices(&mut rng, 1, m, n);
        let r = check_every_mode(&ctx, &[m, n], &a, |x| x, 1e-11, "f64")?;
        check_r_against_host(&a, 1, m, n, &r, 1e-9, &format!("f64 {m} x {n}"));
    }
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn qr_gives_numpys_factors_of_a_small_matrix() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    // numpy.linalg.qr([[1, 2], [3, 4]]): LAPACK's reflections give a negative diagonal.
    let a = [1.0, 2.0, 3.0, 4.0];
    let (q, r) = device_qr(&ctx, &[2, 2], &a, QrMode::Reduced, |x| x)?;
    let q = q.expect("the reduced mode forms q");
    let (s10, s01) = (10f64.sqrt(), 0.1f64.sqrt());
    let want_q = [-s01, -3.0 * s01, -3.0 * s01, s01];
    let want_r = [-s10, -14.0 / s10, 0.0, -2.0 / s10];
    for (got, want) in q.iter().zip(&want_q).chain(r.iter().zip(&want_r)) {
        assert!((got - want).abs() <= 1e-14, "q {q:?}, r {r:?}");
    }
    // An integer matrix factors in f64 to the same.
    let (_, ri) = device_qr(&ctx, &[2, 2], &a, QrMode::R, |x| x as i32)?;
    for (got, want) in ri.iter().zip(&want_r) {
        assert!((got - want).abs() <= 1e-14, "i32: r {ri:?}");
    }
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn qr_of_f32_f16_and_i32_matrices() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(0x9a_0003);
    // f32: factored in f32 (each step's arithmetic in double).
    for shape in [vec![7, 4], vec![4, 7], vec![32, 20], vec![2, 3, 5, 4]] {
        let (count, m, n) = dims(&shape);
        let a: Vec<f64> = random_matrices(&mut rng, count, m, n)
            .into_iter()
            .map(|x| f64::from(x as f32))
            .collect();
        check_every_mode(&ctx, &shape, &a, |x| x as f32, 1e-4, "f32")?;
    }
    // f16: factored in f32, the results rounded to f16.
    for shape in [vec![6, 4], vec![3, 5], vec![2, 3, 3, 3]] {
        let (count, m, n) = dims(&shape);
        let a: Vec<f64> = random_matrices(&mut rng, count, m, n)
            .into_iter()
            .map(|x| f16::from_f64(x).to_f64())
            .collect();
        check_every_mode(&ctx, &shape, &a, f16::from_f64, 2e-2, "f16")?;
    }
    // i32: factored in f64, results f64 (NumPy's).
    for shape in [vec![6, 4], vec![4, 6], vec![2, 3, 4, 4]] {
        let (count, m, n) = dims(&shape);
        let a: Vec<f64> = random_matrices(&mut rng, count, m, n)
            .into_iter()
            .map(|x| (x * 20.0).round())
            .collect();
        check_every_mode(&ctx, &shape, &a, |x| x as i32, 1e-12, "i32")?;
    }
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn qr_of_rank_deficient_and_zero_matrices() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(0x9a_0004);
    // Rank 2: B (m x 2) C (2 x n). R is not unique past the rank, but q @ r is still a and
    // q still orthonormal.
    for (m, n) in [(6, 4), (4, 6), (5, 5)] {
        let b = random_matrices(&mut rng, 1, m, 2);
        let c = random_matrices(&mut rng, 1, 2, n);
        let a: Vec<f64> = (0..m * n)
            .map(|e| (0..2).map(|l| b[(e / n) * 2 + l] * c[l * n + e % n]).sum())
            .collect();
        check_every_mode(&ctx, &[m, n], &a, |x| x, 1e-12, &format!("rank 2, {m} x {n}"))?;
    }
    // A zero column in the middle: its reflection is the identity (tau 0).
    let mut a = random_matrices(&mut rng, 1, 5, 4);
    for i in 0..5 {
        a[i * 4 + 1] = 0.0;
    }
    check_every_mode(&ctx, &[5, 4], &a, |x| x, 1e-12, "a zero column")?;
    // Zero matrices: r zero, q orthonormal (no reflection, so the identity's columns).
    for (m, n) in [(4, 3), (3, 4), (1, 1)] {
        let a = vec![0.0; m * n];
        for mode in MODES {
            let (q, r) = device_qr(&ctx, &[m, n], &a, mode, |x| x)?;
            assert!(r.iter().all(|&x| x == 0.0), "zero {m} x {n} {mode:?}: r {r:?}");
            check_qr(
                &a,
                1,
                m,
                n,
                mode,
                q.as_deref(),
                &r,
                1e-14,
                &format!("zero {m} x {n} {mode:?}"),
            );
        }
    }
    // Large and tiny values are scaled, not overflowed or flushed: the factors of 1e200 and
    // 1e-200 times a matrix are its q and its r times the factor.
    let a = random_matrices(&mut rng, 1, 6, 4);
    let (q, r) = device_qr(&ctx, &[6, 4], &a, QrMode::Reduced, |x| x)?;
    for factor in [1e200, 1e-200] {
        let scaled: Vec<f64> = a.iter().map(|x| x * factor).collect();
        let (qs, rs) = device_qr(&ctx, &[6, 4], &scaled, QrMode::Reduced, |x| x)?;
        let rs: Vec<f64> = rs.iter().map(|x| x / factor).collect();
        check_qr(
            &a,
            1,
            6,
            4,
            QrMode::Reduced,
            qs.as_deref(),
            &rs,
            1e-12,
            &format!("times {factor}"),
        );
        let (q, qs) = (q.as_deref().unwrap_or(&[]), qs.as_deref().unwrap_or(&[]));
        for (x, y) in q.iter().zip(qs).chain(r.iter().zip(&rs)) {
            assert!((x - y).abs() <= 1e-12, "times {factor}: {x} against {y}");
        }
    }
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn nan_stays_in_its_own_matrix() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(0x9a_0005);
    let mut a = random_matrices(&mut rng, 3, 4, 3);
    a[12] = f64::NAN; // matrix 1, element (0, 0): every reflection of it is NaN
    for mode in MODES {
        let (q, r) = device_qr(&ctx, &[3, 4, 3], &a, mode, |x| x)?;
        let rrows = if mode == QrMode::Complete { 4 } else { 3 };
        let per = rrows * 3;
        assert!(r[per..2 * per].iter().any(|x| x.is_nan()), "{mode:?}: r {r:?}");
        // Matrices 0 and 2 are factored as if alone.
        for b in [0, 2] {
            let q = q.as_ref().map(|q| {
                let per = q.len() / 3;
                q[b * per..(b + 1) * per].to_vec()
            });
            check_qr(
                &a[b * 12..(b + 1) * 12],
                1,
                4,
                3,
                mode,
                q.as_deref(),
                &r[b * per..(b + 1) * per],
                1e-12,
                &format!("beside NaN, matrix {b} {mode:?}"),
            );
        }
    }
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn the_stream_form_and_a_transposed_input() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let stream = Stream::new(&ctx)?;
    let on = gpuarray::on(&stream);
    let mut rng = Rng::new(0x9a_0006);
    let a = random_matrices(&mut rng, 6, 5, 3);
    let d = upload(&ctx, &[2, 3, 5, 3], a.clone())?;
    // A copy made on the stream, then factored on it: the same as the plain call.
    let c = d.on(&stream).copy()?;
    for mode in MODES {
        let f = on.qr(&c, mode)?;
        let plain = gpuarray::qr(&d, mode)?;
        assert_eq!(f.r.to_vec()?, plain.r.to_vec()?, "{mode:?}");
        let q = match (f.q, plain.q) {
            (Some(q), Some(p)) => {
                let q = q.to_vec()?;
                assert_eq!(q, p.to_vec()?, "{mode:?}");
                Some(q)
            }
            (None, None) => None,
            _ => panic!("{mode:?}: q formed by one form only"),
        };
        check_qr(
            &a,
            6,
            5,
            3,
            mode,
            q.as_deref(),
            &f.r.to_vec()?,
            1e-12,
            "on a stream",
        );
    }
    // A transposed (strided) 5 x 3, so a 3 x 5 matrix, made C-contiguous on the stream first.
    let a = random_matrices(&mut rng, 1, 5, 3);
    let d = upload(&ctx, &[5, 3], a.clone())?;
    let t = d.t();
    let at: Vec<f64> = (0..15).map(|e| a[(e % 5) * 3 + e / 5]).collect();
    for mode in MODES {
        let f = on.qr(&t, mode)?;
        let plain = gpuarray::qr(&t.to_contiguous()?, mode)?;
        let (q_shape, r_shape) = numpy_shapes(&[3, 5], mode);
        assert_eq!(f.r.shape(), &r_shape[..], "transposed {mode:?}");
        assert_eq!(f.r.to_vec()?, plain.r.to_vec()?, "transposed {mode:?}");
        let q = match f.q {
            Some(q) => {
                assert_eq!(Some(q.shape().to_vec()), q_shape, "transposed {mode:?}");
                Some(q.to_vec()?)
            }
            None => None,
        };
        let what = format!("transposed {mode:?}");
        check_qr(&at, 1, 3, 5, mode, q.as_deref(), &f.r.to_vec()?, 1e-12, &what);
        check_r_against_host(&at, 1, 3, 5, &f.r.to_vec()?, 1e-10, &what);
    }
    // And the plain call on the view.
    let f = gpuarray::qr(&d.t(), QrMode::Complete)?;
    let q = f.q.map(|q| q.to_vec()).transpose()?;
    check_qr(
        &at,
        1,
        3,
        5,
        QrMode::Complete,
        q.as_deref(),
        &f.r.to_vec()?,
        1e-12,
        "plain transposed",
    );
    Ok(())
}

/// An empty case: the shape, the mode, and NumPy's shapes of `q` (if formed) and `r`.
type EmptyCase = (
    &'static [usize],
    QrMode,
    Option<&'static [usize]>,
    &'static [usize],
);

#[test]
#[ignore = "needs a CUDA GPU"]
fn empty_stacks_and_matrices_give_numpys_shapes() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let cases: [EmptyCase; 12] = [
        (&[0, 3, 2], QrMode::Reduced, Some(&[0, 3, 2]), &[0, 2, 2]),
        (&[0, 3, 2], QrMode::Complete, Some(&[0, 3, 3]), &[0, 3, 2]),
        (&[0, 3, 2], QrMode::R, None, &[0, 2, 2]),
        (&[2, 0, 3], QrMode::Reduced, Some(&[2, 0, 0]), &[2, 0, 3]),
        (&[2, 0, 3], QrMode::Complete, Some(&[2, 0, 0]), &[2, 0, 3]),
        (&[2, 0, 3], QrMode::R, None, &[2, 0, 3]),
        (&[2, 3, 0], QrMode::Reduced, Some(&[2, 3, 0]), &[2, 0, 0]),
        (&[2, 3, 0], QrMode::Complete, Some(&[2, 3, 3]), &[2, 3, 0]),
        (&[2, 3, 0], QrMode::R, None, &[2, 0, 0]),
        (&[0, 0], QrMode::Complete, Some(&[0, 0]), &[0, 0]),
        (&[4, 0], QrMode::Complete, Some(&[4, 4]), &[4, 0]),
        (&[0, 5], QrMode::Reduced, Some(&[0, 0]), &[0, 5]),
    ];
    for (shape, mode, q_shape, r_shape) in cases {
        let d = upload::<f64>(&ctx, shape, vec![])?;
        let f = gpuarray::qr(&d, mode)?;
        assert_eq!(f.r.shape(), r_shape, "r of {shape:?} {mode:?}");
        assert_eq!(
            f.q.as_ref().map(|q| q.shape()),
            q_shape,
            "q of {shape:?} {mode:?}"
        );
        // The complete q of an M x 0 matrix (M > 0) is the identity, one for each matrix.
        if let Some(q) = f.q {
            let m = q_shape.map_or(0, |s| s[s.len() - 1]);
            for (e, x) in q.to_vec()?.iter().enumerate() {
                let want = if (e / m) % m == e % m { 1.0 } else { 0.0 };
                assert_eq!(*x, want, "q of {shape:?} {mode:?} is the identity");
            }
        }
    }
    // An empty i32 stack gives f64 results of the same shapes.
    let d = upload::<i32>(&ctx, &[0, 2, 3], vec![])?;
    let f = gpuarray::qr(&d, QrMode::Reduced)?;
    assert_eq!(
        (f.q.map(|q| q.shape().to_vec()), f.r.shape()),
        (Some(vec![0, 2, 2]), &[0, 2, 3][..])
    );
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_vector_is_refused() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let v = upload(&ctx, &[4], vec![1.0f64; 4])?;
    let too_few = |r: &gpu_runtime::Result<()>| {
        matches!(
            r,
            Err(Error::LinAlg(LinAlgError::TooFewAxes {
                operation: "qr",
                axes: 1
            }))
        )
    };
    for mode in MODES {
        let r = gpuarray::qr(&v, mode).map(drop);
        assert!(too_few(&r), "{mode:?}: {r:?}");
        let r = gpuarray::on(&Stream::new(&ctx)?).qr(&v, mode).map(drop);
        assert!(too_few(&r), "{mode:?} on a stream: {r:?}");
    }
    let s = upload(&ctx, &[], vec![1.0f64])?;
    let r = gpuarray::qr(&s, QrMode::Reduced).map(drop);
    assert!(
        matches!(r, Err(Error::LinAlg(LinAlgError::TooFewAxes { axes: 0, .. }))),
        "{r:?}"
    );
    let e = gpuarray::qr(&v, QrMode::R).unwrap_err().to_string();
    assert!(e.contains("qr") && e.contains("at least 2"), "{e}");
    Ok(())
}
