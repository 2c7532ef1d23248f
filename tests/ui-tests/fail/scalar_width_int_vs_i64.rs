use gpu_runtime::kernel;

#[kernel(r#"__global__ void fill(float *v, int n) {}"#)]
fn fill(v: &mut [f32], n: i64);

fn main() {}
