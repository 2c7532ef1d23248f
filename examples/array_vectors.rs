//! Arrays of CUDA vector types (PyCUDA's `gpuarray.vec.float3`): points as a `DeviceArray` of
//! `Float3`, their distances from the origin by an `#[elementwise]` kernel that reads the
//! components, a reversed view copied on the device, and `float4`s packed from pairs of
//! `float2`s by a kernel declared at run time. Each result is checked against the CPU.

use gpu_runtime::elementwise;
use gpu_runtime::gpuarray::{DeviceArray, ElementwiseKernel, KernelArg};
use gpu_runtime::ndarray::{s, Array1};
use gpu_runtime::types::{Float2, Float3, Float4};
use gpu_runtime::Context;

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

// The example's own checking helpers (a copy of this file in another crate needs nothing else).

/// Runs the example's body: on failure (no GPU, a compile error, or results that differ from the
/// CPU reference) prints the error in one sentence and exits with status 1.
fn run_example(
    name: &str,
    body: impl FnOnce() -> Result<(), Box<dyn std::error::Error>>,
) -> std::process::ExitCode {
    match body() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{name}: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

/// An error naming the first element where the GPU's `got` and the CPU's `want` differ by more
/// than `tol * (1 + |want|)` (a NaN differs from everything).
fn mismatch_error(what: &str, got: &[f32], want: &[f32], tol: f32) -> Result<(), Box<dyn std::error::Error>> {
    if got.len() != want.len() {
        return Err(format!(
            "{what}: {} elements on the GPU but {} on the CPU",
            got.len(),
            want.len()
        )
        .into());
    }
    let differs = |(g, w): (&f32, &f32)| {
        let d = (g - w).abs();
        g != w && (d.is_nan() || d >= tol * (1.0 + w.abs()))
    };
    match got.iter().zip(want).position(differs) {
        None => Ok(()),
        Some(i) => Err(format!(
            "{what}: element {i} is {} on the GPU but {} on the CPU",
            got[i], want[i]
        )
        .into()),
    }
}

/// A small seeded xorshift generator: reproducible random data without a dependency.
struct Rng(u64);

impl Rng {
    /// A generator from a seed (any value).
    fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    /// The next 64 random bits.
    fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }

    /// A float uniform in `[-1, 1)`.
    fn f32(&mut self) -> f32 {
        ((self.next_u64() >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
    }
}
