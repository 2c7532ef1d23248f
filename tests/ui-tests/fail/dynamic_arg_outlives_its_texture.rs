// A runtime-typed argument borrows the texture its object came from: the texture cannot be
// dropped while the `Arg` is still to be passed to a launch.
use gpu_runtime::{launch::Arg, driver::ArrayDescriptor, Context, driver::CudaArray, SourceModule, driver::Texture, driver::TextureDesc};

fn main() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let module = SourceModule::new(
        "__global__ void sample(cudaTextureObject_t tex, float *out) {
             out[threadIdx.x] = tex1D<float>(tex, threadIdx.x + 0.5f); }",
    )
    .load(&ctx)?;
    let array = CudaArray::new(&ctx, ArrayDescriptor::new_2d::<f32>(64, 0))?;
    let tex = Texture::from_array(&array, &TextureDesc::default())?;
    let mut out = ctx.alloc::<f32>(64)?;
    let args = [Arg::from(tex.object()), Arg::output(&mut out)];
    drop(tex);
    let sample = module.get_function("sample")?.prepare_declared()?;
    sample.prepared_call(1, 64, &args)?;
    Ok(())
}
