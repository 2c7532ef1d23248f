// NCCL has no 16-bit integer type: an i16 buffer cannot take part in a collective.
use gpu_runtime::nccl::{Comms, ReduceOp};

fn main() -> gpu_runtime::nccl::Result<()> {
    let comms = Comms::all_devices()?;
    let comm = &comms[0];
    let mut buf = comm.context().alloc_zeros::<i16>(4)?;
    comm.all_reduce_in_place(&mut buf, ReduceOp::Max)?;
    Ok(())
}
