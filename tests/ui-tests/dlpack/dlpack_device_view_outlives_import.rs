// A device view of an import borrows the import, which owns the tensor: the view cannot outlive it.
use gpu_runtime::dlpack::{ConsumerStream, DlpackTensor};
use gpu_runtime::{Context, DeviceRead, Stream};

fn main() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let stream = Stream::new(&ctx)?;
    let tensor = ctx.alloc_zeros::<f32>(4)?.into_dlpack(ConsumerStream::Stream(&stream))?;
    let view = {
        let imported = DlpackTensor::<f32>::from_dlpack(tensor)?;
        imported.device_view()
    };
    let _ = view.to_vec()?;
    Ok(())
}
