//! [`LinAlgError`]: matrices that linear algebra (`gpuarray::det`, `solve`, `inv`, `cholesky`,
//! `eigh`, `svd`, `tensorinv`, `multi_dot`) cannot take or cannot factor, NumPy's `LinAlgError`.

/// A stack of matrices that an operation of linear algebra refuses (before anything is
/// launched) or cannot factor (found by the factorization, after it ran; the results are not
/// returned). NumPy's and CuPy's `numpy.linalg.LinAlgError`. Wrapped by
/// [`Error::LinAlg`](super::Error::LinAlg).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum LinAlgError {
    /// An array of fewer than two axes, where matrices are the last two.
    #[error("linalg error in {operation}: a {axes}-dimensional array was given; the matrices are its last two axes, so it needs at least 2")]
    TooFewAxes {
        /// The operation, e.g. `det`.
        operation: &'static str,
        /// The array's axes.
        axes: usize,
    },
    /// Matrices that are not square where the operation needs square ones.
    #[error("linalg error in {operation}: the last two axes of shape {shape:?} are not of one length; the operation takes square matrices")]
    NotSquare {
        /// The operation, e.g. `inv`.
        operation: &'static str,
        /// The array's shape.
        shape: Vec<usize>,
    },
    /// A singular matrix (a zero pivot of the LU factorization with partial pivoting) where
    /// the operation needs an inverse (NumPy's "Singular matrix").
    #[error("linalg error in {operation}: matrix {matrix} of the stack is singular (a zero pivot); it has no inverse and the system no unique solution (lstsq through svd gives the least-squares one)")]
    Singular {
        /// The operation, e.g. `solve`.
        operation: &'static str,
        /// The first singular matrix, counted in C order over the leading axes.
        matrix: usize,
    },
    /// A matrix that is not (numerically) positive definite, found by the Cholesky
    /// factorization (NumPy's "Matrix is not positive definite").
    #[error("linalg error in {operation}: matrix {matrix} of the stack is not positive definite; cholesky takes symmetric (Hermitian) positive definite matrices")]
    NotPositiveDefinite {
        /// The operation, e.g. `cholesky`.
        operation: &'static str,
        /// The first such matrix, counted in C order over the leading axes.
        matrix: usize,
    },
    /// An iterative factorization (the Jacobi sweeps of `eigh` and `svd`) that did not
    /// converge within its sweeps (NumPy's "SVD did not converge"): a matrix holding NaN or
    /// infinity does this.
    #[error("linalg error in {operation}: matrix {matrix} of the stack did not converge in {sweeps} sweeps; check it for NaN and infinity")]
    NoConvergence {
        /// The operation, e.g. `svd`.
        operation: &'static str,
        /// The first such matrix, counted in C order over the leading axes.
        matrix: usize,
        /// The sweeps made.
        sweeps: u32,
    },
    /// A right-hand side whose shape does not fit the matrices of `solve`: `(..., n)` with
    /// one axis for a single matrix, else `(..., n, k)` with batch axes that broadcast
    /// against the matrices'.
    #[error("linalg error in {operation}: a right-hand side of shape {b:?} does not fit matrices of shape {a:?}; give (n,) for one matrix, or (..., n, k) whose leading axes broadcast against the matrices'")]
    RightHandSide {
        /// The operation, e.g. `solve`.
        operation: &'static str,
        /// The matrices' shape.
        a: Vec<usize>,
        /// The right-hand side's shape.
        b: Vec<usize>,
    },
    /// An array of `tensorinv` or `tensorsolve` that is not a square matrix once its first
    /// `leading` axes are flattened into rows and the others into columns (NumPy's "Input
    /// arrays must satisfy the requirement prod(a.shape[b.ndim:]) == prod(a.shape[:b.ndim])"),
    /// or `tensorinv` with `ind = 0` (NumPy's "Invalid ind argument").
    #[error("linalg error in {operation}: shape {shape:?} split after its first {leading} axes is a {rows} x {cols} matrix; the split must make a square matrix, after at least one axis for tensorinv")]
    NotSquareTensor {
        /// The operation, `tensorinv` or `tensorsolve`.
        operation: &'static str,
        /// The array's shape (for `tensorsolve`, with the axes named by `axes` moved to the end).
        shape: Vec<usize>,
        /// The axes taken as rows: `tensorinv`'s `ind`, or the axes of `tensorsolve`'s `b`.
        leading: usize,
        /// The elements of the leading axes (1 for none).
        rows: usize,
        /// The elements of the other axes (1 for none).
        cols: usize,
    },
}
