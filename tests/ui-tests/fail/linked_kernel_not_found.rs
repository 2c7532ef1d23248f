//! A kernel no source of a linked module declares: the error lists the kernels of all of them.
use gpu_runtime::kernel;

#[kernel(sources = [
    r#"extern "C" __global__ void first(float *x) {}"#,
    r#"extern "C" __global__ void second(float *x) {}"#,
])]
mod linked {
    fn first(x: &mut [f32]);
    fn third(x: &mut [f32]);
}

fn main() {}
