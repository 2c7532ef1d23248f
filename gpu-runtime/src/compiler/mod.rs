//! From CUDA C to loadable images, without a GPU or a context (PyCUDA's `pycuda.compiler`):
//! NVRTC and nvcc, headers, linking several sources, the on-disk compile cache, and images
//! compiled ahead of time. A context loads what this module produces (`driver`).

pub(crate) mod build_dir;
pub mod cache;
mod cached_compile;
pub(crate) mod disk;
pub(crate) mod embedded;
pub(crate) mod headers;
pub(crate) mod hit_timing;
mod includes;
pub mod layout;
pub(crate) mod link;
pub(crate) mod nvcc;
pub(crate) mod nvjitlink;
pub(crate) mod nvrtc;
pub(crate) mod nvrtc_resolution;
pub(crate) mod plan;
pub(crate) mod sha256;
pub(crate) mod source;
pub(crate) mod source_module;
pub(crate) mod target;
pub(crate) mod toolchain;

pub use cache::key::CacheKey;
pub use cache::status::CacheStatus;
pub use disk::SOURCE_DIR_VAR;
pub use embedded::{pick_embedded, EmbeddedImage, ImageKind};
pub use headers::NVRTC_PRELUDE;
pub use link::{linker_available, DynamicModule, LinkInput};
pub use nvrtc::{compile, nvrtc_version, supported_archs, CompiledModule, Target};
pub use source::{ModuleSource, SourceHeader, SourceOnDisk, SourcePart};
pub use source_module::{CompileReport, Compiler};
