use gpu_runtime::kernel;

#[kernel(r#"__global__ void gather(float **rows, float *out, int n) {}"#)]
fn gather(rows: &mut [f32], out: &mut [f32], n: i32);

fn main() {}
