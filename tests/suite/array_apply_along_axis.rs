//! `apply_along_axis` on a GPU, as CuPy's `test_shape_base.py` tries it along axes 0, 1 and
//! -1: a function of each lane's length, its sum on the device (0-d results: the axis goes)
//! in several element types, results of two axes inserted where the axis was (2-d and 3-d
//! arrays, against the host's NumPy rule), lanes that are strided views, an empty axis with
//! other axes (the function called on empty lanes) and an array with no lanes (refused:
//! NumPy's `ValueError`), results of differing shapes refused, and the stream form.

use gpu_runtime::gpuarray::{self, DeviceArray, DeviceArrayView};
use gpu_runtime::ndarray::{arr0, Array, Array1, Ix1, IxDyn};
use gpu_runtime::{ArrayShapeError, Context, Error, Stream};

/// `0..len` of `shape` as `f64`, in C order.
fn arange(ctx: &Context, shape: &[usize]) -> gpu_runtime::Result<DeviceArray<f64, IxDyn>> {
    let len = shape.iter().product::<usize>();
    let host = Array::from_shape_vec(IxDyn(shape), (0..len).map(|x| x as f64).collect()).unwrap();
    DeviceArray::from_ndarray(ctx, &host)
}

/// NumPy's `apply_along_axis` on the host, for a function from a lane to a flat result of
/// shape `r`.
fn host_apply(
    a: &Array<f64, IxDyn>,
    axis: usize,
    r: &[usize],
    f: impl Fn(&[f64]) -> Vec<f64>,
) -> Array<f64, IxDyn> {
    let moved = {
        let mut order: Vec<usize> = (0..a.ndim()).filter(|&x| x != axis).collect();
        order.push(axis);
        a.view().permuted_axes(order)
    };
    let outer: Vec<usize> = moved.shape()[..a.ndim() - 1].to_vec();
    let mut flat = Vec::new();
    for lane in moved.to_owned().as_standard_layout().rows() {
        flat.extend(f(&lane.to_vec()));
    }
    let stacked_shape: Vec<usize> = outer.iter().chain(r).copied().collect();
    let stacked = Array::from_shape_vec(IxDyn(&stacked_shape), flat).unwrap();
    let o = outer.len();
    let order: Vec<usize> = (0..axis).chain(o..o + r.len()).chain(axis..o).collect();
    stacked.permuted_axes(order).as_standard_layout().to_owned()
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn apply_along_axis_stacks_results_where_the_axis_was_as_numpy() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    for axis in [0isize, 1, -1] {
        // The lane's length, as a 0-d result: shape (10,) or (20,).
        let ones = DeviceArray::<f64, _>::ones(&ctx, (20, 10))?;
        let lens = gpuarray::apply_along_axis(&ones, axis, |x: DeviceArrayView<'_, f64, Ix1>| {
            DeviceArray::from_ndarray(&ctx, &arr0(x.len() as i64))
        })?;
        let want = if axis == 0 { vec![20i64; 10] } else { vec![10; 20] };
        assert_eq!(lens.to_vec()?, want, "len along {axis}");
        // Sums on the device of a 3 x 3 x 3 arange, in f64, f32 and i32.
        let a = arange(&ctx, &[3, 3, 3])?;
        let host = a.to_ndarray()?;
        let u = (axis.rem_euclid(3)) as usize;
        let want = host_apply(&host, u, &[], |lane| vec![lane.iter().sum()]);
        let sums =
            gpuarray::apply_along_axis(&a, axis, |x| DeviceArray::from_ndarray(&ctx, &arr0(x.sum()?)))?;
        assert_eq!(sums.shape(), [3, 3]);
        assert_eq!(sums.to_ndarray()?, want, "f64 sums along {axis}");
        let a32 = a.astype::<f32>()?;
        let sums =
            gpuarray::apply_along_axis(&a32, axis, |x| DeviceArray::from_ndarray(&ctx, &arr0(x.sum()?)))?;
        assert_eq!(sums.astype::<f64>()?.to_ndarray()?, want, "f32 sums along {axis}");
        let ai = a.astype::<i32>()?;
        let sums =
            gpuarray::apply_along_axis(&ai, axis, |x| DeviceArray::from_ndarray(&ctx, &arr0(x.sum()?)))?;
        assert_eq!(sums.astype::<f64>()?.to_ndarray()?, want, "i32 sums along {axis}");
        // CuPy's f1to2: a lane of n gives `x[::-1] * x[1:, None]`, (n - 1, n), inserted in
        // place of the axis; 2-d and 3-d arrays.
        let f1to2 = |x: &[f64]| -> Vec<f64> {
            let n = x.len();
            (1..n)
                .flat_map(|i| (0..n).map(move |j| (i, j)))
                .map(|(i, j)| x[n - 1 - j] * x[i])
                .collect()
        };
        for shape in [vec![6, 3], vec![6, 5, 3]] {
            let a = arange(&ctx, &shape)?;
            let host = a.to_ndarray()?;
            let u = axis.rem_euclid(shape.len() as isize) as usize;
            let n = shape[u];
            let want = host_apply(&host, u, &[n - 1, n], f1to2);
            let got = gpuarray::apply_along_axis(&a, axis, |x| {
                let lane = x.to_vec()?;
                DeviceArray::from_ndarray(&ctx, &Array::from_shape_vec((n - 1, n), f1to2(&lane)).unwrap())
            })?;
            assert_eq!(got.to_ndarray()?, want, "f1to2 of {shape:?} along {axis}");
        }
    }
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn apply_along_axis_calls_empty_lanes_refuses_no_lanes_and_differing_shapes() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    // Ten empty lanes: each call sees length 0 (CuPy's test_empty2).
    for axis in [0isize, 1] {
        let shape = if axis == 0 { [0, 10] } else { [10, 0] };
        let a = DeviceArray::<f64, _>::zeros(&ctx, shape)?;
        let got = gpuarray::apply_along_axis(&a, axis, |x| {
            assert_eq!(x.len(), 0);
            DeviceArray::from_ndarray(&ctx, &arr0(1.0f64))
        })?;
        assert_eq!(got.to_vec()?, vec![1.0; 10]);
    }
    // No lanes at all (CuPy's test_empty1): the function is never called.
    let empty = DeviceArray::<f64, _>::zeros(&ctx, (0, 0))?;
    for axis in [0isize, 1, -1] {
        let r =
            gpuarray::apply_along_axis(&empty, axis, |_x| -> gpu_runtime::Result<DeviceArray<f64, Ix1>> {
                panic!("called on no lane")
            });
        assert!(
            matches!(r, Err(Error::Shape(ArrayShapeError::NoLanes { .. }))),
            "{r:?}"
        );
    }
    // A lane whose result differs in shape from the first: named.
    let a = arange(&ctx, &[4, 3])?;
    let mut calls = 0usize;
    let r = gpuarray::apply_along_axis(&a, 1, |_x| {
        calls += 1;
        DeviceArray::from_ndarray(&ctx, &Array1::from(vec![0.0f64; if calls == 3 { 2 } else { 1 }]))
    });
    assert!(
        matches!(r, Err(Error::Shape(ArrayShapeError::LaneShapes { lane: 2, .. }))),
        "{r:?}"
    );
    // The function's own error stops the calls.
    let mut seen = 0;
    let r = gpuarray::apply_along_axis(&a, 0, |_x| -> gpu_runtime::Result<DeviceArray<f64, Ix1>> {
        seen += 1;
        Err(Error::KernelNotFound { name: "stop".into() })
    });
    assert!(
        matches!(r, Err(Error::KernelNotFound { .. })) && seen == 1,
        "{r:?}"
    );
    // On a stream: reversed lanes (strided views of a transposed array).
    let stream = Stream::new(&ctx)?;
    let t = a.t();
    let got = gpuarray::on(&stream).apply_along_axis(&t, -1, |x| {
        x.slice(gpu_runtime::ndarray::s![..;-1])?.to_contiguous()
    })?;
    let host = a.to_ndarray()?;
    let want = host_apply(&host.t().to_owned().into_dyn(), 1, &[4], |lane| {
        lane.iter().rev().copied().collect()
    });
    assert_eq!(got.to_ndarray()?, want);
    Ok(())
}
