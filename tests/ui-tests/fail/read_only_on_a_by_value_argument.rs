//! `#[read_only]` is for a buffer whose C pointer is not `const`; a by-value parameter is
//! never written by the kernel, so the attribute there is a mistake.
use gpu_runtime::kernel;

#[kernel(r#"__global__ void scale(float *y, const float *x, float a, int n) {}"#)]
fn scale(y: &mut [f32], x: &[f32], #[read_only] a: f32, n: i32);

fn main() {}
