//! A typed global takes its Rust type from the C declaration: `float coeffs[4]` is `[f32; 4]`.
use gpu_runtime::{kernel, Context};

#[kernel(r#"
__constant__ float coeffs[4];
__device__ int counter;
__global__ void poly(float *x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = coeffs[0] + coeffs[1] * x[i] + counter;
}
"#)]
fn poly(x: &mut [f32], n: i32);

fn main() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    poly::globals::coeffs(&ctx)?.set([1.0f64; 4])?;
    poly::globals::coeffs(&ctx)?.set([1.0f32; 3])?;
    let _: u32 = poly::globals::counter(&ctx)?.get()?;
    Ok(())
}
