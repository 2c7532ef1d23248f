//! Modules loaded into a context and the functions and globals in them.

pub(crate) mod build;
pub(crate) mod cache;
pub(crate) mod function;
pub(crate) mod function_attrs;
pub(crate) mod global;
pub(crate) mod image;
pub(crate) mod loaded;
pub(crate) mod user;
pub(crate) mod vars;

pub use build::LinkedModule;
pub use function::Function;
pub use global::Global;
pub use image::JitOptions;
pub use loaded::KernelLimits;
pub use user::{Module, ModuleGlobal};
