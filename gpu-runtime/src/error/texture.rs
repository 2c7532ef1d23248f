//! [`TextureError`]: CUDA arrays, textures and surfaces that the driver would refuse.

/// A CUDA array, texture or surface refused before the driver was asked; nothing was created
/// or copied. Wrapped by [`Error::Texture`](super::Error::Texture).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TextureError {
    /// An array element of another number of channels than 1, 2 or 4.
    #[error("invalid argument to {operation}: an element has 1, 2 or 4 channels, not {channels}")]
    Channels {
        /// The operation, e.g. `CudaArray::new`.
        operation: &'static str,
        /// The channels given.
        channels: u32,
    },
    /// A CUDA array of width 0.
    #[error("invalid argument to CudaArray::new: the width must be at least 1")]
    ZeroWidth,
    /// A CUDA array with a depth but no height that is not a layered 1D array.
    #[error("invalid argument to CudaArray::new: an array with depth {depth} needs a height (only layered 1D arrays skip it)")]
    DepthWithoutHeight {
        /// The depth given.
        depth: usize,
    },
    /// A cube map whose faces are not square or whose depth is not 6 (a multiple of 6 when
    /// layered).
    #[error("invalid argument to CudaArray::new: a cube map has square faces and a depth of {}, but this one is {width} x {height} x {depth}", if *.layered { "a multiple of 6" } else { "6" })]
    CubeMap {
        /// Whether the array is layered.
        layered: bool,
        /// The width given.
        width: usize,
        /// The height given.
        height: usize,
        /// The depth given.
        depth: usize,
    },
    /// Host elements of another format or channel count than the array's.
    #[error("invalid argument to {operation}: the array holds {array_format} x {array_channels} channel elements but the other side has {rust_type} ({rust_format} x {rust_channels})")]
    ElementFormat {
        /// The operation, e.g. `CudaArray::copy_from_host`.
        operation: &'static str,
        /// The array's element format, e.g. `F32`.
        array_format: String,
        /// The array's channels.
        array_channels: u32,
        /// The Rust element type of the other side.
        rust_type: &'static str,
        /// Its format.
        rust_format: String,
        /// Its channels.
        rust_channels: u32,
    },
    /// An `ndarray` shape of no axis or more than three for a CUDA array.
    #[error("invalid argument to {operation}: a CUDA array has 1 to 3 dimensions, not {} ({shape:?})", .shape.len())]
    Dimensions {
        /// The operation, e.g. `CudaArray::from_ndarray`.
        operation: &'static str,
        /// The shape given.
        shape: Vec<usize>,
    },
    /// Linear memory for a texture that does not start at the device's texture alignment.
    #[error("invalid argument to Texture::from_linear: a linear texture must start at a multiple of {align} bytes (the device's texture alignment), but this memory starts at {address:#x}, {} bytes past one; Texture::from_linear_offset binds it at the aligned address below and returns the offset", .address % *.align)]
    LinearMisaligned {
        /// The memory's device address.
        address: u64,
        /// The device's texture alignment in bytes.
        align: u64,
    },
    /// Linear memory whose distance from the texture alignment is not a whole number of
    /// elements, so a kernel could not reach it by an element offset.
    #[error("invalid argument to Texture::from_linear_offset: the memory starts at {address:#x}, {gap} bytes past the texture alignment ({align} bytes), which is not a whole number of {element_bytes}-byte elements: the kernel could not reach it by an element offset")]
    LinearOffset {
        /// The memory's device address.
        address: u64,
        /// Bytes from the alignment below to the memory.
        gap: u64,
        /// The device's texture alignment in bytes.
        align: u64,
        /// Bytes per element.
        element_bytes: u64,
    },
    /// A texture of a bit-cast element type sampled with filtering or as normalized floats,
    /// which would not give back the values' bits.
    #[error("invalid argument to {operation}: a texture of {rust_type} keeps each value's bits in integer channels, so it must be read with FilterMode::Point and read_as_integer (TextureDesc::default()); fetch it with fp_tex1Dfetch/fp_tex2D from <gpu_runtime/texture_fetch.h>")]
    BitCastSampling {
        /// The operation, e.g. `Texture::from_array`.
        operation: &'static str,
        /// The element type.
        rust_type: &'static str,
    },
    /// A surface of an array created without `ArrayFlags::SURFACE_LDST`.
    #[error("invalid argument to Surface::new: the array was created with flags {flags:#x}, without ArrayFlags::SURFACE_LDST")]
    NotSurfaceArray {
        /// The array's flags.
        flags: u32,
    },
}
