//! What the suite's own tests and benches reach into, and nothing else: hidden from the
//! documentation, no part of the API, and kept apart from `__private_v0_1` (the macro's interface).

pub use crate::compiler::hit_timing::{hit_steps, HitSteps};
pub use crate::compiler::toolchain::nvrtc_was_asked;
#[cfg(feature = "gpuarray")]
pub use crate::gpuarray::kernels::registry::compile_check;
#[cfg(feature = "gpuarray")]
pub use crate::gpuarray::random::philox::philox4x32_10;
#[cfg(feature = "gpuarray")]
pub use crate::gpuarray::scan::kernel::tile_of as scan_tile_of;
#[cfg(feature = "gpuarray")]
pub use crate::gpuarray::scan::status::set_launch_count as scan_set_launch_count;
pub use crate::launch::staging::chunks::set_tuning as set_staging_tuning;
pub use crate::launch::staging::Staging;
