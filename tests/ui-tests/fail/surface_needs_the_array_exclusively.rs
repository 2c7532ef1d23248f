// Kernels write an array through its surface, so the surface borrows the array exclusively:
// no texture may read it meanwhile.
use gpu_runtime::{driver::ArrayDescriptor, driver::ArrayFlags, Context, driver::CudaArray, driver::Surface, driver::Texture, driver::TextureDesc};

fn main() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let desc = ArrayDescriptor::new_2d::<f32>(8, 8).with_flags(ArrayFlags::SURFACE_LDST);
    let mut array = CudaArray::new(&ctx, desc)?;
    let tex = Texture::from_array(&array, &TextureDesc::default())?;
    let surf = Surface::new(&mut array)?;
    drop((tex, surf));
    Ok(())
}
