// The asynchronous copy from any slice exists, but its caller must promise to keep the slice
// alive and unchanged until the copy is done.
use gpu_runtime::{driver::memcpy_dtoh_async_unchecked, driver::memcpy_htod_async_unchecked, Context, Stream};

fn main() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let stream = Stream::new(&ctx)?;
    let mut host = vec![1.0f32; 1024];
    let mut dev = ctx.alloc::<f32>(1024)?;
    memcpy_htod_async_unchecked(&mut dev, &host, &stream)?;
    memcpy_dtoh_async_unchecked(&mut host, &dev, &stream)?;
    Ok(())
}
