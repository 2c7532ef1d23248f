//! An identifier the kernel body never declares.
use gpu_runtime::kernel;

#[kernel(r#"
__global__ void scale(float *v, float factor, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) v[i] *= factr;
}
"#)]
fn scale(v: &mut [f32], factor: f32, n: i32);

fn main() {}
