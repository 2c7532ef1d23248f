// An imported DLPack view borrows the producer's tensor: it cannot outlive it.
use gpu_runtime::dlpack::{ConsumerStream, DlpackTensor};
use gpu_runtime::{Context, DeviceRead, Stream};

fn main() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let stream = Stream::new(&ctx)?;
    let view = {
        let tensor = ctx.alloc_zeros::<f32>(4)?.into_dlpack(ConsumerStream::Stream(&stream))?;
        let view = DlpackTensor::<f32>::from_dlpack_ref(&tensor)?;
        view
    };
    let _ = view.device_view().to_vec()?;
    Ok(())
}
