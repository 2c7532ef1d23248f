//! The CUDA driver, made safe (PyCUDA's `pycuda.driver`): devices and contexts, streams and
//! events, stream-ordered lifetimes, device and host memory and the copies between them, CUDA
//! arrays, textures and surfaces, IPC, and modules with their functions and globals.

pub(crate) mod attributes;
pub(crate) mod calls;
pub(crate) mod context;
// cuBLAS through cudarc on this crate's memory, its gemm checked (the `cublas` feature).
#[cfg(feature = "cublas")]
pub mod cublas;
pub mod cudarc_interop;
pub(crate) mod current;
pub(crate) mod device;
pub(crate) mod fault;
pub(crate) mod future;
pub(crate) mod host;
pub(crate) mod init;
pub(crate) mod ipc;
// Opens cuRAND (`gpuarray::curand`) and NCCL before cudarc does.
#[cfg(any(feature = "gpuarray", feature = "nccl"))]
pub(crate) mod library;
pub(crate) mod memory;
pub(crate) mod module;
pub(crate) mod ordering;
pub mod profiler;
pub(crate) mod result;
pub(crate) mod stream;
pub(crate) mod stream_ops;
pub(crate) mod texture;
pub(crate) mod version;

// Context, Device, DeviceBuffer, DeviceRead, DeviceWrite, DeviceView, DeviceViewMut, Event,
// HostSlice, HostSliceMut and Stream are public at the crate root only (one public path per
// item, scripts/check_public_paths.py).
pub use attributes::DeviceAttribute;
pub use context::{CacheConfig, ContextFlags, Limit, SharedConfig};
pub use device::{is_available, ComputeMode, DeviceLimits};
// The n-dimensional host arrays and what returns them stand on `ndarray` (the `gpuarray` feature).
pub use future::Synchronized;
#[cfg(feature = "gpuarray")]
pub use future::{memcpy_dtoh_future, HostCopy};
#[cfg(feature = "gpuarray")]
pub use host::{
    aligned_empty, aligned_empty_like, aligned_zeros, aligned_zeros_like, AlignedArray, AttachFlags,
    ManagedArray, MemAdvice, MemLocation, PinnedArray, RegisteredArray, DEFAULT_ALIGNMENT,
};
pub use host::{HostAllocFlags, HostRegisterFlags, RegisteredSlice};
pub use init::driver_version;
pub use ipc::{IpcBuffer, IpcEventHandle, IpcMemHandle};
pub use memory::*;
pub use module::{Function, Global, JitOptions, KernelLimits, LinkedModule, Module, ModuleGlobal};
pub use stream::{EventFlags, StreamFlags};
pub use texture::{AddressMode, FilterMode, Surface, SurfaceObject, Texture, TextureDesc, TextureObject};
pub use version::{cuda_version, init, version, VERSION};
