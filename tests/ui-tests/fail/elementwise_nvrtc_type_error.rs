use gpu_runtime::elementwise;

#[elementwise("z = x % 2.5f")]
fn modulo(x: &gpu_runtime::gpuarray::DeviceArray<f32>, z: &mut gpu_runtime::gpuarray::DeviceArray<f32>);

#[elementwise("z = no_such_function(x)")]
fn undefined(x: &gpu_runtime::gpuarray::DeviceArray<f32>, z: &mut gpu_runtime::gpuarray::DeviceArray<f32>);

fn main() {}
