//! Waiting for NCCL with a timeout, so that one failed rank cannot hang the others forever.
//!
//! A nonblocking communicator returns from its calls at once, saying `ncclInProgress` while
//! its own thread joins the ranks or queues the work; `ncclCommGetAsyncError` says when that is
//! done, or the error that broke the communicator (a peer that died shows up here as
//! `ncclRemoteError`). Waiting is polling it, and the stream where there is GPU work to wait
//! for, until everything is done, an error shows, or the timeout passes: on either of the last
//! two every communicator waited for is aborted, because the ranks of one call fail together
//! and an aborted communicator's kernels stop rather than wait for a peer forever.

use std::time::{Duration, Instant};

use crate::nccl::error::{NcclError, Result};
use crate::nccl::handle::Handle;
use crate::nccl::result::Status;

/// Waits until no handle of `handles` is in progress and `done()` says true, for at most
/// `timeout`. On an error of a communicator or of `done`, or at the timeout, aborts every one of
/// `handles` and returns the error ([`NcclError::Timeout`](crate::nccl::NcclError::Timeout) naming `operation()` for the
/// timeout).
pub(crate) fn until_ready(
    handles: &[&Handle],
    mut done: impl FnMut() -> Result<bool>,
    operation: impl FnOnce() -> String,
    timeout: Duration,
) -> Result<()> {
    let start = Instant::now();
    loop {
        match poll(handles, &mut done) {
            Ok(true) => return Ok(()),
            Ok(false) => {}
            Err(e) => {
                abort_all(handles);
                return Err(e);
            }
        }
        let waited = start.elapsed();
        if waited >= timeout {
            abort_all(handles);
            return Err(NcclError::Timeout {
                operation: operation(),
                timeout,
                aborted: !handles.is_empty(),
            });
        }
        pause(waited);
    }
}

/// Waits until no handle of `handles` is in progress (see [`until_ready`]).
pub(crate) fn until_queued(
    handles: &[&Handle],
    operation: impl FnOnce() -> String,
    timeout: Duration,
) -> Result<()> {
    until_ready(handles, || Ok(true), operation, timeout)
}

/// True when every communicator is done and `done()` says so.
fn poll(handles: &[&Handle], done: &mut impl FnMut() -> Result<bool>) -> Result<bool> {
    let mut ready = true;
    for h in handles {
        // A handle already gone (aborted by an earlier failure) has nothing left to wait for.
        if h.raw().is_null() {
            continue;
        }
        if h.state()? == Status::InProgress {
            ready = false;
        }
    }
    Ok(ready && done()?)
}

/// Aborts every communicator; the first error is not the one to report, so later ones are
/// dropped.
pub(crate) fn abort_all(handles: &[&Handle]) {
    for h in handles {
        let _ = h.abort();
    }
}

/// The pause between two polls, `waited` into the wait: none at first (a nonblocking call is
/// usually queued in tens of microseconds), then short sleeps, then longer ones, so that a
/// long wait costs little CPU and a short one little latency.
fn pause(waited: Duration) {
    if waited < Duration::from_micros(200) {
        std::thread::yield_now();
    } else if waited < Duration::from_millis(100) {
        std::thread::sleep(Duration::from_micros(20));
    } else {
        std::thread::sleep(Duration::from_millis(1));
    }
}
