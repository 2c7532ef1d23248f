//! Arrays on the device and kernels generated from expressions (PyCUDA's `pycuda.gpuarray`,
//! `pycuda.elementwise` and `pycuda.reduction`; CuPy's `ndarray`, `ElementwiseKernel` and
//! `ReductionKernel`).
//!
//! - [`DeviceArray<T, D>`](crate::gpuarray::DeviceArray): an n-dimensional array in device memory with the
//!   shape and strides of `ndarray` (from and to `ndarray` in C or Fortran order; views,
//!   slices with `s![..]`, transposes, reshapes; `fill`, `astype`). It stands on a
//!   [`DeviceBuffer`](crate::DeviceBuffer) (or a pool's block, or a view), so the stream-ordered
//!   lifetime rules of the guide's [Safety model](crate::guide::threads_and_safety#safety-model) apply unchanged: every kernel this
//!   module launches goes through the checked launch path and records its reads and writes.
//! - [`ElementwiseKernel`](crate::gpuarray::ElementwiseKernel): one operation on elements, generated and cached per context.
//!   Declared in Rust with `#[elementwise("z = a * x + y")]` (see
//!   [`elementwise`](crate::elementwise)), checked at build time: [`ElementwiseFn`](crate::gpuarray::ElementwiseFn).
//! - [`ReductionKernel`](crate::gpuarray::ReductionKernel): map, reduce, neutral and post-map (CuPy's), over all axes or one;
//!   `sum`, `prod`, `mean`, `var`, `std`, `dot`, `max`, `min`, `argmax`, `argmin` on arrays are built on it
//!   (along an axis with [`ReduceAxis`](crate::gpuarray::ReduceAxis) for `keepdims`).
//! - [`ScanKernel`](crate::gpuarray::ScanKernel): prefix scans in one pass; `cumsum`/`cumprod` flattened or along an axis.
//! - [`math`](crate::gpuarray::math): PyCUDA's `cumath` and NumPy's ufuncs on arrays and inside fused
//!   expressions; comparisons and logic giving [`Bool`](crate::gpuarray::Bool) arrays, `where_`, `any`/`all`.
//! - [`promote`](crate::gpuarray::promote): NumPy 2's promotion table and arithmetic between two element types.
//! - Elements: the numbers ([`Element`](crate::gpuarray::Element)) and CUDA's vector types
//!   (`Float3`, ...: [`ArrayElement`](crate::gpuarray::ArrayElement)), which arrays hold, copy,
//!   fill and pass to elementwise kernels, without arithmetic (a compile error).
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
mod array_element;
mod boolean;
mod broadcast;
mod builtin;
mod cast;
mod codegen;
mod compare;
mod construct;
mod convert;
mod convert_contig;
mod curand;
mod curand_error;
mod dtype;
mod element;
mod element_complex;
mod element_half;
mod elementwise;
pub(crate) mod elementwise_fn;
mod expr;
mod expr_func;
mod expr_ops;
mod gather;
mod inexact;
mod kernel_args;
pub(crate) mod kernel_cache;
pub mod layout;
mod linear_combination;
mod logic_reduce;
pub mod math;
mod math_complex;
#[cfg(feature = "cublas")]
mod matmul;
#[cfg(any(test, feature = "cublas"))]
mod matmul_plan;
mod mean_type;
mod methods;
pub mod promote;
pub(crate) mod random;
mod reduce_at;
mod reduce_axis;
mod reduce_ops;
#[cfg(test)]
mod reduce_tests;
mod reduction;
mod reduction_source;
pub(crate) mod scan;
mod scan_ops;
mod scan_source;
pub(crate) mod scan_status;
mod select_ops;
mod shape_ops;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_complex;
#[cfg(test)]
mod tests_dtypes;
#[cfg(test)]
mod tests_ext;
#[cfg(test)]
mod tests_forms;
#[cfg(test)]
mod tests_math;
#[cfg(test)]
mod tests_vector;
mod transpose;

pub use array::{
    DeviceArray, DeviceArrayBase, DeviceArrayView, DeviceArrayViewMut, PooledArray, Storage, StorageMut,
};
pub use array_element::{ArrayElement, ElementType};
pub use boolean::Bool;
pub use broadcast::broadcast_shapes;
pub use curand::{curand_version, CurandFloat, CurandGenerator};
pub use curand_error::{CurandError, CurandResult};
pub use element::{Element, Kind};
pub use elementwise::{ElementwiseKernel, Variant};
pub use elementwise_fn::ElementwiseFn;
pub use expr::{BinOp, Expr, Operand, MAX_OPERANDS};
pub use expr_func::CmpOp;
pub use gather::{multi_put, multi_take, IndexMode};
pub use kernel_args::{KernelArg, MAX_DIMS};
pub use linear_combination::{linear_combination, linear_combination_on, Coefficient};
#[cfg(feature = "cublas")]
pub use matmul::{dot, dot_on, matmul, matmul_into, matmul_into_on, matmul_on, MatmulElement};
pub use mean_type::MeanType;
pub use promote::{promote_types, result_type, DType, PromoteArg};
pub use random::{random_source, Distribution};
pub use reduce_axis::ReduceAxis;
pub use reduction::{ReductionKernel, ReductionVariant};
pub use scan::{ScanKernel, ScanVariant};
pub use select_ops::{if_positive, if_positive_on};
pub use shape_ops::{concatenate, concatenate_on, stack, stack_on};
