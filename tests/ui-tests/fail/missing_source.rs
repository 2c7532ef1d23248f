use gpu_runtime::kernel;

#[kernel]
fn scale(v: &mut [f32], factor: f32, n: i32);

#[kernel(name = "scale")]
fn scale2(v: &mut [f32], factor: f32, n: i32);

fn main() {}
