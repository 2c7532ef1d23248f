//! C `const float *x` already says the kernel only reads it: `#[read_only]` there is noise
//! that would hide a later change of the C declaration.
use gpu_runtime::kernel;

#[kernel(r#"__global__ void sum(float *out, const float *x, int n) {}"#)]
fn sum(out: &mut [f32], #[read_only] x: &[f32], n: i32);

fn main() {}
