//! Linear algebra: `matmul` and `dot` through cuBLAS (`matmul`, the `cublas` feature), and how
//! arrays are handed to cuBLAS as pure functions of shapes and strides (`matmul_plan`).

#[cfg(feature = "cublas")]
pub(crate) mod matmul;
pub(crate) mod matmul_plan;
pub(crate) mod nd_plan;
