// A cluster shape is one to three integer extents.
use gpu_runtime::kernel;

#[kernel(cluster = (2, 1, 1, 1), r#"__global__ void fill(float *y, int n) {}"#)]
fn fill(y: &mut [f32], n: i32);

fn main() {}
