use gpu_runtime::kernel;

#[kernel(r#"__global__ void fill(float *dst, int n) {}"#)]
fn fill(dst: &mut [f32], #[len = 4] n: i32);

fn main() {}
