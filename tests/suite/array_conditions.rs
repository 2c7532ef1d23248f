//! `select`, `compress` and `extract` on a GPU against the host, on random data: `select` with
//! broadcasting conditions, transposed choices and more pairs than one fused kernel takes (the
//! first true condition wins); `compress` along each axis (negative too) with short conditions
//! and of any element type; `extract` of a condition of another type and shape; the refusals.

use gpu_runtime::gpuarray::{self, Bool, DeviceArray};
use gpu_runtime::ndarray::{Array, Array1, ArrayD, Axis, IxDyn};
use gpu_runtime::{ArrayShapeError, Context, Error, Stream};
use gpu_suite::Rng;

fn random<T>(rng: &mut Rng, shape: &[usize], draw: impl Fn(&mut Rng) -> T) -> ArrayD<T> {
    let n = shape.iter().product();
    Array::from_shape_vec(IxDyn(shape), (0..n).map(|_| draw(rng)).collect()).unwrap()
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn select_takes_the_first_true_condition() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(8080);
    for pairs in [1usize, 2, 15, 16, 40] {
        let x = random(&mut rng, &[4, 5], |r| r.f64());
        let dx = DeviceArray::from_ndarray(&ctx, &x)?;
        // Condition k: x > k / pairs, on the transposed half of the time (then compared on
        // the transpose), broadcast from a row for every third.
        let mut conds = Vec::new();
        let mut host_conds = Vec::new();
        let mut choices = Vec::new();
        let mut host_choices = Vec::new();
        for k in 0..pairs {
            let t = k as f64 / pairs as f64;
            if k % 3 == 2 {
                let row = random(&mut rng, &[5], |r| Bool::from(r.next_u64().is_multiple_of(4)));
                host_conds.push(row.broadcast(IxDyn(&[4, 5])).unwrap().to_owned());
                conds.push(DeviceArray::from_ndarray(&ctx, &row)?);
            } else {
                host_conds.push(x.mapv(|v| Bool::from(v > t)));
                conds.push(dx.expr().gt(t).eval()?);
            }
            let c = random(&mut rng, &[5, 4], |r| r.f64() - 1.0);
            host_choices.push(c.t().to_owned());
            choices.push(DeviceArray::from_ndarray(&ctx, &c)?);
        }
        let cond_refs: Vec<_> = conds.iter().collect();
        let choice_views: Vec<_> = choices.iter().map(|c| c.t()).collect();
        let choice_refs: Vec<_> = choice_views.iter().collect();
        let got = gpuarray::select(&cond_refs, &choice_refs, -9.0)?;
        let want = ArrayD::from_shape_fn(IxDyn(&[4, 5]), |i| {
            (0..pairs)
                .find(|&k| bool::from(host_conds[k][&i]))
                .map_or(-9.0, |k| host_choices[k][&i])
        });
        assert_eq!(got.shape(), [4, 5]);
        assert_eq!(
            got.to_vec()?,
            want.iter().copied().collect::<Vec<_>>(),
            "{pairs} pairs"
        );
    }
    // Integers, on a stream; the refusals.
    let x = DeviceArray::<i32, _>::arange(&ctx, 0.0, 10.0, 1.0)?;
    let (lo, hi) = (x.expr().lt(3).eval()?, x.expr().gt(5).eval()?);
    let sq = (&x * &x).eval()?;
    let stream = Stream::new(&ctx)?;
    let got = gpuarray::on(&stream).select(&[&lo, &hi], &[&x.view().into_dyn(), &sq.view()], 0)?;
    stream.synchronize()?;
    assert_eq!(got.to_vec()?, [0, 1, 2, 0, 0, 0, 36, 49, 64, 81]);
    let e = gpuarray::select(&[&lo], &[&x.view().into_dyn(), &sq.view()], 0).unwrap_err();
    assert!(
        matches!(
            e,
            Error::Shape(ArrayShapeError::ElementCounts {
                first: 1,
                second: 2,
                ..
            })
        ),
        "{e}"
    );
    let none: [&DeviceArray<Bool>; 0] = [];
    let e = gpuarray::select(&none, &[&sq], 0).unwrap_err();
    assert!(
        matches!(e, Error::Shape(ArrayShapeError::ElementCounts { .. })),
        "{e}"
    );
    let no_choice: [&DeviceArray<i32>; 0] = [];
    let e = gpuarray::select(&none, &no_choice, 0).unwrap_err();
    assert!(matches!(e, Error::Shape(ArrayShapeError::NoArrays { .. })), "{e}");
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn compress_and_extract_match_the_host() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(4040);
    let a = random(&mut rng, &[3, 4, 5], |r| r.next_u64() as i32);
    let d = DeviceArray::from_ndarray(&ctx, &a)?;
    for k in 0..3usize {
        let len = a.shape()[k];
        for short in [0usize, 1] {
            let cond: Vec<u8> = (0..len - short).map(|_| (rng.next_u64() % 3) as u8).collect();
            let dc = DeviceArray::from_ndarray(&ctx, &Array1::from(cond.clone()))?;
            let keep: Vec<usize> = (0..cond.len()).filter(|&i| cond[i] != 0).collect();
            let want = a.select(Axis(k), &keep);
            let got = d.compress(&dc, Some(k as isize - 3))?;
            assert_eq!(got.shape(), want.shape(), "axis {k}");
            assert_eq!(
                got.to_vec()?,
                want.iter().copied().collect::<Vec<_>>(),
                "axis {k}"
            );
        }
    }
    // Flat, with a Bool condition over the first elements in C order.
    let cond: Vec<Bool> = (0..17).map(|i| Bool::from(i % 3 == 1)).collect();
    let dc = DeviceArray::from_ndarray(&ctx, &Array1::from(cond.clone()))?;
    let flat: Vec<i32> = a.iter().copied().collect();
    let want: Vec<i32> = (0..17)
        .filter(|&i| bool::from(cond[i]))
        .map(|i| flat[i])
        .collect();
    assert_eq!(d.compress(&dc, None)?.to_vec()?, want);
    // A true condition past the axis, a condition of two axes.
    let long = DeviceArray::from_ndarray(&ctx, &Array1::from(vec![0u8, 0, 0, 0, 1]))?;
    let e = d.compress(&long, Some(1)).unwrap_err();
    assert!(
        matches!(e, Error::Shape(ArrayShapeError::IndexOutOfRange { .. })),
        "{e}"
    );
    let e = d.compress(&d, Some(0)).unwrap_err();
    assert!(
        matches!(e, Error::Shape(ArrayShapeError::Dimension { .. })),
        "{e}"
    );
    // extract: a condition of floats with zeros, in another shape of as many elements.
    let c = random(&mut rng, &[60], |r| {
        if r.next_u64().is_multiple_of(2) {
            0.0
        } else {
            r.f64()
        }
    });
    let dc = DeviceArray::from_ndarray(&ctx, &c)?;
    let want: Vec<i32> = flat
        .iter()
        .zip(c.iter())
        .filter(|(_, &c)| c != 0.0)
        .map(|(&x, _)| x)
        .collect();
    assert_eq!(gpuarray::extract(&dc, &d)?.to_vec()?, want);
    let t = d.t();
    let flat_t: Vec<i32> = a.t().iter().copied().collect();
    let want: Vec<i32> = flat_t
        .iter()
        .zip(c.iter())
        .filter(|(_, &c)| c != 0.0)
        .map(|(&x, _)| x)
        .collect();
    assert_eq!(gpuarray::extract(&dc, &t)?.to_vec()?, want);
    let e = gpuarray::extract(&dc.slice(gpu_runtime::ndarray::s![..59])?, &d).unwrap_err();
    assert!(
        matches!(
            e,
            Error::Shape(ArrayShapeError::ElementCounts {
                first: 59,
                second: 60,
                ..
            })
        ),
        "{e}"
    );
    Ok(())
}
