use gpu_runtime::kernel;

#[kernel(r#"__global__ void fill(float *dst, int n) {}"#)]
fn fill(#[len = n] #[len(n)] dst: &mut [f32], n: i32);

fn main() {}
