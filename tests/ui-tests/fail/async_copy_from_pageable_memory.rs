// A safe asynchronous copy needs page-locked memory this crate tracks: the host must not touch
// a `Vec` while the DMA engine may still read it, which nothing would enforce.
use gpu_runtime::{driver::memcpy_htod_async, Context, Stream};

fn main() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let stream = Stream::new(&ctx)?;
    let host = vec![1.0f32; 1024];
    let mut dev = ctx.alloc::<f32>(1024)?;
    memcpy_htod_async(&mut dev, &host, &stream)?;
    drop(host);
    Ok(())
}
