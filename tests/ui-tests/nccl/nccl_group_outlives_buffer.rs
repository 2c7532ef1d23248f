// A group borrows its buffers until it runs: one cannot be freed before NCCL has queued the
// calls that use it.
use gpu_runtime::nccl::{Comms, Group};

fn main() -> gpu_runtime::nccl::Result<()> {
    let comms = Comms::all_devices()?;
    let comm = &comms[0];
    let mut group = Group::new();
    {
        let send = comm.context().alloc_zeros::<f32>(4)?;
        group.send(comm, &send, 0)?;
    }
    group.run()?;
    Ok(())
}
