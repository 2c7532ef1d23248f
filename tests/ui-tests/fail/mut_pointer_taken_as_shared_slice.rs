use gpu_runtime::kernel;

#[kernel(r#"__global__ void copy(const float *src, float *dst, int n) {}"#)]
fn copy(src: &[f32], dst: &[f32], n: i32);

fn main() {}
