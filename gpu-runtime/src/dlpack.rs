//! DLPack (the `dlpack` feature): this crate's buffers and arrays handed to other libraries,
//! and theirs used here, without a copy, as `dlpark`'s versioned managed tensors
//! ([`Dlpack`], a `DLManagedTensorVersioned`).
//!
//! - **Export** by value: [`DeviceBuffer::into_dlpack`](crate::DeviceBuffer::into_dlpack) and
//!   [`DeviceArray::into_dlpack`](crate::gpuarray::DeviceArray::into_dlpack) move the buffer
//!   into the tensor; the tensor's deleter drops it, and the memory is freed stream-ordered
//!   like any buffer's. The [`ConsumerStream`] is the protocol's `stream`
//!   argument: the stream the consumer will use the memory on waits (on the GPU) for every use
//!   queued so far, so the consumer need not synchronize; and the memory's record names that
//!   stream, so the free waits for the work the consumer queued there before it called the
//!   deleter (the consumer need not wait for that work to finish first).
//! - **Export** by borrow: [`DeviceBuffer::to_dlpack`](crate::DeviceBuffer::to_dlpack) and
//!   [`DeviceArrayBase::to_dlpack`](crate::gpuarray::DeviceArrayBase::to_dlpack) lend the
//!   memory as a `READ_ONLY` tensor ([`DlpackRef`]) that cannot outlive the borrow; the
//!   consumer's stream waits for the last write queued so far, and writes and the free after
//!   the lend wait for the reads it queued before the [`DlpackRef`] was dropped.
//! - A consumer that orders itself (the protocol's `stream=-1`) is named by the `unsafe`
//!   [`ConsumerStream::unordered`]: nothing then waits for its work, so its contract is that
//!   the work has finished before the deleter is called (or the lend ends).
//! - **Import** of a tensor this crate exported is safe: [`DlpackTensor::from_dlpack`] (owning),
//!   [`DlpackTensor::from_dlpack_ref`] (borrowing: the view cannot outlive the tensor), and
//!   [`DlpackTensorMut::from_dlpack`] (writable). They keep the buffer's own record of the streams
//!   that use it, so launches on the import are ordered with everything queued before the export.
//! - **Import** of another library's tensor is `unsafe` ([`DlpackTensor::from_foreign`],
//!   [`DlpackTensorMut::from_foreign`]): the caller names the stream the producer's pending work
//!   is on ([`ProducerStream`]), and the consuming stream waits for it (`cuEventRecord` there,
//!   `cuStreamWaitEvent` here). Dropping such an import waits on the host for the work queued on
//!   it, then calls the producer's deleter (DLPack has no stream-ordered release).
//!
//! Every import checks the tensor first and refuses it with a
//! [`DlpackError`](crate::DlpackError): another device type or device, another element type,
//! strides contiguous in neither C nor Fortran order, a first element misaligned for the type,
//! or a read-only tensor imported for writing.

mod export;
mod import;
mod streams;

pub use export::{Dlpack, DlpackRef};
pub use import::{DlpackTensor, DlpackTensorMut};
pub use streams::{ConsumerStream, ForeignStream, ProducerStream};

#[cfg(test)]
mod tests;
