//! [`MemoryError`]: allocations (device, pooled, managed, aligned host) refused before the
//! driver or the allocator was asked.

/// An allocation, or a use of managed or shared memory, refused before the driver was asked;
/// nothing was allocated. Wrapped by [`Error::Memory`](super::Error::Memory).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum MemoryError {
    /// A number of elements whose size in bytes overflows `usize`.
    #[error("size mismatch in {operation}: {len} elements of {element_bytes} bytes overflow usize")]
    BytesOverflow {
        /// The operation, e.g. `DeviceBuffer::uninit`.
        operation: &'static str,
        /// Elements asked for.
        len: usize,
        /// Bytes per element.
        element_bytes: usize,
    },
    /// A shape whose size in bytes overflows what any allocation can be.
    #[error("size mismatch in {operation}: shape {shape:?} of {element_bytes}-byte elements is larger than any allocation can be")]
    ShapeTooLarge {
        /// The operation, e.g. `pagelocked_empty`.
        operation: &'static str,
        /// The shape asked for.
        shape: Vec<usize>,
        /// Bytes per element.
        element_bytes: usize,
    },
    /// An alignment for `aligned_zeros` that is not a power of two.
    #[error("size mismatch in aligned_zeros: the alignment must be a power of two, not {alignment}")]
    AlignmentNotPowerOfTwo {
        /// The alignment given.
        alignment: usize,
    },
    /// A size and alignment the host allocator cannot lay out.
    #[error("size mismatch in aligned_zeros: {bytes} bytes aligned to {align}: {source}")]
    HostLayout {
        /// Bytes asked for.
        bytes: usize,
        /// The alignment.
        align: usize,
        /// The allocator's error.
        #[source]
        source: std::alloc::LayoutError,
    },
    /// More bytes than a memory pool can hand out in one block.
    #[error("size mismatch in {operation}: {bytes} bytes is more than any pool can hold ({max} bytes)")]
    PoolBlockTooLarge {
        /// The operation, e.g. `DeviceMemoryPool::alloc`.
        operation: &'static str,
        /// Bytes asked for.
        bytes: usize,
        /// The largest block a pool hands out.
        max: usize,
    },
    /// More managed memory than the device has free (oversubscribing it can hang the
    /// process when the memory is touched).
    #[error("size mismatch in managed_empty: {bytes} bytes of managed memory asked for, but the device has only {free} bytes free")]
    ManagedMoreThanFree {
        /// Bytes asked for.
        bytes: usize,
        /// Bytes free on the device.
        free: usize,
    },
    /// Managed memory allocated attached to a single stream, which the driver does not allow.
    #[error("invalid argument to managed_empty: managed memory is allocated attached Global or Host; attach it to one stream afterwards with `ManagedArray::attach(AttachFlags::Single, Some(&stream))`")]
    ManagedSingleAtAllocation,
    /// `ManagedArray::attach(AttachFlags::Single, None)`: a single-stream attachment without
    /// the stream.
    #[error("invalid argument to ManagedArray::attach: AttachFlags::Single attaches to one stream; pass it")]
    AttachSingleWithoutStream,
    /// A range attribute asked of an empty managed array, which has no memory range.
    #[error(
        "invalid argument to ManagedArray range attributes: the array is empty, so it has no memory range"
    )]
    EmptyManagedRange,
    /// Pitched memory of an element size the driver cannot pitch.
    #[error("invalid argument to alloc_pitch: elements of {element_bytes} bytes cannot be pitched; use 1, 2, 4, 8 or 16 bytes")]
    PitchElement {
        /// Bytes per element.
        element_bytes: usize,
    },
    /// Pitched memory whose row of elements overflows `usize` in bytes.
    #[error(
        "invalid argument to alloc_pitch: a row of {width} elements of {element_bytes} bytes overflows usize"
    )]
    PitchRowOverflow {
        /// Elements per row.
        width: usize,
        /// Bytes per element.
        element_bytes: usize,
    },
    /// An IPC handle asked of an empty buffer, which has no allocation to share.
    #[error("invalid argument to DeviceBuffer::ipc_handle: an empty buffer has no allocation to share")]
    EmptyIpcBuffer,
}
