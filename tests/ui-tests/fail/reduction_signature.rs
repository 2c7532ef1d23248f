use gpu_runtime::reduction;

// A reduction writes only its result.
#[reduction(map = "x", reduce = "a + b", neutral = "0.0f")]
fn writes(x: &mut gpu_runtime::gpuarray::DeviceArray<f32>) -> f32;

// The result's element type is declared.
#[reduction(map = "x", reduce = "a + b", neutral = "0.0f")]
fn no_result(x: &gpu_runtime::gpuarray::DeviceArray<f32>);

// Every expression is given.
#[reduction(map = "x", reduce = "a + b")]
fn no_neutral(x: &gpu_runtime::gpuarray::DeviceArray<f32>) -> f32;

fn main() {}
