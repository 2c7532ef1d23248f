use gpu_runtime::elementwise;

#[elementwise("z = x")]
fn copy(x: &gpu_runtime::gpuarray::DeviceArray<bool>, z: &mut gpu_runtime::gpuarray::DeviceArray<f32>);

#[elementwise("z = s")]
fn set(s: usize, z: &mut gpu_runtime::gpuarray::DeviceArray<u64>);

fn main() {}
