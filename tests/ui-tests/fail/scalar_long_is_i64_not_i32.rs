use gpu_runtime::kernel;

// CUDA device code is LP64: `long` is 64 bits wide.
#[kernel(r#"__global__ void fill(float *v, long n) {}"#)]
fn fill(v: &mut [f32], n: i32);

fn main() {}
