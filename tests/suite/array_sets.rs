//! NumPy's set routines (`isin`, `intersect1d` with and without its indices, `union1d`,
//! `setdiff1d`, `setxor1d`), `lexsort` and `partition`/`argpartition` on a GPU against the
//! host, on random data with repeated values and NaNs: floats (NaN in no set, NumPy's `==`),
//! 16-bit floats and integers; arrays of several axes, transposed and reversed views, empty
//! ones. `lexsort` against a stable host sort by every key (NaN last), `partition` by its
//! defining property, not by one order.

use std::cmp::Ordering;

use gpu_runtime::gpuarray::{self, Bool, DeviceArray, Element};
use gpu_runtime::half::f16;
use gpu_runtime::ndarray::{arr2, s, Array, ArrayD, Axis, IxDyn};
use gpu_runtime::{ArrayShapeError, Context, Error, Stream};
use gpu_suite::Rng;

fn random<T>(rng: &mut Rng, shape: &[usize], draw: impl Fn(&mut Rng) -> T) -> ArrayD<T> {
    let n = shape.iter().product();
    Array::from_shape_vec(IxDyn(shape), (0..n).map(|_| draw(rng)).collect()).unwrap()
}

/// NumPy's sort order: NaN (the one value unequal to itself) after every number, NaNs equal.
#[allow(clippy::eq_op)]
fn order<T: PartialOrd>(a: &T, b: &T) -> Ordering {
    match (a != a, b != b) {
        (true, true) => Ordering::Equal,
        (true, false) => Ordering::Greater,
        (false, true) => Ordering::Less,
        (false, false) => a.partial_cmp(b).unwrap(),
    }
}

/// Equal, or both NaN: how two results are compared.
#[allow(clippy::eq_op)]
fn same<T: PartialEq>(a: &T, b: &T) -> bool {
    a == b || (a != a && b != b)
}

fn assert_same_vec<T: PartialEq + std::fmt::Debug>(got: &[T], want: &[T], what: &str) {
    assert!(
        got.len() == want.len() && got.iter().zip(want).all(|(g, w)| same(g, w)),
        "{what}: got {got:?}, want {want:?}"
    );
}

/// NumPy 2's `unique`: sorted, NaNs one value at the end.
fn unique<T: Copy + PartialOrd>(v: &[T]) -> Vec<T> {
    let mut x = v.to_vec();
    x.sort_by(order);
    x.dedup_by(|a, b| same(a, b));
    x
}

fn contains<T: PartialEq>(v: &[T], x: &T) -> bool {
    v.iter().any(|y| y == x)
}

/// Every set routine of `a` and `b` against the host.
fn check_sets<T: Element + PartialOrd + std::fmt::Debug>(
    ctx: &Context,
    a: &ArrayD<T>,
    b: &ArrayD<T>,
) -> gpu_runtime::Result<()> {
    let (da, db) = (
        DeviceArray::from_ndarray(ctx, a)?,
        DeviceArray::from_ndarray(ctx, b)?,
    );
    let name = format!("{} {:?} {:?}", std::any::type_name::<T>(), a.shape(), b.shape());
    // Transposed views read the same sets.
    for (va, vb) in [(da.view(), db.view()), (da.t(), db.t())] {
        let (ha, hb): (Vec<T>, Vec<T>) = (a.iter().copied().collect(), b.iter().copied().collect());
        for invert in [false, true] {
            let got: Vec<bool> = va
                .isin(&vb, invert)?
                .to_vec()?
                .into_iter()
                .map(bool::from)
                .collect();
            let host_view = if va.shape() == a.shape() {
                a.clone()
            } else {
                a.t().to_owned()
            };
            let want: Vec<bool> = host_view.iter().map(|x| contains(&hb, x) != invert).collect();
            assert_eq!(got, want, "{name} isin invert={invert}");
            assert_eq!(va.isin(&vb, invert)?.shape(), va.shape(), "{name}");
        }
        let (ua, ub) = (unique(&ha), unique(&hb));
        let inter: Vec<T> = ua.iter().copied().filter(|x| contains(&hb, x)).collect();
        assert_same_vec(
            &gpuarray::intersect1d(&va, &vb)?.to_vec()?,
            &inter,
            &format!("{name} intersect1d"),
        );
        // With each common value's first position in each (C order of the view).
        let both = gpuarray::intersect1d_indices(&va, &vb)?;
        assert_same_vec(
            &both.values.to_vec()?,
            &inter,
            &format!("{name} intersect1d_indices"),
        );
        // Positions count in the C order of the views as given.
        let (flat_a, flat_b) = (va.to_vec()?, vb.to_vec()?);
        let first = |v: &[T], x: &T| v.iter().position(|y| y == x).map_or(-1, |p| p as i64);
        let want_a: Vec<i64> = inter.iter().map(|x| first(&flat_a, x)).collect();
        let want_b: Vec<i64> = inter.iter().map(|x| first(&flat_b, x)).collect();
        assert_eq!(
            both.indices_a.to_vec()?,
            want_a,
            "{name} intersect1d_indices in a"
        );
        assert_eq!(
            both.indices_b.to_vec()?,
            want_b,
            "{name} intersect1d_indices in b"
        );
        let both: Vec<T> = ha.iter().chain(&hb).copied().collect();
        assert_same_vec(
            &gpuarray::union1d(&va, &vb)?.to_vec()?,
            &unique(&both),
            &format!("{name} union1d"),
        );
        let diff: Vec<T> = ua.iter().copied().filter(|x| !contains(&hb, x)).collect();
        assert_same_vec(
            &gpuarray::setdiff1d(&va, &vb)?.to_vec()?,
            &diff,
            &format!("{name} setdiff1d"),
        );
        let mut xor: Vec<T> = ua
            .iter()
            .copied()
            .filter(|x| !contains(&ub, x))
            .chain(ub.iter().copied().filter(|x| !contains(&ua, x)))
            .collect();
        xor.sort_by(order);
        assert_same_vec(
            &gpuarray::setxor1d(&va, &vb)?.to_vec()?,
            &xor,
            &format!("{name} setxor1d"),
        );
    }
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn set_routines_match_the_host() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(1234);
    let float = |r: &mut Rng| {
        if r.next_u64().is_multiple_of(16) {
            f64::NAN
        } else {
            (r.next_u64() % 40) as f64 / 4.0 - 5.0
        }
    };
    for (sa, sb) in [
        (vec![6usize, 7], vec![5usize, 6]),
        (vec![40], vec![3, 2]),
        (vec![5, 4], vec![0]),
        (vec![0, 3], vec![7]),
        (vec![1], vec![1]),
        (vec![], vec![9]),
    ] {
        check_sets(&ctx, &random(&mut rng, &sa, float), &random(&mut rng, &sb, float))?;
        check_sets(
            &ctx,
            &random(&mut rng, &sa, |r| float(r) as f32),
            &random(&mut rng, &sb, |r| float(r) as f32),
        )?;
        check_sets(
            &ctx,
            &random(&mut rng, &sa, |r| f16::from_f64(float(r))),
            &random(&mut rng, &sb, |r| f16::from_f64(float(r))),
        )?;
        let int = |r: &mut Rng| (r.next_u64() % 50) as i32 - 20;
        check_sets(&ctx, &random(&mut rng, &sa, int), &random(&mut rng, &sb, int))?;
        check_sets(
            &ctx,
            &random(&mut rng, &sa, |r| r.next_u64() as u8),
            &random(&mut rng, &sb, |r| r.next_u64() as u8),
        )?;
        let wide = |r: &mut Rng| (r.next_u64() % 30) as i64 * (1 << 40);
        check_sets(&ctx, &random(&mut rng, &sa, wide), &random(&mut rng, &sb, wide))?;
    }
    // NumPy's documented examples, and a stream.
    let a = DeviceArray::from_ndarray(&ctx, &gpu_runtime::ndarray::arr1(&[1, 3, 4, 3]))?;
    let b = DeviceArray::from_ndarray(&ctx, &gpu_runtime::ndarray::arr1(&[3, 1, 2, 1]))?;
    let stream = Stream::new(&ctx)?;
    let on = gpuarray::on(&stream);
    let (i, u, d, x) = (
        on.intersect1d(&a, &b)?,
        on.union1d(&a, &b)?,
        on.setdiff1d(&a, &b)?,
        on.setxor1d(&a, &b)?,
    );
    stream.synchronize()?;
    assert_eq!(i.to_vec()?, [1, 3]);
    assert_eq!(u.to_vec()?, [1, 2, 3, 4]);
    assert_eq!(d.to_vec()?, [4]);
    assert_eq!(x.to_vec()?, [2, 4]);
    // NumPy's `intersect1d([1, 1, 2, 3, 4], [2, 1, 4, 6], return_indices=True)`.
    let a2 = DeviceArray::from_ndarray(&ctx, &gpu_runtime::ndarray::arr1(&[1, 1, 2, 3, 4]))?;
    let b2 = DeviceArray::from_ndarray(&ctx, &gpu_runtime::ndarray::arr1(&[2, 1, 4, 6]))?;
    let both = on.intersect1d_indices(&a2, &b2)?;
    assert_eq!(both.values.to_vec()?, [1, 2, 4]);
    assert_eq!(both.indices_a.to_vec()?, [0, 2, 4]);
    assert_eq!(both.indices_b.to_vec()?, [1, 0, 2]);
    let found: Vec<Bool> = a.on(&stream).isin(&b, false)?.to_vec()?;
    assert_eq!(
        found.into_iter().map(bool::from).collect::<Vec<_>>(),
        [true, true, false, true]
    );
    Ok(())
}

/// The stable order of `n` positions by the keys (`keys[k]` of one row, the last primary).
fn host_lexsort<T: PartialOrd>(keys: &[Vec<T>]) -> Vec<i64> {
    let n = keys.first().map_or(0, |k| k.len());
    let mut idx: Vec<usize> = (0..n).collect();
    idx.sort_by(|&i, &j| {
        keys.iter()
            .rev()
            .map(|k| order(&k[i], &k[j]))
            .find(|o| o.is_ne())
            .unwrap_or(Ordering::Equal)
    });
    idx.into_iter().map(|i| i as i64).collect()
}

/// `lexsort` of `keys` (k, rows..., n) against the host, per row.
fn check_lexsort<T: Element + PartialOrd + std::fmt::Debug>(
    ctx: &Context,
    keys: &ArrayD<T>,
) -> gpu_runtime::Result<()> {
    let d = DeviceArray::from_ndarray(ctx, keys)?;
    let got = gpuarray::lexsort(&d)?;
    let shape = keys.shape();
    assert_eq!(got.shape(), &shape[1..]);
    let got = got.to_ndarray()?;
    let n = shape[shape.len() - 1];
    let rows: usize = shape[1..shape.len() - 1].iter().product();
    let k = shape[0];
    let flat = keys.to_shape(IxDyn(&[k, rows, n])).unwrap();
    let got = got.to_shape(IxDyn(&[rows, n])).unwrap();
    for r in 0..rows {
        let row_keys: Vec<Vec<T>> = (0..k)
            .map(|j| (0..n).map(|i| flat[[j, r, i]]).collect())
            .collect();
        let want = host_lexsort(&row_keys);
        let g: Vec<i64> = (0..n).map(|i| got[[r, i]]).collect();
        assert_eq!(g, want, "{} {shape:?} row {r}", std::any::type_name::<T>());
    }
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn lexsort_matches_a_stable_host_sort_by_every_key() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(77);
    let few = |r: &mut Rng| {
        if r.next_u64().is_multiple_of(10) {
            f64::NAN
        } else {
            (r.next_u64() % 4) as f64 - 1.5
        }
    };
    for shape in [
        vec![3usize, 50],
        vec![1, 17],
        vec![2, 4, 9],
        vec![4, 0],
        vec![2, 1000],
    ] {
        check_lexsort(&ctx, &random(&mut rng, &shape, few))?;
        check_lexsort(&ctx, &random(&mut rng, &shape, |r| few(r) as f32))?;
        check_lexsort(&ctx, &random(&mut rng, &shape, |r| (r.next_u64() % 3) as i32 - 1))?;
        check_lexsort(&ctx, &random(&mut rng, &shape, |r| (r.next_u64() % 3) as u8))?;
        check_lexsort(&ctx, &random(&mut rng, &shape, |r| f16::from_f64(few(r))))?;
    }
    // NumPy's example; CuPy's `a.T[::-1]` view and a Fortran-order copy.
    let keys = DeviceArray::from_ndarray(&ctx, &arr2(&[[9, 4, 0, 4, 0, 2, 1], [1, 5, 1, 4, 3, 4, 4]]))?;
    assert_eq!(gpuarray::lexsort(&keys)?.to_vec()?, [2, 0, 4, 6, 5, 3, 1]);
    let h = random(&mut rng, &[4, 8], |r| (r.next_u64() % 3) as f64);
    let d = DeviceArray::from_ndarray(&ctx, &h)?;
    let view = d.t().slice_move(s![..;-1, ..])?;
    let host_view = h.t().slice_move(s![..;-1, ..]).to_owned();
    let rows: Vec<Vec<f64>> = host_view
        .axis_iter(Axis(0))
        .map(|r| r.iter().copied().collect())
        .collect();
    assert_eq!(gpuarray::lexsort(&view)?.to_vec()?, host_lexsort(&rows));
    let f = d.view().asfortranarray()?;
    let rows: Vec<Vec<f64>> = h
        .axis_iter(Axis(0))
        .map(|r| r.iter().copied().collect())
        .collect();
    assert_eq!(gpuarray::lexsort(&f)?.to_vec()?, host_lexsort(&rows));
    // One key is its argsort; the refusals.
    let one = DeviceArray::from_ndarray(&ctx, &gpu_runtime::ndarray::arr1(&[3.0, 1.0, f64::NAN, 1.0]))?;
    assert_eq!(gpuarray::lexsort(&one)?.to_vec()?, [1, 3, 0, 2]);
    let e = gpuarray::lexsort(&DeviceArray::<f64, _>::zeros(&ctx, ())?).unwrap_err();
    assert!(
        matches!(e, Error::Shape(ArrayShapeError::ZeroDimensional { .. })),
        "{e}"
    );
    let e = gpuarray::lexsort(&DeviceArray::<f64, _>::zeros(&ctx, (0, 5))?).unwrap_err();
    assert!(
        matches!(
            e,
            Error::Shape(ArrayShapeError::NoArrays { operation: "lexsort" })
        ),
        "{e}"
    );
    Ok(())
}

/// Checks that `got` (one lane) is a partition of `lane` at each of `kth`.
fn assert_partitioned<T: PartialOrd + Copy + std::fmt::Debug>(
    got: &[T],
    lane: &[T],
    kth: &[isize],
    what: &str,
) {
    let mut sorted = lane.to_vec();
    sorted.sort_by(order);
    let mut g = got.to_vec();
    g.sort_by(order);
    assert!(
        g.iter().zip(&sorted).all(|(a, b)| same(a, b)),
        "{what}: not a permutation"
    );
    let n = lane.len() as isize;
    for &k in kth {
        let k = k.rem_euclid(n) as usize;
        assert!(
            same(&got[k], &sorted[k]),
            "{what}: kth {k}: {:?} vs {:?}",
            got[k],
            sorted[k]
        );
        assert!(
            got[..k].iter().all(|x| order(x, &got[k]).is_le()),
            "{what}: before {k}"
        );
        assert!(
            got[k + 1..].iter().all(|x| order(x, &got[k]).is_ge()),
            "{what}: after {k}"
        );
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn partitions_put_each_kth_in_place() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(5);
    let h = random(&mut rng, &[6, 50], |r| {
        if r.next_u64().is_multiple_of(12) {
            f64::NAN
        } else {
            (r.next_u64() % 30) as f64
        }
    });
    let d = DeviceArray::from_ndarray(&ctx, &h)?;
    for kth in [&[0isize][..], &[10], &[-1], &[3, 20, 49], &[]] {
        for axis in [-1isize, 0] {
            let lanes_axis = if axis == -1 { Axis(0) } else { Axis(1) };
            let len = if axis == -1 { 50 } else { 6 };
            if kth.iter().any(|&k| k >= len || k < -len) {
                let e = d.partition(kth, axis).unwrap_err();
                assert!(
                    matches!(e, Error::Shape(ArrayShapeError::IndexOutOfRange { len: 6, .. })),
                    "{e}"
                );
                continue;
            }
            let got = d.partition(kth, axis)?.to_ndarray()?;
            let idx = d.argpartition(kth, axis)?;
            let taken = d.take_along_axis(&idx, axis)?.to_ndarray()?;
            for ((g, t), lane) in got
                .axis_iter(lanes_axis)
                .zip(taken.axis_iter(lanes_axis))
                .zip(h.axis_iter(lanes_axis))
            {
                let lane: Vec<f64> = lane.iter().copied().collect();
                assert_partitioned(
                    &g.iter().copied().collect::<Vec<_>>(),
                    &lane,
                    kth,
                    &format!("partition {kth:?} axis {axis}"),
                );
                assert_partitioned(
                    &t.iter().copied().collect::<Vec<_>>(),
                    &lane,
                    kth,
                    &format!("argpartition {kth:?} axis {axis}"),
                );
            }
        }
    }
    let i = DeviceArray::from_ndarray(&ctx, &random(&mut rng, &[100], |r| (r.next_u64() % 7) as i32))?;
    let host = i.to_vec()?;
    assert_partitioned(&i.partition(&[50], 0)?.to_vec()?, &host, &[50], "i32");
    let e = i.partition(&[100], 0).unwrap_err();
    assert!(
        matches!(
            e,
            Error::Shape(ArrayShapeError::IndexOutOfRange {
                index: 100,
                len: 100,
                ..
            })
        ),
        "{e}"
    );
    Ok(())
}
