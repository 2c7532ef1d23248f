use gpu_runtime::kernel;

#[kernel(r#"__global__ void copy(const float *src, float *dst, int n) {}"#)]
fn copy(#[Input] src: &[f32], #[Out] dst: &mut [f32], n: i32);

fn main() {}
