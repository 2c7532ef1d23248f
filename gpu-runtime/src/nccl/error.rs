//! [`NcclError`], the error of the `nccl` module, and [`Result`], its result.
//!
//! Each layer of the crate above the CUDA ones has its own error (as wgpu does): the error
//! layer, the lowest, cannot name an NCCL type, so `gpu_runtime::Error` has no NCCL variant.
//! Instead `NcclError::Cuda` wraps a `gpu_runtime::Error`, and `?` turns one into the other, so a
//! function returning [`nccl::Result`](Result) calls the rest of the crate with `?` as well.

use std::fmt;

use crate::error::Error;
use crate::nccl::launch_error::LaunchEnvError;
use crate::nccl::rendezvous::error::RendezvousError;

/// `Result<T, NcclError>`: what the `nccl` module returns.
pub type Result<T, E = NcclError> = std::result::Result<T, E>;

/// Why an operation of the `nccl` module failed: NCCL's own failures, the checks made before
/// NCCL is called, the rendezvous and the launcher's variables, and, wrapped, the crate's
/// [`Error`](crate::Error) for what the CUDA layers below said.
///
/// `Debug` prints the same sentence as `Display`, so that `fn main() -> nccl::Result<()>` ends
/// with a readable message.
#[derive(thiserror::Error)]
#[non_exhaustive]
pub enum NcclError {
    /// An error of the layers below NCCL: the driver, memory, a stream, an argument they
    /// refused. Matching it gives the crate's [`Error`](crate::Error).
    #[error(transparent)]
    Cuda(#[from] Error),
    /// The rendezvous of the ranks over TCP failed ([`Rendezvous`](crate::nccl::Rendezvous)).
    #[error(transparent)]
    Rendezvous(#[from] RendezvousError),
    /// The launcher's environment variables say no rank, size or address
    /// ([`LaunchEnv`](crate::nccl::LaunchEnv)).
    #[error(transparent)]
    Launch(#[from] LaunchEnvError),
    /// A buffer whose elements do not fill the memory it spans (a view with steps, a pitched
    /// buffer with padding): NCCL would send or overwrite the gaps too. Nothing was called.
    #[error("invalid argument to {operation}: {what} is not contiguous (its elements do not fill the memory it spans); NCCL moves whole runs of memory, so copy it to a contiguous buffer first")]
    NonContiguous {
        /// The operation, e.g. `all_reduce`.
        operation: &'static str,
        /// Which buffer, e.g. `the send buffer`.
        what: &'static str,
    },
    /// An NCCL call failed. `message` is NCCL's description of the code
    /// (`ncclGetErrorString`) followed by its last detailed message (`ncclGetLastError`).
    #[error("NCCL: {call} failed: {message} (ncclResult_t {code})")]
    Call {
        /// The NCCL function that failed, e.g. `ncclAllReduce`.
        call: &'static str,
        /// The numeric `ncclResult_t`.
        code: u32,
        /// The code's name, NCCL's description of it and its last detailed message.
        message: String,
    },
    /// NCCL (`libnccl`) could not be loaded; nothing was called.
    #[error("NCCL could not be loaded: tried {tried}; {hint}")]
    NotFound {
        /// The library names and directories tried.
        tried: String,
        /// What was found instead, if anything, and how to install NCCL.
        hint: String,
    },
    /// An NCCL operation, or the wait for another rank, did not finish within its timeout: a
    /// rank failed, hung or never started. When `aborted`, the communicators waited for were
    /// aborted (`ncclCommAbort`) and refuse further calls.
    #[error("NCCL: {operation} did not finish within {timeout:?}: a rank may have failed, hung or never started{}", if *aborted { "; the communicators waited for were aborted (ncclCommAbort) and refuse further calls (CommOptions::timeout sets a longer wait)" } else { "" })]
    Timeout {
        /// What was waited for, e.g. `ncclCommInitRankConfig for rank(s) 1 of 2`.
        operation: String,
        /// The timeout that passed.
        timeout: std::time::Duration,
        /// True when communicators were aborted for it.
        aborted: bool,
    },
    /// A call on an NCCL communicator that was aborted, explicitly or after an error or a
    /// timeout; nothing was called. Make a new communicator.
    #[error("NCCL: {operation} on rank {rank}, whose communicator was aborted; make a new communicator (every rank must)")]
    Aborted {
        /// The operation refused.
        operation: &'static str,
        /// The communicator's rank.
        rank: usize,
    },
    /// A buffer of another length than the collective needs; nothing was called.
    #[error("size mismatch in {operation}: {what} holds {got} elements but must hold {want}{why}")]
    BufferLength {
        /// The operation, e.g. `all_gather`.
        operation: &'static str,
        /// Which buffer, e.g. `the receive buffer`.
        what: String,
        /// The elements it holds.
        got: usize,
        /// The elements it must hold.
        want: usize,
        /// Why, e.g. ` (send elements x 2 ranks)`; may be empty.
        why: String,
    },
    /// A per-rank element count times the number of ranks that overflows `usize`.
    #[error("size mismatch in {operation}: {count} elements for each of {nranks} ranks overflow usize")]
    CountOverflow {
        /// The operation.
        operation: &'static str,
        /// Elements per rank.
        count: usize,
        /// Ranks.
        nranks: usize,
    },
    /// A root or peer that is not a rank of the communicator; nothing was called.
    #[error("invalid argument to {operation}: {what} {rank} is not a rank of this communicator of {nranks} ranks (0..{nranks})")]
    RankOutOfRange {
        /// The operation, e.g. `broadcast`.
        operation: &'static str,
        /// `root` or `peer`.
        what: &'static str,
        /// The rank given.
        rank: usize,
        /// The communicator's size.
        nranks: usize,
    },
    /// Not one item (a buffer, a stream) per rank for a collective of a process's ranks.
    #[error(
        "size mismatch in {operation}: {got} {what} for {nranks} ranks: pass one per rank, in rank order"
    )]
    NotOnePerRank {
        /// The operation, e.g. `Comms::all_reduce`.
        operation: &'static str,
        /// What was passed, e.g. `receive buffers`.
        what: String,
        /// How many were passed.
        got: usize,
        /// The ranks.
        nranks: usize,
    },
    /// Ranks that passed different element counts to one collective (`CommOptions::verify_counts`).
    #[error("size mismatch in {operation}: the ranks pass different element counts ({}); every rank must pass the same", .counts.iter().enumerate().map(|(r, c)| format!("rank {r}: {c}")).collect::<Vec<_>>().join(", "))]
    CountsDiffer {
        /// The operation.
        operation: &'static str,
        /// Each rank's count, in rank order.
        counts: Vec<u64>,
    },
    /// Text given as a unique id that is not as many hexadecimal digits as an id has.
    #[error("invalid argument to UniqueId::from_hex: an NCCL unique id is {expected} hexadecimal digits, but the text has {len} characters")]
    UniqueIdLength {
        /// The digits an id has (twice `nccl::UNIQUE_ID_BYTES`).
        expected: usize,
        /// The bytes the text has, surrounding whitespace removed.
        len: usize,
    },
    /// Text given as a unique id with a character that is not a hexadecimal digit.
    #[error("invalid argument to UniqueId::from_hex: character {position} is {character:?}, not a hexadecimal digit")]
    UniqueIdDigit {
        /// Its byte offset in the text, surrounding whitespace removed.
        position: usize,
        /// The byte there, as a character (a byte of a multi-byte character shows as its
        /// Latin-1 reading).
        character: char,
    },
    /// An environment variable that should hold a unique id is unset or not Unicode.
    #[error("invalid argument to UniqueId::from_env: the environment variable {var} holds no NCCL unique id: {source}")]
    UniqueIdVariable {
        /// The variable's name.
        var: String,
        /// Why it could not be read.
        #[source]
        source: std::env::VarError,
    },
}

impl fmt::Debug for NcclError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl NcclError {
    /// The crate's error this wraps, for an error of the layers below NCCL.
    pub fn as_cuda(&self) -> Option<&Error> {
        match self {
            NcclError::Cuda(e) => Some(e),
            _ => None,
        }
    }
}
