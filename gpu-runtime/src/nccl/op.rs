//! One NCCL call, checked and ready: what a collective method runs at once and what a
//! [`Group`](crate::nccl::Group) keeps until it runs them together. Every call is described here
//! once, and [`Comm`](crate::nccl::Comm)'s, [`OnStream`]'s and `Group`'s methods only build an
//! [`Op`] with its [`Kind`]:
//!
//! - the call and its parameters ([`Kind`]): its names for errors, the rank it names (a root or
//!   peer, checked against the size), the lengths its buffers must have and NCCL's count
//!   ([`Kind::count`]), and the raw `ncclX` call ([`Op::call`]);
//! - its buffers, by the constructors of [`Op`]: what it reads (the send buffer) and writes (the
//!   receive buffer), each contiguous, of the communicator's context (as its stream must be);
//!   a broadcast's send buffer and a reduce's receive buffer on the root alone.
//!
//! Every check is made on the host before anything is recorded or called; a mistake is a typed
//! error and nothing happens. An op then keeps only the addresses of its memory and the records
//! of the streams that use it. [`Op::order`] records the call's uses on its stream, as every
//! launch and copy does (a read of the send buffer, a write of the receive buffer): work of other
//! streams waits for it, and the memory is freed only after it. It is called right before the
//! call is handed to NCCL, and the caller returns only once NCCL has queued it, so the record and
//! the queue agree.

use std::ffi::c_void;

use cudarc::driver::sys::CUdeviceptr;
use cudarc::nccl::sys;

use crate::driver::memory::view::{DeviceRead, DeviceView, DeviceViewMut, DeviceWrite};
use crate::driver::ordering::StreamUses;
use crate::driver::stream::Stream;
use crate::nccl::check;
use crate::nccl::communicator::{Comm, OnStream};
use crate::nccl::error::{NcclError, Result};
use crate::nccl::result::{self, Status};
use crate::nccl::types::{DataType, NcclType, ReduceOp};
use crate::nccl::wait;

/// What errors call the buffers.
const SEND: &str = "the send buffer";
const RECV: &str = "the receive buffer";
const BUF: &str = "the buffer";

/// The call, with its parameters other than buffers.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Kind {
    AllReduce(ReduceOp),
    Broadcast { root: usize },
    Reduce { op: ReduceOp, root: usize },
    AllGather,
    ReduceScatter(ReduceOp),
    Send { peer: usize },
    Recv { peer: usize },
}

impl Kind {
    /// The method's name and the NCCL function's, for errors.
    fn names(self) -> (&'static str, &'static str) {
        match self {
            Kind::AllReduce(_) => ("all_reduce", "ncclAllReduce"),
            Kind::Broadcast { .. } => ("broadcast", "ncclBroadcast"),
            Kind::Reduce { .. } => ("reduce", "ncclReduce"),
            Kind::AllGather => ("all_gather", "ncclAllGather"),
            Kind::ReduceScatter(_) => ("reduce_scatter", "ncclReduceScatter"),
            Kind::Send { .. } => ("send", "ncclSend"),
            Kind::Recv { .. } => ("recv", "ncclRecv"),
        }
    }

    /// The rank the call names (`root` or `peer`), which must be one of the communicator's.
    fn rank(self) -> Option<(&'static str, usize)> {
        match self {
            Kind::Broadcast { root } | Kind::Reduce { root, .. } => Some(("root", root)),
            Kind::Send { peer } | Kind::Recv { peer } => Some(("peer", peer)),
            Kind::AllReduce(_) | Kind::AllGather | Kind::ReduceScatter(_) => None,
        }
    }

    /// True for a transfer to or from one peer: only the peer knows the count it expects, so
    /// it is not compared across ranks.
    pub(crate) fn point_to_point(self) -> bool {
        matches!(self, Kind::Send { .. } | Kind::Recv { .. })
    }

    /// NCCL's count for buffers of `send` and `recv` elements (`None`: no such buffer), or a
    /// typed error when their lengths do not fit the call: NCCL cannot see a buffer's length,
    /// so a short one would be overrun.
    fn count(self, send: Option<usize>, recv: Option<usize>, nranks: usize) -> Result<usize> {
        let operation = self.names().0;
        let same = |s, r, why| check::len_is(operation, RECV, r, s, why).map(|()| s);
        match (self, send, recv) {
            (Kind::AllReduce(_) | Kind::Reduce { .. }, Some(s), Some(r)) => {
                same(s, r, " (as many as the send buffer)")
            }
            (Kind::Broadcast { .. }, Some(s), Some(r)) => same(s, r, " (as many as the root's send buffer)"),
            // Each rank receives everyone's share, or sends a share for everyone.
            (Kind::AllGather, Some(s), Some(r)) => {
                check::len_is_ranks_times(operation, RECV, r, s, nranks, "sent").map(|()| s)
            }
            (Kind::ReduceScatter(_), Some(s), Some(r)) => {
                check::len_is_ranks_times(operation, SEND, s, r, nranks, "received").map(|()| r)
            }
            // One buffer (in place, a transfer, a rank other than the root): its length.
            (_, send, recv) => Ok(send.or(recv).unwrap_or(0)),
        }
    }
}

/// Device memory an op uses: its address and, when the crate tracks it, its record.
#[derive(Clone, Copy)]
struct Mem<'a> {
    ptr: CUdeviceptr,
    uses: Option<&'a StreamUses>,
}

/// One checked NCCL call on one rank.
pub(crate) struct Op<'a> {
    pub(crate) comm: &'a Comm,
    stream: &'a Stream,
    pub(crate) kind: Kind,
    /// Read by the call: the send buffer, or in NCCL's in-place form the receive buffer
    /// (untracked: its write is recorded); for a receive, none.
    send: Option<Mem<'a>>,
    /// Written by the call; for a reduce's non-root ranks and a send, none.
    recv: Option<Mem<'a>>,
    /// NCCL's count: per rank for all-gather (sent) and reduce-scatter (received).
    pub(crate) count: usize,
    dtype: DataType,
}

impl<'a> Op<'a> {
    /// A call of `kind` that reads all of `send` and writes all of `recv`: all-reduce,
    /// all-gather, reduce-scatter.
    pub(crate) fn read_write<T: NcclType>(
        on: OnStream<'a>,
        kind: Kind,
        send: &'a (impl DeviceRead<T> + ?Sized),
        recv: &'a mut (impl DeviceWrite<T> + ?Sized),
    ) -> Result<Op<'a>> {
        let operation = kind.names().0;
        let send = check::read(operation, SEND, send)?;
        let recv = check::write(operation, RECV, recv)?;
        Op::new(on, kind, Some(&send), Some((&recv, RECV)))
    }

    /// A call of `kind` (all-reduce, broadcast, reduce) in place: `buf` is sent and overwritten
    /// with the result. A reduce writes it on the root only, but it is recorded as a write on
    /// every rank: the stricter order.
    pub(crate) fn in_place<T: NcclType>(
        on: OnStream<'a>,
        kind: Kind,
        buf: &'a mut (impl DeviceWrite<T> + ?Sized),
    ) -> Result<Op<'a>> {
        let operation = match kind {
            Kind::AllReduce(_) => "all_reduce_in_place",
            Kind::Broadcast { .. } => "broadcast_in_place",
            Kind::Reduce { .. } => "reduce_in_place",
            // No other call has an in-place form.
            _ => kind.names().0,
        };
        let buf = check::write(operation, BUF, buf)?;
        Op::new(on, kind, None, Some((&buf, BUF)))
    }

    /// A broadcast from `root`: `send` is read on the root only (and required there); the
    /// other ranks' `send` is not used.
    pub(crate) fn broadcast<T: NcclType>(
        on: OnStream<'a>,
        send: Option<DeviceView<'a, T>>,
        recv: &'a mut (impl DeviceWrite<T> + ?Sized),
        root: usize,
    ) -> Result<Op<'a>> {
        let recv = check::write("broadcast", RECV, recv)?;
        let send = on_root(on, root, send, "broadcast", "a send buffer")?;
        Op::new(on, Kind::Broadcast { root }, send.as_ref(), Some((&recv, RECV)))
    }

    /// A reduce to `root`: `recv` is written on the root only (and required there); the other
    /// ranks' `recv` is not used, and NCCL is given none.
    pub(crate) fn reduce<T: NcclType>(
        on: OnStream<'a>,
        send: &'a (impl DeviceRead<T> + ?Sized),
        recv: Option<DeviceViewMut<'a, T>>,
        op: ReduceOp,
        root: usize,
    ) -> Result<Op<'a>> {
        let send = check::read("reduce", SEND, send)?;
        let recv = on_root(on, root, recv, "reduce", "a receive buffer")?;
        Op::new(
            on,
            Kind::Reduce { op, root },
            Some(&send),
            recv.as_ref().map(|r| (r, RECV)),
        )
    }

    /// A send of `buf` to `peer`.
    pub(crate) fn send<T: NcclType>(
        on: OnStream<'a>,
        buf: &'a (impl DeviceRead<T> + ?Sized),
        peer: usize,
    ) -> Result<Op<'a>> {
        let buf = check::read("send", BUF, buf)?;
        Op::new(on, Kind::Send { peer }, Some(&buf), None)
    }

    /// A receive into `buf` from `peer`.
    pub(crate) fn recv<T: NcclType>(
        on: OnStream<'a>,
        buf: &'a mut (impl DeviceWrite<T> + ?Sized),
        peer: usize,
    ) -> Result<Op<'a>> {
        let buf = check::write("recv", BUF, buf)?;
        Op::new(on, Kind::Recv { peer }, None, Some((&buf, RECV)))
    }

    /// The op of `kind` on contiguous `send` and `recv` (with what errors call it), after the
    /// checks every op makes: the rank it names, the lengths, and the contexts.
    fn new<T: NcclType>(
        on: OnStream<'a>,
        kind: Kind,
        send: Option<&DeviceView<'a, T>>,
        recv: Option<(&DeviceViewMut<'a, T>, &'static str)>,
    ) -> Result<Op<'a>> {
        let OnStream { comm, stream } = on;
        if let Some((what, rank)) = kind.rank() {
            check::rank_in(kind.names().0, what, rank, comm.nranks)?;
        }
        let count = kind.count(send.map(DeviceView::len), recv.map(|(v, _)| v.len()), comm.nranks)?;
        check::same_context("the stream", stream.context(), &comm.ctx)?;
        if let Some(v) = send {
            check::same_context(SEND, v.context(), &comm.ctx)?;
        }
        if let Some((v, what)) = recv {
            check::same_context(what, v.context(), &comm.ctx)?;
        }
        let recv = recv.map(|(v, _)| Mem {
            ptr: v.device_ptr(),
            uses: v.uses(),
        });
        let send = match send {
            Some(v) => Some(Mem {
                ptr: v.device_ptr(),
                uses: v.uses(),
            }),
            // NCCL's in-place form (in place, and a broadcast's other ranks): the call sends
            // from its receive buffer, recorded through it alone, whose write orders the read too.
            None if !kind.point_to_point() => recv.map(|m| Mem { uses: None, ..m }),
            None => None,
        };
        Ok(Op {
            comm,
            stream,
            kind,
            send,
            recv,
            count,
            dtype: T::DATA_TYPE,
        })
    }

    /// The NCCL function, for errors.
    pub(crate) fn name(&self) -> &'static str {
        self.kind.names().1
    }

    /// Records the call's uses of its memory on its stream (see the module docs).
    pub(crate) fn order(&self) -> Result<()> {
        let s = self.stream.inner();
        if let Some(u) = self.send.and_then(|m| m.uses) {
            u.read_on(s)?;
        }
        if let Some(u) = self.recv.and_then(|m| m.uses) {
            u.write_on(s)?;
        }
        Ok(())
    }

    /// Hands the call to NCCL; `order` must have been called.
    pub(crate) fn call(&self) -> Result<Status> {
        let raw = self.comm.handle.get(self.name())?;
        self.comm.ctx.bind()?;
        let send = self.send.map_or(std::ptr::null(), |m| m.ptr as *const c_void);
        let recv = self.recv.map_or(std::ptr::null_mut(), |m| m.ptr as *mut c_void);
        let (count, dtype, stream) = (
            self.count,
            self.dtype.raw(),
            self.stream.raw() as sys::cudaStream_t,
        );
        // Ranks were checked against the communicator's size, which fits in an int.
        let int = |r: usize| r as i32;
        // SAFETY: the buffers belong to the communicator's context and hold what NCCL reads and
        // writes (checked at construction, and borrowed by the caller until the call is queued;
        // their records keep them allocated until it has run); the stream is of that context.
        let code = unsafe {
            match self.kind {
                Kind::AllReduce(op) => sys::ncclAllReduce(send, recv, count, dtype, op.raw(), raw, stream),
                Kind::Broadcast { root } => {
                    sys::ncclBroadcast(send, recv, count, dtype, int(root), raw, stream)
                }
                Kind::Reduce { op, root } => {
                    sys::ncclReduce(send, recv, count, dtype, op.raw(), int(root), raw, stream)
                }
                Kind::AllGather => sys::ncclAllGather(send, recv, count, dtype, raw, stream),
                Kind::ReduceScatter(op) => {
                    sys::ncclReduceScatter(send, recv, count, dtype, op.raw(), raw, stream)
                }
                Kind::Send { peer } => sys::ncclSend(send, count, dtype, int(peer), raw, stream),
                Kind::Recv { peer } => sys::ncclRecv(recv, count, dtype, int(peer), raw, stream),
            }
        };
        result::check(self.name(), code)
    }

    /// Runs the op alone: records its uses, calls NCCL, and waits (at most the communicator's
    /// timeout) until NCCL has queued it.
    pub(crate) fn run(self) -> Result<()> {
        self.comm.handle.get(self.name())?;
        self.order()?;
        if self.call()? == Status::InProgress {
            let comm = self.comm;
            wait::until_queued(
                &[&comm.handle],
                || format!("{} on rank {} of {}", self.name(), comm.rank(), comm.nranks),
                comm.options.timeout,
            )?;
        }
        Ok(())
    }
}

/// The buffer that only the root passes (`what`: a broadcast's send buffer, a reduce's receive
/// buffer): required on the root, [`NcclError::RootBufferMissing`] there without it, and
/// dropped on the other ranks, where it is not used.
fn on_root<B>(
    on: OnStream<'_>,
    root: usize,
    buf: Option<B>,
    operation: &'static str,
    what: &'static str,
) -> Result<Option<B>> {
    match buf {
        _ if on.comm.rank() != root => Ok(None),
        Some(b) => Ok(Some(b)),
        None => Err(NcclError::RootBufferMissing {
            operation,
            what,
            root,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lengths_fit_the_call() {
        let all_gather = |s, r, n| Kind::AllGather.count(Some(s), Some(r), n);
        let reduce_scatter = |s, r, n| Kind::ReduceScatter(ReduceOp::Sum).count(Some(s), Some(r), n);
        // All-gather and reduce-scatter count per rank.
        assert_eq!(all_gather(4, 8, 2).unwrap(), 4);
        assert_eq!(reduce_scatter(12, 4, 3).unwrap(), 4);
        let e = all_gather(4, 4, 2).unwrap_err();
        assert_eq!(
            e.to_string(),
            "size mismatch in all_gather: the receive buffer holds 4 elements but must hold 8 (2 ranks times the 4 elements sent)"
        );
        let e = reduce_scatter(12, 3, 3).unwrap_err();
        assert!(
            matches!(&e, NcclError::BufferLength { what, got: 12, want: 9, .. } if what == "the send buffer"),
            "{e}"
        );
        // Overflow is an error, not a wrap or a panic.
        let e = all_gather(usize::MAX, 0, 2).unwrap_err();
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
        // The others receive what they send; the root's receive buffer is what is checked.
        let e = Kind::Broadcast { root: 0 }
            .count(Some(3), Some(2), 2)
            .unwrap_err();
        assert!(
            matches!(&e, NcclError::BufferLength { operation: "broadcast", what, got: 2, want: 3, why }
                if what == RECV && why == " (as many as the root's send buffer)"),
            "{e}"
        );
        let all_reduce = Kind::AllReduce(ReduceOp::Max);
        assert_eq!(all_reduce.count(Some(5), Some(5), 4).unwrap(), 5);
        assert!(all_reduce.count(Some(5), Some(6), 4).is_err());
        // One buffer: its length, whatever the call.
        assert_eq!(all_reduce.count(None, Some(7), 4).unwrap(), 7);
        assert_eq!(Kind::Send { peer: 1 }.count(Some(9), None, 4).unwrap(), 9);
        assert!(!Kind::AllGather.point_to_point() && Kind::Recv { peer: 0 }.point_to_point());
    }
}
