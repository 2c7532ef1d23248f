//! `any` and `all` over every element (NumPy's `any()`/`all()` with no axis): whether any
//! (every) element is nonzero, as one reduction to the host. An empty array gives `false`
//! (`true`), as NumPy's.

use std::sync::Arc;

use ndarray::{Dimension, IxDyn};

use crate::error::Result;
use crate::gpuarray::array::core::{DeviceArray, DeviceArrayBase, Storage};
use crate::gpuarray::array::on_stream::{on_legacy_stream, OnStream};
use crate::gpuarray::array::readback::read_back;
use crate::gpuarray::elements::cast;
use crate::gpuarray::elements::dtype::DType;
use crate::gpuarray::elements::element::Element;
use crate::gpuarray::kernels::args::KernelArg;
use crate::gpuarray::kernels::registry::Definitions;
use crate::gpuarray::reduce::axis::ReduceAxis;
use crate::gpuarray::reduce::kernel::ReductionKernel;

/// Which of the two.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Logic {
    Any,
    All,
}

/// The kernels made so far, by operation and element type.
static KERNELS: Definitions<(Logic, DType), Arc<ReductionKernel<i32>>> = Definitions::new();

/// The reduction of `op` over elements of `s`, in `int` (the warp shuffles of the reduction
/// have no `bool` form).
fn kernel(op: Logic, s: DType) -> Result<Arc<ReductionKernel<i32>>> {
    KERNELS.get_or_try_insert_with((op, s), || {
        let args = format!("const {} *x", s.c_name());
        let nonzero = nonzero_c(s);
        Ok(Arc::new(match op {
            Logic::Any => ReductionKernel::new(&args, &nonzero, "a | b", "0")?,
            Logic::All => ReductionKernel::new(&args, &nonzero, "a & b", "1")?,
        }))
    })
}

/// The `count_nonzero` kernels made so far, by element type.
static COUNTS: Definitions<DType, Arc<ReductionKernel<i64>>> = Definitions::new();

/// The sum of `x != 0` over elements of `s`, in `long long`: one launch of the reduction over
/// all axes (vector loads, the last block finishing), as fast as `sum`.
fn count_kernel(s: DType) -> Result<Arc<ReductionKernel<i64>>> {
    COUNTS.get_or_try_insert_with(s, || {
        let args = format!("const {} *x", s.c_name());
        let map = format!("(long long)({})", nonzero_c(s));
        Ok(Arc::new(ReductionKernel::new(&args, &map, "a + b", "0")?))
    })
}

/// C of `x != 0` as an `int`, for elements of `s`.
fn nonzero_c(s: DType) -> String {
    // A complex number is true when either part is nonzero (C++ has no `z != 0` for it);
    // a 16-bit float through the named conversion (`x != 0` on `__half` is ambiguous).
    if s.is_complex() || matches!(s, DType::F16 | DType::Bf16) {
        format!("(int){}", cast::convert_c(s, DType::Bool, "x"))
    } else {
        "(int)(x != 0)".to_owned()
    }
}

/// Whether any element of `x` is nonzero (true for a [`Bool`](crate::gpuarray::Bool) array: any is
/// true); `false` for an empty array.
pub fn any<S: Storage<Elem: Element>, D: Dimension>(x: &DeviceArrayBase<S, D>) -> Result<bool> {
    x.any()
}

/// Whether every element of `x` is nonzero; `true` for an empty array.
pub fn all<S: Storage<Elem: Element>, D: Dimension>(x: &DeviceArrayBase<S, D>) -> Result<bool> {
    x.all()
}

impl<S: Storage<Elem: Element>, D: Dimension> DeviceArrayBase<S, D> {
    on_legacy_stream! {
        /// Whether any element is nonzero (NumPy's `a.any()`): [`math::any`](crate::gpuarray::math::any).
        fn any(&self) -> Result<bool>;

        /// Whether every element is nonzero (NumPy's `a.all()`): [`math::all`](crate::gpuarray::math::all).
        fn all(&self) -> Result<bool>;

        /// The number of elements that are not zero (NumPy's `count_nonzero(a)`; `false` is zero,
        /// a complex number is nonzero when either part is, NaN is nonzero): one reduction of
        /// `x != 0` into `i64`. Waits for the count.
        fn count_nonzero(&self) -> Result<usize>;

        /// The number of nonzero elements along an axis (NumPy's `count_nonzero(a, axis=k)`,
        /// with `keepdims` through [`ReduceAxis::keepdims`]), as `i64` (NumPy's `intp`); an empty
        /// lane counts 0. Several or negative axes: [`count_nonzero_axes`](Self::count_nonzero_axes).
        fn count_nonzero_axis(&self, axis: impl Into<ReduceAxis>) -> Result<DeviceArray<i64, IxDyn>>;
    }
}

impl<S: Storage<Elem: Element>, D: Dimension> OnStream<'_, &DeviceArrayBase<S, D>> {
    /// [`any`](DeviceArrayBase::any) on this stream (waits for the result, which it returns).
    pub fn any(&self) -> Result<bool> {
        self.logic(Logic::Any)
    }

    /// [`all`](DeviceArrayBase::all) on this stream (waits for the result, which it returns).
    pub fn all(&self) -> Result<bool> {
        self.logic(Logic::All)
    }

    fn logic(&self, op: Logic) -> Result<bool> {
        let k = kernel(op, S::Elem::DTYPE)?;
        let r = read_back(self.target.context(), self.stream, |out| {
            OnStream::new(&*k, self.stream).reduce_into([KernelArg::input(self.target)], out)
        })?;
        Ok(r != 0)
    }

    /// [`count_nonzero`](DeviceArrayBase::count_nonzero) on this stream (waits for the count).
    pub fn count_nonzero(&self) -> Result<usize> {
        if self.target.is_empty() {
            return Ok(0);
        }
        let k = count_kernel(S::Elem::DTYPE)?;
        let r = read_back(self.target.context(), self.stream, |out| {
            OnStream::new(&*k, self.stream).reduce_into([KernelArg::input(self.target)], out)
        })?;
        Ok(r as usize)
    }

    /// [`count_nonzero_axis`](DeviceArrayBase::count_nonzero_axis) on this stream.
    pub fn count_nonzero_axis(&self, axis: impl Into<ReduceAxis>) -> Result<DeviceArray<i64, IxDyn>> {
        let axis = axis.into();
        let k = count_kernel(S::Elem::DTYPE)?;
        let out = OnStream::new(&*k, self.stream).reduce_axis([KernelArg::input(self.target)], axis.axis)?;
        axis.shape_result(out)
    }
}

/// The source of `any` (or `all`) over `d`, for `crate::testing`.
pub(crate) fn test_source(all: bool, d: DType) -> Result<String> {
    let op = if all { Logic::All } else { Logic::Any };
    Ok(kernel(op, d)?.source(crate::gpuarray::reduce::kernel::ReductionVariant::Contiguous))
}

#[cfg(test)]
pub(crate) fn test_kernels() -> Vec<Arc<ReductionKernel<i32>>> {
    [Logic::Any, Logic::All]
        .into_iter()
        .flat_map(|op| {
            [
                DType::Bool,
                DType::F16,
                DType::Bf16,
                DType::F32,
                DType::I64,
                DType::Complex32,
            ]
            .map(|s| kernel(op, s).unwrap())
        })
        .collect()
}

/// The `count_nonzero` kernels of a few element types, for the host-side compile check.
#[cfg(test)]
pub(crate) fn test_count_kernels() -> Vec<Arc<ReductionKernel<i64>>> {
    [
        DType::Bool,
        DType::F16,
        DType::Bf16,
        DType::F32,
        DType::U8,
        DType::I64,
        DType::Complex64,
    ]
    .map(|s| count_kernel(s).unwrap())
    .into()
}
