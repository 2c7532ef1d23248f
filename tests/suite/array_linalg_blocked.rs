//! `det`, `slogdet`, `solve` and `inv` of matrices of 128 rows and more, which the library
//! factors blocked over many blocks (panels of a few columns, then a tiled product over the
//! trailing matrix), against LU with partial pivoting computed here in `f64` on random
//! matrices: at the order where the blocked path starts (128, 129), stacks, a panel's rows
//! more than its block's threads (1100), a panel too tall for shared memory (1900 rows of
//! `f64`), `f32` and an integer input, a transposed input, on a stream; singular matrices
//! (a zero column, a zero row) named by their index, their `slogdet` sign 0, and NaN.

use gpu_runtime::gpuarray::{self, DeviceArray};
use gpu_runtime::{Context, Error, LinAlgError, Stream};
use gpu_suite::Rng;

use super::array_linalg_lu::{as_f64, assert_near, host_det, host_matmul, random_matrices, upload};

/// The sign and the logarithm of the magnitude of the determinant of the `n x n` matrix `a`
/// (C order), by LU with partial pivoting in `f64`.
fn host_slogdet(a: &[f64], n: usize) -> (f64, f64) {
    let mut m = a.to_vec();
    let (mut sign, mut logabs) = (1.0, 0.0);
    for j in 0..n {
        let p = (j..n)
            .max_by(|&x, &y| m[x * n + j].abs().total_cmp(&m[y * n + j].abs()))
            .unwrap();
        if m[p * n + j] == 0.0 {
            return (0.0, f64::NEG_INFINITY);
        }
        if p != j {
            for c in 0..n {
                m.swap(j * n + c, p * n + c);
            }
            sign = -sign;
        }
        let d = m[j * n + j];
        sign *= d.signum();
        logabs += d.abs().ln();
        for i in j + 1..n {
            let f = m[i * n + j] / d;
            for c in j..n {
                m[i * n + c] -= f * m[j * n + c];
            }
        }
    }
    (sign, logabs)
}

/// The largest `|a x - b|` of `count` systems `n x n` with `k` right-hand sides each.
fn residual(a: &[f64], x: &[f64], b: &[f64], count: usize, n: usize, k: usize) -> f64 {
    (0..count)
        .flat_map(|m| {
            let ax = host_matmul(
                &a[m * n * n..(m + 1) * n * n],
                &x[m * n * k..(m + 1) * n * k],
                n,
                k,
            );
            ax.into_iter()
                .zip(&b[m * n * k..(m + 1) * n * k])
                .map(|(g, w)| (g - w).abs())
                .collect::<Vec<_>>()
        })
        .fold(0.0, f64::max)
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn slogdet_and_det_of_large_stacks_match_the_host() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(401);
    for (count, n) in [(3, 128), (2, 129), (2, 200), (1, 1100)] {
        let host = random_matrices(&mut rng, count, n);
        let a = upload(&ctx, &[count, n, n], host.clone())?;
        let s = gpuarray::slogdet(&a)?;
        let (sign, logabs) = (s.sign.to_vec()?, s.logabsdet.to_vec()?);
        for m in 0..count {
            let (ws, wl) = host_slogdet(&host[m * n * n..(m + 1) * n * n], n);
            assert_eq!(sign[m], ws, "slogdet sign of matrix {m} of {n} x {n}");
            assert!(
                (logabs[m] - wl).abs() <= 1e-10 * wl.abs().max(1.0),
                "slogdet of matrix {m} of {n} x {n}: {} against {wl}",
                logabs[m]
            );
        }
        if n <= 200 {
            let want: Vec<f64> = (0..count)
                .map(|m| host_det(&host[m * n * n..(m + 1) * n * n], n))
                .collect();
            assert_near(
                &gpuarray::det(&a)?.to_vec()?,
                &want,
                1e-10,
                &format!("det of {n} x {n}"),
            );
        }
    }
    // f32 (factored in f32), the logarithm to f32's precision.
    let n = 150;
    let host: Vec<f64> = random_matrices(&mut rng, 2, n)
        .into_iter()
        .map(|x| f64::from(x as f32))
        .collect();
    let a32 = upload(&ctx, &[2, n, n], host.iter().map(|&x| x as f32).collect())?;
    let s = gpuarray::slogdet(&a32)?;
    let (sign, logabs) = (s.sign.to_vec()?, s.logabsdet.to_vec()?);
    for m in 0..2 {
        let (ws, wl) = host_slogdet(&host[m * n * n..(m + 1) * n * n], n);
        assert_eq!(f64::from(sign[m]), ws, "f32 slogdet sign");
        assert!(
            (f64::from(logabs[m]) - wl).abs() <= 1e-3 * wl.abs(),
            "f32 slogdet {} against {wl}",
            logabs[m]
        );
    }
    // A transposed (strided) matrix has the same determinant.
    let n = 160;
    let host = random_matrices(&mut rng, 1, n);
    let a = upload(&ctx, &[n, n], host.clone())?;
    let t = gpuarray::det(&a.t())?.to_vec()?;
    assert_near(&t, &[host_det(&host, n)], 1e-10, "det of a transpose");
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn solve_and_inv_of_large_matrices_satisfy_their_systems() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(402);
    // Stacks with several right-hand sides, and one vector.
    for (count, n, k) in [(2, 300, 3), (3, 129, 1), (1, 1100, 2)] {
        let a_host = random_matrices(&mut rng, count, n);
        let b_host: Vec<f64> = (0..count * n * k).map(|_| rng.f64()).collect();
        let a = upload(&ctx, &[count, n, n], a_host.clone())?;
        let b = upload(&ctx, &[count, n, k], b_host.clone())?;
        let x = gpuarray::solve(&a, &b)?;
        assert_eq!(x.shape(), [count, n, k]);
        let r = residual(&a_host, &x.to_vec()?, &b_host, count, n, k);
        assert!(
            r <= 1e-9,
            "solve of {count} x {n} x {n}, {k} columns: residual {r}"
        );
    }
    // One matrix taller than the panel's shared memory holds in f64.
    let n = 1900;
    let a_host = random_matrices(&mut rng, 1, n);
    let b_host: Vec<f64> = (0..n).map(|_| rng.f64()).collect();
    let stream = Stream::new(&ctx)?;
    let x = gpuarray::on(&stream).solve(
        &upload(&ctx, &[n, n], a_host.clone())?,
        &upload(&ctx, &[n], b_host.clone())?,
    )?;
    let r = residual(&a_host, &x.to_vec()?, &b_host, 1, n, 1);
    assert!(r <= 1e-8, "solve of 1900 x 1900: residual {r}");
    // inv: a @ inv(a) is the identity.
    let (count, n) = (2, 260);
    let a_host = random_matrices(&mut rng, count, n);
    let inv = gpuarray::inv(&upload(&ctx, &[count, n, n], a_host.clone())?)?;
    assert_eq!(inv.shape(), [count, n, n]);
    let got = inv.to_vec()?;
    let eye: Vec<f64> = (0..count * n * n)
        .map(|e| f64::from(u8::from(e % (n * n) / n == e % n)))
        .collect();
    let r = residual(&a_host, &got, &eye, count, n, n);
    assert!(r <= 1e-9, "inv of {count} x {n} x {n}: residual {r}");
    // f32, and integers (solved in f64).
    let n = 257;
    let a_host: Vec<f64> = random_matrices(&mut rng, 1, n)
        .into_iter()
        .map(|x| f64::from(x as f32))
        .collect();
    let b_host: Vec<f64> = (0..n).map(|_| f64::from(rng.f64() as f32)).collect();
    let x32 = gpuarray::solve(
        &upload(&ctx, &[n, n], a_host.iter().map(|&x| x as f32).collect())?,
        &upload(&ctx, &[n], b_host.iter().map(|&x| x as f32).collect())?,
    )?;
    let r = residual(&a_host, &as_f64(x32.to_vec()?), &b_host, 1, n, 1);
    assert!(r <= 1e-2, "f32 solve of 257 x 257: residual {r}");
    let n = 130;
    let ints: Vec<i32> = (0..n * n)
        .map(|e| (rng.next_u64() % 21) as i32 - 10 + if e % (n + 1) == 0 { 200 } else { 0 })
        .collect();
    let x: DeviceArray<f64, _> = gpuarray::inv(&upload(&ctx, &[n, n], ints.clone())?)?;
    let a_host: Vec<f64> = ints.iter().map(|&v| f64::from(v)).collect();
    let eye: Vec<f64> = (0..n * n).map(|e| f64::from(u8::from(e / n == e % n))).collect();
    let r = residual(&a_host, &x.to_vec()?, &eye, 1, n, n);
    assert!(r <= 1e-12, "inv of an i32 130 x 130: residual {r}");
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn singular_large_matrices_are_named_and_nan_spreads() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(403);
    let (count, n) = (3, 140);
    let mut host = random_matrices(&mut rng, count, n);
    // Matrix 1: a zero column (a zero pivot in the first panel's width); matrix 2: a zero row
    // (the zero pivot comes last).
    for r in 0..n {
        host[n * n + r * n + 5] = 0.0;
    }
    for c in 0..n {
        host[2 * n * n + 7 * n + c] = 0.0;
    }
    let a = upload(&ctx, &[count, n, n], host.clone())?;
    let b = upload(&ctx, &[n], vec![1.0f64; n])?;
    assert!(matches!(
        gpuarray::solve(&a, &b.into_dyn()),
        Err(Error::LinAlg(LinAlgError::Singular { matrix: 1, .. }))
    ));
    assert!(matches!(
        gpuarray::inv(&a),
        Err(Error::LinAlg(LinAlgError::Singular { matrix: 1, .. }))
    ));
    let d = gpuarray::det(&a)?.to_vec()?;
    assert!(d[0] != 0.0 && d[1] == 0.0 && d[2] == 0.0, "det {d:?}");
    let s = gpuarray::slogdet(&a)?;
    let (sign, logabs) = (s.sign.to_vec()?, s.logabsdet.to_vec()?);
    assert_eq!(&sign[1..], [0.0, 0.0]);
    assert!(
        logabs[1] == f64::NEG_INFINITY && logabs[2] == f64::NEG_INFINITY,
        "{logabs:?}"
    );
    assert_eq!(sign[0], host_slogdet(&host[..n * n], n).0);
    // A stack whose first matrix is all zeros names matrix 0.
    let mut two = host[..2 * n * n].to_vec();
    two[..n * n].fill(0.0);
    assert!(matches!(
        gpuarray::inv(&upload(&ctx, &[2, n, n], two)?),
        Err(Error::LinAlg(LinAlgError::Singular { matrix: 0, .. }))
    ));
    // A NaN makes its matrix's determinant NaN and leaves the others.
    let mut nan = host[..n * n].to_vec();
    nan.extend_from_slice(&host[..n * n]);
    nan[n * n + 3 * n + 9] = f64::NAN;
    let d = gpuarray::det(&upload(&ctx, &[2, n, n], nan)?)?.to_vec()?;
    assert!(d[1].is_nan() && !d[0].is_nan(), "det {d:?}");
    Ok(())
}
