//! A typed global takes its Rust type from the C declaration: `float coeffs[4]` is `[f32; 4]`.
//! (Named through the accessor's type rather than by `set`ting a wrong value, whose message
//! quotes the standard library's source when the `rust-src` component is installed.)
use gpu_runtime::driver::Global;
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
    let _: Global<[f64; 4]> = poly::globals::coeffs(&ctx)?;
    let _: Global<[f32; 3]> = poly::globals::coeffs(&ctx)?;
    let _: u32 = poly::globals::counter(&ctx)?.get()?;
    Ok(())
}
