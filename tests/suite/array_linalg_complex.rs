//! `det`, `slogdet`, `solve` and `inv` of complex matrices (NumPy's and CuPy's take them), on
//! a GPU against LU computed here in `Complex64` on random matrices: stacks of small ones
//! (one block a matrix) and of 130 and 300 rows (blocked), `Complex32` to its precision; the
//! sign of `slogdet` is `det / |det|` and its `logabsdet` real; a singular matrix is named.

use super::array_linalg_lu::upload;
use gpu_runtime::gpuarray;
use gpu_runtime::types::{Complex32, Complex64};
use gpu_runtime::{Context, Error, LinAlgError};
use gpu_suite::Rng;

fn random(rng: &mut Rng, len: usize) -> Vec<Complex64> {
    (0..len).map(|_| Complex64::new(rng.f64(), rng.f64())).collect()
}

/// The determinant of the `n x n` matrix `a` (C order) by LU with partial pivoting.
fn host_det(a: &[Complex64], n: usize) -> Complex64 {
    let mut m = a.to_vec();
    let mut det = Complex64::new(1.0, 0.0);
    for j in 0..n {
        let p = (j..n)
            .max_by(|&x, &y| m[x * n + j].norm().total_cmp(&m[y * n + j].norm()))
            .unwrap();
        if m[p * n + j].norm() == 0.0 {
            return Complex64::new(0.0, 0.0);
        }
        if p != j {
            for c in 0..n {
                m.swap(j * n + c, p * n + c);
            }
            det = -det;
        }
        let d = m[j * n + j];
        det *= d;
        for i in j + 1..n {
            let f = m[i * n + j] / d;
            for c in j..n {
                let u = m[j * n + c];
                m[i * n + c] -= f * u;
            }
        }
    }
    det
}

/// The largest `|a x - b|` over `count` systems of `n x n` with `k` right-hand sides each.
fn residual(a: &[Complex64], x: &[Complex64], b: &[Complex64], count: usize, n: usize, k: usize) -> f64 {
    let mut worst = 0.0f64;
    for m in 0..count {
        for r in 0..n {
            for c in 0..k {
                let s: Complex64 = (0..n)
                    .map(|l| a[m * n * n + r * n + l] * x[m * n * k + l * k + c])
                    .sum();
                worst = worst.max((s - b[m * n * k + r * k + c]).norm());
            }
        }
    }
    worst
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn det_and_slogdet_of_complex_stacks_match_the_host() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(461);
    for (count, n) in [(4, 1), (3, 3), (2, 17), (2, 130)] {
        let host = random(&mut rng, count * n * n);
        let a = upload(&ctx, &[count, n, n], host.clone())?;
        let want: Vec<Complex64> = (0..count)
            .map(|m| host_det(&host[m * n * n..(m + 1) * n * n], n))
            .collect();
        let s = gpuarray::slogdet(&a)?;
        let (sign, logabs): (Vec<Complex64>, Vec<f64>) = (s.sign.to_vec()?, s.logabsdet.to_vec()?);
        for m in 0..count {
            assert!(
                (sign[m].norm() - 1.0).abs() <= 1e-12,
                "|sign| of matrix {m} of {n} x {n}: {}",
                sign[m]
            );
            assert!(
                (logabs[m] - want[m].norm().ln()).abs() <= 1e-10 * (1.0 + logabs[m].abs()),
                "logabsdet of {n} x {n}"
            );
            let w = want[m] / want[m].norm();
            assert!(
                (sign[m] - w).norm() <= 1e-10,
                "sign of matrix {m} of {n} x {n}: {} against {w}",
                sign[m]
            );
        }
        if n <= 17 {
            let d: Vec<Complex64> = gpuarray::det(&a)?.to_vec()?;
            for m in 0..count {
                assert!(
                    (d[m] - want[m]).norm() <= 1e-10 * want[m].norm().max(1.0),
                    "det {} against {}",
                    d[m],
                    want[m]
                );
            }
        }
    }
    // Complex32, factored in itself.
    let n = 12;
    let host: Vec<Complex64> = random(&mut rng, 2 * n * n)
        .into_iter()
        .map(|z| Complex64::new(f64::from(z.re as f32), f64::from(z.im as f32)))
        .collect();
    let a32 = upload(
        &ctx,
        &[2, n, n],
        host.iter()
            .map(|z| Complex32::new(z.re as f32, z.im as f32))
            .collect(),
    )?;
    let d: Vec<Complex32> = gpuarray::det(&a32)?.to_vec()?;
    for m in 0..2 {
        let w = host_det(&host[m * n * n..(m + 1) * n * n], n);
        let g = Complex64::new(f64::from(d[m].re), f64::from(d[m].im));
        assert!(
            (g - w).norm() <= 1e-4 * w.norm().max(1.0),
            "Complex32 det {g} against {w}"
        );
    }
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn solve_and_inv_of_complex_matrices_satisfy_their_systems() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(462);
    for (count, n, k) in [(3, 5, 2), (2, 300, 3)] {
        let a_host = random(&mut rng, count * n * n);
        let b_host = random(&mut rng, count * n * k);
        let x = gpuarray::solve(
            &upload(&ctx, &[count, n, n], a_host.clone())?,
            &upload(&ctx, &[count, n, k], b_host.clone())?,
        )?;
        assert_eq!(x.shape(), [count, n, k]);
        let r = residual(&a_host, &x.to_vec()?, &b_host, count, n, k);
        assert!(r <= 1e-9, "complex solve {count} x {n} x {n}: residual {r}");
    }
    for (count, n) in [(2, 6), (1, 140)] {
        let a_host = random(&mut rng, count * n * n);
        let inv = gpuarray::inv(&upload(&ctx, &[count, n, n], a_host.clone())?)?.to_vec()?;
        let eye: Vec<Complex64> = (0..count * n * n)
            .map(|e| Complex64::new(f64::from(u8::from(e % (n * n) / n == e % n)), 0.0))
            .collect();
        let r = residual(&a_host, &inv, &eye, count, n, n);
        assert!(r <= 1e-10, "complex inv {count} x {n} x {n}: residual {r}");
    }
    // Complex32 on one vector.
    let n = 9;
    let a_host: Vec<Complex64> = random(&mut rng, n * n)
        .into_iter()
        .map(|z| Complex64::new(f64::from(z.re as f32), f64::from(z.im as f32)))
        .collect();
    let b_host: Vec<Complex64> = random(&mut rng, n)
        .into_iter()
        .map(|z| Complex64::new(f64::from(z.re as f32), f64::from(z.im as f32)))
        .collect();
    let to32 = |v: &[Complex64]| {
        v.iter()
            .map(|z| Complex32::new(z.re as f32, z.im as f32))
            .collect::<Vec<_>>()
    };
    let x: Vec<Complex32> = gpuarray::solve(
        &upload(&ctx, &[n, n], to32(&a_host))?,
        &upload(&ctx, &[n], to32(&b_host))?,
    )?
    .to_vec()?;
    let x64: Vec<Complex64> = x
        .iter()
        .map(|z| Complex64::new(f64::from(z.re), f64::from(z.im)))
        .collect();
    let r = residual(&a_host, &x64, &b_host, 1, n, 1);
    assert!(r <= 1e-4, "Complex32 solve: residual {r}");
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_singular_complex_matrix_is_named() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(463);
    for n in [4, 150] {
        let mut host = random(&mut rng, 3 * n * n);
        for r in 0..n {
            host[2 * n * n + r * n + 1] = Complex64::new(0.0, 0.0);
        }
        let a = upload(&ctx, &[3, n, n], host)?;
        assert!(matches!(
            gpuarray::inv(&a),
            Err(Error::LinAlg(LinAlgError::Singular { matrix: 2, .. }))
        ));
        let s = gpuarray::slogdet(&a)?;
        let (sign, logabs): (Vec<Complex64>, Vec<f64>) = (s.sign.to_vec()?, s.logabsdet.to_vec()?);
        assert_eq!(sign[2], Complex64::new(0.0, 0.0));
        assert_eq!(logabs[2], f64::NEG_INFINITY);
        assert!((sign[0].norm() - 1.0).abs() < 1e-12);
    }
    Ok(())
}
