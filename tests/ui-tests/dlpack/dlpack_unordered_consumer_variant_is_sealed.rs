// A consumer that orders itself (the protocol's `stream=-1`) is named only by the unsafe
// `ConsumerStream::unordered`, whose contract says its work must finish before the deleter:
// the variant cannot be built outside the crate.
use gpu_runtime::dlpack::ConsumerStream;
use gpu_runtime::Context;

fn main() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let _tensor = ctx.alloc_zeros::<f32>(4)?.into_dlpack(ConsumerStream::Unordered {})?;
    Ok(())
}
