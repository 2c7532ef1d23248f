use gpu_runtime::kernel;

#[kernel(r#"__global__ void axpy(float a, const float *x, float *y, int n) {}"#)]
fn axpy(a: f32, x: &[f32]);

fn main() {}
