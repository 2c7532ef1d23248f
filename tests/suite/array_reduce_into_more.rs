//! The `out=` forms of `var`, `std`, `ptp` and of the NaN-ignoring reductions (`var_into`,
//! `std_into`, `ptp_into`, `nansum_into`, `nanprod_into`, `nanmean_into`, `nanvar_into`,
//! `nanstd_into`, `nanmax_into`, `nanmin_into` and their `_axis_into` forms), on the GPU
//! against host references on random data (NaN scattered in for the `nan` forms): over every
//! axis (0-d and keepdims-shaped `out`), along each axis with and without `keepdims`, from C-order
//! and transposed inputs into C-order, Fortran-order, stepped, reversed and transposed `out`
//! views, on a stream; `out` of another type by `same_kind`; and the typed errors (a wrong
//! shape writes nothing, a refused cast, an empty array).

use gpu_runtime::gpuarray::{DeviceArray, DeviceArrayView, DeviceArrayViewMut, ReduceAxis};
use gpu_runtime::ndarray::{Array, ArrayD, Axis, IxDyn, ShapeBuilder, SliceInfo, SliceInfoElem};
use gpu_runtime::{ArgumentError, ArrayShapeError, Context, Error, Stream};
use gpu_suite::Rng;

type Res = gpu_runtime::Result<()>;
type Input<'a> = DeviceArrayView<'a, f32, IxDyn>;
type Out<'a> = DeviceArrayViewMut<'a, f64, IxDyn>;

/// One reduction under test: its name, the call over every axis, the call along an axis, the
/// host reference of one lane, and whether its input holds NaN.
struct Case {
    name: &'static str,
    all: fn(&Input<'_>, &mut Out<'_>) -> Res,
    along: fn(&Input<'_>, ReduceAxis, &mut Out<'_>) -> Res,
    host: fn(&[f64]) -> f64,
    nan: bool,
}

fn var_n(v: &[f64], ddof: f64) -> f64 {
    let n = v.len() as f64;
    let m = v.iter().sum::<f64>() / n;
    v.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (n - ddof)
}
fn ptp(v: &[f64]) -> f64 {
    v.iter().copied().fold(f64::NEG_INFINITY, f64::max) - v.iter().copied().fold(f64::INFINITY, f64::min)
}
fn numbers(v: &[f64]) -> Vec<f64> {
    v.iter().copied().filter(|x| !x.is_nan()).collect()
}
fn nanvar_n(v: &[f64], ddof: f64) -> f64 {
    let w = numbers(v);
    if (w.len() as f64) <= ddof {
        return f64::NAN;
    }
    var_n(&w, ddof)
}
fn nanmax(v: &[f64]) -> f64 {
    numbers(v).into_iter().fold(f64::NAN, f64::max)
}
fn nanmin(v: &[f64]) -> f64 {
    numbers(v).into_iter().fold(f64::NAN, f64::min)
}

const CASES: [Case; 10] = [
    Case {
        name: "var(ddof=0)",
        all: |a, o| a.var_into(0, o),
        along: |a, k, o| a.var_axis_into(k, 0, o),
        host: |v| var_n(v, 0.0),
        nan: false,
    },
    Case {
        name: "std(ddof=1)",
        all: |a, o| a.std_into(1, o),
        along: |a, k, o| a.std_axis_into(k, 1, o),
        host: |v| var_n(v, 1.0).sqrt(),
        nan: false,
    },
    Case {
        name: "ptp",
        all: |a, o| a.ptp_into(o),
        along: |a, k, o| a.ptp_axis_into(k, o),
        host: ptp,
        nan: false,
    },
    Case {
        name: "nansum",
        all: |a, o| a.nansum_into(o),
        along: |a, k, o| a.nansum_axis_into(k, o),
        host: |v| numbers(v).iter().sum(),
        nan: true,
    },
    Case {
        name: "nanprod",
        all: |a, o| a.nanprod_into(o),
        along: |a, k, o| a.nanprod_axis_into(k, o),
        host: |v| numbers(v).iter().product(),
        nan: true,
    },
    Case {
        name: "nanmean",
        all: |a, o| a.nanmean_into(o),
        along: |a, k, o| a.nanmean_axis_into(k, o),
        host: |v| {
            let w = numbers(v);
            w.iter().sum::<f64>() / w.len() as f64
        },
        nan: true,
    },
    Case {
        name: "nanvar(ddof=1)",
        all: |a, o| a.nanvar_into(1, o),
        along: |a, k, o| a.nanvar_axis_into(k, 1, o),
        host: |v| nanvar_n(v, 1.0),
        nan: true,
    },
    Case {
        name: "nanstd(ddof=0)",
        all: |a, o| a.nanstd_into(0, o),
        along: |a, k, o| a.nanstd_axis_into(k, 0, o),
        host: |v| nanvar_n(v, 0.0).sqrt(),
        nan: true,
    },
    Case {
        name: "nanmax",
        all: |a, o| a.nanmax_into(o),
        along: |a, k, o| a.nanmax_axis_into(k, o),
        host: nanmax,
        nan: true,
    },
    Case {
        name: "nanmin",
        all: |a, o| a.nanmin_into(o),
        along: |a, k, o| a.nanmin_axis_into(k, o),
        host: nanmin,
        nan: true,
    },
];

fn close(what: &str, got: f64, want: f64) {
    let ok =
        (got.is_nan() && want.is_nan()) || got == want || (got - want).abs() <= 1e-9 * (1.0 + want.abs());
    assert!(ok, "{what}: {got} vs {want}");
}

/// Random `f32` of `shape`; with `nan`, about one element in six NaN, and one lane along the
/// last axis all NaN (so the "only NaN left" results are checked too).
fn random(rng: &mut Rng, shape: &[usize], nan: bool) -> ArrayD<f32> {
    let n: usize = shape.iter().product();
    let mut v: Vec<f32> = (0..n)
        .map(|_| {
            let x = rng.f32();
            if nan && rng.next_u64().is_multiple_of(6) {
                f32::NAN
            } else {
                x
            }
        })
        .collect();
    if nan {
        let last = *shape.last().unwrap();
        v[..last].iter_mut().for_each(|x| *x = f32::NAN);
    }
    Array::from_shape_vec(IxDyn(shape), v).unwrap()
}

fn host_reduce(a: &ArrayD<f64>, axis: Option<usize>, f: fn(&[f64]) -> f64) -> ArrayD<f64> {
    match axis {
        None => Array::from_elem(IxDyn(&[]), f(&a.iter().copied().collect::<Vec<_>>())),
        Some(k) => a.map_axis(Axis(k), |lane| f(&lane.iter().copied().collect::<Vec<_>>())),
    }
}

fn step_first(nd: usize, start: usize, step: isize) -> SliceInfo<Vec<SliceInfoElem>, IxDyn, IxDyn> {
    let info: Vec<SliceInfoElem> = (0..nd)
        .map(|k| SliceInfoElem::Slice {
            start: if k == 0 { start as isize } else { 0 },
            end: None,
            step: if k == 0 { step } else { 1 },
        })
        .collect();
    SliceInfo::try_from(info).unwrap()
}

const FILL: f64 = 7.0;

/// Runs `f` into an `out` of `shape` in `layout` (0 C order, 1 Fortran order, 2 every other
/// element of a larger array along the first axis, 3 reversed along it, 4 a transposed view of
/// a C-order array), returns what it holds in C order, and checks the elements of a larger
/// array that the view skips are untouched.
fn into_layout(
    ctx: &Context,
    shape: &[usize],
    layout: u32,
    f: &mut dyn FnMut(&mut Out<'_>) -> Res,
) -> gpu_runtime::Result<Vec<f64>> {
    let nd = shape.len();
    match layout {
        1 => {
            let mut o = DeviceArray::from_ndarray(ctx, &ArrayD::from_elem(IxDyn(shape).f(), FILL))?;
            f(&mut o.view_mut())?;
            o.to_vec()
        }
        2 | 3 if nd > 0 => {
            let mut big = shape.to_vec();
            if layout == 2 {
                big[0] *= 2;
            }
            let mut o = DeviceArray::from_ndarray(ctx, &ArrayD::from_elem(IxDyn(&big), FILL))?;
            let got = {
                let mut v = o.slice_mut(step_first(nd, 0, if layout == 2 { 2 } else { -1 }))?;
                f(&mut v)?;
                v.to_vec()?
            };
            if layout == 2 {
                let skipped = o.slice(step_first(nd, 1, 2))?.to_vec()?;
                assert!(skipped.iter().all(|&x| x == FILL), "skipped elements written");
            }
            Ok(got)
        }
        4 if nd > 1 => {
            let reversed: Vec<usize> = shape.iter().rev().copied().collect();
            let mut o = DeviceArray::<f64, IxDyn>::zeros(ctx, IxDyn(&reversed))?;
            let mut v = o.view_mut().reversed_axes();
            f(&mut v)?;
            v.to_vec()
        }
        _ => {
            let mut o = DeviceArray::from_ndarray(ctx, &ArrayD::from_elem(IxDyn(shape), FILL))?;
            f(&mut o.view_mut())?;
            o.to_vec()
        }
    }
}

fn check(what: &str, got: &[f64], want: &ArrayD<f64>) {
    assert_eq!(got.len(), want.len(), "{what}: lengths");
    for (i, (g, w)) in got.iter().zip(want.iter()).enumerate() {
        close(&format!("{what}[{i}]"), *g, *w);
    }
}

/// Every case over every axis and along each axis (with and without keepdims), from a C-order
/// and a transposed input, into every layout of `out`.
#[test]
#[ignore = "needs a CUDA GPU"]
fn more_reductions_into_any_layout_match_the_host() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(4603);
    let shape = [6usize, 5, 4];
    for case in &CASES {
        let h = random(&mut rng, &shape, case.nan);
        let d = DeviceArray::from_ndarray(&ctx, &h)?;
        // The array and its transposed view (read through its strides).
        for (input, host) in [
            (d.view(), h.mapv(|x| x as f64)),
            (d.t(), h.t().mapv(|x| x as f64)),
        ] {
            let (all, along) = (case.all, case.along);
            // Over every axis: 0-d, keepdims-shaped (1, 1, 1), and a reversed one of 1 element.
            let want = host_reduce(&host, None, case.host);
            for (out_shape, layout) in [(vec![], 0), (vec![1, 1, 1], 0), (vec![1, 1, 1], 4), (vec![1], 3)] {
                let got = into_layout(&ctx, &out_shape, layout, &mut |o| all(&input, o))?;
                check(&format!("{} into {out_shape:?}/{layout}", case.name), &got, &want);
            }
            for k in 0..3 {
                let want = host_reduce(&host, Some(k), case.host);
                for keep in [false, true] {
                    let axis = if keep {
                        ReduceAxis::keepdims(k)
                    } else {
                        ReduceAxis::new(k)
                    };
                    let want = if keep {
                        want.clone().insert_axis(Axis(k))
                    } else {
                        want.clone()
                    };
                    for layout in 0..5 {
                        let got = into_layout(&ctx, want.shape(), layout, &mut |o| along(&input, axis, o))?;
                        check(
                            &format!("{} along {k} (keepdims {keep}) into layout {layout}", case.name),
                            &got,
                            &want,
                        );
                    }
                }
            }
        }
    }
    Ok(())
}

/// Other element types by `same_kind`, the stream forms, and what an empty array gives.
#[test]
#[ignore = "needs a CUDA GPU"]
fn more_out_types_streams_and_empty() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let stream = Stream::new(&ctx)?;
    let mut rng = Rng::new(4604);
    // `ptp` of `i8` into `i64` is computed in `i64`: no wrap (NumPy's 100 - -100 = 200).
    let mut h: Vec<i8> = (0..1000)
        .map(|_| ((rng.next_u64() % 200) as i16 - 100) as i8)
        .collect();
    h[3] = 100;
    h[7] = -100;
    let d = DeviceArray::from_ndarray(&ctx, &Array::from(h.clone()))?;
    let mut o = DeviceArray::<i64, IxDyn>::zeros(&ctx, IxDyn(&[]))?;
    d.ptp_into(&mut o)?;
    assert_eq!(o.to_vec()?, vec![200]);
    let mut o8 = DeviceArray::<i8, IxDyn>::zeros(&ctx, IxDyn(&[]))?;
    d.ptp_into(&mut o8)?;
    assert_eq!(
        o8.to_vec()?,
        vec![200u8 as i8],
        "ptp into i8 wraps, as the element type's"
    );
    // `var` of `i32` into `f32` (NumPy's f64 variance rounded once) and into `f64`.
    let hi: Vec<i32> = (0..4096)
        .map(|_| (rng.next_u64() % 100_000) as i32 - 50_000)
        .collect();
    let hf: Vec<f64> = hi.iter().map(|&x| x as f64).collect();
    let di = DeviceArray::from_ndarray(&ctx, &Array::from(hi.clone()))?;
    let mut v32 = DeviceArray::<f32, IxDyn>::zeros(&ctx, IxDyn(&[1]))?;
    di.on(&stream).var_into(1, &mut v32)?;
    let mut v64 = DeviceArray::<f64, IxDyn>::zeros(&ctx, IxDyn(&[]))?;
    di.on(&stream).std_into(0, &mut v64)?;
    stream.synchronize()?;
    let want = var_n(&hf, 1.0);
    assert!(
        ((v32.to_vec()?[0] as f64) - want).abs() <= 1e-6 * want,
        "var i32 into f32"
    );
    close("std i32 into f64", v64.to_vec()?[0], var_n(&hf, 0.0).sqrt());
    // `nansum` of `i32` into `i64` does not wrap; `nanmean` of `f32` into `f64` on a stream.
    let big: Vec<i32> = (0..4096)
        .map(|_| (rng.next_u64() % 2_000_000_000) as i32)
        .collect();
    let db = DeviceArray::from_ndarray(&ctx, &Array::from(big.clone()))?;
    let mut s = DeviceArray::<i64, IxDyn>::zeros(&ctx, IxDyn(&[]))?;
    db.on(&stream).nansum_into(&mut s)?;
    let hn = random(&mut rng, &[9, 33], true);
    let dn = DeviceArray::from_ndarray(&ctx, &hn)?;
    let mut m = DeviceArray::<f64, IxDyn>::zeros(&ctx, IxDyn(&[9]))?;
    dn.on(&stream).nanmean_axis_into(1, &mut m)?;
    stream.synchronize()?;
    assert_eq!(s.to_vec()?, vec![big.iter().map(|&x| x as i64).sum::<i64>()]);
    let want = host_reduce(&hn.mapv(|x| x as f64), Some(1), CASES[5].host);
    check("nanmean_axis_into on a stream", &m.to_vec()?, &want);
    // Empty: a variance NaN, a nansum 0; ptp and nanmax refuse.
    let empty = DeviceArray::<f32, IxDyn>::zeros(&ctx, IxDyn(&[0, 3]))?;
    let mut one = DeviceArray::<f64, IxDyn>::from_ndarray(&ctx, &ArrayD::from_elem(IxDyn(&[]), FILL))?;
    empty.var_into(0, &mut one)?;
    assert!(one.to_vec()?[0].is_nan());
    empty.nansum_into(&mut one)?;
    assert_eq!(one.to_vec()?, vec![0.0]);
    assert!(matches!(
        empty.ptp_into(&mut one),
        Err(Error::Shape(ArrayShapeError::EmptyReduction { .. }))
    ));
    let mut lanes = DeviceArray::<f64, IxDyn>::zeros(&ctx, IxDyn(&[3]))?;
    assert!(matches!(
        empty.nanmax_axis_into(0, &mut lanes),
        Err(Error::Shape(ArrayShapeError::EmptyReduction { .. }))
    ));
    Ok(())
}

/// A wrong-shape `out` (nothing written) and refused casts are typed errors for every case.
#[test]
#[ignore = "needs a CUDA GPU"]
fn more_misuse_is_a_typed_error() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(4605);
    let h = random(&mut rng, &[3, 4], false);
    let owned = DeviceArray::from_ndarray(&ctx, &h)?;
    let a = owned.view();
    for case in &CASES {
        for (shape, axis) in [
            (vec![2], None),
            (vec![3], Some(ReduceAxis::new(0))),
            (vec![4], Some(ReduceAxis::keepdims(0))),
        ] {
            let mut o = DeviceArray::from_ndarray(&ctx, &ArrayD::from_elem(IxDyn(&shape), FILL))?;
            let r = match axis {
                None => (case.all)(&a, &mut o.view_mut()),
                Some(k) => (case.along)(&a, k, &mut o.view_mut()),
            };
            assert!(
                matches!(r, Err(Error::Shape(ArrayShapeError::OutShape { .. }))),
                "{} into {shape:?}: {r:?}",
                case.name
            );
            assert!(
                o.to_vec()?.iter().all(|&x| x == FILL),
                "{}: a refused out was written",
                case.name
            );
        }
        let mut o = DeviceArray::<f64, IxDyn>::zeros(&ctx, IxDyn(&[4]))?;
        assert!(matches!(
            (case.along)(&a, ReduceAxis::new(2), &mut o.view_mut()),
            Err(Error::Shape(ArrayShapeError::AxisOutOfRange { .. }))
        ));
    }
    // f32 into i32 is no `same_kind` cast, nor the f64 variance of integers into i64.
    let mut int = DeviceArray::<i32, IxDyn>::zeros(&ctx, IxDyn(&[]))?;
    let mut lanes = DeviceArray::<i32, IxDyn>::zeros(&ctx, IxDyn(&[4]))?;
    let refused = [
        a.ptp_into(&mut int),
        a.nansum_into(&mut int),
        a.nanmax_axis_into(0, &mut lanes),
        a.nanmin_into(&mut int),
    ];
    for r in refused {
        assert!(
            matches!(r, Err(Error::Argument(ArgumentError::CastingRule { .. }))),
            "{r:?}"
        );
    }
    let ints = DeviceArray::<i32, IxDyn>::zeros(&ctx, IxDyn(&[5]))?;
    let mut long = DeviceArray::<i64, IxDyn>::zeros(&ctx, IxDyn(&[]))?;
    let refused = [
        ints.var_into(0, &mut long),
        ints.std_into(1, &mut long),
        ints.nanmean_into(&mut long),
        ints.nanvar_into(0, &mut long),
        ints.nanstd_into(0, &mut long),
    ];
    for r in refused {
        assert!(
            matches!(r, Err(Error::Argument(ArgumentError::CastingRule { .. }))),
            "{r:?}"
        );
    }
    assert_eq!(long.to_vec()?, vec![0], "a refused cast wrote");
    Ok(())
}
