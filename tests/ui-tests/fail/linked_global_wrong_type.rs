//! The typed globals of a linked module come from every source, each typed by its C declaration.
//! (Named through the accessor's type rather than by `set`ting a wrong value, whose message
//! quotes the standard library's source when the `rust-src` component is installed.)
use gpu_runtime::driver::Global;
use gpu_runtime::{kernel, Context};

#[kernel(sources = [r#"
__constant__ float taps[3];
extern "C" __global__ void blur(float *y, const float *x, int n);
"#, r#"
extern __constant__ float taps[3];
__device__ int calls;
extern "C" __global__ void blur(float *y, const float *x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = taps[0] * x[i];
    if (i == 0) atomicAdd(&calls, 1);
}
"#])]
fn blur(y: &mut [f32], x: &[f32], n: i32);

fn main() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let _: Global<[f32; 4]> = blur::globals::taps(&ctx)?;
    let _: u32 = blur::globals::calls(&ctx)?.get()?;
    Ok(())
}
