use gpu_runtime::kernel;

#[kernel(r#"__global__ void fill(float *dst, float n) {}"#)]
fn fill(#[len = n] dst: &mut [f32], n: f32);

fn main() {}
