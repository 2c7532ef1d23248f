//! The suite's tests that need no cargo feature, as modules of one test binary: the library is
//! linked once for all of them, not once per file. Without a GPU the parsing, compile-time and
//! NVRTC tests run and the GPU tests are reported as ignored (`#[ignore = "needs a CUDA GPU"]`);
//! on a GPU machine `cargo test --test suite -- --ignored --test-threads=1` runs those, one at
//! a time as `.gpu/run` does: several of them measure what the whole process holds (the
//! device's free memory, the default context's pools and array cache).
//!
//! Module names say what a module tests, not whether it needs a GPU (the ignore reason says
//! that): `array_<topic>` for `gpuarray`; a topic with a module that only compiles (NVRTC, no
//! GPU) and one that runs on the GPU has `<topic>_compile` and `<topic>_run`.
//!
//! One process for all: a test that changes what the process shares (the default context's
//! settings, a global tuning) puts it back before it ends; a test that needs a process of its
//! own (a kernel fault, which breaks every context of its process; a fresh default context; a
//! loader path without NVRTC) runs itself again in a child, named by [`common::test_path`].
//! Tests that cannot share a process at all are crates of their own (Cargo.toml says why).

#[path = "../common/mod.rs"]
mod common;

// Kernels that several modules launch, declared once: each `#[kernel]` is checked with NVRTC
// when this crate is built, so a second declaration would compile them all again.
#[path = "../realworld/candle_kernels.rs"]
mod candle_kernels;
#[path = "../corpus/kernels.rs"]
mod corpus_kernels;
#[path = "../realworld/kernels.rs"]
mod realworld_kernels;

mod aot;
mod array_add_remove;
mod array_apply_along_axis;
mod array_around;
mod array_average;
mod array_bitwise_special;
mod array_broadcast;
mod array_buffer_view;
mod array_choose;
mod array_complex;
mod array_complex_reduce;
mod array_conditions;
mod array_construct;
mod array_convolve_vander;
mod array_copy_speed;
mod array_covariance;
mod array_debug;
mod array_diff_digitize;
mod array_dtype_gaps;
mod array_dtype_matrix;
mod array_dtypes;
mod array_einsum;
mod array_elementwise_complex;
mod array_elementwise_forms;
mod array_elementwise_half;
mod array_elementwise_pycuda_args;
mod array_gradient_unwrap;
mod array_histogramdd;
mod array_interp;
mod array_join_split;
mod array_layouts;
mod array_least_squares;
mod array_linalg_blocked;
mod array_linalg_complex;
mod array_linalg_eigen;
mod array_linalg_lu;
mod array_linalg_qr;
mod array_linalg_tensor;
mod array_math;
mod array_mean_types;
mod array_memory_cache;
mod array_nanred;
mod array_norms;
mod array_numpy_sums;
mod array_packing_windows;
mod array_pad;
mod array_pad_fill;
mod array_piecewise;
mod array_place_diag;
mod array_polyfit;
mod array_polynomial;
mod array_products;
mod array_put_along;
mod array_pycuda;
mod array_quantile_methods;
mod array_random;
mod array_rearrange;
mod array_reduce;
mod array_reduce_columns;
mod array_reduce_into_more;
mod array_reduce_out;
mod array_reduce_rows;
mod array_reduction_macro;
mod array_scan;
mod array_select;
mod array_select_paths;
mod array_sets;
mod array_sort;
mod array_sources;
mod array_trapezoid_indices;
mod array_triangles;
mod array_unique_api;
mod array_vector;
mod async_waits;
mod candle;
mod clusters;
mod compile_cache;
mod corpus_compile;
mod corpus_run;
mod device_interface;
mod doubles_and_textures;
mod dynamic_args;
mod gpu_loops;
mod graphs;
mod kernel_compile;
mod kernel_run;
mod nvcc_names;
mod pycuda_ports;
mod realworld_compile;
mod realworld_run;
mod reliability;
mod soundness;
mod source_module;
mod tools;
mod view_cast_split;
