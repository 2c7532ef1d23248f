//! `flip`, `fliplr`, `flipud`, `rot90`, `roll`, `repeat`, `repeat_each` and `tile` on a GPU
//! against the host, on random data of every kind of element (floats, 16-bit floats, integers,
//! booleans, complex), over shapes with 0-d, empty, length-1 axes and transposed views: each
//! result's shape and every element against an index map written from NumPy's definitions.
//! Then CuPy's own `TestRoll`, `TestRot90` and `TestRepeat` cases by value, and the refusals.

use gpu_runtime::gpuarray::{self, Bool, DeviceArray, Element};
use gpu_runtime::half::{bf16, f16};
use gpu_runtime::ndarray::{arr2, Array, ArrayD, Axis, Dimension, IxDyn};
use gpu_runtime::types::{Complex64, Float3};
use gpu_runtime::{ArrayShapeError, Context, Error, Stream};
use gpu_suite::Rng;

fn random<T>(rng: &mut Rng, shape: &[usize], draw: impl Fn(&mut Rng) -> T) -> ArrayD<T> {
    let n = shape.iter().product();
    Array::from_shape_vec(IxDyn(shape), (0..n).map(|_| draw(rng)).collect()).unwrap()
}

/// The host array whose element at each index of `shape` is `a`'s at `source(index)`.
fn mapped<T: Clone>(a: &ArrayD<T>, shape: &[usize], source: impl Fn(&[usize]) -> Vec<usize>) -> ArrayD<T> {
    ArrayD::from_shape_fn(IxDyn(shape), |i| a[IxDyn(&source(i.slice()))].clone())
}

fn assert_same<
    T: Element + PartialEq + std::fmt::Debug,
    S: gpuarray::Storage<Elem = T>,
    D: gpu_runtime::ndarray::Dimension,
>(
    got: &gpuarray::DeviceArrayBase<S, D>,
    want: &ArrayD<T>,
    what: &str,
) {
    assert_eq!(got.shape(), want.shape(), "{what}");
    assert_eq!(
        got.to_vec().unwrap(),
        want.iter().cloned().collect::<Vec<_>>(),
        "{what}"
    );
}

/// Every operation of this file on `h` (and its transpose) against the host.
fn check_all<T: Element + PartialEq + std::fmt::Debug>(
    ctx: &Context,
    h: &ArrayD<T>,
) -> gpu_runtime::Result<()> {
    let d = DeviceArray::from_ndarray(ctx, h)?;
    check_view(h.clone(), d.view())?;
    check_view(h.t().to_owned(), d.t())
}

/// Every operation of this file on the device view `dev` against `host`, its elements.
fn check_view<T: Element + PartialEq + std::fmt::Debug>(
    host: ArrayD<T>,
    dev: gpuarray::DeviceArrayView<'_, T, IxDyn>,
) -> gpu_runtime::Result<()> {
    let name = std::any::type_name::<T>();
    let shape = host.shape().to_vec();
    let nd = shape.len();
    let what = |op: &str| format!("{name} {shape:?} {op}");
    // flip: every axis alone, all of them, and through fliplr/flipud.
    for axis in -(nd as isize)..nd as isize {
        let k = ((axis + nd as isize) % nd as isize) as usize;
        let want = mapped(&host, &shape, |i| {
            let mut j = i.to_vec();
            j[k] = shape[k] - 1 - i[k];
            j
        });
        assert_same(&dev.view().flip(axis)?, &want, &what(&format!("flip({axis})")));
    }
    let all = mapped(&host, &shape, |i| {
        i.iter().zip(&shape).map(|(&x, &n)| n - 1 - x).collect()
    });
    assert_same(&dev.view().flip_all(), &all, &what("flip_all"));
    if nd >= 2 {
        assert_same(
            &dev.view().flip_axes(&[0, -1])?,
            &{
                let mut w = host.clone();
                w.invert_axis(Axis(0));
                w.invert_axis(Axis(nd - 1));
                w
            },
            &what("flip_axes"),
        );
        let mut lr = host.clone();
        lr.invert_axis(Axis(1));
        assert_same(&dev.view().fliplr()?, &lr, &what("fliplr"));
        // rot90 by its definition: k quarter turns, each `out[.., i, .., j, ..] = m[.., j, .., n-1-i, ..]`
        // in the plane of (a, b), whatever the other axes.
        for (a, b) in [(0usize, 1usize), (1, 0), (0, nd - 1)] {
            if a == b {
                continue;
            }
            for k in 0..7isize {
                let got = dev.view().rot90(k - 3, (a as isize, b as isize))?;
                let turns = (k - 3).rem_euclid(4);
                let mut w = host.clone();
                for _ in 0..turns {
                    let s = w.shape().to_vec();
                    let mut t_shape = s.clone();
                    t_shape.swap(a, b);
                    w = mapped(&w, &t_shape, |i| {
                        let mut j = i.to_vec();
                        j[a] = i[b];
                        j[b] = s[b] - 1 - i[a];
                        j
                    });
                }
                assert_same(&got, &w, &what(&format!("rot90({}, ({a}, {b}))", k - 3)));
            }
        }
    }
    if nd >= 1 {
        let mut ud = host.clone();
        ud.invert_axis(Axis(0));
        assert_same(&dev.view().flipud()?, &ud, &what("flipud"));
    }
    // roll: each axis by shifts past the length both ways, all axes at once, and flat.
    for axis in 0..nd {
        for shift in [-7isize, -1, 0, 1, 2, 9] {
            let n = shape[axis] as isize;
            let want = mapped(&host, &shape, |i| {
                let mut j = i.to_vec();
                j[axis] = (i[axis] as isize - shift).rem_euclid(n.max(1)) as usize;
                j
            });
            let got = dev.roll(shift, Some(axis as isize))?;
            assert_same(&got, &want, &what(&format!("roll({shift}, {axis})")));
        }
    }
    let shifts: Vec<isize> = (0..nd).map(|k| 2 * k as isize - 1).collect();
    let axes: Vec<isize> = (0..nd as isize).collect();
    let want = mapped(&host, &shape, |i| {
        i.iter()
            .zip(&shape)
            .zip(&shifts)
            .map(|((&x, &n), &s)| (x as isize - s).rem_euclid(n as isize) as usize)
            .collect()
    });
    assert_same(&dev.roll_axes(&shifts, &axes)?, &want, &what("roll_axes"));
    let flat: Vec<T> = host.iter().cloned().collect();
    for shift in [-3isize, 0, 5] {
        let len = flat.len() as isize;
        let rolled: Vec<T> = (0..flat.len())
            .map(|i| flat[(i as isize - shift).rem_euclid(len.max(1)) as usize])
            .collect();
        let want = ArrayD::from_shape_vec(IxDyn(&shape), rolled).unwrap();
        assert_same(
            &dev.roll(shift, None)?,
            &want,
            &what(&format!("roll({shift}, None)")),
        );
    }
    // repeat: each axis, 0 to 3 times, and flat; counts per element.
    for axis in 0..nd {
        for r in 0..4usize {
            let mut out_shape = shape.clone();
            out_shape[axis] *= r;
            let want = mapped(&host, &out_shape, |i| {
                let mut j = i.to_vec();
                j[axis] = i[axis] / r;
                j
            });
            let got = dev.repeat(r, Some(axis as isize - nd as isize))?;
            assert_same(&got, &want, &what(&format!("repeat({r}, {axis})")));
        }
        let counts: Vec<usize> = (0..shape[axis]).map(|i| (i * 7 + 1) % 4).collect();
        let index: Vec<usize> = counts
            .iter()
            .enumerate()
            .flat_map(|(i, &c)| std::iter::repeat_n(i, c))
            .collect();
        let mut out_shape = shape.clone();
        out_shape[axis] = index.len();
        let want = mapped(&host, &out_shape, |i| {
            let mut j = i.to_vec();
            j[axis] = index[i[axis]];
            j
        });
        let got = dev.repeat_each(&counts, Some(axis as isize))?;
        assert_same(&got, &want, &what(&format!("repeat_each({counts:?}, {axis})")));
    }
    let twice: Vec<T> = flat.iter().flat_map(|x| [*x, *x]).collect();
    let want = ArrayD::from_shape_vec(IxDyn(&[twice.len()]), twice).unwrap();
    assert_same(&dev.repeat(2, None)?, &want, &what("repeat(2, None)"));
    // tile: reps shorter, as long as and longer than the shape.
    for reps in [
        vec![2usize],
        vec![1, 3],
        vec![2, 1, 2],
        vec![3, 2, 1, 2],
        vec![0, 2],
        vec![],
    ] {
        let m = nd.max(reps.len());
        let mut padded = vec![1usize; m - nd];
        padded.extend(&shape);
        let mut reps_p = vec![1usize; m - reps.len()];
        reps_p.extend(&reps);
        let out_shape: Vec<usize> = padded.iter().zip(&reps_p).map(|(d, r)| d * r).collect();
        let src = host.to_shape(IxDyn(&padded)).unwrap().to_owned();
        let want = mapped(&src, &out_shape, |i| {
            i.iter().zip(&padded).map(|(&x, &d)| x % d).collect()
        });
        assert_same(&dev.tile(&reps)?, &want, &what(&format!("tile({reps:?})")));
    }
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn rearranged_and_repeated_arrays_match_the_host() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(90210);
    for shape in [vec![4usize, 5, 3], vec![2, 1, 7], vec![3, 0, 2], vec![6], vec![]] {
        check_all(
            &ctx,
            &random(&mut rng, &shape, |r| (r.next_u64() % 2000) as f64 / 16.0 - 60.0),
        )?;
        check_all(&ctx, &random(&mut rng, &shape, |r| r.next_u64() as i32))?;
        check_all(&ctx, &random(&mut rng, &shape, |r| r.next_u64() as u8))?;
        check_all(
            &ctx,
            &random(&mut rng, &shape, |r| Bool::from(r.next_u64().is_multiple_of(3))),
        )?;
        check_all(
            &ctx,
            &random(&mut rng, &shape, |r| Complex64::new(r.f64(), -r.f64())),
        )?;
    }
    for shape in [vec![3usize, 4], vec![5, 2, 2]] {
        check_all(&ctx, &random(&mut rng, &shape, |r| f16::from_f32(r.f32() * 8.0)))?;
        check_all(&ctx, &random(&mut rng, &shape, |r| bf16::from_f32(r.f32() * 8.0)))?;
        check_all(&ctx, &random(&mut rng, &shape, |r| r.f32()))?;
        check_all(&ctx, &random(&mut rng, &shape, |r| r.next_u64() as i64))?;
    }
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn cupys_rearrange_cases_by_value() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let arange = |shape: &[usize]| -> gpu_runtime::Result<DeviceArray<i64>> {
        let n: usize = shape.iter().product();
        DeviceArray::<i64, _>::arange(&ctx, 0.0, n as f64, 1.0)?.reshape(IxDyn(shape))
    };
    // TestRoll's cases (numpy.roll's results).
    let x = arange(&[10])?;
    assert_eq!(x.roll(2, None)?.to_vec()?, [8, 9, 0, 1, 2, 3, 4, 5, 6, 7]);
    assert_eq!(x.roll(35, None)?.to_vec()?, [5, 6, 7, 8, 9, 0, 1, 2, 3, 4]);
    let x = arange(&[5, 2])?;
    assert_eq!(x.roll(1, None)?.to_vec()?, [9, 0, 1, 2, 3, 4, 5, 6, 7, 8]);
    assert_eq!(x.roll(-2, None)?.to_vec()?, [2, 3, 4, 5, 6, 7, 8, 9, 0, 1]);
    assert_eq!(x.roll(1, Some(0))?.to_vec()?, [8, 9, 0, 1, 2, 3, 4, 5, 6, 7]);
    assert_eq!(x.roll(1, Some(-1))?.to_vec()?, [1, 0, 3, 2, 5, 4, 7, 6, 9, 8]);
    assert_eq!(
        x.roll_axes(&[1], &[0, 1])?.to_vec()?,
        [9, 8, 1, 0, 3, 2, 5, 4, 7, 6]
    );
    assert_eq!(
        x.roll_axes(&[1], &[0, 0])?.to_vec()?,
        [6, 7, 8, 9, 0, 1, 2, 3, 4, 5]
    );
    assert_eq!(
        x.roll_axes(&[2, 1], &[0, 1])?.to_vec()?,
        [7, 6, 9, 8, 1, 0, 3, 2, 5, 4]
    );
    assert_eq!(
        x.roll_axes(&[2, 1, 3], &[0])?.to_vec()?,
        [8, 9, 0, 1, 2, 3, 4, 5, 6, 7]
    );
    assert_eq!(arange(&[])?.roll(5, None)?.to_vec()?, [0]);
    for (shifts, axes) in [(&[2isize, 2, 2][..], &[0isize, 1][..]), (&[1, 0], &[0, 1, 2])] {
        let e = arange(&[5, 2, 2])?.roll_axes(shifts, axes).unwrap_err();
        assert!(
            matches!(e, Error::Shape(ArrayShapeError::ElementCounts { .. })),
            "{e}"
        );
    }
    for axis in [2isize, -3] {
        let e = x.roll(1, Some(axis)).unwrap_err();
        assert!(
            matches!(e, Error::Shape(ArrayShapeError::NoSuchAxis { .. })),
            "{e}"
        );
    }
    // rot90 (NumPy's docstring) and its refusals.
    let m = DeviceArray::from_ndarray(&ctx, &arr2(&[[1i32, 2], [3, 4]]))?;
    assert_eq!(m.view().rot90(1, (0, 1))?.to_vec()?, [2, 4, 1, 3]);
    assert_eq!(m.view().rot90(2, (0, 1))?.to_vec()?, [4, 3, 2, 1]);
    assert_eq!(m.view().rot90(1, (1, 0))?.to_vec()?, [3, 1, 4, 2]);
    let e = m.view().rot90(1, (1, -1)).unwrap_err();
    assert!(
        matches!(e, Error::Shape(ArrayShapeError::RepeatedAxis { axis: 1, .. })),
        "{e}"
    );
    let e = arange(&[3])?.rot90(1, (0, 1)).unwrap_err();
    assert!(
        matches!(e, Error::Shape(ArrayShapeError::NoSuchAxis { .. })),
        "{e}"
    );
    let e = arange(&[3])?.fliplr().unwrap_err();
    assert!(
        matches!(e, Error::Shape(ArrayShapeError::NoSuchAxis { .. })),
        "{e}"
    );
    let e = arange(&[])?.flipud().unwrap_err();
    assert!(
        matches!(e, Error::Shape(ArrayShapeError::NoSuchAxis { .. })),
        "{e}"
    );
    // repeat (TestRepeat's cases) and tile.
    let x = DeviceArray::from_ndarray(&ctx, &arr2(&[[1i32, 2], [3, 4]]))?;
    assert_eq!(x.repeat(2, None)?.to_vec()?, [1, 1, 2, 2, 3, 3, 4, 4]);
    assert_eq!(x.repeat_each(&[1, 2], Some(0))?.to_vec()?, [1, 2, 3, 4, 3, 4]);
    assert_eq!(
        x.repeat_each(&[3, 4], Some(1))?.to_vec()?,
        [1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 4, 4, 4, 4]
    );
    assert_eq!(x.repeat_each(&[2], Some(1))?.to_vec()?, [1, 1, 2, 2, 3, 3, 4, 4]);
    assert_eq!(x.repeat_each(&[0, 0], Some(0))?.shape(), [0, 2]);
    let e = x.repeat_each(&[1, 2, 3], Some(0)).unwrap_err();
    assert!(
        matches!(
            e,
            Error::Shape(ArrayShapeError::ElementCounts {
                first: 2,
                second: 3,
                ..
            })
        ),
        "{e}"
    );
    let t = x.tile(&[2, 1])?;
    assert_eq!(
        (t.shape(), t.to_vec()?),
        (&[4usize, 2][..], vec![1, 2, 3, 4, 1, 2, 3, 4])
    );
    // Vector elements (no arithmetic, copied as they are).
    let v: Vec<Float3> = (0..6).map(|i| Float3::new(i as f32, -(i as f32), 0.5)).collect();
    let dv = DeviceArray::from_ndarray(
        &ctx,
        &gpu_runtime::ndarray::Array::from_shape_vec((2, 3), v.clone()).unwrap(),
    )?;
    let rep: Vec<Float3> = v.iter().flat_map(|&x| [x, x]).collect();
    assert_eq!(dv.repeat(2, Some(1))?.to_vec()?, rep);
    let tiled: Vec<Float3> = [&v[..3], &v[..3], &v[3..], &v[3..]].concat();
    assert_eq!(dv.tile(&[1, 2])?.to_vec()?, tiled);
    assert_eq!(dv.roll(1, Some(0))?.to_vec()?, [&v[3..], &v[..3]].concat());
    // On a stream: the same results, ordered after the stream's work.
    let stream = Stream::new(&ctx)?;
    let y = arange(&[5, 2])?;
    let r = y.on(&stream).roll(1, Some(0))?;
    let t = y.on(&stream).tile(&[2])?;
    let p = y.on(&stream).repeat_each(&[1, 0], Some(1))?;
    stream.synchronize()?;
    assert_eq!(r.to_vec()?, [8, 9, 0, 1, 2, 3, 4, 5, 6, 7]);
    assert_eq!(
        t.to_vec()?,
        [0, 1, 0, 1, 2, 3, 2, 3, 4, 5, 4, 5, 6, 7, 6, 7, 8, 9, 8, 9]
    );
    assert_eq!(p.to_vec()?, [0, 2, 4, 6, 8]);
    Ok(())
}

/// Views that start 1 to 3 elements into their buffer (so the widest word a kernel moves is
/// the element's, not 16 bytes), of element sizes 1 to 16 bytes: every operation against the
/// host, as `check_all` does for whole arrays.
#[test]
#[ignore = "needs a CUDA GPU"]
fn views_off_the_buffers_alignment_match_the_host() -> gpu_runtime::Result<()> {
    fn offset_views<T: Element + PartialEq + std::fmt::Debug>(
        ctx: &Context,
        rng: &mut Rng,
        draw: impl Fn(&mut Rng) -> T,
    ) -> gpu_runtime::Result<()> {
        for off in 0..4usize {
            let flat = random(rng, &[off + 60], &draw);
            let d = DeviceArray::from_ndarray(ctx, &flat)?;
            let host = flat
                .slice(gpu_runtime::ndarray::s![off..])
                .to_shape(IxDyn(&[6, 10]))
                .unwrap()
                .to_owned();
            let view = d
                .slice(gpu_runtime::ndarray::s![off..])?
                .reshape(IxDyn(&[6, 10]))?;
            check_view(host, view)?;
        }
        Ok(())
    }
    let ctx = Context::default()?;
    let mut rng = Rng::new(31337);
    offset_views(&ctx, &mut rng, |r| r.f32())?;
    offset_views(&ctx, &mut rng, |r| r.next_u64() as u8)?;
    offset_views(&ctx, &mut rng, |r| f16::from_f32(r.f32()))?;
    offset_views(&ctx, &mut rng, |r| r.f64())?;
    offset_views(&ctx, &mut rng, |r| Complex64::new(r.f64(), r.f64()))?;
    Ok(())
}

/// Arrays of more than 2^31 elements take the kernels with 64-bit indices (the 32-bit ones
/// divide by multiplication, exact only below 2^31): `roll` and `repeat`, each by assembling
/// 16-byte words of the result and, for a view off 16-byte alignment, word by word. Checked
/// element by element against the index maps (the arrays are 2 GiB of `u8`, the results up
/// to 4).
#[test]
#[ignore = "needs a CUDA GPU"]
fn arrays_past_two_to_the_31_elements_roll_and_repeat() -> gpu_runtime::Result<()> {
    fn check(what: &str, got: &[u8], want: impl Fn(usize) -> u8) {
        if let Some(i) = (0..got.len()).find(|&i| got[i] != want(i)) {
            panic!(
                "{what}: element {i} of {} is {}, not {}",
                got.len(),
                got[i],
                want(i)
            );
        }
    }
    let ctx = Context::default()?;
    let n = (1usize << 31) + 16;
    let value = |i: usize| (i.wrapping_mul(2654435761) >> 7) as u8;
    let host: Vec<u8> = (0..n).map(value).collect();
    let d = DeviceArray::from_ndarray(&ctx, &gpu_runtime::ndarray::Array1::from(host))?;
    let rolled = d.roll(-5, Some(0))?.to_vec()?;
    assert_eq!(rolled.len(), n);
    check("roll(-5)", &rolled, |i| value((i + 5) % n));
    drop(rolled);
    let twice = d.repeat(2, Some(0))?.to_vec()?;
    assert_eq!(twice.len(), 2 * n);
    check("repeat(2)", &twice, |i| value(i / 2));
    drop(twice);
    let view = d.slice(gpu_runtime::ndarray::s![3..])?;
    let m = n - 3;
    let rolled = view.roll(7, Some(0))?.to_vec()?;
    check("roll(7) of a view", &rolled, |i| value(3 + (i + m - 7) % m));
    drop(rolled);
    let twice = view.repeat(2, Some(0))?.to_vec()?;
    assert_eq!(twice.len(), 2 * m);
    check("repeat(2) of a view", &twice, |i| value(3 + i / 2));
    Ok(())
}
