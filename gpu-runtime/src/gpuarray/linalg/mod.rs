//! Linear algebra: `matmul` and `dot` through cuBLAS (`matmul`, the `cublas` feature), and how
//! arrays are handed to cuBLAS as pure functions of shapes and strides (`matmul_plan`); NumPy's
//! `einsum` as one generated kernel of any element type (`einsum`), and `tensordot` and `kron`
//! written as einsums (`tensordot`).

pub(crate) mod einsum;
pub(crate) mod tensordot;

#[cfg(feature = "cublas")]
pub(crate) mod matmul;
#[cfg(any(test, feature = "cublas"))]
pub(crate) mod matmul_plan;
#[cfg(any(test, feature = "cublas"))]
pub(crate) mod nd_plan;
