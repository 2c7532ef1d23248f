//! Architectures to embed are `sm_XY` (cubin) or `compute_XY` (PTX).
use gpu_runtime::kernel;

#[kernel(r#"
__global__ void fill(float *x, float v, int n) {}
"#, embed = ["sm_90", "ampere"])]
fn fill(x: &mut [f32], v: f32, n: i32);

fn main() {}
