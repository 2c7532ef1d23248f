use gpu_runtime::elementwise;

#[elementwise("z = x; x += 1.0f")]
fn copy_and_bump(
    x: &gpu_runtime::gpuarray::DeviceArray<f32>,
    z: &mut gpu_runtime::gpuarray::DeviceArray<f32>,
);

fn main() {}
