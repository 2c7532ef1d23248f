//! [`RendezvousError`]: why the ranks did not meet, each naming the store's address, the rank
//! and the world size it had.

use std::time::Duration;

/// Why a [`Rendezvous`](crate::nccl::Rendezvous) failed. Every variant names the store's
/// `address` (`MASTER_ADDR:MASTER_PORT`), this `rank` and the `world_size` it was given; none
/// is a hang: each comes at the latest when its timeout passes.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RendezvousError {
    /// Rank 0 could not serve the store: the port is taken (another job, or an earlier run
    /// still exiting). Pick another `MASTER_PORT`.
    #[error("rendezvous at {address} (rank {rank} of {world_size}): rank 0 cannot serve the store, the port is in use; set MASTER_PORT to a free port")]
    PortInUse {
        /// The store's address.
        address: String,
        /// This rank.
        rank: usize,
        /// The ranks expected.
        world_size: usize,
    },
    /// The store never answered within the timeout: rank 0 is not running (yet), runs
    /// elsewhere than `MASTER_ADDR`, or a firewall blocks the port.
    #[error("rendezvous at {address} (rank {rank} of {world_size}): no store answered within {timeout:?} (last attempt: {source}); is rank 0 running on that host, and is the port open?")]
    Unreachable {
        /// The store's address.
        address: String,
        /// This rank.
        rank: usize,
        /// The ranks expected.
        world_size: usize,
        /// The time spent retrying.
        timeout: Duration,
        /// Why the last attempt failed.
        #[source]
        source: std::io::Error,
    },
    /// Ranks disagree on the number of ranks: this one's differs from rank 0's.
    #[error("rendezvous at {address}: rank {rank} was started for {world_size} ranks, but rank 0 for {store_world_size}; every rank must be given the same world size")]
    WorldSizeMismatch {
        /// The store's address.
        address: String,
        /// This rank.
        rank: usize,
        /// This rank's world size.
        world_size: usize,
        /// Rank 0's.
        store_world_size: usize,
    },
    /// Another process joined as this rank already: two ranks were given the same number.
    #[error(
        "rendezvous at {address}: rank {rank} of {world_size} joined twice; every process needs its own rank"
    )]
    RankTaken {
        /// The store's address.
        address: String,
        /// This rank.
        rank: usize,
        /// The ranks expected.
        world_size: usize,
    },
    /// A rank outside `0..world_size`, or a world size of 0.
    #[error("rendezvous at {address}: rank {rank} is not a rank of a job of {world_size} (0..{world_size})")]
    BadRank {
        /// The store's address.
        address: String,
        /// The rank given.
        rank: usize,
        /// The world size given.
        world_size: usize,
    },
    /// A wait passed its timeout: ranks that never arrived at a barrier (`missing`), or a key
    /// no rank set.
    #[error("rendezvous at {address} (rank {rank} of {world_size}): {operation} did not finish within {timeout:?}{}", if .missing.is_empty() { String::new() } else { format!("; rank(s) {} never arrived", .missing.iter().map(|r| r.to_string()).collect::<Vec<_>>().join(", ")) })]
    Timeout {
        /// The store's address.
        address: String,
        /// This rank.
        rank: usize,
        /// The ranks expected.
        world_size: usize,
        /// What was waited for, e.g. `the barrier "rendezvous/joined"`.
        operation: String,
        /// The timeout that passed.
        timeout: Duration,
        /// The ranks that had not arrived (for a barrier).
        missing: Vec<usize>,
    },
    /// The store closed the connection: rank 0 exited, failed or gave up.
    #[error("rendezvous at {address} (rank {rank} of {world_size}): the store went away during {operation} (rank 0 exited or failed)")]
    StoreClosed {
        /// The store's address.
        address: String,
        /// This rank.
        rank: usize,
        /// The ranks expected.
        world_size: usize,
        /// What was under way, e.g. `the barrier "1"`.
        operation: String,
    },
    /// Another I/O failure talking to the store, or something that is not a store on the
    /// port.
    #[error("rendezvous at {address} (rank {rank} of {world_size}): {operation} failed: {source}")]
    Io {
        /// The store's address.
        address: String,
        /// This rank.
        rank: usize,
        /// The ranks expected.
        world_size: usize,
        /// What failed, e.g. `serving the store`.
        operation: String,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
}
