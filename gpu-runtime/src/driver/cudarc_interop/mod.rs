//! cudarc and this crate, both ways: cudarc's streams as [`Stream`]s and ours handed to cudarc,
//! cudarc's libraries (cuBLAS, cuRAND, cuFFT, NCCL, ...) on this crate's memory, and cudarc's
//! `CudaSlice`s in this crate's launches and copies. The crate guide's section "cudarc and its
//! libraries" is the user's view; this module keeps:
//!
//! - per context, cudarc's handle to it ([`Context::cudarc_context`]), a cudarc stream held so
//!   that cudarc stays in its multi-stream mode (where it orders its own slices with events),
//!   and a registry from cudarc's stream handles to the streams ordering knows (filled by
//!   [`Stream::to_cudarc`] and [`Stream::from_cudarc`]), so that a cudarc library call on
//!   one of them is recorded in our memory's stream record like any launch of ours;
//! - `ptr.rs`: cudarc's `DevicePtr` / `DevicePtrMut` for this crate's memory;
//! - `lend.rs`: cudarc's memory lent to this crate's launches for the length of a closure.

#[cfg(feature = "cublas")]
mod blas;
mod lend;
pub(crate) mod ptr;
mod state;

#[cfg(feature = "cublas")]
pub use blas::{cublas_on, gemm};
pub use lend::{Lend, LendMut, Lent, LentMut};
