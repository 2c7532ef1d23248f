// A kernel's texture handle borrows its texture: it cannot outlive it.
use gpu_runtime::{driver::ArrayDescriptor, Context, driver::CudaArray, driver::Texture, driver::TextureDesc, driver::TextureObject};

fn handle(array: &CudaArray) -> gpu_runtime::Result<TextureObject<'static>> {
    let tex = Texture::from_array(array, &TextureDesc::default())?;
    Ok(tex.object())
}

fn main() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let array = CudaArray::new(&ctx, ArrayDescriptor::new_2d::<f32>(8, 8))?;
    let _ = handle(&array)?;
    Ok(())
}
