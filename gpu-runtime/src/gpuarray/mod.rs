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

// The folders, lowest first: each uses only the ones above it in this list (and the crate's lower
// layers); the families of operations beside each other use none of each other, and `expr`,
// whose `math` also names `reduce`'s `any`/`all`, stands on them. scripts/check_layers.py
// checks this order.
pub(crate) mod elements;

pub(crate) mod array;

pub(crate) mod kernels;

pub(crate) mod copy;
pub(crate) mod linalg;
pub(crate) mod random;
pub(crate) mod reduce;
pub(crate) mod scan;

pub(crate) mod sort;

pub(crate) mod expr;

#[cfg(test)]
mod tests;

pub use array::layout;
pub use expr::math;
pub use expr::promote;

pub use array::core::{
    DeviceArray, DeviceArrayBase, DeviceArrayView, DeviceArrayViewMut, PooledArray, Storage, StorageMut,
};
pub use array::join::{block, column_stack, concatenate, dstack, hstack, stack, vstack, Block};
pub use array::on_stream::{on, OnStream};
pub use array::overlap::{may_share_memory, shares_memory};
pub use copy::copyto::{copyto, copyto_where};
pub use copy::diag::{diag_indices, diag_indices_from};
pub use copy::gather::{multi_put, multi_take, IndexMode};
pub use copy::grids::{indices, ix_, meshgrid, MeshIndexing};
pub use copy::packing::BitOrder;
pub use elements::array_element::{ArrayElement, ElementType};
pub use elements::bitwise::Bitwise;
pub use elements::boolean::Bool;
pub use elements::dtype::DType;
pub use elements::element::{Element, Kind};
pub use elements::index_element::IndexElement;
pub use elements::linalg_type::LinalgType;
pub use elements::mean_type::MeanType;
pub use elements::promotion::{promote_types, result_type, PromoteArg};
pub use elements::sum_type::SumType;
pub use expr::add_remove::{append, resize};
pub use expr::apply_along_axis::apply_along_axis;
pub use expr::binning::histogram_density;
pub use expr::close::{
    allclose, array_equal, array_equiv, isclose, isclose_expr, nan_to_num, nan_to_num_expr, FiniteRange,
};
pub use expr::conditions::{extract, piecewise, place, putmask, select};
pub use expr::convolve::{convolve, correlate, ConvolveMode};
pub use expr::core::{BinOp, Expr, Operand, MAX_OPERANDS};
pub use expr::covariance::{corrcoef, corrcoef_xy, cov, cov_as, cov_xy, cov_xy_as, Cov, CovType};
pub use expr::flat_index::{ravel_multi_index, unravel_index};
pub use expr::func::CmpOp;
pub use expr::histogramdd::{
    histogram2d, histogram2d_weighted, histogramdd, histogramdd_weighted, Histogram2d, HistogramDd,
};
pub use expr::interp::interp;
pub use expr::least_squares::{lstsq, matrix_rank, pinv, Lstsq};
pub use expr::linear_combination::{linear_combination, Coefficient};
pub use expr::norm::{cond, matrix_norm, norm, vector_norm, MatrixOrd};
pub use expr::pad::PadMode;
pub use expr::pad_fill::PadStat;
pub use expr::poly1d::Poly1d;
pub use expr::polyfit::{polyfit, polyfit_full, polyfit_weighted, PolyFit};
pub use expr::polynomial::{poly, polyadd, polymul, polysub, polyval, roots};
pub use expr::products::{cross, cross_axes, inner, outer};
pub use expr::select::if_positive;
pub use expr::sets::{intersect1d, intersect1d_indices, setdiff1d, setxor1d, union1d, Intersect1d};
pub use expr::triangle::{mask_indices, tril_indices, tril_indices_from, triu_indices, triu_indices_from};
pub use expr::unique_axis::UniqueAxis;
pub use kernels::args::{KernelArg, MAX_DIMS};
pub use kernels::broadcast::{broadcast_arrays, broadcast_shapes};
pub use kernels::elementwise::{ElementwiseKernel, Variant};
pub use kernels::elementwise_fn::ElementwiseFn;
pub use linalg::cholesky::cholesky;
pub use linalg::eigen::{eigh, eigvalsh, Eigh, Uplo};
pub use linalg::einsum::{einsum, MAX_EINSUM_OPERANDS};
pub use linalg::lu::{det, inv, slogdet, solve, SlogDet};
#[cfg(feature = "cublas")]
pub use linalg::matmul::matmul_mixed;
#[cfg(feature = "cublas")]
pub use linalg::matmul::{dot, dot_into, matmul, matmul_into, MatmulElement};
pub use linalg::matrix_power::matrix_power;
pub use linalg::multi_dot::multi_dot;
pub use linalg::qr::{qr, Qr, QrMode};
pub use linalg::svd::{svd, svdvals, Svd};
pub use linalg::tensordot::{kron, tensordot, tensordot_axes};
pub use linalg::tensorsolve::{tensorinv, tensorsolve};
pub use random::curand::{curand_version, CurandFloat, CurandGenerator};
pub use random::curand_error::{CurandError, CurandResult};
pub use random::philox::{random_source, Distribution};
pub use reduce::axis::ReduceAxis;
pub use reduce::histogram::Bins;
pub use reduce::kernel::{ReductionKernel, ReductionVariant};
pub use reduce::reduction_fn::ReductionFn;
pub use scan::compact::where_nonzero;
pub use scan::kernel::{ScanKernel, ScanVariant};
pub use sort::ops::{Side, Unique, UniqueAll, UniqueCounts, UniqueInverse, UniqueOptions};
pub use sort::order::lexsort;
pub use sort::quantile_method::QuantileMethod;
