//! `gpuarray::eigh`, `eigvalsh`, `svd` and `svdvals` (NumPy's `linalg` of the same names) on a
//! GPU, against references computed here on the host in `f64` (cyclic Jacobi for the
//! eigenvalues, one-sided Jacobi for the singular values) and against their own definitions:
//! `eigh` on seeded random symmetric matrices of `f64` (tight tolerance), `f32`, `f16` (loose)
//! and `i32`, of 1 x 1 up to 200 x 200 and in stacks of shape `(3, 2, n, n)`: `A v = w v` for
//! every pair, `Vᵀ V = I`, eigenvalues ascending and equal to the host's; `Uplo::L` and
//! `Uplo::U` each reading only its triangle (NaN and garbage in the other); `eigvalsh` as
//! `eigh`'s values. `svd` of `M > N`, `M < N` and `M = N` (up to 200 x 200, stacks, rank
//! deficient and zero matrices), full and reduced: NumPy's shapes, `A = U[:, :K] diag(s)
//! Vh[:K, :]`, orthonormal columns of `u` and rows of `vh`, `s` non-negative, descending and
//! equal to the host's; `svdvals` as `svd`'s values. The stream forms, empty stacks (no
//! matrices, `0 x 0`, `M` or `N` zero: empty results of NumPy's shapes, a full `u`/`vh` the
//! identity), and the errors: 1-d input (`TooFewAxes`), a non-square `eigh` (`NotSquare`),
//! NaN and infinity (`NoConvergence` naming the first such matrix).
//!
//! `cargo test --test suite -- --ignored array_linalg_eigen::`

use gpu_runtime::gpuarray::{self, DeviceArray, Element, MeanType, Uplo};
use gpu_runtime::half::f16;
use gpu_runtime::ndarray::{ArrayD, IxDyn};
use gpu_runtime::{Context, Error, LinAlgError, Stream};
use gpu_suite::Rng;

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

/// `count` random symmetric `n x n` matrices, elements in `[-1, 1)`, one after another in C
/// order, each element rounded by `round` (to what the element type holds) before mirroring.
fn random_symmetric(rng: &mut Rng, count: usize, n: usize, round: impl Fn(f64) -> f64) -> Vec<f64> {
    let mut a = vec![0.0; count * n * n];
    for m in a.chunks_mut(n * n) {
        for i in 0..n {
            for j in 0..=i {
                let x = round(rng.f64());
                m[i * n + j] = x;
                m[j * n + i] = x;
            }
        }
    }
    a
}

/// `count` random `m x n` matrices, elements in `[-1, 1)`.
fn random_matrices(rng: &mut Rng, count: usize, m: usize, n: usize) -> Vec<f64> {
    (0..count * m * n).map(|_| rng.f64()).collect()
}

/// The eigenvalues of the symmetric `n x n` matrix `a`, ascending, by cyclic Jacobi on the
/// host (each rotation zeroing its element, sweeps until the off-diagonal is within eps of the
/// matrix's norm).
fn host_eigvalsh(a: &[f64], n: usize) -> Vec<f64> {
    let mut a = a.to_vec();
    for _sweep in 0..100 {
        let total: f64 = a.iter().map(|x| x * x).sum();
        let off: f64 = (0..n * n).filter(|e| e / n != e % n).map(|e| a[e] * a[e]).sum();
        if off <= f64::EPSILON * f64::EPSILON * total {
            break;
        }
        for p in 0..n {
            for q in p + 1..n {
                let apq = a[p * n + q];
                if apq == 0.0 {
                    continue;
                }
                let theta = (a[q * n + q] - a[p * n + p]) / (2.0 * apq);
                let t = theta.signum() / (theta.abs() + (1.0 + theta * theta).sqrt());
                let c = 1.0 / (1.0 + t * t).sqrt();
                let s = c * t;
                for k in 0..n {
                    let (x, y) = (a[p * n + k], a[q * n + k]);
                    a[p * n + k] = c * x - s * y;
                    a[q * n + k] = s * x + c * y;
                }
                for k in 0..n {
                    let (x, y) = (a[k * n + p], a[k * n + q]);
                    a[k * n + p] = c * x - s * y;
                    a[k * n + q] = s * x + c * y;
                }
                a[p * n + q] = 0.0;
                a[q * n + p] = 0.0;
            }
        }
    }
    let mut w: Vec<f64> = (0..n).map(|i| a[i * n + i]).collect();
    w.sort_by(f64::total_cmp);
    w
}

/// The singular values of the `m x n` matrix `a` (C order), descending, by one-sided Jacobi
/// on the host on the columns of `a` or of `aᵀ`, whichever are fewer.
fn host_singular_values(a: &[f64], m: usize, n: usize) -> Vec<f64> {
    let (len, k) = (m.max(n), m.min(n));
    let mut g: Vec<Vec<f64>> = (0..k)
        .map(|j| {
            (0..len)
                .map(|i| if m >= n { a[i * n + j] } else { a[j * n + i] })
                .collect()
        })
        .collect();
    let tol = 4.0 * f64::EPSILON * (len as f64).sqrt();
    for _sweep in 0..100 {
        let mut rotated = false;
        for p in 0..k {
            for q in p + 1..k {
                let al: f64 = g[p].iter().map(|x| x * x).sum();
                let be: f64 = g[q].iter().map(|x| x * x).sum();
                let ga: f64 = g[p].iter().zip(&g[q]).map(|(x, y)| x * y).sum();
                if ga.abs() <= tol * (al * be).sqrt() {
                    continue;
                }
                rotated = true;
                let zeta = (be - al) / (2.0 * ga);
                let t = zeta.signum() / (zeta.abs() + (1.0 + zeta * zeta).sqrt());
                let c = 1.0 / (1.0 + t * t).sqrt();
                let s = c * t;
                let (low, high) = g.split_at_mut(q);
                for (x, y) in low[p].iter_mut().zip(high[0].iter_mut()) {
                    let (gp, gq) = (*x, *y);
                    *x = c * gp - s * gq;
                    *y = s * gp + c * gq;
                }
            }
        }
        if !rotated {
            break;
        }
    }
    let mut s: Vec<f64> = g
        .iter()
        .map(|c| c.iter().map(|x| x * x).sum::<f64>().sqrt())
        .collect();
    s.sort_by(|x, y| y.total_cmp(x));
    s
}

/// Checks `eigh`'s results `w` (`count * n`) and `v` (`count * n * n`) for the symmetric
/// matrices `a`: ascending, equal to the host's eigenvalues, `A v_i = w_i v_i` and `Vᵀ V = I`,
/// each within `tol` (times the matrix's largest eigenvalue magnitude, at least 1, where the
/// error scales with it).
fn check_eigh(a: &[f64], count: usize, n: usize, w: &[f64], v: &[f64], tol: f64, what: &str) {
    assert_eq!((w.len(), v.len()), (count * n, count * n * n), "{what}: lengths");
    for b in 0..count {
        let (a, w, v) = (
            &a[b * n * n..(b + 1) * n * n],
            &w[b * n..(b + 1) * n],
            &v[b * n * n..(b + 1) * n * n],
        );
        let want = host_eigvalsh(a, n);
        let scale = want.iter().fold(1.0f64, |m, x| m.max(x.abs()));
        for i in 0..n {
            assert!(
                (w[i] - want[i]).abs() <= tol * scale,
                "{what}: matrix {b}: w[{i}] {} against {}\n{w:?}\n{want:?}",
                w[i],
                want[i]
            );
            if i + 1 < n {
                assert!(w[i] <= w[i + 1], "{what}: matrix {b}: not ascending: {w:?}");
            }
        }
        for i in 0..n {
            for k in 0..n {
                let av: f64 = (0..n).map(|j| a[k * n + j] * v[j * n + i]).sum();
                let r = av - w[i] * v[k * n + i];
                assert!(
                    r.abs() <= tol * scale,
                    "{what}: matrix {b}: (A v - w v)[{k}] of vector {i} is {r}"
                );
            }
            for j in 0..n {
                let d: f64 = (0..n).map(|k| v[k * n + i] * v[k * n + j]).sum();
                let want = if i == j { 1.0 } else { 0.0 };
                assert!(
                    (d - want).abs() <= tol,
                    "{what}: matrix {b}: (VᵀV)[{i}][{j}] = {d}"
                );
            }
        }
    }
}

/// Whether `r` is `NoConvergence` of `operation` naming `matrix`.
fn no_convergence<T>(r: &gpu_runtime::Result<T>, operation: &str, matrix: usize) -> bool {
    match r {
        Err(Error::LinAlg(LinAlgError::NoConvergence {
            operation: o,
            matrix: m,
            ..
        })) => *o == operation && *m == matrix,
        _ => false,
    }
}

/// `eigh` of the symmetric matrices `a` (shape `shape`) uploaded as `T`, with its results as
/// `f64`, their shapes checked.
fn device_eigh<T: MeanType>(
    ctx: &Context,
    shape: &[usize],
    a: &[f64],
    to: impl Fn(f64) -> T,
) -> gpu_runtime::Result<(Vec<f64>, Vec<f64>)>
where
    T::Mean: Into<f64>,
{
    let d = upload(ctx, shape, a.iter().map(|&x| to(x)).collect())?;
    let r = gpuarray::eigh(&d, Uplo::L)?;
    assert_eq!(r.eigenvalues.shape(), &shape[..shape.len() - 1]);
    assert_eq!(r.eigenvectors.shape(), shape);
    Ok((as_f64(r.eigenvalues.to_vec()?), as_f64(r.eigenvectors.to_vec()?)))
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn eigh_of_random_f64_matrices_and_stacks() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(0xe16_0001);
    for n in [1, 2, 3, 5, 8, 17, 64] {
        let a = random_symmetric(&mut rng, 1, n, |x| x);
        let (w, v) = device_eigh(&ctx, &[n, n], &a, |x| x)?;
        check_eigh(&a, 1, n, &w, &v, 1e-12, &format!("f64 {n} x {n}"));
    }
    for n in [1, 4, 7] {
        let a = random_symmetric(&mut rng, 6, n, |x| x);
        let (w, v) = device_eigh(&ctx, &[3, 2, n, n], &a, |x| x)?;
        check_eigh(&a, 6, n, &w, &v, 1e-12, &format!("f64 stack (3, 2, {n}, {n})"));
    }
    // A 1 x 1 matrix is its own eigenvalue, with the vector [1] (or [-1]).
    let (w, v) = device_eigh(&ctx, &[1, 1], &[-2.5], |x| x)?;
    assert_eq!(
        (w, v.iter().map(|x| x.abs()).collect::<Vec<_>>()),
        (vec![-2.5], vec![1.0])
    );
    // Large and tiny values are scaled, not overflowed or flushed: 1e200 and 1e-200 times a
    // matrix have its vectors and its eigenvalues times the factor.
    let a: Vec<f64> = random_symmetric(&mut rng, 1, 6, |x| x);
    for factor in [1e200, 1e-200] {
        let scaled: Vec<f64> = a.iter().map(|x| x * factor).collect();
        let (w, v) = device_eigh(&ctx, &[6, 6], &scaled, |x| x)?;
        let w: Vec<f64> = w.iter().map(|x| x / factor).collect();
        check_eigh(&a, 1, 6, &w, &v, 1e-12, &format!("times {factor}"));
    }
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn eigh_of_a_64_and_a_200_matrix() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(0xe16_0002);
    for n in [64, 200] {
        let a = random_symmetric(&mut rng, 1, n, |x| x);
        let (w, v) = device_eigh(&ctx, &[n, n], &a, |x| x)?;
        check_eigh(&a, 1, n, &w, &v, 1e-11, &format!("f64 {n} x {n}"));
        let wv = gpuarray::eigvalsh(&upload(&ctx, &[n, n], a.clone())?, Uplo::L)?.to_vec()?;
        for (x, y) in wv.iter().zip(&w) {
            assert!((x - y).abs() <= 1e-12, "eigvalsh against eigh, {n} x {n}");
        }
    }
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn eigh_of_f32_f16_and_i32_matrices() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(0xe16_0003);
    // f32: computed in f32.
    for (n, shape) in [(5, vec![5, 5]), (32, vec![32, 32]), (4, vec![3, 2, 4, 4])] {
        let count = shape.iter().product::<usize>() / (n * n);
        let a = random_symmetric(&mut rng, count, n, |x| f64::from(x as f32));
        let (w, v) = device_eigh(&ctx, &shape, &a, |x| x as f32)?;
        check_eigh(&a, count, n, &w, &v, 1e-3, &format!("f32 {shape:?}"));
    }
    // f16: read exactly, computed in f32, each result rounded to f16 (11 bits).
    for (n, shape) in [(6, vec![6, 6]), (3, vec![3, 2, 3, 3])] {
        let count = shape.iter().product::<usize>() / (n * n);
        let a = random_symmetric(&mut rng, count, n, |x| f16::from_f64(x).to_f64());
        let (w, v) = device_eigh(&ctx, &shape, &a, f16::from_f64)?;
        check_eigh(&a, count, n, &w, &v, 2e-2, &format!("f16 {shape:?}"));
    }
    // i32: computed in f64, results f64 (NumPy's).
    for (n, shape) in [(6, vec![6, 6]), (5, vec![3, 2, 5, 5])] {
        let count = shape.iter().product::<usize>() / (n * n);
        let a = random_symmetric(&mut rng, count, n, |x| (x * 20.0).round());
        let (w, v) = device_eigh(&ctx, &shape, &a, |x| x as i32)?;
        check_eigh(&a, count, n, &w, &v, 1e-12, &format!("i32 {shape:?}"));
    }
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn eigh_reads_only_the_triangle_it_is_told() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(0xe16_0004);
    let n = 9;
    let a = random_symmetric(&mut rng, 2, n, |x| x);
    let clean = upload(&ctx, &[2, n, n], a.clone())?;
    let want = gpuarray::eigh(&clean, Uplo::L)?;
    let (want_w, want_v) = (want.eigenvalues.to_vec()?, want.eigenvectors.to_vec()?);
    check_eigh(&a, 2, n, &want_w, &want_v, 1e-12, "clean");
    for uplo in [Uplo::L, Uplo::U] {
        // Lower reads i >= j, upper i <= j.
        let unread = |i: usize, j: usize| if uplo == Uplo::L { j > i } else { j < i };
        // The unread triangle holds NaN, infinity and large garbage.
        let mut garbage = a.clone();
        for b in 0..2 {
            for i in 0..n {
                for j in 0..n {
                    if unread(i, j) {
                        garbage[b * n * n + i * n + j] = [f64::NAN, f64::INFINITY, 1e30][(i + j) % 3];
                    }
                }
            }
        }
        let d = upload(&ctx, &[2, n, n], garbage)?;
        let r = gpuarray::eigh(&d, uplo)?;
        let (w, v) = (r.eigenvalues.to_vec()?, r.eigenvectors.to_vec()?);
        check_eigh(
            &a,
            2,
            n,
            &w,
            &v,
            1e-12,
            &format!("{uplo:?} with garbage in the other triangle"),
        );
        // The triangles of a symmetric matrix are the same numbers: the same results.
        for (x, y) in w.iter().zip(&want_w) {
            assert!((x - y).abs() <= 1e-13, "{uplo:?}: {w:?} against {want_w:?}");
        }
        let wv = gpuarray::eigvalsh(&d, uplo)?.to_vec()?;
        for (x, y) in wv.iter().zip(&want_w) {
            assert!(
                (x - y).abs() <= 1e-13,
                "eigvalsh {uplo:?}: {wv:?} against {want_w:?}"
            );
        }
        // The other triangle is read by the other choice: NaN there does not converge.
        let other = if uplo == Uplo::L { Uplo::U } else { Uplo::L };
        let r = gpuarray::eigh(&d, other);
        assert!(no_convergence(&r, "eigh", 0), "{r:?}");
    }
    Ok(())
}

/// Checks `svd`'s results for the `m x n` matrices `a`: the singular values non-negative,
/// descending and the host's; `a = u[:, :K] diag(s) vh[:K, :]`; `u`'s columns and `vh`'s
/// rows orthonormal; each within `tol` (times the largest singular value, at least 1, where
/// the error scales with it).
#[allow(clippy::too_many_arguments)]
fn check_svd(
    a: &[f64],
    count: usize,
    m: usize,
    n: usize,
    full: bool,
    u: &[f64],
    s: &[f64],
    vh: &[f64],
    tol: f64,
    what: &str,
) {
    let k = m.min(n);
    let (uc, vr) = if full { (m, n) } else { (k, k) };
    assert_eq!(
        (u.len(), s.len(), vh.len()),
        (count * m * uc, count * k, count * vr * n),
        "{what}: lengths"
    );
    for b in 0..count {
        let a = &a[b * m * n..(b + 1) * m * n];
        let (u, s, vh) = (
            &u[b * m * uc..(b + 1) * m * uc],
            &s[b * k..(b + 1) * k],
            &vh[b * vr * n..(b + 1) * vr * n],
        );
        let want = host_singular_values(a, m, n);
        let scale = want.first().copied().unwrap_or(0.0).max(1.0);
        for i in 0..k {
            assert!(s[i] >= 0.0, "{what}: matrix {b}: s[{i}] = {} is negative", s[i]);
            assert!(
                (s[i] - want[i]).abs() <= tol * scale,
                "{what}: matrix {b}: s {s:?} against {want:?}"
            );
            if i + 1 < k {
                assert!(s[i] >= s[i + 1], "{what}: matrix {b}: not descending: {s:?}");
            }
        }
        for i in 0..m {
            for j in 0..n {
                let r: f64 = (0..k).map(|l| u[i * uc + l] * s[l] * vh[l * n + j]).sum();
                assert!(
                    (r - a[i * n + j]).abs() <= tol * scale,
                    "{what}: matrix {b}: (U S Vh)[{i}][{j}] = {r} against {}",
                    a[i * n + j]
                );
            }
        }
        for p in 0..uc {
            for q in 0..uc {
                let d: f64 = (0..m).map(|i| u[i * uc + p] * u[i * uc + q]).sum();
                let want = if p == q { 1.0 } else { 0.0 };
                assert!(
                    (d - want).abs() <= tol,
                    "{what}: matrix {b}: (UᵀU)[{p}][{q}] = {d}"
                );
            }
        }
        for p in 0..vr {
            for q in 0..vr {
                let d: f64 = (0..n).map(|j| vh[p * n + j] * vh[q * n + j]).sum();
                let want = if p == q { 1.0 } else { 0.0 };
                assert!(
                    (d - want).abs() <= tol,
                    "{what}: matrix {b}: (Vh Vhᵀ)[{p}][{q}] = {d}"
                );
            }
        }
    }
}

/// `svd` of the matrices `a` (shape `shape`) uploaded as `T`, with its results as `f64`,
/// NumPy's shapes checked, and `svdvals` checked to give the same values.
fn device_svd<T: MeanType>(
    ctx: &Context,
    shape: &[usize],
    a: &[f64],
    full: bool,
    to: impl Fn(f64) -> T,
) -> gpu_runtime::Result<(Vec<f64>, Vec<f64>, Vec<f64>)>
where
    T::Mean: Into<f64>,
{
    let d = upload(ctx, shape, a.iter().map(|&x| to(x)).collect())?;
    let r = gpuarray::svd(&d, full)?;
    let axes = shape.len();
    let (batch, m, n) = (&shape[..axes - 2], shape[axes - 2], shape[axes - 1]);
    let k = m.min(n);
    let with = |tail: &[usize]| batch.iter().chain(tail).copied().collect::<Vec<_>>();
    let (u_tail, vh_tail) = if full { ([m, m], [n, n]) } else { ([m, k], [k, n]) };
    assert_eq!(r.u.shape(), with(&u_tail), "u of {shape:?}, full {full}");
    assert_eq!(r.s.shape(), with(&[k]), "s of {shape:?}");
    assert_eq!(r.vh.shape(), with(&vh_tail), "vh of {shape:?}, full {full}");
    let s = as_f64(r.s.to_vec()?);
    // The same rotations without the vectors; the kernels are compiled apart, so a last place
    // of the result type may differ (an f16's is 2e-3 of values in [2, 4)). The values
    // themselves are checked against the host's by the callers.
    let values = as_f64(gpuarray::svdvals(&d)?.to_vec()?);
    for (x, y) in values.iter().zip(&s) {
        assert!(
            (x - y).abs() <= 4e-3 * s.first().copied().unwrap_or(1.0).max(1.0),
            "svdvals {values:?} against svd {s:?}"
        );
    }
    Ok((as_f64(r.u.to_vec()?), s, as_f64(r.vh.to_vec()?)))
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn svd_of_random_f64_matrices_of_every_shape() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(0xe16_0005);
    let shapes: [&[usize]; 12] = [
        &[1, 1],
        &[5, 3],
        &[3, 5],
        &[4, 4],
        &[1, 6],
        &[6, 1],
        &[2, 9],
        &[17, 16],
        &[64, 64],
        &[40, 7],
        &[3, 2, 4, 6],
        &[3, 2, 6, 4],
    ];
    for shape in shapes {
        let axes = shape.len();
        let (m, n) = (shape[axes - 2], shape[axes - 1]);
        let count = shape[..axes - 2].iter().product();
        let a = random_matrices(&mut rng, count, m, n);
        for full in [true, false] {
            let (u, s, vh) = device_svd(&ctx, shape, &a, full, |x| x)?;
            check_svd(
                &a,
                count,
                m,
                n,
                full,
                &u,
                &s,
                &vh,
                1e-12,
                &format!("f64 {shape:?} full {full}"),
            );
        }
    }
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn svd_of_a_200_matrix_and_a_tall_one() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(0xe16_0006);
    for (m, n) in [(200, 200), (200, 30), (30, 200)] {
        let a = random_matrices(&mut rng, 1, m, n);
        for full in [true, false] {
            let (u, s, vh) = device_svd(&ctx, &[m, n], &a, full, |x| x)?;
            check_svd(
                &a,
                1,
                m,
                n,
                full,
                &u,
                &s,
                &vh,
                1e-11,
                &format!("f64 {m} x {n} full {full}"),
            );
        }
    }
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn svd_of_rank_deficient_and_zero_matrices() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(0xe16_0007);
    // Rank 2: B (m x 2) C (2 x n), so K - 2 singular values are (about) zero and their
    // vectors, and a full U's or Vh's extra ones, are completed.
    for (m, n) in [(6, 4), (4, 6), (5, 5)] {
        let b = random_matrices(&mut rng, 1, m, 2);
        let c = random_matrices(&mut rng, 1, 2, n);
        let a: Vec<f64> = (0..m * n)
            .map(|e| (0..2).map(|l| b[(e / n) * 2 + l] * c[l * n + e % n]).sum())
            .collect();
        for full in [true, false] {
            let (u, s, vh) = device_svd(&ctx, &[m, n], &a, full, |x| x)?;
            check_svd(
                &a,
                1,
                m,
                n,
                full,
                &u,
                &s,
                &vh,
                1e-12,
                &format!("rank 2, {m} x {n} full {full}"),
            );
            assert!(s[2..].iter().all(|&x| x <= 1e-14), "rank 2: {s:?}");
        }
    }
    // Zero matrices: zero singular values, U and Vh orthonormal.
    for (m, n) in [(4, 3), (3, 4), (1, 1)] {
        let a = vec![0.0; m * n];
        for full in [true, false] {
            let (u, s, vh) = device_svd(&ctx, &[m, n], &a, full, |x| x)?;
            assert!(s.iter().all(|&x| x == 0.0), "zero {m} x {n}: {s:?}");
            check_svd(
                &a,
                1,
                m,
                n,
                full,
                &u,
                &s,
                &vh,
                1e-14,
                &format!("zero {m} x {n} full {full}"),
            );
        }
    }
    // Repeated singular values: the identity, and a matrix with orthogonal columns.
    let eye: Vec<f64> = (0..25).map(|e| if e / 5 == e % 5 { 1.0 } else { 0.0 }).collect();
    let (u, s, vh) = device_svd(&ctx, &[5, 5], &eye, true, |x| x)?;
    assert_eq!(s, [1.0; 5]);
    check_svd(&eye, 1, 5, 5, true, &u, &s, &vh, 1e-14, "identity");
    let ortho = [0.0, 2.0, -3.0, 0.0];
    let (u, s, vh) = device_svd(&ctx, &[2, 2], &ortho, false, |x| x)?;
    assert_eq!(s, [3.0, 2.0]);
    check_svd(&ortho, 1, 2, 2, false, &u, &s, &vh, 1e-14, "orthogonal columns");
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn svd_of_f32_f16_and_i32_matrices() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(0xe16_0008);
    for (shape, full) in [
        (vec![7, 4], true),
        (vec![4, 7], false),
        (vec![3, 2, 5, 5], true),
        (vec![32, 20], false),
    ] {
        let axes = shape.len();
        let (m, n) = (shape[axes - 2], shape[axes - 1]);
        let count = shape[..axes - 2].iter().product();
        let a: Vec<f64> = random_matrices(&mut rng, count, m, n)
            .into_iter()
            .map(|x| f64::from(x as f32))
            .collect();
        let (u, s, vh) = device_svd(&ctx, &shape, &a, full, |x| x as f32)?;
        check_svd(
            &a,
            count,
            m,
            n,
            full,
            &u,
            &s,
            &vh,
            1e-4,
            &format!("f32 {shape:?} full {full}"),
        );
    }
    for (shape, full) in [(vec![6, 4], true), (vec![3, 5], false), (vec![3, 2, 3, 3], true)] {
        let axes = shape.len();
        let (m, n) = (shape[axes - 2], shape[axes - 1]);
        let count = shape[..axes - 2].iter().product();
        let a: Vec<f64> = random_matrices(&mut rng, count, m, n)
            .into_iter()
            .map(|x| f16::from_f64(x).to_f64())
            .collect();
        let (u, s, vh) = device_svd(&ctx, &shape, &a, full, f16::from_f64)?;
        check_svd(
            &a,
            count,
            m,
            n,
            full,
            &u,
            &s,
            &vh,
            2e-2,
            &format!("f16 {shape:?} full {full}"),
        );
    }
    for (shape, full) in [(vec![6, 4], true), (vec![4, 6], false), (vec![3, 2, 4, 4], false)] {
        let axes = shape.len();
        let (m, n) = (shape[axes - 2], shape[axes - 1]);
        let count = shape[..axes - 2].iter().product();
        let a: Vec<f64> = random_matrices(&mut rng, count, m, n)
            .into_iter()
            .map(|x| (x * 20.0).round())
            .collect();
        let (u, s, vh) = device_svd(&ctx, &shape, &a, full, |x| x as i32)?;
        check_svd(
            &a,
            count,
            m,
            n,
            full,
            &u,
            &s,
            &vh,
            1e-12,
            &format!("i32 {shape:?} full {full}"),
        );
    }
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn the_stream_forms_give_what_the_others_give() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let stream = Stream::new(&ctx)?;
    let on = gpuarray::on(&stream);
    let mut rng = Rng::new(0xe16_0009);
    let a = random_symmetric(&mut rng, 6, 5, |x| x);
    let d = upload(&ctx, &[3, 2, 5, 5], a.clone())?;
    // A copy made on the stream, then decomposed on it.
    let c = d.on(&stream).copy()?;
    let r = on.eigh(&c, Uplo::U)?;
    let plain = gpuarray::eigh(&d, Uplo::U)?;
    assert_eq!(r.eigenvalues.to_vec()?, plain.eigenvalues.to_vec()?);
    assert_eq!(r.eigenvectors.to_vec()?, plain.eigenvectors.to_vec()?);
    check_eigh(
        &a,
        6,
        5,
        &r.eigenvalues.to_vec()?,
        &r.eigenvectors.to_vec()?,
        1e-12,
        "on a stream",
    );
    assert_eq!(
        on.eigvalsh(&c, Uplo::L)?.to_vec()?,
        gpuarray::eigvalsh(&d, Uplo::L)?.to_vec()?
    );
    let g = random_matrices(&mut rng, 6, 4, 7);
    let d = upload(&ctx, &[2, 3, 4, 7], g.clone())?;
    let c = d.on(&stream).copy()?;
    for full in [true, false] {
        let r = on.svd(&c, full)?;
        let plain = gpuarray::svd(&d, full)?;
        assert_eq!(r.u.to_vec()?, plain.u.to_vec()?);
        assert_eq!(r.s.to_vec()?, plain.s.to_vec()?);
        assert_eq!(r.vh.to_vec()?, plain.vh.to_vec()?);
        check_svd(
            &g,
            6,
            4,
            7,
            full,
            &r.u.to_vec()?,
            &r.s.to_vec()?,
            &r.vh.to_vec()?,
            1e-12,
            "on a stream",
        );
    }
    assert_eq!(on.svdvals(&c)?.to_vec()?, gpuarray::svdvals(&d)?.to_vec()?);
    // A view in another layout (the transpose, which reverses every axis: matrices of 3 x 2
    // in a (7, 4) stack) is made C-contiguous on the stream first.
    let t = c.t();
    let r = on.svd(&t, false)?;
    let plain = gpuarray::svd(&t.to_contiguous()?, false)?;
    assert_eq!(
        (r.u.shape(), r.s.shape(), r.vh.shape()),
        (&[7, 4, 3, 2][..], &[7, 4, 2][..], &[7, 4, 2, 2][..])
    );
    assert_eq!(r.s.to_vec()?, plain.s.to_vec()?);
    assert_eq!(r.u.to_vec()?, plain.u.to_vec()?);
    Ok(())
}

/// An empty case of `svd`: the shape, `full_matrices`, and the shapes of `u`, `s` and `vh`.
type EmptyCase = (
    &'static [usize],
    bool,
    &'static [usize],
    &'static [usize],
    &'static [usize],
);

#[test]
#[ignore = "needs a CUDA GPU"]
fn empty_stacks_give_empty_results_of_numpys_shapes() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    for shape in [vec![0, 3, 3], vec![2, 0, 0], vec![0, 0]] {
        let d = upload::<f64>(&ctx, &shape, vec![])?;
        let r = gpuarray::eigh(&d, Uplo::L)?;
        assert_eq!(r.eigenvalues.shape(), &shape[..shape.len() - 1]);
        assert_eq!(r.eigenvectors.shape(), &shape[..]);
        assert_eq!(
            gpuarray::eigvalsh(&d, Uplo::U)?.shape(),
            &shape[..shape.len() - 1]
        );
    }
    // (shape, full) -> u, s, vh; a full u or vh of an empty matrix is the identity.
    let cases: [EmptyCase; 8] = [
        (&[0, 3, 2], true, &[0, 3, 3], &[0, 2], &[0, 2, 2]),
        (&[0, 3, 2], false, &[0, 3, 2], &[0, 2], &[0, 2, 2]),
        (&[2, 0, 3], true, &[2, 0, 0], &[2, 0], &[2, 3, 3]),
        (&[2, 0, 3], false, &[2, 0, 0], &[2, 0], &[2, 0, 3]),
        (&[2, 3, 0], true, &[2, 3, 3], &[2, 0], &[2, 0, 0]),
        (&[2, 3, 0], false, &[2, 3, 0], &[2, 0], &[2, 0, 0]),
        (&[0, 0], true, &[0, 0], &[0], &[0, 0]),
        (&[1, 4], true, &[1, 1], &[1], &[4, 4]),
    ];
    for (shape, full, u_shape, s_shape, vh_shape) in cases {
        let len = shape.iter().product();
        let d = upload(&ctx, shape, vec![1.0f64; len])?;
        let r = gpuarray::svd(&d, full)?;
        assert_eq!(
            (r.u.shape(), r.s.shape(), r.vh.shape()),
            (u_shape, s_shape, vh_shape),
            "{shape:?} full {full}"
        );
        assert_eq!(gpuarray::svdvals(&d)?.shape(), s_shape);
        let identities = |v: Vec<f64>, shape: &[usize]| {
            let n = shape[shape.len() - 1];
            if n > 0 && len == 0 {
                for (e, x) in v.iter().enumerate() {
                    let want = if (e / n) % n == e % n { 1.0 } else { 0.0 };
                    assert_eq!(*x, want, "the full matrix of an empty {shape:?} is the identity");
                }
            }
        };
        if full {
            identities(r.u.to_vec()?, u_shape);
            identities(r.vh.to_vec()?, vh_shape);
        }
    }
    // A 1 x 4 matrix: one singular value, its norm; a full vh completed to 4 x 4.
    let a = [1.0, 2.0, 2.0, 4.0];
    let d = upload(&ctx, &[1, 4], a.to_vec())?;
    let r = gpuarray::svd(&d, true)?;
    check_svd(
        &a,
        1,
        1,
        4,
        true,
        &r.u.to_vec()?,
        &r.s.to_vec()?,
        &r.vh.to_vec()?,
        1e-14,
        "1 x 4",
    );
    assert!((r.s.to_vec()?[0] - 5.0).abs() <= 1e-14);
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn what_cannot_be_decomposed_is_refused() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let v = upload(&ctx, &[4], vec![1.0f64; 4])?;
    let too_few = |r: &gpu_runtime::Result<()>, op: &str| match r {
        Err(Error::LinAlg(LinAlgError::TooFewAxes { operation, axes: 1 })) => *operation == op,
        _ => false,
    };
    let r = gpuarray::eigh(&v, Uplo::L).map(drop);
    assert!(too_few(&r, "eigh"), "{r:?}");
    let r = gpuarray::eigvalsh(&v, Uplo::L).map(drop);
    assert!(too_few(&r, "eigvalsh"), "{r:?}");
    let r = gpuarray::svd(&v, true).map(drop);
    assert!(too_few(&r, "svd"), "{r:?}");
    let r = gpuarray::svdvals(&v).map(drop);
    assert!(too_few(&r, "svdvals"), "{r:?}");
    // eigh takes square matrices only; svd takes any.
    let rect = upload(&ctx, &[2, 2, 3], vec![1.0f64; 12])?;
    let r = gpuarray::eigh(&rect, Uplo::L);
    assert!(
        matches!(
            &r,
            Err(Error::LinAlg(LinAlgError::NotSquare { operation: "eigh", shape })) if shape == &[2, 2, 3]
        ),
        "{r:?}"
    );
    let r = gpuarray::eigvalsh(&rect, Uplo::L);
    assert!(
        matches!(&r, Err(Error::LinAlg(LinAlgError::NotSquare { .. }))),
        "{r:?}"
    );
    assert!(gpuarray::svd(&rect, false).is_ok());
    // NaN and infinity: NoConvergence naming the first such matrix, whatever the order the
    // blocks run in; the others are fine.
    let mut rng = Rng::new(0xe16_000a);
    let mut a = random_symmetric(&mut rng, 5, 3, |x| x);
    a[2 * 9 + 3] = f64::NAN; // matrix 2, element (1, 0): in the lower triangle
    a[4 * 9 + 8] = f64::INFINITY; // matrix 4, element (2, 2)
    let d = upload(&ctx, &[5, 3, 3], a.clone())?;
    let r = gpuarray::eigh(&d, Uplo::L);
    assert!(no_convergence(&r, "eigh", 2), "{r:?}");
    let r = gpuarray::eigvalsh(&d, Uplo::L);
    assert!(no_convergence(&r, "eigvalsh", 2), "{r:?}");
    // The upper triangle of matrix 2 is clean: the first bad one read is 4.
    let r = gpuarray::eigvalsh(&d, Uplo::U);
    assert!(no_convergence(&r, "eigvalsh", 4), "{r:?}");
    let r = gpuarray::svd(&d, true);
    assert!(no_convergence(&r, "svd", 2), "{r:?}");
    let r = gpuarray::svdvals(&d);
    assert!(no_convergence(&r, "svdvals", 2), "{r:?}");
    let on_stream = gpuarray::on(&Stream::new(&ctx)?).svd(&d, false);
    assert!(no_convergence(&on_stream, "svd", 2), "{on_stream:?}");
    // Only matrix 4 bad: it is named.
    a[2 * 9 + 3] = 0.5;
    let d = upload(&ctx, &[5, 3, 3], a.clone())?;
    let r = gpuarray::eigh(&d, Uplo::L);
    assert!(no_convergence(&r, "eigh", 4), "{r:?}");
    let r = gpuarray::svd(&d, false);
    assert!(no_convergence(&r, "svd", 4), "{r:?}");
    // A rectangular stack with NaN in its last matrix.
    let mut g = random_matrices(&mut rng, 6, 4, 2);
    g[5 * 8 + 7] = f64::NAN;
    let d = upload(&ctx, &[2, 3, 4, 2], g)?;
    let r = gpuarray::svdvals(&d);
    assert!(no_convergence(&r, "svdvals", 5), "{r:?}");
    // The errors say what happened.
    let e = gpuarray::svd(&d, true).unwrap_err().to_string();
    assert!(
        e.contains("svd") && e.contains("matrix 5") && e.contains("NaN"),
        "{e}"
    );
    Ok(())
}
