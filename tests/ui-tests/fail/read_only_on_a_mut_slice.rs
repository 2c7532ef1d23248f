//! `#[read_only]` says the kernel only reads the buffer: it is taken by shared borrow.
use gpu_runtime::kernel;

#[kernel(r#"__global__ void sum(float *out, float *x, int n) {}"#)]
fn sum(out: &mut [f32], #[read_only] x: &mut [f32], n: i32);

fn main() {}
