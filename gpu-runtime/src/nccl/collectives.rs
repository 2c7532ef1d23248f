//! The collectives and transfers of one rank, on the communicator's stream ([`Comm`]'s
//! methods) or another ([`OnStream`], from [`Comm::on`]).
//!
//! Each call checks its buffers on the host (same element type by its signature; context,
//! lengths and ranks by the call's one description in `op`, typed errors and nothing called
//! when wrong), records its uses of the memory on its stream like every launch and copy (so
//! that work on other streams waits for it and the memory outlives it), and returns once NCCL
//! has queued it: the GPU work is asynchronous, like a kernel launch. Every rank must make the
//! same calls in the same order.

use crate::driver::memory::view::{DeviceRead, DeviceView, DeviceViewMut, DeviceWrite};
use crate::driver::stream::Stream;
use crate::nccl::communicator::{Comm, OnStream};
use crate::nccl::error::Result;
use crate::nccl::op::{Kind, Op};
use crate::nccl::types::{NcclType, ReduceOp};

/// Hands `$then!` the collectives and transfers, each as its docs, its name and parameters, and
/// the `Op` constructor that describes it with its arguments after the stream (`OnStream`):
/// [`Comm`]'s methods and [`OnStream`]'s are both made from this one list.
macro_rules! collectives {
    ($then:ident) => {
        $then! {
            /// Sums (or otherwise reduces) every rank's `send` into every rank's `recv`
            /// (`ncclAllReduce`). Both hold the same number of elements, the same on every rank.
            all_reduce(send: &(impl DeviceRead<T> + ?Sized), recv: &mut (impl DeviceWrite<T> + ?Sized), op: ReduceOp)
                => read_write(Kind::AllReduce(op), send, recv);
            /// [`Comm::all_reduce`] in place: `buf` is sent and overwritten with the result.
            all_reduce_in_place(buf: &mut (impl DeviceWrite<T> + ?Sized), op: ReduceOp)
                => in_place(Kind::AllReduce(op), buf);
            /// Copies the root's `send` into every rank's `recv` (`ncclBroadcast`). The root passes
            /// `Some` (a view: `buffer.device_view()`), the others `None` (what they pass is not read).
            /// A view is one run of memory and is not checked for gaps: take it from a contiguous
            /// buffer or array (the view of an array with steps spans the elements between, which
            /// would be sent too).
            broadcast(send: Option<DeviceView<'_, T>>, recv: &mut (impl DeviceWrite<T> + ?Sized), root: usize)
                => broadcast(send, recv, root);
            /// [`Comm::broadcast`] in place: the root's `buf` is sent, the others' overwritten.
            broadcast_in_place(buf: &mut (impl DeviceWrite<T> + ?Sized), root: usize)
                => in_place(Kind::Broadcast { root }, buf);
            /// Reduces every rank's `send` into the root's `recv` (`ncclReduce`). The root passes
            /// `Some` (a view: `buffer.device_view_mut()`), the others `None` (not written). As for
            /// [`Comm::broadcast`], take the view from contiguous memory: its gaps would be written.
            reduce(send: &(impl DeviceRead<T> + ?Sized), recv: Option<DeviceViewMut<'_, T>>, op: ReduceOp, root: usize)
                => reduce(send, recv, op, root);
            /// [`Comm::reduce`] in place: every rank's `buf` is sent, and the root's overwritten.
            reduce_in_place(buf: &mut (impl DeviceWrite<T> + ?Sized), op: ReduceOp, root: usize)
                => in_place(Kind::Reduce { op, root }, buf);
            /// Gathers every rank's `send` into every rank's `recv`, in rank order (`ncclAllGather`):
            /// `recv` holds `size()` times as many elements as `send`.
            all_gather(send: &(impl DeviceRead<T> + ?Sized), recv: &mut (impl DeviceWrite<T> + ?Sized))
                => read_write(Kind::AllGather, send, recv);
            /// Reduces every rank's `send` and scatters the result: rank r receives the r-th of
            /// `size()` equal parts in `recv` (`ncclReduceScatter`), so `send` holds `size()` times as
            /// many elements as `recv`.
            reduce_scatter(send: &(impl DeviceRead<T> + ?Sized), recv: &mut (impl DeviceWrite<T> + ?Sized), op: ReduceOp)
                => read_write(Kind::ReduceScatter(op), send, recv);
            /// Sends `buf` to rank `peer`, which receives it with [`Comm::recv`] (`ncclSend`). A rank
            /// that both sends and receives, or a thread that drives several ranks, puts the pair in
            /// a [`Group`](crate::nccl::Group), or the two wait for each other forever.
            send(buf: &(impl DeviceRead<T> + ?Sized), peer: usize) => send(buf, peer);
            /// Receives into `buf` what rank `peer` sends with [`Comm::send`] (`ncclRecv`); the
            /// lengths must match. See [`Comm::send`] about groups.
            recv(buf: &mut (impl DeviceWrite<T> + ?Sized), peer: usize) => recv(buf, peer);
        }
    };
}

/// [`Comm`]'s methods of `collectives!`: each on the communicator's stream.
macro_rules! comm_methods {
    ($($(#[$doc:meta])* $name:ident($($arg:ident: $t:ty),*) => $ctor:ident($($e:expr),*);)*) => {$(
        $(#[$doc])*
        pub fn $name<T: NcclType>(&self, $($arg: $t),*) -> Result<()> {
            OnStream::from(self).$name($($arg),*)
        }
    )*};
}

/// [`OnStream`]'s methods of `collectives!`: each described by its `Op` and run.
macro_rules! on_stream_methods {
    ($($(#[$doc:meta])* $name:ident($($arg:ident: $t:ty),*) => $ctor:ident($($e:expr),*);)*) => {$(
        #[doc = concat!("[`Comm::", stringify!($name), "`] on this stream.")]
        pub fn $name<T: NcclType>(self, $($arg: $t),*) -> Result<()> {
            run(Op::$ctor(self, $($e),*))
        }
    )*};
}

impl Comm {
    /// The communicator's calls queued on `stream`, which must belong to its context. Work
    /// there and on the communicator's stream is ordered through the buffers they share.
    pub fn on<'a>(&'a self, stream: &'a Stream) -> OnStream<'a> {
        OnStream { comm: self, stream }
    }

    collectives!(comm_methods);
}

impl OnStream<'_> {
    collectives!(on_stream_methods);
}

/// Runs a call alone, comparing its count across ranks first when the options ask for it (not a
/// transfer's: only the peer knows what it expects).
fn run(op: Result<Op<'_>>) -> Result<()> {
    let op = op?;
    if !op.kind.point_to_point() {
        op.comm.verify_count(op.name(), op.count)?;
    }
    op.run()
}
