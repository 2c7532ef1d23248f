//! `gradient`, `gradient_x`, `gradients` and `unwrap` on a GPU against NumPy's formulas written
//! on the host in f64, on random data of f64, f32, f16, i32, u8 and Complex64 (gradient) and
//! f64, f32, f16 and i32 (unwrap): 1-d, 2-d and 3-d arrays, every axis by positive and
//! negative number, both edge orders, transposed views, uniform spacing and non-uniform points
//! (f64 and i64), the periods and discontinuities of CuPy's tests; then NumPy's documented
//! examples, the half-period tie, empty and one-sample axes, and the refusals.

use std::f64::consts::TAU;

use gpu_runtime::gpuarray::math::{Float, Inexact};
use gpu_runtime::gpuarray::promote::TrueDivide;
use gpu_runtime::gpuarray::{DeviceArray, Element};
use gpu_runtime::half::f16;
use gpu_runtime::ndarray::{arr1, arr2, ArrayD, Axis, IxDyn};
use gpu_runtime::types::Complex64;
use gpu_runtime::{ArrayShapeError, Context, Error, Result};
use gpu_suite::Rng;

/// NumPy's gradient of `f` along `k` at the points `x` (its non-uniform formulas, which equal
/// the uniform ones for equally spaced points).
fn host_gradient(f: &ArrayD<f64>, k: usize, x: &[f64], edge: usize) -> ArrayD<f64> {
    let n = f.shape()[k];
    ArrayD::from_shape_fn(f.raw_dim(), |idx| {
        let at = |j: usize| {
            let mut p = idx.clone();
            p[k] = j;
            f[p]
        };
        let i = idx[k];
        if i > 0 && i < n - 1 {
            let (d1, d2) = (x[i] - x[i - 1], x[i + 1] - x[i]);
            -d2 / (d1 * (d1 + d2)) * at(i - 1)
                + (d2 - d1) / (d1 * d2) * at(i)
                + d1 / (d2 * (d1 + d2)) * at(i + 1)
        } else if edge == 1 {
            let j = if i == 0 { 0 } else { n - 2 };
            (at(j + 1) - at(j)) / (x[j + 1] - x[j])
        } else if i == 0 {
            let (d1, d2) = (x[1] - x[0], x[2] - x[1]);
            -(2.0 * d1 + d2) / (d1 * (d1 + d2)) * at(0) + (d1 + d2) / (d1 * d2) * at(1)
                - d1 / (d2 * (d1 + d2)) * at(2)
        } else {
            let (d1, d2) = (x[n - 2] - x[n - 3], x[n - 1] - x[n - 2]);
            d2 / (d1 * (d1 + d2)) * at(n - 3) - (d2 + d1) / (d1 * d2) * at(n - 2)
                + (2.0 * d2 + d1) / (d2 * (d1 + d2)) * at(n - 1)
        }
    })
}

/// Python's `%`: the sign of the divisor.
fn py_mod(a: f64, b: f64) -> f64 {
    let r = a % b;
    if r != 0.0 && (r < 0.0) != (b < 0.0) {
        r + b
    } else {
        r
    }
}

/// NumPy's unwrap of `p` along `k`.
fn host_unwrap(p: &ArrayD<f64>, k: usize, discont: Option<f64>, period: f64) -> ArrayD<f64> {
    let high = period / 2.0;
    let discont = discont.unwrap_or(high);
    let mut up = p.clone();
    for mut lane in up.lanes_mut(Axis(k)) {
        let orig = lane.to_vec();
        let mut sum = 0.0;
        for i in 1..orig.len() {
            let dd = orig[i] - orig[i - 1];
            let mut ddmod = py_mod(dd + high, period) - high;
            if ddmod == -high && dd > 0.0 {
                ddmod = high;
            }
            sum += if dd.abs() < discont { 0.0 } else { ddmod - dd };
            lane[i] += sum;
        }
    }
    up
}

/// An element type of the gradient tests: random samples, their real and imaginary parts,
/// the result's parts, and the tolerance relative to the result's scale.
struct GradType<T, G> {
    gen: fn(&mut Rng) -> T,
    parts: fn(T) -> [f64; 2],
    back: fn(G) -> [f64; 2],
    rtol: f64,
}

/// `got` against the two parts of `want`, within `rtol * (|want| + scale)`.
fn check<T, G: Element>(
    got: &DeviceArray<G, IxDyn>,
    want: &[ArrayD<f64>; 2],
    ty: &GradType<T, G>,
    scale: f64,
    what: &str,
) -> Result<()> {
    let got = got.to_ndarray()?;
    assert_eq!(got.shape(), want[0].shape(), "{what}");
    for (g, (w0, w1)) in got.iter().zip(want[0].iter().zip(want[1].iter())) {
        for (g, w) in (ty.back)(*g).into_iter().zip([*w0, *w1]) {
            assert!(
                (g - w).abs() <= ty.rtol * (w.abs() + scale),
                "{what}: {g} against {w}"
            );
        }
    }
    Ok(())
}

fn is_gradient_error<T>(r: &Result<T>, axis: usize, len: usize, edge_order: usize) -> bool {
    matches!(r, Err(Error::Shape(ArrayShapeError::Gradient { axis: a, len: l, edge_order: o }))
        if (*a, *l, *o) == (axis, len, edge_order))
}

fn gradient_case<T: TrueDivide<Quotient = G>, G: Inexact>(
    ctx: &Context,
    rng: &mut Rng,
    ty: &GradType<T, G>,
) -> Result<()> {
    for shape in [&[2usize][..], &[3], &[5], &[17], &[4, 6], &[3, 2, 5], &[3, 1, 5]] {
        let size = shape.iter().product();
        let h = ArrayD::from_shape_vec(IxDyn(shape), (0..size).map(|_| (ty.gen)(rng)).collect()).unwrap();
        let d = DeviceArray::from_ndarray(ctx, &h)?;
        for (host, dev) in [(h.clone(), d.view()), (h.t().to_owned(), d.t())] {
            let f = [0, 1].map(|p| host.mapv(|v| (ty.parts)(v)[p]));
            let big = f.iter().flatten().fold(1.0f64, |m, v| m.max(v.abs()));
            let nd = host.ndim();
            let name = std::any::type_name::<T>();
            for edge in 1..=2 {
                for k in 0..nd {
                    let n = host.shape()[k];
                    for axis in [k as isize, k as isize - nd as isize] {
                        let what = format!("{name} {:?} axis {axis} edge {edge}", host.shape());
                        if n < edge + 1 {
                            assert!(
                                is_gradient_error(&dev.gradient(1.0, axis, edge), k, n, edge),
                                "{what}"
                            );
                            continue;
                        }
                        let dx = [0.5, 1.0, 2.5][rng.next_u64() as usize % 3];
                        let uniform: Vec<f64> = (0..n).map(|i| i as f64 * dx).collect();
                        // Points on a grid of 1/8 (exact in f16 too, so the device sees the
                        // reference's points), and integer points.
                        let mut grid = vec![(rng.next_u64() % 64) as f64 / 8.0 - 4.0];
                        let mut ints = vec![(rng.next_u64() % 11) as i64 - 5];
                        for _ in 1..n {
                            grid.push(grid.last().unwrap() + (1 + rng.next_u64() % 16) as f64 / 8.0);
                            ints.push(ints.last().unwrap() + 1 + (rng.next_u64() % 3) as i64);
                        }
                        let xg = DeviceArray::from_ndarray(ctx, &arr1(&grid))?;
                        let xi = DeviceArray::from_ndarray(ctx, &arr1(&ints))?;
                        let int_points: Vec<f64> = ints.iter().map(|&v| v as f64).collect();
                        for (xs, got, how) in [
                            (uniform, dev.gradient(dx, axis, edge)?, "dx"),
                            (grid, dev.gradient_x(&xg, axis, edge)?, "f64 points"),
                            (int_points, dev.gradient_x(&xi, axis, edge)?, "i64 points"),
                        ] {
                            let step = xs.windows(2).map(|w| w[1] - w[0]).fold(f64::INFINITY, f64::min);
                            let want = [0, 1].map(|p| host_gradient(&f[p], k, &xs, edge));
                            check(&got, &want, ty, big / step, &format!("{what} {how}"))?;
                        }
                    }
                }
                // Every axis at once: unit spacing, one for all, one per axis.
                let per_axis: Vec<f64> = (0..nd).map(|k| 0.5 + k as f64).collect();
                for dxs in [vec![], vec![2.0], per_axis] {
                    let r = dev.gradients(&dxs, edge);
                    let what = format!("{name} {:?} gradients {dxs:?} edge {edge}", host.shape());
                    if let Some(k) = (0..nd).find(|&k| host.shape()[k] < edge + 1) {
                        assert!(is_gradient_error(&r, k, host.shape()[k], edge), "{what}");
                        continue;
                    }
                    let r = r?;
                    assert_eq!(r.len(), nd, "{what}");
                    for (k, got) in r.iter().enumerate() {
                        let dx = dxs.get(k).or(dxs.first()).copied().unwrap_or(1.0);
                        let xs: Vec<f64> = (0..host.shape()[k]).map(|i| i as f64 * dx).collect();
                        let want = [0, 1].map(|p| host_gradient(&f[p], k, &xs, edge));
                        check(got, &want, ty, big / dx, &format!("{what} axis {k}"))?;
                    }
                }
            }
        }
    }
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn gradients_match_numpy_on_every_type() -> Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(2718);
    let real = |v: f64| [v, 0.0];
    let as_f64 = GradType {
        gen: |r: &mut Rng| r.f64() * 4.0,
        parts: real,
        back: real,
        rtol: 1e-12,
    };
    gradient_case(&ctx, &mut rng, &as_f64)?;
    let f32s = GradType {
        gen: |r: &mut Rng| r.f32() * 4.0,
        parts: |v: f32| [v as f64, 0.0],
        back: |v: f32| [v as f64, 0.0],
        rtol: 1e-5,
    };
    gradient_case(&ctx, &mut rng, &f32s)?;
    // f16 computes in f16: CuPy's own test allows 2e-2.
    let f16s = GradType {
        gen: |r: &mut Rng| f16::from_f64(r.f64() * 4.0),
        parts: |v: f16| [v.to_f64(), 0.0],
        back: |v: f16| [v.to_f64(), 0.0],
        rtol: 2e-2,
    };
    gradient_case(&ctx, &mut rng, &f16s)?;
    // Integers give f64; u8 differences below zero must not wrap.
    let i32s = GradType {
        gen: |r: &mut Rng| (r.next_u64() % 201) as i32 - 100,
        parts: |v: i32| [v as f64, 0.0],
        back: real,
        rtol: 1e-12,
    };
    gradient_case(&ctx, &mut rng, &i32s)?;
    let u8s = GradType {
        gen: |r: &mut Rng| r.next_u64() as u8,
        parts: |v: u8| [v as f64, 0.0],
        back: real,
        rtol: 1e-12,
    };
    gradient_case(&ctx, &mut rng, &u8s)?;
    // The gradient is linear with real weights: each part is the gradient of that part.
    let complex = |z: Complex64| [z.re, z.im];
    let c64 = GradType {
        gen: |r: &mut Rng| Complex64::new(r.f64() * 4.0, r.f64() * 4.0),
        parts: complex,
        back: complex,
        rtol: 1e-12,
    };
    gradient_case(&ctx, &mut rng, &c64)
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn gradient_examples_and_refusals() -> Result<()> {
    let ctx = Context::default()?;
    // NumPy's documented examples.
    let f = DeviceArray::from_ndarray(&ctx, &arr1(&[1.0f64, 2.0, 4.0, 7.0, 11.0, 16.0]))?;
    assert_eq!(f.gradient(1.0, 0, 1)?.to_vec()?, [1.0, 1.5, 2.5, 3.5, 4.5, 5.0]);
    assert_eq!(
        f.gradient(2.0, -1, 1)?.to_vec()?,
        [0.5, 0.75, 1.25, 1.75, 2.25, 2.5]
    );
    let x = DeviceArray::from_ndarray(&ctx, &arr1(&[0.0f64, 1.0, 1.5, 3.5, 4.0, 6.0]))?;
    let got = f.gradient_x(&x, 0, 1)?.to_vec()?;
    for (g, w) in got.iter().zip([1.0, 3.0, 3.5, 6.7, 6.9, 2.5]) {
        assert!((g - w).abs() < 1e-12, "{got:?}");
    }
    let sq = DeviceArray::from_ndarray(&ctx, &arr1(&[0i64, 1, 4, 9, 16]))?;
    assert_eq!(sq.gradient(1.0, 0, 1)?.to_vec()?, [1.0, 2.0, 4.0, 6.0, 7.0]);
    assert_eq!(sq.gradient(1.0, 0, 2)?.to_vec()?, [0.0, 2.0, 4.0, 6.0, 8.0]);
    let m = DeviceArray::from_ndarray(&ctx, &arr2(&[[1i32, 2, 6], [3, 4, 5]]))?;
    let g = m.gradients(&[], 1)?;
    assert_eq!(g[0].to_vec()?, [2.0, 2.0, -1.0, 2.0, 2.0, -1.0]);
    assert_eq!(g[1].to_vec()?, [1.0, 2.5, 4.0, 1.0, 1.0, 1.0]);

    // Edge orders other than 1 and 2, and axes too short for the order.
    assert!(is_gradient_error(&f.gradient(1.0, 0, 0), 0, 6, 0));
    assert!(is_gradient_error(&f.gradient(1.0, -1, 3), 0, 6, 3));
    assert!(is_gradient_error(&f.gradients(&[], 0), 0, 6, 0));
    let two = DeviceArray::from_ndarray(&ctx, &arr1(&[1.0f32, 2.0]))?;
    assert!(is_gradient_error(&two.gradient(1.0, 0, 2), 0, 2, 2));
    assert_eq!(two.gradient(0.5, 0, 1)?.to_vec()?, [2.0f32, 2.0]);
    let thin = DeviceArray::from_ndarray(&ctx, &ArrayD::<f64>::zeros(IxDyn(&[3, 1, 5])))?;
    for (axis, edge) in [(1, 1), (-2, 1), (1, 2), (-2, 2)] {
        assert!(is_gradient_error(&thin.gradient(1.0, axis, edge), 1, 1, edge));
    }
    assert!(is_gradient_error(&thin.gradients(&[1.0], 1), 1, 1, 1));
    assert!(is_gradient_error(
        &thin.gradient_x(&arr_dev(&ctx, 1)?, 1, 1),
        1,
        1,
        1
    ));
    // An empty array along a long enough axis gives an empty result; an empty axis is refused.
    let empty = DeviceArray::from_ndarray(&ctx, &ArrayD::<f64>::zeros(IxDyn(&[0, 4])))?;
    assert_eq!(empty.gradient(1.0, 1, 2)?.shape(), [0, 4]);
    assert!(is_gradient_error(&empty.gradient(1.0, 0, 1), 0, 0, 1));

    // Points of another length than the axis, and a spacing count other than 0, 1 or ndim.
    let counts = |r: &Result<_>, first: usize, second: usize| {
        matches!(r, Err(Error::Shape(ArrayShapeError::ElementCounts { first: a, second: b, .. }))
            if (*a, *b) == (first, second))
    };
    assert!(counts(&f.gradient_x(&arr_dev(&ctx, 5)?, 0, 1).map(drop), 6, 5));
    assert!(counts(
        &thin.gradient_x(&arr_dev(&ctx, 4)?, -1, 2).map(drop),
        5,
        4
    ));
    assert!(counts(&thin.gradients(&[1.0, 2.0], 1).map(drop), 3, 2));
    assert!(counts(&m.gradients(&[1.0, 2.0, 3.0], 1).map(drop), 2, 3));
    // Axes the array does not have.
    let no_axis = |r: &Result<_>, axis: usize, axes: usize| {
        matches!(r, Err(Error::Shape(ArrayShapeError::NoSuchAxis { axis: a, axes: b, .. }))
            if (*a, *b) == (axis, axes))
    };
    assert!(no_axis(&m.gradient(1.0, 2, 1).map(drop), 2, 2));
    assert!(no_axis(&m.gradient(1.0, -3, 1).map(drop), 3, 2));
    assert!(no_axis(&f.gradient_x(&x, 1, 1).map(drop), 1, 1));
    assert!(no_axis(&m.unwrap(None, 2, TAU).map(drop), 2, 2));
    assert!(no_axis(&f.unwrap(None, -2, TAU).map(drop), 2, 1));
    Ok(())
}

/// `0, 1, ..., n - 1` as f64 sample points on the device.
fn arr_dev(ctx: &Context, n: usize) -> Result<DeviceArray<f64, gpu_runtime::ndarray::Ix1>> {
    DeviceArray::from_ndarray(ctx, &arr1(&(0..n).map(|i| i as f64).collect::<Vec<_>>()))
}

/// An element type of the unwrap tests: rounding an f64 to it, the conversion, the result
/// back in f64, and the tolerance relative to the data's scale.
struct PhaseType<T, G> {
    round: fn(f64) -> f64,
    to: fn(f64) -> T,
    back: fn(G) -> f64,
    rtol: f64,
}

fn unwrap_case<T: TrueDivide<Quotient = G>, G: Float>(
    ctx: &Context,
    rng: &mut Rng,
    ty: &PhaseType<T, G>,
) -> Result<()> {
    let name = std::any::type_name::<T>();
    for period in [TAU, 1.2, 4.5] {
        for discont in [None, Some(1.0), Some(5.0)] {
            // No difference near a boundary, where the rounding of f32 and f16 could decide.
            let (half, margin) = (period / 2.0, 0.03 * period);
            let safe = |dd: f64| {
                let r = py_mod(dd + half, period);
                (dd.abs() - discont.unwrap_or(half)).abs() >= margin && r >= margin && period - r >= margin
            };
            for shape in [&[2usize][..], &[3], &[5], &[17], &[4, 6]] {
                let nd = shape.len();
                for k in 0..nd {
                    // Random steps of up to 1.5 periods along `k`, so that jumps occur.
                    let mut p = ArrayD::<f64>::zeros(IxDyn(shape));
                    for mut lane in p.lanes_mut(Axis(k)) {
                        lane[0] = (ty.round)(rng.f64() * period);
                        for i in 1..lane.len() {
                            let prev = lane[i - 1];
                            lane[i] = loop {
                                let q = (ty.round)(prev + 1.5 * period * rng.f64());
                                if safe(q - prev) {
                                    break q;
                                }
                            };
                        }
                    }
                    let want = host_unwrap(&p, k, discont, period);
                    let scale = p
                        .iter()
                        .zip(&want)
                        .fold(1.0f64, |m, (a, w)| m.max(a.abs()).max((w - a).abs()));
                    let plain = DeviceArray::from_ndarray(ctx, &p.mapv(ty.to))?;
                    // The same array seen through `.t()` of its C-order transpose.
                    let flipped = DeviceArray::from_ndarray(ctx, &p.t().as_standard_layout().mapv(ty.to))?;
                    for axis in [k as isize, k as isize - nd as isize] {
                        for (dev, how) in [(plain.view(), "C order"), (flipped.t(), "transposed")] {
                            let what = format!("{name} {shape:?} axis {axis} {how} {discont:?} {period}");
                            let got = dev.unwrap(discont, axis, period)?.to_ndarray()?;
                            assert_eq!(got.shape(), want.shape(), "{what}");
                            for (g, w) in got.iter().zip(&want) {
                                let g = (ty.back)(*g);
                                assert!((g - w).abs() <= ty.rtol * scale, "{what}: {g} against {w}");
                            }
                        }
                    }
                }
            }
        }
    }
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn unwrap_matches_numpy_on_random_phases() -> Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(31415);
    let same = |v: f64| v;
    unwrap_case(
        &ctx,
        &mut rng,
        &PhaseType {
            round: same,
            to: same,
            back: same,
            rtol: 1e-12,
        },
    )?;
    let f32s = PhaseType {
        round: |v| v as f32 as f64,
        to: |v| v as f32,
        back: |v: f32| v as f64,
        rtol: 1e-5,
    };
    unwrap_case(&ctx, &mut rng, &f32s)?;
    // f16 computes in f16, with the period rounded to f16 too.
    let f16s = PhaseType {
        round: |v| f16::from_f64(v).to_f64(),
        to: f16::from_f64,
        back: |v: f16| v.to_f64(),
        rtol: 1e-2,
    };
    unwrap_case(&ctx, &mut rng, &f16s)?;
    let i32s = PhaseType {
        round: f64::round,
        to: |v| v as i32,
        back: same,
        rtol: 1e-12,
    };
    unwrap_case(&ctx, &mut rng, &i32s)
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn unwrap_examples_ties_and_short_axes() -> Result<()> {
    let ctx = Context::default()?;
    let ints = |v: &[i32]| DeviceArray::from_ndarray(&ctx, &arr1(v));
    // The docstring's example and NumPy's: integers give f64.
    assert_eq!(
        ints(&[0, 1, 5, 6])?.unwrap(None, -1, 4.0)?.to_vec()?,
        [0.0, 1.0, 1.0, 2.0]
    );
    assert_eq!(
        ints(&[0, 1, 2, -1, 0])?.unwrap(None, 0, 4.0)?.to_vec()?,
        [0.0, 1.0, 2.0, 3.0, 4.0]
    );
    let p = ints(&[2, 3, 4, 5, 2, 3, 4, 5])?;
    assert_eq!(
        p.unwrap(None, 0, 4.0)?.to_vec()?,
        [2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0]
    );
    let p = ints(&[1, 2, 3, 4, 5, 6, 1, 2, 3])?;
    assert_eq!(
        p.unwrap(None, 0, 6.0)?.to_vec()?,
        (1..10).map(f64::from).collect::<Vec<_>>()
    );
    // NumPy's `phase = linspace(0, pi, 5); phase[3:] += pi; unwrap(phase)`.
    let q = std::f64::consts::FRAC_PI_4;
    let phase = DeviceArray::from_ndarray(&ctx, &arr1(&[0.0, q, 2.0 * q, 7.0 * q, 8.0 * q]))?;
    let got = phase.unwrap(None, 0, TAU)?.to_vec()?;
    for (g, w) in got.iter().zip([0.0, q, 2.0 * q, -q, 0.0]) {
        assert!((g - w).abs() < 1e-12, "{got:?}");
    }
    // Jumps of exactly half a period: upward ones stay upward (2, 6 -> +2), downward ones
    // downward (-2, -6 -> -2); the discontinuity itself is corrected (`<`, not `<=`).
    let ties = DeviceArray::from_ndarray(&ctx, &arr1(&[0.0f64, 2.0, 0.0, -2.0, 4.0, -2.0]))?;
    let want = [0.0, 2.0, 0.0, -2.0, 0.0, -2.0];
    assert_eq!(ties.unwrap(None, 0, 4.0)?.to_vec()?, want);
    let host = host_unwrap(&arr1(&[0.0, 2.0, 0.0, -2.0, 4.0, -2.0]).into_dyn(), 0, None, 4.0);
    assert_eq!(
        host.iter().copied().collect::<Vec<_>>(),
        want,
        "the host's reference"
    );
    let step = ints(&[0, 3])?;
    assert_eq!(step.unwrap(Some(3.0), 0, 4.0)?.to_vec()?, [0.0, -1.0]);
    assert_eq!(step.unwrap(Some(3.5), 0, 4.0)?.to_vec()?, [0.0, 3.0]);
    // Empty arrays and one-sample axes: the input, converted.
    let empty = DeviceArray::from_ndarray(&ctx, &ArrayD::<f32>::zeros(IxDyn(&[0])))?;
    assert_eq!(empty.unwrap(None, 0, TAU)?.shape(), [0]);
    let empty = DeviceArray::from_ndarray(&ctx, &ArrayD::<f64>::zeros(IxDyn(&[3, 0])))?;
    assert_eq!(empty.unwrap(None, 0, TAU)?.shape(), [3, 0]);
    let row = DeviceArray::from_ndarray(&ctx, &arr2(&[[0i32, 9, -9, 20, 3]]))?;
    for axis in [0, -2] {
        let got = row.unwrap(Some(1.0), axis, TAU)?;
        assert_eq!(got.shape(), [1, 5]);
        assert_eq!(got.to_vec()?, [0.0, 9.0, -9.0, 20.0, 3.0]);
    }
    let one = DeviceArray::from_ndarray(&ctx, &arr1(&[f16::from_f32(7.5)]))?;
    assert_eq!(one.unwrap(None, 0, 1.2)?.to_vec()?, [f16::from_f32(7.5)]);
    Ok(())
}
