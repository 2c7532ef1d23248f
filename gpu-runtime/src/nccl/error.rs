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
    /// The root of a broadcast or reduce that passed no buffer where the root needs one.
    #[error("invalid argument to {operation}: rank {root} is the root and must pass {what}")]
    RootBufferMissing {
        /// `broadcast` or `reduce`.
        operation: &'static str,
        /// The buffer, e.g. `a send buffer`.
        what: &'static str,
        /// The root's rank.
        root: usize,
    },
    /// A path given to `UniqueId::write_to_file` that ends in no file name (`/`, `..`).
    #[error("invalid argument to UniqueId::write_to_file: {} names no file", .path.display())]
    PathNamesNoFile {
        /// The path given.
        path: std::path::PathBuf,
    },
    /// A communicator size of 0 ranks, or more than NCCL's `int` holds.
    #[error(
        "invalid argument to making an NCCL communicator: {nranks} ranks: a communicator has 1 to {} ranks",
        i32::MAX
    )]
    RankCount {
        /// The size asked for.
        nranks: usize,
    },
    /// A rank made in a context other than its device's primary context.
    #[error("invalid argument to making an NCCL communicator: the context of rank {rank} is not its device's primary context; NCCL's CUDA runtime uses the primary context (Context::new)")]
    NotPrimaryContext {
        /// The rank.
        rank: usize,
    },
    /// Two ranks of one communicator on one device in this process.
    #[error("invalid argument to making an NCCL communicator: two ranks of this process on device {device}: NCCL runs one rank per GPU")]
    DeviceTwice {
        /// The device's ordinal.
        device: usize,
    },
    /// One rank asked for twice in this process.
    #[error("invalid argument to making an NCCL communicator: rank {rank} is asked for twice")]
    RankTwice {
        /// The rank.
        rank: usize,
    },
    /// No context given to `Comms::new`.
    #[error("invalid argument to Comms::new: no context given: a communicator needs at least one rank")]
    NoContext,
    /// Another number of colors than communicators to split.
    #[error(
        "size mismatch in splitting NCCL communicators: {communicators} communicators but {colors} colors"
    )]
    SplitColors {
        /// Communicators to split.
        communicators: usize,
        /// Colors given.
        colors: usize,
    },
    /// A split color above NCCL's `int`.
    #[error(
        "invalid argument to Comm::split: color {color} is above {}, NCCL's largest",
        i32::MAX
    )]
    ColorTooLarge {
        /// The color given.
        color: u32,
    },
    /// A group of blocking and nonblocking communicators.
    #[error("invalid argument to Group::run: the group mixes blocking and nonblocking communicators, which NCCL refuses: make them with the same CommOptions::blocking")]
    MixedBlocking,
    /// A split that NCCL answered with no communicator for the one rank asked for. Not a
    /// mistake of the caller: NCCL broke its contract, and this says so instead of a panic.
    #[error("{operation}: NCCL made no communicator for the one rank asked for")]
    NoCommunicatorMade {
        /// The operation, e.g. `Comm::split`.
        operation: &'static str,
    },
}

/// `?` from the NCCL API into a function returning [`crate::Result`]: an error of the layers
/// below comes back as itself, and NCCL's own as [`Error::Other`] (match it with
/// `e.downcast_ref::<NcclError>()`).
impl From<NcclError> for Error {
    fn from(e: NcclError) -> Error {
        match e {
            NcclError::Cuda(e) => e,
            own => Error::Other(Box::new(own)),
        }
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// `?` into `gpu_runtime::Result`: the wrapped error comes back as itself, NCCL's own
    /// inside `Error::Other`, where `downcast_ref` finds it with its fields.
    #[test]
    fn nccl_errors_convert_into_the_crate_error() {
        let e = Error::from(NcclError::Cuda(Error::NoDevice));
        assert!(matches!(e, Error::NoDevice), "{e}");
        let e = Error::from(NcclError::RankTwice { rank: 3 });
        assert!(
            matches!(
                e.downcast_ref::<NcclError>(),
                Some(NcclError::RankTwice { rank: 3 })
            ),
            "{e}"
        );
        // a message test: the sentence survives the wrapping.
        assert_eq!(
            e.to_string(),
            "invalid argument to making an NCCL communicator: rank 3 is asked for twice"
        );
    }
}
