//! NumPy's `choose(a, choices, mode)` on a GPU (CuPy's `TestChoose`): NumPy 2.4's numbers, then
//! random indices and choices of several element types and shapes that broadcast, in each
//! mode, against the definition on the host (`out[i] = choices[a[i]][i]`); `choose_from` a
//! list of arrays of different shapes (NumPy's examples), in each mode, against NumPy 2.4's
//! numbers, on a stream, and an empty list refused.

use gpu_runtime::gpuarray::{DeviceArray, Element, IndexMode};
use gpu_runtime::ndarray::{arr1, arr2, Array, ArrayD, IxDyn};
use gpu_runtime::types::Complex64;
use gpu_runtime::{ArrayShapeError, Context, Error, Stream};
use gpu_suite::Rng;

fn dev<T: Element>(ctx: &Context, shape: &[usize], v: Vec<T>) -> gpu_runtime::Result<DeviceArray<T, IxDyn>> {
    DeviceArray::from_ndarray(ctx, &ArrayD::from_shape_vec(IxDyn(shape), v).unwrap())
}

/// NumPy's `choose` on the host: `None` where `mode` is `Raise` and an index is outside `0..n`.
fn host_choose<T: Copy>(a: &ArrayD<i64>, c: &ArrayD<T>, mode: IndexMode) -> Option<ArrayD<T>> {
    let n = c.shape()[0] as i64;
    let inner = &c.shape()[1..];
    let nd = a.ndim().max(inner.len());
    let pad = |s: &[usize]| -> Vec<usize> {
        std::iter::repeat_n(1, nd - s.len())
            .chain(s.iter().copied())
            .collect()
    };
    let (sa, sc) = (pad(a.shape()), pad(inner));
    let shape: Vec<usize> = sa.iter().zip(&sc).map(|(&x, &y)| x.max(y)).collect();
    let a = a.to_shape(IxDyn(&sa)).unwrap();
    let cshape: Vec<usize> = [c.shape()[0]].into_iter().chain(sc.iter().copied()).collect();
    let c = c.to_shape(IxDyn(&cshape)).unwrap();
    let mut out = Vec::new();
    for idx in ndarray_indices(&shape) {
        let ai: Vec<usize> = idx
            .iter()
            .zip(&sa)
            .map(|(&i, &l)| if l == 1 { 0 } else { i })
            .collect();
        let k = a[IxDyn(&ai)];
        let k = match mode {
            IndexMode::Raise if !(0..n).contains(&k) => return None,
            IndexMode::Raise => k,
            IndexMode::Wrap => k.rem_euclid(n),
            IndexMode::Clip => k.clamp(0, n - 1),
        };
        let ci: Vec<usize> = [k as usize]
            .into_iter()
            .chain(idx.iter().zip(&sc).map(|(&i, &l)| if l == 1 { 0 } else { i }))
            .collect();
        out.push(c[IxDyn(&ci)]);
    }
    Some(ArrayD::from_shape_vec(IxDyn(&shape), out).unwrap())
}

/// Every index of `shape` in C order.
fn ndarray_indices(shape: &[usize]) -> Vec<Vec<usize>> {
    let total: usize = shape.iter().product();
    (0..total)
        .map(|mut f| {
            let mut idx = vec![0; shape.len()];
            for d in (0..shape.len()).rev() {
                idx[d] = f % shape[d];
                f /= shape[d];
            }
            idx
        })
        .collect()
}

fn check<T: Element + PartialEq + std::fmt::Debug>(
    ctx: &Context,
    rng: &mut Rng,
    stream: &Stream,
    draw: impl Fn(&mut Rng) -> T,
) -> gpu_runtime::Result<()> {
    let name = std::any::type_name::<T>();
    let cases: [(&[usize], &[usize]); 6] = [
        (&[4], &[3, 4]),
        (&[3, 3], &[2]),
        (&[2], &[3, 5, 2]),
        (&[5, 1], &[4, 1, 7]),
        (&[], &[3, 2, 2]),
        (&[2, 3, 4], &[5, 3, 1]),
    ];
    for (ashape, cshape) in cases {
        let n = cshape[0] as i64;
        let na: usize = ashape.iter().product();
        let nc: usize = cshape.iter().product();
        let c: Vec<T> = (0..nc).map(|_| draw(rng)).collect();
        let hc = ArrayD::from_shape_vec(IxDyn(cshape), c.clone()).unwrap();
        let dc = dev(ctx, cshape, c)?;
        for mode in [IndexMode::Raise, IndexMode::Wrap, IndexMode::Clip] {
            // In range for `Raise`; for the others a third of them outside, on either side.
            let a: Vec<i64> = (0..na)
                .map(|_| {
                    let k = (rng.next_u64() % n as u64) as i64;
                    match (mode, rng.next_u64() % 3) {
                        (IndexMode::Raise, _) | (_, 0) | (_, 1) => k,
                        _ if rng.next_u64().is_multiple_of(2) => k + n * (1 + (rng.next_u64() % 3) as i64),
                        _ => k - n * (1 + (rng.next_u64() % 3) as i64),
                    }
                })
                .collect();
            let ha = ArrayD::from_shape_vec(IxDyn(ashape), a.clone()).unwrap();
            let want = host_choose(&ha, &hc, mode).expect("in range");
            let what = format!("{name} a {ashape:?} choices {cshape:?} {mode:?}");
            let da = dev(ctx, ashape, a.clone())?;
            assert_eq!(da.choose(&dc, mode)?.to_ndarray()?, want, "{what}");
            let da32 = dev(ctx, ashape, a.iter().map(|&k| k as i32).collect())?;
            assert_eq!(
                da32.on(stream).choose(&dc, mode)?.to_ndarray()?,
                want,
                "{what} (i32, stream)"
            );
        }
    }
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn choose_matches_the_host_in_every_mode() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let (mut rng, stream) = (Rng::new(0xc4005e), Stream::new(&ctx)?);
    check(&ctx, &mut rng, &stream, |r| r.f64())?;
    check(&ctx, &mut rng, &stream, |r| r.f32())?;
    check(&ctx, &mut rng, &stream, |r| r.next_u64() as i16)?;
    check(&ctx, &mut rng, &stream, |r| r.next_u64() as u8)?;
    check(&ctx, &mut rng, &stream, |r| Complex64::new(r.f64(), r.f64()))
}

/// CuPy's `TestChoose` cases with NumPy 2.4's numbers, and its errors.
#[test]
#[ignore = "needs a CUDA GPU"]
fn choose_gives_numpys_numbers_and_errors() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let c = DeviceArray::from_ndarray(
        &ctx,
        &Array::from_iter(0..12i32).into_shape_with_order((3, 4)).unwrap(),
    )?;
    let a = DeviceArray::from_ndarray(&ctx, &arr1(&[0i64, 2, 1, 2]))?;
    assert_eq!(a.choose(&c, IndexMode::Raise)?.to_vec()?, [0, 9, 6, 11]);
    let b = DeviceArray::from_ndarray(&ctx, &arr2(&[[1i64, 0, 1], [0, 1, 0], [1, 0, 1]]))?;
    let pm = DeviceArray::from_ndarray(&ctx, &arr1(&[-10.0f32, 10.0]))?;
    let got = b.choose(&pm, IndexMode::Raise)?;
    assert_eq!(
        (got.shape(), got.to_vec()?),
        (
            &[3usize, 3][..],
            vec![10.0, -10.0, 10.0, -10.0, 10.0, -10.0, 10.0, -10.0, 10.0]
        )
    );
    let two = DeviceArray::from_ndarray(&ctx, &arr1(&[0i64, 1]))?;
    let c3 = DeviceArray::from_ndarray(
        &ctx,
        &Array::from_iter(0..30i64)
            .into_shape_with_order((3, 5, 2))
            .unwrap(),
    )?;
    assert_eq!(
        two.choose(&c3, IndexMode::Raise)?.to_vec()?,
        [0, 11, 2, 13, 4, 15, 6, 17, 8, 19]
    );
    let odd = DeviceArray::from_ndarray(&ctx, &arr1(&[0i64, 3, -1, 5]))?;
    assert_eq!(odd.choose(&c, IndexMode::Wrap)?.to_vec()?, [0, 1, 10, 11]);
    assert_eq!(odd.choose(&c, IndexMode::Clip)?.to_vec()?, [0, 9, 2, 11]);
    // Out of range (past the end, and negative, which NumPy refuses too), and shapes that do
    // not broadcast.
    for bad in [[0i64, 3, 1, 2], [0, -1, 1, 2]] {
        let bad = DeviceArray::from_ndarray(&ctx, &arr1(&bad))?;
        let r = bad.choose(&c, IndexMode::Raise);
        assert!(
            matches!(r, Err(Error::Shape(ArrayShapeError::IndexOutOfRange { .. }))),
            "{r:?}"
        );
    }
    let c4 = DeviceArray::from_ndarray(
        &ctx,
        &Array::from_iter(0..60i64)
            .into_shape_with_order((3, 5, 4))
            .unwrap(),
    )?;
    assert!(matches!(
        two.choose(&c4, IndexMode::Raise),
        Err(Error::Shape(ArrayShapeError::Broadcast { .. }))
    ));
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn choose_from_a_list_broadcasts_the_choices_as_numpy() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    // np.choose(a, [np.array([-10, 10, -10]), 5]): a row and a scalar.
    let a = DeviceArray::from_ndarray(&ctx, &arr2(&[[1i64, 0, 1], [0, 1, 0], [1, 0, 1]]))?;
    let row = dev(&ctx, &[3], vec![-10i32, 10, -10])?;
    let five = dev(&ctx, &[], vec![5i32])?;
    let got = a.choose_from(&[&row, &five], IndexMode::Raise)?;
    assert_eq!(got.shape(), [3, 3]);
    assert_eq!(got.to_vec()?, [5, 10, 5, -10, 5, -10, 5, 10, 5]);
    // NumPy's documentation example, in each mode.
    let choices: Vec<DeviceArray<f64, IxDyn>> = (0..4)
        .map(|r| dev(&ctx, &[4], (0..4).map(|c| f64::from(r * 10 + c)).collect()))
        .collect::<gpu_runtime::Result<_>>()?;
    let refs: Vec<&DeviceArray<f64, IxDyn>> = choices.iter().collect();
    let i = DeviceArray::from_ndarray(&ctx, &arr1(&[2i64, 3, 1, 0]))?;
    assert_eq!(
        i.choose_from(&refs, IndexMode::Raise)?.to_vec()?,
        [20.0, 31.0, 12.0, 3.0]
    );
    let i = DeviceArray::from_ndarray(&ctx, &arr1(&[2i64, 4, 1, 0]))?;
    let stream = Stream::new(&ctx)?;
    assert_eq!(
        i.on(&stream).choose_from(&refs, IndexMode::Clip)?.to_vec()?,
        [20.0, 31.0, 12.0, 3.0]
    );
    assert_eq!(
        i.choose_from(&refs, IndexMode::Wrap)?.to_vec()?,
        [20.0, 1.0, 12.0, 3.0]
    );
    assert!(matches!(
        i.choose_from(&refs, IndexMode::Raise),
        Err(Error::Shape(ArrayShapeError::IndexOutOfRange { .. }))
    ));
    let none: [&DeviceArray<f64, IxDyn>; 0] = [];
    assert!(matches!(
        i.choose_from(&none, IndexMode::Raise),
        Err(Error::Shape(ArrayShapeError::EmptyOperand { .. }))
    ));
    Ok(())
}
