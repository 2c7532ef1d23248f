//! Every NVRTC error is reported, here two in a module of two kernels.
use gpu_runtime::kernel;

#[kernel(r#"
__global__ void a(float *v) { v[0] = undefined_a; }
__global__ void b(float *v) { v[0] = undefined_b; }
"#)]
mod two {
    fn a(v: &mut [f32]);
    fn b(v: &mut [f32]);
}

fn main() {}
