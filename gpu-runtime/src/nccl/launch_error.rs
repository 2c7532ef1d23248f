//! [`LaunchEnvError`]: why the environment names no rank, size or rendezvous address, and
//! [`Launcher`], the launcher it names.

use std::fmt;

/// The launcher whose variables a [`LaunchEnv`](crate::nccl::LaunchEnv) was read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Launcher {
    /// `torchrun` (or anything setting `RANK`, `WORLD_SIZE`, `LOCAL_RANK`, `MASTER_ADDR`,
    /// `MASTER_PORT` the same way).
    Torchrun,
    /// Open MPI's `mpirun` (`OMPI_COMM_WORLD_*`).
    OpenMpi,
    /// Slurm's `srun` (`SLURM_PROCID`, `SLURM_NTASKS`, `SLURM_LOCALID`, `SLURM_JOB_NODELIST`).
    Slurm,
}

impl fmt::Display for Launcher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Launcher::Torchrun => "torchrun",
            Launcher::OpenMpi => "Open MPI",
            Launcher::Slurm => "Slurm",
        })
    }
}

/// Why the environment names no rank, size or rendezvous address.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum LaunchEnvError {
    /// None of the launchers' variables are set: not started by `torchrun`, `srun` or
    /// `mpirun`.
    #[error("no launcher's variables are set: torchrun sets RANK and WORLD_SIZE, Slurm's srun sets SLURM_PROCID and SLURM_NTASKS, Open MPI's mpirun sets OMPI_COMM_WORLD_RANK and OMPI_COMM_WORLD_SIZE")]
    NoLauncher,
    /// A launcher was recognised by some of its variables, but others it needs are unset.
    #[error("{launcher}'s variables are incomplete: {} not set", join_names(.missing))]
    Missing {
        /// The launcher recognised.
        launcher: Launcher,
        /// The variables that are unset.
        missing: Vec<&'static str>,
    },
    /// A variable that does not hold what it must.
    #[error("the environment variable {var} is {value:?}, but must be {expected}")]
    Invalid {
        /// The variable.
        var: &'static str,
        /// Its value.
        value: String,
        /// What it must hold, e.g. `a number below WORLD_SIZE (4)`.
        expected: String,
    },
    /// No GPU of this host for the local rank: more ranks were started on the host than it
    /// has GPUs (counting only those `CUDA_VISIBLE_DEVICES` shows).
    #[error("local rank {local_rank} has no GPU: this process sees {devices} GPU(s) (CUDA_VISIBLE_DEVICES counts); start at most one rank per GPU on each host")]
    NoDeviceForRank {
        /// The local rank.
        local_rank: usize,
        /// The GPUs this process sees.
        devices: usize,
    },
    /// A Slurm host list (`SLURM_JOB_NODELIST`) that is not in Slurm's syntax.
    #[error("the Slurm host list {list:?} is malformed at byte {position}: {problem}")]
    HostList {
        /// The list.
        list: String,
        /// The byte where the problem is.
        position: usize,
        /// What is wrong there.
        problem: &'static str,
    },
}

/// `A`, `A and B`, `A, B and C`.
fn join_names(names: &[&'static str]) -> String {
    match names {
        [] => String::new(),
        [one] => format!("{one} is"),
        [init @ .., last] => format!("{} and {last} are", init.join(", ")),
    }
}
