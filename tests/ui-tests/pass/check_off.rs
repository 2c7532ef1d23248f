//! The broken bodies of the nvrtc_* fail cases build with the deep check switched off: only the
//! signatures are checked (NVRTC would reject them at run time), and nothing is said: a passing
//! case prints no warning (the case of a header NVRTC cannot find, which warns, is
//! header_not_found_is_no_error.rs).
use gpu_runtime::kernel;

#[kernel(r#"
__global__ void syntax(float *v, float factor, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x
    if (i < n) v[i] *= factor;
}
"#, check = false)]
fn syntax(v: &mut [f32], factor: f32, n: i32);

#[kernel(r#"
__global__ void undefined(float *v, float factor, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) v[i] *= factr;
}
"#, check = false)]
fn undefined(v: &mut [f32], factor: f32, n: i32);

#[kernel(file = "../../../../tests/ui-tests/kernels/type_error.cu", check = false)]
fn scale(v: &mut [f32], factor: f32, n: i32);

#[kernel(r#"
__global__ void warns(float *v, float factor, int n) {
    int unused = 3;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) v[i] *= factor;
}
"#, check = false)]
fn warns(v: &mut [f32], factor: f32, n: i32);

fn main() {
    let _ = syntax::prepare;
    let _ = undefined::prepare;
    let _ = scale::prepare;
    let _ = warns::prepare;
}
