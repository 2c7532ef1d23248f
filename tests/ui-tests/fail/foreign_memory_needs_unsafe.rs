// Memory this crate did not allocate may be handed to kernels only through an `unsafe`
// constructor, whose caller promises the address, length and lifetime.
use gpu_runtime::{Context, DeviceView};

fn main() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let view = DeviceView::<f32>::from_raw_parts(&ctx, 0x7000_0000, 1 << 20);
    assert_eq!(view.len(), 1 << 20);
    Ok(())
}
