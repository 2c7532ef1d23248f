// A collective sends and receives one element type: the four floats of an f32 buffer cannot be
// received as the sixteen bytes of a u8 buffer.
use gpu_runtime::nccl::{Comms, ReduceOp};

fn main() -> gpu_runtime::nccl::Result<()> {
    let comms = Comms::all_devices()?;
    let comm = &comms[0];
    let send = comm.context().alloc_zeros::<f32>(4)?;
    let mut recv = comm.context().alloc_zeros::<u8>(16)?;
    comm.all_reduce(&send, &mut recv, ReduceOp::Sum)?;
    Ok(())
}
