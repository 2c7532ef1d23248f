//! The arithmetic of the pools' size classes, as PyCUDA exposes it (`pycuda.tools.bitlog2`,
//! `DeviceMemoryPool.bin_number`, `DeviceMemoryPool.alloc_size`): what a pool really allocates
//! for a request, and which requests share blocks.

use crate::driver::memory::pool_core::{bin_of, bin_size, MAX_POOLED, NUM_BINS};

/// The floor of the base-2 logarithm of `v` (its highest set bit), and 0 for 0: PyCUDA's
/// `bitlog2`.
///
/// ```
/// use gpu_runtime::tools::bitlog2;
/// assert_eq!((bitlog2(1), bitlog2(1023), bitlog2(1024), bitlog2(0)), (0, 9, 10, 0));
/// ```
pub fn bitlog2(v: u64) -> u32 {
    v.checked_ilog2().unwrap_or(0)
}

/// The size class (bin) of a request for `bytes` bytes, or `None` above the largest size a pool
/// serves (2^62 bytes).
///
/// Classes have two bits of mantissa, as PyCUDA's do, so a block wastes at most a quarter of
/// its size and requests that differ a little share blocks. The numbers are this crate's: each
/// class is numbered by the largest size it holds ([`alloc_size`]), which PyCUDA's numbering
/// puts one exponent higher.
pub fn bin_number(bytes: usize) -> Option<usize> {
    (bytes <= MAX_POOLED).then(|| bin_of(bytes))
}

/// The bytes a pool allocates for every request in class `bin` (the largest request the class
/// holds), or `None` for a class past the largest.
///
/// ```
/// use gpu_runtime::tools::{alloc_size, bin_number};
/// // 1000 bytes come from a 1024-byte block; 1025 from a 1280-byte one.
/// assert_eq!(alloc_size(bin_number(1000).unwrap()), Some(1024));
/// assert_eq!(alloc_size(bin_number(1025).unwrap()), Some(1280));
/// ```
pub fn alloc_size(bin: usize) -> Option<usize> {
    (bin < NUM_BINS && bin <= bin_of(MAX_POOLED)).then(|| bin_size(bin))
}
