//! The checks made on the host before NCCL is called: lengths, ranks, contexts. NCCL itself
//! cannot see a buffer's length, so a short buffer would be overrun silently; here it is a
//! typed error and nothing is called.

use crate::driver::context::core::Context;
use crate::driver::memory::view::{DeviceRead, DeviceView, DeviceViewMut, DeviceWrite};
use crate::error::Error;
use crate::nccl::error::{NcclError, Result};

/// `got == want` elements, or [`NcclError::BufferLength`] saying what `what` should hold.
pub(crate) fn len_is(operation: &'static str, what: &str, got: usize, want: usize, why: &str) -> Result<()> {
    if got != want {
        return Err(NcclError::BufferLength {
            operation,
            what: what.to_owned(),
            got,
            want,
            why: why.to_owned(),
        });
    }
    Ok(())
}

/// `n * nranks`, or [`NcclError::CountOverflow`] when it overflows.
pub(crate) fn times_ranks(operation: &'static str, n: usize, nranks: usize) -> Result<usize> {
    n.checked_mul(nranks).ok_or(NcclError::CountOverflow {
        operation,
        count: n,
        nranks,
    })
}

/// All-gather: each rank sends `send` elements and receives everyone's, `nranks * send`.
pub(crate) fn all_gather_lens(
    operation: &'static str,
    send: usize,
    recv: usize,
    nranks: usize,
) -> Result<()> {
    let want = times_ranks(operation, send, nranks)?;
    len_is(
        operation,
        "the receive buffer",
        recv,
        want,
        &format!(" ({nranks} ranks times the {send} elements sent)"),
    )
}

/// Reduce-scatter: each rank sends `nranks * recv` elements and receives its `recv`-element
/// share of the reduction.
pub(crate) fn reduce_scatter_lens(
    operation: &'static str,
    send: usize,
    recv: usize,
    nranks: usize,
) -> Result<()> {
    let want = times_ranks(operation, recv, nranks)?;
    len_is(
        operation,
        "the send buffer",
        send,
        want,
        &format!(" ({nranks} ranks times the {recv} elements received)"),
    )
}

/// A rank number (`what` is `root` or `peer`) within the communicator.
pub(crate) fn rank_in(operation: &'static str, what: &'static str, rank: usize, nranks: usize) -> Result<()> {
    if rank >= nranks {
        return Err(NcclError::RankOutOfRange {
            operation,
            what,
            rank,
            nranks,
        });
    }
    Ok(())
}

/// One item per rank, for the collectives of a process's ranks.
pub(crate) fn per_rank(operation: &'static str, what: &str, got: usize, nranks: usize) -> Result<()> {
    if got != nranks {
        return Err(NcclError::NotOnePerRank {
            operation,
            what: what.to_owned(),
            got,
            nranks,
        });
    }
    Ok(())
}

/// The view of memory a call reads, or [`NcclError::NonContiguous`] when its elements do not
/// fill the memory it spans (NCCL would send the gaps too).
pub(crate) fn read<'a, T>(
    operation: &'static str,
    what: &'static str,
    buf: &'a (impl DeviceRead<T> + ?Sized),
) -> Result<DeviceView<'a, T>> {
    if !buf.is_contiguous() {
        return Err(NcclError::NonContiguous { operation, what });
    }
    Ok(buf.device_view())
}

/// The view of memory a call writes, or [`NcclError::NonContiguous`] when its elements do not
/// fill the memory it spans (NCCL would overwrite the gaps).
pub(crate) fn write<'a, T>(
    operation: &'static str,
    what: &'static str,
    buf: &'a mut (impl DeviceWrite<T> + ?Sized),
) -> Result<DeviceViewMut<'a, T>> {
    if !buf.is_contiguous() {
        return Err(NcclError::NonContiguous { operation, what });
    }
    Ok(buf.device_view_mut())
}

/// Memory or a stream of `ctx` used with a communicator of `comm`.
pub(crate) fn same_context(what: &'static str, ctx: &Context, comm: &Context) -> Result<()> {
    if ctx != comm {
        return Err(Error::WrongContext { what }.into());
    }
    Ok(())
}

/// Every rank's count (`counts[r]` is rank r's) is the same, else [`NcclError::CountsDiffer`]
/// listing them all.
pub(crate) fn counts_agree(operation: &'static str, counts: &[u64]) -> Result<()> {
    if counts.windows(2).all(|w| w[0] == w[1]) {
        return Ok(());
    }
    Err(NcclError::CountsDiffer {
        operation,
        counts: counts.to_vec(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gather_and_scatter_lengths() {
        assert!(all_gather_lens("all_gather", 4, 8, 2).is_ok());
        let e = all_gather_lens("all_gather", 4, 4, 2).unwrap_err();
        assert_eq!(
            e.to_string(),
            "size mismatch in all_gather: the receive buffer holds 4 elements but must hold 8 (2 ranks times the 4 elements sent)"
        );
        assert!(reduce_scatter_lens("reduce_scatter", 12, 4, 3).is_ok());
        let e = reduce_scatter_lens("reduce_scatter", 12, 3, 3).unwrap_err();
        assert!(
            matches!(&e, NcclError::BufferLength { what, got: 12, want: 9, .. } if what == "the send buffer"),
            "{e}"
        );
        // Overflow is an error, not a wrap or a panic.
        let e = all_gather_lens("all_gather", usize::MAX, 0, 2).unwrap_err();
        assert!(
            matches!(
                e,
                NcclError::CountOverflow {
                    count: usize::MAX,
                    nranks: 2,
                    ..
                }
            ),
            "{e}"
        );
    }

    #[test]
    fn ranks_and_counts() {
        assert!(rank_in("broadcast", "root", 1, 2).is_ok());
        let e = rank_in("broadcast", "root", 2, 2).unwrap_err();
        assert!(
            matches!(
                e,
                NcclError::RankOutOfRange {
                    what: "root",
                    rank: 2,
                    nranks: 2,
                    ..
                }
            ),
            "{e}"
        );
        assert!(per_rank("Comms::all_reduce", "send buffers", 2, 2).is_ok());
        assert!(per_rank("Comms::all_reduce", "send buffers", 1, 2).is_err());
        assert!(counts_agree("check_counts", &[5, 5, 5]).is_ok());
        let e = counts_agree("check_counts", &[5, 4]).unwrap_err();
        assert!(
            matches!(&e, NcclError::CountsDiffer { counts, .. } if counts == &[5, 4]),
            "{e}"
        );
        // The sentence lists every rank's count.
        assert!(e.to_string().contains("rank 0: 5, rank 1: 4"), "{e}");
    }
}
