use gpu_runtime::elementwise;

// Read by its name as `__half`, but an alias of `u16`: refused where the type is resolved.
#[allow(non_camel_case_types)]
type f16 = u16;

#[elementwise("z = x")]
fn copy(x: &gpu_runtime::gpuarray::DeviceArray<f16>, z: &mut gpu_runtime::gpuarray::DeviceArray<gpu_runtime::half::f16>);

fn main() {}
