//! The constructor of each NCCL call: typed views in, so that send and receive buffers have
//! one element type; contexts, lengths and ranks checked on the host (typed errors, and
//! nothing called, when wrong); an [`Op`] out, which keeps what NCCL needs.

use crate::driver::memory::view::{DeviceView, DeviceViewMut};
use crate::driver::stream::Stream;
use crate::nccl::check;
use crate::nccl::communicator::Comm;
use crate::nccl::error::{NcclError, Result};
use crate::nccl::op::{Kind, Mem, Op};
use crate::nccl::types::{NcclType, ReduceOp};

impl<'a> Op<'a> {
    /// An op of `kind` on `stream`, after the checks every op makes.
    pub(super) fn new<T: NcclType>(
        comm: &'a Comm,
        stream: &'a Stream,
        kind: Kind,
        send: Option<(&DeviceView<'a, T>, &'static str)>,
        recv: Option<(&DeviceViewMut<'a, T>, &'static str)>,
        count: usize,
    ) -> Result<Op<'a>> {
        check::same_context("the stream", stream.context(), &comm.ctx)?;
        if let Some((v, what)) = send {
            check::same_context(what, v.context(), &comm.ctx)?;
        }
        if let Some((v, what)) = recv {
            check::same_context(what, v.context(), &comm.ctx)?;
        }
        Ok(Op {
            comm,
            stream,
            kind,
            send: send.map(|(v, _)| Mem::of(v)),
            recv: recv.map(|(v, _)| Mem::of_mut(v)),
            count,
            dtype: T::DATA_TYPE,
        })
    }

    pub(crate) fn all_reduce<T: NcclType>(
        comm: &'a Comm,
        stream: &'a Stream,
        send: DeviceView<'a, T>,
        recv: DeviceViewMut<'a, T>,
        op: ReduceOp,
    ) -> Result<Op<'a>> {
        check::len_is(
            "all_reduce",
            "the receive buffer",
            recv.len(),
            send.len(),
            " (as many as the send buffer)",
        )?;
        let (s, r) = (
            Some((&send, "the send buffer")),
            Some((&recv, "the receive buffer")),
        );
        Op::new(comm, stream, Kind::AllReduce(op), s, r, send.len())
    }

    pub(crate) fn all_reduce_in_place<T: NcclType>(
        comm: &'a Comm,
        stream: &'a Stream,
        buf: DeviceViewMut<'a, T>,
        op: ReduceOp,
    ) -> Result<Op<'a>> {
        Op::new(
            comm,
            stream,
            Kind::AllReduce(op),
            None,
            Some((&buf, "the buffer")),
            buf.len(),
        )
        .map(Op::in_place)
    }

    /// A broadcast from `root`: `send` is read on the root only (and required there).
    pub(crate) fn broadcast<T: NcclType>(
        comm: &'a Comm,
        stream: &'a Stream,
        send: Option<DeviceView<'a, T>>,
        recv: DeviceViewMut<'a, T>,
        root: usize,
    ) -> Result<Op<'a>> {
        check::rank_in("broadcast", "root", root, comm.nranks)?;
        let is_root = comm.rank() == root;
        let send = match send {
            Some(s) if is_root => {
                check::len_is(
                    "broadcast",
                    "the receive buffer",
                    recv.len(),
                    s.len(),
                    " (as many as the root's send buffer)",
                )?;
                Some(s)
            }
            // Other ranks' send buffers are not read; NCCL is given the receive buffer.
            Some(_) => None,
            None if is_root => return Err(missing("broadcast", "a send buffer", root)),
            None => None,
        };
        let op = Op::new(
            comm,
            stream,
            Kind::Broadcast { root },
            send.as_ref().map(|s| (s, "the send buffer")),
            Some((&recv, "the receive buffer")),
            recv.len(),
        )?;
        Ok(if send.is_some() { op } else { op.in_place() })
    }

    pub(crate) fn broadcast_in_place<T: NcclType>(
        comm: &'a Comm,
        stream: &'a Stream,
        buf: DeviceViewMut<'a, T>,
        root: usize,
    ) -> Result<Op<'a>> {
        check::rank_in("broadcast", "root", root, comm.nranks)?;
        Op::new(
            comm,
            stream,
            Kind::Broadcast { root },
            None,
            Some((&buf, "the buffer")),
            buf.len(),
        )
        .map(Op::in_place)
    }

    /// A reduce to `root`: `recv` is written on the root only (and required there).
    pub(crate) fn reduce<T: NcclType>(
        comm: &'a Comm,
        stream: &'a Stream,
        send: DeviceView<'a, T>,
        recv: Option<DeviceViewMut<'a, T>>,
        op: ReduceOp,
        root: usize,
    ) -> Result<Op<'a>> {
        check::rank_in("reduce", "root", root, comm.nranks)?;
        let is_root = comm.rank() == root;
        let recv = match recv {
            Some(r) if is_root => {
                check::len_is(
                    "reduce",
                    "the receive buffer",
                    r.len(),
                    send.len(),
                    " (as many as the send buffer)",
                )?;
                Some(r)
            }
            // Other ranks' receive buffers are not written: NCCL is given none.
            Some(_) => None,
            None if is_root => return Err(missing("reduce", "a receive buffer", root)),
            None => None,
        };
        Op::new(
            comm,
            stream,
            Kind::Reduce { op, root },
            Some((&send, "the send buffer")),
            recv.as_ref().map(|r| (r, "the receive buffer")),
            send.len(),
        )
    }

    pub(crate) fn reduce_in_place<T: NcclType>(
        comm: &'a Comm,
        stream: &'a Stream,
        buf: DeviceViewMut<'a, T>,
        op: ReduceOp,
        root: usize,
    ) -> Result<Op<'a>> {
        check::rank_in("reduce", "root", root, comm.nranks)?;
        // Written on the root only, but recorded as a write everywhere: the stricter order.
        Op::new(
            comm,
            stream,
            Kind::Reduce { op, root },
            None,
            Some((&buf, "the buffer")),
            buf.len(),
        )
        .map(Op::in_place)
    }

    pub(crate) fn all_gather<T: NcclType>(
        comm: &'a Comm,
        stream: &'a Stream,
        send: DeviceView<'a, T>,
        recv: DeviceViewMut<'a, T>,
    ) -> Result<Op<'a>> {
        check::all_gather_lens("all_gather", send.len(), recv.len(), comm.nranks)?;
        let (s, r) = (
            Some((&send, "the send buffer")),
            Some((&recv, "the receive buffer")),
        );
        Op::new(comm, stream, Kind::AllGather, s, r, send.len())
    }

    pub(crate) fn reduce_scatter<T: NcclType>(
        comm: &'a Comm,
        stream: &'a Stream,
        send: DeviceView<'a, T>,
        recv: DeviceViewMut<'a, T>,
        op: ReduceOp,
    ) -> Result<Op<'a>> {
        check::reduce_scatter_lens("reduce_scatter", send.len(), recv.len(), comm.nranks)?;
        let (s, r) = (
            Some((&send, "the send buffer")),
            Some((&recv, "the receive buffer")),
        );
        Op::new(comm, stream, Kind::ReduceScatter(op), s, r, recv.len())
    }

    pub(crate) fn send<T: NcclType>(
        comm: &'a Comm,
        stream: &'a Stream,
        buf: DeviceView<'a, T>,
        peer: usize,
    ) -> Result<Op<'a>> {
        check::rank_in("send", "peer", peer, comm.nranks)?;
        Op::new(
            comm,
            stream,
            Kind::Send { peer },
            Some((&buf, "the send buffer")),
            None,
            buf.len(),
        )
    }

    pub(crate) fn recv<T: NcclType>(
        comm: &'a Comm,
        stream: &'a Stream,
        buf: DeviceViewMut<'a, T>,
        peer: usize,
    ) -> Result<Op<'a>> {
        check::rank_in("recv", "peer", peer, comm.nranks)?;
        Op::new(
            comm,
            stream,
            Kind::Recv { peer },
            None,
            Some((&buf, "the receive buffer")),
            buf.len(),
        )
    }

    /// Sends from the receive buffer: NCCL's in-place form, recorded as the write alone.
    fn in_place(mut self) -> Op<'a> {
        self.send = self.recv.map(Mem::untracked);
        self
    }
}

/// The error of a root that passed no buffer where it needs one.
fn missing(operation: &'static str, what: &'static str, root: usize) -> NcclError {
    NcclError::RootBufferMissing {
        operation,
        what,
        root,
    }
}
