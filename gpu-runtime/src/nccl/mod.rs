//! Collectives and point-to-point transfers between GPUs through NCCL (the `nccl` feature):
//! all-reduce, broadcast, reduce, all-gather, reduce-scatter, send and receive, on this crate's
//! device memory, ordered with every other use of it.
//!
//! A communicator has one rank per GPU; a [`Comm`] is one rank: the NCCL communicator, the
//! [`Context`](crate::Context) of its GPU and a [`Stream`](crate::Stream) for its calls.
//!
//! - One process, every GPU: [`Comms::new`] (or [`Comms::all_devices`]) makes all the ranks
//!   at once, and its methods run a collective across them with one buffer per rank.
//! - One process per GPU, started by a launcher (`torchrun`, `srun`, `mpirun`), on one host or
//!   several: [`Comm::from_env`] reads the launcher's variables and meets the other ranks
//!   through a TCP [`Rendezvous`] at rank 0.
//! - One process (or thread) per GPU, by hand: one rank makes a [`UniqueId`], hands it to the
//!   others, and each calls [`Comm::init_rank`] with it.
//! - A communicator of some of the ranks: [`Comm::split`].
//!
//! ```no_run
//! use gpu_runtime::nccl::{Comms, ReduceOp};
//! # fn main() -> gpu_runtime::nccl::Result<()> {
//! let comms = Comms::all_devices()?;
//! let send: Vec<_> = comms.iter().map(|c| c.context().to_device(&vec![c.rank() as f32; 1024])).collect::<Result<_, _>>()?;
//! let mut sum: Vec<_> = comms.iter().map(|c| c.context().alloc_zeros::<f32>(1024)).collect::<Result<_, _>>()?;
//! comms.all_reduce(&send, &mut sum, ReduceOp::Sum)?;
//! let n = comms.len() as f32;
//! assert_eq!(sum[0].to_vec()?[0], n * (n - 1.0) / 2.0);
//! # Ok(()) }
//! ```
//!
//! # Buffers, types and lengths
//!
//! Every call takes this crate's device memory ([`DeviceRead`](crate::DeviceRead) /
//! [`DeviceWrite`](crate::DeviceWrite): buffers, views, pooled memory), with one element type
//! `T` for what is sent and what is received, so an `f32` send buffer cannot feed a `u8`
//! receive buffer: that does not compile. `T` is one of the types NCCL has ([`NcclType`]:
//! `i8`, `u8`, `i32`, `u32`, `i64`, `u64`, `f16`, `bf16`, `f32`, `f64`), mapped at compile
//! time; [`ReduceOp`] is the reduction.
//!
//! Before NCCL is called, each call checks on the host what one rank can see: the buffers and
//! the stream belong to the communicator's context, the lengths fit the collective (an
//! all-gather receives `size()` times what it sends, a reduce-scatter sends `size()` times
//! what it receives, an all-reduce receives what it sends), a root or peer is a rank. A
//! mistake is a typed error ([`NcclError::BufferLength`], [`NcclError::RankOutOfRange`],
//! [`Error::WrongContext`](crate::Error::WrongContext) in [`NcclError::Cuda`], ...) and nothing
//! is called. So is memory whose elements do not fill the run it spans (an array view with
//! steps, a pitched buffer with padded rows: [`DeviceRead::is_contiguous`](crate::DeviceRead::is_contiguous)):
//! NCCL moves whole runs, gaps included, so it is [`NcclError::NonContiguous`].
//!
//! # Errors
//!
//! Everything here returns [`Result`], `Result<T, NcclError>`: this layer's own error, as each
//! layer of wgpu has its own. The crate's [`Error`](crate::Error) belongs to the layers below
//! and has no NCCL variant (the lowest layer cannot name this one); instead
//! [`NcclError::Cuda`] wraps it, and `?` turns one into the other, so a function returning
//! `nccl::Result` calls the rest of the crate with `?` too. A program mixing both can return
//! `Result<T, Box<dyn std::error::Error>>` or its own error type.
//!
//! What no rank can see alone is whether the other ranks pass the same count. NCCL trusts
//! them to: when they do not, ranks overrun buffers or wait forever. [`Comms`] checks every
//! rank's buffers on the host, since it holds them all. Across processes,
//! [`Comm::check_counts`] compares them with a small all-gather, and
//! [`CommOptions::verify_counts`] does it before every collective: opt-in, because it costs a
//! round trip through NCCL and a host wait per call.
//!
//! # Stream ordering and safety
//!
//! A call queues GPU work and returns, like a kernel launch. It records its uses of the
//! memory on its stream as every launch and copy of this crate does (see the guide's
//! [Safety model](crate::guide::threads_and_safety#safety-model)): a buffer dropped right after a collective stays allocated until the
//! collective has run, a kernel on another stream that writes a buffer a collective reads
//! waits for it on the GPU, and a collective waits for earlier writes of its buffers on other
//! streams. The stream is the communicator's own ([`Comm::stream`]) or the one given to
//! [`Comm::on`]. Several calls that must be handed to NCCL together (a send and a receive of
//! one rank, a collective over several ranks of one thread) go in a [`Group`]; it keeps their
//! buffers borrowed until all are queued.
//!
//! # Failures and timeouts
//!
//! Communicators are made *nonblocking* (`ncclConfig_t::blocking = 0`): NCCL's calls return at
//! once while its own thread works, and this crate waits by polling NCCL's state, at most the
//! communicator's timeout ([`CommOptions::timeout`], 300 s by default). A rank that died, or
//! never joined, makes the others' calls fail with NCCL's error or with
//! [`NcclError::Timeout`] rather than hang; the communicators
//! waited for are then aborted (`ncclCommAbort`: their kernels stop) and refuse further calls
//! ([`NcclError::Aborted`]). [`Comm::synchronize`] waits for the
//! GPU work the same way, and [`Comm::abort`] ends a communicator at once. Dropping a
//! communicator waits for its work (at most the timeout) and destroys it. For the lowest
//! latency, [`CommOptions::blocking`] trades the timeouts on the host side for the few
//! microseconds of NCCL's thread start per call.
//!
//! Why nonblocking stays the default, although an 8-byte all-reduce measured 64.8 us on a
//! nonblocking communicator against 12.2 us on a blocking one: the difference is NCCL's, not
//! this crate's waiting (`benches/nccl.rs` measures bare NCCL on the same communicators beside
//! ours). On a nonblocking communicator `ncclGroupEnd` hands every call to a host thread it
//! starts for that call and returns `ncclInProgress`; this crate polls
//! `ncclCommGetAsyncError` without sleeping for the first 200 us, so it adds nothing measurable.
//! A blocking communicator avoids the thread, but a blocking `ncclCommInitRankConfig` returns
//! no handle until every rank has joined, so nothing can abort an init that waits for a rank
//! that died: keeping init under a timeout needs the nonblocking mode, which NCCL fixes per
//! communicator at init. Latency-bound jobs whose launcher kills a failed job can choose
//! [`CommOptions::blocking`].
//!
//! # Launching across processes and hosts
//!
//! Each process needs its rank, the number of ranks, the GPU it drives, and the [`UniqueId`]
//! that one of them made:
//!
//! - [`Comm::from_env`] does it all for the launchers clusters use: [`LaunchEnv`] reads the
//!   rank, size and local rank (the GPU) of `torchrun` (`RANK`, `WORLD_SIZE`, `LOCAL_RANK`),
//!   Open MPI (`OMPI_COMM_WORLD_RANK`, ...) or Slurm (`SLURM_PROCID`, ...), and the address of
//!   rank 0 (`MASTER_ADDR:MASTER_PORT`, or the first host of `SLURM_JOB_NODELIST`); a missing
//!   variable is an error naming it. Rank 0 then serves a [`Rendezvous`] there, a small
//!   key-value store over TCP, through which it hands every rank the id; every wait is bounded
//!   and every failure (a rank that never arrives, ranks that disagree on the size, a port in
//!   use, a store that goes away) is a [`RendezvousError`] within the timeout.
//! - By hand, the id travels through a file every host can read (rank 0 writes it with
//!   [`UniqueId::write_to_file`], atomically; the others wait for it with
//!   [`UniqueId::read_from_file`]), or rank 0 prints it ([`UniqueId::to_hex`]) and a script
//!   passes it to the others on the command line or in a variable ([`UniqueId::from_env`]).
//! - Without a launcher, a program can start its own ranks: `examples/nccl_data_parallel.rs
//!   --procs` spawns itself once per GPU with `torchrun`'s variables.
//!
//! The id holds the address of rank 0's bootstrap socket, so the other hosts must reach it
//! (`NCCL_SOCKET_IFNAME` picks the interface), as they must reach the rendezvous port. Use a new id, or a new file, per job: a file
//! left from an earlier run is read like a new one.
//!
//! # Loading NCCL, and its environment
//!
//! NCCL is loaded at run time, like the CUDA driver: building needs no NCCL. The first call
//! that needs it checks that `libnccl` can be opened under the names cudarc tries (`libnccl.so`,
//! `libnccl.so.13`, ...; not `libnccl.so.2`, NCCL's own soname) and returns
//! [`NcclError::NotFound`], saying what was tried and found, rather
//! than panicking. The PyPI wheel (`pip install nvidia-nccl-cu13`) ships
//! `nvidia/nccl/lib/libnccl.so.2` only: make a symlink `libnccl.so` to it and put the directory
//! on `LD_LIBRARY_PATH` (`source scripts/nvrtc-env.sh` does both in this repository).
//! [`is_available`] and [`version`] tell what is there.
//!
//! NCCL reads its settings from the environment (`NCCL_DEBUG=WARN` to see why a call failed,
//! `NCCL_SOCKET_IFNAME`, ...); this crate sets none. On machines whose GPUs share NVLink
//! switches with other users, NVLink multicast (NVLS) can take the switches down for
//! everyone: set `NCCL_NVLS_ENABLE=0` before the first NCCL call there (this crate's tests,
//! examples and benches set it unless it is set already).

mod check;
mod collectives;
mod communicator;
mod error;
mod from_env;
mod group;
mod handle;
mod hostlist;
mod id;
mod init;
mod launch_env;
mod launch_error;
mod library;
mod op;
mod options;
mod process_ranks;
mod rendezvous;
mod result;
mod types;
mod verify;
mod wait;

pub use communicator::{Comm, OnStream};
pub use error::{NcclError, Result};
pub use group::{group, Group};
pub use hostlist::expand_slurm_hostlist;
pub use id::{UniqueId, UNIQUE_ID_BYTES};
pub use launch_env::{LaunchEnv, DEFAULT_MASTER_PORT};
pub use launch_error::{LaunchEnvError, Launcher};
pub use library::{is_available, version};
pub use options::CommOptions;
pub use process_ranks::Comms;
pub use rendezvous::{Rendezvous, RendezvousError};
pub use types::{DataType, NcclType, ReduceOp};

// Ranks move between threads, one thread at a time each (NCCL's rule): Send, not Sync.
const _: () = {
    const fn send<T: Send>() {}
    send::<Comm>();
    send::<Comms>();
    send::<UniqueId>();
    send::<CommOptions>();
};
