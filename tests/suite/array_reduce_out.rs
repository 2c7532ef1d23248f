//! Reductions into an existing array (NumPy's `out=`): `sum_into`, `prod_into`, `mean_into`,
//! `max_into`, `min_into`, `argmax_into`, `argmin_into` and their `_axis_into` forms, on the
//! GPU against host references on random data: over every axis into 0-d and one-element
//! arrays (a view in the middle of a larger array too), along each axis with and without
//! `keepdims` into C-order, transposed and stepped `out` views, from C-order, transposed,
//! stepped and broadcast inputs, 0-d and empty ones; `out` of another type by `same_kind`
//! (the reduction computed in `out`'s type, as NumPy's); and the typed errors (shape, casting,
//! empty; their rules are also unit-tested without a GPU in `gpuarray::reduce::into`).

use gpu_runtime::gpuarray::{DeviceArray, ReduceAxis};
use gpu_runtime::ndarray::{s, Array, ArrayD, Axis, IxDyn, ShapeBuilder};
use gpu_runtime::{ArgumentError, ArrayShapeError, Context, Error, Stream};
use gpu_suite::Rng;

fn close(what: &str, got: f64, want: f64, tol: f64) {
    let ok = got == want || (got - want).abs() <= tol * (1.0 + want.abs());
    assert!(ok, "{what}: {got} vs {want}");
}

fn random_f32(rng: &mut Rng, shape: &[usize]) -> ArrayD<f32> {
    let n: usize = shape.iter().product();
    Array::from_shape_vec(IxDyn(shape), rng.vec_f32(n)).unwrap()
}

/// The host reductions of each lane along `axis` (every axis when `None`).
fn host_reduce(a: &ArrayD<f64>, axis: Option<usize>, f: &dyn Fn(&[f64]) -> f64) -> ArrayD<f64> {
    match axis {
        None => Array::from_elem(IxDyn(&[]), f(&a.iter().copied().collect::<Vec<_>>())),
        Some(k) => a.map_axis(Axis(k), |lane| f(&lane.iter().copied().collect::<Vec<_>>())),
    }
}

fn sum(v: &[f64]) -> f64 {
    v.iter().sum()
}
fn prod(v: &[f64]) -> f64 {
    v.iter().product()
}
fn mean(v: &[f64]) -> f64 {
    sum(v) / v.len() as f64
}
fn max(v: &[f64]) -> f64 {
    v.iter().copied().fold(f64::NEG_INFINITY, f64::max)
}
fn min(v: &[f64]) -> f64 {
    v.iter().copied().fold(f64::INFINITY, f64::min)
}
fn argmax(v: &[f64]) -> f64 {
    v.iter()
        .enumerate()
        .fold(
            (0, f64::NEG_INFINITY),
            |b, (i, &x)| if x > b.1 { (i, x) } else { b },
        )
        .0 as f64
}
fn argmin(v: &[f64]) -> f64 {
    v.iter()
        .enumerate()
        .fold((0, f64::INFINITY), |b, (i, &x)| if x < b.1 { (i, x) } else { b })
        .0 as f64
}

/// An `out` of `shape` in one of four layouts: C order, Fortran order (a transposed
/// layout), every other element of a larger array along its first axis, and reversed along it.
fn out_array<T: gpu_runtime::gpuarray::Element>(
    ctx: &Context,
    shape: &[usize],
    layout: u64,
    fill: T,
) -> gpu_runtime::Result<DeviceArray<T, IxDyn>> {
    let mut big = shape.to_vec();
    if let (2, Some(d)) = (layout, big.first_mut()) {
        *d *= 2;
    }
    let host = match layout {
        1 => Array::from_elem(IxDyn(&big).f(), fill),
        _ => Array::from_elem(IxDyn(&big), fill),
    };
    DeviceArray::from_ndarray(ctx, &host)
}

/// Runs `f` on the view of `out` of `layout` (see [`out_array`]) and reads it back in C order.
fn through_view(
    out: &mut DeviceArray<f64, IxDyn>,
    layout: u64,
    f: &mut dyn FnMut(
        &mut gpu_runtime::gpuarray::DeviceArrayViewMut<'_, f64, IxDyn>,
    ) -> gpu_runtime::Result<()>,
) -> gpu_runtime::Result<Vec<f64>> {
    let nd = out.ndim();
    if nd == 0 || layout < 2 {
        f(&mut out.view_mut())?;
        return out.to_vec();
    }
    let step: isize = if layout == 2 { 2 } else { -1 };
    let info: Vec<gpu_runtime::ndarray::SliceInfoElem> = (0..nd)
        .map(|k| gpu_runtime::ndarray::SliceInfoElem::Slice {
            start: 0,
            end: None,
            step: if k == 0 { step } else { 1 },
        })
        .collect();
    let info = gpu_runtime::ndarray::SliceInfo::<_, IxDyn, IxDyn>::try_from(info).unwrap();
    let mut v = out.slice_mut(info)?;
    f(&mut v)?;
    v.to_vec()
}

/// Every other element along the first axis, the others whole.
fn first_axis_step(
    nd: usize,
) -> gpu_runtime::ndarray::SliceInfo<Vec<gpu_runtime::ndarray::SliceInfoElem>, IxDyn, IxDyn> {
    let info: Vec<gpu_runtime::ndarray::SliceInfoElem> = (0..nd)
        .map(|k| gpu_runtime::ndarray::SliceInfoElem::Slice {
            start: 0,
            end: None,
            step: if k == 0 { 2 } else { 1 },
        })
        .collect();
    gpu_runtime::ndarray::SliceInfo::try_from(info).unwrap()
}

type Op = (&'static str, fn(&[f64]) -> f64, bool);
const OPS: [Op; 7] = [
    ("sum", sum, false),
    ("prod", prod, false),
    ("mean", mean, false),
    ("max", max, true),
    ("min", min, true),
    ("argmax", argmax, true),
    ("argmin", argmin, true),
];

/// Every reduction into `f64` (and the arg ones into `i64`) `out`s of every layout, from views
/// of random `f32` arrays.
#[test]
#[ignore = "needs a CUDA GPU"]
fn reductions_into_any_layout_match_the_host() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(46);
    let shapes: [&[usize]; 6] = [&[], &[0], &[7], &[0, 4], &[33, 65], &[3, 5, 300]];
    for shape in shapes {
        let host = random_f32(&mut rng, shape).mapv(|x| 1.0 + 0.01 * x);
        let d = DeviceArray::from_ndarray(&ctx, &host)?;
        for input in 0..3 {
            let (hv, dv) = match (input, shape.len()) {
                (_, 0) | (0, _) => (host.view(), d.view()),
                (1, _) => (host.t(), d.t()),
                (_, nd) => (host.slice(first_axis_step(nd)), d.slice(first_axis_step(nd))?),
            };
            let h64 = hv.mapv(|x| x as f64);
            let empty = hv.is_empty();
            for (name, f, needs) in OPS {
                let axes: Vec<Option<usize>> =
                    std::iter::once(None).chain((0..hv.ndim()).map(Some)).collect();
                for axis in axes {
                    for keepdims in [false, true] {
                        // No element where a lane has to be filled: NumPy's error.
                        let lanes_empty = match axis {
                            None => empty,
                            Some(k) => {
                                hv.shape()[k] == 0
                                    && hv.shape().iter().enumerate().all(|(j, &n)| j == k || n > 0)
                            }
                        };
                        let want = host_reduce(&h64, axis, &f);
                        let mut want_shape = want.shape().to_vec();
                        if keepdims {
                            want_shape = match axis {
                                None => vec![1; hv.ndim()],
                                Some(k) => {
                                    let mut s = hv.shape().to_vec();
                                    s[k] = 1;
                                    s
                                }
                            };
                        }
                        for layout in 0..4u64 {
                            let what = format!("{name} {shape:?} input {input} axis {axis:?} keepdims {keepdims} out {layout}");
                            let is_arg = name.starts_with("arg");
                            let got: gpu_runtime::Result<Vec<f64>> = if is_arg {
                                // C or Fortran order (the stepped and reversed views are
                                // the float forms' below).
                                let mut out = out_array::<i64>(&ctx, &want_shape, layout % 2, -7)?;
                                let r = match (name, axis) {
                                    ("argmax", None) => dv.argmax_into(&mut out),
                                    ("argmin", None) => dv.argmin_into(&mut out),
                                    ("argmax", Some(k)) => {
                                        dv.argmax_axis_into(ReduceAxis { axis: k, keepdims }, &mut out)
                                    }
                                    (_, Some(k)) => {
                                        dv.argmin_axis_into(ReduceAxis { axis: k, keepdims }, &mut out)
                                    }
                                    _ => unreachable!(),
                                };
                                r.and_then(|_| out.to_vec())
                                    .map(|v| v.iter().map(|&x| x as f64).collect())
                            } else {
                                let mut out = out_array::<f64>(&ctx, &want_shape, layout, -7.0)?;
                                let dvr = &dv;
                                through_view(&mut out, layout, &mut |o| match (name, axis) {
                                    ("sum", None) => dvr.sum_into(o),
                                    ("prod", None) => dvr.prod_into(o),
                                    ("mean", None) => dvr.mean_into(o),
                                    ("max", None) => dvr.max_into(o),
                                    ("min", None) => dvr.min_into(o),
                                    ("sum", Some(k)) => {
                                        dvr.sum_axis_into(ReduceAxis { axis: k, keepdims }, o)
                                    }
                                    ("prod", Some(k)) => {
                                        dvr.prod_axis_into(ReduceAxis { axis: k, keepdims }, o)
                                    }
                                    ("mean", Some(k)) => {
                                        dvr.mean_axis_into(ReduceAxis { axis: k, keepdims }, o)
                                    }
                                    ("max", Some(k)) => {
                                        dvr.max_axis_into(ReduceAxis { axis: k, keepdims }, o)
                                    }
                                    (_, Some(k)) => dvr.min_axis_into(ReduceAxis { axis: k, keepdims }, o),
                                    _ => unreachable!(),
                                })
                            };
                            if needs && lanes_empty {
                                assert!(
                                    matches!(got, Err(Error::Shape(ArrayShapeError::EmptyReduction { .. }))),
                                    "{what}: {got:?}"
                                );
                                continue;
                            }
                            let got = got?;
                            let want_c: Vec<f64> = want.iter().copied().collect();
                            assert_eq!(got.len(), want_c.len(), "{what}");
                            for (i, (g, w)) in got.iter().zip(&want_c).enumerate() {
                                if w.is_nan() {
                                    assert!(g.is_nan(), "{what} [{i}]: {g} vs NaN");
                                } else {
                                    close(&format!("{what} [{i}]"), *g, *w, 1e-5);
                                }
                            }
                        }
                    }
                }
            }
        }
    }
    Ok(())
}

/// `out` of another type: `i32` into `i64` (no wrap where `i32` would), `i32` into `f32`,
/// a broadcast and a stepped input, a 1-element `out` in the middle of a larger array that
/// keeps its other elements, and the `.on(&stream)` forms.
#[test]
#[ignore = "needs a CUDA GPU"]
fn out_types_views_and_streams() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let stream = Stream::new(&ctx)?;
    let mut rng = Rng::new(7);
    let h: Vec<i32> = (0..4096)
        .map(|_| (rng.next_u64() % 2_000_000_000) as i32)
        .collect();
    let want: i64 = h.iter().map(|&x| x as i64).sum();
    let d = DeviceArray::from_ndarray(&ctx, &Array::from(h.clone()))?;
    let mut o = DeviceArray::<i64, _>::zeros(&ctx, IxDyn(&[]))?;
    d.sum_into(&mut o)?;
    assert_eq!(o.to_vec()?, vec![want]);
    let mut o = DeviceArray::<f32, _>::zeros(&ctx, IxDyn(&[1]))?;
    d.on(&stream).max_into(&mut o)?;
    stream.synchronize()?;
    assert_eq!(o.to_vec()?, vec![*h.iter().max().unwrap() as f32]);
    // A stepped input and one element in the middle of a larger out.
    let stepped = d.slice(s![1..;3])?;
    let want: i64 = h[1..].iter().step_by(3).map(|&x| x as i64).sum();
    let mut big = DeviceArray::<i64, _>::zeros(&ctx, IxDyn(&[5]))?;
    {
        let mut mid = big.slice_mut(s![2..3])?;
        stepped.on(&stream).sum_into(&mut mid)?;
    }
    stream.synchronize()?;
    assert_eq!(big.to_vec()?, vec![0, 0, want, 0, 0]);
    // A broadcast input: every row the same, summed along the rows.
    let row: Vec<f32> = rng.vec_f32(37);
    let dr = DeviceArray::from_ndarray(&ctx, &Array::from(row.clone()))?;
    let b = dr.broadcast_to(&[11, 37])?;
    let mut cols = DeviceArray::<f64, _>::zeros(&ctx, IxDyn(&[37, 2]))?;
    {
        let mut col0 = cols.slice_mut(s![.., 0])?;
        b.sum_axis_into(0, &mut col0)?;
    }
    let got = cols.to_vec()?;
    for (j, x) in row.iter().enumerate() {
        close(
            &format!("broadcast column {j}"),
            got[2 * j],
            11.0 * *x as f64,
            1e-6,
        );
        assert_eq!(got[2 * j + 1], 0.0);
    }
    Ok(())
}

/// The typed errors, raised before anything is queued (the arrays need a context, so this
/// runs on the GPU machine with the others).
#[test]
#[ignore = "needs a CUDA GPU"]
fn misuse_is_a_typed_error() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let a = DeviceArray::<f64, _>::zeros(&ctx, IxDyn(&[3, 4]))?;
    let mut two = DeviceArray::<f64, _>::zeros(&ctx, IxDyn(&[2]))?;
    assert!(matches!(
        a.sum_into(&mut two),
        Err(Error::Shape(ArrayShapeError::OutShape { .. }))
    ));
    let mut wrong = DeviceArray::<f64, _>::zeros(&ctx, IxDyn(&[3]))?;
    assert!(matches!(
        a.sum_axis_into(0, &mut wrong),
        Err(Error::Shape(ArrayShapeError::OutShape { .. }))
    ));
    // keepdims wants (1, 4), not (4,).
    let mut flat = DeviceArray::<f64, _>::zeros(&ctx, IxDyn(&[4]))?;
    assert!(matches!(
        a.sum_axis_into(ReduceAxis::keepdims(0), &mut flat),
        Err(Error::Shape(ArrayShapeError::OutShape { .. }))
    ));
    assert!(matches!(
        a.sum_axis_into(2, &mut flat),
        Err(Error::Shape(ArrayShapeError::AxisOutOfRange { .. }))
    ));
    // f64 into i32 is no `same_kind` cast; the mean of integers is f64, not i64.
    let mut int = DeviceArray::<i32, _>::zeros(&ctx, IxDyn(&[]))?;
    assert!(matches!(
        a.sum_into(&mut int),
        Err(Error::Argument(ArgumentError::CastingRule { .. }))
    ));
    let ints = DeviceArray::<i32, _>::zeros(&ctx, IxDyn(&[5]))?;
    let mut long = DeviceArray::<i64, _>::zeros(&ctx, IxDyn(&[]))?;
    assert!(matches!(
        ints.mean_into(&mut long),
        Err(Error::Argument(ArgumentError::CastingRule { .. }))
    ));
    let empty = DeviceArray::<f64, _>::zeros(&ctx, IxDyn(&[0, 3]))?;
    let mut one = DeviceArray::<f64, _>::zeros(&ctx, IxDyn(&[]))?;
    assert!(matches!(
        empty.max_into(&mut one),
        Err(Error::Shape(ArrayShapeError::EmptyReduction { .. }))
    ));
    let mut lanes = DeviceArray::<i64, _>::zeros(&ctx, IxDyn(&[3]))?;
    assert!(matches!(
        empty.argmax_axis_into(0, &mut lanes),
        Err(Error::Shape(ArrayShapeError::EmptyReduction { .. }))
    ));
    Ok(())
}
