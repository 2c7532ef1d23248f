//! `matmul` beyond 3 axes (NumPy's broadcasting of any number of batch axes), `matmul_into`
//! with an `out` of any layout, `matmul_mixed` (two element types, NumPy's promotion) and N-d
//! `dot` (the sum over `a`'s last axis and `b`'s second to last; a 0-d operand multiplies), on
//! a GPU against host references in `f64` on random data: C-order, transposed, stepped and
//! broadcast operands, vectors, empty batches and an empty `k`.
//!
//! `cargo test --features cublas --test cudarc -- --ignored array_matmul_nd::`

use gpu_runtime::gpuarray::{self as gpuarray, dot, matmul, matmul_into, matmul_mixed, DeviceArray};
use gpu_runtime::ndarray::{s, Array, ArrayD, Dimension, IxDyn, ShapeBuilder};
use gpu_runtime::{Context, Error, GemmError, Stream};
use gpu_suite::Rng;

fn random(rng: &mut Rng, shape: &[usize]) -> ArrayD<f64> {
    let n: usize = shape.iter().product();
    Array::from_shape_vec(IxDyn(shape), (0..n).map(|_| rng.f64()).collect()).unwrap()
}

/// NumPy's broadcast of two shapes.
fn broadcast(a: &[usize], b: &[usize]) -> Vec<usize> {
    let n = a.len().max(b.len());
    (0..n)
        .map(|i| {
            let x = if i + a.len() >= n { a[i + a.len() - n] } else { 1 };
            let y = if i + b.len() >= n { b[i + b.len() - n] } else { 1 };
            assert!(x == y || x == 1 || y == 1, "{a:?} and {b:?} do not broadcast");
            if x == 1 {
                y
            } else {
                x
            }
        })
        .collect()
}

/// NumPy's `matmul` on the host.
fn host_matmul(a: &ArrayD<f64>, b: &ArrayD<f64>) -> ArrayD<f64> {
    let a2 = if a.ndim() == 1 {
        a.view().insert_axis(gpu_runtime::ndarray::Axis(0))
    } else {
        a.view()
    };
    let b2 = if b.ndim() == 1 {
        b.view().insert_axis(gpu_runtime::ndarray::Axis(1))
    } else {
        b.view()
    };
    let (na, nb) = (a2.ndim(), b2.ndim());
    let (m, k, n) = (a2.shape()[na - 2], a2.shape()[na - 1], b2.shape()[nb - 1]);
    let batch = broadcast(&a2.shape()[..na - 2], &b2.shape()[..nb - 2]);
    let with = |x: usize, y: usize| {
        let mut v = batch.clone();
        v.extend([x, y]);
        v
    };
    let ab = a2.broadcast(IxDyn(&with(m, k))).unwrap();
    let bb = b2.broadcast(IxDyn(&with(k, n))).unwrap();
    let mut out = ArrayD::<f64>::zeros(IxDyn(&with(m, n)));
    for (idx, o) in out.indexed_iter_mut() {
        let idx = idx.slice().to_vec();
        let nbt = batch.len();
        let (i, j) = (idx[nbt], idx[nbt + 1]);
        let mut ia = idx.clone();
        let mut ib = idx.clone();
        *o = (0..k)
            .map(|l| {
                ia[nbt + 1] = l;
                ia[nbt] = i;
                ib[nbt] = l;
                ib[nbt + 1] = j;
                ab[IxDyn(&ia)] * bb[IxDyn(&ib)]
            })
            .sum();
    }
    let mut shape = batch.clone();
    if a.ndim() > 1 {
        shape.push(m);
    }
    if b.ndim() > 1 {
        shape.push(n);
    }
    out.into_shape_with_order(IxDyn(&shape)).unwrap()
}

/// NumPy's `dot` on the host for `b` of at least 2 axes (or 0-d operands).
fn host_dot(a: &ArrayD<f64>, b: &ArrayD<f64>) -> ArrayD<f64> {
    if a.ndim() == 0 {
        return b.mapv(|x| x * a[IxDyn(&[])]);
    }
    if b.ndim() == 0 {
        return a.mapv(|x| x * b[IxDyn(&[])]);
    }
    let (na, nb) = (a.ndim(), b.ndim());
    let k = a.shape()[na - 1];
    let mut shape = a.shape()[..na - 1].to_vec();
    shape.extend_from_slice(&b.shape()[..nb - 2]);
    shape.push(b.shape()[nb - 1]);
    let mut out = ArrayD::<f64>::zeros(IxDyn(&shape));
    for (idx, o) in out.indexed_iter_mut() {
        let idx = idx.slice();
        let (ai, rest) = idx.split_at(na - 1);
        let (bi, nn) = rest.split_at(nb - 2);
        *o = (0..k)
            .map(|l| {
                let mut ia = ai.to_vec();
                ia.push(l);
                let mut ib = bi.to_vec();
                ib.push(l);
                ib.push(nn[0]);
                a[IxDyn(&ia)] * b[IxDyn(&ib)]
            })
            .sum();
    }
    out
}

fn check(got: &[f64], want: &ArrayD<f64>, what: &str) {
    let want: Vec<f64> = want.iter().copied().collect();
    assert_eq!(got.len(), want.len(), "{what}: lengths");
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        assert!(
            (g - w).abs() <= 1e-12 * (1.0 + w.abs()) * 64.0,
            "{what}: element {i}: {g} vs {w}"
        );
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn batch_axes_broadcast_beyond_three() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(460);
    let pairs: [(&[usize], &[usize]); 10] = [
        (&[2, 1, 3, 4], &[5, 4, 6]),
        (&[3, 1, 2, 4, 3], &[1, 2, 1, 3, 2]),
        (&[4], &[2, 3, 4, 5]),
        (&[2, 3, 4, 5], &[5]),
        (&[1, 1, 3, 4], &[2, 2, 4, 2]),
        (&[2, 2, 3, 4], &[4, 5]),
        (&[2, 0, 3, 4], &[4, 5]),
        (&[2, 2, 3, 0], &[1, 0, 4]),
        (&[3, 1, 1, 2], &[4, 2, 3]),
        (&[2, 3, 1, 2, 2], &[3, 2, 2]),
    ];
    for (sa, sb) in pairs {
        let (ha, hb) = (random(&mut rng, sa), random(&mut rng, sb));
        let (da, db) = (
            DeviceArray::from_ndarray(&ctx, &ha)?,
            DeviceArray::from_ndarray(&ctx, &hb)?,
        );
        let want = host_matmul(&ha, &hb);
        let what = format!("{sa:?} @ {sb:?}");
        let got = matmul(&da, &db)?;
        assert_eq!(got.shape(), want.shape(), "{what}");
        check(&got.to_vec()?, &want, &what);
        // Transposed operands (their batch axes reversed too): the host's the same views.
        if sa.len() > 2 && sb.len() > 2 {
            let (ta, tb) = (ha.t().to_owned(), hb.t().to_owned());
            let (ta, tb) = (ta.t(), tb.t());
            let (dta, dtb) = (
                DeviceArray::from_ndarray(&ctx, &ha.t().as_standard_layout().to_owned())?,
                DeviceArray::from_ndarray(&ctx, &hb.t().as_standard_layout().to_owned())?,
            );
            let got = matmul(&dta.t(), &dtb.t())?;
            check(
                &got.to_vec()?,
                &host_matmul(&ta.to_owned(), &tb.to_owned()),
                &format!("{what} through .t().t()"),
            );
        }
        // An out of Fortran order and one stepped along its first axis.
        let mut fortran =
            DeviceArray::from_ndarray(&ctx, &ArrayD::<f64>::from_elem(IxDyn(want.shape()).f(), 7.0))?;
        matmul_into(&da, &db, &mut fortran)?;
        check(&fortran.to_vec()?, &want, &format!("{what} into Fortran order"));
        if want.ndim() > 0 && !want.is_empty() {
            let mut big_shape = want.shape().to_vec();
            big_shape[0] *= 2;
            let mut big = DeviceArray::<f64, IxDyn>::zeros(&ctx, IxDyn(&big_shape))?;
            let info: Vec<gpu_runtime::ndarray::SliceInfoElem> = (0..want.ndim())
                .map(|k| gpu_runtime::ndarray::SliceInfoElem::Slice {
                    start: 0,
                    end: None,
                    step: if k == 0 { 2 } else { 1 },
                })
                .collect();
            let info = gpu_runtime::ndarray::SliceInfo::<_, IxDyn, IxDyn>::try_from(info).unwrap();
            let mut stepped = big.slice_mut(info)?;
            matmul_into(&da, &db, &mut stepped)?;
            check(&stepped.to_vec()?, &want, &format!("{what} into a stepped view"));
        }
    }
    // A broadcast operand (stride 0 on a batch axis) and a stream.
    let stream = Stream::new(&ctx)?;
    let hrow = random(&mut rng, &[3, 4]);
    let drow = DeviceArray::from_ndarray(&ctx, &hrow)?;
    let hb = random(&mut rng, &[2, 5, 4, 2]);
    let db = DeviceArray::from_ndarray(&ctx, &hb)?;
    let bcast = drow.broadcast_to(&[5, 3, 4])?;
    let got = gpuarray::on(&stream).matmul(&bcast, &db)?;
    stream.synchronize()?;
    let hbcast = hrow.broadcast(IxDyn(&[5, 3, 4])).unwrap().to_owned();
    check(
        &got.to_vec()?,
        &host_matmul(&hbcast, &hb),
        "broadcast (5, 3, 4) @ (2, 5, 4, 2)",
    );
    // Shapes that do not multiply.
    let x = DeviceArray::<f64, IxDyn>::zeros(&ctx, IxDyn(&[2, 3, 4, 5]))?;
    // Batches (2, 3) and (4,) do not broadcast ((2, 3) and (3,) would).
    let y = DeviceArray::<f64, IxDyn>::zeros(&ctx, IxDyn(&[4, 5, 2]))?;
    assert!(matches!(
        matmul(&x, &y),
        Err(Error::Gemm(GemmError::ShapesDoNotMultiply { .. }))
    ));
    let mut wrong = DeviceArray::<f64, IxDyn>::zeros(&ctx, IxDyn(&[2, 3, 4]))?;
    let z = DeviceArray::<f64, IxDyn>::zeros(&ctx, IxDyn(&[5, 2]))?;
    assert!(matches!(
        matmul_into(&x, &z, &mut wrong),
        Err(Error::Gemm(GemmError::OutputShape { .. }))
    ));
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn mixed_element_types_promote_as_numpy() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(461);
    let ha = random(&mut rng, &[2, 3, 4]);
    let hb = random(&mut rng, &[4, 5]);
    let a32 = DeviceArray::from_ndarray(&ctx, &ha.mapv(|x| x as f32))?;
    let b64 = DeviceArray::from_ndarray(&ctx, &hb)?;
    // f32 @ f64 is f64: the f32 values exactly, multiplied in f64.
    let got: DeviceArray<f64, IxDyn> = matmul_mixed(&a32, &b64)?;
    check(
        &got.to_vec()?,
        &host_matmul(&ha.mapv(|x| x as f32 as f64), &hb),
        "f32 @ f64",
    );
    // i32 @ f32 is f64.
    let hi = ha.mapv(|x| (x * 100.0).round());
    let ai = DeviceArray::from_ndarray(&ctx, &hi.mapv(|x| x as i32))?;
    let bt = hb.mapv(|x| x as f32 as f64);
    let b32c = DeviceArray::from_ndarray(&ctx, &bt.mapv(|x| x as f32))?;
    let got: DeviceArray<f64, IxDyn> = matmul_mixed(&ai, &b32c)?;
    check(&got.to_vec()?, &host_matmul(&hi, &bt), "i32 @ f32");
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn dot_of_n_d_and_0_d_arrays_is_numpy_s() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(462);
    let pairs: [(&[usize], &[usize]); 7] = [
        (&[2, 3, 4], &[5, 4, 6]),
        (&[4], &[2, 4, 3]),
        (&[2, 3, 4], &[4, 6]),
        (&[3, 4], &[2, 4, 1]),
        (&[2, 3, 0], &[5, 0, 2]),
        (&[], &[3, 4]),
        (&[2, 3, 4], &[]),
    ];
    for (sa, sb) in pairs {
        let (ha, hb) = (random(&mut rng, sa), random(&mut rng, sb));
        let (da, db) = (
            DeviceArray::from_ndarray(&ctx, &ha)?,
            DeviceArray::from_ndarray(&ctx, &hb)?,
        );
        let want = host_dot(&ha, &hb);
        let what = format!("dot {sa:?} {sb:?}");
        let got = dot(&da, &db)?;
        assert_eq!(got.shape(), want.shape(), "{what}");
        check(&got.to_vec()?, &want, &what);
    }
    // Views: a stepped `a` and a transposed `b` (whose moved axes do not merge: a copy).
    let ha = random(&mut rng, &[4, 3, 5]);
    let hb = random(&mut rng, &[6, 5, 2]);
    let (da, db) = (
        DeviceArray::from_ndarray(&ctx, &ha)?,
        DeviceArray::from_ndarray(&ctx, &hb)?,
    );
    let sa = da.slice(s![..;2, .., ..])?;
    let hsa = ha.slice(s![..;2, .., ..]).to_owned().into_dyn();
    let got = dot(&sa, &db)?;
    check(&got.to_vec()?, &host_dot(&hsa, &hb), "dot of a stepped a");
    let hbt = random(&mut rng, &[2, 5, 6]);
    let dbt = DeviceArray::from_ndarray(&ctx, &hbt)?;
    let got = dot(&da, &dbt.t())?;
    check(
        &got.to_vec()?,
        &host_dot(&ha, &hbt.t().to_owned()),
        "dot with a transposed b",
    );
    // A 0-d operand that is a view, and a non-contiguous other.
    let s0 = DeviceArray::from_ndarray(&ctx, &random(&mut rng, &[3]))?;
    let h0 = s0.to_vec()?;
    let scalar = s0.slice(s![1])?;
    let got = dot(&scalar, &da.t())?;
    check(
        &got.to_vec()?,
        &ha.t().mapv(|x| x * h0[1]).as_standard_layout().to_owned(),
        "0-d . transposed",
    );
    Ok(())
}
