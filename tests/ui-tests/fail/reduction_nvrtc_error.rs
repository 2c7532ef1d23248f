use gpu_runtime::reduction;

#[reduction(map = "x % 2.5f", reduce = "a + b", neutral = "0.0f")]
fn modulo_sum(x: &gpu_runtime::gpuarray::DeviceArray<f32>) -> f32;

#[reduction(
    map = "x",
    reduce = "no_such_function(a, b)",
    neutral = "0.0f",
    post_map = "a / undefined_count"
)]
fn undefined(x: &gpu_runtime::gpuarray::DeviceArray<f32>) -> f32;

fn main() {}
