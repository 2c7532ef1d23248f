//! The broken bodies of the nvrtc_* fail cases build with the deep check switched off: only the
//! signatures are checked (NVRTC would reject them at run time).
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

#[kernel(file = "../../../../ui-tests/kernels/type_error.cu", check = false)]
fn scale(v: &mut [f32], factor: f32, n: i32);

#[kernel(r#"
__global__ void warns(float *v, float factor, int n) {
    int unused = 3;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) v[i] *= factor;
}
"#, check = false)]
fn warns(v: &mut [f32], factor: f32, n: i32);

// A header NVRTC cannot find at build time is not a build error (a directory only the machine
// that runs the program has may hold it): a warning names the header, and
// GPU_RUNTIME_BUILD_CHECK=require would make it an error.
#[kernel(r#"
#include "not_here.cuh"
__global__ void with_header(float *v, int n) { if (n > 0) v[0] = NOT_HERE; }
"#)]
fn with_header(v: &mut [f32], n: i32);

fn main() {
    let _ = syntax::prepare;
    let _ = undefined::prepare;
    let _ = scale::prepare;
    let _ = warns::prepare;
    let _ = with_header::prepare;
}
