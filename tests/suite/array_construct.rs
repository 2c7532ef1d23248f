//! Construction and shape functions of `gpuarray` on a GPU (`full`, `ones`, `arange`,
//! `linspace`, `concatenate`, `stack`, `squeeze`, `expand_dims`, `reshape_infer`, `ravel`,
//! `if_positive`, `vdot`, `take`, `put`, `multi_take`, `multi_put`), each compared with `ndarray` on the host on random data: random
//! shapes (empty ones included), 0-d arrays, and views that are not contiguous (transposes,
//! steps, reversed axes).

use gpu_runtime::gpuarray::{concatenate, if_positive, stack, DeviceArray, DeviceArrayView, IndexMode};
use gpu_runtime::ndarray::{self, Array, ArrayD, Axis, IxDyn, Order, SliceInfo, SliceInfoElem};
use gpu_runtime::{ArrayShapeError, Context, Error, Stream};
use gpu_suite::Rng;

/// A random shape of `ndim` axes of 0 to 6 elements (0 one time in eight).
fn shape(rng: &mut Rng, ndim: usize) -> Vec<usize> {
    (0..ndim)
        .map(|_| {
            if rng.next_u64().is_multiple_of(8) {
                0
            } else {
                1 + (rng.next_u64() % 6) as usize
            }
        })
        .collect()
}

fn random(rng: &mut Rng, shape: &[usize]) -> ArrayD<f32> {
    let n: usize = shape.iter().product();
    Array::from_shape_vec(IxDyn(shape), (0..n).map(|_| rng.f32() * 2.0 - 1.0).collect()).unwrap()
}

/// Axis 0 taken with `step` (2: every other element, -1: reversed), on the device and the host.
fn stepped<'a>(a: &'a DeviceArray<f32>, step: isize) -> DeviceArrayView<'a, f32> {
    let mut elems = vec![SliceInfoElem::Slice {
        start: 0,
        end: None,
        step,
    }];
    elems.extend((1..a.ndim()).map(|_| SliceInfoElem::Slice {
        start: 0,
        end: None,
        step: 1,
    }));
    a.slice(SliceInfo::<_, IxDyn, IxDyn>::try_from(elems).unwrap())
        .unwrap()
}

fn host_stepped(a: &ArrayD<f32>, step: isize) -> ArrayD<f32> {
    a.slice_axis(Axis(0), ndarray::Slice::new(0, None, step))
        .to_owned()
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn full_ones_and_their_like_forms_fill_every_element() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(11);
    for _ in 0..20 {
        let nd = (rng.next_u64() % 4) as usize;
        let sh = shape(&mut rng, nd);
        let v = rng.f32();
        let a = DeviceArray::<f32, IxDyn>::full(&ctx, IxDyn(&sh), v)?;
        assert_eq!(a.to_ndarray()?, ArrayD::from_elem(IxDyn(&sh), v));
        let o = DeviceArray::<i64, IxDyn>::ones(&ctx, IxDyn(&sh))?;
        assert_eq!(o.to_ndarray()?, ArrayD::from_elem(IxDyn(&sh), 1i64));
        let like = DeviceArray::<f32, IxDyn>::ones_like(&a)?;
        assert_eq!(like.to_ndarray()?, ArrayD::from_elem(IxDyn(&sh), 1.0f32));
        let like = DeviceArray::<f32, IxDyn>::full_like(&a.t(), -v)?;
        assert_eq!(like.shape(), a.t().shape());
        assert!(like.to_vec()?.iter().all(|&x| x == -v));
    }
    // Every element type, and infinity and NaN as values.
    let d = DeviceArray::<f64, _>::full(&ctx, 5, f64::INFINITY)?;
    assert!(d.to_vec()?.iter().all(|x| *x == f64::INFINITY));
    let d = DeviceArray::<f32, _>::full(&ctx, 5, f32::NAN)?;
    assert!(d.to_vec()?.iter().all(|x| x.is_nan()));
    assert_eq!(DeviceArray::<u8, _>::ones(&ctx, 3)?.to_vec()?, [1, 1, 1]);
    assert_eq!(DeviceArray::<i16, _>::full(&ctx, 2, -7)?.to_vec()?, [-7, -7]);
    let stream = Stream::new(&ctx)?;
    let a: DeviceArray<u32, _> = gpu_runtime::gpuarray::on(&stream).ones((2, 2))?;
    stream.synchronize()?;
    assert_eq!(a.to_vec()?, [1, 1, 1, 1]);
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn arange_and_linspace_match_numpy() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(12);
    for _ in 0..30 {
        let start = (rng.f64() * 20.0 - 10.0).round();
        let step = [1.0, 2.0, 0.5, -1.0, -3.0][(rng.next_u64() % 5) as usize];
        let stop = start + step * (rng.next_u64() % 50) as f64 + 0.25 * step;
        let a = DeviceArray::<f64, _>::arange(&ctx, start, stop, step)?.to_vec()?;
        let n = ((stop - start) / step).ceil().max(0.0) as usize;
        let want: Vec<f64> = (0..n).map(|i| start + i as f64 * step).collect();
        assert_eq!(a, want, "arange({start}, {stop}, {step})");
        let a = DeviceArray::<i32, _>::arange(&ctx, start, stop, step)?.to_vec()?;
        assert_eq!(a, want.iter().map(|&x| x as i32).collect::<Vec<_>>());

        let num = (rng.next_u64() % 40) as usize;
        for endpoint in [true, false] {
            let got = DeviceArray::<f64, _>::linspace(&ctx, start, stop, num, endpoint)?.to_vec()?;
            let want: Vec<f64> = if endpoint && num > 0 {
                Array::linspace(start, stop, num).to_vec()
            } else if num > 0 {
                Array::linspace(start, stop, num + 1).to_vec()[..num].to_vec()
            } else {
                vec![]
            };
            assert_eq!(got.len(), want.len());
            for (g, w) in got.iter().zip(&want) {
                assert!((g - w).abs() <= 1e-12 * w.abs().max(1.0), "{g} {w}");
            }
            if endpoint && num > 1 {
                assert_eq!(got[num - 1], stop, "the endpoint is stop itself");
            }
        }
    }
    let e = DeviceArray::<f32, _>::arange(&ctx, 0.0, 1.0, 0.0).unwrap_err();
    assert!(
        matches!(e, Error::Shape(ArrayShapeError::ArangeStep { .. })),
        "{e}"
    );
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn concatenate_and_stack_match_ndarray_on_views() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(13);
    for round in 0..40 {
        let ndim = 1 + (rng.next_u64() % 3) as usize;
        let axis = (rng.next_u64() % ndim as u64) as usize;
        let base = shape(&mut rng, ndim);
        let count = 1 + (rng.next_u64() % 3) as usize;
        let hosts: Vec<ArrayD<f32>> = (0..count)
            .map(|_| {
                let mut sh = base.clone();
                sh[axis] = (rng.next_u64() % 5) as usize;
                // Stepped views (step 2 or reversed) of axis 0 of an array twice as long.
                if axis != 0 {
                    sh[0] *= 2;
                }
                random(&mut rng, &sh)
            })
            .collect();
        let devs: Vec<DeviceArray<f32>> = hosts
            .iter()
            .map(|h| DeviceArray::from_ndarray(&ctx, h))
            .collect::<Result<_, _>>()?;
        let step = if round % 2 == 0 { 2 } else { -1 };
        let (views, host_views): (Vec<_>, Vec<_>) = if axis == 0 {
            (devs.iter().map(|d| d.view()).collect(), hosts.clone())
        } else {
            let hv: Vec<_> = hosts.iter().map(|h| host_stepped(h, step)).collect();
            let dv: Vec<_> = devs.iter().map(|d| stepped(d, step)).collect();
            // Reversing keeps the length; a step of 2 may leave lengths that differ: skip then.
            if hv
                .iter()
                .any(|h| (0..ndim).any(|k| k != axis && h.shape()[k] != hv[0].shape()[k]))
            {
                continue;
            }
            (dv, hv)
        };
        let refs: Vec<_> = views.iter().collect();
        let got = concatenate(&refs, axis)?.to_ndarray()?;
        let host_refs: Vec<_> = host_views.iter().map(|h| h.view()).collect();
        let want = ndarray::concatenate(Axis(axis), &host_refs).unwrap();
        assert_eq!(got, want, "concatenate along {axis}");

        // stack: arrays of one shape, along every new axis.
        let same: Vec<ArrayD<f32>> = (0..count).map(|_| random(&mut rng, &base)).collect();
        let same_dev: Vec<DeviceArray<f32>> = same
            .iter()
            .map(|h| DeviceArray::from_ndarray(&ctx, h))
            .collect::<Result<_, _>>()?;
        let same_t: Vec<_> = same_dev.iter().map(|d| d.t()).collect();
        for new_axis in 0..=ndim {
            let refs: Vec<_> = same_t.iter().collect();
            let got = stack(&refs, new_axis)?.to_ndarray()?;
            let ts: Vec<_> = same.iter().map(|h| h.t()).collect();
            let want = ndarray::stack(Axis(new_axis), &ts).unwrap();
            assert_eq!(got, want, "stack along {new_axis}");
        }
    }
    // 0-d arrays: concatenate refuses them, stack makes a vector.
    let z = DeviceArray::<f32, IxDyn>::full(&ctx, IxDyn(&[]), 3.0)?;
    let e = concatenate(&[&z, &z], 0).unwrap_err();
    assert!(
        matches!(e, Error::Shape(ArrayShapeError::NoSuchAxis { .. })),
        "{e}"
    );
    assert_eq!(stack(&[&z, &z], 0)?.to_vec()?, [3.0, 3.0]);
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn squeeze_expand_reshape_and_ravel_keep_the_elements() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(14);
    for _ in 0..30 {
        let nd = 1 + (rng.next_u64() % 3) as usize;
        let mut sh = shape(&mut rng, nd);
        sh.insert((rng.next_u64() % (sh.len() as u64 + 1)) as usize, 1);
        let h = random(&mut rng, &sh);
        let d = DeviceArray::from_ndarray(&ctx, &h)?;

        let want: Vec<usize> = sh.iter().copied().filter(|&n| n != 1).collect();
        let sq = d.view().squeeze()?;
        assert_eq!(sq.shape(), want);
        assert_eq!(sq.to_vec()?, h.iter().copied().collect::<Vec<_>>());

        for axis in 0..=sh.len() {
            let e = d.view().expand_dims(axis)?;
            assert_eq!(e.to_ndarray()?, h.clone().insert_axis(Axis(axis)));
        }

        let n = h.len();
        let r = d.view().reshape_infer(&[None], Order::C)?;
        assert_eq!(r.to_vec()?, h.iter().copied().collect::<Vec<_>>());
        if n > 0 {
            let r = d.view().reshape_infer(&[Some(1), None], Order::C)?;
            assert_eq!(r.shape(), [1, n]);
        }
        // Fortran order on a Fortran-contiguous array (the transpose).
        let t = d.t();
        let r = t.reshape_infer(&[None], Order::F)?;
        let hf: Vec<f32> = h
            .t()
            .to_owned()
            .into_shape_with_order(((n,), Order::F))
            .unwrap()
            .to_vec();
        assert_eq!(r.to_vec()?, hf);

        // ravel of a reversed view: C order of the view.
        let rev = stepped(&d, -1);
        assert_eq!(
            rev.ravel()?.to_vec()?,
            host_stepped(&h, -1).iter().copied().collect::<Vec<_>>()
        );
    }
    let d = DeviceArray::<f32, _>::zeros(&ctx, (2, 3))?;
    let e = d.view().squeeze_axis(0).unwrap_err();
    assert!(
        matches!(
            e,
            Error::Shape(ArrayShapeError::SqueezeLength { axis: 0, len: 2 })
        ),
        "{e}"
    );
    let e = d.view().reshape_infer(&[Some(4), None], Order::C).unwrap_err();
    assert!(
        matches!(e, Error::Shape(ArrayShapeError::ReshapeInfer { elements: 6, .. })),
        "{e}"
    );
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn if_positive_and_vdot_match_the_host() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(15);
    for _ in 0..20 {
        let nd = (rng.next_u64() % 4) as usize;
        let sh = shape(&mut rng, nd);
        let (c, a, b) = (
            random(&mut rng, &sh),
            random(&mut rng, &sh),
            random(&mut rng, &sh),
        );
        let mut c = c;
        // NaN is not positive.
        if let Some(x) = c.iter_mut().next() {
            *x = f32::NAN;
        }
        let (cd, ad, bd) = (
            DeviceArray::from_ndarray(&ctx, &c)?,
            DeviceArray::from_ndarray(&ctx, &a)?,
            DeviceArray::from_ndarray(&ctx, &b)?,
        );
        let got = if_positive(&cd, &ad.view(), &bd.view())?.to_ndarray()?;
        let want = ndarray::Zip::from(&c)
            .and(&a)
            .and(&b)
            .map_collect(|&c, &a, &b| if c > 0.0 { a } else { b });
        assert_eq!(got, want);

        let dot = ad.vdot(&bd.t())?;
        // Both read as flat vectors in C order of their own shapes.
        let want: f32 = a.iter().zip(b.t().iter()).map(|(x, y)| x * y).sum();
        let scale: f32 = a.iter().zip(b.t().iter()).map(|(x, y)| (x * y).abs()).sum();
        assert!((dot - want).abs() <= 1e-5 * (1.0 + scale), "{dot} {want}");
    }
    let a = DeviceArray::<f32, _>::zeros(&ctx, 3)?;
    let b = DeviceArray::<f32, _>::zeros(&ctx, 4)?;
    let e = a.vdot(&b).unwrap_err();
    assert!(
        matches!(
            e,
            Error::Shape(ArrayShapeError::ElementCounts {
                first: 3,
                second: 4,
                ..
            })
        ),
        "{e}"
    );
    Ok(())
}

/// NumPy's index of `ix` in an axis of `len` under `mode`, or `None` when out of range.
fn host_index(ix: i64, len: usize, mode: IndexMode) -> Option<usize> {
    let len = len as i64;
    if len == 0 {
        return None;
    }
    match mode {
        IndexMode::Raise => {
            let w = if ix < 0 { ix + len } else { ix };
            (0..len).contains(&w).then_some(w as usize)
        }
        IndexMode::Wrap => Some(ix.rem_euclid(len) as usize),
        IndexMode::Clip => Some(ix.clamp(0, len - 1) as usize),
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn take_and_put_match_numpy_in_every_mode() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(16);
    for round in 0..40 {
        let ndim = 1 + (rng.next_u64() % 3) as usize;
        let sh = shape(&mut rng, ndim);
        let h = random(&mut rng, &sh);
        let d = DeviceArray::from_ndarray(&ctx, &h)?;
        let axis = (rng.next_u64() % ndim as u64) as usize;
        let len = sh[axis];
        let mode = [IndexMode::Raise, IndexMode::Wrap, IndexMode::Clip][round % 3];
        let span = 2 * len as i64 + 3;
        let nd = (rng.next_u64() % 3) as usize;
        let idx_shape = shape(&mut rng, nd);
        let nidx: usize = idx_shape.iter().product();
        let idx: Vec<i64> = (0..nidx)
            .map(|_| {
                let r = (rng.next_u64() % span as u64) as i64 - len as i64 - 1;
                // In Raise mode, mostly indices in range (negative ones included).
                if mode == IndexMode::Raise && len > 0 && round % 6 != 0 {
                    r.clamp(-(len as i64), len as i64 - 1)
                } else {
                    r
                }
            })
            .collect();
        let idx_h = Array::from_shape_vec(IxDyn(&idx_shape), idx.clone()).unwrap();
        let idx_d = DeviceArray::from_ndarray(&ctx, &idx_h)?;
        // A transposed source: take reads any layout.
        let src = d.t();
        let hsrc = h.t().to_owned();
        let taxis = ndim - 1 - axis;
        let resolved: Option<Vec<usize>> = idx.iter().map(|&i| host_index(i, len, mode)).collect();
        let outer: usize = hsrc.shape()[..taxis].iter().product();
        let inner: usize = hsrc.shape()[taxis + 1..].iter().product();
        let got = src.take(&idx_d, taxis, mode);
        match resolved {
            Some(r) => {
                let got = got?;
                let mut want_shape = hsrc.shape()[..taxis].to_vec();
                want_shape.extend_from_slice(&idx_shape);
                want_shape.extend_from_slice(&hsrc.shape()[taxis + 1..]);
                assert_eq!(got.shape(), want_shape);
                let flat: Vec<f32> = hsrc.iter().copied().collect();
                let mut want = Vec::new();
                for o in 0..outer {
                    for &j in &r {
                        for k in 0..inner {
                            want.push(flat[(o * len + j) * inner + k]);
                        }
                    }
                }
                assert_eq!(got.to_vec()?, want, "take {mode:?} along {taxis}");
            }
            None if outer * nidx * inner == 0 => {
                // Nothing is read, so nothing is checked.
                assert!(got.is_ok());
            }
            None => {
                let e = got.unwrap_err();
                assert!(
                    matches!(e, Error::Shape(ArrayShapeError::IndexOutOfRange { len: l, .. }) if l == len),
                    "{e}"
                );
            }
        }

        // put into a copy of the flat array, values repeated; indices unique so that the
        // result does not depend on which duplicate wins.
        let n = h.len();
        let mut flat_idx: Vec<i64> = (0..n as i64).collect();
        flat_idx.retain(|_| rng.next_u64().is_multiple_of(2));
        let values: Vec<f32> = (0..1 + rng.next_u64() % 4).map(|_| rng.f32()).collect();
        let mut target = DeviceArray::from_ndarray(&ctx, &h)?;
        let fi = DeviceArray::from_ndarray(&ctx, &Array::from_vec(flat_idx.clone()))?;
        let vd = DeviceArray::from_ndarray(&ctx, &Array::from_vec(values.clone()))?;
        target.put(&fi, &vd, IndexMode::Raise)?;
        let mut want: Vec<f32> = h.iter().copied().collect();
        for (j, &i) in flat_idx.iter().enumerate() {
            want[i as usize] = values[j % values.len()];
        }
        assert_eq!(target.to_vec()?, want, "put");
    }
    // put out of range, and into a view that is not contiguous.
    let mut a = DeviceArray::<f32, _>::zeros(&ctx, 4)?;
    let bad = DeviceArray::from_ndarray(&ctx, &Array::from_vec(vec![1i64, 10]))?;
    let v = DeviceArray::<f32, _>::ones(&ctx, 2)?;
    let e = a.put(&bad, &v, IndexMode::Raise).unwrap_err();
    assert!(
        matches!(
            e,
            Error::Shape(ArrayShapeError::IndexOutOfRange {
                index: 10,
                len: 4,
                ..
            })
        ),
        "{e}"
    );
    a.put(&bad, &v, IndexMode::Wrap)?;
    assert_eq!(a.to_vec()?, [0.0, 1.0, 1.0, 0.0]);
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn multi_take_and_multi_put_gather_and_scatter_every_array() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(17);
    let n = 1000;
    let hosts: Vec<Vec<f32>> = (0..3).map(|_| rng.vec_f32(n)).collect();
    let devs: Vec<DeviceArray<f32, ndarray::Ix1>> = hosts
        .iter()
        .map(|h| DeviceArray::from_ndarray(&ctx, &Array::from_vec(h.clone())))
        .collect::<Result<_, _>>()?;
    let refs: Vec<_> = devs.iter().collect();
    let mut perm: Vec<i64> = (0..n as i64).collect();
    for i in (1..n).rev() {
        perm.swap(i, (rng.next_u64() % (i as u64 + 1)) as usize);
    }
    let idx = DeviceArray::from_ndarray(&ctx, &Array::from_vec(perm.clone()))?;
    let taken = gpu_runtime::gpuarray::multi_take(&refs, &idx)?;
    for (t, h) in taken.iter().zip(&hosts) {
        assert_eq!(
            t.to_vec()?,
            perm.iter().map(|&i| h[i as usize]).collect::<Vec<_>>()
        );
    }
    let put = gpu_runtime::gpuarray::multi_put(&refs, &idx, n + 5)?;
    for (p, h) in put.iter().zip(&hosts) {
        let mut want = vec![0.0f32; n + 5];
        for (j, &i) in perm.iter().enumerate() {
            want[i as usize] = h[j];
        }
        assert_eq!(p.to_vec()?, want);
    }
    Ok(())
}

/// `item` and `set_item` (NumPy's `a.item(i, j)` and `a[i, j] = v`): random indices, negative
/// ones counting from the end, on a C array and on a transposed, reversed view; a wrong
/// number of indices or one outside its axis is a typed error that writes nothing.
#[test]
#[ignore = "needs a CUDA GPU"]
fn item_and_set_item_index_like_numpy() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(41);
    let mut host = random(&mut rng, &[3, 4, 5]);
    let mut a = DeviceArray::from_ndarray(&ctx, &host)?;
    let pick = |rng: &mut Rng, len: usize| -> (isize, usize) {
        let i = (rng.next_u64() % len as u64) as usize;
        // Half of the indices counted from the end.
        if rng.next_u64().is_multiple_of(2) {
            (i as isize - len as isize, i)
        } else {
            (i as isize, i)
        }
    };
    for _ in 0..20 {
        let (i, hi) = pick(&mut rng, 3);
        let (j, hj) = pick(&mut rng, 4);
        let (k, hk) = pick(&mut rng, 5);
        assert_eq!(a.item(&[i, j, k])?, host[[hi, hj, hk]]);
        let v = rng.f32();
        a.set_item(&[i, j, k], v)?;
        host[[hi, hj, hk]] = v;
    }
    assert_eq!(a.to_ndarray()?, host);
    // Through a view: transposed, its (new) first axis reversed.
    let view = a.t();
    let view = view.slice(ndarray::s![..;-1, .., ..])?;
    let host_view = host.t();
    let host_view = host_view.slice(ndarray::s![..;-1, .., ..]);
    for _ in 0..20 {
        let (i, hi) = pick(&mut rng, 5);
        let (j, hj) = pick(&mut rng, 4);
        let (k, hk) = pick(&mut rng, 3);
        assert_eq!(view.item(&[i, j, k])?, host_view[[hi, hj, hk]]);
    }
    // 0-d: no index.
    let z = DeviceArray::from_ndarray(&ctx, &ndarray::arr0(2.5f64).into_dyn())?;
    assert_eq!(z.item(&[])?, 2.5);
    // Errors, and nothing written.
    let before = a.to_ndarray()?;
    assert!(matches!(
        a.item(&[0, 0]),
        Err(Error::Shape(ArrayShapeError::SliceAxes { taken: 2, axes: 3 }))
    ));
    assert!(matches!(
        a.set_item(&[0, 4, 0], 1.0),
        Err(Error::Shape(ArrayShapeError::SliceIndex {
            index: 4,
            axis: 1,
            len: 4
        }))
    ));
    assert!(matches!(
        a.set_item(&[-4, 0, 0], 1.0),
        Err(Error::Shape(ArrayShapeError::SliceIndex {
            index: -4,
            axis: 0,
            len: 3
        }))
    ));
    assert_eq!(a.to_ndarray()?, before);
    Ok(())
}

/// `set` (PyCUDA's and CuPy's `a.set(host)`): host arrays of every layout into device arrays
/// and views of every layout, straight into memory where the layouts agree and through a
/// kernel where they do not; another shape is a typed error that writes nothing.
#[test]
#[ignore = "needs a CUDA GPU"]
fn set_copies_a_host_array_of_any_layout_in_place() -> gpu_runtime::Result<()> {
    use gpu_runtime::ndarray::{s, ShapeBuilder};
    let ctx = Context::default()?;
    let mut rng = Rng::new(43);
    let c = random(&mut rng, &[5, 7]);
    let f = {
        let mut f = ArrayD::<f32>::zeros(IxDyn(&[5, 7]).f());
        f.assign(&random(&mut rng, &[5, 7]));
        f
    };
    // C into C (one copy into memory), Fortran into C and C into Fortran (a kernel), Fortran
    // into Fortran (memory again).
    let mut dc = DeviceArray::<f32>::zeros(&ctx, IxDyn(&[5, 7]))?;
    let mut df = DeviceArray::<f32>::zeros(&ctx, IxDyn(&[5, 7]).f())?;
    for host in [&c, &f] {
        dc.set(host)?;
        assert_eq!(dc.to_ndarray()?, *host);
        df.set(host)?;
        assert_eq!(df.to_ndarray()?, *host);
    }
    // A transposed host array into a transposed view (the same strides: memory), and into
    // every other row of a bigger array (a kernel), the rows between untouched.
    let t = random(&mut rng, &[7, 5]);
    let mut dt = DeviceArray::<f32>::zeros(&ctx, IxDyn(&[7, 5]))?;
    let mut dtv = dt.view_mut().reversed_axes();
    dtv.set(&t.t())?;
    assert_eq!(dt.to_ndarray()?, t);
    let mut big = DeviceArray::<f32>::zeros(&ctx, IxDyn(&[10, 7]))?;
    big.slice_mut(s![..;2, ..])?.set(&c)?;
    let got = big.to_ndarray()?;
    assert_eq!(got.slice(s![..;2, ..]).into_dyn(), c);
    assert!(got.slice(s![1..;2, ..]).iter().all(|&v| v == 0.0));
    // Another shape: an error, nothing written.
    let before = dc.to_ndarray()?;
    assert!(matches!(
        dc.set(&t),
        Err(Error::Shape(ArrayShapeError::HostShape { .. }))
    ));
    assert_eq!(dc.to_ndarray()?, before);
    // Empty.
    let mut e = DeviceArray::<f32>::zeros(&ctx, IxDyn(&[0, 3]))?;
    e.set(&ArrayD::<f32>::zeros(IxDyn(&[0, 3])))?;
    Ok(())
}
