//! One NCCL call, checked and ready: what a collective method runs at once and what a
//! [`Group`](crate::nccl::Group) keeps until it runs them together.
//!
//! An op keeps only the addresses of its memory and the records of the streams that use it
//! (its constructors, in `calls`, check everything first). [`Op::order`] records the call's
//! uses on its stream, as every launch and copy does (a read of the send buffer, a write of
//! the receive buffer): work of other streams waits for it, and the memory is freed only after
//! it. It is called right before the call is handed to NCCL, and the caller returns only once
//! NCCL has queued it, so the record and the queue agree.

use std::ffi::c_void;

use cudarc::driver::sys::CUdeviceptr;
use cudarc::nccl::sys;

use crate::driver::memory::view::{DeviceView, DeviceViewMut};
use crate::driver::ordering::StreamUses;
use crate::driver::stream::Stream;
use crate::nccl::communicator::Comm;
use crate::nccl::error::Result;
use crate::nccl::result::{check, Status};
use crate::nccl::types::{DataType, ReduceOp};
use crate::nccl::wait;

/// The call.
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

/// Device memory an op uses: its address and, when the crate tracks it, its record.
#[derive(Clone, Copy)]
pub(crate) struct Mem<'a> {
    ptr: CUdeviceptr,
    uses: Option<&'a StreamUses>,
}

impl<'a> Mem<'a> {
    pub(super) fn of<T>(v: &DeviceView<'a, T>) -> Mem<'a> {
        Mem {
            ptr: v.device_ptr(),
            uses: v.uses(),
        }
    }

    pub(super) fn of_mut<T>(v: &DeviceViewMut<'a, T>) -> Mem<'a> {
        Mem {
            ptr: v.device_ptr(),
            uses: v.uses(),
        }
    }

    /// The same memory, recorded through another view (the read of an in-place call, whose
    /// write records both).
    pub(super) fn untracked(self) -> Mem<'a> {
        Mem { uses: None, ..self }
    }
}

/// One checked NCCL call on one rank.
pub(crate) struct Op<'a> {
    pub(crate) comm: &'a Comm,
    pub(crate) stream: &'a Stream,
    pub(crate) kind: Kind,
    /// Read by the call; for a broadcast's non-root ranks, none.
    pub(super) send: Option<Mem<'a>>,
    /// Written by the call; for a reduce's non-root ranks and a send, none.
    pub(super) recv: Option<Mem<'a>>,
    /// NCCL's count: per rank for all-gather (sent) and reduce-scatter (received).
    pub(crate) count: usize,
    pub(super) dtype: DataType,
}

impl<'a> Op<'a> {
    /// The NCCL function, for errors.
    pub(crate) fn name(&self) -> &'static str {
        match self.kind {
            Kind::AllReduce(_) => "ncclAllReduce",
            Kind::Broadcast { .. } => "ncclBroadcast",
            Kind::Reduce { .. } => "ncclReduce",
            Kind::AllGather => "ncclAllGather",
            Kind::ReduceScatter(_) => "ncclReduceScatter",
            Kind::Send { .. } => "ncclSend",
            Kind::Recv { .. } => "ncclRecv",
        }
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
        let result = unsafe {
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
        check(self.name(), result)
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
