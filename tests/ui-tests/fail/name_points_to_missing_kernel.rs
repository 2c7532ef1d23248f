use gpu_runtime::kernel;

#[kernel(r#"__global__ void scale_in_place(float *v, float factor, int n) {}"#, name = "scale_inplace")]
fn scale(v: &mut [f32], factor: f32, n: i32);

fn main() {}
