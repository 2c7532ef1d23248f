//! Making communicators: one rank ([`Comm::init_rank`]), several ranks of one process at once
//! (what [`Comms::new`](crate::nccl::Comms::new) does), and splitting ([`Comm::split`]).
//!
//! Every communicator is made with `ncclCommInitRankConfig` (or `ncclCommSplit`) and the
//! options' `ncclConfig_t`, nonblocking by default, so that waiting for ranks that never come
//! times out. Several ranks of one thread are made inside one NCCL group, as
//! `ncclCommInitAll` does internally, or they would wait for each other forever.

use cudarc::nccl::sys;

use crate::driver::context::core::Context;
use crate::driver::stream::{Stream, StreamFlags};
use crate::nccl::communicator::Comm;
use crate::nccl::error::{NcclError, Result};
use crate::nccl::handle::Handle;
use crate::nccl::id::UniqueId;
use crate::nccl::library::ensure_loaded;
use crate::nccl::options::CommOptions;
use crate::nccl::result::{check, Status};
use crate::nccl::wait;

impl Comm {
    /// Joins rank `rank` of a communicator of `nranks` ranks, on the GPU of `ctx`, with the
    /// default [`CommOptions`]: what each process (or thread) does when there is one rank per
    /// process. Every rank passes the same `id`, made by one of them with
    /// [`UniqueId::new`]; this returns once all `nranks` have joined, or fails with
    /// [`NcclError::Timeout`](crate::nccl::NcclError::Timeout) after the timeout (300 s).
    ///
    /// `ctx` must be a device's primary context ([`Context::new`]), the one NCCL's CUDA runtime
    /// uses, and no two ranks of one process may share a GPU.
    ///
    /// ```no_run
    /// use std::time::Duration;
    /// use gpu_runtime::nccl::{Comm, ReduceOp, UniqueId};
    /// use gpu_runtime::{Context, Device};
    /// # fn main() -> gpu_runtime::nccl::Result<()> {
    /// # let (rank, nranks) = (0, 2);
    /// let id_file = "/shared/job-42.ncclid";
    /// let id = if rank == 0 {
    ///     let id = UniqueId::new()?;
    ///     id.write_to_file(id_file)?;
    ///     id
    /// } else {
    ///     UniqueId::read_from_file(id_file, Duration::from_secs(60))?
    /// };
    /// // One GPU per rank on this host (a launcher's local rank picks it).
    /// let ctx = Context::new(Device::new(rank)?)?;
    /// let comm = Comm::init_rank(&ctx, &id, nranks, rank)?;
    /// let mut grads = ctx.to_device(&vec![rank as f32; 1024])?;
    /// comm.all_reduce_in_place(&mut grads, ReduceOp::Sum)?;
    /// assert_eq!(grads.to_vec()?[0], 1.0); // 0 + 1
    /// # Ok(()) }
    /// ```
    pub fn init_rank(ctx: &Context, id: &UniqueId, nranks: usize, rank: usize) -> Result<Comm> {
        Comm::init_rank_with(ctx, id, nranks, rank, CommOptions::default())
    }

    /// [`Comm::init_rank`] with `options`.
    pub fn init_rank_with(
        ctx: &Context,
        id: &UniqueId,
        nranks: usize,
        rank: usize,
        options: CommOptions,
    ) -> Result<Comm> {
        let mut comms = init_many(&[(ctx, rank)], id, nranks, options)?;
        comms.pop().ok_or_else(|| unreachable_empty("Comm::init_rank"))
    }

    /// Splits the communicator (`ncclCommSplit`): every rank calls it, and the ranks that pass
    /// the same `color` make a new communicator together, ranked by `key` (then by their rank
    /// here). A rank that passes `None` joins none and gets `None`. The new communicator shares
    /// this one's context and options, with a stream of its own.
    ///
    /// Every rank must call it, each from its own thread or process; several ranks of one
    /// thread split with [`Comms::split`](crate::nccl::Comms::split). A split that fails or
    /// times out aborts this communicator too: its ranks no longer agree on what it did.
    pub fn split(&self, color: Option<u32>, key: i32) -> Result<Option<Comm>> {
        let mut comms = split_many(&[self], &[(color, key)])?;
        comms.pop().ok_or_else(|| unreachable_empty("Comm::split"))
    }
}

/// An internal error for a result that cannot be empty: one member in, one out.
fn unreachable_empty(operation: &'static str) -> NcclError {
    NcclError::NoCommunicatorMade { operation }
}

/// The ranks `members` (a context and a rank each) of a communicator of `nranks`, made by this
/// thread at once, in one NCCL group when there are several.
pub(crate) fn init_many(
    members: &[(&Context, usize)],
    id: &UniqueId,
    nranks: usize,
    options: CommOptions,
) -> Result<Vec<Comm>> {
    if nranks == 0 || i32::try_from(nranks).is_err() {
        return Err(NcclError::RankCount { nranks });
    }
    for (i, (ctx, rank)) in members.iter().enumerate() {
        if *rank >= nranks {
            return Err(NcclError::RankOutOfRange {
                operation: "making an NCCL communicator",
                what: "rank",
                rank: *rank,
                nranks,
            });
        }
        if !ctx.is_primary() {
            return Err(NcclError::NotPrimaryContext { rank: *rank });
        }
        if members[..i].iter().any(|(c, _)| c.device() == ctx.device()) {
            return Err(NcclError::DeviceTwice {
                device: ctx.device().ordinal(),
            });
        }
        if members[..i].iter().any(|(_, r)| r == rank) {
            return Err(NcclError::RankTwice { rank: *rank });
        }
    }
    ensure_loaded()?;
    // The streams first: a failure here leaves no communicator to clean up.
    let streams = members
        .iter()
        .map(|(ctx, _)| Stream::with_flags(ctx, StreamFlags::NonBlocking))
        .collect::<crate::error::Result<Vec<_>>>()?;
    let mut raws: Vec<sys::ncclComm_t> = vec![std::ptr::null_mut(); members.len()];
    let mut configs = vec![options.config(); members.len()];
    let started = in_group(members.len() > 1, || {
        for (((ctx, rank), raw), config) in members.iter().zip(&mut raws).zip(&mut configs) {
            // NCCL takes the device of the context current on this thread.
            ctx.bind()?;
            // SAFETY: NCCL is loaded; `raw` and `config` are valid pointers; the ranks
            // (checked above) fit in an int.
            check("ncclCommInitRankConfig", unsafe {
                sys::ncclCommInitRankConfig(raw, nranks as i32, id.to_raw(), *rank as i32, config)
            })?;
        }
        Ok(())
    });
    // Owned from here: a handle not handed on is aborted when dropped.
    let handles: Vec<Handle> = raws
        .iter()
        .zip(members)
        .map(|(raw, (_, rank))| Handle::new(*raw, *rank))
        .collect();
    started?;
    let refs: Vec<&Handle> = handles.iter().filter(|h| !h.raw().is_null()).collect();
    wait::until_queued(
        &refs,
        || {
            let ranks: Vec<String> = members.iter().map(|(_, r)| r.to_string()).collect();
            format!(
                "ncclCommInitRankConfig for rank(s) {} of {nranks}",
                ranks.join(", ")
            )
        },
        options.timeout,
    )?;
    Ok(handles
        .into_iter()
        .zip(members)
        .zip(streams)
        .map(|((handle, (ctx, _)), stream)| Comm {
            handle,
            ctx: (*ctx).clone(),
            stream,
            nranks,
            options,
        })
        .collect())
}

/// Splits each of `parents` with its `(color, key)`, in one NCCL group when there are several.
pub(crate) fn split_many(parents: &[&Comm], colors: &[(Option<u32>, i32)]) -> Result<Vec<Option<Comm>>> {
    if parents.len() != colors.len() {
        return Err(NcclError::SplitColors {
            communicators: parents.len(),
            colors: colors.len(),
        });
    }
    let colors_raw = colors
        .iter()
        .map(|(color, _)| match color {
            // NCCL_SPLIT_NOCOLOR.
            None => Ok(-1),
            Some(c) => i32::try_from(*c).map_err(|_| NcclError::ColorTooLarge { color: *c }),
        })
        .collect::<Result<Vec<i32>>>()?;
    let raw_parents = parents
        .iter()
        .map(|c| c.handle.get("ncclCommSplit"))
        .collect::<Result<Vec<_>>>()?;
    let streams = parents
        .iter()
        .map(|c| Stream::with_flags(&c.ctx, StreamFlags::NonBlocking))
        .collect::<crate::error::Result<Vec<_>>>()?;
    let mut raws: Vec<sys::ncclComm_t> = vec![std::ptr::null_mut(); parents.len()];
    let mut configs: Vec<sys::ncclConfig_t> = parents.iter().map(|c| c.options.config()).collect();
    let started = in_group(parents.len() > 1, || {
        for i in 0..parents.len() {
            parents[i].ctx.bind()?;
            // SAFETY: the parent is live; `raws[i]` and `configs[i]` are valid pointers.
            check("ncclCommSplit", unsafe {
                sys::ncclCommSplit(
                    raw_parents[i],
                    colors_raw[i],
                    colors[i].1,
                    &mut raws[i],
                    &mut configs[i],
                )
            })?;
        }
        Ok(())
    });
    started?;
    let timeout = parents
        .iter()
        .map(|c| c.options.timeout)
        .max()
        .unwrap_or_default();
    // In a group of nonblocking communicators the splits run on NCCL's own thread after
    // ncclGroupEnd and fill in each new communicator when they run (on 2 H200s a rank's slot
    // was still null right after the group). So wait, under the timeout, for the parents to be
    // done and for every rank given a color to have its slot.
    let parent_handles: Vec<&Handle> = parents.iter().map(|c| &c.handle).collect();
    let slot = |i: usize| {
        // SAFETY: `raws[i]` is a live, initialised pointer-sized slot that NCCL writes once;
        // the volatile read makes each poll read it again.
        unsafe { std::ptr::read_volatile(&raws[i]) }
    };
    let colored: Vec<usize> = (0..colors.len()).filter(|&i| colors[i].0.is_some()).collect();
    wait::until_ready(
        &parent_handles,
        || Ok(colored.iter().all(|&i| !slot(i).is_null())),
        || format!("ncclCommSplit of {} rank(s)", parents.len()),
        timeout,
    )?;
    // A child's rank is known once it is ready: 0 stands in until then.
    let children: Vec<Handle> = (0..raws.len()).map(|i| Handle::new(slot(i), 0)).collect();
    let waited: Vec<&Handle> = children.iter().filter(|h| !h.raw().is_null()).collect();
    wait::until_queued(
        &waited,
        || format!("the {} communicator(s) made by ncclCommSplit", waited.len()),
        timeout,
    )?;
    let mut out = Vec::with_capacity(parents.len());
    for ((child, parent), stream) in children.into_iter().zip(parents).zip(streams) {
        let raw = child.raw();
        if raw.is_null() {
            out.push(None);
            continue;
        }
        let (mut rank, mut count) = (0, 0);
        // SAFETY: `raw` is a ready communicator; both are valid out-pointers.
        unsafe {
            check("ncclCommUserRank", sys::ncclCommUserRank(raw, &mut rank))?;
            check("ncclCommCount", sys::ncclCommCount(raw, &mut count))?;
        }
        out.push(Some(Comm {
            handle: child.with_rank(usize::try_from(rank).unwrap_or(0)),
            ctx: parent.ctx.clone(),
            stream,
            nranks: usize::try_from(count).unwrap_or(0),
            options: parent.options,
        }));
    }
    Ok(out)
}

/// Runs `calls` between `ncclGroupStart` and `ncclGroupEnd` when `grouped`, else alone. The
/// group is ended whatever `calls` returns, and the first error is returned; `ncclInProgress`
/// from the group is fine (the caller waits for it).
pub(crate) fn in_group(grouped: bool, calls: impl FnOnce() -> Result<()>) -> Result<()> {
    if !grouped {
        return calls();
    }
    // SAFETY: NCCL is loaded (callers hold a communicator or checked); the group is ended below.
    check("ncclGroupStart", unsafe { sys::ncclGroupStart() })?;
    let result = calls();
    // SAFETY: ends the group started above, also when a call in it failed, which NCCL then
    // cancels as a whole.
    let end = check("ncclGroupEnd", unsafe { sys::ncclGroupEnd() });
    result?;
    end.map(|_: Status| ())
}
