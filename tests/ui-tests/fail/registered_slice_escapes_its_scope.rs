// A registered slice exists only inside its closure, after which the host waits for the GPU
// and unlocks the memory: it cannot be kept (or leaked) past that point.
use gpu_runtime::{Context, driver::HostRegisterFlags};

fn main() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut host = vec![0.0f32; 1024];
    let mut kept = None;
    ctx.register_host_slice(&mut host, HostRegisterFlags::NONE, |pinned| {
        kept = Some(pinned);
    })?;
    drop(kept);
    Ok(())
}
