//! `diagonal` (a view, writable through a writable array), `eye`/`identity`, `tril` and `triu`
//! on a GPU against the host, on random data of several element types and shapes: stacks of
//! matrices, wide and tall ones, empty ones, transposed views, every offset past the corners.

use gpu_runtime::gpuarray::{Bool, DeviceArray, Element};
use gpu_runtime::half::f16;
use gpu_runtime::ndarray::{Array, ArrayD, Dimension, Ix2, IxDyn};
use gpu_runtime::types::Complex64;
use gpu_runtime::{ArrayShapeError, Context, Error, Stream};
use gpu_suite::Rng;

fn random<T>(rng: &mut Rng, shape: &[usize], draw: impl Fn(&mut Rng) -> T) -> ArrayD<T> {
    let n = shape.iter().product();
    Array::from_shape_vec(IxDyn(shape), (0..n).map(|_| draw(rng)).collect()).unwrap()
}

/// NumPy's `diagonal(a, k, a1, a2)` on the host: the other axes in order, then the diagonal.
fn host_diagonal<T: Clone>(a: &ArrayD<T>, k: isize, a1: usize, a2: usize) -> ArrayD<T> {
    let shape = a.shape();
    let (r0, c0) = if k >= 0 {
        (0, k as usize)
    } else {
        ((-k) as usize, 0)
    };
    let len = shape[a1].saturating_sub(r0).min(shape[a2].saturating_sub(c0));
    let mut out_shape: Vec<usize> = (0..shape.len())
        .filter(|&x| x != a1 && x != a2)
        .map(|x| shape[x])
        .collect();
    out_shape.push(len);
    ArrayD::from_shape_fn(IxDyn(&out_shape), |i| {
        let i = i.slice();
        let mut src = Vec::with_capacity(shape.len());
        let mut rest = i[..i.len() - 1].iter();
        let d = i[i.len() - 1];
        for x in 0..shape.len() {
            src.push(if x == a1 {
                r0 + d
            } else if x == a2 {
                c0 + d
            } else {
                *rest.next().unwrap()
            });
        }
        a[IxDyn(&src)].clone()
    })
}

/// `tril` (`lower`) or `triu` of the last two axes on the host.
fn host_triangle<T: Element>(a: &ArrayD<T>, k: isize, lower: bool) -> ArrayD<T> {
    let nd = a.ndim();
    ArrayD::from_shape_fn(a.raw_dim(), |i| {
        let above = i[nd - 1] as isize - i[nd - 2] as isize;
        let keep = if lower { above <= k } else { above >= k };
        if keep {
            a[&i]
        } else {
            T::zero()
        }
    })
}

fn check<T: Element + PartialEq + std::fmt::Debug>(ctx: &Context, h: &ArrayD<T>) -> gpu_runtime::Result<()> {
    let d = DeviceArray::from_ndarray(ctx, h)?;
    let name = std::any::type_name::<T>();
    for (host, dev) in [(h.clone(), d.view()), (h.t().to_owned(), d.t())] {
        let shape = host.shape().to_vec();
        let nd = shape.len();
        for (a1, a2) in [(0, 1), (1, 0), (0, nd - 1), (nd - 2, nd - 1)] {
            if a1 == a2 {
                continue;
            }
            for k in -(shape[a1] as isize) - 1..=shape[a2] as isize + 1 {
                let want = host_diagonal(&host, k, a1, a2);
                let got = dev.view().diagonal(k, a1 as isize, a2 as isize - nd as isize)?;
                let what = format!("{name} {shape:?} diagonal({k}, {a1}, {a2})");
                assert_eq!(got.shape(), want.shape(), "{what}");
                assert_eq!(got.to_vec()?, want.iter().copied().collect::<Vec<_>>(), "{what}");
            }
        }
        for k in -(shape[nd - 2] as isize) - 1..=shape[nd - 1] as isize + 1 {
            for lower in [true, false] {
                let got = if lower { dev.tril(k)? } else { dev.triu(k)? };
                let want = host_triangle(&host, k, lower);
                let what = format!("{name} {shape:?} tril={lower} k={k}");
                assert_eq!(got.shape(), want.shape(), "{what}");
                assert_eq!(got.to_vec()?, want.iter().copied().collect::<Vec<_>>(), "{what}");
            }
        }
    }
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn diagonals_and_triangles_match_the_host() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(31337);
    for shape in [
        vec![4usize, 4],
        vec![3, 5],
        vec![6, 2],
        vec![2, 3, 4],
        vec![0, 3],
        vec![3, 1, 2],
    ] {
        check(&ctx, &random(&mut rng, &shape, |r| r.f64() - 0.5))?;
        check(&ctx, &random(&mut rng, &shape, |r| r.next_u64() as i32))?;
        check(&ctx, &random(&mut rng, &shape, |r| f16::from_f32(r.f32())))?;
        check(
            &ctx,
            &random(&mut rng, &shape, |r| Bool::from(r.next_u64().is_multiple_of(2))),
        )?;
        check(
            &ctx,
            &random(&mut rng, &shape, |r| Complex64::new(r.f64(), r.f64())),
        )?;
    }
    // A writable diagonal: NumPy's `fill_diagonal`, and `trace` as the diagonal's sum.
    let mut a = DeviceArray::<f64, _>::zeros(&ctx, (3, 4))?;
    a.view_mut().diagonal(0, 0, 1)?.fill(7.0)?;
    assert_eq!(
        a.to_vec()?,
        [7.0, 0.0, 0.0, 0.0, 0.0, 7.0, 0.0, 0.0, 0.0, 0.0, 7.0, 0.0]
    );
    assert_eq!(a.view().diagonal(0, 0, 1)?.sum()?, 21.0);
    // eye and identity, on a stream too.
    for (n, m) in [(3usize, 3usize), (2, 5), (5, 2), (0, 3), (1, 1)] {
        for k in -6isize..=6 {
            let e = DeviceArray::<i32, Ix2>::eye(&ctx, n, m, k)?;
            let want: Vec<i32> = (0..n * m)
                .map(|x| i32::from((x % m.max(1)) as isize - (x / m.max(1)) as isize == k))
                .collect();
            assert_eq!(
                (e.shape(), e.to_vec()?),
                (&[n, m][..], want),
                "eye({n}, {m}, {k})"
            );
        }
    }
    let stream = Stream::new(&ctx)?;
    let i = gpu_runtime::gpuarray::on(&stream).eye::<f32>(3, 3, 0)?;
    let t = i.on(&stream).triu(1)?;
    stream.synchronize()?;
    assert_eq!(i.to_vec()?, DeviceArray::<f32, Ix2>::identity(&ctx, 3)?.to_vec()?);
    assert!(t.to_vec()?.iter().all(|&x| x == 0.0));
    // The refusals.
    let v = DeviceArray::<f32, _>::zeros(&ctx, 4)?;
    for e in [v.view().diagonal(0, 0, 1).unwrap_err(), v.tril(0).unwrap_err()] {
        assert!(
            matches!(e, Error::Shape(ArrayShapeError::NoSuchAxis { .. })),
            "{e}"
        );
    }
    let e = a.view().diagonal(0, 1, -1).unwrap_err();
    assert!(
        matches!(e, Error::Shape(ArrayShapeError::RepeatedAxis { axis: 1, .. })),
        "{e}"
    );
    Ok(())
}
