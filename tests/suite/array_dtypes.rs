//! Every element type as an array element on a GPU, each compared with a CPU reference on
//! random data: `half::f16` and `half::bf16` round trips (empty, 0-d, C and Fortran order,
//! stepped, reversed and transposed views), `fill` (NaN and infinities included), and `astype`
//! between every pair of element types, with the 16-bit floats' rounding checked bit for bit
//! against the `half` crate's (round to nearest even, from the source value), their random
//! fills against the host's Philox, and their sums (in `f32`), maxima and minima.
//!
//! `cargo test --test suite -- --ignored array_dtypes::`

use gpu_runtime::gpuarray::{DeviceArray, Element};
use gpu_runtime::half::{bf16, f16};
use gpu_runtime::ndarray::{arr0, s, Array, ArrayD, Ix0, Ix2, IxDyn, ShapeBuilder};
use gpu_runtime::Context;
use gpu_suite::Rng;

/// An element type under test, made from and read as `f64`.
trait Num: Element {
    fn from_f64(v: f64) -> Self;
    fn as_f64(self) -> f64;
    const FLOAT: bool;
}

macro_rules! num {
    ($($t:ty: $float:expr),*) => {$(
        impl Num for $t {
            fn from_f64(v: f64) -> Self {
                v as $t
            }
            fn as_f64(self) -> f64 {
                self as f64
            }
            const FLOAT: bool = $float;
        }
    )*};
}
num!(i8: false, u8: false, i16: false, u16: false, i32: false, u32: false, i64: false, u64: false, f32: true, f64: true);

impl Num for f16 {
    fn from_f64(v: f64) -> Self {
        f16::from_f64(v)
    }
    fn as_f64(self) -> f64 {
        self.to_f64()
    }
    const FLOAT: bool = true;
}
impl Num for bf16 {
    fn from_f64(v: f64) -> Self {
        bf16::from_f64(v)
    }
    fn as_f64(self) -> f64 {
        self.to_f64()
    }
    const FLOAT: bool = true;
}

/// Values every element type holds exactly: integers 0..=100 for integer sources, and
/// multiples of 0.25 below 64 (8 significant bits, `bf16`'s) for float sources, so that a
/// conversion's only effect is C's truncation into integers.
fn exact_values<S: Num>(rng: &mut Rng, n: usize) -> Vec<f64> {
    (0..n)
        .map(|_| {
            let r = rng.next_u64();
            if S::FLOAT {
                (r % 256) as f64 * 0.25
            } else {
                (r % 101) as f64
            }
        })
        .collect()
}

fn astype_pair<S: Num, D: Num>(ctx: &Context, rng: &mut Rng) -> gpu_runtime::Result<()> {
    let shape = [
        3 + (rng.next_u64() % 40) as usize,
        1 + (rng.next_u64() % 9) as usize,
    ];
    let values = exact_values::<S>(rng, shape[0] * shape[1]);
    let host = Array::from_shape_vec(shape, values.iter().map(|&v| S::from_f64(v)).collect()).unwrap();
    let d = DeviceArray::from_ndarray(ctx, &host)?;
    let what = format!("{} -> {}", std::any::type_name::<S>(), std::any::type_name::<D>());
    // C order, and a stepped, reversed view.
    let got = d.astype::<D>()?.to_vec()?;
    for (g, v) in got.iter().zip(&values) {
        let want = if D::FLOAT { *v } else { v.trunc() };
        assert_eq!(g.as_f64(), want, "{what}");
    }
    let view = d.slice(s![..;-2, ..])?;
    let want: Vec<f64> = host.slice(s![..;-2, ..]).iter().map(|x| x.as_f64()).collect();
    let got = view.astype::<D>()?.to_vec()?;
    for (g, w) in got.iter().zip(&want) {
        let w = if D::FLOAT { *w } else { w.trunc() };
        assert_eq!(g.as_f64(), w, "{what}, strided view");
    }
    Ok(())
}

macro_rules! every_pair {
    ($ctx:expr, $rng:expr; $($s:ty),*) => {$(
        every_pair!(@to $ctx, $rng, $s; i8, u8, i16, u16, i32, u32, i64, u64, f16, bf16, f32, f64);
    )*};
    (@to $ctx:expr, $rng:expr, $s:ty; $($d:ty),*) => {$(
        astype_pair::<$s, $d>($ctx, $rng)?;
    )*};
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn astype_between_every_pair_of_element_types() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(5);
    every_pair!(&ctx, &mut rng; i8, u8, i16, u16, i32, u32, i64, u64, f16, bf16, f32, f64);
    Ok(())
}

/// `f32` values of every kind: random, large (overflowing `f16`), tiny (subnormal in `f16`),
/// halfway cases, NaN, infinities, signed zeros.
fn awkward_f32(rng: &mut Rng, n: usize) -> Vec<f32> {
    let mut v: Vec<f32> = (0..n)
        .map(|i| match i % 5 {
            0 => rng.f32(),
            1 => rng.f32() * 1e5,
            2 => rng.f32() * 1e-6,
            3 => f32::from_bits(rng.next_u64() as u32),
            _ => 1.0 + (rng.next_u64() % 4096) as f32 / 4096.0,
        })
        .collect();
    v.extend([
        f32::NAN,
        f32::INFINITY,
        f32::NEG_INFINITY,
        0.0,
        -0.0,
        65504.0,
        65520.0,
        1e-8,
    ]);
    v
}

fn same<T: Num>(got: T, want: T, from: f64, what: &str) {
    let (g, w) = (got.as_f64(), want.as_f64());
    assert!(
        g == w || (g.is_nan() && w.is_nan()),
        "{what}: {from:e} gave {g:e}, want {w:e}"
    );
    if g == 0.0 {
        assert_eq!(
            g.is_sign_negative(),
            w.is_sign_negative(),
            "{what}: the sign of zero from {from:e}"
        );
    }
}

/// `x` rounded once to the nearest value of a 16-bit float type, ties to the even pattern.
/// `half`'s `from_f64` rounds through `f32` first on this host, twice: 1.5288085934345697, just
/// below a half-way point of `f16`, is a tie in `f32`, which then rounds up. So the reference
/// takes its result and its two neighbours and keeps the nearest (overflow kept as `half`
/// gives it).
fn round_once<T: Copy>(
    x: f64,
    from_f64: fn(f64) -> T,
    to_f64: fn(T) -> f64,
    to_bits: fn(T) -> u16,
    from_bits: fn(u16) -> T,
) -> T {
    let h = from_f64(x);
    if x.is_nan() || !to_f64(h).is_finite() || to_f64(h) == x {
        return h;
    }
    let b = to_bits(h);
    [b.wrapping_sub(1), b, b.wrapping_add(1)]
        .into_iter()
        .map(from_bits)
        .filter(|c| to_f64(*c).is_finite())
        .min_by(|p, q| {
            let (dp, dq) = ((to_f64(*p) - x).abs(), (to_f64(*q) - x).abs());
            dp.total_cmp(&dq).then((to_bits(*p) & 1).cmp(&(to_bits(*q) & 1)))
        })
        .unwrap_or(h)
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn sixteen_bit_floats_round_once_to_nearest_even() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(9);
    let x32 = awkward_f32(&mut rng, 5000);
    let d32 = DeviceArray::from_ndarray(&ctx, &Array::from_vec(x32.clone()))?;
    for (g, x) in d32.astype::<f16>()?.to_vec()?.into_iter().zip(&x32) {
        same(g, f16::from_f32(*x), *x as f64, "f32 -> f16");
    }
    for (g, x) in d32.astype::<bf16>()?.to_vec()?.into_iter().zip(&x32) {
        same(g, bf16::from_f32(*x), *x as f64, "f32 -> bf16");
    }
    // From f64 directly, not through f32 (which would round twice).
    let x64: Vec<f64> = x32.iter().map(|&v| v as f64 * (1.0 + rng.f64() * 1e-9)).collect();
    let d64 = DeviceArray::from_ndarray(&ctx, &Array::from_vec(x64.clone()))?;
    for (g, x) in d64.astype::<f16>()?.to_vec()?.into_iter().zip(&x64) {
        same(
            g,
            round_once(*x, f16::from_f64, f16::to_f64, f16::to_bits, f16::from_bits),
            *x,
            "f64 -> f16",
        );
    }
    for (g, x) in d64.astype::<bf16>()?.to_vec()?.into_iter().zip(&x64) {
        same(
            g,
            round_once(*x, bf16::from_f64, bf16::to_f64, bf16::to_bits, bf16::from_bits),
            *x,
            "f64 -> bf16",
        );
    }
    // Integers, rounded from their exact value.
    let ints: Vec<i32> = (0..3000)
        .map(|_| (rng.next_u64() as i32) >> (rng.next_u64() % 31))
        .collect();
    let di = DeviceArray::from_ndarray(&ctx, &Array::from_vec(ints.clone()))?;
    for (g, x) in di.astype::<f16>()?.to_vec()?.into_iter().zip(&ints) {
        same(g, f16::from_f64(*x as f64), *x as f64, "i32 -> f16");
    }
    for (g, x) in di.astype::<bf16>()?.to_vec()?.into_iter().zip(&ints) {
        same(g, bf16::from_f64(*x as f64), *x as f64, "i32 -> bf16");
    }
    // And back: every 16-bit pattern widens exactly.
    let all16: Vec<u16> = (0..=u16::MAX).collect();
    let h: Vec<f16> = all16.iter().map(|&b| f16::from_bits(b)).collect();
    let dh = DeviceArray::from_ndarray(&ctx, &Array::from_vec(h.clone()))?;
    for (g, x) in dh.astype::<f32>()?.to_vec()?.into_iter().zip(&h) {
        same(g, x.to_f32(), x.to_f64(), "f16 -> f32");
    }
    let b: Vec<bf16> = all16.iter().map(|&b| bf16::from_bits(b)).collect();
    let db = DeviceArray::from_ndarray(&ctx, &Array::from_vec(b.clone()))?;
    for (g, x) in db.astype::<f64>()?.to_vec()?.into_iter().zip(&b) {
        same(g, x.to_f64(), x.to_f64(), "bf16 -> f64");
    }
    for (g, x) in dh.astype::<bf16>()?.to_vec()?.into_iter().zip(&h) {
        same(g, bf16::from_f32(x.to_f32()), x.to_f64(), "f16 -> bf16");
    }
    Ok(())
}

fn round_trips<T: Num>(seed: u64) -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(seed);
    for round in 0..20 {
        let shape: Vec<usize> = (0..1 + rng.next_u64() % 3)
            .map(|_| {
                if rng.next_u64().is_multiple_of(8) {
                    0
                } else {
                    1 + (rng.next_u64() % 9) as usize
                }
            })
            .collect();
        let n: usize = shape.iter().product();
        let data: Vec<T> = (0..n).map(|_| T::from_f64(rng.f64() * 100.0)).collect();
        let host: ArrayD<T> = if round % 2 == 1 {
            Array::from_shape_vec(IxDyn(&shape).f(), data).unwrap()
        } else {
            Array::from_shape_vec(IxDyn(&shape), data).unwrap()
        };
        let d = DeviceArray::from_ndarray(&ctx, &host)?;
        assert_eq!(d.to_ndarray()?, host, "shape {shape:?}");
        assert_eq!(d.t().to_ndarray()?, host.t(), "shape {shape:?}, transposed");
        assert_eq!(
            d.t().to_contiguous()?.to_ndarray()?,
            host.t(),
            "shape {shape:?}, transposed copy"
        );
        if shape[0] > 0 {
            let info = |step| {
                let mut e = vec![gpu_runtime::ndarray::SliceInfoElem::Slice {
                    start: 0,
                    end: None,
                    step,
                }];
                e.extend(
                    (1..shape.len()).map(|_| gpu_runtime::ndarray::SliceInfoElem::Slice {
                        start: 0,
                        end: None,
                        step: 1,
                    }),
                );
                gpu_runtime::ndarray::SliceInfo::<_, IxDyn, IxDyn>::try_from(e).unwrap()
            };
            for step in [2, -1, -3] {
                let want = host.slice(info(step)).to_owned();
                assert_eq!(
                    d.slice(info(step))?.to_contiguous()?.to_ndarray()?,
                    want,
                    "step {step}"
                );
            }
        }
    }
    // 0-d.
    let v = T::from_f64(42.0);
    let zero_d = DeviceArray::<T, Ix0>::from_ndarray(&ctx, &arr0(v))?;
    assert_eq!(zero_d.to_ndarray()?, arr0(v));
    assert_eq!(zero_d.astype::<f64>()?.to_ndarray()?, arr0(42.0));
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn f16_and_bf16_round_trip_in_every_layout() -> gpu_runtime::Result<()> {
    round_trips::<f16>(1)?;
    round_trips::<bf16>(2)
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn f16_and_bf16_fill_with_any_value() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(7);
    let host: Vec<f16> = (0..600).map(|_| f16::from_f32(rng.f32())).collect();
    let host = Array::from_shape_vec((20, 30), host).unwrap();
    for v in [1.5, f32::NAN, f32::INFINITY, f32::NEG_INFINITY, -0.0, 65504.0] {
        let mut d = DeviceArray::<f16, Ix2>::from_ndarray(&ctx, &host)?;
        d.slice_mut(s![1..;3, ..;-2])?.fill(f16::from_f32(v))?;
        let mut want = host.clone();
        want.slice_mut(s![1..;3, ..;-2]).fill(f16::from_f32(v));
        let got = d.to_ndarray()?;
        assert!(
            got.iter().zip(&want).all(|(g, w)| g.to_bits() == w.to_bits()),
            "fill {v}"
        );
        let mut z = DeviceArray::<bf16, Ix2>::zeros(&ctx, (7, 5).f())?;
        assert!(z.to_vec()?.iter().all(|x| x.to_bits() == 0));
        z.fill(bf16::from_f32(v))?;
        assert!(
            z.to_vec()?
                .iter()
                .all(|x| x.to_bits() == bf16::from_f32(v).to_bits()),
            "fill bf16 {v}"
        );
    }
    let mut empty = DeviceArray::<f16, Ix2>::zeros(&ctx, (0, 4))?;
    empty.fill(f16::ONE)?;
    assert_eq!(empty.to_vec()?, Vec::<f16>::new());
    Ok(())
}

/// Uniform and normal fills of `f16` and `bf16`: drawn as `f32` (the same Philox words as
/// every type), then rounded once to nearest, for every length and a strided view.
#[test]
#[ignore = "needs a CUDA GPU"]
fn sixteen_bit_random_fills_are_the_f32_draws_rounded() -> gpu_runtime::Result<()> {
    use gpu_runtime::__testing::philox4x32_10;
    let ctx = Context::default()?;
    let mut rng = Rng::new(43);
    for n in [0usize, 1, 5, 1023, 100_003] {
        let seed = rng.next_u64();
        let uniform: Vec<f32> = (0..n)
            .map(|i| {
                let g = (i / 4) as u64;
                let w = philox4x32_10(
                    [g as u32, (g >> 32) as u32, 0, 0],
                    [seed as u32, (seed >> 32) as u32],
                );
                (w[i % 4] >> 8) as f32 * (1.0 / 16_777_216.0)
            })
            .collect();
        let h = DeviceArray::<f16, _>::random_uniform(&ctx, n, seed)?.to_vec()?;
        let want: Vec<f16> = uniform.iter().map(|&u| f16::from_f32(u)).collect();
        assert!(
            h.iter().zip(&want).all(|(g, w)| g.to_bits() == w.to_bits()),
            "f16 uniform, n = {n}"
        );
        let b = DeviceArray::<bf16, _>::random_uniform(&ctx, n, seed)?.to_vec()?;
        let want: Vec<bf16> = uniform.iter().map(|&u| bf16::from_f32(u)).collect();
        assert!(
            b.iter().zip(&want).all(|(g, w)| g.to_bits() == w.to_bits()),
            "bf16 uniform, n = {n}"
        );
        // Normal: the f32 draws of the same mean and deviation, rounded.
        let (mean, std) = (f16::from_f32(1.5), f16::from_f32(0.25));
        let h = DeviceArray::<f16, _>::random_normal(&ctx, n, seed, mean, std)?.to_vec()?;
        let f = DeviceArray::<f32, _>::random_normal(&ctx, n, seed, 1.5, 0.25)?.to_vec()?;
        assert!(
            h.iter()
                .zip(&f)
                .all(|(g, w)| g.to_bits() == f16::from_f32(*w).to_bits()),
            "f16 normal, n = {n}"
        );
        if n > 10_000 {
            let m = h.iter().map(|x| x.to_f64()).sum::<f64>() / n as f64;
            let v = h.iter().map(|x| (x.to_f64() - m).powi(2)).sum::<f64>() / n as f64;
            assert!(
                (m - 1.5).abs() < 0.01 && (v.sqrt() - 0.25).abs() < 0.01,
                "moments {m} {v}"
            );
        }
    }
    // A strided view is filled in C order of its own indices, as for f32.
    let mut m = DeviceArray::<bf16, Ix2>::zeros(&ctx, (6, 8))?;
    m.slice_mut(s![.., ..;-2])?.fill_uniform(9)?;
    let mut direct = DeviceArray::<bf16, Ix2>::zeros(&ctx, (6, 4))?;
    direct.fill_uniform(9)?;
    assert_eq!(m.slice(s![.., ..;-2])?.to_ndarray()?, direct.to_ndarray()?);
    Ok(())
}

/// `sum` of `f16` and `bf16` accumulates in `f32` and rounds once (a sum in the 16-bit type
/// itself would be off by far more on 100 000 elements); `max`, `min` exact, NaN winning.
fn sixteen_bit_reductions<T: Num>(seed: u64, eps: f64) -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(seed);
    for n in [0usize, 1, 7, 4096, 100_003] {
        let host: Vec<T> = (0..n).map(|_| T::from_f64(rng.f64() + 0.25)).collect();
        let d = DeviceArray::from_ndarray(&ctx, &Array::from_vec(host.clone()))?;
        let exact: f64 = host.iter().map(|x| x.as_f64()).sum();
        let abs: f64 = host.iter().map(|x| x.as_f64().abs()).sum();
        let got = d.sum()?.as_f64();
        // One rounding into T, and f32's rounding per addition.
        let tol = eps * exact.abs() + 1e-6 * abs + 1e-12;
        assert!((got - exact).abs() <= tol, "sum of {n}: {got} vs {exact}");
        if n > 0 {
            let max = host.iter().map(|x| x.as_f64()).fold(f64::NEG_INFINITY, f64::max);
            let min = host.iter().map(|x| x.as_f64()).fold(f64::INFINITY, f64::min);
            assert_eq!(d.max()?.as_f64(), max, "max of {n}");
            assert_eq!(d.min()?.as_f64(), min, "min of {n}");
        }
    }
    // A reversed 2-D view, along each axis.
    let host: Vec<T> = (0..60 * 70).map(|_| T::from_f64(rng.f64())).collect();
    let m = DeviceArray::from_ndarray(&ctx, &Array::from_shape_vec((60, 70), host.clone()).unwrap())?;
    let v = m.slice(s![..;-1, ..;2])?;
    let hv = Array::from_shape_vec((60, 70), host).unwrap();
    let hv = hv.slice(s![..;-1, ..;2]);
    for axis in 0..2 {
        let got = v.sum_axis(axis)?.to_vec()?;
        let want: Vec<f64> = hv
            .map(|x| x.as_f64())
            .sum_axis(gpu_runtime::ndarray::Axis(axis))
            .to_vec();
        for (g, w) in got.iter().zip(&want) {
            assert!(
                (g.as_f64() - w).abs() <= eps * w.abs() + 1e-5 * 70.0,
                "axis {axis}: {} vs {w}",
                g.as_f64()
            );
        }
    }
    // NaN wins max and min.
    let mut with_nan: Vec<T> = (0..1000).map(|_| T::from_f64(rng.f64())).collect();
    with_nan[517] = T::from_f64(f64::NAN);
    let d = DeviceArray::from_ndarray(&ctx, &Array::from_vec(with_nan))?;
    assert!(d.max()?.as_f64().is_nan() && d.min()?.as_f64().is_nan() && d.sum()?.as_f64().is_nan());
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn f16_and_bf16_sum_in_f32_and_max_min_exactly() -> gpu_runtime::Result<()> {
    sixteen_bit_reductions::<f16>(51, 1.0 / 1024.0)?;
    sixteen_bit_reductions::<bf16>(52, 1.0 / 128.0)
}
