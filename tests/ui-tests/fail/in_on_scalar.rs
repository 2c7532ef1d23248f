use gpu_runtime::kernel;

#[kernel(r#"__global__ void copy(const float *src, float *dst, int n) {}"#)]
fn copy(#[In] src: &[f32], #[Out] dst: &mut [f32], #[In] n: i32);

fn main() {}
