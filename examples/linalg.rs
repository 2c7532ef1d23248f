//! NumPy's `linalg` on the device, as a CuPy user writes it: a batch of 256 small systems
//! solved at once (`solve`), their determinants (`det`, `slogdet`) and inverses (`inv`); the
//! eigenvalues of symmetric matrices (`eigh`), a least-squares fit (`lstsq`), the rank and
//! pseudo-inverse from the singular values (`svd`, `matrix_rank`, `pinv`), a Cholesky factor
//! and the norms; one 512 x 512 system (factored blocked over the GPU), and the determinants
//! and inverses of complex matrices. Each result is checked against the host.
//!
//! `cargo run --release --example linalg` on a machine with an NVIDIA GPU.

use gpu_runtime::gpuarray::{self, DeviceArray, MatrixOrd, Uplo};
use gpu_runtime::ndarray::{Array, Array1, Array2, Array3, Axis};
use gpu_runtime::types::Complex64;
use gpu_runtime::Context;

/// A fixed pseudo-random sequence in `[-1, 1)`.
fn numbers(seed: u64) -> impl FnMut() -> f64 {
    let mut state = seed;
    move || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (state >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
    }
}

fn main() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut next = numbers(7);

    // 256 systems of 8 unknowns, made well conditioned by a heavy diagonal.
    let (count, n) = (256, 8);
    let a_host = Array3::from_shape_fn((count, n, n), |(_, i, j)| next() + if i == j { 4.0 } else { 0.0 });
    let b_host = Array2::from_shape_fn((count, n), |_| next());
    let a = DeviceArray::from_ndarray(&ctx, &a_host)?;
    let b = DeviceArray::from_ndarray(&ctx, &b_host)?;
    // np.linalg.solve(a, b[..., None])[..., 0]: every system in one launch.
    let x = gpuarray::solve(&a, &b.view().into_dyn().expand_dims(2)?)?.to_ndarray()?;
    for m in 0..count {
        for i in 0..n {
            let ax: f64 = (0..n).map(|j| a_host[[m, i, j]] * x[[m, j, 0]]).sum();
            assert!((ax - b_host[[m, i]]).abs() < 1e-12, "system {m}, row {i}");
        }
    }

    // det and slogdet agree; inv(a) @ a is the identity.
    let det = gpuarray::det(&a)?.to_vec()?;
    let s = gpuarray::slogdet(&a)?;
    let (sign, logabs) = (s.sign.to_vec()?, s.logabsdet.to_vec()?);
    for m in 0..count {
        assert!((det[m] - sign[m] * logabs[m].exp()).abs() <= 1e-9 * det[m].abs());
    }
    let inv = gpuarray::inv(&a)?.to_ndarray()?;
    for m in [0, count - 1] {
        for i in 0..n {
            for j in 0..n {
                let v: f64 = (0..n).map(|k| inv[[m, i, k]] * a_host[[m, k, j]]).sum();
                assert!((v - f64::from(u8::from(i == j))).abs() < 1e-12);
            }
        }
    }

    // eigh of a symmetric matrix: a v = w v, eigenvalues ascending.
    let sym_host = Array2::from_shape_fn((n, n), |(i, j)| ((i * j) as f64).cos() + (i + j) as f64);
    let sym = DeviceArray::from_ndarray(&ctx, &sym_host)?;
    let e = gpuarray::eigh(&sym, Uplo::L)?;
    let (w, v) = (e.eigenvalues.to_vec()?, e.eigenvectors.to_ndarray()?);
    assert!(w.windows(2).all(|p| p[0] <= p[1]));
    for (k, wk) in w.iter().enumerate() {
        for i in 0..n {
            let av: f64 = (0..n).map(|j| sym_host[[i, j]] * v[[j, k]]).sum();
            assert!((av - wk * v[[i, k]]).abs() < 1e-10);
        }
    }

    // lstsq: the line through noisy samples; the rank and pseudo-inverse of a rank-2 matrix.
    let t = Array1::from_shape_fn(1000, |i| i as f64 / 999.0);
    let design = Array2::from_shape_fn((1000, 2), |(i, j)| if j == 0 { t[i] } else { 1.0 });
    let y = t.mapv(|t| 3.0 * t - 1.0) + Array1::from_shape_fn(1000, |_| 1e-3 * next());
    let fit = gpuarray::lstsq(
        &DeviceArray::from_ndarray(&ctx, &design)?,
        &DeviceArray::from_ndarray(&ctx, &y)?,
        None,
    )?;
    let line = fit.x.to_vec()?;
    assert!((line[0] - 3.0).abs() < 1e-3 && (line[1] + 1.0).abs() < 1e-3 && fit.rank == 2);
    let low = Array::from_shape_fn((6, 5), |(i, j)| {
        (i + 1) as f64 * (j as f64 + 0.5) + (i * j % 2) as f64
    });
    let low_d = DeviceArray::from_ndarray(&ctx, &low)?;
    assert_eq!(gpuarray::matrix_rank(&low_d, None)?.to_vec()?, [2]);
    let p = gpuarray::pinv(&low_d, 1e-12)?.to_ndarray()?;
    // a a+ a = a.
    let ap = low.dot(&p.into_dimensionality::<gpu_runtime::ndarray::Ix2>().unwrap());
    let apa = ap.dot(&low);
    assert!(apa.iter().zip(low.iter()).all(|(x, y)| (x - y).abs() < 1e-9));

    // Cholesky of a symmetric positive definite matrix; the norms of a.
    let spd = sym_host.t().dot(&sym_host) + Array2::<f64>::eye(n);
    let l = gpuarray::cholesky(&DeviceArray::from_ndarray(&ctx, &spd)?)?.to_ndarray()?;
    let llt = l.dot(&l.t());
    assert!(llt
        .iter()
        .zip(spd.iter())
        .all(|(x, y)| (x - y).abs() < 1e-9 * y.abs().max(1.0)));
    let fro = gpuarray::matrix_norm(&a, MatrixOrd::Fro, false)?.to_vec()?;
    let want0: f64 = a_host
        .index_axis(Axis(0), 0)
        .iter()
        .map(|v| v * v)
        .sum::<f64>()
        .sqrt();
    assert!((fro[0] - want0).abs() < 1e-12 * want0);

    // One large system (factored blocked over the whole GPU), and complex ones.
    let big = 512;
    let g_host = Array2::from_shape_fn((big, big), |(i, j)| next() + if i == j { 8.0 } else { 0.0 });
    let h_host = Array1::from_shape_fn(big, |_| next());
    let xg = gpuarray::solve(
        &DeviceArray::from_ndarray(&ctx, &g_host)?,
        &DeviceArray::from_ndarray(&ctx, &h_host)?,
    )?;
    let residual = (g_host.dot(&xg.to_ndarray()?) - &h_host)
        .iter()
        .fold(0.0f64, |m, r| m.max(r.abs()));
    assert!(residual < 1e-8, "{big} x {big}: residual {residual}");
    let z_host = Array3::from_shape_fn((4, 3, 3), |(_, i, j)| {
        Complex64::new(next() + if i == j { 3.0 } else { 0.0 }, next())
    });
    let z = DeviceArray::from_ndarray(&ctx, &z_host)?;
    // The sign of a complex determinant is det / |det|, its logarithm real.
    let (zd, zs) = (gpuarray::det(&z)?.to_vec()?, gpuarray::slogdet(&z)?);
    let (zsign, zlog) = (zs.sign.to_vec()?, zs.logabsdet.to_vec()?);
    for m in 0..4 {
        assert!((zd[m] - zsign[m] * zlog[m].exp()).norm() <= 1e-12 * zd[m].norm());
    }
    let zi = gpuarray::inv(&z)?.to_ndarray()?;
    for m in 0..4 {
        let product = zi.index_axis(Axis(0), m).dot(&z_host.index_axis(Axis(0), m));
        assert!((product - Array2::<Complex64>::eye(3))
            .iter()
            .all(|d| d.norm() < 1e-12));
    }

    println!(
        "linalg: {count} systems solved, det/slogdet/inv, eigh, lstsq, rank, pinv, cholesky, norms, \
         one {big} x {big} system, complex det/slogdet/inv: ok"
    );
    Ok(())
}
