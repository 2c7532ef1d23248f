//! `use gpu_runtime::prelude::*;` brings in what most programs use: the macro, contexts,
//! streams and events, device memory and its traits, host data traits, and the error type.

// A second path to each item, by design (scripts/check_public_paths.py does not count it).
// Named by the modules that define them, as everywhere in the crate (scripts/check_layers.py).
pub use crate::compiler::source_module::SourceModule;
pub use crate::driver::context::Context;
pub use crate::driver::device::Device;
pub use crate::driver::memory::buffer::DeviceBuffer;
pub use crate::driver::memory::slices::{HostSlice, HostSliceMut};
pub use crate::driver::memory::view::{DeviceRead, DeviceView, DeviceViewMut, DeviceWrite};
pub use crate::driver::stream::{Event, Stream};
#[cfg(feature = "gpuarray")]
pub use crate::driver::PinnedArray;
pub use crate::driver::{HostAllocFlags, StreamFlags};
pub use crate::error::{Error, Result};
#[cfg(feature = "gpuarray")]
pub use crate::gpuarray::DeviceArray;
pub use crate::launch::dims::Dim3;
pub use crate::tools::DeviceMemoryPool;
pub use crate::types::repr::DeviceRepr;
pub use gpu_macros::{gpu_test, kernel};
