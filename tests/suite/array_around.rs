//! `math::around` (NumPy's `around`, `round(a, decimals)`) on a GPU against the host on random
//! data of every float and integer type, decimals from -4 to 4, contiguous and transposed:
//! the floats computed as NumPy computes them in their own type (`rint(x * 10^d) / 10^d`),
//! bit for bit for `f32` and `f64`; the integers through `f64` for negative decimals. Then
//! NumPy's halves-to-even cases by value, an expression step, `out=` and a stream; and a `bool`
//! array, which NumPy 2 rounds to `float16`.

use gpu_runtime::gpuarray::{math, Bool, DeviceArray};
use gpu_runtime::half::{bf16, f16};
use gpu_runtime::ndarray::{arr1, Array2};
use gpu_runtime::{Context, Stream};
use gpu_suite::Rng;

/// NumPy's float rounding in `f64` and `f32` (`x * f` and `/ f` in the type, `rint` halves to
/// even).
fn host_f64(x: f64, d: i32) -> f64 {
    let f = 10f64.powi(d.abs());
    if d >= 0 {
        (x * f).round_ties_even() / f
    } else {
        (x / f).round_ties_even() * f
    }
}

fn host_f32(x: f32, d: i32) -> f32 {
    let f = 10f64.powi(d.abs()) as f32;
    if d >= 0 {
        (x * f).round_ties_even() / f
    } else {
        (x / f).round_ties_even() * f
    }
}

fn matrix<T>(rng: &mut Rng, draw: impl Fn(&mut Rng) -> T) -> Array2<T> {
    Array2::from_shape_fn((37, 23), |_| draw(rng))
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn rounding_to_decimals_matches_numpys_arithmetic() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(6174);
    // Values with many digits around the places rounded to, halves among them.
    let h64 = matrix(&mut rng, |r| {
        (r.f64() - 0.5) * 10f64.powi((r.next_u64() % 9) as i32 - 3)
    });
    let h32 = h64.mapv(|x| x as f32);
    let d64 = DeviceArray::from_ndarray(&ctx, &h64)?;
    let d32 = DeviceArray::from_ndarray(&ctx, &h32)?;
    for d in -4..=4 {
        let got = math::around(&d64, d)?.to_vec()?;
        let want: Vec<f64> = h64.iter().map(|&x| host_f64(x, d)).collect();
        assert_eq!(got, want, "f64 decimals {d}");
        let got = math::around(&d32, d)?.to_vec()?;
        let want: Vec<f32> = h32.iter().map(|&x| host_f32(x, d)).collect();
        assert_eq!(got, want, "f32 decimals {d}");
        // A transposed view: the same elements in its order.
        let got = math::around(&d32.t(), d)?.to_vec()?;
        let want: Vec<f32> = h32.t().iter().map(|&x| host_f32(x, d)).collect();
        assert_eq!(got, want, "f32 transposed, decimals {d}");
    }
    // 16-bit floats: each step rounded to the 16-bit type, as NumPy's float16 loops do (so
    // `-1984 * 100` overflows to -inf there too); within one ulp of that.
    let h16 = h64.mapv(|x| f16::from_f64(x / 64.0));
    let hb = h64.mapv(bf16::from_f64);
    let d16 = DeviceArray::from_ndarray(&ctx, &h16)?;
    let db = DeviceArray::from_ndarray(&ctx, &hb)?;
    fn stepwise(x: f32, d: i32, round: impl Fn(f32) -> f32) -> f32 {
        let f = round(10f32.powi(d.abs()));
        if d >= 0 {
            round(round(x * f).round_ties_even() / f)
        } else {
            round(round(x / f).round_ties_even() * f)
        }
    }
    let same = |g: f32, want: f32, ulp: f32| g == want || (g - want).abs() <= want.abs() * ulp;
    for d in -2..=2 {
        let got = math::around(&d16, d)?.to_vec()?;
        for (g, x) in got.iter().zip(h16.iter()) {
            let want = stepwise(x.to_f32(), d, |v| f16::from_f32(v).to_f32());
            assert!(
                same(g.to_f32(), want, 1e-3),
                "f16 {x} decimals {d}: {g} against {want}"
            );
        }
        let got = math::around(&db, d)?.to_vec()?;
        for (g, x) in got.iter().zip(hb.iter()) {
            let want = stepwise(x.to_f32(), d, |v| bf16::from_f32(v).to_f32());
            assert!(
                same(g.to_f32(), want, 8e-3),
                "bf16 {x} decimals {d}: {g} against {want}"
            );
        }
    }
    // Integers: unchanged for decimals >= 0, through f64 for negative ones, converted back as
    // C converts (a result past the type wraps: np.around(np.uint8(251), -2) is 44).
    let hi = matrix(&mut rng, |r| (r.next_u64() % 2_000_001) as i64 - 1_000_000);
    let di = DeviceArray::from_ndarray(&ctx, &hi)?;
    let di32 = DeviceArray::from_ndarray(&ctx, &hi.mapv(|x| x as i32))?;
    let du8 = DeviceArray::from_ndarray(&ctx, &hi.mapv(|x| x as u8))?;
    let di8 = DeviceArray::from_ndarray(&ctx, &hi.mapv(|x| x as i8))?;
    for d in -4..=2 {
        let via = |x: f64| host_f64(x, d);
        let want: Vec<i64> = hi
            .iter()
            .map(|&x| if d >= 0 { x } else { via(x as f64) as i64 })
            .collect();
        assert_eq!(math::around(&di, d)?.to_vec()?, want, "i64 decimals {d}");
        let want: Vec<i32> = want.iter().map(|&x| x as i32).collect();
        assert_eq!(math::around(&di32, d)?.to_vec()?, want, "i32 decimals {d}");
        if d >= -2 {
            let want: Vec<u8> = hi
                .iter()
                .map(|&x| {
                    if d >= 0 {
                        x as u8
                    } else {
                        via(f64::from(x as u8)) as i64 as u8
                    }
                })
                .collect();
            assert_eq!(math::around(&du8, d)?.to_vec()?, want, "u8 decimals {d}");
            let want: Vec<i8> = hi
                .iter()
                .map(|&x| {
                    if d >= 0 {
                        x as i8
                    } else {
                        via(f64::from(x as i8)) as i64 as i8
                    }
                })
                .collect();
            assert_eq!(math::around(&di8, d)?.to_vec()?, want, "i8 decimals {d}");
        }
    }
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn numpys_rounding_cases_by_value() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    // np.around([-1.5, -0.5, 0.5, 1.5, 2.5]) and np.around([0.37, 1.64], 1), np.round(2.675, 2) (2.68: 2.675 * 100 is 267.5 in f64).
    let a = DeviceArray::from_ndarray(&ctx, &arr1(&[-1.5f64, -0.5, 0.5, 1.5, 2.5]))?;
    let r = math::around(&a, 0)?.to_vec()?;
    assert_eq!(r, [-2.0, -0.0, 0.0, 2.0, 2.0]);
    assert!(r[1].is_sign_negative());
    let b = DeviceArray::from_ndarray(&ctx, &arr1(&[0.37f64, 1.64, 2.675]))?;
    assert_eq!(math::around(&b, 1)?.to_vec()?, [0.4, 1.6, 2.7]);
    assert_eq!(math::around(&b, 2)?.to_vec()?, [0.37, 1.64, 2.68]);
    // np.around([1, 2, 3, 11], -1) and [15, 25, -15], -1: halves to even.
    let i = DeviceArray::from_ndarray(&ctx, &arr1(&[1i32, 2, 3, 11, 15, 25, -15]))?;
    assert_eq!(math::around(&i, -1)?.to_vec()?, [0, 0, 0, 10, 20, 20, -20]);
    assert_eq!(math::around(&i, 1)?.to_vec()?, [1, 2, 3, 11, 15, 25, -15]);
    // A step of an expression, into an existing array, on a stream.
    let e = (&b * 10.0).around(-1).eval()?.to_vec()?;
    assert_eq!(e, [0.0, 20.0, 30.0]);
    let mut out = DeviceArray::<f64, _>::zeros(&ctx, 3)?;
    math::around_into(&b, 1, &mut out)?;
    assert_eq!(out.to_vec()?, [0.4, 1.6, 2.7]);
    let stream = Stream::new(&ctx)?;
    let s = b.expr().around(1).on(&stream).eval()?;
    stream.synchronize()?;
    assert_eq!(s.to_vec()?, [0.4, 1.6, 2.7]);
    Ok(())
}

/// `floor`, `ceil`, `trunc`, `fix` and `round` (no decimals): an array of every integer type
/// is returned unchanged, of its type (NumPy 2's, and CuPy's `test_rounding` over every real
/// dtype); every float type rounds as the host does, halves to even for `round`, on random
/// quarters (halves among them) and random fractions. Then `fix_into` and a stream.
#[test]
#[ignore = "needs a CUDA GPU"]
fn floor_ceil_trunc_fix_and_round_keep_integers_and_round_floats() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(2718);
    macro_rules! integers {
        ($($t:ty),*) => {$(
            let h = matrix(&mut rng, |r| r.next_u64() as $t);
            let d = DeviceArray::from_ndarray(&ctx, &h)?;
            for (name, got) in [
                ("floor", math::floor(&d)?),
                ("ceil", math::ceil(&d)?),
                ("trunc", math::trunc(&d)?),
                ("fix", math::fix(&d)?),
                ("round", math::round(&d)?),
            ] {
                assert_eq!(got.to_ndarray()?, h, "{name} of {}", stringify!($t));
            }
        )*};
    }
    integers!(i8, u8, i16, u16, i32, u32, i64, u64);
    type Rounding = (&'static str, fn(f64) -> f64);
    let host: [Rounding; 5] = [
        ("floor", f64::floor),
        ("ceil", f64::ceil),
        ("trunc", f64::trunc),
        ("fix", f64::trunc),
        ("round", f64::round_ties_even),
    ];
    // Quarters from -16 to 16 (exact in every float type) and fractions of f32's precision.
    let values = matrix(&mut rng, |r| {
        if r.next_u64() % 2 == 0 {
            (r.next_u64() % 129) as f64 / 4.0 - 16.0
        } else {
            f64::from((r.f64() * 1000.0) as f32)
        }
    });
    macro_rules! floats {
        ($($t:ty: $from:expr, $to:expr);*) => {$(
            let h = values.mapv($from);
            let d = DeviceArray::from_ndarray(&ctx, &h)?;
            let got = [
                math::floor(&d)?,
                math::ceil(&d)?,
                math::trunc(&d)?,
                math::fix(&d)?,
                math::round(&d)?,
            ];
            for ((name, f), got) in host.iter().zip(got) {
                let want = h.mapv(|x: $t| f($to(x)));
                assert_eq!(got.to_ndarray()?.mapv($to), want, "{name} of {}", stringify!($t));
            }
        )*};
    }
    floats!(
        f64: |x| x, |x: f64| x;
        f32: |x| x as f32, f64::from;
        f16: f16::from_f64, f16::to_f64;
        bf16: bf16::from_f64, bf16::to_f64
    );
    // `out=` and a stream.
    let h = values.mapv(|x| x as f32);
    let d = DeviceArray::from_ndarray(&ctx, &h)?;
    let mut out = DeviceArray::<f32, _>::zeros(&ctx, h.raw_dim())?;
    math::fix_into(&d, &mut out)?;
    assert_eq!(out.to_ndarray()?, h.mapv(f32::trunc));
    let stream = Stream::new(&ctx)?;
    let on = d.expr().fix().on(&stream).eval()?;
    assert_eq!(on.to_vec()?, h.iter().map(|x| x.trunc()).collect::<Vec<_>>());
    Ok(())
}

/// NumPy 2's `round` of a `bool` array (`np.round(a)`, `np.around(a, 0)`, its `rint`) is
/// `float16` 0 and 1; `floor`, `ceil`, `trunc` and `fix` keep it `bool` (NumPy 2.4). NumPy
/// refuses other decimals; here they round the `f16` values 0 and 1 (unchanged for positive
/// decimals, 0 for negative ones).
#[test]
#[ignore = "needs a CUDA GPU"]
fn rounding_a_bool_array_gives_f16_as_numpys() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(1618);
    let h = matrix(&mut rng, |r| Bool::from(r.next_u64() % 2 == 0));
    let d = DeviceArray::from_ndarray(&ctx, &h)?;
    let want = h.mapv(|b| if b.get() { f16::ONE } else { f16::ZERO });
    let r: DeviceArray<f16, _> = math::round(&d)?;
    assert_eq!(r.to_ndarray()?, want);
    assert_eq!(math::around(&d, 0)?.to_ndarray()?, want);
    assert_eq!(math::around(&d.t(), 0)?.to_ndarray()?, want.t());
    assert_eq!(math::around(&d, 2)?.to_ndarray()?, want);
    assert_eq!(math::around(&d, -1)?.to_ndarray()?, h.mapv(|_| f16::ZERO));
    for (name, got) in [
        ("floor", math::floor(&d)?),
        ("ceil", math::ceil(&d)?),
        ("trunc", math::trunc(&d)?),
        ("fix", math::fix(&d)?),
    ] {
        assert_eq!(got.to_ndarray()?, h, "{name} of bool");
    }
    // The expression step, on a stream.
    let stream = Stream::new(&ctx)?;
    let s = d.expr().round().on(&stream).eval()?;
    stream.synchronize()?;
    assert_eq!(s.to_vec()?, want.iter().copied().collect::<Vec<_>>());
    Ok(())
}
