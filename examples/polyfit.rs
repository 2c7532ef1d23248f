//! NumPy's polynomial routines on the device, as a CuPy user writes them: fit a cubic to noisy
//! samples (`polyfit`), evaluate the fit (`polyval`), find its roots (`roots`), and rebuild it
//! from them (`Poly1d::from_roots`), each checked against the host.
//!
//! The samples are `y = 2 (x - 0.5)(x + 1)(x - 2)` at 100,000 points of `[-3, 3]` with
//! deterministic noise of amplitude 0.01; the fit must recover the coefficients to within the
//! noise, and its roots the three roots.
//!
//! `cargo run --release --example polyfit` on a machine with an NVIDIA GPU.

use gpu_runtime::gpuarray::{self, DeviceArray, Poly1d};
use gpu_runtime::ndarray::Array1;
use gpu_runtime::Context;

fn main() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let n = 100_000;
    let truth = [2.0, -3.0, -3.0, 2.0]; // 2 (x - 0.5)(x + 1)(x - 2), highest power first
    let horner = |c: &[f64], x: f64| c.iter().fold(0.0, |s, &v| s * x + v);
    // Noise from a fixed linear congruential sequence, uniform in [-0.01, 0.01).
    let mut state = 12345u64;
    let mut noise = move || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((state >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0) * 0.01
    };
    let xs = Array1::from_shape_fn(n, |i| -3.0 + 6.0 * i as f64 / (n - 1) as f64);
    let ys = xs.mapv(|x| horner(&truth, x) + noise());
    let x = DeviceArray::from_ndarray(&ctx, &xs)?;
    let y = DeviceArray::from_ndarray(&ctx, &ys)?;

    // np.polyfit(x, y, 3): the least-squares cubic, with NumPy's diagnostics.
    let fit = gpuarray::polyfit_full(&x, &y, 3, None, None)?;
    let c = fit.coeffs.to_vec()?;
    assert_eq!(fit.rank, 4);
    for (got, want) in c.iter().zip(truth) {
        assert!((got - want).abs() < 2e-3, "coefficients {c:?}, want {truth:?}");
    }

    // np.polyval(c, x): the fit's residuals against the samples, on the device, summed on the
    // host; they match the residual the fit reports.
    let fitted = gpuarray::polyval(&fit.coeffs, &x)?.to_vec()?;
    let rss: f64 = fitted.iter().zip(&ys).map(|(f, y)| (f - y) * (f - y)).sum();
    assert!(
        (rss - fit.residuals[0]).abs() <= 1e-6 * rss,
        "{rss} against {:?}",
        fit.residuals
    );
    let rms = (rss / n as f64).sqrt();
    assert!(rms < 0.01, "rms {rms}");

    // np.roots(c): the three roots, near 0.5, -1 and 2.
    let p = Poly1d::new(&fit.coeffs)?;
    let mut roots: Vec<f64> = p.roots()?.to_vec()?.iter().map(|z| z.re).collect();
    roots.sort_by(f64::total_cmp);
    for (got, want) in roots.iter().zip([-1.0, 0.5, 2.0]) {
        assert!((got - want).abs() < 1e-3, "roots {roots:?}");
    }

    // np.poly1d(roots, r=True) * 2: the monic cubic of those roots, scaled back to the fit.
    let r = DeviceArray::from_ndarray(&ctx, &Array1::from(roots.clone()))?;
    let two = Poly1d::new(&DeviceArray::from_ndarray(&ctx, &Array1::from(vec![c[0]]))?)?;
    let rebuilt = (&Poly1d::from_roots(&r)? * &two)?.coeffs().to_vec()?;
    for (got, want) in rebuilt.iter().zip(&c) {
        assert!(
            (got - want).abs() < 1e-9 * want.abs().max(1.0),
            "{rebuilt:?} against {c:?}"
        );
    }
    println!("fit {c:.4?} (rms {rms:.5}), roots {roots:.4?}");
    Ok(())
}
