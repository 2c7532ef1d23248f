//! cudarc and this crate, both ways (the guide's
//! [cudarc and its libraries](crate::guide::other_libraries#cudarc-and-its-libraries) is the
//! user's view):
//!
//! - **cudarc's libraries on this crate's memory.** [`DeviceBuffer`](crate::DeviceBuffer),
//!   [`DeviceView`](crate::DeviceView), [`DeviceViewMut`](crate::DeviceViewMut),
//!   [`PooledBuffer`](crate::tools::PooledBuffer) and
//!   [`DeviceArray`](crate::gpuarray::DeviceArray) implement cudarc's `DeviceSlice` and
//!   `DevicePtr`, and (those that are writable, through `&mut` only) `DevicePtrMut`. A
//!   wrapper's `device_ptr(&stream)` is a read of the memory on `stream`, `device_ptr_mut` a
//!   write: when `stream` is one this crate knows (the legacy default stream, or one passed
//!   through [`Stream::to_cudarc`](crate::Stream::to_cudarc) or
//!   [`Stream::from_cudarc`](crate::Stream::from_cudarc), known for as long as cudarc holds
//!   it), the use is recorded in the memory's stream record exactly as a launch of ours on
//!   that stream, and other streams' work is ordered with it on the GPU. On any other stream
//!   the record cannot name it, so the host waits: before the call for the memory's last
//!   write (a read) or every use (a write), and after the call is queued for the stream
//!   (cudarc's `SyncOnDrop`). Correct, but two host waits per call: give the library
//!   `stream.to_cudarc()?` to avoid them.
//!   `DeviceSlice::stream` answers cudarc's default stream of the device's primary context
//!   (this crate's memory has no stream of its own; the wrappers do not ask); it panics only
//!   if cudarc cannot open that context.
//! - **cudarc's memory in this crate's launches** ([`Lend`], [`LendMut`]): a `CudaSlice` lent
//!   for the length of a closure, ordered with cudarc's events at both ends.
//! - **Streams and contexts**: [`Stream::to_cudarc`](crate::Stream::to_cudarc),
//!   [`Stream::from_cudarc`](crate::Stream::from_cudarc),
//!   [`Context::cudarc_context`](crate::Context::cudarc_context),
//!   [`Context::from_cudarc`](crate::Context::from_cudarc).
//!
//! cuBLAS on this crate's memory through cudarc (the `cublas` feature: `cublas_on`, `gemm`
//! checked against the buffers, so no `unsafe`) is the room beside this one, `driver::cublas`.
//!
//! Inside: `state.rs` keeps per context cudarc's handle to it, a cudarc stream held so that
//! cudarc stays in its multi-stream mode, and the registry from cudarc stream handles to the
//! streams ordering knows; `ptr.rs` the `DevicePtr` implementations; `lend.rs` the lends.

mod lend;
pub(crate) mod ptr;
mod state;

pub use lend::{Lend, LendMut, Lent, LentMut};
