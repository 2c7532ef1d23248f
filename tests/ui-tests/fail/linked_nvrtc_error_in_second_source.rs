//! Each source of a linked module is compiled at build time (as relocatable device code, so
//! the call to a device function of the other source is fine): a CUDA error in the second
//! source is a Rust error pointing at it.
use gpu_runtime::kernel;

#[kernel(sources = [r#"
__device__ float twice(float v) { return 2.0f * v; }
"#, r#"
__device__ float twice(float v);
extern "C" __global__ void apply(float *x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = twice(x[i]) + missing;
}
"#])]
fn apply(x: &mut [f32], n: i32);

fn main() {}
