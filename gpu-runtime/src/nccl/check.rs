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

/// `got == nranks * share` elements (`share`: what each rank `shares`, "sent" or "received"),
/// or [`NcclError::BufferLength`] (or [`NcclError::CountOverflow`] when the product overflows):
/// an all-gather receives, and a reduce-scatter sends, every rank's share.
pub(crate) fn len_is_ranks_times(
    operation: &'static str,
    what: &str,
    got: usize,
    share: usize,
    nranks: usize,
    shares: &str,
) -> Result<()> {
    let want = share.checked_mul(nranks).ok_or(NcclError::CountOverflow {
        operation,
        count: share,
        nranks,
    })?;
    if got == want {
        return Ok(());
    }
    let why = format!(" ({nranks} ranks times the {share} elements {shares})");
    len_is(operation, what, got, want, &why)
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
