//! `trapezoid` (by `dx` and by sample points), `unravel_index`, `ravel_multi_index` and
//! `indices` on a GPU against NumPy's definitions written on the host, on random data over
//! every axis and shape edge (empty and one-sample axes, transposed views), each mode of
//! `ravel_multi_index`, and the refusals.

use gpu_runtime::gpuarray::{self, DeviceArray, IndexMode};
use gpu_runtime::half::f16;
use gpu_runtime::ndarray::{arr1, Array, ArrayD, Dimension, IxDyn};
use gpu_runtime::{ArrayShapeError, Context, Error};
use gpu_suite::Rng;

/// NumPy's trapezoid along `k`: `sum(d * (y[1:] + y[:-1]) / 2)`, `d` per interval.
fn host_trapezoid(y: &ArrayD<f64>, k: usize, d: impl Fn(&[usize]) -> f64) -> ArrayD<f64> {
    let n = y.shape()[k];
    let mut shape = y.shape().to_vec();
    shape.remove(k);
    ArrayD::from_shape_fn(IxDyn(&shape), |i| {
        let mut at: Vec<usize> = i.slice().to_vec();
        at.insert(k, 0);
        (1..n)
            .map(|j| {
                let mut hi = at.clone();
                hi[k] = j;
                let mut lo = at.clone();
                lo[k] = j - 1;
                d(&lo) * (y[IxDyn(&hi)] + y[IxDyn(&lo)]) / 2.0
            })
            .sum()
    })
}

fn near(got: &[f64], want: &ArrayD<f64>, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}");
    for (g, w) in got.iter().zip(want.iter()) {
        assert!(
            (g - w).abs() <= 1e-9 * w.abs().max(1.0),
            "{what}: {g} against {w}"
        );
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn trapezoid_integrals_match_the_host() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(1234);
    for shape in [vec![7usize], vec![1], vec![0], vec![4, 5], vec![3, 1, 6]] {
        let n: usize = shape.iter().product();
        let h =
            Array::from_shape_vec(IxDyn(&shape), (0..n).map(|_| rng.f64() * 4.0 - 2.0).collect()).unwrap();
        let d = DeviceArray::from_ndarray(&ctx, &h)?;
        for (host, dev) in [(h.clone(), d.view()), (h.t().to_owned(), d.t())] {
            let nd = host.ndim();
            for k in 0..nd {
                let axis = if k % 2 == 0 {
                    k as isize
                } else {
                    k as isize - nd as isize
                };
                let what = format!("{:?} axis {axis}", host.shape());
                near(
                    &dev.trapezoid(0.25, axis)?.to_vec()?,
                    &host_trapezoid(&host, k, |_| 0.25),
                    &format!("dx {what}"),
                );
                // Sample points: 1-d along the axis, and of y's shape.
                let len = host.shape()[k];
                let mut xs: Vec<f64> = (0..len).map(|_| rng.f64() * 3.0).collect();
                xs.sort_by(f64::total_cmp);
                let dx1 = DeviceArray::from_ndarray(&ctx, &arr1(&xs))?;
                let want = host_trapezoid(&host, k, |lo| xs[lo[k] + 1] - xs[lo[k]]);
                near(
                    &dev.trapezoid_x(&dx1, axis)?.to_vec()?,
                    &want,
                    &format!("x 1-d {what}"),
                );
                let xfull = host.mapv(|_| rng.f64());
                let dfull = DeviceArray::from_ndarray(&ctx, &xfull)?;
                let want = host_trapezoid(&host, k, |lo| {
                    let mut hi = lo.to_vec();
                    hi[k] += 1;
                    xfull[IxDyn(&hi)] - xfull[IxDyn(lo)]
                });
                near(
                    &dev.trapezoid_x(&dfull, axis)?.to_vec()?,
                    &want,
                    &format!("x full {what}"),
                );
            }
        }
    }
    // f32 and f16 samples: computed in their own type (NumPy keeps it).
    let y = DeviceArray::from_ndarray(&ctx, &arr1(&[1.0f32, 2.0, 3.0]))?;
    assert_eq!(y.trapezoid(1.0, 0)?.to_vec()?, [4.0]);
    let y16 = DeviceArray::from_ndarray(
        &ctx,
        &arr1(&[f16::from_f32(1.0), f16::from_f32(2.0), f16::from_f32(3.0)]),
    )?;
    assert_eq!(y16.trapezoid(2.0, 0)?.to_vec()?, [f16::from_f32(8.0)]);
    // NumPy's examples: trapezoid([1, 2, 3], x=[4, 6, 8]) is 8; x of another length is refused.
    let y = DeviceArray::from_ndarray(&ctx, &arr1(&[1.0f64, 2.0, 3.0]))?;
    let x = DeviceArray::from_ndarray(&ctx, &arr1(&[4.0f64, 6.0, 8.0]))?;
    assert_eq!(y.trapezoid_x(&x, 0)?.to_vec()?, [8.0]);
    let short = DeviceArray::from_ndarray(&ctx, &arr1(&[4.0f64, 6.0]))?;
    assert!(matches!(
        y.trapezoid_x(&short, 0),
        Err(Error::Shape(ArrayShapeError::ElementCounts {
            first: 3,
            second: 2,
            ..
        }))
    ));
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn flat_indices_and_coordinates_match_numpy() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(4321);
    for shape in [vec![7usize, 6], vec![2, 3, 4], vec![5], vec![1, 9, 1]] {
        let size: usize = shape.iter().product();
        let flat: Vec<i64> = (0..300).map(|_| (rng.next_u64() % size as u64) as i64).collect();
        let h = Array::from_shape_vec(IxDyn(&[20, 15]), flat.clone()).unwrap();
        let d = DeviceArray::from_ndarray(&ctx, &h)?;
        let coords = gpuarray::unravel_index(&d, &shape)?;
        assert_eq!(coords.len(), shape.len());
        let mut got: Vec<Vec<i64>> = Vec::new();
        for (k, c) in coords.iter().enumerate() {
            assert_eq!(c.shape(), [20, 15]);
            let stride: usize = shape[k + 1..].iter().product();
            let want: Vec<i64> = flat
                .iter()
                .map(|&i| (i as usize / stride % shape[k]) as i64)
                .collect();
            let g = c.to_vec()?;
            assert_eq!(g, want, "unravel_index {shape:?} axis {k}");
            got.push(g);
        }
        // And back, in every mode (all in range here).
        let refs: Vec<_> = coords.iter().collect();
        for mode in [IndexMode::Raise, IndexMode::Wrap, IndexMode::Clip] {
            assert_eq!(
                gpuarray::ravel_multi_index(&refs, &shape, mode)?.to_vec()?,
                flat,
                "{shape:?} {mode:?}"
            );
        }
        // i32 coordinates out of range: wrapped and clipped as NumPy does, refused by Raise.
        let wild: Vec<Vec<i32>> = shape
            .iter()
            .map(|&dim| {
                (0..50)
                    .map(|_| (rng.next_u64() % (4 * dim as u64 + 1)) as i32 - 2 * dim as i32)
                    .collect()
            })
            .collect();
        let dev: Vec<_> = wild
            .iter()
            .map(|w| DeviceArray::from_ndarray(&ctx, &arr1(w)))
            .collect::<gpu_runtime::Result<_>>()?;
        let refs: Vec<_> = dev.iter().collect();
        let strides: Vec<i64> = (0..shape.len())
            .map(|k| shape[k + 1..].iter().product::<usize>() as i64)
            .collect();
        for mode in [IndexMode::Wrap, IndexMode::Clip] {
            let want: Vec<i64> = (0..50)
                .map(|j| {
                    (0..shape.len())
                        .map(|k| {
                            let (c, dim) = (i64::from(wild[k][j]), shape[k] as i64);
                            let c = if mode == IndexMode::Wrap {
                                c.rem_euclid(dim)
                            } else {
                                c.clamp(0, dim - 1)
                            };
                            c * strides[k]
                        })
                        .sum()
                })
                .collect();
            assert_eq!(
                gpuarray::ravel_multi_index(&refs, &shape, mode)?.to_vec()?,
                want,
                "{shape:?} {mode:?} out of range"
            );
        }
        let out_of_range = wild
            .iter()
            .zip(&shape)
            .any(|(w, &dim)| w.iter().any(|&c| c < 0 || c as usize >= dim));
        assert_eq!(
            matches!(
                gpuarray::ravel_multi_index(&refs, &shape, IndexMode::Raise),
                Err(Error::Shape(ArrayShapeError::IndexOutOfRange { .. }))
            ),
            out_of_range
        );
    }
    // NumPy's examples: unravel_index([22, 41, 37], (7, 6)); ravel_multi_index(([3, 6, 6], [4, 5, 1]), (7, 6)) is [22, 41, 37].
    let i = DeviceArray::from_ndarray(&ctx, &arr1(&[22i64, 41, 37]))?;
    let c = gpuarray::unravel_index(&i, &[7, 6])?;
    assert_eq!((c[0].to_vec()?, c[1].to_vec()?), (vec![3, 6, 6], vec![4, 5, 1]));
    assert_eq!(
        gpuarray::ravel_multi_index(&[&c[0], &c[1]], &[7, 6], IndexMode::Raise)?.to_vec()?,
        [22, 41, 37]
    );
    let bad = DeviceArray::from_ndarray(&ctx, &arr1(&[42i64]))?;
    assert!(matches!(
        gpuarray::unravel_index(&bad, &[7, 6]),
        Err(Error::Shape(ArrayShapeError::IndexOutOfRange {
            index: 42,
            len: 42,
            ..
        }))
    ));
    assert!(matches!(
        gpuarray::ravel_multi_index(&[&c[0]], &[7, 6], IndexMode::Raise),
        Err(Error::Shape(ArrayShapeError::ElementCounts {
            first: 2,
            second: 1,
            ..
        }))
    ));
    // indices: NumPy's indices((2, 3)), and three axes against the host.
    let g = gpuarray::indices(&ctx, &[2, 3])?;
    assert_eq!(g.shape(), [2, 2, 3]);
    assert_eq!(g.to_vec()?, [0, 0, 0, 1, 1, 1, 0, 1, 2, 0, 1, 2]);
    let dims = [3usize, 1, 4];
    let g = gpuarray::indices(&ctx, &dims)?;
    let want = ArrayD::from_shape_fn(IxDyn(&[3, 3, 1, 4]), |i| i[1 + i[0]] as i64);
    assert_eq!(g.to_vec()?, want.iter().copied().collect::<Vec<_>>());
    assert_eq!(gpuarray::indices(&ctx, &[0, 2])?.shape(), [2, 0, 2]);
    Ok(())
}
