use gpu_runtime::elementwise;
use gpu_runtime::gpuarray::DeviceArray;
use gpu_runtime::types::{Float3, Float4};

// C has no conversion from `float4` to `float3`: the build-time check's NVRTC error.
#[elementwise("z = x")]
fn narrow(x: &DeviceArray<Float4>, z: &mut DeviceArray<Float3>);

// `float3` has no `w`.
#[elementwise("z = x.w")]
fn fourth(x: &DeviceArray<Float3>, z: &mut DeviceArray<f32>);

#[elementwise("z = x.x + x.y + x.z")]
fn total(x: &DeviceArray<Float3>, z: &mut DeviceArray<f32>);

// A `float4` array for the declared `Float3`: Rust's type error at the call.
fn call(x: &DeviceArray<Float4>, z: &mut DeviceArray<f32>) -> gpu_runtime::Result<()> {
    total(x, z)
}

fn main() {}
