//! PyCUDA's own array tests (`test/test_gpuarray.py`), ported test by test as GPU tests of
//! `gpu_runtime::gpuarray`, each compared with values computed on the host. One module per
//! stretch of PyCUDA's file; each module's header lists its tests and what the port does where
//! the Rust API differs. Run on a GPU machine: `cargo test --test pycuda -- --ignored`.
//!
//! One test binary for all of them, so that CI links it once.

#[path = "pycuda/gpuarray_head.rs"]
mod gpuarray_head;
#[path = "pycuda/gpuarray_middle.rs"]
mod gpuarray_middle;
#[path = "pycuda/gpuarray_tail.rs"]
mod gpuarray_tail;

/// The default context: every test here needs a GPU (they are ignored without one).
fn ctx() -> gpu_runtime::Context {
    gpu_runtime::Context::default().expect("these tests need a CUDA GPU")
}
