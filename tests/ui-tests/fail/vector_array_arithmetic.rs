// Arrays of CUDA vector types are made, copied, viewed and passed to elementwise kernels, but
// arithmetic, reductions and conversions are the numbers' (`Element`): a compile error.
use gpu_runtime::gpuarray::DeviceArray;
use gpu_runtime::types::Float3;

fn misuse(a: &DeviceArray<Float3>) -> gpu_runtime::Result<()> {
    let _total = a.sum()?;
    let _doubled = a + a;
    let _as_f32 = a.astype::<f32>()?;
    Ok(())
}

fn main() {}
