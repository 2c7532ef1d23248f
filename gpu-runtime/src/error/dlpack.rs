//! [`DlpackError`]: a DLPack tensor refused at the border (the `dlpack` feature).

/// Why a DLPack tensor was refused (the `dlpack` feature): each variant names the field of the
/// tensor that does not fit, and what was expected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DlpackError {
    /// The tensor is not in CUDA device memory (`kDLCUDA`): host, managed or another vendor's
    /// memory is not imported.
    #[error("the DLPack tensor is on device type {device_type} (DLDeviceType), but only CUDA device memory (kDLCUDA = 2) is imported")]
    DeviceType {
        /// The tensor's `device.device_type`.
        device_type: u32,
    },
    /// The tensor is on another CUDA device than the context that would use it.
    #[error("the DLPack tensor is on CUDA device {device_id}, but the context that would use it is on device {expected}; import it with a stream of a context of device {device_id}")]
    Device {
        /// The tensor's `device.device_id`.
        device_id: i32,
        /// The ordinal of the context's device.
        expected: i32,
    },
    /// The tensor's element type is not the Rust type it is imported as.
    #[error("the DLPack tensor holds elements of type code {code}, {bits} bits, {lanes} lane(s), but is imported as `{rust_type}` (code {expected_code}, {expected_bits} bits, 1 lane)")]
    Dtype {
        /// The tensor's `dtype.code`.
        code: u8,
        /// The tensor's `dtype.bits`.
        bits: u8,
        /// The tensor's `dtype.lanes`.
        lanes: u16,
        /// The Rust element type asked for.
        rust_type: &'static str,
        /// The DLPack code of `rust_type`.
        expected_code: u8,
        /// The DLPack bits of `rust_type`.
        expected_bits: u8,
    },
    /// The tensor's elements do not lie one after another in C or Fortran order, which a
    /// contiguous buffer needs (its gaps may be someone else's data).
    #[error("the DLPack tensor of shape {shape:?} has strides {strides:?} (in elements), contiguous in neither C nor Fortran order; make it contiguous before exporting it")]
    Strides {
        /// The tensor's shape.
        shape: Vec<i64>,
        /// The tensor's strides in elements.
        strides: Vec<i64>,
    },
    /// The tensor's first element (`data + byte_offset`) is not aligned for the element type.
    #[error("the DLPack tensor's first element is at {address:#x}, which is not a multiple of {align}, the alignment of `{rust_type}`")]
    Misaligned {
        /// `data + byte_offset`.
        address: u64,
        /// The alignment the element type needs.
        align: usize,
        /// The Rust element type.
        rust_type: &'static str,
    },
    /// The tensor is flagged `READ_ONLY` but was imported for writing.
    #[error("the DLPack tensor is read-only (DLPACK_FLAG_BITMASK_READ_ONLY), but was imported for writing; import it read-only (DlpackTensor)")]
    ReadOnly,
    /// A safe import was given a tensor this crate did not export, whose producer's pending
    /// work and lifetime it cannot know.
    #[error("the DLPack tensor was not exported by gpu-runtime, so its producer's pending work is unknown here; import it with the unsafe `from_foreign`, naming the producer's stream")]
    NotExportedHere,
    /// An export's consumer stream is `CU_STREAM_PER_THREAD`, which names the default stream
    /// of whichever thread uses the handle: the end of the export (the tensor's deleter, or
    /// the end of a lend), which may run on another thread, could not name the consumer's.
    #[error("the consumer stream of a DLPack export is CU_STREAM_PER_THREAD, which names another stream on each thread, so the end of the export (its deleter, maybe on another thread) could not wait for the consumer's work; name the stream itself: a stream of gpu-runtime, a cudarc stream, or another handle")]
    PerThreadConsumer,
    /// The tensor's description is malformed (a negative or overflowing shape, a null data
    /// pointer with elements, an unsupported version), or cannot be described in DLPack.
    #[error("invalid DLPack tensor: {detail}")]
    Invalid {
        /// What is wrong.
        detail: String,
    },
}
