use gpu_runtime::kernel;

#[kernel(r#"
__global__ void add(const float *a, const float *b, float *c, int n) {}
__global__ void scale(float *v, float factor, int n) {}
__global__ void fill(float *v, float value, int n) {}
"#)]
mod ops {
    fn add(a: &[f32], b: &[f32], c: &mut [f32], n: i32);
    fn scale(v: &mut [f32], factor: f64, n: i32);
    fn fill(v: &mut [f32], value: f32, n: i32);
}

fn main() {}
