//! `instantiate` on a kernel that is not a template.
use gpu_runtime::kernel;

#[kernel(r#"
__global__ void fill(float *x, float v, int n) {}
"#, instantiate = [f32])]
fn fill<T>(x: &mut [T], v: T, n: i32);

fn main() {}
