use gpu_runtime::kernel;

#[kernel(r#"__global__ void scale(float *v, float factor, int n) {}"#)]
fn scale(v: &mut f32, factor: f32, n: i32);

fn main() {}
