//! PyCUDA's own array tests (`test/test_gpuarray.py`), ported test by test as GPU tests of
//! `gpu_runtime::gpuarray`, each compared with values computed on the host. One module per
//! stretch of PyCUDA's file; each module's header lists its tests and what the port does where
//! the Rust API differs. Run on a GPU machine: `cargo test --test suite -- --ignored array_pycuda::`.

mod gpuarray_head;
mod gpuarray_middle;
mod gpuarray_tail;
