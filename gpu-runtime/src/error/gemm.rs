//! [`GemmError`]: matrices of a cuBLAS GEMM that do not fit their buffers (the `cublas`
//! feature).

/// A GEMM configuration refused before cuBLAS was called (`driver::cublas::gemm`);
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
    /// A batched GEMM with a negative batch count or batch stride.
    #[error("invalid argument to batched gemm: {what} is {value}: it cannot be negative")]
    NegativeBatch {
        /// `batch`, or the stride of `A`, `B` or `C`.
        what: &'static str,
        /// The value given.
        value: i64,
    },
    /// A batched GEMM whose results overlap: the stride of `C` is less than the elements one
    /// `C` spans, so two products would write the same elements.
    #[error(
        "invalid argument to batched gemm: C is {stride} elements from one to the next but spans {span}"
    )]
    OverlappingResults {
        /// The stride of `C` given.
        stride: i64,
        /// Elements one `C` spans.
        span: usize,
    },
    /// A captured GEMM's workspace (`Capture::gemm`) that does not start on a 256-byte
    /// boundary, which `cublasSetWorkspace` requires.
    #[error("invalid argument to a captured gemm: the workspace at {address:#x} is not 256-byte aligned")]
    WorkspaceMisaligned {
        /// The workspace's device address.
        address: u64,
    },
    /// `matmul` of arrays whose shapes do not multiply: each must have 1 to 3 axes, the last
    /// axis of `a` must be as long as the second-to-last of `b` (the only one of a 1-D `b`),
    /// and two batch axes must be equal or one of them 1.
    #[error("matmul: shapes {a:?} and {b:?} do not multiply")]
    ShapesDoNotMultiply {
        /// The shape of `a`.
        a: Vec<usize>,
        /// The shape of `b`.
        b: Vec<usize>,
    },
    /// `matmul_into` or `dot_into` with an output of another shape than the product's.
    #[error("matmul: the product has shape {expected:?} but the output has {found:?}")]
    OutputShape {
        /// The product's shape.
        expected: Vec<usize>,
        /// The output's shape.
        found: Vec<usize>,
    },
    /// `matmul_into` with an output that is not C-contiguous (cuBLAS writes whole rows).
    #[error("matmul: the output must be C-contiguous, but its strides are {strides:?}")]
    OutputLayout {
        /// The output's strides, in elements.
        strides: Vec<isize>,
    },
    /// A size cuBLAS cannot take: its arguments are 32-bit.
    #[error("matmul: {what} is {value}, more than cuBLAS's 32-bit arguments hold")]
    TooLarge {
        /// `m`, `n`, `k`, `batch`, or a leading dimension.
        what: &'static str,
        /// The size.
        value: usize,
    },
}
