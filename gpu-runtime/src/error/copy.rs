//! [`CopyError`]: copies and memsets whose sizes, extents or alignment do not fit.

/// A copy or memset refused before the driver was asked, with the sizes involved; nothing was
/// copied or set. Wrapped by [`Error::Copy`](super::Error::Copy).
///
/// Every variant names the `operation` (e.g. `copy_from_host`, `memset_d32`) the way the
/// messages did before this enum existed, so a message reads "size mismatch in {operation}:
/// ..." or "invalid argument to {operation}: ...".
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum CopyError {
    /// A host slice of another length than the device memory it is copied to or from.
    #[error(
        "size mismatch in {operation}: the host side has {host} elements but the device buffer has {device}"
    )]
    HostDeviceLength {
        /// The operation, e.g. `copy_from_host`.
        operation: &'static str,
        /// Elements on the host side.
        host: usize,
        /// Elements in the device memory.
        device: usize,
    },
    /// A destination of another size than the source.
    #[error("size mismatch in {operation}: the destination holds {dst} {unit} but the source holds {src}")]
    DestinationSource {
        /// The operation, e.g. `memcpy_dtod`.
        operation: &'static str,
        /// What the destination holds, in `unit`s.
        dst: usize,
        /// What the source holds, in `unit`s.
        src: usize,
        /// `elements` or `bytes`.
        unit: &'static str,
    },
    /// A host slice of another length than the rows of a pitched buffer.
    #[error("size mismatch in {operation}: the host side has {host} elements but {rows} rows of {row_elements} need {}", .rows.saturating_mul(*.row_elements))]
    PitchedHostLength {
        /// `PitchedBuffer::copy_from_host` or `PitchedBuffer::copy_to_host`.
        operation: &'static str,
        /// Elements on the host side.
        host: usize,
        /// Rows of the buffer.
        rows: usize,
        /// Elements per row.
        row_elements: usize,
    },
    /// Host data of another size than the module global it is copied to or from.
    #[error("size mismatch in {operation}: the global `{name}` has {global_bytes} bytes but the host data has {host_bytes} ({len} elements of {element_bytes} bytes)")]
    GlobalSize {
        /// The operation, e.g. `Global::write`.
        operation: &'static str,
        /// The global's name.
        name: String,
        /// The global's size.
        global_bytes: usize,
        /// The host data's size.
        host_bytes: usize,
        /// Host elements.
        len: usize,
        /// Bytes per host element.
        element_bytes: usize,
    },
    /// A typed global whose Rust type has another size than the device variable.
    #[error("size mismatch in a typed global: the device variable `{name}` has {global_bytes} bytes but its Rust type `{rust_type}` has {rust_bytes}")]
    GlobalType {
        /// The device variable's name.
        name: String,
        /// The device variable's size.
        global_bytes: usize,
        /// The Rust type asked for.
        rust_type: &'static str,
        /// Its size.
        rust_bytes: usize,
    },
    /// A memset of more values than the memory holds.
    #[error("size mismatch in {operation}: {count} values of {unit} bytes ({} bytes) do not fit in {bytes} bytes of device memory", .count.saturating_mul(*.unit))]
    MemsetTooLarge {
        /// The operation, e.g. `memset_d32`.
        operation: &'static str,
        /// Values to set.
        count: usize,
        /// Bytes per value (1, 2 or 4).
        unit: usize,
        /// Bytes the memory holds.
        bytes: usize,
    },
    /// A memset whose memory does not start at a multiple of the value's size.
    #[error("invalid argument to {operation}: the address {address:#x} is not aligned to {unit} bytes")]
    MemsetMisaligned {
        /// The operation.
        operation: &'static str,
        /// The memory's device address.
        address: u64,
        /// Bytes per value.
        unit: usize,
    },
    /// A 2D memset whose rows are wider than its pitch.
    #[error("invalid argument to {operation}: a row of {width} values of {unit} bytes ({} bytes) is wider than the pitch of {pitch} bytes", .width.saturating_mul(*.unit))]
    RowWiderThanPitch {
        /// The operation, e.g. `memset_d2d32`.
        operation: &'static str,
        /// Values per row.
        width: usize,
        /// Bytes per value.
        unit: usize,
        /// Bytes from one row to the next.
        pitch: usize,
    },
    /// A 2D memset whose rows reach past the memory.
    #[error("size mismatch in {operation}: {height} rows of {row_bytes} bytes, {pitch} bytes apart, need {need} bytes but the device memory holds {bytes}")]
    Memset2dTooLarge {
        /// The operation.
        operation: &'static str,
        /// Rows.
        height: usize,
        /// Bytes per row.
        row_bytes: usize,
        /// Bytes from one row to the next.
        pitch: usize,
        /// Bytes the rows reach (saturated at `usize::MAX`).
        need: usize,
        /// Bytes the memory holds.
        bytes: usize,
    },
    /// A 2D memset whose address or pitch is not a multiple of the value's size.
    #[error("invalid argument to {operation}: the address {address:#x} and the pitch {pitch} must be multiples of {unit} bytes")]
    Memset2dMisaligned {
        /// The operation.
        operation: &'static str,
        /// The memory's device address.
        address: u64,
        /// Bytes from one row to the next.
        pitch: usize,
        /// Bytes per value.
        unit: usize,
    },
    /// A 2D or 3D copy (`Memcpy2D`, `Memcpy3D`) without a source or a destination.
    #[error("invalid argument to {operation}: no {which} was given")]
    EndMissing {
        /// The operation, e.g. `Memcpy2D::call`.
        operation: &'static str,
        /// `source` or `destination`.
        which: &'static str,
    },
    /// A 2D or 3D copy between two host ends, which the driver cannot order.
    #[error(
        "invalid argument to {operation}: both ends are host memory; copy the slices on the host instead"
    )]
    BothEndsHost {
        /// The operation.
        operation: &'static str,
    },
    /// A 2D or 3D copy whose rows are wider than one end's pitch.
    #[error("size mismatch in {operation}: the {which}'s rows are {pitch} bytes apart but the copy reads bytes {start}..{end} of each row")]
    RowsOverlap {
        /// The operation.
        operation: &'static str,
        /// `source` or `destination`.
        which: &'static str,
        /// That end's pitch in bytes.
        pitch: usize,
        /// The first byte of each row the copy reads.
        start: usize,
        /// One past the last.
        end: usize,
    },
    /// A 3D copy that covers more rows than one end's slices have.
    #[error("size mismatch in {operation}: the {which} has {rows} rows per slice but the copy covers rows {start}..{end}")]
    RowsPerSlice {
        /// The operation.
        operation: &'static str,
        /// `source` or `destination`.
        which: &'static str,
        /// Rows per slice of that end.
        rows: usize,
        /// The first row the copy covers.
        start: usize,
        /// One past the last.
        end: usize,
    },
    /// A 2D or 3D copy that reaches past the end of linear (host or device) memory.
    #[error("size mismatch in {operation}: the copy of {depth} x {height} rows of {width_bytes} bytes at ({}, {}, {}) with a pitch of {pitch} bytes reaches byte {need} but the {which} holds {bytes} bytes", .origin.0, .origin.1, .origin.2)]
    EndTooSmall {
        /// The operation.
        operation: &'static str,
        /// `source` or `destination`.
        which: &'static str,
        /// Slices copied.
        depth: usize,
        /// Rows per slice copied.
        height: usize,
        /// Bytes per row copied.
        width_bytes: usize,
        /// Where the copy starts in that end: byte, row, slice.
        origin: (usize, usize, usize),
        /// That end's pitch in bytes.
        pitch: usize,
        /// Bytes the copy reaches (saturated at `usize::MAX`).
        need: usize,
        /// Bytes that end holds.
        bytes: usize,
    },
    /// A 2D or 3D copy that does not fit a CUDA array end.
    #[error("size mismatch in {operation}: the copy of {} bytes x {} rows x {} slices at ({}, {}, {}) does not fit the {which} array of {} bytes x {} rows x {} slices", .extent.0, .extent.1, .extent.2, .origin.0, .origin.1, .origin.2, .array.0, .array.1, .array.2)]
    ArrayEndTooSmall {
        /// The operation.
        operation: &'static str,
        /// `source` or `destination`.
        which: &'static str,
        /// The copy's extent: bytes per row, rows, slices.
        extent: (usize, usize, usize),
        /// Where the copy starts in the array: byte, row, slice.
        origin: (usize, usize, usize),
        /// The array's extent: bytes per row, rows, slices.
        array: (usize, usize, usize),
    },
    /// Host data of another length than a CUDA array holds.
    #[error("size mismatch in {operation}: the other side has {len} elements but the {} x {} x {} array has {array_len}", .extent.0, .extent.1, .extent.2)]
    ArrayLength {
        /// The operation, e.g. `CudaArray::copy_from_host`.
        operation: &'static str,
        /// Elements on the other side.
        len: usize,
        /// The array's width, height and depth (a missing axis counts 1).
        extent: (usize, usize, usize),
        /// Elements the array holds.
        array_len: usize,
    },
    /// An `ndarray` array whose shape, read in the given order, is not the CUDA array's (the
    /// `gpuarray` feature).
    #[cfg(feature = "gpuarray")]
    #[error("size mismatch in CudaArray::copy_from_ndarray: the host array of shape {shape:?} read in {order:?} order is {} x {} x {}, the CUDA array {} x {} x {}", .host_extent.0, .host_extent.1, .host_extent.2, .array_extent.0, .array_extent.1, .array_extent.2)]
    NdarrayExtent {
        /// The host array's shape.
        shape: Vec<usize>,
        /// The order it was read in.
        order: ndarray::Order,
        /// Its width, height and depth in that order (a missing axis counts 1).
        host_extent: (usize, usize, usize),
        /// The CUDA array's width, height and depth.
        array_extent: (usize, usize, usize),
    },
    /// A device buffer of fewer elements than the shape it is read into.
    #[error("size mismatch in {operation}: shape {shape:?} holds {elements} elements but the device buffer holds {buffer}")]
    ShapeLength {
        /// The operation, e.g. `to_array`.
        operation: &'static str,
        /// The shape asked for.
        shape: Vec<usize>,
        /// Elements the shape holds.
        elements: usize,
        /// Elements the buffer holds.
        buffer: usize,
    },
    /// `ndarray` refused to make an array of the copied elements (the `gpuarray` feature).
    #[cfg(feature = "gpuarray")]
    #[error("size mismatch in {operation}: {source}")]
    Ndarray {
        /// The operation, e.g. `to_array`.
        operation: &'static str,
        /// `ndarray`'s error.
        #[source]
        source: ndarray::ShapeError,
    },
    /// A host `ndarray` array whose memory is not one run of its elements in C or Fortran
    /// order with every stride positive: a reversed axis (`s![..;-1]`, `invert_axis`), a
    /// broadcast (zero-stride) or stepped view, or permuted axes. Such memory cannot go to the
    /// driver as it is (a reversed array's `as_ptr()` is not even its lowest address), so
    /// nothing was copied, page-locked or mapped. The fix is a C-ordered copy,
    /// `array.as_standard_layout()` (`.into_owned()` where an owned array is taken); note that
    /// `to_owned()` keeps a reversed array's negative strides. An array a copy writes into is
    /// best written through a standard-layout array and `assign`ed back.
    #[error("invalid argument to {operation}: the host array of shape {shape:?} and strides {strides:?} (in elements) is not contiguous in C or Fortran order with positive strides (a reversed, broadcast, stepped or permuted view), so its memory cannot go to the driver as it is; pass `array.as_standard_layout()` (a C-ordered copy, made only when needed; `.as_standard_layout().into_owned()` where an owned array is taken; `to_owned()` keeps reversed strides), and copy into an array of standard layout and `assign` it where the copy writes the array")]
    HostArrayLayout {
        /// The operation, e.g. `Context::register_host_memory`.
        operation: &'static str,
        /// The array's shape.
        shape: Vec<usize>,
        /// The array's strides, in elements (negative for a reversed axis, 0 for a broadcast
        /// one).
        strides: Vec<isize>,
    },
    /// Memory opened from an IPC handle that holds fewer bytes than the elements asked for.
    #[error("size mismatch in IpcMemHandle::open: {len} elements of {element_bytes} bytes need {} bytes but the shared allocation holds {bytes}", .len.saturating_mul(*.element_bytes))]
    SharedAllocationTooSmall {
        /// Elements asked for.
        len: usize,
        /// Bytes per element.
        element_bytes: usize,
        /// Bytes the shared allocation holds.
        bytes: usize,
    },
}
