// Arrays of CUDA vector types: made, viewed, copied, filled, and passed to elementwise kernels
// declared at build time (`#[elementwise]`) and at run time (`ElementwiseKernel`).
use gpu_runtime::elementwise;
use gpu_runtime::gpuarray::{DeviceArray, ElementwiseKernel, KernelArg};
use gpu_runtime::ndarray::{s, Array2};
use gpu_runtime::types::{Float2, Float3, Float4, UChar4};

#[elementwise("norm = sqrtf(v.x * v.x + v.y * v.y + v.z * v.z)")]
fn norm(v: &DeviceArray<Float3>, norm: &mut DeviceArray<f32>);

#[elementwise("z = make_float4(p.x * s, p.y * s, q.x, q.y)")]
fn pack(s: f32, p: &DeviceArray<Float2>, q: &DeviceArray<Float2>, z: &mut DeviceArray<Float4>);

#[elementwise("z = c")]
fn paint(c: UChar4, z: &mut DeviceArray<UChar4>);

fn main() {
    fn run(ctx: &gpu_runtime::Context) -> gpu_runtime::Result<()> {
        let host = Array2::from_elem((4, 3), Float3::splat(1.0));
        let v = DeviceArray::from_ndarray(ctx, &host.into_dyn())?;
        let reversed = v.slice(s![..;-1, ..])?.to_contiguous()?;
        let mut out = DeviceArray::<f32>::zeros(ctx, vec![3, 4])?;
        norm(&reversed.t(), &mut out)?;
        let mut filled = DeviceArray::full(ctx, vec![2, 2], Float3::new(1.0, 2.0, 3.0))?;
        filled.fill(Float3::splat(0.0))?;
        filled.copy_from(&v.slice(s![..2, ..2])?)?;
        let _: Vec<Float3> = filled.to_vec()?;
        let p = DeviceArray::<Float2>::zeros(ctx, vec![5])?;
        let mut z = DeviceArray::<Float4>::empty(ctx, vec![5])?;
        pack(2.0, &p, &p, &mut z)?;
        let mut img = DeviceArray::<UChar4>::zeros(ctx, vec![8, 8])?;
        paint(UChar4::new(1, 2, 3, 255), &mut img)?;
        let k = ElementwiseKernel::new("const float3 *v, float *out", "out[i] = v[i].x + v[i].y")?;
        k.launch([KernelArg::input(&v), KernelArg::output(&mut out)])?;
        Ok(())
    }
    let _ = run;
}
