//! `mean`, `var` and `std` in NumPy's result type (`gpuarray::MeanType`): the element type for
//! `f32`, `f16` and `bf16`, `f64` for the integers and `Bool`, each accumulated in `f64` and
//! rounded once. On a GPU, against the host's `f64` statistics rounded into the result type,
//! on seeded random data: over all axes and along each axis, for empty, 0-d, contiguous,
//! stepped and reversed arrays.
//!
//! `cargo test --test suite -- --ignored array_mean_types::`

use gpu_runtime::gpuarray::{Bool, DeviceArray, MeanType};
use gpu_runtime::half::{bf16, f16};
use gpu_runtime::ndarray::{s, Array, Array2, ArrayView2, Axis};
use gpu_runtime::Context;
use gpu_suite::Rng;

/// An element type under test: made from a random number, read as `f64`; its result type
/// read as `f64`, and the relative error of one rounding into it.
trait Case: MeanType<Mean: Into<f64>> {
    fn random(rng: &mut Rng) -> Self;
    fn f64(self) -> f64;
    const ROUNDING: f64;
}

impl Case for f32 {
    fn random(rng: &mut Rng) -> Self {
        rng.f32() * 8.0
    }
    fn f64(self) -> f64 {
        self.into()
    }
    const ROUNDING: f64 = 1e-7;
}

impl Case for f16 {
    fn random(rng: &mut Rng) -> Self {
        f16::from_f32(rng.f32() * 8.0)
    }
    fn f64(self) -> f64 {
        self.into()
    }
    const ROUNDING: f64 = 1.0 / 2048.0;
}

impl Case for bf16 {
    fn random(rng: &mut Rng) -> Self {
        bf16::from_f32(rng.f32() * 8.0)
    }
    fn f64(self) -> f64 {
        self.into()
    }
    const ROUNDING: f64 = 1.0 / 256.0;
}

impl Case for i16 {
    fn random(rng: &mut Rng) -> Self {
        (rng.next_u64() % 2001) as i16 - 1000
    }
    fn f64(self) -> f64 {
        self.into()
    }
    const ROUNDING: f64 = 1e-12;
}

impl Case for Bool {
    fn random(rng: &mut Rng) -> Self {
        Bool::from(rng.next_u64().is_multiple_of(3))
    }
    fn f64(self) -> f64 {
        f64::from(u8::from(self.get()))
    }
    const ROUNDING: f64 = 1e-12;
}

/// The host's (mean, population variance) of `v` in `f64`; NaN for no element.
fn moments(v: &[f64]) -> (f64, f64) {
    let n = v.len() as f64;
    let mean = v.iter().sum::<f64>() / n;
    (mean, v.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / n)
}

fn close(what: &str, got: f64, want: f64, tol: f64) {
    let ok = (got.is_nan() && want.is_nan()) || (got - want).abs() <= tol * (1e-3 + want.abs());
    assert!(ok, "{what}: {got} vs {want}");
}

/// Every statistic of the view `dev` of `host`, over all axes and along both.
fn check<T: Case>(
    what: &str,
    host: ArrayView2<'_, T>,
    dev: &gpu_runtime::gpuarray::DeviceArrayView<'_, T, gpu_runtime::ndarray::Ix2>,
) -> gpu_runtime::Result<()> {
    let tol = 4.0 * T::ROUNDING + 1e-9;
    let all: Vec<f64> = host.iter().map(|&x| x.f64()).collect();
    let (mean, var) = moments(&all);
    close(&format!("{what} mean"), dev.mean()?.into(), mean, tol);
    close(&format!("{what} var"), dev.var(0)?.into(), var, tol);
    let n = all.len() as f64;
    let sample = var * n / (n - 1.0).max(0.0);
    close(
        &format!("{what} std ddof 1"),
        dev.std(1)?.into(),
        sample.sqrt(),
        tol,
    );
    for axis in 0..2 {
        let lanes: Vec<(f64, f64)> = host
            .axis_iter(Axis(1 - axis))
            .map(|l| moments(&l.iter().map(|&x| x.f64()).collect::<Vec<_>>()))
            .collect();
        let means = dev.mean_axis(axis)?.to_vec()?;
        let vars = dev.var_axis(axis, 0)?.to_vec()?;
        let stds = dev.std_axis(axis, 0)?.to_vec()?;
        assert_eq!(means.len(), lanes.len(), "{what} axis {axis}");
        for (k, &(m, v)) in lanes.iter().enumerate() {
            let w = format!("{what} axis {axis} lane {k}");
            close(&format!("{w} mean"), means[k].into(), m, tol);
            close(&format!("{w} var"), vars[k].into(), v, tol);
            close(&format!("{w} std"), stds[k].into(), v.sqrt(), tol);
        }
    }
    Ok(())
}

fn case<T: Case>(ctx: &Context, seed: u64) -> gpu_runtime::Result<()> {
    let name = std::any::type_name::<T>();
    let mut rng = Rng::new(seed);
    for (rows, cols) in [(1, 1), (3, 1000), (257, 9), (0, 4)] {
        let host = Array2::from_shape_fn((rows, 2 * cols), |_| T::random(&mut rng));
        let dev = DeviceArray::from_ndarray(ctx, &host)?;
        let what = format!("{name} {rows}x{}", 2 * cols);
        check(&what, host.view(), &dev.view())?;
        check(
            &format!("{what} stepped"),
            host.slice(s![.., ..;2]),
            &dev.slice(s![.., ..;2])?,
        )?;
        check(
            &format!("{what} reversed"),
            host.slice(s![..;-1, ..]),
            &dev.slice(s![..;-1, ..])?,
        )?;
    }
    // A 0-d array: its one element, a variance of 0.
    let x = T::random(&mut rng);
    let zero_d = DeviceArray::from_ndarray(ctx, &Array::from_elem((), x))?;
    close(
        &format!("{name} 0-d mean"),
        zero_d.mean()?.into(),
        x.f64(),
        T::ROUNDING,
    );
    close(&format!("{name} 0-d var"), zero_d.var(0)?.into(), 0.0, 0.0);
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn statistics_in_numpys_result_types() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    case::<f32>(&ctx, 31)?;
    case::<f16>(&ctx, 16)?;
    case::<bf16>(&ctx, 17)?;
    case::<i16>(&ctx, 18)?;
    case::<Bool>(&ctx, 19)?;
    // The types themselves, as NumPy gives them.
    let a = DeviceArray::from_ndarray(&ctx, &Array::from_vec(vec![f16::ONE, f16::from_f32(2.0)]))?;
    let m: f16 = a.mean()?;
    assert_eq!(m, f16::from_f32(1.5));
    let b = DeviceArray::from_ndarray(&ctx, &Array::from_vec(vec![1i32, 2]))?;
    let m: f64 = b.mean()?;
    assert_eq!(m, 1.5);
    let e = DeviceArray::<f32, _>::zeros(&ctx, (0, 3))?;
    let m: f32 = e.mean()?;
    assert!(m.is_nan());
    Ok(())
}
