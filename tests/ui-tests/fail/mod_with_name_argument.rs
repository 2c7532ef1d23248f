use gpu_runtime::kernel;

#[kernel(r#"__global__ void add(const float *a, const float *b, float *c, int n) {}"#, name = "add")]
mod ops {
    fn add(a: &[f32], b: &[f32], c: &mut [f32], n: i32);
}

fn main() {}
