//! NumPy's small constructors and editing routines on a GPU against the host, on random data
//! of several element types: `diag`/`diagflat`/`tri`/`tril_indices`/`triu_indices`,
//! `logspace`, `ediff1d`, `append`, `delete`, `resize`, `trim_zeros`, `array_equiv` and
//! `meshgrid`, each against NumPy's definition written on the host, over every offset, axis
//! and edge (empty, all zero, past the ends), with a stream form and the refusals; `insert`
//! and `insert_each` against values NumPy 2.4 printed (one index with its values' first axis
//! moved, a sequence of indices sorted stably, a sequence of one, broadcast scalars, negative
//! and end indices, flattened, strided and `f16` arrays) and NumPy's refusals.

use gpu_runtime::gpuarray::{self, Bool, DeviceArray, Element, MeshIndexing};
use gpu_runtime::half::f16;
use gpu_runtime::ndarray::{arr1, arr2, Array, Array1, Array2, ArrayD, Axis, IxDyn};
use gpu_runtime::types::Complex64;
use gpu_runtime::{ArrayShapeError, Context, Error, Stream};
use gpu_suite::Rng;

fn vec_of<T>(rng: &mut Rng, n: usize, draw: &impl Fn(&mut Rng) -> T) -> Vec<T> {
    (0..n).map(|_| draw(rng)).collect()
}

fn diagonals<T: Element + PartialEq + std::fmt::Debug>(
    ctx: &Context,
    rng: &mut Rng,
    draw: &impl Fn(&mut Rng) -> T,
) -> gpu_runtime::Result<()> {
    let name = std::any::type_name::<T>();
    for n in [0usize, 1, 4] {
        let v = vec_of(rng, n, draw);
        let d = DeviceArray::from_ndarray(ctx, &Array1::from(v.clone()))?;
        for k in -3isize..=3 {
            let side = n + k.unsigned_abs();
            let want = Array2::from_shape_fn((side, side), |(i, j)| {
                let on = j as isize - i as isize == k;
                let at = if k >= 0 { i } else { j };
                if on && at < n {
                    v[at]
                } else {
                    T::zero()
                }
            });
            let got = d.diag(k)?;
            assert_eq!(got.shape(), want.shape(), "{name} diag({k}) of {n}");
            assert_eq!(
                got.to_vec()?,
                want.iter().copied().collect::<Vec<_>>(),
                "{name} diag({k}) of {n}"
            );
            // And back: the matrix's diagonal k is the vector.
            assert_eq!(got.diag(k)?.to_vec()?, v, "{name} diag({k}) of diag({k})");
        }
    }
    // A matrix's diagonals, of a transposed view too; diagflat of a 2-d array.
    let h = Array2::from_shape_vec((3, 5), vec_of(rng, 15, draw)).unwrap();
    let d = DeviceArray::from_ndarray(ctx, &h)?;
    for k in -4isize..=6 {
        let want: Vec<T> = (0..3)
            .filter_map(|i: isize| {
                let j = i + k;
                (0..5).contains(&j).then(|| h[[i as usize, j as usize]])
            })
            .collect();
        assert_eq!(d.diag(k)?.to_vec()?, want, "{name} diag({k}) of 3 x 5");
        let want_t: Vec<T> = (0..5)
            .filter_map(|i: isize| {
                let j = i + k;
                (0..3).contains(&j).then(|| h[[j as usize, i as usize]])
            })
            .collect();
        assert_eq!(
            d.t().diag(k)?.to_vec()?,
            want_t,
            "{name} diag({k}) of the transpose"
        );
    }
    let flat: Vec<T> = h.t().iter().copied().collect();
    let got = d.t().diagflat(1)?;
    assert_eq!(got.shape(), [16, 16]);
    assert_eq!(got.diag(1)?.to_vec()?, flat, "{name} diagflat of the transpose");
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn diagonals_and_triangles_match_the_host() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(1618);
    diagonals(&ctx, &mut rng, &|r: &mut Rng| r.f64())?;
    diagonals(&ctx, &mut rng, &|r: &mut Rng| r.next_u64() as i32)?;
    diagonals(&ctx, &mut rng, &|r: &mut Rng| r.next_u64() as u8)?;
    diagonals(&ctx, &mut rng, &|r: &mut Rng| {
        Bool::from(r.next_u64().is_multiple_of(2))
    })?;
    diagonals(&ctx, &mut rng, &|r: &mut Rng| f16::from_f32(r.f32()))?;
    diagonals(&ctx, &mut rng, &|r: &mut Rng| Complex64::new(r.f64(), r.f64()))?;
    for (n, m) in [(0usize, 0usize), (1, 1), (3, 4), (5, 2)] {
        for k in -6isize..=6 {
            let t = DeviceArray::<f32, _>::tri(&ctx, n, m, k)?;
            let want =
                Array2::from_shape_fn((n, m), |(i, j)| f32::from(u8::from(j as isize - i as isize <= k)));
            assert_eq!(
                t.to_vec()?,
                want.iter().copied().collect::<Vec<_>>(),
                "tri({n}, {m}, {k})"
            );
            let (rows, cols) = gpuarray::tril_indices(&ctx, n, k, m)?;
            let (r, c): (Vec<i64>, Vec<i64>) = want
                .indexed_iter()
                .filter(|&(_, &x)| x == 1.0)
                .map(|((i, j), _)| (i as i64, j as i64))
                .unzip();
            assert_eq!(
                (rows.to_vec()?, cols.to_vec()?),
                (r, c),
                "tril_indices({n}, {k}, {m})"
            );
            let (rows, cols) = gpuarray::triu_indices(&ctx, n, k, m)?;
            let (r, c): (Vec<i64>, Vec<i64>) = (0..n as i64)
                .flat_map(|i| (0..m as i64).map(move |j| (i, j)))
                .filter(|&(i, j)| j - i >= k as i64)
                .unzip();
            assert_eq!(
                (rows.to_vec()?, cols.to_vec()?),
                (r, c),
                "triu_indices({n}, {k}, {m})"
            );
        }
    }
    let a = DeviceArray::<f32, _>::zeros(&ctx, (3, 4))?;
    let (rows, cols) = gpuarray::triu_indices_from(&a, 1)?;
    assert_eq!(rows.to_vec()?, [0, 0, 0, 1, 1, 2]);
    assert_eq!(cols.to_vec()?, [1, 2, 3, 2, 3, 3]);
    let (rows, _) = gpuarray::tril_indices_from(&a, -1)?;
    assert_eq!(rows.to_vec()?, [1, 2, 2]);
    // logspace: base ** linspace in f64, then converted.
    for (start, stop, num, endpoint, base) in [
        (0.0f64, 2.0f64, 3usize, true, 10.0f64),
        (0.0, 3.0, 3, false, 2.0),
        (-1.5, 2.25, 17, true, 3.0),
        (1.0, 1.0, 1, true, 10.0),
        (0.0, 1.0, 0, true, 10.0),
    ] {
        let want: Vec<f64> = (0..num)
            .map(|i| {
                let div = if endpoint {
                    (num as f64 - 1.0).max(1.0)
                } else {
                    num as f64
                };
                base.powf(start + (stop - start) * i as f64 / div)
            })
            .collect();
        let got = DeviceArray::<f64, _>::logspace(&ctx, start, stop, num, endpoint, base)?.to_vec()?;
        assert_eq!(got.len(), want.len());
        for (g, w) in got.iter().zip(&want) {
            assert!(
                (g - w).abs() <= 1e-12 * w.abs(),
                "logspace({start}, {stop}, {num}): {g} against {w}"
            );
        }
        let got32 = DeviceArray::<f32, _>::logspace(&ctx, start, stop, num, endpoint, base)?.to_vec()?;
        for (g, w) in got32.iter().zip(&want) {
            assert!(
                (f64::from(*g) - w).abs() <= 1e-6 * w.abs(),
                "f32 logspace: {g} against {w}"
            );
        }
    }
    Ok(())
}

fn editing<T: Element + PartialEq + std::fmt::Debug>(
    ctx: &Context,
    rng: &mut Rng,
    draw: &impl Fn(&mut Rng) -> T,
) -> gpu_runtime::Result<()> {
    let name = std::any::type_name::<T>();
    let h = Array::from_shape_vec(IxDyn(&[3, 4]), vec_of(rng, 12, draw)).unwrap();
    let d = DeviceArray::from_ndarray(ctx, &h)?;
    for (host, dev) in [(h.clone(), d.view()), (h.t().to_owned(), d.t())] {
        let flat: Vec<T> = host.iter().copied().collect();
        // ediff1d: neighbours' differences of the flat elements (integers wrap), with ends.
        let begin = vec_of(rng, 2, draw);
        let end = vec_of(rng, 1, draw);
        let got = dev.ediff1d(&begin, &end)?.to_vec()?;
        assert_eq!(
            got.len(),
            begin.len() + flat.len() - 1 + end.len(),
            "{name} ediff1d"
        );
        assert_eq!(&got[..2], &begin[..], "{name} ediff1d begin");
        assert_eq!(&got[got.len() - 1..], &end[..], "{name} ediff1d end");
        let plain = dev.ediff1d(&[], &[])?.to_vec()?;
        assert_eq!(&got[2..got.len() - 1], &plain[..], "{name} ediff1d middle");
        assert_eq!(plain, dev.flat_diff()?, "{name} ediff1d against diff");
        // delete: every axis, negative and repeated indices; flat.
        for (axis, remove) in [
            (Some(0), vec![1]),
            (Some(1), vec![0, -1, 0]),
            (Some(-1), vec![]),
            (None, vec![0, 5, -1]),
        ] {
            let got = dev.delete(&remove, axis)?;
            let want: ArrayD<T> = match axis {
                None => {
                    let n = flat.len() as isize;
                    let gone: Vec<usize> = remove.iter().map(|&i| ((i + n) % n) as usize).collect();
                    let kept: Vec<T> = flat
                        .iter()
                        .enumerate()
                        .filter(|(i, _)| !gone.contains(i))
                        .map(|(_, x)| *x)
                        .collect();
                    ArrayD::from_shape_vec(IxDyn(&[kept.len()]), kept).unwrap()
                }
                Some(a) => {
                    let k = if a < 0 { (a + 2) as usize } else { a as usize };
                    let n = host.shape()[k] as isize;
                    let gone: Vec<usize> = remove.iter().map(|&i| ((i + n) % n) as usize).collect();
                    let keep: Vec<usize> = (0..n as usize).filter(|i| !gone.contains(i)).collect();
                    host.select(Axis(k), &keep)
                }
            };
            assert_eq!(got.shape(), want.shape(), "{name} delete({remove:?}, {axis:?})");
            assert_eq!(
                got.to_vec()?,
                want.iter().copied().collect::<Vec<_>>(),
                "{name} delete({remove:?}, {axis:?})"
            );
        }
        // resize: the flat elements over and over.
        for shape in [vec![5usize], vec![2, 7], vec![3, 4], vec![0], vec![25]] {
            let n: usize = shape.iter().product();
            let got = gpuarray::resize(&dev, &shape)?;
            assert_eq!(got.shape(), &shape[..], "{name} resize {shape:?}");
            let want: Vec<T> = (0..n).map(|i| flat[i % flat.len()]).collect();
            assert_eq!(got.to_vec()?, want, "{name} resize {shape:?}");
        }
        // append: flat, and along each axis.
        let more = Array::from_shape_vec(
            IxDyn(&[host.shape()[0], 2]),
            vec_of(rng, 2 * host.shape()[0], draw),
        )
        .unwrap();
        let dmore = DeviceArray::from_ndarray(ctx, &more)?;
        let got = gpuarray::append(&dev, &dmore, None)?.to_vec()?;
        assert_eq!(
            got,
            flat.iter().chain(more.iter()).copied().collect::<Vec<_>>(),
            "{name} append flat"
        );
        let got = gpuarray::append(&dev, &dmore, Some(1))?;
        let want = gpu_runtime::ndarray::concatenate(Axis(1), &[host.view(), more.view()]).unwrap();
        assert_eq!(
            got.to_vec()?,
            want.iter().copied().collect::<Vec<_>>(),
            "{name} append axis 1"
        );
        assert!(matches!(
            gpuarray::append(&dev, &dmore, Some(0)),
            Err(Error::Shape(ArrayShapeError::JoinShapes { .. }))
        ));
    }
    // An empty array resized gives zeros; deleting outside the axis is refused.
    let empty = DeviceArray::<T, _>::zeros(ctx, 0)?;
    assert_eq!(gpuarray::resize(&empty, &[3])?.to_vec()?, vec![T::zero(); 3]);
    assert!(matches!(
        d.delete(&[4], Some(0)),
        Err(Error::Shape(ArrayShapeError::IndexOutOfRange {
            index: 4,
            len: 3,
            ..
        }))
    ));
    Ok(())
}

/// `ediff1d` without ends, written through `diff` of the flat copy (a second path to the same
/// numbers).
trait FlatDiff<T: Element> {
    fn flat_diff(&self) -> gpu_runtime::Result<Vec<T>>;
}

impl<T: Element> FlatDiff<T> for gpuarray::DeviceArrayView<'_, T, IxDyn> {
    fn flat_diff(&self) -> gpu_runtime::Result<Vec<T>> {
        self.ravel()?.diff(1, 0)?.to_vec()
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn adding_and_removing_elements_match_the_host() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(2718);
    editing(&ctx, &mut rng, &|r: &mut Rng| r.f64() * 10.0)?;
    editing(&ctx, &mut rng, &|r: &mut Rng| r.next_u64() as i32)?;
    editing(&ctx, &mut rng, &|r: &mut Rng| r.next_u64() as u8)?;
    editing(&ctx, &mut rng, &|r: &mut Rng| f16::from_f32(r.f32()))?;
    editing(&ctx, &mut rng, &|r: &mut Rng| Complex64::new(r.f64(), r.f64()))?;
    // trim_zeros: every combination of ends, all zero, none zero.
    for v in [
        vec![0, 0, 1, 0, 2, 0],
        vec![0, 0, 0],
        vec![3, 0, 4],
        vec![],
        vec![0, 5],
    ] {
        let d = DeviceArray::from_ndarray(&ctx, &Array1::from(v.clone()))?;
        let first = v.iter().position(|&x| x != 0);
        let last = v.iter().rposition(|&x| x != 0);
        for (front, back) in [(true, true), (true, false), (false, true), (false, false)] {
            let want: Vec<i32> = match (first, last) {
                (Some(f), Some(l)) => {
                    v[if front { f } else { 0 }..if back { l + 1 } else { v.len() }].to_vec()
                }
                _ => vec![],
            };
            assert_eq!(
                d.trim_zeros(front, back)?.to_vec()?,
                want,
                "trim_zeros({v:?}, {front}, {back})"
            );
        }
    }
    let d = DeviceArray::from_ndarray(&ctx, &arr1(&[0.0f64, -0.0, 1.5, f64::NAN, 0.0]))?;
    assert_eq!(d.trim_zeros(true, true)?.len(), 2);
    // array_equiv: broadcast then equal.
    let a = DeviceArray::from_ndarray(&ctx, &arr1(&[1, 2]))?;
    let b = DeviceArray::from_ndarray(&ctx, &arr2(&[[1, 2], [1, 2]]))?;
    let c = DeviceArray::from_ndarray(&ctx, &arr2(&[[1, 2, 1, 2]]))?;
    let e = DeviceArray::from_ndarray(&ctx, &arr2(&[[1, 2], [1, 3]]))?;
    assert!(gpuarray::array_equiv(&a.view().into_dyn(), &b.view().into_dyn())?);
    assert!(!gpuarray::array_equiv(
        &a.view().into_dyn(),
        &c.view().into_dyn()
    )?);
    assert!(!gpuarray::array_equiv(
        &a.view().into_dyn(),
        &e.view().into_dyn()
    )?);
    assert!(gpuarray::array_equiv(&b.t(), &b.t())?);
    // meshgrid: both indexings, one to three vectors, a 2-d input taken flat.
    let xs = DeviceArray::from_ndarray(&ctx, &arr1(&[1.0f32, 2.0]))?.into_dyn();
    let ys = DeviceArray::from_ndarray(&ctx, &arr2(&[[10.0f32, 20.0], [30.0, 40.0]]))?.into_dyn();
    let zs = DeviceArray::from_ndarray(&ctx, &arr1(&[5.0f32, 6.0, 7.0]))?.into_dyn();
    // The 2-d `ys` is taken in C order.
    let (hx, hy, hz) = ([1.0f32, 2.0], [10.0f32, 20.0, 30.0, 40.0], [5.0f32, 6.0, 7.0]);
    for indexing in [MeshIndexing::Xy, MeshIndexing::Ij] {
        let g = gpuarray::meshgrid(&[&xs, &ys, &zs], indexing)?;
        let shape: Vec<usize> = if indexing == MeshIndexing::Xy {
            vec![4, 2, 3]
        } else {
            vec![2, 4, 3]
        };
        for (k, grid) in g.iter().enumerate() {
            assert_eq!(grid.shape(), &shape[..], "{indexing:?} grid {k}");
            let want = ArrayD::from_shape_fn(IxDyn(&shape), |i| {
                let (ix, iy) = if indexing == MeshIndexing::Xy {
                    (i[1], i[0])
                } else {
                    (i[0], i[1])
                };
                [hx[ix], hy[iy], hz[i[2]]][k]
            });
            assert_eq!(
                grid.to_vec()?,
                want.iter().copied().collect::<Vec<_>>(),
                "{indexing:?} grid {k}"
            );
        }
        assert_eq!(gpuarray::meshgrid(&[&zs], indexing)?[0].to_vec()?, hz);
    }
    let none: [&DeviceArray<f32, IxDyn>; 0] = [];
    assert!(gpuarray::meshgrid(&none, MeshIndexing::Xy)?.is_empty());
    // On a stream.
    let stream = Stream::new(&ctx)?;
    let g = gpuarray::on(&stream).meshgrid(&[&xs, &zs], MeshIndexing::Ij)?;
    let t = gpuarray::on(&stream).tri::<i32>(2, 2, 0)?;
    let l = gpuarray::on(&stream).logspace::<f64>(0.0, 1.0, 2, true, 10.0)?;
    let p = gpuarray::on(&stream).append(&xs, &zs, None)?;
    stream.synchronize()?;
    assert_eq!(g[1].to_vec()?, [5.0, 6.0, 7.0, 5.0, 6.0, 7.0]);
    assert_eq!(t.to_vec()?, [1, 0, 1, 1]);
    assert_eq!(l.to_vec()?, [1.0, 10.0]);
    assert_eq!(p.to_vec()?, [1.0, 2.0, 5.0, 6.0, 7.0]);
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn insert_puts_values_where_numpy_does() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let a = DeviceArray::from_ndarray(
        &ctx,
        &Array::from_shape_vec((3, 4), (0..12i64).collect()).unwrap(),
    )?;
    let up = |v: Vec<i64>| DeviceArray::from_ndarray(&ctx, &Array1::from(v));
    let scalar = |v: i64| DeviceArray::from_ndarray(&ctx, &gpu_runtime::ndarray::arr0(v));
    let rows = |v: &[&[i64]]| -> Vec<i64> { v.iter().flat_map(|r| r.iter().copied()).collect() };
    // np.insert(a, 1, [5, 6, 7], axis=1): a column.
    let got = a.insert(1, &up(vec![5, 6, 7])?, Some(1))?;
    assert_eq!(got.shape(), [3, 5]);
    assert_eq!(
        got.to_vec()?,
        rows(&[&[0, 5, 1, 2, 3], &[4, 6, 5, 6, 7], &[8, 7, 9, 10, 11]])
    );
    // np.insert(a, 1, [5, 6, 7, 8], axis=0): a row.
    let got = a.insert(1, &up(vec![5, 6, 7, 8])?, Some(0))?;
    assert_eq!(
        got.to_vec()?,
        rows(&[&[0, 1, 2, 3], &[5, 6, 7, 8], &[4, 5, 6, 7], &[8, 9, 10, 11]])
    );
    // np.insert(a, [1], [[5], [6], [7]], axis=1): a sequence of one.
    let col = DeviceArray::from_ndarray(&ctx, &arr2(&[[5i64], [6], [7]]))?;
    let got = a.insert_each(&[1], &col, Some(1))?;
    assert_eq!(
        got.to_vec()?,
        rows(&[&[0, 5, 1, 2, 3], &[4, 6, 5, 6, 7], &[8, 7, 9, 10, 11]])
    );
    // np.insert(a, [1], [[1, 2, 3, 4], [5, 6, 7, 8]], axis=0): all slices of the one index.
    let two = DeviceArray::from_ndarray(&ctx, &arr2(&[[1i64, 2, 3, 4], [5, 6, 7, 8]]))?;
    let got = a.insert_each(&[1], &two, Some(0))?;
    assert_eq!(
        got.to_vec()?,
        rows(&[
            &[0, 1, 2, 3],
            &[1, 2, 3, 4],
            &[5, 6, 7, 8],
            &[4, 5, 6, 7],
            &[8, 9, 10, 11]
        ])
    );
    // np.insert(a, [3, 1, 3], [10, 11, 12], axis=1), and a broadcast scalar.
    let got = a.insert_each(&[3, 1, 3], &up(vec![10, 11, 12])?, Some(1))?;
    assert_eq!(
        got.to_vec()?,
        rows(&[
            &[0, 11, 1, 2, 10, 12, 3],
            &[4, 11, 5, 6, 10, 12, 7],
            &[8, 11, 9, 10, 10, 12, 11]
        ])
    );
    let got = a
        .on(&Stream::new(&ctx)?)
        .insert_each(&[3, 1, 3], &scalar(99)?, Some(1))?;
    assert_eq!(
        got.to_vec()?,
        rows(&[
            &[0, 99, 1, 2, 99, 99, 3],
            &[4, 99, 5, 6, 99, 99, 7],
            &[8, 99, 9, 10, 99, 99, 11]
        ])
    );
    // Flattened with a negative index; the end; a scalar row.
    let got = a.insert(-1, &up(vec![10, 11])?, None)?;
    assert_eq!(got.to_vec()?, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 10, 11, 11]);
    let got = a.insert(4, &scalar(0)?, Some(1))?;
    assert_eq!(
        got.to_vec()?,
        rows(&[&[0, 1, 2, 3, 0], &[4, 5, 6, 7, 0], &[8, 9, 10, 11, 0]])
    );
    let got = a.insert(2, &scalar(99)?, Some(-2))?;
    assert_eq!(
        got.to_vec()?,
        rows(&[&[0, 1, 2, 3], &[4, 5, 6, 7], &[99, 99, 99, 99], &[8, 9, 10, 11]])
    );
    // A transposed (strided) f16 array: np.insert(a.T, 0, 7, axis=1).
    let h = a.astype::<f16>()?;
    let got = h.t().insert(
        0,
        &DeviceArray::from_ndarray(&ctx, &gpu_runtime::ndarray::arr0(f16::from_f64(7.0)))?,
        Some(1),
    )?;
    let want: Vec<f16> = (0..4)
        .flat_map(|j| [7.0].into_iter().chain((0..3).map(move |i| (i * 4 + j) as f64)))
        .map(f16::from_f64)
        .collect();
    assert_eq!(got.shape(), [4, 4]);
    assert_eq!(got.to_vec()?, want);
    // NumPy's IndexError and ValueError.
    assert!(matches!(
        a.insert(5, &scalar(1)?, Some(1)),
        Err(Error::Shape(ArrayShapeError::IndexOutOfRange {
            index: 5,
            len: 4,
            ..
        }))
    ));
    assert!(matches!(
        a.insert(1, &up(vec![1, 2])?, Some(1)),
        Err(Error::Shape(ArrayShapeError::Broadcast { .. }))
    ));
    Ok(())
}
