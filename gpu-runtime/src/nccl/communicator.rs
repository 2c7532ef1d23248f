//! [`Comm`]: one rank of a communicator, with its context and stream, and its end; [`OnStream`]:
//! the rank with another stream.

use std::fmt;
use std::time::Duration;

use cudarc::nccl::sys;

use crate::driver::context::core::Context;
use crate::driver::device::Device;
use crate::driver::stream::Stream;
use crate::nccl::error::Result;
use crate::nccl::handle::Handle;
use crate::nccl::options::CommOptions;
use crate::nccl::result::check;
use crate::nccl::wait;

/// One rank of an NCCL communicator: the communicator (`ncclComm_t`), the [`Context`] of its
/// GPU, and a [`Stream`] there that its calls use unless given another.
///
/// Made for one rank per process with [`Comm::init_rank`], for every GPU of a process with
/// [`Comms::new`](crate::nccl::Comms::new), or from another communicator with
/// [`Comm::split`]. Collectives and transfers are its methods (`all_reduce`, `broadcast`, ...;
/// [`Comm::on`] for another stream), and [`Group`](crate::nccl::Group) queues several at once.
///
/// `Send` but not `Sync`: NCCL lets one thread at a time use a communicator, so move each rank
/// to the thread that drives it.
///
/// Dropping it waits for its stream's work and ends it (`ncclCommFinalize`, then
/// `ncclCommDestroy`), within its timeout; a communicator that failed, or did not finish in
/// time, is aborted instead (`ncclCommAbort`). [`Comm::destroy`] does the same and returns the
/// error; [`Comm::abort`] ends it at once.
pub struct Comm {
    pub(crate) handle: Handle,
    pub(crate) ctx: Context,
    pub(crate) stream: Stream,
    pub(crate) nranks: usize,
    pub(crate) options: CommOptions,
}

// SAFETY: an NCCL communicator may be used from any thread, one thread at a time; the `Cell`
// in `Handle` keeps `Comm` from being `Sync`, so a shared `&Comm` never reaches two threads.
// Context and Stream are Send.
unsafe impl Send for Comm {}

/// A rank's communicator with a stream other than its own: the same calls as [`Comm`]'s,
/// queued on that stream. Made by [`Comm::on`]; also what a [`Group`](crate::nccl::Group)'s
/// calls take.
#[derive(Debug, Clone, Copy)]
pub struct OnStream<'a> {
    pub(crate) comm: &'a Comm,
    pub(crate) stream: &'a Stream,
}

impl<'a> From<&'a Comm> for OnStream<'a> {
    /// The communicator on its own stream.
    fn from(comm: &'a Comm) -> OnStream<'a> {
        OnStream {
            comm,
            stream: &comm.stream,
        }
    }
}

impl fmt::Debug for Comm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Comm")
            .field("rank", &self.handle.rank())
            .field("nranks", &self.nranks)
            .field("device", &self.ctx.device().ordinal())
            .field("aborted", &self.is_aborted())
            .finish()
    }
}

impl Comm {
    /// This rank, in `0..size()`.
    pub fn rank(&self) -> usize {
        self.handle.rank()
    }

    /// The number of ranks.
    pub fn size(&self) -> usize {
        self.nranks
    }

    /// The context of this rank's GPU: buffers and streams given to its calls must belong to it.
    pub fn context(&self) -> &Context {
        &self.ctx
    }

    /// This rank's GPU.
    pub fn device(&self) -> Device {
        self.ctx.device()
    }

    /// The communicator's own stream (non-blocking), which its calls use unless given another
    /// with [`Comm::on`]. Launch the kernels that produce or consume a collective's buffers
    /// here to keep them in order without waits; on another stream the crate orders them
    /// through the buffers (see the guide's [Safety model](crate::guide::threads_and_safety#safety-model)).
    pub fn stream(&self) -> &Stream {
        &self.stream
    }

    /// The options it was made with.
    pub fn options(&self) -> CommOptions {
        self.options
    }

    /// True once aborted (explicitly, or after an error or a timeout): every call then returns
    /// [`NcclError::Aborted`](crate::nccl::NcclError::Aborted).
    pub fn is_aborted(&self) -> bool {
        self.handle.raw().is_null()
    }

    /// The NCCL handle, null once aborted. For NCCL functions this module does not wrap: work
    /// queued through it is outside the crate's stream ordering and must be ordered by hand.
    pub fn raw(&self) -> sys::ncclComm_t {
        self.handle.raw()
    }

    /// Aborts the communicator now (`ncclCommAbort`): its NCCL kernels stop, pending and
    /// later calls fail, and nothing waits for the other ranks, which should abort theirs too
    /// (their calls fail or time out). Memory its work used stays allocated until that work
    /// has stopped.
    pub fn abort(&self) -> Result<()> {
        self.ctx.bind()?;
        self.handle.abort()
    }

    /// Ends the communicator as dropping it does, returning what went wrong: waits for its
    /// stream (at most its timeout), then `ncclCommFinalize` (which waits for the rest of its
    /// work) and `ncclCommDestroy`; aborts it instead when it failed or timed out.
    pub fn destroy(self) -> Result<()> {
        self.close()
    }

    /// Waits until the work queued on the communicator's stream has finished, at most its
    /// timeout; an NCCL error (a peer that failed) or the timeout aborts it and is returned.
    pub fn synchronize(&self) -> Result<()> {
        self.synchronize_with_timeout(self.options.timeout)
    }

    /// [`Comm::synchronize`] with `timeout` instead of the communicator's.
    pub fn synchronize_with_timeout(&self, timeout: Duration) -> Result<()> {
        self.synchronize_stream(&self.stream, timeout)
    }

    /// Waits for `stream`, polling NCCL's state meanwhile (see `wait`).
    pub(crate) fn synchronize_stream(&self, stream: &Stream, timeout: Duration) -> Result<()> {
        self.handle.get("synchronize")?;
        wait::until_ready(
            &[&self.handle],
            || Ok(stream.is_done()?),
            || format!("the work queued on rank {} of {}", self.rank(), self.nranks),
            timeout,
        )
    }

    /// See [`Comm::destroy`].
    fn close(&self) -> Result<()> {
        if self.is_aborted() {
            return Ok(());
        }
        self.synchronize()?;
        self.ctx.bind()?;
        let raw = self.handle.get("ncclCommFinalize")?;
        // SAFETY: `raw` is live and finalized once (the handle is gone right after).
        if let Err(e) = check("ncclCommFinalize", unsafe { sys::ncclCommFinalize(raw) }) {
            let _ = self.handle.abort();
            return Err(e);
        }
        wait::until_queued(
            &[&self.handle],
            || format!("ncclCommFinalize of rank {} of {}", self.rank(), self.nranks),
            self.options.timeout,
        )?;
        self.handle.destroy()
    }
}

impl Drop for Comm {
    fn drop(&mut self) {
        // The error has nowhere to go: `close` aborted what failed, and the handle's own drop
        // aborts whatever is left.
        let _ = self.close();
    }
}
