//! NumPy 2's result types of `sum`, `prod`, `cumsum` and `cumprod` without `dtype=`
//! (`sum_np`, `prod_np`, `cumsum_np`, `cumprod_np` and their `_axis` forms): `bool` and the
//! small integers accumulate in `i64`/`u64`, so sums that overflow the element type are
//! exact; checked on the GPU against host sums in `i128`/`f64` on random data, over all axes
//! and along each axis, through C-order, transposed, stepped and reversed views, 0-d and empty
//! arrays.

use gpu_runtime::gpuarray::{Bool, DeviceArray, Element, SumType};
use gpu_runtime::ndarray::{Array, ArrayD, Axis, IxDyn, SliceInfo, SliceInfoElem};
use gpu_runtime::Context;
use gpu_suite::Rng;

/// A type under test, and its NumPy sum type read back as an exact `i128` (integers) or
/// `f64` (floats).
trait Small: SumType<Sum: Exact> + std::fmt::Debug {
    /// A random value over the type's whole range (so that sums overflow the type).
    fn random(rng: &mut Rng) -> Self;
    /// A random factor: mostly 1 (or -1), sometimes 2, so that products of a few dozen stay
    /// in range of the 64-bit accumulator.
    fn factor(rng: &mut Rng) -> Self;
    fn wide(self) -> f64;
}

/// A sum type's value on the host.
trait Exact: Element {
    fn f64(self) -> f64;
    /// The NumPy result type's name, to check the type chosen.
    const NAME: &'static str;
}
impl Exact for i64 {
    fn f64(self) -> f64 {
        self as f64
    }
    const NAME: &'static str = "i64";
}
impl Exact for u64 {
    fn f64(self) -> f64 {
        self as f64
    }
    const NAME: &'static str = "u64";
}
impl Exact for f32 {
    fn f64(self) -> f64 {
        self as f64
    }
    const NAME: &'static str = "f32";
}

macro_rules! small_int {
    ($($t:ty, $signed:expr);*) => {$(
        impl Small for $t {
            fn random(rng: &mut Rng) -> Self { rng.next_u64() as $t }
            fn factor(rng: &mut Rng) -> Self {
                match rng.next_u64() % 8 {
                    0 => 2,
                    1 if $signed => (0 as $t).wrapping_sub(1),
                    _ => 1,
                }
            }
            fn wide(self) -> f64 { self as f64 }
        }
    )*};
}
small_int!(i8, true; i16, true; i32, true; u8, false; u16, false; u32, false);

impl Small for Bool {
    fn random(rng: &mut Rng) -> Self {
        Bool::from(rng.next_u64().is_multiple_of(2))
    }
    fn factor(rng: &mut Rng) -> Self {
        Bool::from(!rng.next_u64().is_multiple_of(8))
    }
    fn wide(self) -> f64 {
        if self == Bool::from(true) {
            1.0
        } else {
            0.0
        }
    }
}

impl Small for f32 {
    fn random(rng: &mut Rng) -> Self {
        rng.f32()
    }
    fn factor(rng: &mut Rng) -> Self {
        1.0 + 0.01 * rng.f32()
    }
    fn wide(self) -> f64 {
        self as f64
    }
}

fn close(what: &str, got: f64, want: f64, exact: bool) {
    let ok = if exact {
        got == want
    } else {
        (got - want).abs() <= 1e-4 * (1.0 + want.abs())
    };
    assert!(ok, "{what}: {got} vs {want}");
}

/// The slice of every axis whole but the first, stepped by `step`.
fn first_axis(ndim: usize, step: isize) -> SliceInfo<Vec<SliceInfoElem>, IxDyn, IxDyn> {
    let elems: Vec<SliceInfoElem> = (0..ndim)
        .map(|k| SliceInfoElem::Slice {
            start: 0,
            end: None,
            step: if k == 0 { step } else { 1 },
        })
        .collect();
    SliceInfo::try_from(elems).unwrap()
}

fn check<T: Small>(seed: u64, expect_name: &str) -> gpu_runtime::Result<()> {
    assert_eq!(<T::Sum as Exact>::NAME, expect_name);
    let ctx = Context::default()?;
    let mut rng = Rng::new(seed);
    let exact = T::DTYPE != f32::DTYPE;
    let shapes: [&[usize]; 6] = [&[], &[0], &[3, 0], &[1000], &[37, 129], &[5, 6, 7]];
    for shape in shapes {
        let n: usize = shape.iter().product();
        let data: Vec<T> = (0..n).map(|_| T::random(&mut rng)).collect();
        let host = Array::from_shape_vec(IxDyn(shape), data).unwrap();
        let d = DeviceArray::from_ndarray(&ctx, &host)?;
        for kind in 0..4 {
            let (hv, dv) = match (kind, shape.len()) {
                (_, 0) | (0, _) => (host.view(), d.view()),
                (1, _) => (host.t(), d.t()),
                (2, k) => (host.slice(first_axis(k, 2)), d.slice(first_axis(k, 2))?),
                (_, k) => (host.slice(first_axis(k, -1)), d.slice(first_axis(k, -1))?),
            };
            let what = format!("{} {shape:?} view {kind}", std::any::type_name::<T>());
            let want: f64 = hv.iter().map(|x| x.wide()).sum();
            close(&format!("{what} sum_np"), dv.sum_np()?.f64(), want, exact);
            // Flattened in C order of the view.
            let flat: Vec<f64> = hv.iter().map(|x| x.wide()).collect();
            let got = dv.cumsum_np()?.to_vec()?;
            assert_eq!(got.len(), flat.len(), "{what} cumsum_np length");
            let mut run = 0.0;
            for (i, (g, x)) in got.iter().zip(&flat).enumerate() {
                run += x;
                close(&format!("{what} cumsum_np[{i}]"), g.f64(), run, exact);
            }
            for axis in 0..hv.ndim() {
                let want = hv.map(|x| x.wide()).sum_axis(Axis(axis));
                let got = dv.sum_axis_np(axis)?;
                assert_eq!(got.shape(), want.shape(), "{what} sum_axis_np({axis}) shape");
                for (g, w) in got.to_vec()?.iter().zip(want.iter()) {
                    close(&format!("{what} sum_axis_np({axis})"), g.f64(), *w, exact);
                }
                let mut want = hv.map(|x| x.wide());
                want.accumulate_axis_inplace(Axis(axis), |&prev, cur| *cur += prev);
                let got = dv.cumsum_axis_np(axis)?;
                assert_eq!(got.shape(), want.shape(), "{what} cumsum_axis_np({axis}) shape");
                let want = want.as_standard_layout().to_owned();
                for (g, w) in got.to_vec()?.iter().zip(want.iter()) {
                    close(&format!("{what} cumsum_axis_np({axis})"), g.f64(), *w, exact);
                }
            }
        }
    }
    // Products: of factors, short enough to stay in range of the accumulator.
    for n in [0usize, 1, 17, 40] {
        let data: Vec<T> = (0..n).map(|_| T::factor(&mut rng)).collect();
        let host: ArrayD<T> = Array::from_shape_vec(IxDyn(&[n]), data).unwrap();
        let d = DeviceArray::from_ndarray(&ctx, &host)?;
        let want: f64 = host.iter().map(|x| x.wide()).product();
        close(&format!("prod_np n = {n}"), d.prod_np()?.f64(), want, exact);
        let mut run = 1.0;
        for (i, (g, x)) in d.cumprod_np()?.to_vec()?.iter().zip(host.iter()).enumerate() {
            run *= x.wide();
            close(&format!("cumprod_np n = {n} [{i}]"), g.f64(), run, exact);
        }
        let m = host.into_shape_with_order(IxDyn(&[1, n])).unwrap();
        let dm = DeviceArray::from_ndarray(&ctx, &m)?;
        let got = dm.prod_axis_np(1)?.to_vec()?;
        close(&format!("prod_axis_np n = {n}"), got[0].f64(), want, exact);
        let got = dm.cumprod_axis_np(1)?.to_vec()?;
        assert_eq!(got.len(), n);
    }
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn small_integers_and_bool_sum_in_64_bits() -> gpu_runtime::Result<()> {
    check::<i8>(1, "i64")?;
    check::<i16>(2, "i64")?;
    check::<i32>(3, "i64")?;
    check::<u8>(4, "u64")?;
    check::<u16>(5, "u64")?;
    check::<u32>(6, "u64")?;
    check::<Bool>(7, "i64")
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn floats_sum_in_their_own_type() -> gpu_runtime::Result<()> {
    check::<f32>(8, "f32")
}

/// A sum of `i8` that overflows `i8` by far: `sum` wraps in the element type (PyCUDA's), the
/// `_np` form is NumPy's `int64`.
#[test]
#[ignore = "needs a CUDA GPU"]
fn sum_wraps_and_sum_np_does_not() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let host = Array::from_elem(IxDyn(&[1000]), 100i8);
    let d = DeviceArray::from_ndarray(&ctx, &host)?;
    assert_eq!(d.sum_np()?, 100_000i64);
    assert_eq!(d.sum()?, (100_000i64 as u64 % 256) as u8 as i8);
    assert_eq!(d.cumsum_np()?.to_vec()?.last(), Some(&100_000i64));
    Ok(())
}
