//! cudarc and the libraries it loads, on this crate's memory: cudarc's slices in our launches,
//! our buffers in cudarc's, streams and contexts both ways (`interop`, GPU tests); with the
//! `cublas` feature also cuBLAS, through cudarc's gemm (`interop`) and `gpuarray::matmul`
//! (`array_matmul`), and the feature's compile-time rule (`ui`, trybuild).
//!
//! `cargo test --features cublas --test cudarc` (scripts/test.sh); add `-- --ignored
//! --test-threads=1` on a GPU machine. A crate apart from tests/suite/ so that the `cublas`
//! feature rebuilds this and not the whole suite.

#[path = "../common/mod.rs"]
mod common;
#[cfg(feature = "cublas")]
#[path = "../ui_support/mod.rs"]
mod ui_support;

#[cfg(feature = "cublas")]
mod array_dot_into;
#[cfg(feature = "cublas")]
mod array_matmul;
#[cfg(feature = "cublas")]
mod array_matmul_nd;
#[cfg(feature = "cublas")]
mod graph_gemm;
mod interop;
#[cfg(feature = "cublas")]
mod tf32;
#[cfg(feature = "cublas")]
mod ui;
