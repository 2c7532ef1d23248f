//! A #[read_only] argument is not written, so nothing comes back from it: #[Out] and #[InOut]
//! contradict it.
use gpu_runtime::kernel;

#[kernel(r#"__global__ void sum(float *out, float *x, int n) {}"#)]
fn sum(#[Out] out: &mut [f32], #[InOut] #[read_only] x: &[f32], n: i32);

fn main() {}
