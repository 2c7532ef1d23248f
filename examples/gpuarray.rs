//! Arrays on the device, PyCUDA's `gpuarray` way: upload a matrix, work on views of it with a
//! kernel written as one expression, and reduce, without writing a `__global__` function.
//!
//! For each row of a matrix of samples (rows are features, columns observations, stored in
//! Fortran order as many numerical codes hand them over), scale and shift the features, then
//! report per feature the largest value and where it occurs, and the norm of the result.
//!
//! `cargo run --example gpuarray` on a machine with an NVIDIA GPU.

use gpu_runtime::gpuarray::{DeviceArray, ElementwiseKernel, KernelArg, ReductionKernel};
use gpu_runtime::ndarray::{s, Array2, Axis, ShapeBuilder};
use gpu_runtime::{elementwise, Context};

// The same map declared in Rust: the operation is checked against these types at build time.
#[elementwise("z = a * x + b")]
fn affine_map(a: f32, x: &DeviceArray<f32>, b: f32, z: &mut DeviceArray<f32>);

fn main() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let (features, samples) = (64, 10_000);
    let host = Array2::from_shape_fn((features, samples).f(), |(f, j)| {
        ((f * 31 + j * 17) % 101) as f32 / 101.0
    });
    let x = DeviceArray::from_ndarray(&ctx, &host)?;

    // z = a * x + b on every other sample (a view with a step: no copy is made).
    let affine = ElementwiseKernel::new("float a, const float *x, float b, float *z", "z = a * x + b")?;
    let picked = x.slice(s![.., ..;2])?;
    let mut z = DeviceArray::<f32, _>::empty(&ctx, picked.raw_dim())?;
    affine.launch([
        KernelArg::scalar(2.0f32),
        KernelArg::input(&picked),
        KernelArg::scalar(-1.0f32),
        KernelArg::output(&mut z),
    ])?;

    // Per feature: the largest value and its sample; over everything: the Euclidean norm.
    let maxima = z.max_axis(1)?.to_vec()?;
    let argmax = z.argmax_axis(1)?.to_vec()?;
    let norm = ReductionKernel::<f32>::new("const float *z", "z * z", "a + b", "0.0f")?.post_map("sqrtf(a)");
    let norm = norm.reduce([KernelArg::input(&z)])?.to_vec()?[0];

    // The same on the host, to check.
    let want = host.slice(s![.., ..;2]).mapv(|v| 2.0 * v - 1.0);
    let want_max: Vec<f32> = want
        .map_axis(Axis(1), |r| r.iter().copied().fold(f32::MIN, f32::max))
        .to_vec();
    assert_eq!(maxima, want_max);
    for (f, &j) in argmax.iter().enumerate() {
        assert_eq!(want[[f, j as usize]], maxima[f]);
    }
    let want_norm = want.iter().map(|v| v * v).sum::<f32>().sqrt();
    assert!((norm - want_norm).abs() <= 1e-3 * want_norm);
    // The same affine map as one fused expression, then the running sums of feature 0 and
    // noise drawn on the device (seeded: the same numbers on every GPU).
    let fused = (&picked * 2.0 - 1.0).eval()?;
    assert_eq!(fused.to_ndarray()?, z.to_ndarray()?.into_dyn());
    // And once more through the `#[elementwise]` declaration above, into a fresh array.
    let mut z2 = DeviceArray::<f32, _>::empty(&ctx, picked.raw_dim())?;
    affine_map(2.0, &picked, -1.0, &mut z2)?;
    assert_eq!(z2.to_ndarray()?, z.to_ndarray()?);
    let running = z.slice(s![0, ..])?.cumsum()?.to_vec()?;
    let want_running: f32 = want.row(0).sum();
    assert!((running[running.len() - 1] - want_running).abs() <= 1e-3 * want_running.abs().max(1.0));
    let noise = DeviceArray::<f32, _>::random_normal(&ctx, 1 << 16, 7, 0.0, 1.0)?;
    let noise_mean = noise.sum()? / (1 << 16) as f32;
    assert!(noise_mean.abs() < 0.05);
    println!(
        "feature 0: max {} at sample {}; norm {norm:.3} (host {want_norm:.3})",
        maxima[0],
        2 * argmax[0]
    );
    Ok(())
}
