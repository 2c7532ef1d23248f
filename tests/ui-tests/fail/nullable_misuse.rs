//! `Option` is for pointers that may be null, and is checked like the slice it holds.
use gpu_runtime::kernel;

#[kernel(r#"__global__ void k(const size_t *info, float *out, int n) {}"#)]
fn k(info: Option<&mut [usize]>, out: Option<&[f32]>, n: i32);

#[kernel(r#"__global__ void v(int n) {}"#)]
fn v(n: Option<i32>);

fn main() {}
