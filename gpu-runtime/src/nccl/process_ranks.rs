//! [`Comms`]: every rank of a communicator in one process, one per GPU, and the collectives
//! across them, checked on the host as a whole.

use std::ops::Deref;

use crate::driver::context::core::Context;
use crate::driver::device::Device;
use crate::driver::memory::view::{DeviceRead, DeviceWrite};
use crate::nccl::check;
use crate::nccl::communicator::{Comm, OnStream};
use crate::nccl::error::{NcclError, Result};
use crate::nccl::group::Group;
use crate::nccl::id::UniqueId;
use crate::nccl::init::{init_many, split_many};
use crate::nccl::op::{Kind, Op};
use crate::nccl::options::CommOptions;
use crate::nccl::types::{NcclType, ReduceOp};

/// The ranks of one communicator that live in this process, rank r on the r-th context given
/// (what `ncclCommInitAll` makes): for one process driving several GPUs.
///
/// Dereferences to `[Comm]`: `comms[r]` is rank r, and each rank has every method of [`Comm`].
/// The methods here run one collective across all ranks at once (one NCCL group), with one
/// buffer per rank in rank order, after checking on the host that every rank's buffers have
/// the lengths the collective needs: the check [`Comm::check_counts`] makes across processes,
/// here for free. To drive each GPU from its own thread instead, take the ranks apart with
/// [`Comms::into_vec`] and move one to each thread.
///
/// ```no_run
/// use gpu_runtime::nccl::{Comms, ReduceOp};
/// # fn main() -> gpu_runtime::nccl::Result<()> {
/// let comms = Comms::all_devices()?;
/// let mut grads: Vec<_> = comms
///     .iter()
///     .map(|c| c.context().to_device(&vec![1.0f32; 1 << 20]))
///     .collect::<Result<_, _>>()?;
/// comms.all_reduce_in_place(&mut grads, ReduceOp::Sum)?;
/// assert_eq!(grads[0].to_vec()?[0], comms.len() as f32);
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct Comms {
    comms: Vec<Comm>,
}

impl Deref for Comms {
    type Target = [Comm];
    fn deref(&self) -> &[Comm] {
        &self.comms
    }
}

impl Comms {
    /// A communicator with one rank per context, rank r on `contexts[r]` (primary contexts of
    /// distinct devices), with the default [`CommOptions`].
    pub fn new(contexts: &[Context]) -> Result<Comms> {
        Comms::with_options(contexts, CommOptions::default())
    }

    /// [`Comms::new`] with `options`.
    pub fn with_options(contexts: &[Context], options: CommOptions) -> Result<Comms> {
        if contexts.is_empty() {
            return Err(NcclError::NoContext);
        }
        let id = UniqueId::new()?;
        let members: Vec<(&Context, usize)> = contexts.iter().enumerate().map(|(r, c)| (c, r)).collect();
        Ok(Comms {
            comms: init_many(&members, &id, contexts.len(), options)?,
        })
    }

    /// A communicator over every GPU of the machine, rank r on device r.
    pub fn all_devices() -> Result<Comms> {
        let contexts = (0..Device::count()?)
            .map(|i| Context::new(Device::new(i)?))
            .collect::<crate::error::Result<Vec<_>>>()?;
        Comms::new(&contexts)
    }

    /// The ranks, for a thread each.
    pub fn into_vec(self) -> Vec<Comm> {
        self.comms
    }

    /// Waits for every rank's stream (see [`Comm::synchronize`]).
    pub fn synchronize(&self) -> Result<()> {
        self.comms.iter().try_for_each(Comm::synchronize)
    }

    /// Splits every rank at once (see [`Comm::split`]): `color_key(r)` is rank r's color and
    /// key; the result has rank r's new communicator at index r.
    pub fn split(&self, mut color_key: impl FnMut(usize) -> (Option<u32>, i32)) -> Result<Vec<Option<Comm>>> {
        let parents: Vec<&Comm> = self.comms.iter().collect();
        let colors: Vec<_> = (0..parents.len()).map(&mut color_key).collect();
        split_many(&parents, &colors)
    }

    /// Checks that `bufs` holds one buffer per rank, each as long as rank 0's.
    fn uniform<T, B: DeviceRead<T>>(&self, operation: &'static str, what: &str, bufs: &[B]) -> Result<()> {
        check::per_rank(operation, what, bufs.len(), self.len())?;
        let len = |r: usize| bufs[r].device_view().len();
        for r in 1..bufs.len() {
            check::len_is(
                operation,
                &format!("rank {r}'s {what}"),
                len(r),
                len(0),
                " (as many as rank 0's)",
            )?;
        }
        Ok(())
    }

    /// Runs `op(rank r, item r)` for every rank in one group, `items` in rank order.
    fn grouped<'g, I>(
        &'g self,
        items: impl IntoIterator<Item = I>,
        mut op: impl FnMut(OnStream<'g>, I) -> Result<Op<'g>>,
    ) -> Result<()> {
        let mut g = Group::new();
        for (c, item) in self.comms.iter().zip(items) {
            g.push(op(c.into(), item))?;
        }
        g.run()
    }

    /// A collective of `kind` reading one buffer per rank (`send[r]`: rank r's, all as long)
    /// and writing another (`recv[r]`).
    fn read_write<T: NcclType, S: DeviceRead<T>, R: DeviceWrite<T>>(
        &self,
        operation: &'static str,
        kind: Kind,
        send: &[S],
        recv: &mut [R],
    ) -> Result<()> {
        self.uniform(operation, "send buffer", send)?;
        check::per_rank(operation, "receive buffers", recv.len(), self.len())?;
        self.grouped(send.iter().zip(recv), |c, (s, r)| Op::read_write(c, kind, s, r))
    }

    /// A collective of `kind` in place on one buffer per rank (`bufs[r]`: rank r's, all as long).
    fn in_place<T: NcclType, B: DeviceWrite<T>>(
        &self,
        operation: &'static str,
        kind: Kind,
        bufs: &mut [B],
    ) -> Result<()> {
        self.uniform(operation, "buffer", bufs)?;
        self.grouped(bufs, |c, b| Op::in_place(c, kind, b))
    }

    /// [`Comm::all_reduce`] on every rank: `send[r]` and `recv[r]` are rank r's.
    pub fn all_reduce<T: NcclType, S: DeviceRead<T>, R: DeviceWrite<T>>(
        &self,
        send: &[S],
        recv: &mut [R],
        op: ReduceOp,
    ) -> Result<()> {
        self.read_write("Comms::all_reduce", Kind::AllReduce(op), send, recv)
    }

    /// [`Comm::all_reduce_in_place`] on every rank.
    pub fn all_reduce_in_place<T: NcclType, B: DeviceWrite<T>>(
        &self,
        bufs: &mut [B],
        op: ReduceOp,
    ) -> Result<()> {
        self.in_place("Comms::all_reduce_in_place", Kind::AllReduce(op), bufs)
    }

    /// [`Comm::broadcast_in_place`] on every rank: `bufs[root]` is sent to the others.
    pub fn broadcast_in_place<T: NcclType, B: DeviceWrite<T>>(
        &self,
        bufs: &mut [B],
        root: usize,
    ) -> Result<()> {
        self.in_place("Comms::broadcast_in_place", Kind::Broadcast { root }, bufs)
    }

    /// [`Comm::reduce`] on every rank: the reduction of `send` lands in `recv`, which belongs
    /// to rank `root`.
    pub fn reduce<T: NcclType, S: DeviceRead<T>>(
        &self,
        send: &[S],
        recv: &mut (impl DeviceWrite<T> + ?Sized),
        op: ReduceOp,
        root: usize,
    ) -> Result<()> {
        self.uniform("Comms::reduce", "send buffer", send)?;
        check::rank_in("Comms::reduce", "root", root, self.len())?;
        let mut recv = Some(check::write("reduce", "the receive buffer", recv)?);
        self.grouped(send, |c, s| {
            let mine = if c.comm.rank() == root { recv.take() } else { None };
            Op::reduce(c, s, mine, op, root)
        })
    }

    /// [`Comm::all_gather`] on every rank.
    pub fn all_gather<T: NcclType, S: DeviceRead<T>, R: DeviceWrite<T>>(
        &self,
        send: &[S],
        recv: &mut [R],
    ) -> Result<()> {
        self.read_write("Comms::all_gather", Kind::AllGather, send, recv)
    }

    /// [`Comm::reduce_scatter`] on every rank.
    pub fn reduce_scatter<T: NcclType, S: DeviceRead<T>, R: DeviceWrite<T>>(
        &self,
        send: &[S],
        recv: &mut [R],
        op: ReduceOp,
    ) -> Result<()> {
        self.read_write("Comms::reduce_scatter", Kind::ReduceScatter(op), send, recv)
    }
}
