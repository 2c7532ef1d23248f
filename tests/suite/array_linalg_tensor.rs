//! NumPy's `linalg.multi_dot`, `tensorsolve` and `tensorinv` on a GPU, against the host on
//! random data: `multi_dot` of chains of 2 to 5 matrices with and without 1-d ends (a row
//! vector first, a column vector last: 2-d, 1-d and 0-d results), of `f64`, `f32` and `i64`,
//! a transposed (strided) operand, on a stream, against the product taken left to right on the
//! host (exact for integers); `tensorsolve` and `tensorinv` of the shapes of NumPy's examples
//! ((6, 4, 24) and (6, 4, 2, 3, 4) against b of (6, 4); (4, 6, 8, 3) with `ind = 2`, (24, 8, 3)
//! with `ind = 1`), `axes` moved to the end, integer data (an `f64` result), against the host's
//! `tensordot` of the result with `a` (the identity for `tensorinv`, `b` for `tensorsolve`),
//! and NumPy's own check that `tensordot(tensorinv(a), b) == tensorsolve(a, b)`; and the
//! refusals of each.

use gpu_runtime::gpuarray::{self, DeviceArray, Element};
use gpu_runtime::ndarray::{Array, IxDyn};
use gpu_runtime::{ArrayShapeError, Context, Error, LinAlgError, Stream};
use gpu_suite::Rng;

use super::array_linalg_lu::upload;
use crate::common::ctx;

/// `a @ b` of an `m x k` and a `k x n` matrix (C order), in `T`'s own arithmetic.
fn host_matmul<T: Copy + Default + std::ops::Add<Output = T> + std::ops::Mul<Output = T>>(
    a: &[T],
    b: &[T],
    m: usize,
    k: usize,
    n: usize,
) -> Vec<T> {
    let mut out = vec![T::default(); m * n];
    for i in 0..m {
        for j in 0..n {
            let mut s = T::default();
            for l in 0..k {
                s = s + a[i * k + l] * b[l * n + j];
            }
            out[i * n + j] = s;
        }
    }
    out
}

/// Each of `got` within `tol` (relative to the largest magnitude of `want`, at least 1) of `want`.
fn assert_near(got: &[f64], want: &[f64], tol: f64, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}");
    let scale = want.iter().fold(1.0f64, |m, v| m.max(v.abs()));
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!((g - w).abs() <= tol * scale, "{what}[{i}]: {g} against {w}");
    }
}

/// The chains tested: the matrices' rows and columns (`dims[i] x dims[i + 1]`), and whether
/// the first and the last operand are 1-d.
const CHAINS: [(&[usize], bool, bool); 9] = [
    (&[3, 4, 5], false, false),
    (&[1, 7, 2], true, false),
    (&[1, 6, 1], true, true),
    (&[5, 30, 2, 40], false, false),
    (&[1, 30, 2, 40], true, false),
    (&[9, 30, 2, 40, 1], false, true),
    (&[1, 3, 50, 2, 60, 1], true, true),
    (&[30, 35, 15, 5, 10, 20], false, false),
    (&[2, 64, 3, 64, 3, 1], false, true),
];

/// The shape of operand `i` of a chain: `dims[i] x dims[i + 1]`, or 1-d at a vector end.
fn operand_shape(dims: &[usize], i: usize, first_vector: bool, last_vector: bool) -> Vec<usize> {
    let n = dims.len() - 1;
    if i == 0 && first_vector {
        vec![dims[1]]
    } else if i == n - 1 && last_vector {
        vec![dims[n - 1]]
    } else {
        vec![dims[i], dims[i + 1]]
    }
}

/// NumPy's shape of the chain's result.
fn result_shape(dims: &[usize], first_vector: bool, last_vector: bool) -> Vec<usize> {
    let (rows, cols) = (dims[0], dims[dims.len() - 1]);
    match (first_vector, last_vector) {
        (false, false) => vec![rows, cols],
        (true, false) => vec![cols],
        (false, true) => vec![rows],
        (true, true) => vec![],
    }
}

/// Every chain of [`CHAINS`] of `T` (drawn by `draw`), against the host's product left to
/// right, compared by `check`.
fn check_chains<T: Element + Copy + Default + std::ops::Add<Output = T> + std::ops::Mul<Output = T>>(
    ctx: &Context,
    rng: &mut Rng,
    draw: impl Fn(&mut Rng) -> T,
    check: impl Fn(&[T], &[T], &str),
) -> gpu_runtime::Result<()> {
    for (dims, first_vector, last_vector) in CHAINS {
        let n = dims.len() - 1;
        let host: Vec<Vec<T>> = (0..n)
            .map(|i| (0..dims[i] * dims[i + 1]).map(|_| draw(rng)).collect())
            .collect();
        let arrays = (0..n)
            .map(|i| {
                upload(
                    ctx,
                    &operand_shape(dims, i, first_vector, last_vector),
                    host[i].clone(),
                )
            })
            .collect::<gpu_runtime::Result<Vec<_>>>()?;
        let refs: Vec<&DeviceArray<T, IxDyn>> = arrays.iter().collect();
        let got = gpuarray::multi_dot(&refs)?;
        let what = format!("multi_dot of {dims:?}, vector ends {first_vector} {last_vector}");
        assert_eq!(
            got.shape(),
            result_shape(dims, first_vector, last_vector),
            "{what}"
        );
        let mut want = host[0].clone();
        for i in 1..n {
            want = host_matmul(&want, &host[i], dims[0], dims[i], dims[i + 1]);
        }
        check(&got.to_vec()?, &want, &what);
    }
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn multi_dot_of_chains_with_vector_ends_matches_the_host_product() -> gpu_runtime::Result<()> {
    let ctx = ctx();
    let mut rng = Rng::new(0x4d44);
    check_chains(
        &ctx,
        &mut rng,
        |r| r.f64(),
        |g, w, what| assert_near(g, w, 1e-12, what),
    )?;
    check_chains(
        &ctx,
        &mut rng,
        |r| r.f32(),
        |g, w, what| {
            let g: Vec<f64> = g.iter().map(|&x| f64::from(x)).collect();
            let w: Vec<f64> = w.iter().map(|&x| f64::from(x)).collect();
            assert_near(&g, &w, 1e-4, what);
        },
    )?;
    // Integers are exact in any order (and wrap alike, but these stay small).
    check_chains(
        &ctx,
        &mut rng,
        |r| (r.next_u64() % 7) as i64 - 3,
        |g, w, what| assert_eq!(g, w, "{what}"),
    )?;
    // A transposed (strided) middle operand, with views of different dimension types.
    let (a, b, c) = (
        (0..5).map(|_| rng.f64()).collect::<Vec<_>>(),
        (0..5 * 6).map(|_| rng.f64()).collect::<Vec<_>>(),
        (0..6 * 3).map(|_| rng.f64()).collect::<Vec<_>>(),
    );
    let da = DeviceArray::from_ndarray(&ctx, &Array::from_vec(a.clone()))?;
    // b stored as its transpose, 6 x 5, and read through `.t()`.
    let bt: Vec<f64> = (0..6 * 5).map(|e| b[(e % 5) * 6 + e / 5]).collect();
    let db = DeviceArray::from_ndarray(&ctx, &Array::from_shape_vec((6, 5), bt).unwrap())?;
    let dc = DeviceArray::from_ndarray(&ctx, &Array::from_shape_vec((6, 3), c.clone()).unwrap())?;
    let (va, vb, vc) = (da.view().into_dyn(), db.t().into_dyn(), dc.view().into_dyn());
    let got = gpuarray::multi_dot(&[&va, &vb, &vc])?;
    let want = host_matmul(&host_matmul(&a, &b, 1, 5, 6), &c, 1, 6, 3);
    assert_eq!(got.shape(), [3]);
    assert_near(
        &got.to_vec()?,
        &want,
        1e-12,
        "multi_dot with a transposed operand",
    );
    // On a stream.
    let stream = Stream::new(&ctx)?;
    let got = gpuarray::on(&stream).multi_dot(&[&va, &vb, &vc])?;
    stream.synchronize()?;
    assert_near(&got.to_vec()?, &want, 1e-12, "multi_dot on a stream");
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn multi_dot_refuses_chains_that_do_not_fit() -> gpu_runtime::Result<()> {
    let ctx = ctx();
    let m = |shape: &[usize]| DeviceArray::<f32, IxDyn>::zeros(&ctx, IxDyn(shape));
    let (a, b, v, s, cube) = (m(&[2, 3])?, m(&[3, 4])?, m(&[3])?, m(&[])?, m(&[3, 3, 3])?);
    let none: [&DeviceArray<f32, IxDyn>; 0] = [];
    assert!(matches!(
        gpuarray::multi_dot(&none),
        Err(Error::Shape(ArrayShapeError::TooFewArrays {
            given: 0,
            least: 2,
            ..
        }))
    ));
    assert!(matches!(
        gpuarray::multi_dot(&[&a]),
        Err(Error::Shape(ArrayShapeError::TooFewArrays { given: 1, .. }))
    ));
    // A vector between the ends, a 0-d array, three axes.
    for (arrays, what) in [
        (vec![&a, &v, &b], "a vector inside"),
        (vec![&s, &a], "a 0-d array"),
    ] {
        match gpuarray::multi_dot(&arrays) {
            Err(Error::LinAlg(LinAlgError::TooFewAxes {
                operation: "multi_dot",
                ..
            })) => {}
            other => panic!("{what}: {other:?}"),
        }
    }
    assert!(matches!(
        gpuarray::multi_dot(&[&a, &cube]),
        Err(Error::Shape(ArrayShapeError::TooManyAxes {
            axes: 3,
            most: 2,
            ..
        }))
    ));
    // Columns against the next rows: (2, 3) @ (2, 3).
    assert!(matches!(
        gpuarray::multi_dot(&[&a, &b, &a]),
        Err(Error::Shape(ArrayShapeError::Einsum { .. }))
    ));
    Ok(())
}

/// A well-conditioned `n x n` matrix (C order): random entries in [-1, 1) and `n` added on
/// the diagonal.
fn well_conditioned(rng: &mut Rng, n: usize) -> Vec<f64> {
    (0..n * n)
        .map(|e| rng.f64() + if e / n == e % n { n as f64 } else { 0.0 })
        .collect()
}

/// The axes of a C-order array of `shape` permuted: element `[i_0, ...]` of the result is
/// element `[.., i_k at axis perm[k], ..]` of `v` (NumPy's `transpose(perm)`).
fn host_transpose(v: &[f64], shape: &[usize], perm: &[usize]) -> (Vec<f64>, Vec<usize>) {
    let new_shape: Vec<usize> = perm.iter().map(|&p| shape[p]).collect();
    let mut strides = vec![1usize; shape.len()];
    for k in (0..shape.len().saturating_sub(1)).rev() {
        strides[k] = strides[k + 1] * shape[k + 1];
    }
    let len = v.len();
    let mut out = Vec::with_capacity(len);
    for e in 0..len {
        // The multi-index of `e` in the new shape, mapped to `v`'s offset.
        let (mut rest, mut off) = (e, 0);
        for k in (0..new_shape.len()).rev() {
            let i = rest % new_shape[k];
            rest /= new_shape[k];
            off += i * strides[perm[k]];
        }
        out.push(v[off]);
    }
    (out, new_shape)
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn tensorsolve_of_numpys_shapes_solves_the_flattened_system() -> gpu_runtime::Result<()> {
    let ctx = ctx();
    let mut rng = Rng::new(0x7501);
    // NumPy's examples' shapes: a (6, 4, 24) and (6, 4, 2, 3, 4) against b (6, 4).
    for a_shape in [&[6usize, 4, 24][..], &[6, 4, 2, 3, 4]] {
        let host_a = well_conditioned(&mut rng, 24);
        let host_b: Vec<f64> = (0..24).map(|_| rng.f64()).collect();
        let a = upload(&ctx, a_shape, host_a.clone())?;
        let b = upload(&ctx, &[6, 4], host_b.clone())?;
        let x = gpuarray::tensorsolve(&a, &b, None)?;
        assert_eq!(x.shape(), &a_shape[2..], "tensorsolve of {a_shape:?}");
        let back = host_matmul(&host_a, &x.to_vec()?, 24, 24, 1);
        assert_near(&back, &host_b, 1e-12, &format!("a . x of {a_shape:?}"));
    }
    // `axes`: the axes named moved to the end first. a (4, 6, 6, 4) with axes [0, 2] is read
    // as (6, 4, 4, 6): 24 rows (b's 6 x 4) by 24 columns.
    let host_m = well_conditioned(&mut rng, 24);
    let host_b: Vec<f64> = (0..24).map(|_| rng.f64()).collect();
    // Build `a` so that its transpose (1, 3, 0, 2) is the matrix: `a` is the matrix's
    // (6, 4, 4, 6) array transposed by the inverse permutation (2, 0, 3, 1).
    let (host_a, a_shape) = host_transpose(&host_m, &[6, 4, 4, 6], &[2, 0, 3, 1]);
    assert_eq!(a_shape, [4, 6, 6, 4]);
    let a = upload(&ctx, &a_shape, host_a)?;
    let b = upload(&ctx, &[6, 4], host_b.clone())?;
    let x = gpuarray::tensorsolve(&a, &b, Some(&[0, 2]))?;
    assert_eq!(x.shape(), [4, 6]);
    let back = host_matmul(&host_m, &x.to_vec()?, 24, 24, 1);
    assert_near(&back, &host_b, 1e-12, "tensorsolve with axes [0, 2]");
    // Integers solve in f64, as NumPy's; f32 in f32; on a stream.
    let ints: Vec<i32> = (0..36i32)
        .map(|e| if e / 6 == e % 6 { 10 } else { e % 5 - 2 })
        .collect();
    let host_ints: Vec<f64> = ints.iter().map(|&v| f64::from(v)).collect();
    let a = upload(&ctx, &[2, 3, 6], ints)?;
    let b = upload(&ctx, &[2, 3], vec![1i32, 2, 3, 4, 5, 6])?;
    let x: DeviceArray<f64, IxDyn> = gpuarray::tensorsolve(&a, &b, None)?;
    let back = host_matmul(&host_ints, &x.to_vec()?, 6, 6, 1);
    assert_near(
        &back,
        &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0],
        1e-12,
        "tensorsolve of i32",
    );
    let stream = Stream::new(&ctx)?;
    let a32 = upload(&ctx, &[2, 3, 6], host_ints.iter().map(|&v| v as f32).collect())?;
    let b32 = upload(&ctx, &[2, 3], vec![1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0])?;
    let x: DeviceArray<f32, IxDyn> = gpuarray::on(&stream).tensorsolve(&a32, &b32, None)?;
    stream.synchronize()?;
    let xs: Vec<f64> = x.to_vec()?.into_iter().map(f64::from).collect();
    let back = host_matmul(&host_ints, &xs, 6, 6, 1);
    assert_near(&back, &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], 1e-5, "tensorsolve of f32");
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn tensorinv_of_numpys_shapes_inverts_the_flattened_matrix() -> gpu_runtime::Result<()> {
    let ctx = ctx();
    let mut rng = Rng::new(0x7502);
    // NumPy's examples: (4, 6, 8, 3) with ind 2 gives (8, 3, 4, 6); (24, 8, 3) with ind 1
    // gives (8, 3, 24).
    for (shape, ind, inv_shape) in [
        (&[4usize, 6, 8, 3][..], 2, &[8usize, 3, 4, 6][..]),
        (&[24, 8, 3], 1, &[8, 3, 24]),
    ] {
        let host_a = well_conditioned(&mut rng, 24);
        let a = upload(&ctx, shape, host_a.clone())?;
        let ainv = gpuarray::tensorinv(&a, ind)?;
        assert_eq!(ainv.shape(), inv_shape, "tensorinv of {shape:?}, ind {ind}");
        // tensordot(ainv, a, ind) is the identity: as matrices, ainv (24 x 24) @ a.
        let product = host_matmul(&ainv.to_vec()?, &host_a, 24, 24, 24);
        let eye: Vec<f64> = (0..24 * 24)
            .map(|e| if e / 24 == e % 24 { 1.0 } else { 0.0 })
            .collect();
        assert_near(&product, &eye, 1e-12, &format!("tensorinv of {shape:?} times a"));
        // NumPy's check: tensordot(ainv, b, ind) == tensorsolve(a, b).
        let b_shape = &shape[..ind];
        let host_b: Vec<f64> = (0..24).map(|_| rng.f64()).collect();
        let b = upload(&ctx, b_shape, host_b.clone())?;
        let by_inv = gpuarray::tensordot(&ainv, &b, ind)?;
        let by_solve = gpuarray::tensorsolve(&a, &b, None)?;
        assert_eq!(by_inv.shape(), by_solve.shape());
        assert_near(
            &by_inv.to_vec()?,
            &by_solve.to_vec()?,
            1e-12,
            "tensordot(ainv, b) against tensorsolve",
        );
    }
    // `ind` past the axes counts as all of them: a (1, 1) array is a 1 x 1 matrix.
    let one = upload(&ctx, &[1, 1], vec![4.0f64])?;
    let r = gpuarray::tensorinv(&one, 5)?;
    assert_eq!((r.shape().to_vec(), r.to_vec()?), (vec![1, 1], vec![0.25]));
    // f32 stays f32, on a stream.
    let stream = Stream::new(&ctx)?;
    let a = upload(
        &ctx,
        &[2, 2, 4],
        well_conditioned(&mut rng, 4)
            .into_iter()
            .map(|v| v as f32)
            .collect(),
    )?;
    let ainv: DeviceArray<f32, IxDyn> = gpuarray::on(&stream).tensorinv(&a, 2)?;
    stream.synchronize()?;
    assert_eq!(ainv.shape(), [4, 2, 2]);
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn tensorsolve_and_tensorinv_refuse_what_numpy_refuses() -> gpu_runtime::Result<()> {
    let ctx = ctx();
    let a = upload(&ctx, &[4, 6, 8, 3], vec![0.0f64; 24 * 24])?;
    // Not square when split after the first axis (4 x 144), and `ind = 0`.
    match gpuarray::tensorinv(&a, 1) {
        Err(Error::LinAlg(LinAlgError::NotSquareTensor {
            leading: 1,
            rows: 4,
            cols: 144,
            ..
        })) => {}
        other => panic!("{other:?}"),
    }
    match gpuarray::tensorinv(&a, 0) {
        Err(Error::LinAlg(LinAlgError::NotSquareTensor { leading: 0, .. })) => {}
        other => panic!("{other:?}"),
    }
    // Singular (all zeros): the first matrix is named.
    match gpuarray::tensorinv(&a, 2) {
        Err(Error::LinAlg(LinAlgError::Singular { matrix: 0, .. })) => {}
        other => panic!("{other:?}"),
    }
    let b = upload(&ctx, &[4], vec![0.0f64; 4])?;
    match gpuarray::tensorsolve(&a, &b, None) {
        Err(Error::LinAlg(LinAlgError::NotSquareTensor { leading: 1, .. })) => {}
        other => panic!("{other:?}"),
    }
    // b of other than 24 elements against a (24, 24)-shaped a.
    let a = upload(&ctx, &[24, 24], vec![0.0f64; 24 * 24])?;
    let b = upload(&ctx, &[25], vec![0.0f64; 25])?;
    match gpuarray::tensorsolve(&a, &b, None) {
        Err(Error::LinAlg(LinAlgError::RightHandSide { a, b, .. })) => {
            assert_eq!((a, b), (vec![24, 24], vec![25]));
        }
        other => panic!("{other:?}"),
    }
    // An axis `a` does not have.
    let b = upload(&ctx, &[24], vec![0.0f64; 24])?;
    assert!(matches!(
        gpuarray::tensorsolve(&a, &b, Some(&[2])),
        Err(Error::Shape(ArrayShapeError::NoSuchAxis { axis: 2, axes: 2, .. }))
    ));
    Ok(())
}
