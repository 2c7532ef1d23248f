//! [`LaunchEnv`]: a rank's place in a job, read from the variables its launcher set
//! (`torchrun`, Slurm's `srun`, Open MPI's `mpirun`).
//!
//! Parsing takes a lookup function rather than reading the process environment, so that every
//! launcher's conventions are tested with a map; [`LaunchEnv::from_env`] passes `std::env::var`.

use crate::nccl::hostlist;
use crate::nccl::launch_error::{LaunchEnvError, Launcher};

/// The port of the rendezvous when the launcher names none and `MASTER_PORT` is unset:
/// 29500, `torchrun`'s default. Set `MASTER_PORT` when two jobs may share a host.
pub const DEFAULT_MASTER_PORT: u16 = 29500;

/// The variable that sets the rendezvous port whatever the launcher says.
const RDZV_PORT: &str = "GPU_RUNTIME_RDZV_PORT";

/// Where a rank belongs: its rank, the number of ranks, its rank on this host (which picks the
/// GPU), and the address of rank 0's rendezvous. Read from the launcher's variables by
/// [`LaunchEnv::from_env`]; [`Comm::from_env`](crate::nccl::Comm::from_env) uses it.
///
/// The launchers are tried in this order, the first whose rank variable is set winning:
///
/// | launcher | rank | size | local rank | rendezvous host | port |
/// |---|---|---|---|---|---|
/// | `torchrun` | `RANK` | `WORLD_SIZE` | `LOCAL_RANK` | `MASTER_ADDR` | `MASTER_PORT` |
/// | `mpirun` (Open MPI) | `OMPI_COMM_WORLD_RANK` | `OMPI_COMM_WORLD_SIZE` | `OMPI_COMM_WORLD_LOCAL_RANK` | `MASTER_ADDR`, or `127.0.0.1` when every rank is on one host (`OMPI_COMM_WORLD_LOCAL_SIZE` equals the size) | `MASTER_PORT`, else 29500 |
/// | `srun` (Slurm) | `SLURM_PROCID` | `SLURM_NTASKS` | `SLURM_LOCALID` | `MASTER_ADDR`, else the first host of `SLURM_JOB_NODELIST` (`SLURM_NODELIST`) | `MASTER_PORT`, else 29500 |
///
/// `GPU_RUNTIME_RDZV_PORT`, when set, is the port for every launcher. Under `torchrun`, whose
/// agent serves its own store (PyTorch's TCPStore) on `MASTER_PORT` when it sets
/// `TORCHELASTIC_USE_AGENT_STORE=True`, the rendezvous takes the next port, `MASTER_PORT + 1`:
/// open both in the firewall of rank 0's host.
///
/// Open MPI comes before Slurm because `mpirun` inside a Slurm allocation inherits the
/// allocation's `SLURM_*` variables, which describe the batch step rather than the ranks.
/// Open MPI does not say which host runs rank 0, so across hosts pass it:
/// `mpirun -x MASTER_ADDR=<host of rank 0> ...`.
///
/// ```
/// use std::collections::HashMap;
/// use gpu_runtime::nccl::{LaunchEnv, Launcher};
/// let vars = HashMap::from([
///     ("SLURM_PROCID", "5"), ("SLURM_NTASKS", "8"), ("SLURM_LOCALID", "1"),
///     ("SLURM_JOB_NODELIST", "gpu[07-10],login1"),
/// ]);
/// let env = LaunchEnv::from_vars(|v| vars.get(v).map(|s| s.to_string()))?;
/// assert_eq!((env.launcher, env.rank, env.world_size, env.local_rank), (Launcher::Slurm, 5, 8, 1));
/// assert_eq!((env.master_addr.as_str(), env.master_port), ("gpu07", 29500));
/// # Ok::<(), gpu_runtime::nccl::LaunchEnvError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LaunchEnv {
    /// The launcher whose variables these are.
    pub launcher: Launcher,
    /// This process's rank, in `0..world_size`.
    pub rank: usize,
    /// The number of ranks (processes) of the job.
    pub world_size: usize,
    /// This process's rank among those of its host: the GPU it drives.
    pub local_rank: usize,
    /// The host (name or address) where rank 0 serves the rendezvous.
    pub master_addr: String,
    /// The TCP port of the rendezvous.
    pub master_port: u16,
}

impl LaunchEnv {
    /// The launcher's variables of this process (see the type's table).
    pub fn from_env() -> Result<LaunchEnv, LaunchEnvError> {
        LaunchEnv::from_vars(|name| std::env::var(name).ok())
    }

    /// The launcher's variables as `var` gives them (`None` for an unset variable): for tests,
    /// and for programs that read them elsewhere.
    pub fn from_vars(var: impl Fn(&str) -> Option<String>) -> Result<LaunchEnv, LaunchEnvError> {
        let vars = Vars(&var);
        if vars.has("RANK") || vars.has("WORLD_SIZE") {
            torchrun(&vars)
        } else if vars.has("OMPI_COMM_WORLD_RANK") || vars.has("OMPI_COMM_WORLD_SIZE") {
            open_mpi(&vars)
        } else if vars.has("SLURM_PROCID") {
            slurm(&vars)
        } else {
            Err(LaunchEnvError::NoLauncher)
        }
    }

    /// The GPU (device ordinal) this rank drives, of the `devices` this process sees: its
    /// local rank, or device 0 when the process sees a single GPU (a launcher or
    /// `CUDA_VISIBLE_DEVICES` that gives each rank its own, as `srun --gpus-per-task=1` does).
    pub fn device_ordinal(&self, devices: usize) -> Result<usize, LaunchEnvError> {
        if self.local_rank < devices {
            Ok(self.local_rank)
        } else if devices == 1 {
            Ok(0)
        } else {
            Err(LaunchEnvError::NoDeviceForRank {
                local_rank: self.local_rank,
                devices,
            })
        }
    }

    /// `master_addr:master_port`, what [`Rendezvous::connect`](crate::nccl::Rendezvous::connect)
    /// takes (an IPv6 address in brackets).
    pub fn master(&self) -> String {
        if self.master_addr.contains(':') && !self.master_addr.starts_with('[') {
            format!("[{}]:{}", self.master_addr, self.master_port)
        } else {
            format!("{}:{}", self.master_addr, self.master_port)
        }
    }
}

/// The variables, through the caller's lookup.
struct Vars<'a>(&'a dyn Fn(&str) -> Option<String>);

impl Vars<'_> {
    fn get(&self, name: &str) -> Option<String> {
        (self.0)(name).filter(|v| !v.trim().is_empty())
    }

    fn has(&self, name: &str) -> bool {
        self.get(name).is_some()
    }

    /// Every one of `names` that is unset, for a [`LaunchEnvError::Missing`] of `launcher`.
    fn require(&self, launcher: Launcher, names: &[&'static str]) -> Result<(), LaunchEnvError> {
        let missing: Vec<&'static str> = names.iter().copied().filter(|n| !self.has(n)).collect();
        if missing.is_empty() {
            Ok(())
        } else {
            Err(LaunchEnvError::Missing { launcher, missing })
        }
    }

    /// The number in `name` (which `require` checked is set).
    fn number(&self, name: &'static str) -> Result<usize, LaunchEnvError> {
        let value = self.get(name).unwrap_or_default();
        value.trim().parse().map_err(|_| LaunchEnvError::Invalid {
            var: name,
            value,
            expected: "a non-negative integer".to_owned(),
        })
    }

    /// The rendezvous port: `GPU_RUNTIME_RDZV_PORT` when set; else `MASTER_PORT`, plus one
    /// when `torchrun`'s agent serves its own store there (`TORCHELASTIC_USE_AGENT_STORE`);
    /// else [`DEFAULT_MASTER_PORT`].
    fn port(&self) -> Result<u16, LaunchEnvError> {
        if self.has(RDZV_PORT) {
            return self.port_in(RDZV_PORT);
        }
        if !self.has("MASTER_PORT") {
            return Ok(DEFAULT_MASTER_PORT);
        }
        let port = self.port_in("MASTER_PORT")?;
        let agent_store = self
            .get("TORCHELASTIC_USE_AGENT_STORE")
            .is_some_and(|v| matches!(v.trim(), "True" | "true" | "1"));
        if !agent_store {
            return Ok(port);
        }
        port.checked_add(1).ok_or_else(|| LaunchEnvError::Invalid {
            var: "MASTER_PORT",
            value: port.to_string(),
            expected: format!("below 65535: torchrun's store has it, and the rendezvous takes the next port (or set {RDZV_PORT})"),
        })
    }

    /// The TCP port in `name` (which is set).
    fn port_in(&self, name: &'static str) -> Result<u16, LaunchEnvError> {
        let value = self.get(name).unwrap_or_default();
        match value.trim().parse::<u16>() {
            Ok(p) if p != 0 => Ok(p),
            _ => Err(LaunchEnvError::Invalid {
                var: name,
                value,
                expected: "a TCP port, 1 to 65535".to_owned(),
            }),
        }
    }
}

/// Rank, size and local rank from three variables, checked against each other.
fn ranks(
    vars: &Vars<'_>,
    launcher: Launcher,
    [rank, size, local]: [&'static str; 3],
) -> Result<(usize, usize, usize), LaunchEnvError> {
    let (r, n, l) = (vars.number(rank)?, vars.number(size)?, vars.number(local)?);
    if n == 0 {
        return Err(LaunchEnvError::Invalid {
            var: size,
            value: "0".to_owned(),
            expected: format!("at least 1 ({launcher} started no rank?)"),
        });
    }
    if r >= n {
        return Err(LaunchEnvError::Invalid {
            var: rank,
            value: r.to_string(),
            expected: format!("below {size} ({n})"),
        });
    }
    Ok((r, n, l))
}

/// The job `launcher` started: its rank, size and local rank, rank 0's address, and the
/// rendezvous port of `vars`.
fn job(
    vars: &Vars<'_>,
    launcher: Launcher,
    (rank, world_size, local_rank): (usize, usize, usize),
    master_addr: String,
) -> Result<LaunchEnv, LaunchEnvError> {
    Ok(LaunchEnv {
        launcher,
        rank,
        world_size,
        local_rank,
        master_addr,
        master_port: vars.port()?,
    })
}

fn torchrun(vars: &Vars<'_>) -> Result<LaunchEnv, LaunchEnvError> {
    let launcher = Launcher::Torchrun;
    let names = ["RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT"];
    vars.require(launcher, &names)?;
    let ranks = ranks(vars, launcher, ["RANK", "WORLD_SIZE", "LOCAL_RANK"])?;
    let master_addr = vars.get("MASTER_ADDR").unwrap_or_default().trim().to_owned();
    job(vars, launcher, ranks, master_addr)
}

fn open_mpi(vars: &Vars<'_>) -> Result<LaunchEnv, LaunchEnvError> {
    let launcher = Launcher::OpenMpi;
    let names = [
        "OMPI_COMM_WORLD_RANK",
        "OMPI_COMM_WORLD_SIZE",
        "OMPI_COMM_WORLD_LOCAL_RANK",
    ];
    vars.require(launcher, &names)?;
    let (rank, world_size, local_rank) = ranks(vars, launcher, names)?;
    let one_host = vars
        .get("OMPI_COMM_WORLD_LOCAL_SIZE")
        .and_then(|v| v.trim().parse::<usize>().ok())
        == Some(world_size);
    let master_addr = match vars.get("MASTER_ADDR") {
        Some(a) => a.trim().to_owned(),
        // Every rank on this host: rank 0 is here too.
        None if one_host => "127.0.0.1".to_owned(),
        None => {
            return Err(LaunchEnvError::Missing {
                launcher,
                missing: vec!["MASTER_ADDR"],
            })
        }
    };
    job(vars, launcher, (rank, world_size, local_rank), master_addr)
}

fn slurm(vars: &Vars<'_>) -> Result<LaunchEnv, LaunchEnvError> {
    let launcher = Launcher::Slurm;
    vars.require(launcher, &["SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID"])?;
    let ranks = ranks(vars, launcher, ["SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID"])?;
    let master_addr = match vars.get("MASTER_ADDR") {
        Some(a) => a.trim().to_owned(),
        None => {
            let list = vars
                .get("SLURM_JOB_NODELIST")
                .or_else(|| vars.get("SLURM_NODELIST"))
                .ok_or(LaunchEnvError::Missing {
                    launcher,
                    missing: vec!["SLURM_JOB_NODELIST"],
                })?;
            hostlist::first_host(list.trim())?
        }
    };
    job(vars, launcher, ranks, master_addr)
}
