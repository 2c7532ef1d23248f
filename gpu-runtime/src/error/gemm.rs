//! [`GemmError`]: matrices of a cuBLAS GEMM that do not fit their buffers (the `cublas`
//! feature).

/// A GEMM configuration refused before cuBLAS was called (`driver::cudarc_interop::gemm`);
/// nothing was computed. Wrapped by [`Error::Gemm`](super::Error::Gemm).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum GemmError {
    /// A matrix with a negative number of rows or columns.
    #[error("invalid argument to gemm: {matrix} is {rows} x {cols}: dimensions cannot be negative")]
    NegativeDimension {
        /// `A`, `B` or `C`.
        matrix: &'static str,
        /// Its rows as stored.
        rows: i32,
        /// Its columns as stored.
        cols: i32,
    },
    /// A leading dimension smaller than the rows (or than 1).
    #[error("invalid argument to gemm: {matrix} has {rows} rows but a leading dimension of {ld}")]
    LeadingDimension {
        /// `A`, `B` or `C`.
        matrix: &'static str,
        /// Its rows as stored.
        rows: i32,
        /// The leading dimension given.
        ld: i32,
    },
    /// A matrix that spans more elements than its buffer holds.
    #[error("size mismatch in gemm: {matrix} spans {needed} elements but its buffer has {len}")]
    BufferTooSmall {
        /// `A`, `B` or `C`.
        matrix: &'static str,
        /// Elements the matrix spans.
        needed: usize,
        /// Elements the buffer holds.
        len: usize,
    },
}
