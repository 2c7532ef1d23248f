//! [`OccupancyError`]: questions the occupancy calculator (`tools::DeviceData`) has no
//! answer for.

/// A question `tools::DeviceData` has no figures for. Wrapped by
/// [`Error::Occupancy`](super::Error::Occupancy).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum OccupancyError {
    /// A compute capability without built-in occupancy figures.
    #[error("invalid argument to DeviceData::for_compute_capability: no built-in occupancy figures for compute capability {major}.{minor}; use DeviceData::new on the device instead")]
    UnknownComputeCapability {
        /// The major version given.
        major: u32,
        /// The minor version given.
        minor: u32,
    },
    /// A word size without a coalescing alignment.
    #[error("invalid argument to DeviceData::align_bytes: no coalescing alignment is defined for words of {word_size} bytes; use 4, 8 or 16")]
    WordSize {
        /// The word size given, in bytes.
        word_size: usize,
    },
    /// More texture channels than 4.
    #[error("invalid argument to DeviceData::make_valid_tex_channel_count: a texture has at most 4 channels; {channels} cannot be rounded up to 1, 2 or 4")]
    TextureChannels {
        /// The channels given.
        channels: usize,
    },
}
