use gpu_runtime::elementwise;

#[elementwise("x * 2")]
fn nothing(x: &gpu_runtime::gpuarray::DeviceArray<f32>);

#[elementwise("y = x")]
fn unwritten(
    x: &gpu_runtime::gpuarray::DeviceArray<f32>,
    y: &mut gpu_runtime::gpuarray::DeviceArray<f32>,
    z: &mut gpu_runtime::gpuarray::DeviceArray<f32>,
);

fn main() {}
