//! `pad` on a GPU against the host, in every mode (`Constant`, `Edge`, `Reflect`, `Symmetric`,
//! `Wrap`), on random data of several element types over 0-d, 1-, 2- and 3-d shapes (one with
//! an empty axis) and transposed views, with one pair of widths for every axis and one per
//! axis, past the axis' length too. The host pads by walking each axis outward from its edges
//! (a bounce for the mirrors), not by the library's formulas. Then NumPy's documented
//! examples by value, a stream and the refusals.

use gpu_runtime::gpuarray::{Bool, DeviceArray, Element, PadMode};
use gpu_runtime::half::f16;
use gpu_runtime::ndarray::{arr2, Array, ArrayD, Axis, IxDyn, Slice};
use gpu_runtime::types::Complex64;
use gpu_runtime::{ArrayShapeError, Context, Error, Stream};
use gpu_suite::Rng;

fn random<T>(rng: &mut Rng, shape: &[usize], draw: &impl Fn(&mut Rng) -> T) -> ArrayD<T> {
    let n = shape.iter().product();
    Array::from_shape_vec(IxDyn(shape), (0..n).map(|_| draw(rng)).collect()).unwrap()
}

/// The source index of the element `d` places out from an edge (`d >= 1`) of an axis of `n`,
/// found by walking there: `start` is the edge element and `step` points into the axis.
fn walk(mode: &str, n: usize, start: usize, step: isize, d: usize) -> usize {
    let (mut p, mut dir) = (start as isize, step);
    match mode {
        "edge" => start,
        "wrap" => {
            // The element d places past one edge is d - 1 places in from the other.
            let from_other = if step > 0 { n - 1 } else { 0 } as isize;
            (from_other - (d as isize - 1) * step).rem_euclid(n as isize) as usize
        }
        "reflect" => {
            // Bounce off both ends without repeating them.
            for _ in 0..d {
                if n == 1 {
                    break;
                }
                if p + dir < 0 || p + dir >= n as isize {
                    dir = -dir;
                }
                p += dir;
            }
            p as usize
        }
        _ => {
            // symmetric: the first step out repeats the edge, and so does each bounce.
            for k in 0..d {
                if k == 0 {
                    continue;
                }
                if p + dir < 0 || p + dir >= n as isize {
                    dir = -dir;
                } else {
                    p += dir;
                }
            }
            p as usize
        }
    }
}

fn host_pad<T: Clone>(a: &ArrayD<T>, widths: &[(usize, usize)], mode: &str, value: &T) -> ArrayD<T> {
    if mode == "constant" {
        let shape: Vec<usize> = a
            .shape()
            .iter()
            .zip(widths)
            .map(|(&n, &(b, e))| n + b + e)
            .collect();
        let mut out = ArrayD::from_elem(IxDyn(&shape), value.clone());
        let mut middle = out.view_mut();
        for (k, (&n, &(b, _))) in a.shape().iter().zip(widths).enumerate() {
            middle.slice_axis_inplace(Axis(k), Slice::from(b..b + n));
        }
        middle.assign(a);
        return out;
    }
    let mut out = a.clone();
    for (k, &(b, e)) in widths.iter().enumerate() {
        let n = a.shape()[k];
        if b + e == 0 {
            continue;
        }
        let mut index: Vec<usize> = (1..=b).rev().map(|d| walk(mode, n, 0, 1, d)).collect();
        index.extend(0..n);
        index.extend((1..=e).map(|d| walk(mode, n, n - 1, -1, d)));
        out = out.select(Axis(k), &index);
    }
    out
}

fn modes<T: Copy>(value: T) -> [(&'static str, PadMode<T>); 5] {
    [
        ("constant", PadMode::Constant(value)),
        ("edge", PadMode::Edge),
        ("reflect", PadMode::Reflect),
        ("symmetric", PadMode::Symmetric),
        ("wrap", PadMode::Wrap),
    ]
}

fn check<T: Element + PartialEq + std::fmt::Debug>(
    ctx: &Context,
    rng: &mut Rng,
    draw: &impl Fn(&mut Rng) -> T,
) -> gpu_runtime::Result<()> {
    let name = std::any::type_name::<T>();
    let value = draw(rng);
    for shape in [vec![], vec![5], vec![1], vec![3, 4], vec![2, 3, 4]] {
        let h = random(rng, &shape, draw);
        let d = DeviceArray::from_ndarray(ctx, &h)?;
        for (host, dev) in [(h.clone(), d.view()), (h.t().to_owned(), d.t())] {
            let nd = host.ndim();
            let per_axis: Vec<(usize, usize)> = (0..nd).map(|k| (k % 3, (2 * k + 1) % 4)).collect();
            let long: Vec<(usize, usize)> = host.shape().iter().map(|&n| (2 * n + 1, n + 3)).collect();
            for widths in [vec![(0, 0)], vec![(2, 3)], vec![(1, 0)], per_axis, long] {
                for (mode_name, mode) in modes(value) {
                    let want = host_pad(
                        &host,
                        &if widths.len() == 1 {
                            vec![widths[0]; nd]
                        } else {
                            widths.clone()
                        },
                        mode_name,
                        &value,
                    );
                    let got = dev.pad(&widths, mode)?;
                    let what = format!("{name} {:?} pad {widths:?} {mode_name}", host.shape());
                    assert_eq!(got.shape(), want.shape(), "{what}");
                    assert_eq!(got.to_vec()?, want.iter().copied().collect::<Vec<_>>(), "{what}");
                }
            }
        }
    }
    // An empty axis: a constant border extends it; the other modes refuse it unless it is not
    // padded.
    let h = random(rng, &[2, 0, 3], draw);
    let d = DeviceArray::from_ndarray(ctx, &h)?;
    let got = d.pad(&[(1, 1)], PadMode::Constant(value))?;
    assert_eq!(got.shape(), [4, 2, 5]);
    assert_eq!(got.to_vec()?, vec![value; 40]);
    for (mode_name, mode) in modes(value).into_iter().skip(1) {
        assert!(
            matches!(
                d.pad(&[(1, 1)], mode),
                Err(Error::Shape(ArrayShapeError::PadEmptyAxis { axis: 1 }))
            ),
            "{name} {mode_name}"
        );
        assert_eq!(
            d.pad(&[(1, 0), (0, 0), (0, 2)], mode)?.shape(),
            [3, 0, 5],
            "{name} {mode_name}"
        );
    }
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn padded_arrays_match_the_host_in_every_mode() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(271828);
    check(&ctx, &mut rng, &|r: &mut Rng| r.f64() * 100.0 - 50.0)?;
    check(&ctx, &mut rng, &|r: &mut Rng| r.next_u64() as i32)?;
    check(&ctx, &mut rng, &|r: &mut Rng| r.next_u64() as u8)?;
    check(&ctx, &mut rng, &|r: &mut Rng| {
        Bool::from(r.next_u64().is_multiple_of(3))
    })?;
    check(&ctx, &mut rng, &|r: &mut Rng| f16::from_f32(r.f32() * 4.0))?;
    check(&ctx, &mut rng, &|r: &mut Rng| Complex64::new(r.f64(), -r.f64()))?;
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn numpys_pad_examples_by_value() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    // numpy.pad's docstring, a = [1, 2, 3, 4, 5].
    let a = DeviceArray::<i64, _>::arange(&ctx, 1.0, 6.0, 1.0)?;
    assert_eq!(
        a.pad(&[(2, 3)], PadMode::Constant(4))?.to_vec()?,
        [4, 4, 1, 2, 3, 4, 5, 4, 4, 4]
    );
    assert_eq!(
        a.pad(&[(2, 3)], PadMode::Edge)?.to_vec()?,
        [1, 1, 1, 2, 3, 4, 5, 5, 5, 5]
    );
    assert_eq!(
        a.pad(&[(2, 3)], PadMode::Reflect)?.to_vec()?,
        [3, 2, 1, 2, 3, 4, 5, 4, 3, 2]
    );
    assert_eq!(
        a.pad(&[(2, 3)], PadMode::Symmetric)?.to_vec()?,
        [2, 1, 1, 2, 3, 4, 5, 5, 4, 3]
    );
    assert_eq!(
        a.pad(&[(2, 3)], PadMode::Wrap)?.to_vec()?,
        [4, 5, 1, 2, 3, 4, 5, 1, 2, 3]
    );
    // Two axes, each its own widths: np.pad([[1, 2], [3, 4]], ((1, 0), (0, 2)), 'wrap').
    let m = DeviceArray::from_ndarray(&ctx, &arr2(&[[1i32, 2], [3, 4]]))?;
    let got = m.pad(&[(1, 0), (0, 2)], PadMode::Wrap)?;
    assert_eq!(got.shape(), [3, 4]);
    assert_eq!(got.to_vec()?, [3, 4, 3, 4, 1, 2, 1, 2, 3, 4, 3, 4]);
    // On a stream: queued there.
    let stream = Stream::new(&ctx)?;
    let s = a.on(&stream).pad(&[(1, 1)], PadMode::Constant(0))?;
    let r = a.on(&stream).pad(&[(1, 1)], PadMode::Reflect)?;
    stream.synchronize()?;
    assert_eq!(s.to_vec()?, [0, 1, 2, 3, 4, 5, 0]);
    assert_eq!(r.to_vec()?, [2, 1, 2, 3, 4, 5, 4]);
    // Widths of another count than the axes.
    assert!(matches!(
        m.pad(&[(1, 1), (1, 1), (1, 1)], PadMode::Edge),
        Err(Error::Shape(ArrayShapeError::ElementCounts {
            first: 2,
            second: 3,
            ..
        }))
    ));
    Ok(())
}

/// A host port of NumPy's `pad(a, widths, mode, reflect_type='odd')` for `'reflect'`
/// (`include_edge` false) and `'symmetric'`: `_set_reflect_both`'s rounds, axis by axis, over
/// the region filled so far, with `twice_less(edge, x)` as NumPy's `2 * edge - x` in `T`.
fn host_pad_odd<T: Copy + Default>(
    a: &ArrayD<T>,
    widths: &[(usize, usize)],
    include_edge: bool,
    twice_less: &impl Fn(T, T) -> T,
) -> ArrayD<T> {
    let mut cur = a.clone();
    for (k, &(before, after)) in widths.iter().enumerate() {
        let len = cur.shape()[k];
        let total = before + len + after;
        let mut shape = cur.shape().to_vec();
        shape[k] = total;
        let mut grown = ArrayD::<T>::from_elem(IxDyn(&shape), T::default());
        grown
            .slice_axis_mut(Axis(k), Slice::from(before..before + len))
            .assign(&cur);
        let lane_count = grown.len() / total;
        let mut lanes: Vec<Vec<T>> = grown.lanes(Axis(k)).into_iter().map(|l| l.to_vec()).collect();
        assert_eq!(lanes.len(), lane_count);
        for lane in &mut lanes {
            if len == 1 {
                let e = lane[before];
                lane.iter_mut().for_each(|x| *x = e);
                continue;
            }
            let (mut left, mut right) = (before as isize, after as isize);
            let n = len as isize;
            while left > 0 || right > 0 {
                let filled = total as isize - left - right;
                let (old, off) = if include_edge {
                    (filled / n * n, 1)
                } else {
                    ((filled - 1) / (n - 1) * (n - 1), 0)
                };
                if left > 0 {
                    let chunk = old.min(left);
                    let stop = left - off;
                    let edge = lane[left as usize];
                    let vals: Vec<T> = (0..chunk)
                        .map(|i| twice_less(edge, lane[(stop + chunk - i) as usize]))
                        .collect();
                    for (i, v) in vals.into_iter().enumerate() {
                        lane[(left - chunk) as usize + i] = v;
                    }
                    left -= chunk;
                }
                if right > 0 {
                    let chunk = old.min(right);
                    let start = total as isize - right + off - 2;
                    let edge = lane[(total as isize - right - 1) as usize];
                    let vals: Vec<T> = (0..chunk)
                        .map(|i| twice_less(edge, lane[(start - i) as usize]))
                        .collect();
                    for (i, v) in vals.into_iter().enumerate() {
                        lane[(total as isize - right) as usize + i] = v;
                    }
                    right -= chunk;
                }
            }
        }
        for (mut dst, src) in grown.lanes_mut(Axis(k)).into_iter().zip(lanes) {
            dst.iter_mut().zip(src).for_each(|(d, s)| *d = s);
        }
        cur = grown;
    }
    cur
}

fn check_odd<T: Element + Copy + Default + PartialEq + std::fmt::Debug>(
    ctx: &Context,
    rng: &mut Rng,
    stream: &Stream,
    draw: impl Fn(&mut Rng) -> T,
    twice_less: impl Fn(T, T) -> T,
) -> gpu_runtime::Result<()> {
    let name = std::any::type_name::<T>();
    for shape in [vec![7usize], vec![2, 3], vec![1, 4], vec![3, 2, 5]] {
        let h = random(rng, &shape, &draw);
        let d = DeviceArray::from_ndarray(ctx, &h)?;
        let widths_list: Vec<Vec<(usize, usize)>> = vec![
            vec![(1, 1)],
            vec![(1, 2)],
            vec![(0, 3)],
            shape
                .iter()
                .enumerate()
                .map(|(k, _)| (k + 2, 9 - 2 * k))
                .collect(),
            shape.iter().map(|_| (13, 1)).collect(),
        ];
        for widths in &widths_list {
            for (include_edge, mode) in [(false, PadMode::ReflectOdd), (true, PadMode::SymmetricOdd)] {
                let all: Vec<(usize, usize)> = if widths.len() == 1 {
                    vec![widths[0]; shape.len()]
                } else {
                    widths.clone()
                };
                let want = host_pad_odd(&h, &all, include_edge, &twice_less);
                let got = d.pad(widths, mode)?.to_ndarray()?;
                assert_eq!(got, want, "{name} {shape:?} {widths:?} {mode:?}");
                let on = d.on(stream).pad(widths, mode)?.to_ndarray()?;
                assert_eq!(on, want, "stream {name} {shape:?} {widths:?} {mode:?}");
            }
        }
    }
    Ok(())
}

/// NumPy's `reflect_type='odd'` (CuPy's `test_pad` cases with `'reflect'` and `'symmetric'`):
/// NumPy 2.4's numbers, then random arrays of each dtype, one to three axes, borders wider
/// than the axis on either side, against the port of NumPy's rounds, bit for bit.
#[test]
#[ignore = "needs a CUDA GPU"]
fn odd_reflections_match_numpys_rounds() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let (mut rng, stream) = (Rng::new(0x0dd), Stream::new(&ctx)?);
    let a = DeviceArray::from_ndarray(&ctx, &Array::from(vec![1i32, 2, 4]))?;
    let reflect = a.pad(&[(7, 5)], PadMode::ReflectOdd)?.to_vec()?;
    assert_eq!(reflect, [-10, -8, -6, -5, -4, -2, 0, 1, 2, 4, 6, 7, 8, 10, 12]);
    let symmetric = a.pad(&[(7, 5)], PadMode::SymmetricOdd)?.to_vec()?;
    assert_eq!(symmetric, [-5, -5, -4, -2, -2, 0, 1, 1, 2, 4, 4, 6, 7, 7, 8]);
    let six = DeviceArray::from_ndarray(&ctx, &arr2(&[[0i64, 1, 2], [3, 4, 5]]))?;
    let p = six.pad(&[(1, 2), (3, 4)], PadMode::ReflectOdd)?;
    // NumPy: np.pad(np.arange(6).reshape(2, 3), ((1, 2), (3, 4)), 'reflect', reflect_type='odd')[0]
    assert_eq!(p.shape(), &[5, 10]);
    assert_eq!(&p.to_vec()?[..10], [-6, -5, -4, -3, -2, -1, 0, 1, 2, 3]);
    check_odd(&ctx, &mut rng, &stream, |r| r.f64(), |e, x| 2.0 * e - x)?;
    check_odd(&ctx, &mut rng, &stream, |r| r.f32(), |e, x| 2.0 * e - x)?;
    check_odd(
        &ctx,
        &mut rng,
        &stream,
        |r| (r.next_u64() % 2001) as i32 - 1000,
        |e, x| e.wrapping_mul(2).wrapping_sub(x),
    )?;
    check_odd(
        &ctx,
        &mut rng,
        &stream,
        |r| r.next_u64() as u8,
        |e, x| e.wrapping_mul(2).wrapping_sub(x),
    )?;
    check_odd(
        &ctx,
        &mut rng,
        &stream,
        |r| r.next_u64() as i64,
        |e, x| e.wrapping_mul(2).wrapping_sub(x),
    )?;
    check_odd(
        &ctx,
        &mut rng,
        &stream,
        |r| Complex64::new(r.f64(), r.f64()),
        |e, x| e + e - x,
    )?;
    let b = DeviceArray::from_ndarray(&ctx, &Array::from(vec![Bool::from(true), Bool::from(false)]))?;
    assert!(matches!(
        b.pad(&[(1, 1)], PadMode::ReflectOdd),
        Err(Error::Argument(_))
    ));
    Ok(())
}
