//! Each kernel of a linked module is checked against the source that declares it, here the
//! second one, with the same errors as a single source. (The paths climb from the project
//! trybuild generates back to the repository root: see tests/ui-tests/pass/file_source.rs.)
use gpu_runtime::kernel;

#[kernel(files = ["../../../../tests/ui-tests/kernels/scale.cu", "../../../../tests/ui-tests/kernels/offset.cu"])]
mod linked {
    fn scale_in_place(v: &mut [f64], factor: f64, n: u32);
    fn offset(x: &[f32], b: f64, n: i32);
}

fn main() {}
