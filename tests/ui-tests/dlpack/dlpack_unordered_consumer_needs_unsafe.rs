// `ConsumerStream::unordered` (the protocol's `stream=-1`) leaves the consumer's work unknown
// to the memory's record, so its caller promises that work finishes before the deleter: it is
// `unsafe` to call.
use gpu_runtime::dlpack::ConsumerStream;
use gpu_runtime::Context;

fn main() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let _tensor = ctx.alloc_zeros::<f32>(4)?.into_dlpack(ConsumerStream::unordered())?;
    Ok(())
}
