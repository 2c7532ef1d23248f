//! Comparing element counts across ranks: [`Comm::check_counts`].
//!
//! NCCL trusts every rank to pass the same count: when they differ, the ranks read and write
//! past what the others expect, or wait forever for data that never comes. A rank sees only
//! its own buffers, so this crate checks lengths against the rank's own buffers only; the
//! opt-in comparison across ranks is a tiny all-gather of each rank's count, and a host wait
//! for it, before the real call.

use crate::nccl::check;
use crate::nccl::communicator::{Comm, OnStream};
use crate::nccl::error::Result;
use crate::nccl::op::{Kind, Op};

impl Comm {
    /// Checks that every rank passed the same `count`: each rank calls it, with its own count,
    /// where the ranks are about to call the same collective; all return the same
    /// [`NcclError::CountsDiffer`](crate::nccl::NcclError::CountsDiffer), listing every rank's count, when
    /// they differ. [`CommOptions::verify_counts`](crate::nccl::CommOptions::verify_counts)
    /// does this before each collective.
    ///
    /// It costs an all-gather of 8 bytes per rank and a host wait for it: a round trip
    /// through NCCL per call, which is why it is not done by default. It is for one rank per
    /// thread or process: a thread that drives several ranks would wait for itself (until the
    /// timeout), and has no need, since [`Comms`](crate::nccl::Comms) checks every rank's
    /// buffers on the host.
    pub fn check_counts(&self, count: usize) -> Result<()> {
        self.counts_agree("Comm::check_counts", count)
    }

    /// [`Comm::check_counts`] for `operation`, when the options ask for it.
    pub(crate) fn verify_count(&self, operation: &'static str, count: usize) -> Result<()> {
        if self.options.verify_counts {
            self.counts_agree(operation, count)?;
        }
        Ok(())
    }

    fn counts_agree(&self, operation: &'static str, count: usize) -> Result<()> {
        let send = self.ctx.to_device(&[count as u64])?;
        let mut recv = self.ctx.alloc_zeros::<u64>(self.nranks)?;
        // `Op::run` alone: `all_gather` would compare this call's count too, without end.
        Op::read_write(OnStream::from(self), Kind::AllGather, &send, &mut recv)?.run()?;
        self.synchronize()?;
        check::counts_agree(operation, &recv.to_vec()?)
    }
}
