//! A type error in the kernel body; the source comes from a file, so the error points there.
use gpu_runtime::kernel;

#[kernel(file = "../../../../tests/ui-tests/kernels/type_error.cu")]
fn scale(v: &mut [f32], factor: f32, n: i32);

fn main() {}
