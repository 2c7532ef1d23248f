// The texture cannot be dropped while a handle to it is still to be passed to a launch.
use gpu_runtime::{kernel, driver::ArrayDescriptor, Context, driver::CudaArray, Stream, driver::Texture, driver::TextureDesc, driver::TextureObject};

#[kernel(r#"
__global__ void sample(cudaTextureObject_t tex, float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex1D<float>(tex, i + 0.5f);
}"#)]
fn sample(tex: TextureObject, out: &mut [f32], n: i32);

fn main() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let array = CudaArray::new(&ctx, ArrayDescriptor::new_2d::<f32>(64, 0))?;
    let tex = Texture::from_array(&array, &TextureDesc::default())?;
    let obj = tex.object();
    drop(tex);
    let mut out = ctx.alloc::<f32>(64)?;
    let stream = Stream::new(&ctx)?;
    sample::prepare(&ctx)?.prepared_async_call(1, 64, &stream, obj, &mut out, 64)?;
    Ok(())
}
