//! `use gpu_runtime::prelude::*;` brings in what most programs use: the macro, contexts,
//! streams and events, device memory and its traits, host data traits, and the error type.

pub use crate::compiler::SourceModule;
#[cfg(feature = "gpuarray")]
pub use crate::driver::PinnedArray;
pub use crate::driver::{
    Context, Device, DeviceBuffer, DeviceRead, DeviceView, DeviceViewMut, DeviceWrite, Event, HostAllocFlags,
    HostSlice, HostSliceMut, Stream, StreamFlags,
};
pub use crate::error::{Error, Result};
#[cfg(feature = "gpuarray")]
pub use crate::gpuarray::DeviceArray;
pub use crate::launch::Dim3;
pub use crate::tools::DeviceMemoryPool;
pub use crate::types::DeviceRepr;
pub use gpu_macros::{gpu_test, kernel};
