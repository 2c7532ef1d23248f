use gpu_runtime::kernel;

#[kernel(r#"__global__ void maybe_clear(float *v, bool clear, int n) {}"#)]
fn maybe_clear(v: &mut [f32], clear: i32, n: i32);

fn main() {}
