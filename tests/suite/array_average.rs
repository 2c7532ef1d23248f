//! The weighted `average` on a GPU against the host: `f64`, `f32`, `i32` and `f16` data with
//! integer-valued weights, over all elements and along each axis (negative axes too), weights
//! of the array's shape and 1-d along the axis; NumPy's refusals.

use gpu_runtime::gpuarray::DeviceArray;
use gpu_runtime::half::f16;
use gpu_runtime::ndarray::{Array, ArrayD, Axis, IxDyn};
use gpu_runtime::{ArrayShapeError, Context, Error};
use gpu_suite::Rng;

fn random<T>(rng: &mut Rng, shape: &[usize], draw: impl Fn(&mut Rng) -> T) -> ArrayD<T> {
    let n = shape.iter().product();
    Array::from_shape_vec(IxDyn(shape), (0..n).map(|_| draw(rng)).collect()).unwrap()
}

/// `average_weighted` of `a` by `w` against the host in `f64`, over all and along each axis,
/// with weights of the array's shape and 1-d along the axis.
fn check_average<T: gpu_runtime::gpuarray::MeanType + Into<f64> + Copy>(
    ctx: &Context,
    a: &ArrayD<T>,
    w: &ArrayD<T>,
    tol: f64,
) -> gpu_runtime::Result<()>
where
    <T as gpu_runtime::gpuarray::MeanType>::Mean: Into<f64>,
{
    let (da, dw) = (
        DeviceArray::from_ndarray(ctx, a)?,
        DeviceArray::from_ndarray(ctx, w)?,
    );
    let close = |got: f64, want: f64, what: &str| {
        assert!(
            (got - want).abs() <= tol * want.abs().max(1.0),
            "{what}: {got} vs {want}"
        );
    };
    let name = std::any::type_name::<T>();
    let af: ArrayD<f64> = a.mapv(Into::into);
    let wf: ArrayD<f64> = w.mapv(Into::into);
    let want = (&af * &wf).sum() / wf.sum();
    close(
        da.average_weighted(&dw)?.into(),
        want,
        &format!("{name} {:?} all", a.shape()),
    );
    for k in 0..a.ndim() {
        let got = da
            .average_weighted_axis(&dw, k as isize - a.ndim() as isize)?
            .to_ndarray()?;
        let want = (&af * &wf).sum_axis(Axis(k)) / wf.sum_axis(Axis(k));
        assert_eq!(got.shape(), want.shape());
        for (g, w) in got.iter().zip(&want) {
            close((*g).into(), *w, &format!("{name} {:?} axis {k}", a.shape()));
        }
        // 1-d weights along the axis: the first lane's weights for every lane.
        let line: Vec<T> = (0..a.shape()[k])
            .map(|i| {
                let mut idx = vec![0usize; a.ndim()];
                idx[k] = i;
                w[IxDyn(&idx)]
            })
            .collect();
        let d1 = DeviceArray::from_ndarray(ctx, &gpu_runtime::ndarray::Array1::from(line.clone()))?;
        let got = da.average_weighted_axis(&d1, k as isize)?.to_ndarray()?;
        let l: Vec<f64> = line.iter().map(|&x| x.into()).collect();
        let lsum: f64 = l.iter().sum();
        let want = af.map_axis(Axis(k), |lane| {
            lane.iter().zip(&l).map(|(x, y)| x * y).sum::<f64>() / lsum
        });
        for (g, w) in got.iter().zip(&want) {
            close(
                (*g).into(),
                *w,
                &format!("{name} {:?} axis {k}, 1-d weights", a.shape()),
            );
        }
    }
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn weighted_averages_match_the_host() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(2718);
    for shape in [vec![50usize], vec![6, 7], vec![3, 4, 5]] {
        let weight = |r: &mut Rng| (r.next_u64() % 9 + 1) as f64;
        check_average(
            &ctx,
            &random(&mut rng, &shape, |r| r.f64() * 10.0 - 3.0),
            &random(&mut rng, &shape, weight),
            1e-12,
        )?;
        check_average(
            &ctx,
            &random(&mut rng, &shape, |r| r.f32()),
            &random(&mut rng, &shape, |r| weight(r) as f32),
            1e-6,
        )?;
        check_average(
            &ctx,
            &random(&mut rng, &shape, |r| (r.next_u64() % 100) as i32 - 50),
            &random(&mut rng, &shape, |r| weight(r) as i32),
            1e-12,
        )?;
        check_average(
            &ctx,
            &random(&mut rng, &shape, |r| f16::from_f32(r.f32())),
            &random(&mut rng, &shape, |r| f16::from_f64(weight(r))),
            1e-3,
        )?;
    }
    // NumPy's refusals: weights summing to zero, weights of another shape.
    let a = DeviceArray::from_ndarray(&ctx, &gpu_runtime::ndarray::arr2(&[[1.0f64, 2.0], [3.0, 4.0]]))?;
    let w = DeviceArray::from_ndarray(&ctx, &gpu_runtime::ndarray::arr2(&[[1.0f64, -1.0], [2.0, 3.0]]))?;
    let e = a.average_weighted_axis(&w, 1).unwrap_err();
    assert!(
        matches!(
            e,
            Error::Shape(ArrayShapeError::WeightsSumToZero { lanes: 1, .. })
        ),
        "{e}"
    );
    assert!((a.average_weighted(&w)? - 17.0 / 5.0).abs() < 1e-12);
    let e = a
        .average_weighted(&DeviceArray::<f64, _>::ones(&ctx, 3)?)
        .unwrap_err();
    assert!(
        matches!(e, Error::Shape(ArrayShapeError::ShapesDiffer { .. })),
        "{e}"
    );
    let e = a
        .average_weighted_axis(&DeviceArray::<f64, _>::ones(&ctx, 3)?, 0)
        .unwrap_err();
    assert!(
        matches!(e, Error::Shape(ArrayShapeError::ShapesDiffer { .. })),
        "{e}"
    );
    Ok(())
}
