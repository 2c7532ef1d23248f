//! [`CommOptions`]: how long to wait for the other ranks, and how a communicator is made.

use std::time::Duration;

use cudarc::nccl::sys;

/// How a communicator waits for the other ranks, and what it checks. The default: nonblocking,
/// a 300 s timeout, counts not compared across ranks.
///
/// ```
/// use std::time::Duration;
/// use gpu_runtime::nccl::CommOptions;
/// let options = CommOptions::new().timeout(Duration::from_secs(60)).verify_counts(true);
/// assert_eq!(options.get_timeout(), Duration::from_secs(60));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CommOptions {
    pub(crate) timeout: Duration,
    pub(crate) blocking: bool,
    pub(crate) verify_counts: bool,
}

impl Default for CommOptions {
    fn default() -> Self {
        CommOptions {
            timeout: Duration::from_secs(300),
            blocking: false,
            verify_counts: false,
        }
    }
}

impl CommOptions {
    /// The defaults.
    pub fn new() -> CommOptions {
        CommOptions::default()
    }

    /// The longest the host waits for NCCL: for the ranks to join a new communicator, for a
    /// call to be queued, for [`Comm::synchronize`](crate::nccl::Comm::synchronize). When it
    /// passes, the communicators waited for are aborted and the call returns
    /// [`NcclError::Timeout`](crate::nccl::NcclError::Timeout). Default 300 s: the first call that
    /// connects two ranks can take seconds across hosts.
    pub fn timeout(mut self, timeout: Duration) -> CommOptions {
        self.timeout = timeout;
        self
    }

    /// Makes the communicator *blocking* (`ncclConfig_t::blocking = 1`; the default is 0).
    ///
    /// A nonblocking communicator lets every wait honour the timeout, but NCCL starts a host
    /// thread for each call on it, some microseconds, which small messages feel. A blocking
    /// one queues calls on the calling thread: its calls are as fast as NCCL's, but making it
    /// and its first calls to each peer wait for the other ranks with no timeout (waits for the
    /// GPU, [`Comm::synchronize`](crate::nccl::Comm::synchronize), still time out). For
    /// latency-bound work under a launcher that kills a failed job: an 8-byte all-reduce took
    /// 12.2 us on a blocking communicator and 64.8 us on a nonblocking one (the module docs,
    /// "Failures and timeouts", say why nonblocking stays the default).
    pub fn blocking(mut self, blocking: bool) -> CommOptions {
        self.blocking = blocking;
        self
    }

    /// Checks before each collective of a [`Comm`](crate::nccl::Comm) that every rank passes
    /// the same element count (the opt-in of [`Comm::check_counts`](crate::nccl::Comm::check_counts)),
    /// and returns [`NcclError::CountsDiffer`](crate::nccl::NcclError::CountsDiffer) on every rank when one
    /// differs. Off by default: it adds a round trip through NCCL and a host wait per call.
    /// For one rank per thread or process (see [`Comm::check_counts`](crate::nccl::Comm::check_counts)).
    pub fn verify_counts(mut self, verify: bool) -> CommOptions {
        self.verify_counts = verify;
        self
    }

    /// The timeout.
    pub fn get_timeout(&self) -> Duration {
        self.timeout
    }

    /// True for a blocking communicator.
    pub fn is_blocking(&self) -> bool {
        self.blocking
    }

    /// True when counts are compared across ranks before each collective.
    pub fn verifies_counts(&self) -> bool {
        self.verify_counts
    }

    /// The `ncclConfig_t` of these options: `NCCL_CONFIG_INITIALIZER` (every field "unset",
    /// for NCCL to choose) with `blocking` set.
    pub(crate) fn config(&self) -> sys::ncclConfig_t {
        // NCCL_CONFIG_UNDEF_INT and NCCL_CONFIG_UNDEF_PTR.
        const UNDEF: i32 = i32::MIN;
        let null = std::ptr::null();
        sys::ncclConfig_t {
            // NCCL copies min(size, its own size) bytes and reads `version` to know which
            // fields the caller's header had: this is the layout of cudarc's binding, made
            // from NCCL 2.30's header (NCCL_VERSION(2, 30, 0)); a newer library keeps its
            // defaults for the fields it added since.
            size: std::mem::size_of::<sys::ncclConfig_t>(),
            magic: 0xcafe_beef,
            version: 23000,
            blocking: i32::from(self.blocking),
            cgaClusterSize: UNDEF,
            minCTAs: UNDEF,
            maxCTAs: UNDEF,
            netName: null,
            splitShare: UNDEF,
            trafficClass: UNDEF,
            commName: null,
            collnetEnable: UNDEF,
            CTAPolicy: UNDEF,
            shrinkShare: UNDEF,
            nvlsCTAs: UNDEF,
            nChannelsPerNetPeer: UNDEF,
            nvlinkCentricSched: UNDEF,
            graphUsageMode: UNDEF,
            numRmaCtx: UNDEF,
            maxP2pPeers: UNDEF,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The config is NCCL_CONFIG_INITIALIZER with `blocking` set: NCCL rejects one without
    /// its magic, and reads `size` and `version` to know the layout.
    #[test]
    fn config_is_the_initializer_with_blocking() {
        let c = CommOptions::new().config();
        assert_eq!(
            (c.size, c.magic, c.version),
            (std::mem::size_of::<sys::ncclConfig_t>(), 0xcafe_beef, 23000)
        );
        assert_eq!(c.blocking, 0);
        assert_eq!(CommOptions::new().blocking(true).config().blocking, 1);
        assert_eq!((c.cgaClusterSize, c.maxP2pPeers), (i32::MIN, i32::MIN));
        assert!(c.netName.is_null() && c.commName.is_null());
    }
}
