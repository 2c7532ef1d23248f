use gpu_runtime::elementwise;
use gpu_runtime::gpuarray::{Bool, DeviceArray};
use gpu_runtime::half::{bf16, f16};

// `__half` arithmetic, the element type imported.
#[elementwise("z = a * x + y")]
fn axpy_f16(a: f16, x: &DeviceArray<f16>, y: &DeviceArray<f16>, z: &mut DeviceArray<f16>);

// `__nv_bfloat16` and C's `bool`, written as paths; a `Bool` scalar.
#[elementwise("m = (__bfloat162float(x) > 0.0f) != invert")]
fn positive(
    invert: gpu_runtime::gpuarray::Bool,
    x: &gpu_runtime::gpuarray::DeviceArrayView<gpu_runtime::half::bf16>,
    m: &mut DeviceArray<gpu_runtime::gpuarray::Bool>,
);

// Both 16-bit floats and a mask; CUDA's 16-bit float pair type in the operation.
#[elementwise("__half2 p = __halves2half2(h, h); s = keep ? __low2float(p) + __bfloat162float(b) : 0.0f")]
fn masked_sum(h: &DeviceArray<f16>, b: &DeviceArray<bf16>, keep: &DeviceArray<Bool>, s: &mut DeviceArray<f32>);

fn main() {
    fn launch(ctx: &gpu_runtime::Context) -> gpu_runtime::Result<()> {
        let x = DeviceArray::<f16>::zeros(ctx, vec![4, 3])?;
        let mut z = DeviceArray::<f16>::zeros(ctx, vec![3, 4])?;
        axpy_f16(f16::ONE, &x.t(), &x.t(), &mut z)?;
        let xb = DeviceArray::<bf16>::zeros(ctx, vec![8])?;
        let mut m = DeviceArray::<Bool>::zeros(ctx, vec![8])?;
        positive(Bool::FALSE, &xb, &mut m)?;
        let stream = gpu_runtime::Stream::new(ctx)?;
        positive_on(&stream, Bool::TRUE, &xb.view(), &mut m.view_mut())?;
        let h = DeviceArray::<f16>::zeros(ctx, vec![8])?;
        let mut s = DeviceArray::<f32>::zeros(ctx, vec![8])?;
        masked_sum(&h, &xb, &m, &mut s)?;
        axpy_f16::kernel().map(drop)
    }
    let _ = launch;
}
