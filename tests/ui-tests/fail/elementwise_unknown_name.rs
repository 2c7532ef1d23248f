use gpu_runtime::elementwise;

#[elementwise("z = a * x + w")]
fn axpy(
    a: f32,
    x: &gpu_runtime::gpuarray::DeviceArray<f32>,
    y: &gpu_runtime::gpuarray::DeviceArray<f32>,
    z: &mut gpu_runtime::gpuarray::DeviceArray<f32>,
);

fn main() {}
