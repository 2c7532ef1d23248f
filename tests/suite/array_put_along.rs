//! `put_along_axis` on a GPU against the host, on random data: `arr[..., idx[..., j, ...],
//! ...] = values[..., j, ...]` along each axis (negative too), indices of three integer types
//! (negative ones counting from the end), indices broadcast along the other axes, values
//! broadcast to the walk, a transposed (strided) array written in place, NumPy's example by
//! value, and an index out of range refused with the array unchanged.

use gpu_runtime::gpuarray::{DeviceArray, IndexElement};
use gpu_runtime::ndarray::{arr2, Array, ArrayD, Dimension, IxDyn};
use gpu_runtime::{ArrayShapeError, Context, Error};
use gpu_suite::Rng;

/// Distinct positions along an axis of `len`, `k` of them, in random order.
fn distinct(rng: &mut Rng, len: usize, k: usize) -> Vec<i64> {
    let mut all: Vec<i64> = (0..len as i64).collect();
    for i in (1..all.len()).rev() {
        let j = (rng.next_u64() % (i as u64 + 1)) as usize;
        all.swap(i, j);
    }
    all.truncate(k);
    all
}

/// One axis of one index type: the host's `put_along_axis` against the device's.
fn check<I>(ctx: &Context, rng: &mut Rng, axis: isize, transposed: bool) -> gpu_runtime::Result<()>
where
    I: IndexElement + TryFrom<i64>,
    <I as TryFrom<i64>>::Error: std::fmt::Debug,
{
    let signed = I::try_from(-1).is_ok();
    let base: ArrayD<f32> = Array::from_shape_fn(IxDyn(&[4, 5, 6]), |_| rng.f32());
    // The array written: `base` itself, or the transpose of a (6, 5, 4) array holding it.
    let mut h = base.clone();
    let ax = axis.rem_euclid(3) as usize;
    let len = h.shape()[ax];
    let k = len.min(3);
    // Indices: `k` distinct positions along `axis` for each lane (so that no two writes meet),
    // axis 0 broadcast (length 1) unless it is `axis`.
    let mut ishape = h.shape().to_vec();
    ishape[ax] = k;
    if ax != 0 {
        ishape[0] = 1;
    }
    let lanes: usize = ishape.iter().product::<usize>() / k;
    let mut raw = vec![0i64; lanes * k];
    let iarr = Array::from_shape_vec(IxDyn(&ishape), (0..lanes * k).collect::<Vec<usize>>()).unwrap();
    let mut lane_of = std::collections::HashMap::new();
    for (ix, &pos) in iarr.indexed_iter() {
        let mut lane = ix.slice().to_vec();
        lane[ax] = 0;
        let picks = lane_of
            .entry(lane)
            .or_insert_with(|| distinct(rng, len, k))
            .clone();
        let v = picks[ix[ax]];
        raw[pos] = if signed && rng.next_u64().is_multiple_of(2) {
            v - len as i64
        } else {
            v
        };
    }
    let ih = Array::from_shape_vec(
        IxDyn(&ishape),
        raw.iter().map(|&v| I::try_from(v).unwrap()).collect(),
    )
    .unwrap();
    // Values: one per position along `axis`, broadcast along the others.
    let mut vshape = vec![1; 3];
    vshape[ax] = k;
    let vh: ArrayD<f32> = Array::from_shape_fn(IxDyn(&vshape), |_| 10.0 + rng.f32());
    // The host: every walk position written.
    let mut wshape = h.shape().to_vec();
    wshape[ax] = k;
    for w in ndarray_indices(&wshape) {
        let mut ii = w.clone();
        if ax != 0 {
            ii[0] = 0;
        }
        let mut vi = vec![0; 3];
        vi[ax] = w[ax];
        let mut dst = w.clone();
        dst[ax] = raw[iarr[IxDyn(&ii)]].rem_euclid(len as i64) as usize;
        h[IxDyn(&dst)] = vh[IxDyn(&vi)];
    }
    let id = DeviceArray::from_ndarray(ctx, &ih)?;
    let vd = DeviceArray::from_ndarray(ctx, &vh)?;
    let got = if transposed {
        let mut d = DeviceArray::from_ndarray(ctx, &base.t().as_standard_layout().to_owned())?;
        let mut t = d.view_mut().reversed_axes();
        t.put_along_axis(&id, &vd, axis)?;
        d.to_ndarray()?.t().to_owned()
    } else {
        let mut d = DeviceArray::from_ndarray(ctx, &base)?;
        d.put_along_axis(&id, &vd, axis)?;
        d.to_ndarray()?
    };
    assert_eq!(got.shape(), h.shape());
    for (ix, g) in got.indexed_iter() {
        assert_eq!(
            g.to_bits(),
            h[&ix].to_bits(),
            "{} axis {axis} transposed {transposed} at {ix:?}: {g} against {}",
            std::any::type_name::<I>(),
            h[&ix]
        );
    }
    Ok(())
}

/// Every index of `shape`, in C order.
fn ndarray_indices(shape: &[usize]) -> Vec<Vec<usize>> {
    let mut out = vec![vec![]];
    for &n in shape {
        out = out
            .into_iter()
            .flat_map(|p| {
                (0..n).map(move |i| {
                    let mut q = p.clone();
                    q.push(i);
                    q
                })
            })
            .collect();
    }
    out
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn put_along_axis_matches_the_host() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(8081);
    for axis in [0isize, 1, 2, -1] {
        for transposed in [false, true] {
            check::<i64>(&ctx, &mut rng, axis, transposed)?;
            check::<i32>(&ctx, &mut rng, axis, transposed)?;
            check::<u8>(&ctx, &mut rng, axis, transposed)?;
        }
    }
    // NumPy's example: the largest of each row set to 99.
    let mut a = DeviceArray::from_ndarray(&ctx, &arr2(&[[10, 30, 20], [60, 40, 50]]))?;
    let i = DeviceArray::from_ndarray(&ctx, &arr2(&[[1i64], [0]]))?;
    let v = DeviceArray::from_ndarray(&ctx, &arr2(&[[99]]))?;
    a.put_along_axis(&i, &v, 1)?;
    assert_eq!(a.to_vec()?, [10, 99, 20, 99, 40, 50]);
    // An index out of range: refused, nothing written; axes that differ; values that do not
    // broadcast.
    let before = a.to_vec()?;
    let bad = DeviceArray::from_ndarray(&ctx, &arr2(&[[0i64], [3]]))?;
    assert!(matches!(
        a.put_along_axis(&bad, &v, 1),
        Err(Error::Shape(ArrayShapeError::IndexOutOfRange {
            index: 3,
            len: 3,
            ..
        }))
    ));
    assert_eq!(a.to_vec()?, before);
    let flat = DeviceArray::from_ndarray(&ctx, &gpu_runtime::ndarray::arr1(&[0i64]))?;
    assert!(matches!(
        a.put_along_axis(&flat, &v, 1),
        Err(Error::Shape(ArrayShapeError::AxesDiffer { .. }))
    ));
    let v3 = DeviceArray::from_ndarray(&ctx, &arr2(&[[1, 2, 3]]))?;
    assert!(matches!(
        a.put_along_axis(&i, &v3, 1),
        Err(Error::Shape(ArrayShapeError::Broadcast { .. }))
    ));
    assert_eq!(a.to_vec()?, before);
    Ok(())
}
