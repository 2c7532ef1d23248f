//! NumPy's `out=` on reductions: `sum_into`, `prod_into`, `mean_into`, `var_into`,
//! `std_into`, `max_into`, `min_into`, `ptp_into`, `argmax_into`, `argmin_into`, the
//! NaN-ignoring `nansum_into`, `nanprod_into`, `nanmean_into`, `nanvar_into`, `nanstd_into`,
//! `nanmax_into`, `nanmin_into` over every axis, and their `_axis_into` forms along one,
//! writing an existing device array instead of allocating the result.
//!
//! NumPy's rules, with these choices made explicit:
//! - **Shape.** Over every axis `out` holds one element (0-d, or any shape of one element, as
//!   `keepdims=True` over every axis gives). Along an axis `out` has the reduced shape: the
//!   other axes, or with [`ReduceAxis::keepdims`] the axis kept with length 1. Anything else
//!   is [`ArrayShapeError::OutShape`] (an axis the array does not have,
//!   [`ArrayShapeError::AxisOutOfRange`]), checked before anything is queued.
//! - **Type.** As `np.add.reduce(a, out=o)`, the reduction is computed in `out`'s type (the
//!   `dtype` of a ufunc reduction defaults to `out`'s): `sum`/`prod` convert each element as
//!   they read it and accumulate in `out`'s type; `max`/`min`/`ptp` (and `nanmax`/`nanmin`)
//!   of another type convert the array first (one pass more) and compare in `out`'s type (so
//!   a `ptp` of `i8` into `i64` does not wrap, as NumPy's, which subtracts in `out`'s type).
//!   `mean`, `var` and `std` are accumulated in `f64` and rounded once into `out`'s type, as
//!   [`mean`](DeviceArrayBase::mean) and [`var`](DeviceArrayBase::var). The conversion must be
//!   allowed by NumPy's `same_kind` rule (from the element type, or for `mean`/`var`/`std` from
//!   NumPy's result type: `f64` for the integers, the part type of a complex `var`): `i32`
//!   into `f64` is, `f64` into `i32` is not,
//!   [`ArgumentError::CastingRule`]. `argmax`/`argmin` write `i64` indices only (NumPy refuses
//!   any `out` but `intp`): the type says so.
//! - **Layout.** `out` may have any strides: a transposed or stepped view, a reversed one.
//!   Over every axis the kernel writes the one element where it lies. Along an axis the
//!   result is reduced into a temporary C-order array and copied into `out` (one small
//!   allocation from the context's pool and one copy of the result more than the allocating
//!   form; the input, usually far larger, is read once).
//! - **Streams.** As every array operation: the plain forms on the legacy default stream, the
//!   `.on(&stream)` forms on yours; none waits for the host (the result stays on the device).
//!   The writes into `out` are recorded in its stream uses as any kernel's.
//! - **Empty.** A sum into `out` of an empty array writes 0, a product 1, a mean, variance
//!   or standard deviation NaN; `max`, `min`, `ptp`, `argmax`, `argmin`, `nanmax`, `nanmin` of
//!   an empty array (or of an empty axis with lanes to fill) are
//!   [`ArrayShapeError::EmptyReduction`].
//! - **NaN.** The `nan` forms write what their allocating forms in `reduce::nan` return
//!   ([`nansum`](DeviceArrayBase::nansum) ...): NaN skipped, NaN where only NaN was left
//!   (`nanmean`, `nanvar`, `nanstd`, `nanmax`, `nanmin`). They refuse complex elements, as
//!   those do ([`ArgumentError::UndefinedOnElement`]).

use std::sync::Arc;

use ndarray::{Dimension, IxDyn};

use crate::error::{ArgumentError, ArrayShapeError, Result};
use crate::gpuarray::array::core::{DeviceArray, DeviceArrayBase, Storage, StorageMut};
use crate::gpuarray::array::on_stream::{on_legacy_stream, OnStream};
use crate::gpuarray::elements::dtype::DType;
use crate::gpuarray::elements::element::Element;
use crate::gpuarray::elements::promotion::can_cast_same_kind;
use crate::gpuarray::kernels::args::KernelArg;
use crate::gpuarray::reduce::axis::ReduceAxis;
use crate::gpuarray::reduce::kernel::ReductionKernel;
use crate::gpuarray::reduce::nan::NanOp;
use crate::gpuarray::reduce::ops::{IndexWidth, Op, ReduceOp};

/// NumPy's type of a mean of `d`: the floats and complex types their own, `f64` for the
/// integers and `bool`.
fn mean_dtype(d: DType) -> DType {
    match d {
        DType::F16 | DType::Bf16 | DType::F32 | DType::F64 | DType::Complex32 | DType::Complex64 => d,
        _ => DType::F64,
    }
}

/// NumPy's type of a variance or standard deviation of `d`: the mean type, but the part type
/// of a complex type (the variance of complex numbers is real).
fn var_dtype(d: DType) -> DType {
    match d {
        DType::Complex32 => DType::F32,
        DType::Complex64 => DType::F64,
        _ => mean_dtype(d),
    }
}

/// `computed` stored into `target` by NumPy's `same_kind` rule, or the typed error.
fn check_cast(operation: &'static str, computed: DType, target: DType) -> Result<()> {
    if can_cast_same_kind(computed, target) {
        return Ok(());
    }
    Err(ArgumentError::CastingRule {
        kernel: "reduction".into(),
        operation: operation.into(),
        result: computed.short_name(),
        target: target.short_name(),
    }
    .into())
}

/// The shape of a reduction of `shape` along `axis`, in the axis's form.
fn reduced_shape(shape: &[usize], axis: ReduceAxis) -> Result<Vec<usize>> {
    if axis.axis >= shape.len() {
        return Err(ArrayShapeError::AxisOutOfRange {
            axis: axis.axis,
            axes: shape.len(),
        }
        .into());
    }
    let mut out = shape.to_vec();
    if axis.keepdims {
        out[axis.axis] = 1;
    } else {
        out.remove(axis.axis);
    }
    Ok(out)
}

/// A reduction of `ops` or of `nan`.
#[derive(Clone, Copy)]
enum AnyOp {
    Plain(Op),
    Nan(NanOp),
}

impl ReduceOp for AnyOp {
    fn needs_elements(self) -> bool {
        match self {
            AnyOp::Plain(op) => op.needs_elements(),
            AnyOp::Nan(op) => op.needs_elements(),
        }
    }

    fn kernel<T: Element, R: Element>(self, index: IndexWidth) -> Result<Arc<ReductionKernel<R>>> {
        match self {
            AnyOp::Plain(op) => op.kernel::<T, R>(index),
            AnyOp::Nan(op) => op.kernel::<T, R>(index),
        }
    }
}

impl From<Op> for AnyOp {
    fn from(op: Op) -> AnyOp {
        AnyOp::Plain(op)
    }
}

impl From<NanOp> for AnyOp {
    fn from(op: NanOp) -> AnyOp {
        AnyOp::Nan(op)
    }
}

/// How a reduction into `out` is computed.
#[derive(Clone, Copy)]
struct How {
    op: AnyOp,
    /// The public name, for errors.
    operation: &'static str,
    /// The type `same_kind` casts from into `out`'s type.
    computed: DType,
    /// Whether the elements are converted to `out`'s type before the reduction (`max`,
    /// `min`, `ptp` and the NaN-ignoring `max`, `min`: their kernels compare in the element
    /// type); otherwise the kernel converts each as it reads it.
    convert_first: bool,
}

impl How {
    fn new(op: impl Into<AnyOp>, operation: &'static str, computed: DType) -> How {
        let op = op.into();
        How {
            op,
            operation,
            computed,
            convert_first: matches!(
                op,
                AnyOp::Plain(Op::Max | Op::Min | Op::Ptp) | AnyOp::Nan(NanOp::Max | NanOp::Min)
            ),
        }
    }
}

impl<S: Storage<Elem: Element>, D: Dimension> OnStream<'_, &DeviceArrayBase<S, D>> {
    /// Reduces every axis into `out` (one element, any shape and strides).
    fn all_into<O: StorageMut<Elem: Element>, D2: Dimension>(
        &self,
        how: How,
        out: &mut DeviceArrayBase<O, D2>,
    ) -> Result<()> {
        check_cast(how.operation, how.computed, O::Elem::DTYPE)?;
        if out.len() != 1 {
            return Err(ArrayShapeError::OutShape {
                operation: how.operation,
                shape: out.shape().to_vec(),
                expected: Vec::new(),
            }
            .into());
        }
        if how.op.needs_elements() {
            self.target.nonempty(how.operation)?;
        }
        if how.convert_first && S::Elem::DTYPE != O::Elem::DTYPE {
            let converted = self.astype::<O::Elem>()?;
            return OnStream::new(&converted, self.stream).all_into_as_is(how, out);
        }
        self.all_into_as_is(how, out)
    }

    /// [`all_into`](Self::all_into) with the kernel of this element type into `out`'s.
    fn all_into_as_is<O: StorageMut<Elem: Element>, D2: Dimension>(
        &self,
        how: How,
        out: &mut DeviceArrayBase<O, D2>,
    ) -> Result<()> {
        let index = IndexWidth::for_count(self.target.len());
        let k = how.op.kernel::<S::Elem, O::Elem>(index)?;
        OnStream::new(&*k, self.stream).reduce_into([KernelArg::input(self.target)], out)
    }

    /// Reduces along `axis` into `out` (the reduced shape, any strides).
    fn along_into<O: StorageMut<Elem: Element>, D2: Dimension>(
        &self,
        how: How,
        axis: ReduceAxis,
        out: &mut DeviceArrayBase<O, D2>,
    ) -> Result<()> {
        check_cast(how.operation, how.computed, O::Elem::DTYPE)?;
        let expected = reduced_shape(self.target.shape(), axis)?;
        if out.shape() != expected.as_slice() {
            return Err(ArrayShapeError::OutShape {
                operation: how.operation,
                shape: out.shape().to_vec(),
                expected,
            }
            .into());
        }
        if how.op.needs_elements() {
            self.target.nonempty_axis(how.operation, axis.axis)?;
        }
        let result: DeviceArray<O::Elem, IxDyn> = if how.convert_first && S::Elem::DTYPE != O::Elem::DTYPE {
            let converted = self.astype::<O::Elem>()?;
            OnStream::new(&converted, self.stream).reduce_along(how.op, axis)?
        } else {
            self.reduce_along(how.op, axis)?
        };
        OnStream::new(out, self.stream).copy_from(&result)
    }
}

/// Declares each `_into` reduction: the plain form on the legacy default stream and the
/// `.on(&stream)` form, one body.
macro_rules! into_forms {
    ($(
        $(#[$doc:meta])*
        $name:ident, $axis_name:ident, ($($param:ident: $param_ty:ty),*) $op:expr, $label:literal,
        $axis_label:literal, $computed:expr, [$($out_bound:tt)*];
    )*) => {
        impl<S: Storage<Elem: Element>, D: Dimension> DeviceArrayBase<S, D> {
            on_legacy_stream! {$(
                $(#[$doc])*
                /// Over every axis; `out` holds one element (0-d or any shape of one element, any
                /// strides). See the module's rules (`reduce::into`): shape, type, layout.
                fn $name[O: $($out_bound)*, D2: Dimension](
                    &self, $($param: $param_ty,)* out: &mut DeviceArrayBase<O, D2>
                ) -> Result<()>;

                /// The same along `axis` (a `usize`, or [`ReduceAxis::keepdims`]): `out` has the
                /// reduced shape, any strides.
                fn $axis_name[O: $($out_bound)*, D2: Dimension](
                    &self, axis: impl Into<ReduceAxis>, $($param: $param_ty,)* out: &mut DeviceArrayBase<O, D2>
                ) -> Result<()>;
            )*}
        }

        /// The reductions into an existing array on a stream (`a.on(&s).sum_into(&mut out)`);
        /// each returns without waiting.
        impl<S: Storage<Elem: Element>, D: Dimension> OnStream<'_, &DeviceArrayBase<S, D>> {$(
            #[doc = concat!("[`", stringify!($name), "`](DeviceArrayBase::", stringify!($name), ") on this stream.")]
            pub fn $name<O: $($out_bound)*, D2: Dimension>(
                &self,
                $($param: $param_ty,)*
                out: &mut DeviceArrayBase<O, D2>,
            ) -> Result<()> {
                let computed: fn(DType) -> DType = $computed;
                self.all_into(How::new($op, $label, computed(S::Elem::DTYPE)), out)
            }

            #[doc = concat!("[`", stringify!($axis_name), "`](DeviceArrayBase::", stringify!($axis_name), ") on this stream.")]
            pub fn $axis_name<O: $($out_bound)*, D2: Dimension>(
                &self,
                axis: impl Into<ReduceAxis>,
                $($param: $param_ty,)*
                out: &mut DeviceArrayBase<O, D2>,
            ) -> Result<()> {
                let computed: fn(DType) -> DType = $computed;
                self.along_into(How::new($op, $axis_label, computed(S::Elem::DTYPE)), axis.into(), out)
            }
        )*}
    };
}

into_forms! {
    /// The sum into `out` (NumPy's `sum(out=)`), accumulated in `out`'s element type.
    sum_into, sum_axis_into, () Op::Sum, "sum_into", "sum_axis_into", |d| d, [StorageMut<Elem: Element>];
    /// The product into `out` (NumPy's `prod(out=)`), accumulated in `out`'s element type.
    prod_into, prod_axis_into, () Op::Prod, "prod_into", "prod_axis_into", |d| d, [StorageMut<Elem: Element>];
    /// The mean into `out` (NumPy's `mean(out=)`): accumulated in `f64` (a complex mean in
    /// `out`'s type), rounded once into `out`'s type, which NumPy's mean type (`f64` for the
    /// integers) must cast to by `same_kind`.
    mean_into, mean_axis_into, () Op::Mean, "mean_into", "mean_axis_into", mean_dtype, [StorageMut<Elem: Element>];
    /// The largest element into `out` (NumPy's `max(out=)`; NaN wins), compared in `out`'s type.
    max_into, max_axis_into, () Op::Max, "max_into", "max_axis_into", |d| d, [StorageMut<Elem: Element>];
    /// The smallest element into `out` (NumPy's `min(out=)`; NaN wins), compared in `out`'s type.
    min_into, min_axis_into, () Op::Min, "min_into", "min_axis_into", |d| d, [StorageMut<Elem: Element>];
    /// The variance with `ddof` into `out` (NumPy's `var(ddof=, out=)`): accumulated in `f64`,
    /// rounded once into `out`'s type, which NumPy's variance type (`f64` for the integers,
    /// the part type for the complex types) must cast to by `same_kind`.
    var_into, var_axis_into, (ddof: u64) Op::Var { ddof, root: false }, "var_into", "var_axis_into", var_dtype, [StorageMut<Elem: Element>];
    /// The standard deviation with `ddof` into `out` (NumPy's `std(ddof=, out=)`), typed as
    /// `var_into`.
    std_into, std_axis_into, (ddof: u64) Op::Var { ddof, root: true }, "std_into", "std_axis_into", var_dtype, [StorageMut<Elem: Element>];
    /// The range `max - min` into `out` (NumPy's `ptp(out=)`; NaN if there is one), computed
    /// in `out`'s type.
    ptp_into, ptp_axis_into, () Op::Ptp, "ptp_into", "ptp_axis_into", |d| d, [StorageMut<Elem: Element>];
    /// The index of the largest element (in C order over every axis; along the axis in the
    /// `_axis` form) into an `i64` array (NumPy's `argmax(out=)`).
    argmax_into, argmax_axis_into, () Op::ArgMax, "argmax_into", "argmax_axis_into", |_| DType::I64, [StorageMut<Elem = i64>];
    /// The index of the smallest element into an `i64` array (NumPy's `argmin(out=)`).
    argmin_into, argmin_axis_into, () Op::ArgMin, "argmin_into", "argmin_axis_into", |_| DType::I64, [StorageMut<Elem = i64>];
    /// The sum of the elements that are not NaN into `out` (NumPy's `nansum(out=)`; 0 where
    /// there are none), accumulated in `out`'s element type.
    nansum_into, nansum_axis_into, () NanOp::Sum, "nansum_into", "nansum_axis_into", |d| d, [StorageMut<Elem: Element>];
    /// The product of the elements that are not NaN into `out` (NumPy's `nanprod(out=)`; 1
    /// where there are none), accumulated in `out`'s element type.
    nanprod_into, nanprod_axis_into, () NanOp::Prod, "nanprod_into", "nanprod_axis_into", |d| d, [StorageMut<Elem: Element>];
    /// The mean of the elements that are not NaN into `out` (NumPy's `nanmean(out=)`; NaN
    /// where there are none), typed as `mean_into`.
    nanmean_into, nanmean_axis_into, () NanOp::Mean, "nanmean_into", "nanmean_axis_into", mean_dtype, [StorageMut<Elem: Element>];
    /// The variance with `ddof` of the elements that are not NaN into `out` (NumPy's
    /// `nanvar(ddof=, out=)`; NaN where their count is not above `ddof`), typed as `var_into`.
    nanvar_into, nanvar_axis_into, (ddof: u64) NanOp::Var { ddof, root: false }, "nanvar_into", "nanvar_axis_into", mean_dtype, [StorageMut<Elem: Element>];
    /// The standard deviation with `ddof` of the elements that are not NaN into `out`
    /// (NumPy's `nanstd(ddof=, out=)`), typed as `var_into`.
    nanstd_into, nanstd_axis_into, (ddof: u64) NanOp::Var { ddof, root: true }, "nanstd_into", "nanstd_axis_into", mean_dtype, [StorageMut<Elem: Element>];
    /// The largest element that is not NaN into `out` (NumPy's `nanmax(out=)`; NaN where
    /// only NaN is), compared in `out`'s type.
    nanmax_into, nanmax_axis_into, () NanOp::Max, "nanmax_into", "nanmax_axis_into", |d| d, [StorageMut<Elem: Element>];
    /// The smallest element that is not NaN into `out` (NumPy's `nanmin(out=)`; NaN where
    /// only NaN is), compared in `out`'s type.
    nanmin_into, nanmin_axis_into, () NanOp::Min, "nanmin_into", "nanmin_axis_into", |d| d, [StorageMut<Elem: Element>];
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;
    use crate::gpuarray::reduce::nan::nan_kernel;
    use crate::gpuarray::reduce::ops::kernel_indexed;

    #[test]
    fn reduced_shapes_drop_or_keep_the_axis() {
        assert_eq!(reduced_shape(&[3, 4, 5], ReduceAxis::new(1)).unwrap(), vec![3, 5]);
        assert_eq!(
            reduced_shape(&[3, 4, 5], ReduceAxis::keepdims(1)).unwrap(),
            vec![3, 1, 5]
        );
        assert_eq!(
            reduced_shape(&[0], ReduceAxis::new(0)).unwrap(),
            Vec::<usize>::new()
        );
        assert!(matches!(
            reduced_shape(&[3], ReduceAxis::new(1)),
            Err(Error::Shape(ArrayShapeError::AxisOutOfRange { axis: 1, axes: 1 }))
        ));
        assert!(reduced_shape(&[], ReduceAxis::new(0)).is_err());
    }

    /// NumPy: `np.add.reduce(np.ones(3, 'i4'), out=np.zeros((), 'f8'))` works, into `'i2'`
    /// it does not (`same_kind` allows narrowing within a kind: `i8` into `i2` is allowed,
    /// `f8` into `i4` is not), and `np.mean` of integers into an integer `out` is refused.
    #[test]
    fn out_types_follow_same_kind() {
        assert!(check_cast("sum_into", DType::I32, DType::F64).is_ok());
        assert!(check_cast("sum_into", DType::I64, DType::I16).is_ok());
        assert!(check_cast("sum_into", DType::Bool, DType::U8).is_ok());
        assert!(matches!(
            check_cast("sum_into", DType::F64, DType::I32),
            Err(Error::Argument(ArgumentError::CastingRule { target: "i32", .. }))
        ));
        assert!(check_cast("sum_into", DType::Complex64, DType::F64).is_err());
        assert_eq!(mean_dtype(DType::I32), DType::F64);
        assert_eq!(mean_dtype(DType::Bool), DType::F64);
        assert_eq!(mean_dtype(DType::F16), DType::F16);
        assert_eq!(mean_dtype(DType::Complex32), DType::Complex32);
        assert!(check_cast("mean_into", mean_dtype(DType::I32), DType::I64).is_err());
        assert!(check_cast("mean_into", mean_dtype(DType::I32), DType::F32).is_ok());
    }

    /// The kernels of another result type that `sum_np`, `prod_np` and the `_into` forms
    /// define (the small integers into `i64`/`u64`, floats into wider floats, integers into
    /// floats, means into each float type) compile with NVRTC, in a flat and an axis variant.
    #[test]
    fn kernels_into_other_types_compile() {
        use crate::gpuarray::elements::boolean::Bool;
        use crate::gpuarray::kernels::registry::{check_arch, compile_check};
        use crate::gpuarray::reduce::kernel::ReductionVariant;
        use half::f16;
        fn check<T: Element, R: Element>(op: Op) {
            let k = kernel_indexed::<T, R>(op, IndexWidth::I64).unwrap();
            for v in [ReductionVariant::Contiguous, ReductionVariant::AxisBlock(2)] {
                let src = k.source(v);
                if let Err(e) = compile_check(&src, check_arch(&src)) {
                    panic!("{op:?} {} into {} {v:?}: {e}\n{src}", T::c_name(), R::c_name());
                }
            }
        }
        for op in [Op::Sum, Op::Prod] {
            check::<i8, i64>(op);
            check::<i16, i64>(op);
            check::<u8, u64>(op);
            check::<u16, u64>(op);
            check::<u32, u64>(op);
            check::<Bool, i64>(op);
            check::<f32, f64>(op);
            check::<i32, f32>(op);
            check::<f16, f32>(op);
            check::<i32, f16>(op);
        }
        check::<i32, f32>(Op::Mean);
        check::<f32, f64>(Op::Mean);
        check::<f16, f32>(Op::Mean);
        check::<i16, f16>(Op::Mean);
    }

    /// The `var`/`std` kernels into another float type and the NaN-ignoring kernels into
    /// another type, as `var_into` ... `nanmin_into` define them, compile with NVRTC.
    #[test]
    fn var_and_nan_kernels_into_other_types_compile() {
        use crate::gpuarray::kernels::registry::compile_check;
        use crate::gpuarray::reduce::kernel::ReductionKernel;
        use crate::gpuarray::reduce::kernel::ReductionVariant;
        use half::f16;
        fn check<R: Element>(what: &str, k: std::sync::Arc<ReductionKernel<R>>) {
            for v in [ReductionVariant::Contiguous, ReductionVariant::AxisBlock(2)] {
                let src = k.source(v);
                if let Err(e) = compile_check(&src, "sm_90") {
                    panic!("{what} {v:?}: {e}\n{src}");
                }
            }
        }
        let w = IndexWidth::I64;
        let var = Op::Var { ddof: 1, root: false };
        let std = Op::Var { ddof: 0, root: true };
        check("var i32 into f32", kernel_indexed::<i32, f32>(var, w).unwrap());
        check("std f16 into f64", kernel_indexed::<f16, f64>(std, w).unwrap());
        check("var f64 into f16", kernel_indexed::<f64, f16>(var, w).unwrap());
        let nvar = NanOp::Var { ddof: 1, root: true };
        for op in [NanOp::Prod, nvar] {
            check(
                &format!("nan {op:?} f16 into f64"),
                nan_kernel::<f16, f64>(op, w).unwrap(),
            );
        }
        let (sum, mean) = (NanOp::Sum, NanOp::Mean);
        check("nansum f32 into f64", nan_kernel::<f32, f64>(sum, w).unwrap());
        check("nansum i32 into i64", nan_kernel::<i32, i64>(sum, w).unwrap());
        check("nanmean i32 into f32", nan_kernel::<i32, f32>(mean, w).unwrap());
        check("nanmean f64 into f16", nan_kernel::<f64, f16>(mean, w).unwrap());
    }
}
