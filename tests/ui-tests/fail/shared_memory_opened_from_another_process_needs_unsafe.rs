// Memory another process shares is used on that process's terms, which this crate cannot
// see: opening it is `unsafe`.
use gpu_runtime::{Context, driver::IpcMemHandle};

fn main() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let handle = IpcMemHandle::from_bytes([0; 64]);
    let shared = handle.open::<f32>(&ctx, 1024)?;
    drop(shared);
    Ok(())
}
