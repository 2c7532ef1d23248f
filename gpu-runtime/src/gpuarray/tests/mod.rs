//! The unit tests of `gpuarray` that need no GPU: every kernel it generates, compiled with
//! NVRTC for sm_90 on the host, and the checks that refuse what must not compile.

mod builtin;
mod complex;
mod expr_scan_random;
mod forms;
mod half;
mod math;
mod reduce;
mod vector;

/// Compiles `source` with NVRTC for sm_90 on the host, with the options a launch uses; a
/// failure panics naming `what` and showing the source.
fn compiles(what: &str, source: &str) {
    if let Err(e) = crate::gpuarray::kernels::registry::compile_check(source, "sm_90") {
        panic!("{what} does not compile: {e}\n{source}");
    }
}

/// The element type of a real scalar, for the kernels keyed by element types.
fn dt(s: gpu_cdecl::Scalar) -> crate::gpuarray::elements::dtype::DType {
    crate::gpuarray::elements::dtype::DType::from_scalar(s).expect("an element scalar")
}
mod close;
mod complex_more;
mod options;
