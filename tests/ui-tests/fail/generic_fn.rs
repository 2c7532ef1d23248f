use gpu_runtime::kernel;

#[kernel(r#"__global__ void scale(float *v, float factor, int n) {}"#)]
fn scale<T>(v: &mut [T], factor: T, n: i32);

fn main() {}
