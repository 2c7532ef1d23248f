//! Arrays of CUDA vector types (PyCUDA's `gpuarray.vec.float3`): points as a `DeviceArray` of
//! `Float3`, their distances from the origin by an `#[elementwise]` kernel that reads the
//! components, a reversed view copied on the device, and `float4`s packed from pairs of
//! `float2`s by a kernel declared at run time. Each result is checked against the CPU.

use gpu_runtime::elementwise;
use gpu_runtime::gpuarray::{DeviceArray, ElementwiseKernel, KernelArg};
use gpu_runtime::ndarray::{s, Array1};
use gpu_runtime::types::{Float2, Float3, Float4};
use gpu_runtime::Context;
use gpu_suite::{mismatch_error, run_example, Rng};

#[elementwise("norm = sqrtf(p.x * p.x + p.y * p.y + p.z * p.z)")]
fn norms(p: &DeviceArray<Float3>, norm: &mut DeviceArray<f32>);

fn main() -> std::process::ExitCode {
    run_example("array_vectors", || {
        let ctx = Context::default()?;
        let n = 1 << 20;
        let mut rng = Rng::new(5);
        let points: Vec<Float3> = (0..n)
            .map(|_| Float3::new(rng.f32(), rng.f32(), rng.f32()))
            .collect();
        let p = DeviceArray::from_ndarray(&ctx, &Array1::from(points.clone()))?;

        // Distances, on the GPU and on the CPU.
        let mut dist = DeviceArray::<f32, _>::zeros(&ctx, n)?;
        norms(&p, &mut dist)?;
        let want: Vec<f32> = points
            .iter()
            .map(|v| (v.x * v.x + v.y * v.y + v.z * v.z).sqrt())
            .collect();
        mismatch_error("norms", &dist.to_vec()?, &want, 1e-6)?;

        // A reversed view, copied on the device into new memory (12-byte elements).
        let reversed = p.slice(s![..;-1])?.to_contiguous()?.to_vec()?;
        if reversed.iter().ne(points.iter().rev()) {
            return Err("the reversed copy differs from the CPU's".into());
        }

        // float4 from pairs of float2, by a kernel declared with C parameters at run time.
        let pack = ElementwiseKernel::new(
            "const float2 *a, const float2 *b, float4 *z",
            "z = make_float4(a.x, a.y, b.x, b.y)",
        )?;
        let halves: Vec<Float2> = points.iter().map(|v| Float2::new(v.x, v.y)).collect();
        let a = DeviceArray::from_ndarray(&ctx, &Array1::from(halves.clone()))?;
        let mut packed = DeviceArray::full(&ctx, n, Float4::splat(0.0))?;
        pack.launch([
            KernelArg::input(&a),
            KernelArg::input(&a),
            KernelArg::output(&mut packed),
        ])?;
        let want_packed: Vec<Float4> = halves.iter().map(|h| Float4::new(h.x, h.y, h.x, h.y)).collect();
        if packed.to_vec()? != want_packed {
            return Err("the packed float4s differ from the CPU's".into());
        }
        println!(
            "array_vectors: {n} Float3 points ({} bytes each): norms, a reversed copy and {n} float4s packed \
             from float2 pairs match the CPU (first point {:?}, norm {:.4})",
            std::mem::size_of::<Float3>(),
            points[0],
            want[0]
        );
        Ok(())
    })
}
