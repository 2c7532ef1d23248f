// A buffer lent out as a DLPack tensor cannot be written while the tensor lives.
use gpu_runtime::dlpack::ConsumerStream;
use gpu_runtime::{Context, Stream};

fn main() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let stream = Stream::new(&ctx)?;
    let mut buffer = ctx.alloc_zeros::<f32>(4)?;
    let lent = buffer.to_dlpack(ConsumerStream::Stream(&stream))?;
    buffer.copy_from_host(&[1.0f32; 4][..])?;
    drop(lent);
    Ok(())
}
