//! A PyCUDA `gpuarray` program ported line by line: each Python line is quoted above the Rust
//! that replaces it. The program standardizes a matrix of samples by a per-column shift,
//! squashes it with `cumath` functions, keeps the positive part, mixes it with PyCUDA's
//! `ElementwiseKernel` text as written, and reduces — checked at the end against the same
//! computation on the host.
//!
//! `cargo run --example pycuda_port` on a machine with an NVIDIA GPU.

use gpu_runtime::gpuarray::{self, math, DeviceArray, ElementwiseKernel, KernelArg};
use gpu_runtime::ndarray::{Array1, Array2, Axis};
use gpu_runtime::Context;

fn main() -> gpu_runtime::Result<()> {
    // import pycuda.autoinit
    let ctx = Context::default()?;
    // a = np.random.randn(1000, 256).astype(np.float32); shift = np.random.randn(256).astype(np.float32)
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let mut normal = move || {
        // A small xorshift and the Box-Muller transform: the port needs no random crate.
        let mut u = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            ((seed >> 11) as f64 + 0.5) / (1u64 << 53) as f64
        };
        let (u1, u2) = (u(), u());
        ((-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()) as f32
    };
    let a = Array2::from_shape_fn((1000, 256), |_| normal());
    let shift = Array1::from_shape_fn(256, |_| normal());
    // a_gpu = gpuarray.to_gpu(a); shift_gpu = gpuarray.to_gpu(shift)
    let a_gpu = DeviceArray::from_ndarray(&ctx, &a)?;
    let shift_gpu = DeviceArray::from_ndarray(&ctx, &shift)?;
    // c_gpu = 2 * a_gpu - shift_gpu          (a (1000, 256) array minus a (256,) one: broadcast)
    let c_gpu = (2.0f32 * &a_gpu - &shift_gpu).eval()?;
    // e_gpu = cumath.exp(-abs(c_gpu))        (one kernel here: the expression is fused)
    let e_gpu = (-c_gpu.expr().abs()).exp().eval()?;
    // r_gpu = gpuarray.if_positive(c_gpu, e_gpu, gpuarray.zeros_like(e_gpu))
    let zeros = DeviceArray::<f32, _>::zeros_like(&e_gpu)?;
    let r_gpu = gpuarray::if_positive(&c_gpu, &e_gpu, &zeros)?;
    // lin = ElementwiseKernel("float a, float *x, float b, float *y, float *z",
    //                         "z[i] = a*x[i] + b*y[i]", "lin")
    // (the arrays it only reads are `const` here: a kernel may write a non-const one)
    let lin = ElementwiseKernel::with_name(
        "lin",
        "float a, const float *x, float b, const float *y, float *z",
        "z[i] = a*x[i] + b*y[i]",
    )?;
    // z_gpu = gpuarray.empty_like(e_gpu); lin(2, e_gpu, 3, r_gpu, z_gpu)
    let mut z_gpu = DeviceArray::<f32, _>::empty_like(&e_gpu)?;
    lin.launch([
        KernelArg::scalar(2.0f32),
        KernelArg::input(&e_gpu),
        KernelArg::scalar(3.0f32),
        KernelArg::input(&r_gpu),
        KernelArg::output(&mut z_gpu),
    ])?;
    // n_pos = gpuarray.sum((c_gpu > 0).astype(np.int64)).get()
    let n_pos = math::greater(&c_gpu, 0.0f32)?.astype::<i64>()?.sum()?;
    // total = gpuarray.sum(z_gpu).get(); biggest = gpuarray.max(z_gpu).get()
    let total = z_gpu.sum_as::<f64>()?;
    let biggest = z_gpu.max()?;
    // col_means = z_gpu.get().mean(axis=0)   (on the GPU here: a reduction along axis 0)
    let col_means = z_gpu.mean_axis(0)?.to_vec()?;

    // The same on the host, to check the port.
    let c = a.mapv(|x| 2.0 * x) - &shift;
    let e = c.mapv(|x| (-x.abs()).exp());
    let r = ndarray_where(&c, &e);
    let z = e.mapv(|x| 2.0 * x) + r.mapv(|x| 3.0 * x);
    let host_pos = c.iter().filter(|&&x| x > 0.0).count() as i64;
    let host_total: f64 = z.iter().map(|&x| f64::from(x)).sum();
    let host_max = z.iter().copied().fold(f32::MIN, f32::max);
    let host_means = z.mapv(f64::from).mean_axis(Axis(0)).expect("1000 rows");
    assert_eq!(n_pos, host_pos);
    assert!(
        (total - host_total).abs() <= 1e-4 * host_total.abs().max(1.0),
        "{total} vs {host_total}"
    );
    assert!((biggest - host_max).abs() <= 1e-5 * host_max.abs().max(1.0));
    for (g, h) in col_means.iter().zip(host_means.iter()) {
        assert!((f64::from(*g) - h).abs() <= 1e-5, "{g} vs {h}");
    }
    println!(
        "{n_pos} positive of {}; sum {total:.3}, max {biggest:.4}, matching the host",
        c.len()
    );
    Ok(())
}

/// `where(c > 0, e, 0)` on the host.
fn ndarray_where(c: &Array2<f32>, e: &Array2<f32>) -> Array2<f32> {
    let mut r = e.clone();
    r.zip_mut_with(c, |r, &c| {
        if c <= 0.0 {
            *r = 0.0;
        }
    });
    r
}
