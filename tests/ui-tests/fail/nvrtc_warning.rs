//! NVRTC's warnings surface as Rust warnings at the kernel source (this case fails only
//! because of the `compile_error!` below, so that the warning is in the snapshot).
use gpu_runtime::kernel;

#[kernel(r#"
__global__ void scale(float *v, float factor, int n) {
    int unused = 3;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) v[i] *= factor;
}
"#)]
fn scale(v: &mut [f32], factor: f32, n: i32);

compile_error!("stop here, after the warning");

fn main() {}
