use gpu_runtime::kernel;

// A bool is fine by value, but not as buffer element: the device may write any byte into it.
#[kernel(r#"__global__ void mask(const bool *keep, float *v, int n) {}"#)]
fn mask(keep: &[bool], v: &mut [f32], n: i32);

fn main() {}
