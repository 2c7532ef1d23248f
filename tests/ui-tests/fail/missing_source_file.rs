use gpu_runtime::kernel;

#[kernel(file = "kernels/does_not_exist.cu")]
fn scale(v: &mut [f32], factor: f32, n: i32);

fn main() {}
