//! `gpuarray::dot_into` (NumPy's `dot(a, b, out=c)`) on a GPU against a host `dot` in `f64`
//! on random data: vectors, matrices, N-d and 0-d operands, into C-order, Fortran-order,
//! stepped and reversed `out` views (the elements a view skips left alone), on a stream; an
//! `out` of the wrong shape (a typed error, nothing written) and shapes that do not multiply.
//!
//! `cargo test --features cublas --test cudarc -- --ignored array_dot_into::`

use gpu_runtime::gpuarray::{self as gpuarray, dot_into, DeviceArray};
use gpu_runtime::ndarray::{Array, ArrayD, Axis, Dimension, IxDyn, ShapeBuilder, SliceInfo, SliceInfoElem};
use gpu_runtime::{Context, Error, GemmError, Stream};
use gpu_suite::Rng;

fn random(rng: &mut Rng, shape: &[usize]) -> ArrayD<f64> {
    let n: usize = shape.iter().product();
    Array::from_shape_vec(IxDyn(shape), (0..n).map(|_| rng.f64()).collect()).unwrap()
}

/// NumPy's `dot` on the host: a 0-d operand multiplies; a 1-D `b` sums over `a`'s last axis;
/// else the sum over `a`'s last axis and `b`'s second to last,
/// `a.shape[:-1] + b.shape[:-2] + b.shape[-1:]`.
fn host_dot(a: &ArrayD<f64>, b: &ArrayD<f64>) -> ArrayD<f64> {
    if a.ndim() == 0 {
        return b.mapv(|x| x * a[IxDyn(&[])]);
    }
    if b.ndim() == 0 {
        return a.mapv(|x| x * b[IxDyn(&[])]);
    }
    if b.ndim() == 1 {
        // `b` as a column, the column axis dropped again.
        let column = b.view().insert_axis(Axis(1)).to_owned();
        let r = host_dot(a, &column);
        let last = r.ndim() - 1;
        return r.index_axis(Axis(last), 0).to_owned();
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

/// Along the first of `nd` axes every other element (`step` 2) or all reversed (`step` -1).
fn first_axis(nd: usize, step: isize) -> SliceInfo<Vec<SliceInfoElem>, IxDyn, IxDyn> {
    let info: Vec<SliceInfoElem> = (0..nd)
        .map(|k| SliceInfoElem::Slice {
            start: 0,
            end: None,
            step: if k == 0 { step } else { 1 },
        })
        .collect();
    SliceInfo::try_from(info).unwrap()
}

const PAIRS: [(&[usize], &[usize]); 10] = [
    (&[5, 7], &[7, 3]),
    (&[6], &[6]),
    (&[4, 6], &[6]),
    (&[6], &[6, 5]),
    (&[2, 3, 4], &[5, 4, 6]),
    (&[4], &[2, 4, 3]),
    (&[2, 3, 4], &[4]),
    (&[3, 4], &[2, 4, 1]),
    (&[], &[3, 4]),
    (&[2, 3, 4], &[]),
];

#[test]
#[ignore = "needs a CUDA GPU"]
fn dot_into_any_layout_matches_the_host() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(4601);
    for (sa, sb) in PAIRS {
        let (ha, hb) = (random(&mut rng, sa), random(&mut rng, sb));
        let (da, db) = (
            DeviceArray::from_ndarray(&ctx, &ha)?,
            DeviceArray::from_ndarray(&ctx, &hb)?,
        );
        let want = host_dot(&ha, &hb);
        let what = format!("dot_into {sa:?} {sb:?}");
        let mut c = DeviceArray::<f64, IxDyn>::zeros(&ctx, IxDyn(want.shape()))?;
        dot_into(&da, &db, &mut c)?;
        check(&c.to_vec()?, &want, &format!("{what} into C order"));
        let mut fortran =
            DeviceArray::from_ndarray(&ctx, &ArrayD::<f64>::from_elem(IxDyn(want.shape()).f(), 7.0))?;
        dot_into(&da, &db, &mut fortran)?;
        check(&fortran.to_vec()?, &want, &format!("{what} into Fortran order"));
        // The transposed `b` of the same product, into a transposed `out` (a view whose
        // strides are reversed).
        if want.ndim() == 2 && sa.len() == 2 && sb.len() == 2 {
            let hbt = hb.t().as_standard_layout().to_owned();
            let dbt = DeviceArray::from_ndarray(&ctx, &hbt)?;
            let mut ct = DeviceArray::<f64, IxDyn>::zeros(&ctx, IxDyn(&[want.shape()[1], want.shape()[0]]))?;
            let mut ctv = ct.view_mut().reversed_axes();
            dot_into(&da, &dbt.t(), &mut ctv)?;
            check(
                &ct.to_vec()?,
                &want.t().as_standard_layout().to_owned(),
                &format!("{what} with a transposed b into a transposed out"),
            );
        }
        if want.ndim() > 0 {
            for step in [2isize, -1] {
                let mut big_shape = want.shape().to_vec();
                if step == 2 {
                    big_shape[0] *= 2;
                }
                let mut big =
                    DeviceArray::from_ndarray(&ctx, &ArrayD::<f64>::from_elem(IxDyn(&big_shape), 7.0))?;
                let mut view = big.slice_mut(first_axis(want.ndim(), step))?;
                dot_into(&da, &db, &mut view)?;
                check(
                    &view.to_vec()?,
                    &want,
                    &format!("{what} into a view of step {step}"),
                );
                if step == 2 {
                    // The rows the view skips are untouched.
                    let skipped = big.slice(
                        SliceInfo::<_, IxDyn, IxDyn>::try_from(
                            (0..want.ndim())
                                .map(|k| SliceInfoElem::Slice {
                                    start: if k == 0 { 1 } else { 0 },
                                    end: None,
                                    step: if k == 0 { 2 } else { 1 },
                                })
                                .collect::<Vec<_>>(),
                        )
                        .unwrap(),
                    )?;
                    assert!(
                        skipped.to_vec()?.iter().all(|&x| x == 7.0),
                        "{what}: skipped rows written"
                    );
                }
            }
        }
        // On a stream.
        let stream = Stream::new(&ctx)?;
        let mut on = DeviceArray::<f64, IxDyn>::zeros(&ctx, IxDyn(want.shape()))?;
        gpuarray::on(&stream).dot_into(&da, &db, &mut on)?;
        stream.synchronize()?;
        check(&on.to_vec()?, &want, &format!("{what} on a stream"));
    }
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn dot_into_wrong_shapes_are_typed_errors() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(4602);
    for (sa, sb) in PAIRS {
        let (da, db) = (
            DeviceArray::from_ndarray(&ctx, &random(&mut rng, sa))?,
            DeviceArray::from_ndarray(&ctx, &random(&mut rng, sb))?,
        );
        let want = host_dot(&random(&mut rng, sa), &random(&mut rng, sb));
        // One more element along the last axis (a 0-d result: a 1-element vector, which NumPy
        // refuses too: `out` must have exactly the result's shape).
        let mut wrong_shape = want.shape().to_vec();
        match wrong_shape.last_mut() {
            Some(d) => *d += 1,
            None => wrong_shape.push(1),
        }
        let mut wrong = DeviceArray::from_ndarray(&ctx, &ArrayD::<f64>::from_elem(IxDyn(&wrong_shape), 7.0))?;
        assert!(
            matches!(
                dot_into(&da, &db, &mut wrong),
                Err(Error::Gemm(GemmError::OutputShape { .. }))
            ),
            "dot_into {sa:?} {sb:?} into {wrong_shape:?}"
        );
        assert!(
            wrong.to_vec()?.iter().all(|&x| x == 7.0),
            "dot_into {sa:?} {sb:?}: a refused out was written"
        );
    }
    // Sizes that do not multiply, N-d and 2-D.
    let x = DeviceArray::<f64, IxDyn>::zeros(&ctx, IxDyn(&[2, 3, 4]))?;
    let y = DeviceArray::<f64, IxDyn>::zeros(&ctx, IxDyn(&[2, 5, 3]))?;
    let mut c = DeviceArray::<f64, IxDyn>::zeros(&ctx, IxDyn(&[2, 3, 2, 3]))?;
    assert!(matches!(
        dot_into(&x, &y, &mut c),
        Err(Error::Gemm(GemmError::ShapesDoNotMultiply { .. }))
    ));
    let m = DeviceArray::<f64, IxDyn>::zeros(&ctx, IxDyn(&[3, 4]))?;
    let mut c2 = DeviceArray::<f64, IxDyn>::zeros(&ctx, IxDyn(&[3, 4]))?;
    assert!(matches!(
        dot_into(&m, &m, &mut c2),
        Err(Error::Gemm(GemmError::ShapesDoNotMultiply { .. }))
    ));
    Ok(())
}
