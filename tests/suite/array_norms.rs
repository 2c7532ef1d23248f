//! NumPy 2's `linalg.norm`, `vector_norm` and `matrix_norm` on a GPU: every `ord` of each on
//! a matrix against NumPy 2.4's values (over all axes, along each axis, with `keepdims`),
//! random stacks of `f64`, `f32`, `f16` and `i32` matrices against the host's sums, a
//! transposed view, the result types (`f64` for integers), a stream, and the empty cases
//! (an empty axis refused for the largest and smallest magnitudes, NumPy's `ValueError`);
//! `cond` against NumPy 2.4's values and the ratio of the host's extreme singular values of
//! diagonal stacks.

use gpu_runtime::gpuarray::{self, DeviceArray, MatrixOrd};
use gpu_runtime::half::f16;
use gpu_runtime::ndarray::{arr2, Array, IxDyn};
use gpu_runtime::{ArrayShapeError, Context, Error, Stream};
use gpu_suite::Rng;

fn near(got: &[f64], want: &[f64], tol: f64, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: {got:?} against {want:?}");
    for (g, w) in got.iter().zip(want) {
        assert!(
            (g - w).abs() <= tol * w.abs().max(1.0),
            "{what}: {got:?} against {want:?}"
        );
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn every_ord_gives_numpys_values() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let a = DeviceArray::from_ndarray(&ctx, &arr2(&[[1.0f64, -2.0, 3.0], [4.0, 5.0, -6.0]]))?;
    let matrix = [
        (MatrixOrd::Fro, 9.539392014169456),
        (MatrixOrd::Nuc, 11.653785350898488),
        (MatrixOrd::Inf, 15.0),
        (MatrixOrd::NegInf, 6.0),
        (MatrixOrd::One, 9.0),
        (MatrixOrd::NegOne, 5.0),
        (MatrixOrd::Two, 9.225027715260929),
        (MatrixOrd::NegTwo, 2.4287576356375586),
    ];
    for (ord, want) in matrix {
        let got = gpuarray::matrix_norm(&a, ord, false)?;
        assert_eq!(got.shape(), &[] as &[usize]);
        near(&got.to_vec()?, &[want], 1e-12, &format!("matrix_norm {ord:?}"));
        let kept = gpuarray::matrix_norm(&a, ord, true)?;
        assert_eq!(kept.shape(), [1, 1]);
    }
    let vector: [(f64, f64, [f64; 2], [f64; 3]); 7] = [
        (
            2.0,
            9.539392014169456,
            [3.7416573867739413, 8.774964387392123],
            [4.123105625617661, 5.385164807134504, 6.708203932499369],
        ),
        (1.0, 21.0, [6.0, 15.0], [5.0, 7.0, 9.0]),
        (f64::INFINITY, 6.0, [3.0, 6.0], [4.0, 5.0, 6.0]),
        (f64::NEG_INFINITY, 1.0, [1.0, 4.0], [1.0, 2.0, 3.0]),
        (0.0, 6.0, [3.0, 3.0], [2.0, 2.0, 2.0]),
        (
            3.0,
            7.611662611020244,
            [3.3019272488946263, 7.398636222991409],
            [4.020725758589058, 5.104468722001463, 6.240251469155711],
        ),
        (
            0.5,
            117.32836979428498,
            [17.191508225450303, 44.69668203123519],
            [9.0, 13.324555320336758, 17.48528137423857],
        ),
    ];
    for (ord, all, rows, cols) in vector {
        near(
            &gpuarray::vector_norm(&a, ord, None, false)?.to_vec()?,
            &[all],
            1e-12,
            &format!("ord {ord}"),
        );
        near(
            &gpuarray::vector_norm(&a, ord, Some(&[1]), false)?.to_vec()?,
            &rows,
            1e-12,
            &format!("ord {ord} axis 1"),
        );
        let kept = gpuarray::vector_norm(&a, ord, Some(&[-2]), true)?;
        assert_eq!(kept.shape(), [1, 3]);
        near(
            &kept.to_vec()?,
            &cols,
            1e-12,
            &format!("ord {ord} axis 0 keepdims"),
        );
    }
    // np.linalg.norm(np.arange(5, dtype=np.int32)): f64.
    let i = DeviceArray::from_ndarray(&ctx, &gpu_runtime::ndarray::arr1(&[0i32, 1, 2, 3, 4]))?;
    let n: DeviceArray<f64, IxDyn> = gpuarray::norm(&i)?;
    near(&n.to_vec()?, &[5.477225575051661], 1e-15, "norm of int32");
    // Empty: no rows along the last axis is an empty result; an empty axis has no largest.
    let e = DeviceArray::<f64, _>::zeros(&ctx, (0, 3))?;
    assert_eq!(
        gpuarray::vector_norm(&e, f64::INFINITY, Some(&[1]), false)?.shape(),
        [0]
    );
    assert!(matches!(
        gpuarray::vector_norm(&e, f64::INFINITY, Some(&[0]), false),
        Err(Error::Shape(ArrayShapeError::EmptyOperand { .. }))
    ));
    assert_eq!(gpuarray::vector_norm(&e, 2.0, None, false)?.to_vec()?, [0.0]);
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn norms_of_random_stacks_match_the_host_in_several_types() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(51);
    let (count, m, n) = (6, 5, 7);
    let host: Vec<f64> = (0..count * m * n).map(|_| (rng.f64() * 8.0).round()).collect();
    let fro: Vec<f64> = host
        .chunks(m * n)
        .map(|c| c.iter().map(|x| x * x).sum::<f64>().sqrt())
        .collect();
    let inf: Vec<f64> = host
        .chunks(m * n)
        .map(|c| {
            c.chunks(n)
                .map(|r| r.iter().map(|x| x.abs()).sum::<f64>())
                .fold(0.0, f64::max)
        })
        .collect();
    let one: Vec<f64> = host
        .chunks(m * n)
        .map(|c| {
            (0..n)
                .map(|j| (0..m).map(|i| c[i * n + j].abs()).sum::<f64>())
                .fold(0.0, f64::max)
        })
        .collect();
    let shape = [2, 3, m, n];
    let a64 = DeviceArray::from_ndarray(&ctx, &Array::from_shape_vec(IxDyn(&shape), host.clone()).unwrap())?;
    let stream = Stream::new(&ctx)?;
    near(
        &gpuarray::on(&stream)
            .matrix_norm(&a64, MatrixOrd::Fro, false)?
            .to_vec()?,
        &fro,
        1e-12,
        "f64 fro",
    );
    near(
        &gpuarray::matrix_norm(&a64, MatrixOrd::Inf, false)?.to_vec()?,
        &inf,
        1e-12,
        "f64 inf",
    );
    near(
        &gpuarray::matrix_norm(&a64, MatrixOrd::One, false)?.to_vec()?,
        &one,
        1e-12,
        "f64 one",
    );
    // The 2-norm is at most the Frobenius norm and at least the largest column's 2-norm.
    let two = gpuarray::matrix_norm(&a64, MatrixOrd::Two, false)?.to_vec()?;
    for (k, t) in two.iter().enumerate() {
        assert!(
            *t <= fro[k] * (1.0 + 1e-12),
            "2-norm {t} above the Frobenius norm {}",
            fro[k]
        );
    }
    let a32 = a64.astype::<f32>()?;
    let got: Vec<f64> = gpuarray::matrix_norm(&a32, MatrixOrd::Fro, false)?
        .to_vec()?
        .into_iter()
        .map(f64::from)
        .collect();
    near(&got, &fro, 1e-6, "f32 fro");
    let ah = a64.astype::<f16>()?;
    let got: Vec<f64> = gpuarray::matrix_norm(&ah, MatrixOrd::Inf, false)?
        .to_vec()?
        .into_iter()
        .map(f64::from)
        .collect();
    near(&got, &inf, 1e-3, "f16 inf");
    let ai = a64.astype::<i32>()?;
    near(
        &gpuarray::matrix_norm(&ai, MatrixOrd::One, false)?.to_vec()?,
        &one,
        1e-12,
        "i32 one",
    );
    // A transposed view: the 1-norm of the transpose is the inf-norm.
    let t = a64.view().permuted_axes(&[0, 1, 3, 2])?;
    near(
        &gpuarray::matrix_norm(&t, MatrixOrd::One, false)?.to_vec()?,
        &inf,
        1e-12,
        "transposed one",
    );
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn cond_is_the_ratio_of_the_extreme_singular_values() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    // np.linalg.cond([[1, 2], [3, 4]]) = 14.933034373659268
    let a = DeviceArray::from_ndarray(&ctx, &arr2(&[[1.0f64, 2.0], [3.0, 4.0]]))?;
    near(
        &gpuarray::cond(&a)?.to_vec()?,
        &[14.933034373659268],
        1e-12,
        "cond",
    );
    // Diagonal matrices with permuted rows: the ratio of the largest and smallest magnitude.
    let mut rng = Rng::new(52);
    let (count, n) = (4, 6);
    let mut host = vec![0.0f64; count * n * n];
    let mut want = Vec::new();
    for m in 0..count {
        let d: Vec<f64> = (0..n)
            .map(|_| rng.f64() * 10.0 + 11.0 * rng.f64().signum())
            .collect();
        for i in 0..n {
            host[m * n * n + ((i + m) % n) * n + i] = d[i];
        }
        let mags: Vec<f64> = d.iter().map(|x| x.abs()).collect();
        want.push(
            mags.iter().copied().fold(0.0, f64::max) / mags.iter().copied().fold(f64::INFINITY, f64::min),
        );
    }
    let stack = DeviceArray::from_ndarray(&ctx, &Array::from_shape_vec(IxDyn(&[2, 2, n, n]), host).unwrap())?;
    let got = gpuarray::on(&Stream::new(&ctx)?).cond(&stack)?;
    assert_eq!(got.shape(), [2, 2]);
    near(&got.to_vec()?, &want, 1e-12, "cond of a stack");
    let empty = DeviceArray::<f64, _>::zeros(&ctx, (0, 0))?;
    assert!(matches!(
        gpuarray::cond(&empty),
        Err(Error::Shape(ArrayShapeError::EmptyOperand { .. }))
    ));
    Ok(())
}
