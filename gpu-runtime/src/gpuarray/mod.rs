//! Arrays on the device and kernels generated from expressions (PyCUDA's `pycuda.gpuarray`,
//! `pycuda.elementwise` and `pycuda.reduction`; CuPy's `ndarray`, `ElementwiseKernel` and
//! `ReductionKernel`).
//!
//! - [`DeviceArray<T, D>`](crate::gpuarray::DeviceArray): an n-dimensional array in device memory with the
//!   shape and strides of `ndarray` (from and to `ndarray` in C or Fortran order; views,
//!   slices with `s![..]`, transposes, reshapes; `fill`, `astype`). It stands on a
//!   [`DeviceBuffer`](crate::DeviceBuffer) (or a pool's block, or a view), so the stream-ordered
//!   lifetime rules of the crate guide's "Safety model" apply unchanged: every kernel this
//!   module launches goes through the checked launch path and records its reads and writes.
//! - [`ElementwiseKernel`](crate::gpuarray::ElementwiseKernel): one operation on elements, generated and cached per context.
//!   Declared in Rust with `#[elementwise("z = a * x + y")]` (see
//!   [`elementwise`](crate::elementwise)), checked at build time: [`ElementwiseFn`](crate::gpuarray::ElementwiseFn).
//! - [`ReductionKernel`](crate::gpuarray::ReductionKernel): map, reduce, neutral and post-map (CuPy's), over all axes or one;
//!   `sum`, `dot`, `max`, `min`, `argmax` on arrays are built on it.
//! - [`CurandGenerator`](crate::gpuarray::CurandGenerator): seeded uniform and normal fills of contiguous `f32`/`f64` arrays through cuRAND (loaded at run time).
//!
//! ```no_run
//! use gpu_runtime::gpuarray::DeviceArray;
//! use gpu_runtime::ndarray::{s, Array2};
//! use gpu_runtime::Context;
//! let ctx = Context::default()?;
//! let host = Array2::from_shape_fn((64, 32), |(i, j)| (i * 32 + j) as f32);
//! let a = DeviceArray::from_ndarray(&ctx, &host)?;
//! let every_other_row = a.slice(s![..;2, ..])?;
//! let total = every_other_row.sum()?;
//! assert_eq!(total, host.slice(s![..;2, ..]).sum());
//! # Ok::<(), gpu_runtime::Error>(())
//! ```
//!
//! Generated kernels are compiled with NVRTC on their first use in a context (and kept in the
//! disk cache); after that, a launch finds its kernel by a key computed when the kernel was
//! defined.

mod array;
mod builtin;
mod codegen;
mod construct;
mod convert;
mod curand;
mod curand_error;
mod element;
mod elementwise;
mod elementwise_fn;
mod expr;
mod expr_ops;
mod gather;
mod kernel_args;
pub(crate) mod kernel_cache;
pub mod layout;
mod methods;
pub(crate) mod random;
mod reduce_ops;
mod reduction;
mod reduction_source;
pub(crate) mod scan;
mod select_ops;
mod shape_ops;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_ext;

pub use array::{
    DeviceArray, DeviceArrayBase, DeviceArrayView, DeviceArrayViewMut, PooledArray, Storage, StorageMut,
};
pub use curand::{curand_version, CurandFloat, CurandGenerator};
pub use curand_error::{CurandError, CurandResult};
pub use element::{Element, Kind};
pub use elementwise::{ElementwiseKernel, Variant};
pub use elementwise_fn::ElementwiseFn;
pub use expr::{BinOp, Expr, Operand, MAX_OPERANDS};
pub use gather::{multi_put, multi_take, IndexMode};
pub use kernel_args::{KernelArg, MAX_DIMS};
pub use random::{random_source, Distribution};
pub use reduction::{ReductionKernel, ReductionVariant};
pub use scan::{ScanKernel, ScanVariant};
pub use select_ops::{if_positive, if_positive_on};
pub use shape_ops::{concatenate, concatenate_on, stack, stack_on};
