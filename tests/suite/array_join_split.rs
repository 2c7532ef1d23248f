//! `split`, `array_split`, `split_at_indices`, `hsplit`/`vsplit`/`dsplit`, `atleast_1d`/`2d`/`3d`
//! and `hstack`/`vstack`/`dstack`/`column_stack` on a GPU against the host, on random data of
//! several element types over 0-d, empty, 1-, 2- and 3-d shapes and transposed views: every
//! piece and every joined array against host slices and `ndarray::concatenate` after NumPy's
//! rules. Then CuPy's `test_split.py`/`test_join.py` cases by value, a stream, the refusals;
//! `block` on NumPy's documentation examples (a block matrix, scalars, rows, deeper lists than
//! axes) against NumPy 2.4's values, a transposed block, and lists of mismatched depth or
//! empty refused.

use gpu_runtime::gpuarray::{
    self, column_stack, dstack, hstack, vstack, Bool, DeviceArray, DeviceArrayView, Element,
};
use gpu_runtime::half::f16;
use gpu_runtime::ndarray::{concatenate, s, Array, ArrayD, ArrayViewD, Axis, IxDyn, Slice};
use gpu_runtime::types::Complex64;
use gpu_runtime::{ArrayShapeError, Context, Error, Stream};
use gpu_suite::Rng;

fn random<T>(rng: &mut Rng, shape: &[usize], draw: &impl Fn(&mut Rng) -> T) -> ArrayD<T> {
    let n = shape.iter().product();
    Array::from_shape_vec(IxDyn(shape), (0..n).map(|_| draw(rng)).collect()).unwrap()
}

fn assert_same<T: Element + PartialEq + std::fmt::Debug, D: gpu_runtime::ndarray::Dimension>(
    got: &gpuarray::DeviceArrayBase<impl gpuarray::Storage<Elem = T>, D>,
    want: &ArrayViewD<'_, T>,
    what: &str,
) {
    assert_eq!(got.shape(), want.shape(), "{what}");
    assert_eq!(
        got.to_vec().unwrap(),
        want.iter().cloned().collect::<Vec<_>>(),
        "{what}"
    );
}

/// NumPy's `atleast_1d`/`2d`/`3d` on the host.
fn at_least<T>(a: ArrayViewD<'_, T>, axes: usize) -> ArrayViewD<'_, T> {
    match (axes, a.ndim()) {
        (_, n) if n >= axes => a,
        (1, _) => a.insert_axis(Axis(0)),
        (2, 0) => a.insert_axis(Axis(0)).insert_axis(Axis(0)),
        (2, _) => a.insert_axis(Axis(0)),
        (3, 0) => a.insert_axis(Axis(0)).insert_axis(Axis(0)).insert_axis(Axis(0)),
        (3, 1) => a.insert_axis(Axis(0)).insert_axis(Axis(2)),
        _ => a.insert_axis(Axis(2)),
    }
}

/// The host's pieces of `a` between `bounds` along `axis`.
fn host_pieces<'a, T>(a: &'a ArrayD<T>, axis: usize, bounds: &[(usize, usize)]) -> Vec<ArrayViewD<'a, T>> {
    bounds
        .iter()
        .map(|&(lo, hi)| a.slice_axis(Axis(axis), Slice::from(lo..hi)))
        .collect()
}

fn check_pieces<T: Element + PartialEq + std::fmt::Debug + Clone>(
    got: &[DeviceArrayView<'_, T, IxDyn>],
    want: &[ArrayViewD<'_, T>],
    what: &str,
) {
    assert_eq!(got.len(), want.len(), "{what}: number of pieces");
    for (k, (g, w)) in got.iter().zip(want).enumerate() {
        assert_same(g, w, &format!("{what} piece {k}"));
    }
}

/// Every split of `h` (and its transpose) against host slices.
fn check_splits<T: Element + PartialEq + std::fmt::Debug + Clone>(
    ctx: &Context,
    h: &ArrayD<T>,
) -> gpu_runtime::Result<()> {
    let d = DeviceArray::from_ndarray(ctx, h)?;
    let name = std::any::type_name::<T>();
    for (host, dev) in [(h.clone(), d.view()), (h.t().to_owned(), d.t())] {
        let shape = host.shape().to_vec();
        let nd = shape.len();
        for k in 0..nd {
            let len = shape[k];
            let axis = if k % 2 == 0 {
                k as isize
            } else {
                k as isize - nd as isize
            };
            for sections in 1..=len + 2 {
                let what = format!("{name} {shape:?} axis {axis} into {sections}");
                // array_split: the first len % sections pieces one longer.
                let (each, extra) = (len / sections, len % sections);
                let mut bounds = Vec::new();
                let mut start = 0;
                for j in 0..sections {
                    let stop = start + each + usize::from(j < extra);
                    bounds.push((start, stop));
                    start = stop;
                }
                let want = host_pieces(&host, k, &bounds);
                check_pieces(
                    &dev.array_split(sections, axis)?,
                    &want,
                    &format!("array_split {what}"),
                );
                match dev.split(sections, axis) {
                    Ok(p) if len % sections == 0 => check_pieces(&p, &want, &format!("split {what}")),
                    Err(Error::Shape(ArrayShapeError::SplitSections {
                        len: l, sections: s, ..
                    })) if len % sections != 0 && l == len && s == sections => {}
                    other => panic!("split {what}: {:?}", other.map(|p| p.len())),
                }
            }
            for indices in [
                vec![],
                vec![1],
                vec![-1, 2],
                vec![2, 1],
                vec![len as isize + 3],
                vec![0, 0, -100],
            ] {
                let clamp = |i: isize| {
                    if i < 0 {
                        len.saturating_sub(i.unsigned_abs())
                    } else {
                        (i as usize).min(len)
                    }
                };
                let mut points = vec![0];
                points.extend(indices.iter().map(|&i| clamp(i)));
                points.push(len);
                let bounds: Vec<_> = points.windows(2).map(|w| (w[0], w[1].max(w[0]))).collect();
                check_pieces(
                    &dev.split_at_indices(&indices, axis)?,
                    &host_pieces(&host, k, &bounds),
                    &format!("split_at_indices {name} {shape:?} {indices:?} axis {axis}"),
                );
            }
        }
        // hsplit/vsplit/dsplit are split along the axis NumPy names, or refuse too few axes.
        for (axes, got) in [(1usize, dev.hsplit(1)), (2, dev.vsplit(1)), (3, dev.dsplit(1))] {
            match got {
                Ok(p) => {
                    assert!(nd >= axes, "{name} {shape:?}: split of {nd} axes needing {axes}");
                    check_pieces(
                        &p,
                        &[host.view()],
                        &format!("{name} {shape:?} split needing {axes}"),
                    );
                }
                Err(Error::Shape(ArrayShapeError::NoSuchAxis { .. })) => assert!(nd < axes),
                Err(e) => return Err(e),
            }
        }
        if nd >= 2 && shape[1] % 2 == 0 {
            let bounds = [(0, shape[1] / 2), (shape[1] / 2, shape[1])];
            check_pieces(&dev.hsplit(2)?, &host_pieces(&host, 1, &bounds), "hsplit(2)");
        }
        if nd >= 3 && shape[2] % 2 == 0 {
            let bounds = [(0, shape[2] / 2), (shape[2] / 2, shape[2])];
            check_pieces(&dev.dsplit(2)?, &host_pieces(&host, 2, &bounds), "dsplit(2)");
        }
        // atleast_*: views of the same elements under NumPy's shapes.
        for axes in 1..=3 {
            let want = at_least(host.view(), axes);
            let got = match axes {
                1 => dev.view().atleast_1d()?,
                2 => dev.view().atleast_2d()?,
                _ => dev.view().atleast_3d()?,
            };
            assert_same(&got, &want, &format!("{name} {shape:?} atleast_{axes}d"));
        }
    }
    Ok(())
}

/// NumPy's four stacking functions on the host: `concatenate` after giving each array its
/// axes; `None` where NumPy refuses the shapes.
fn host_stack<T: Clone>(arrays: &[ArrayD<T>], how: &str) -> Option<ArrayD<T>> {
    let views: Vec<ArrayViewD<'_, T>> = arrays
        .iter()
        .map(|a| match how {
            "h" => at_least(a.view(), 1),
            "v" => at_least(a.view(), 2),
            "d" => at_least(a.view(), 3),
            _ if a.ndim() < 2 => at_least(a.view(), 1).insert_axis(Axis(1)),
            _ => a.view(),
        })
        .collect();
    let axis = match how {
        "h" if views[0].ndim() == 1 => 0,
        "h" | "c" => 1,
        "v" => 0,
        _ => 2,
    };
    concatenate(Axis(axis), &views).ok()
}

fn check_stacks<T: Element + PartialEq + std::fmt::Debug + Clone>(
    ctx: &Context,
    rng: &mut Rng,
    draw: &impl Fn(&mut Rng) -> T,
) -> gpu_runtime::Result<()> {
    let name = std::any::type_name::<T>();
    // Shapes each stacking function accepts together, as NumPy's tests use them.
    let cases: [(&str, Vec<Vec<usize>>); 12] = [
        ("h", vec![vec![], vec![], vec![]]),
        ("h", vec![vec![3], vec![0], vec![5]]),
        ("h", vec![vec![2, 3], vec![2, 1], vec![2, 0]]),
        ("h", vec![vec![2, 3, 4], vec![2, 5, 4]]),
        ("v", vec![vec![], vec![]]),
        ("v", vec![vec![4], vec![4], vec![4]]),
        ("v", vec![vec![2, 3], vec![1, 3], vec![0, 3]]),
        ("d", vec![vec![], vec![]]),
        ("d", vec![vec![5], vec![5]]),
        ("d", vec![vec![2, 3], vec![2, 3], vec![2, 3, 2]]),
        ("c", vec![vec![4], vec![4, 2], vec![4]]),
        ("c", vec![vec![], vec![1, 3]]),
    ];
    for (how, shapes) in cases {
        let host: Vec<ArrayD<T>> = shapes.iter().map(|s| random(rng, s, draw)).collect();
        let dev = host
            .iter()
            .map(|h| DeviceArray::from_ndarray(ctx, h))
            .collect::<gpu_runtime::Result<Vec<_>>>()?;
        let stacked = |refs: &[&DeviceArrayView<'_, T, IxDyn>]| match how {
            "h" => hstack(refs),
            "v" => vstack(refs),
            "d" => dstack(refs),
            _ => column_stack(refs),
        };
        let owned: Vec<DeviceArrayView<'_, T, IxDyn>> = dev.iter().map(|d| d.view()).collect();
        let refs: Vec<_> = owned.iter().collect();
        let want = host_stack(&host, how).expect("a case NumPy joins");
        assert_same(
            &stacked(&refs)?,
            &want.view(),
            &format!("{name} {how}stack of {shapes:?}"),
        );
        // The same from transposed views (the copies read strided sources), or the same refusal.
        let host_t: Vec<ArrayD<T>> = host.iter().map(|h| h.t().to_owned()).collect();
        let views: Vec<_> = dev.iter().map(|d| d.t()).collect();
        let refs: Vec<_> = views.iter().collect();
        let what = format!("{name} {how}stack of transposes of {shapes:?}");
        match (host_stack(&host_t, how), stacked(&refs)) {
            (Some(want), Ok(got)) => assert_same(&got, &want.view(), &what),
            (None, Err(Error::Shape(ArrayShapeError::JoinShapes { .. }))) => {}
            (want, got) => panic!(
                "{what}: host {:?}, device {:?}",
                want.map(|w| w.shape().to_vec()),
                got.map(|g| g.shape().to_vec())
            ),
        }
    }
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn splits_and_stacks_match_the_host() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(4711);
    let shapes = [
        vec![],
        vec![7],
        vec![6, 4],
        vec![3, 5, 6],
        vec![0, 4],
        vec![2, 1, 4],
    ];
    for shape in &shapes {
        check_splits(
            &ctx,
            &random(&mut rng, shape, &|r: &mut Rng| r.f64() * 100.0 - 50.0),
        )?;
        check_splits(&ctx, &random(&mut rng, shape, &|r: &mut Rng| r.next_u64() as i32))?;
    }
    for shape in &shapes[1..4] {
        check_splits(
            &ctx,
            &random(&mut rng, shape, &|r: &mut Rng| f16::from_f32(r.f32() * 8.0)),
        )?;
        check_splits(
            &ctx,
            &random(&mut rng, shape, &|r: &mut Rng| {
                Bool::from(r.next_u64().is_multiple_of(3))
            }),
        )?;
        check_splits(
            &ctx,
            &random(&mut rng, shape, &|r: &mut Rng| Complex64::new(r.f64(), -r.f64())),
        )?;
    }
    check_stacks(&ctx, &mut rng, &|r: &mut Rng| r.f64() * 10.0)?;
    check_stacks(&ctx, &mut rng, &|r: &mut Rng| r.next_u64() as u8)?;
    check_stacks(&ctx, &mut rng, &|r: &mut Rng| r.next_u64() as i64)?;
    check_stacks(&ctx, &mut rng, &|r: &mut Rng| f16::from_f32(r.f32()))?;
    check_stacks(&ctx, &mut rng, &|r: &mut Rng| Complex64::new(r.f64(), r.f64()))?;
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn cupys_split_and_join_cases_by_value() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let arange = |shape: &[usize]| -> gpu_runtime::Result<DeviceArray<i64, IxDyn>> {
        let n: usize = shape.iter().product();
        DeviceArray::<i64, _>::arange(&ctx, 0.0, n as f64, 1.0)?.reshape(IxDyn(shape))
    };
    // test_split.py: split(a, [2, 4], 1) of a 3 x 11 arange, array_split of 7 into 3.
    let a = arange(&[3, 11])?;
    let p = a.split_at_indices(&[2, 4], 1)?;
    assert_eq!(
        p.iter().map(|v| v.shape().to_vec()).collect::<Vec<_>>(),
        [vec![3, 2], vec![3, 2], vec![3, 7]]
    );
    assert_eq!(p[1].to_vec()?, [2, 3, 13, 14, 24, 25]);
    let a = arange(&[7])?;
    let p = a.array_split(3, 0)?;
    assert_eq!(
        p.iter()
            .map(|v| v.to_vec())
            .collect::<gpu_runtime::Result<Vec<_>>>()?,
        [vec![0, 1, 2], vec![3, 4], vec![5, 6]]
    );
    // A piece of a piece is a view of the same memory.
    let a = DeviceArray::<i64, _>::arange(&ctx, 0.0, 24.0, 1.0)?.reshape((4, 6))?;
    let left = a.hsplit(2)?;
    assert_eq!(left[1].slice(s![1.., ..])?.vsplit(3)?[2].to_vec()?, [21, 22, 23]);
    // test_join.py: hstack/vstack/dstack/column_stack of small aranges.
    let a = arange(&[3])?;
    let b = arange(&[3])?;
    assert_eq!(hstack(&[&a, &b])?.to_vec()?, [0, 1, 2, 0, 1, 2]);
    assert_eq!(vstack(&[&a, &b])?.shape(), [2, 3]);
    assert_eq!(dstack(&[&a, &b])?.to_vec()?, [0, 0, 1, 1, 2, 2]);
    assert_eq!(column_stack(&[&a, &b])?.to_vec()?, [0, 0, 1, 1, 2, 2]);
    assert_eq!(column_stack(&[&a, &b])?.shape(), [3, 2]);
    // On a stream: the copies queued there.
    let stream = Stream::new(&ctx)?;
    let on = gpuarray::on(&stream);
    let h = on.hstack(&[&a, &b])?;
    let v = on.vstack(&[&a, &b])?;
    let d = on.dstack(&[&a, &b])?;
    let c = on.column_stack(&[&a, &b])?;
    stream.synchronize()?;
    assert_eq!(h.to_vec()?, [0, 1, 2, 0, 1, 2]);
    assert_eq!(v.to_vec()?, [0, 1, 2, 0, 1, 2]);
    assert_eq!(d.shape(), [1, 3, 2]);
    assert_eq!(c.shape(), [3, 2]);
    // Refusals: no arrays, shapes that do not join, unequal sections, too few axes.
    let none: [&DeviceArray<i64, IxDyn>; 0] = [];
    assert!(matches!(
        hstack(&none),
        Err(Error::Shape(ArrayShapeError::NoArrays { operation: "hstack" }))
    ));
    let m = arange(&[2, 2])?;
    assert!(matches!(
        vstack(&[&a, &m]),
        Err(Error::Shape(ArrayShapeError::JoinShapes {
            operation: "vstack",
            ..
        }))
    ));
    assert!(matches!(
        a.split(2, 0),
        Err(Error::Shape(ArrayShapeError::SplitSections {
            len: 3,
            sections: 2,
            ..
        }))
    ));
    assert!(matches!(
        a.split(0, 0),
        Err(Error::Shape(ArrayShapeError::SplitSections { sections: 0, .. }))
    ));
    assert!(matches!(
        a.vsplit(1),
        Err(Error::Shape(ArrayShapeError::NoSuchAxis { .. }))
    ));
    assert!(matches!(
        a.split(1, 1),
        Err(Error::Shape(ArrayShapeError::NoSuchAxis { .. }))
    ));
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn block_assembles_nested_lists_as_numpy() -> gpu_runtime::Result<()> {
    use gpuarray::{block, Block};
    let ctx = Context::default()?;
    let eye = |n: usize, v: f64| Array::from_shape_fn((n, n), |(i, j)| if i == j { v } else { 0.0 });
    let a = DeviceArray::from_ndarray(&ctx, &eye(2, 2.0))?;
    let b = DeviceArray::from_ndarray(&ctx, &eye(3, 3.0))?;
    let z = DeviceArray::<f64, _>::zeros(&ctx, (2, 3))?;
    let o = DeviceArray::<f64, _>::ones(&ctx, (3, 2))?;
    // np.block([[A, np.zeros((2, 3))], [np.ones((3, 2)), B]])
    let m = block(&Block::list([
        Block::list([Block::array(&a), Block::array(&z)]),
        Block::list([Block::array(&o), Block::array(&b)]),
    ]))?;
    assert_eq!(m.shape(), [5, 5]);
    assert_eq!(
        m.to_vec()?,
        [
            2.0, 0.0, 0.0, 0.0, 0.0, 0.0, 2.0, 0.0, 0.0, 0.0, 1.0, 1.0, 3.0, 0.0, 0.0, 1.0, 1.0, 0.0, 3.0,
            0.0, 1.0, 1.0, 0.0, 0.0, 3.0
        ]
    );
    // The same with a transposed zero block (a strided view) on a stream.
    let zt = DeviceArray::<f64, _>::zeros(&ctx, (3, 2))?;
    let stream = Stream::new(&ctx)?;
    let m2 = gpuarray::on(&stream).block(&Block::list([
        Block::list([Block::array(&a), Block::array(&zt.t())]),
        Block::list([Block::array(&o), Block::array(&b)]),
    ]))?;
    assert_eq!(m2.to_vec()?, m.to_vec()?);
    // np.block([a, b, 10]), np.block([[a], [b]]), np.block([[[a]]]), np.block([[a, b]]).
    let r1 = DeviceArray::from_ndarray(&ctx, &gpu_runtime::ndarray::arr1(&[1i32, 2, 3]))?;
    let r2 = DeviceArray::from_ndarray(&ctx, &gpu_runtime::ndarray::arr1(&[4i32, 5, 6]))?;
    let ten = DeviceArray::from_ndarray(&ctx, &gpu_runtime::ndarray::arr0(10i32))?;
    let flat = block(&Block::list([
        Block::array(&r1),
        Block::array(&r2),
        Block::array(&ten),
    ]))?;
    assert_eq!(flat.to_vec()?, [1, 2, 3, 4, 5, 6, 10]);
    let rows = block(&Block::list([
        Block::list([Block::array(&r1)]),
        Block::list([Block::array(&r2)]),
    ]))?;
    assert_eq!(
        (rows.shape().to_vec(), rows.to_vec()?),
        (vec![2, 3], vec![1, 2, 3, 4, 5, 6])
    );
    let deep = block(&Block::list([Block::list([Block::list([Block::array(&r1)])])]))?;
    assert_eq!(deep.shape(), [1, 1, 3]);
    let wide = block(&Block::list([Block::list([
        Block::array(&r1),
        Block::array(&r2),
    ])]))?;
    assert_eq!(wide.shape(), [1, 6]);
    // A plain array is copied.
    assert_eq!(block(&Block::array(&r1))?.to_vec()?, [1, 2, 3]);
    // NumPy's ValueErrors: depths mismatched, an empty list; shapes that do not join.
    let mixed = Block::list([Block::list([Block::array(&r1)]), Block::array(&r2)]);
    assert!(matches!(
        block(&mixed),
        Err(Error::Shape(ArrayShapeError::BlockLists { .. }))
    ));
    let empty = Block::<i32>::list([]);
    assert!(matches!(
        block(&empty),
        Err(Error::Shape(ArrayShapeError::BlockLists { .. }))
    ));
    let bad = Block::list([Block::list([Block::array(&a)]), Block::list([Block::array(&b)])]);
    assert!(matches!(
        block(&bad),
        Err(Error::Shape(ArrayShapeError::JoinShapes { .. }))
    ));
    Ok(())
}
