//! A kernel template over values (`template <int block_size>`, as llama.cpp's CUDA backend
//! writes its norms) needs its instance in `instantiate`: without one, NVRTC could not tell
//! which to compile ("cannot determine which instance of function template"), so the macro
//! says so at the declaration.
use gpu_runtime::kernel;

#[kernel(r#"
template <int block_size>
__global__ void norm_f32(const float *x, float *dst, const int ncols, const float eps) {}
"#)]
fn norm_f32(x: &[f32], dst: &mut [f32], ncols: i32, eps: f32);

#[kernel(r#"
template <int block_size>
__global__ void norm_f32(const float *x, float *dst, const int ncols, const float eps) {}
"#, name = "norm_f32", instantiate = [32, 1024])]
fn norm_f32_twice(x: &[f32], dst: &mut [f32], ncols: i32, eps: f32);

fn main() {}
