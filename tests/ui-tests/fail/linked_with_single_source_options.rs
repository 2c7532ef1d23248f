//! `embed` and `instantiate` are for a single source: a linked module is linked when a
//! context loads it, and binds plain kernels.
use gpu_runtime::kernel;

#[kernel(sources = [r#"extern "C" __global__ void k(float *x) {}"#, r#"__device__ int d;"#], embed = ["sm_90"])]
fn k(x: &mut [f32]);

#[kernel(sources = [r#"extern "C" __global__ void j(float *x) {}"#, r#"__device__ int e;"#], instantiate = [f32])]
fn j(x: &mut [f32]);

fn main() {}
