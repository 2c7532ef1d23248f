//! [`Comm::from_env`]: one rank per process, started by `torchrun`, `srun` or `mpirun`, joins
//! its job's communicator from the launcher's variables alone.

use crate::driver::context::core::Context;
use crate::driver::device::Device;
use crate::nccl::communicator::Comm;
use crate::nccl::error::Result;
use crate::nccl::launch_env::LaunchEnv;
use crate::nccl::options::CommOptions;
use crate::nccl::rendezvous::Rendezvous;

impl Comm {
    /// This process's rank of its job's communicator, with the default [`CommOptions`]: reads
    /// the launcher's variables ([`LaunchEnv::from_env`]: `torchrun`, Slurm's `srun`, Open
    /// MPI's `mpirun`), takes the GPU of the local rank ([`LaunchEnv::device_ordinal`]), meets
    /// the other ranks at `MASTER_ADDR:MASTER_PORT` ([`Rendezvous`]), where rank 0 hands out
    /// the NCCL unique id, and joins the communicator.
    ///
    /// Every wait (the rendezvous, NCCL's init) lasts at most the options' timeout (300 s).
    ///
    /// ```no_run
    /// // torchrun --nnodes 2 --nproc-per-node 4 --rdzv-endpoint node01:29500 ./train
    /// // (or srun -N 2 --ntasks-per-node 4 ./train; or mpirun -np 8 -x MASTER_ADDR=node01 ./train)
    /// use gpu_runtime::nccl::{Comm, ReduceOp};
    /// # fn main() -> gpu_runtime::nccl::Result<()> {
    /// let comm = Comm::from_env()?;
    /// let mut grads = comm.context().to_device(&vec![1.0f32; 1024])?;
    /// comm.all_reduce_in_place(&mut grads, ReduceOp::Sum)?;
    /// # Ok(()) }
    /// ```
    pub fn from_env() -> Result<Comm> {
        Comm::from_env_with(CommOptions::default())
    }

    /// [`Comm::from_env`] with `options`.
    pub fn from_env_with(options: CommOptions) -> Result<Comm> {
        Comm::from_launch(&LaunchEnv::from_env()?, options)
    }

    /// [`Comm::from_env`] from a [`LaunchEnv`] read or made elsewhere.
    pub fn from_launch(env: &LaunchEnv, options: CommOptions) -> Result<Comm> {
        let ordinal = env.device_ordinal(Device::count()?)?;
        let ctx = Context::new(Device::new(ordinal)?)?;
        let rdzv = Rendezvous::connect(&env.master(), env.rank, env.world_size, options.timeout)?;
        let id = rdzv.unique_id()?;
        // Rank 0 keeps serving until every rank has the id: then its store may close.
        rdzv.barrier()?;
        drop(rdzv);
        Comm::init_rank_with(&ctx, &id, env.world_size, env.rank, options)
    }
}
