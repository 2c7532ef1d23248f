//! What the suite's own tests and benches reach into, and nothing else: hidden from the
//! documentation, no part of the API, and kept apart from `__private_v0_1` (the macro's interface).

pub use crate::compiler::hit_timing::{hit_steps, HitSteps};
pub use crate::compiler::toolchain::nvrtc_was_asked;
#[cfg(feature = "gpuarray")]
pub use crate::gpuarray::kernels::registry::{check_arch, compile_check};
#[cfg(feature = "gpuarray")]
pub use crate::gpuarray::random::philox::philox4x32_10;
#[cfg(feature = "gpuarray")]
pub use crate::gpuarray::scan::kernel::tile_of as scan_tile_of;
#[cfg(feature = "gpuarray")]
pub use crate::gpuarray::scan::status::set_launch_count as scan_set_launch_count;
pub use crate::launch::staging::chunks::set_tuning as set_staging_tuning;
pub use crate::launch::staging::Staging;

/// The CUDA C of the kernel an expression evaluates with (its contiguous variant), or the
/// typed error its evaluation would return for an operation undefined on its types: what the
/// dtype matrix compiles with NVRTC on a machine without a GPU.
#[cfg(feature = "gpuarray")]
pub fn expr_kernel_source<T: crate::gpuarray::Element>(
    e: &crate::gpuarray::Expr<'_, T>,
) -> crate::Result<String> {
    crate::gpuarray::expr::core::test_source(e)
}

/// The CUDA C of `any` (`all` when `all` is set) over elements of `d`.
#[cfg(feature = "gpuarray")]
pub fn logic_reduction_source(all: bool, d: crate::gpuarray::DType) -> crate::Result<String> {
    crate::gpuarray::reduce::logic::test_source(all, d)
}
