//! Linear algebra: `matmul` and `dot` through cuBLAS (`matmul`, the `cublas` feature), and how
//! arrays are handed to cuBLAS as pure functions of shapes and strides (`matmul_plan`); NumPy's
//! `einsum` as one generated kernel of any element type (`einsum`), and `tensordot` and `kron`
//! written as einsums (`tensordot`); NumPy's `linalg` on stacks of matrices, each matrix
//! factored by one block of a generated kernel (`stack` says what they share): LU with
//! partial pivoting for `det`, `slogdet`, `solve` and `inv` (`lu`; a large matrix blocked over
//! many blocks, `blocked_lu`), Cholesky (`cholesky`),
//! Jacobi rotations for `eigh` (`eigen`) and `svd` (`svd`), Householder reflections for `qr`
//! (`qr`); `matrix_power` by repeated squaring through `einsum` (`matrix_power`); `multi_dot`,
//! a chain of `einsum` products in NumPy's cheapest order (`multi_dot`); `tensorsolve` and
//! `tensorinv`, `solve` and `inv` of an array read as one square matrix (`tensorsolve`).

pub(crate) mod blocked_lu;
pub(crate) mod cholesky;
pub(crate) mod eigen;
pub(crate) mod einsum;
pub(crate) mod lu;
pub(crate) mod matrix_power;
pub(crate) mod multi_dot;
pub(crate) mod qr;
pub(crate) mod stack;
pub(crate) mod svd;
pub(crate) mod tensordot;
pub(crate) mod tensorsolve;

#[cfg(feature = "cublas")]
pub(crate) mod matmul;
#[cfg(any(test, feature = "cublas"))]
pub(crate) mod matmul_plan;
#[cfg(any(test, feature = "cublas"))]
pub(crate) mod nd_plan;
