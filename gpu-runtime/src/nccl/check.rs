//! The checks made on the host before NCCL is called: lengths, ranks, contexts. NCCL itself
//! cannot see a buffer's length, so a short buffer would be overrun silently; here it is a
//! typed error and nothing is called.

use crate::driver::context::core::Context;
use crate::error::{Error, Result};

/// `got == want` elements, or [`Error::SizeMismatch`] saying what `what` should hold.
pub(crate) fn len_is(operation: &'static str, what: &str, got: usize, want: usize, why: &str) -> Result<()> {
    if got != want {
        return Err(Error::SizeMismatch {
            operation,
            detail: format!("{what} holds {got} elements but must hold {want}{why}"),
        });
    }
    Ok(())
}

/// `n * nranks`, or [`Error::SizeMismatch`] when it overflows.
pub(crate) fn times_ranks(operation: &'static str, n: usize, nranks: usize) -> Result<usize> {
    n.checked_mul(nranks).ok_or_else(|| Error::SizeMismatch {
        operation,
        detail: format!("{n} elements for each of {nranks} ranks overflow usize"),
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
pub(crate) fn rank_in(operation: &'static str, what: &str, rank: usize, nranks: usize) -> Result<()> {
    if rank >= nranks {
        return Err(Error::InvalidArgument {
            operation,
            detail: format!(
                "{what} {rank} is not a rank of this communicator of {nranks} ranks (0..{nranks})"
            ),
        });
    }
    Ok(())
}

/// One item per rank, for the collectives of a process's ranks.
pub(crate) fn per_rank(operation: &'static str, what: &str, got: usize, nranks: usize) -> Result<()> {
    if got != nranks {
        return Err(Error::SizeMismatch {
            operation,
            detail: format!("{got} {what} for {nranks} ranks: pass one per rank, in rank order"),
        });
    }
    Ok(())
}

/// Memory or a stream of `ctx` used with a communicator of `comm`.
pub(crate) fn same_context(what: &'static str, ctx: &Context, comm: &Context) -> Result<()> {
    if ctx != comm {
        return Err(Error::WrongContext { what });
    }
    Ok(())
}

/// Every rank's count (`counts[r]` is rank r's) is the same, else [`Error::SizeMismatch`]
/// listing them all.
pub(crate) fn counts_agree(operation: &'static str, counts: &[u64]) -> Result<()> {
    if counts.windows(2).all(|w| w[0] == w[1]) {
        return Ok(());
    }
    let list: Vec<String> = counts
        .iter()
        .enumerate()
        .map(|(r, c)| format!("rank {r}: {c}"))
        .collect();
    Err(Error::SizeMismatch {
        operation,
        detail: format!(
            "the ranks pass different element counts ({}); every rank must pass the same",
            list.join(", ")
        ),
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
            e.to_string()
                .contains("the send buffer holds 12 elements but must hold 9"),
            "{e}"
        );
        // Overflow is an error, not a wrap or a panic.
        let e = all_gather_lens("all_gather", usize::MAX, 0, 2).unwrap_err();
        assert!(e.to_string().contains("overflow"), "{e}");
    }

    #[test]
    fn ranks_and_counts() {
        assert!(rank_in("broadcast", "root", 1, 2).is_ok());
        let e = rank_in("broadcast", "root", 2, 2).unwrap_err();
        assert!(
            matches!(e, Error::InvalidArgument { .. }) && e.to_string().contains("root 2"),
            "{e}"
        );
        assert!(per_rank("Comms::all_reduce", "send buffers", 2, 2).is_ok());
        assert!(per_rank("Comms::all_reduce", "send buffers", 1, 2).is_err());
        assert!(counts_agree("check_counts", &[5, 5, 5]).is_ok());
        let e = counts_agree("check_counts", &[5, 4]).unwrap_err();
        assert!(e.to_string().contains("rank 0: 5, rank 1: 4"), "{e}");
    }
}
