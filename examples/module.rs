//! Several kernels from one CUDA source, compiled into one module: `#[kernel]` on a `mod`.
//! The kernels share a `__device__` helper and a `#define`; the module is compiled and loaded
//! once per context however many of its kernels are prepared.

use gpu_runtime::{kernel, Context};
use gpu_suite::{mismatch_error, run_example, Rng};

#[kernel(
    r#"
#define SCALE 0.5f
__device__ float clamp01(float v) { return fminf(fmaxf(v, 0.0f), 1.0f); }

__global__ void normalize(float *v, float lo, float hi, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) v[i] = clamp01((v[i] - lo) / (hi - lo));
}

__global__ void halve_into(const float *v, float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = SCALE * v[i];
}
"#
)]
mod image_ops {
    /// Maps `[lo, hi]` to `[0, 1]`, clamping.
    fn normalize(v: &mut [f32], lo: f32, hi: f32, n: i32);
    /// `out = v / 2`.
    fn halve_into(v: &[f32], out: &mut [f32], n: i32);
}

fn main() -> std::process::ExitCode {
    run_example("module", || {
        let ctx = Context::default()?;
        let n = 100_000;
        let host: Vec<f32> = Rng::new(5).vec_f32(n).iter().map(|v| v * 3.0).collect();

        let normalize = image_ops::normalize::prepare(&ctx)?;
        let halve = image_ops::halve_into::prepare(&ctx)?;
        let mut v = ctx.to_device(&host)?;
        let mut out = ctx.alloc::<f32>(n)?;
        let grid = (n as u32).div_ceil(256);
        normalize.prepared_call(grid, 256, &mut v, -1.0, 1.0, n as i32)?;
        halve.prepared_call(grid, 256, &v, &mut out, n as i32)?;

        let want: Vec<f32> = host
            .iter()
            .map(|x| 0.5 * ((x + 1.0) / 2.0).clamp(0.0, 1.0))
            .collect();
        mismatch_error("normalize then halve", &out.to_vec()?, &want, 1e-6)?;
        println!("module: two kernels from one module, {n} elements, match the CPU");
        Ok(())
    })
}
