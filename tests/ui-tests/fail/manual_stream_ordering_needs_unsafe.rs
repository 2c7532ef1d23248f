// Opting a stream out of the crate's cross-stream ordering is the caller's promise to order it.
use gpu_runtime::{Context, Stream};

fn main() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let stream = Stream::new(&ctx)?;
    stream.order_manually();
    Ok(())
}
