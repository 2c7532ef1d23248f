use gpu_runtime::kernel;

#[kernel(r#"__global__ void fill(float *v, size_t n) {}"#)]
fn fill(v: &mut [f32], n: u64);

fn main() {}
