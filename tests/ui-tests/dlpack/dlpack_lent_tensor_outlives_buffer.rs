// A tensor lent out of a buffer borrows it: neither the tensor nor an import of it can outlive
// the buffer.
use gpu_runtime::dlpack::{ConsumerStream, DlpackTensor};
use gpu_runtime::{Context, DeviceRead, Stream};

fn main() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let stream = Stream::new(&ctx)?;
    let lent = {
        let buffer = ctx.alloc_zeros::<f32>(4)?;
        let lent = buffer.to_dlpack(ConsumerStream::Stream(&stream))?;
        lent
    };
    let view = DlpackTensor::<f32>::from_dlpack_ref(lent.tensor())?;
    let _ = view.device_view().to_vec()?;
    Ok(())
}
