//! NumPy's `linalg.pinv`, `matrix_rank` and `lstsq` on a GPU: NumPy 2.4's values (a tall
//! matrix's pseudo-inverse; ranks of a deficient, a full and a zero matrix; NumPy's
//! line-fitting example of `lstsq` with one and two right-hand sides, and a rank-deficient
//! system with its least-norm solution and no residuals), then random stacks against the
//! Moore-Penrose conditions computed here (`a a⁺ a = a`, `a⁺ a a⁺ = a⁺`, both products
//! symmetric) in `f64`, `f32` and `i32`, ranks of random products of known rank, and
//! `lstsq` against the normal equations solved on the host; a stream, empty matrices and the
//! refusals.

use gpu_runtime::gpuarray::{self, DeviceArray};
use gpu_runtime::ndarray::{arr1, arr2, Array, Array2, IxDyn};
use gpu_runtime::{Context, Error, LinAlgError, Stream};
use gpu_suite::Rng;

fn near(got: &[f64], want: &[f64], tol: f64, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: {got:?} against {want:?}");
    let scale = want.iter().fold(1.0f64, |m, v| m.max(v.abs()));
    for (g, w) in got.iter().zip(want) {
        assert!((g - w).abs() <= tol * scale, "{what}: {got:?} against {want:?}");
    }
}

/// `a @ b` for `a` of `m x k` and `b` of `k x n` (C order).
fn mm(a: &[f64], b: &[f64], m: usize, k: usize, n: usize) -> Vec<f64> {
    (0..m * n)
        .map(|e| (0..k).map(|j| a[(e / n) * k + j] * b[j * n + e % n]).sum())
        .collect()
}

fn transpose(a: &[f64], m: usize, n: usize) -> Vec<f64> {
    (0..m * n).map(|e| a[(e % m) * n + e / m]).collect()
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn pinv_matrix_rank_and_lstsq_give_numpys_values() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let a = DeviceArray::from_ndarray(&ctx, &arr2(&[[1.0f64, 2.0], [3.0, 4.0], [5.0, 6.0]]))?;
    let p = gpuarray::pinv(&a, 1e-15)?;
    assert_eq!(p.shape(), [2, 3]);
    let want = [
        -1.3333333333333337,
        -0.33333333333333287,
        0.6666666666666665,
        1.0833333333333335,
        0.3333333333333329,
        -0.4166666666666665,
    ];
    near(&p.to_vec()?, &want, 1e-12, "pinv");
    let ranks = [
        (arr2(&[[1.0f64, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]]), 2),
        (Array2::eye(4), 4),
        (Array2::zeros((3, 3)), 0),
    ];
    for (m, want) in ranks {
        let r = gpuarray::matrix_rank(&DeviceArray::from_ndarray(&ctx, &m)?, None)?;
        assert_eq!(r.to_vec()?, [want], "rank of {m}");
    }
    // NumPy's example: y = m x + c through four points.
    let a = DeviceArray::from_ndarray(&ctx, &arr2(&[[0.0f64, 1.0], [1.0, 1.0], [2.0, 1.0], [3.0, 1.0]]))?;
    let y = DeviceArray::from_ndarray(&ctx, &arr1(&[-1.0f64, 0.2, 0.9, 2.1]))?;
    let fit = gpuarray::lstsq(&a, &y, None)?;
    near(&fit.x.to_vec()?, &[1.0, -0.95], 1e-12, "lstsq x");
    near(&fit.residuals.to_vec()?, &[0.05], 1e-12, "lstsq residuals");
    assert_eq!(fit.rank, 2);
    near(
        &fit.s.to_vec()?,
        &[4.10003044816824, 1.0907567666961073],
        1e-12,
        "lstsq s",
    );
    let y2 = DeviceArray::from_ndarray(
        &ctx,
        &arr2(&[[-1.0f64, -2.0], [0.2, 0.4], [0.9, 1.8], [2.1, 4.2]]),
    )?;
    let fit = gpuarray::on(&Stream::new(&ctx)?).lstsq(&a, &y2, None)?;
    assert_eq!(fit.x.shape(), [2, 2]);
    near(
        &fit.x.to_vec()?,
        &[1.0, 2.0, -0.95, -1.9],
        1e-12,
        "lstsq of two columns",
    );
    near(
        &fit.residuals.to_vec()?,
        &[0.05, 0.2],
        1e-12,
        "residuals of two columns",
    );
    // Rank 1: the least-norm solution, no residuals.
    let s = DeviceArray::from_ndarray(&ctx, &arr2(&[[1.0f64, 1.0], [1.0, 1.0]]))?;
    let fit = gpuarray::lstsq(&s, &DeviceArray::from_ndarray(&ctx, &arr1(&[1.0f64, 3.0]))?, None)?;
    near(&fit.x.to_vec()?, &[1.0, 1.0], 1e-12, "least-norm x");
    assert_eq!((fit.rank, fit.residuals.len()), (1, 0));
    near(&fit.s.to_vec()?, &[2.0, 0.0], 1e-12, "deficient s");
    // Refusals: a stack, rows that differ.
    let stack = DeviceArray::<f64, _>::zeros(&ctx, (2, 2, 2))?;
    let b = DeviceArray::from_ndarray(&ctx, &arr1(&[1.0f64, 3.0]))?;
    assert!(matches!(
        gpuarray::lstsq(&stack, &b, None),
        Err(Error::LinAlg(LinAlgError::RightHandSide { .. }))
    ));
    let b3 = DeviceArray::from_ndarray(&ctx, &arr1(&[1.0f64, 3.0, 4.0]))?;
    assert!(matches!(
        gpuarray::lstsq(&s, &b3, None),
        Err(Error::LinAlg(LinAlgError::RightHandSide { .. }))
    ));
    // Empty matrices: a zero pseudo-inverse of the transposed shape, rank 0.
    let e = DeviceArray::<f64, _>::zeros(&ctx, (0, 3))?;
    assert_eq!(gpuarray::pinv(&e, 1e-15)?.shape(), [3, 0]);
    assert_eq!(gpuarray::matrix_rank(&e, None)?.to_vec()?, [0]);
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn pinv_meets_the_penrose_conditions_and_lstsq_the_normal_equations() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(61);
    for (m, n) in [(6, 4), (4, 6), (5, 5)] {
        let count = 3;
        let host: Vec<f64> = (0..count * m * n).map(|_| rng.f64()).collect();
        let a = DeviceArray::from_ndarray(
            &ctx,
            &Array::from_shape_vec(IxDyn(&[count, m, n]), host.clone()).unwrap(),
        )?;
        let p = gpuarray::pinv(&a, 1e-15)?;
        assert_eq!(p.shape(), [count, n, m]);
        let pv = p.to_vec()?;
        for c in 0..count {
            let am = &host[c * m * n..(c + 1) * m * n];
            let pm = &pv[c * n * m..(c + 1) * n * m];
            let apa = mm(&mm(am, pm, m, n, m), am, m, m, n);
            near(&apa, am, 1e-10, "a a+ a");
            let pap = mm(&mm(pm, am, n, m, n), pm, n, n, m);
            near(&pap, pm, 1e-10, "a+ a a+");
            let ap = mm(am, pm, m, n, m);
            near(&ap, &transpose(&ap, m, m), 1e-10, "a a+ symmetric");
        }
        // f32 and i32 inputs.
        let p32 = gpuarray::pinv(&a.astype::<f32>()?, 1e-6)?;
        let p32: Vec<f64> = p32.to_vec()?.into_iter().map(f64::from).collect();
        near(&p32, &pv, 1e-3, "f32 pinv");
        let ints = (a.expr() * 10.0).eval()?.astype::<i32>()?;
        let pi = gpuarray::pinv(&ints, 1e-15)?;
        assert_eq!(pi.shape(), [count, n, m]);
    }
    // Ranks of products of known rank: (8 x r) @ (r x 6).
    for r in [1usize, 3, 6] {
        let x: Vec<f64> = (0..8 * r).map(|_| rng.f64()).collect();
        let y: Vec<f64> = (0..r * 6).map(|_| rng.f64()).collect();
        let prod = mm(&x, &y, 8, r, 6);
        let a = DeviceArray::from_ndarray(&ctx, &Array2::from_shape_vec((8, 6), prod).unwrap())?;
        assert_eq!(gpuarray::matrix_rank(&a, None)?.to_vec()?, [r as i64], "rank {r}");
        assert_eq!(
            gpuarray::matrix_rank(&a, Some(1e-8))?.to_vec()?,
            [r as i64],
            "rank {r} with tol"
        );
    }
    // lstsq of a tall random system against the normal equations aᵀa x = aᵀb.
    let (m, n) = (40, 5);
    let ah: Vec<f64> = (0..m * n).map(|_| rng.f64()).collect();
    let bh: Vec<f64> = (0..m).map(|_| rng.f64()).collect();
    let a = DeviceArray::from_ndarray(&ctx, &Array2::from_shape_vec((m, n), ah.clone()).unwrap())?;
    let b = DeviceArray::from_ndarray(&ctx, &Array::from(bh.clone()))?;
    let fit = gpuarray::lstsq(&a, &b, None)?;
    let x = fit.x.to_vec()?;
    let at = transpose(&ah, m, n);
    let lhs = mm(&mm(&at, &ah, n, m, n), &x, n, n, 1);
    let rhs = mm(&at, &bh, n, m, 1);
    near(&lhs, &rhs, 1e-10, "normal equations");
    let r: f64 = mm(&ah, &x, m, n, 1)
        .iter()
        .zip(&bh)
        .map(|(p, q)| (p - q) * (p - q))
        .sum();
    near(&fit.residuals.to_vec()?, &[r], 1e-10, "residual");
    Ok(())
}
