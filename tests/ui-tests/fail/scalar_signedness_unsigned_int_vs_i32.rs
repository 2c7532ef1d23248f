use gpu_runtime::kernel;

#[kernel(r#"__global__ void fill(float *v, unsigned int n) {}"#)]
fn fill(v: &mut [f32], n: i32);

fn main() {}
