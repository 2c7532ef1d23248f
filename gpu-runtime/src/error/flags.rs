//! [`FlagsError`]: flags and settings of contexts, streams and events that the driver would
//! refuse.

/// A flag combination or setting of a context, stream or event refused before the driver was
/// asked; nothing was created. Wrapped by [`Error::Flags`](super::Error::Flags).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FlagsError {
    /// More than one `ContextFlags::SCHED_*` flag.
    #[error("invalid argument to Context::create: at most one SCHED_* flag may be given, but the flags {bits:#x} hold {sched:#x}")]
    SchedFlags {
        /// All the flags given.
        bits: u32,
        /// Their `SCHED_*` bits.
        sched: u32,
    },
    /// Context flag bits that `ContextFlags` does not define.
    #[error("invalid argument to Context::create: unknown context flag bits {unknown:#x}")]
    UnknownContextFlags {
        /// The undefined bits.
        unknown: u32,
    },
    /// Event flag bits that `EventFlags` does not define.
    #[error("invalid argument to Event::with_flags: unknown event flag bits {unknown:#x}")]
    UnknownEventFlags {
        /// The undefined bits.
        unknown: u32,
    },
    /// An `EventFlags::INTERPROCESS` event without `EventFlags::DISABLE_TIMING`.
    #[error("invalid argument to Event::with_flags: an INTERPROCESS event must also be DISABLE_TIMING")]
    InterprocessTiming,
    /// A stream priority outside the device's range.
    #[error("invalid argument to Stream::with_priority: priority {priority} is outside the device's range, {highest} (highest) to {lowest} (lowest)")]
    StreamPriority {
        /// The priority given.
        priority: i32,
        /// The device's highest priority (the smallest number).
        highest: i32,
        /// The device's lowest priority (the largest number).
        lowest: i32,
    },
}
