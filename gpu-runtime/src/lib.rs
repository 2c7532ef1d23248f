// The front page of the documentation is `front_page.md` beside this file: a short start that
// points into the guide, whose chapters are the modules of `guide/` (their text in the
// markdown files there).
#![doc = include_str!("front_page.md")]
// The features and what each costs to build, after the front page.
#![doc = include_str!("features.md")]
#![deny(missing_docs)]

pub mod compiler;
// DLPack: buffers and arrays exchanged with other libraries (the `dlpack` feature).
#[cfg(feature = "dlpack")]
pub mod dlpack;
pub mod driver;
mod error;
/// Arrays on the device and kernels generated from expressions: PyCUDA's `gpuarray`,
/// `elementwise` and `reduction`. Needs the `gpuarray` feature (on by default).
#[cfg(feature = "gpuarray")]
pub mod gpuarray;
pub mod guide;
pub mod launch;
// Collectives and point-to-point transfers between GPUs through NCCL: the `nccl` feature.
#[cfg(feature = "nccl")]
pub mod nccl;
pub mod prelude;
// The crate's locks and their order (the lowest layer).
mod sync;
pub mod tools;
pub mod types;

// What nearly every program names, public here only: the modules that define them keep them
// for the crate's own use (one public path per item, scripts/check_public_paths.py).
pub use compiler::source_module::SourceModule;
pub use driver::context::Context;
pub use driver::device::Device;
pub use driver::memory::buffer::DeviceBuffer;
pub use driver::memory::slices::{HostSlice, HostSliceMut};
pub use driver::memory::view::{DeviceRead, DeviceView, DeviceViewMut, DeviceWrite};
pub use driver::stream::{Event, Stream};
#[cfg(feature = "dlpack")]
pub use error::DlpackError;
#[cfg(feature = "cublas")]
pub use error::GemmError;
pub use error::{
    ArgHint, ArgumentError, ArrayShapeError, BorderError, CompileError, CopyError, Error, FlagsError,
    GraphError, LaunchConfigError, LinAlgError, MemoryError, OccupancyError, Result, TextureError,
};
pub use launch::dims::Dim3;
pub use types::repr::DeviceRepr;

#[doc(hidden)]
pub use crate::launch::validate as validate_launch;

// `#[elementwise]` declares functions over `gpuarray`'s arrays.
#[cfg(feature = "gpuarray")]
pub use gpu_macros::elementwise;
// `#[reduction]` declares reductions over them, as `#[elementwise]` does elementwise kernels.
#[cfg(feature = "gpuarray")]
pub use gpu_macros::reduction;
pub use gpu_macros::{gpu_test, kernel};

// The promises of the "Threads" section, checked at compile time.
const _: () = {
    const fn send_sync<T: Send + Sync>() {}
    send_sync::<Context>();
    send_sync::<driver::Function>();
    send_sync::<Stream>();
    send_sync::<Event>();
    send_sync::<DeviceBuffer<f32>>();
    send_sync::<DeviceView<'static, f32>>();
    send_sync::<DeviceViewMut<'static, f32>>();
    send_sync::<Device>();
    send_sync::<driver::DeviceLimits>();
    send_sync::<compiler::ModuleSource>();
    send_sync::<Error>();
};

/// Re-exported so that users can name driver types without depending on cudarc themselves.
pub use cudarc;
/// Re-exported for DLPack tensors (the `dlpack` feature): `dlpark`'s managed tensors, which
/// [`dlpack`] exports to and imports from.
#[cfg(feature = "dlpack")]
pub use dlpark;
/// Re-exported for `half`/`__half` (`half::f16`) and `__nv_bfloat16` (`half::bf16`) data (the
/// `half` feature, on by default).
#[cfg(feature = "half")]
pub use half;
/// Re-exported for host arrays (the `gpuarray` feature, on by default).
#[cfg(feature = "gpuarray")]
pub use ndarray;
/// Re-exported for complex numbers ([`types::Complex32`], [`types::Complex64`]), the host side
/// of the device's `gpu_runtime::complex<T>`.
pub use num_complex;

// The macro's interface. Its name carries this crate's version (major.minor, as serde's
// does), and `gpu-macros-core` emits the same name for its own version: a macro crate of
// another version, paired with this one, fails to build instead of calling an interface
// that changed. A version bump renames it (the assertion below fails until then).
#[doc(hidden)]
#[path = "private.rs"]
pub mod __private_v0_1;
const _: () = assert!(
    version_starts_with(env!("CARGO_PKG_VERSION"), "0.1."),
    "rename __private_v0_1 (here and in gpu-macros-core) for this version"
);

/// `version` begins with `prefix` (in a const context, where `str::starts_with` is not).
const fn version_starts_with(version: &str, prefix: &str) -> bool {
    let (v, p) = (version.as_bytes(), prefix.as_bytes());
    if v.len() < p.len() {
        return false;
    }
    let mut i = 0;
    while i < p.len() {
        if v[i] != p[i] {
            return false;
        }
        i += 1;
    }
    true
}
#[doc(hidden)]
#[path = "testing.rs"]
pub mod __testing;

/// The README's examples, compiled as doctests so that they stay true.
#[doc = include_str!("../../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;

/// The example on `#[kernel]`'s own page (what an editor shows on hover), compiled as a doctest
/// here: the macro crate's doctests cannot run (gpu-macros/Cargo.toml).
#[doc = include_str!("../../gpu-macros/src/kernel_example.md")]
#[cfg(doctest)]
pub struct KernelAttributeDoctest;
