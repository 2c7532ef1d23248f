//! NumPy's NaN-ignoring reductions on arrays: `nansum`, `nanprod`, `nanmean`, `nanvar`,
//! `nanstd`, `nanmax`, `nanmin`, `nanargmax` and `nanargmin`, over all axes or along one (with
//! [`ReduceAxis`]), built on [`ReductionKernel`] like `sum` ... `argmin` (`ops`), one kernel per
//! operation, element type and result type for the process.
//!
//! NumPy 2's semantics: a NaN is skipped (as 0 by `nansum`, as 1 by `nanprod`, not counted by
//! `nanmean`/`nanvar`); on integers and [`Bool`](crate::gpuarray::Bool), where nothing is NaN,
//! each is its plain reduction. Where only NaN is left: `nansum` 0, `nanprod` 1, `nanmean`,
//! `nanvar` (also where the count is not above `ddof`), `nanmax` and `nanmin` NaN (NumPy
//! warns), `nanargmax`/`nanargmin` over all axes
//! the typed error [`ArrayShapeError::AllNanReduction`] (NumPy raises) and along an axis -1 for
//! such a lane (NumPy raises; telling would need the lanes read back). An empty array is
//! [`ArrayShapeError::EmptyReduction`] for the max, min and arg forms. The 16-bit floats are
//! compared and summed in `f32`, as NumPy computes them. Complex elements are refused with a
//! typed error ([`ArgumentError::UndefinedOnElement`]).

use std::sync::Arc;

use gpu_cuda_source::Scalar;
use ndarray::{Dimension, IxDyn};

use crate::error::{ArgumentError, ArrayShapeError, Result};
use crate::gpuarray::array::core::{DeviceArray, DeviceArrayBase, Storage};
use crate::gpuarray::array::on_stream::{on_legacy_stream, stream_forms, OnStream};
use crate::gpuarray::elements::cast;
use crate::gpuarray::elements::dtype::DType;
use crate::gpuarray::elements::element::{Element, Kind};
use crate::gpuarray::elements::mean_type::MeanType;
use crate::gpuarray::kernels::registry::{AnyDefinition, Definitions};
use crate::gpuarray::reduce::axis::ReduceAxis;
use crate::gpuarray::reduce::kernel::ReductionKernel;
use crate::gpuarray::reduce::ops::{
    arg_kernel, in_f32, sums_in_f32, Along, IndexWidth, Mean, NanRank, ReduceOp, WELFORD,
};

/// A NaN-ignoring reduction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum NanOp {
    Sum,
    Prod,
    Mean,
    /// The variance with this `ddof`, its square root with `root`.
    Var {
        ddof: u64,
        root: bool,
    },
    Max,
    Min,
    ArgMax,
    ArgMin,
}

impl ReduceOp for NanOp {
    fn needs_elements(self) -> bool {
        matches!(self, NanOp::Max | NanOp::Min | NanOp::ArgMax | NanOp::ArgMin)
    }

    fn kernel<T: Element, R: Element>(self, index: IndexWidth) -> Result<Arc<ReductionKernel<R>>> {
        nan_kernel::<T, R>(self, index)
    }
}

type NanKey = (NanOp, DType, DType, IndexWidth);
static KERNELS: Definitions<NanKey, AnyDefinition> = Definitions::new();

/// The kernel of `op` on `T`, producing `R`, with `argmax`-style indices of `index`.
pub(crate) fn nan_kernel<T: Element, R: Element>(
    op: NanOp,
    index: IndexWidth,
) -> Result<Arc<ReductionKernel<R>>> {
    let index = match op {
        NanOp::ArgMax | NanOp::ArgMin => index,
        _ => IndexWidth::I64,
    };
    KERNELS.get_or_try_insert_typed((op, T::DTYPE, R::DTYPE, index), || define::<T, R>(op, index))
}

/// `x` (an element of `T`) as the type its comparisons and NaN test are made in: itself, or
/// `float` for the 16-bit floats (whose `!=` and `<` are ambiguous in CUDA's headers). The C
/// type, its size and the expression.
fn compared<T: Element>() -> (&'static str, usize, String) {
    match T::DTYPE {
        DType::F16 | DType::Bf16 => ("float", 4, cast::cast_c(T::SCALAR, Scalar::F32, "x")),
        _ => (T::c_name(), std::mem::size_of::<T>(), "x".to_owned()),
    }
}

/// The C test of `x` being NaN, `false` where `T` has no NaN.
fn isnan_c<T: Element>() -> String {
    match T::KIND {
        Kind::Float => {
            let (_, _, w) = compared::<T>();
            format!("(({w}) != ({w}))")
        }
        _ => "false".to_owned(),
    }
}

/// A quiet NaN of the C type `t` (`float` or `double`), the neutral of NaN-ignoring max/min.
fn nan_of(t: &str) -> &'static str {
    if t == "double" {
        "__longlong_as_double(0x7ff8000000000000ll)"
    } else {
        "__int_as_float(0x7fc00000)"
    }
}

fn define<T: Element, R: Element>(op: NanOp, index: IndexWidth) -> Result<ReductionKernel<R>> {
    if T::DTYPE.is_complex() || R::DTYPE.is_complex() {
        return Err(ArgumentError::UndefinedOnElement {
            kernel: "reduction".into(),
            function: format!("nan{op:?}").to_lowercase().into(),
            element: T::c_name(),
        }
        .into());
    }
    let t = T::c_name();
    let x = format!("const {t} *x");
    let nan = isnan_c::<T>();
    let float = matches!(T::KIND, Kind::Float);
    let as_f64 = cast::convert_c(T::DTYPE, DType::F64, "x");
    let k = match op {
        // Summed in `f32` and rounded once, as NumPy sums `float16`.
        NanOp::Sum | NanOp::Prod if sums_in_f32::<T, R>() => {
            let (skip, combine) = if op == NanOp::Sum {
                ("0.0f", "a + b")
            } else {
                ("1.0f", "a * b")
            };
            let w = cast::cast_c(T::SCALAR, Scalar::F32, "x");
            in_f32(&x, &format!("{nan} ? {skip} : {w}"), combine, skip)?
        }
        NanOp::Sum | NanOp::Prod => {
            let r = R::c_name();
            let (skip, combine) = if op == NanOp::Sum {
                (format!("({r})0"), "a + b")
            } else {
                (format!("({r})1"), "a * b")
            };
            // The NaN test before the conversion: NaN to an integer is undefined in C.
            let as_r = cast::convert_c(T::DTYPE, R::DTYPE, "x");
            ReductionKernel::new(&x, &format!("{nan} ? {skip} : ({as_r})"), combine, &skip)?
        }
        NanOp::Mean => {
            let def = "struct gpu_nsum { double s; double n; };\n\
                 __device__ __forceinline__ gpu_nsum gpu_ns(double s, double n) { gpu_nsum r; r.s = s; r.n = n; return r; }\n";
            ReductionKernel::with_accumulator(
                "nanmean",
                &x,
                &format!("{nan} ? gpu_ns(0.0, 0.0) : gpu_ns({as_f64}, 1.0)"),
                "gpu_ns(a.s + b.s, a.n + b.n)",
                "gpu_ns(0.0, 0.0)",
                ("gpu_nsum", def, 16),
            )?
            // 0 / 0: NaN where only NaN was left, as NumPy.
            .post_map(&cast::cast_c(Scalar::F64, R::SCALAR, "a.s / a.n"))
        }
        NanOp::Var { ddof, root } => {
            // NaN where `count - ddof` is not positive (NumPy's nanvar; plain `var` divides).
            let var = format!(
                "(a.n > {ddof}.0 ? a.m2 / (a.n - {ddof}.0) : __longlong_as_double(0x7ff8000000000000ll))"
            );
            let post = if root { format!("sqrt({var})") } else { var };
            ReductionKernel::with_accumulator(
                "nanvar",
                &x,
                // M2 starts at `x - x`: NaN for an infinity, as NumPy's variance of one.
                &format!("{nan} ? gpu_w(0.0, 0.0, 0.0) : gpu_w(1.0, {as_f64}, ({as_f64}) - ({as_f64}))"),
                "gpu_wmerge(a, b)",
                "gpu_w(0.0, 0.0, 0.0)",
                ("gpu_welford", WELFORD, 24),
            )?
            .post_map(&cast::cast_c(Scalar::F64, R::SCALAR, &post))
        }
        NanOp::Max | NanOp::Min if float => {
            // From a NaN neutral, a number always wins over NaN: NaN only where every
            // element was NaN.
            let (c, _, w) = compared::<T>();
            let cmp = if op == NanOp::Max { '>' } else { '<' };
            ReductionKernel::with_accumulator(
                "reduction",
                &x,
                &w,
                &format!("(a != a) ? b : ((b != b) ? a : (b {cmp} a ? b : a))"),
                nan_of(c),
                (c, "", if c == "double" { 8 } else { 4 }),
            )?
            .post_map(&cast::cast_c(
                if c == "double" { Scalar::F64 } else { Scalar::F32 },
                R::SCALAR,
                "a",
            ))
        }
        NanOp::Max => ReductionKernel::new(&x, "x", "a > b ? a : b", T::C_LOWEST)?,
        NanOp::Min => ReductionKernel::new(&x, "x", "a < b ? a : b", T::C_HIGHEST)?,
        NanOp::ArgMax | NanOp::ArgMin => {
            let (c, bytes, w) = compared::<T>();
            let max = op == NanOp::ArgMax;
            // A NaN for the floats (it ranks last), else the type's far bound.
            let neutral = if float {
                nan_of(c)
            } else if max {
                T::C_LOWEST
            } else {
                T::C_HIGHEST
            };
            arg_kernel::<T, R>((c, bytes, &w), neutral, max, index, NanRank::Last)?
        }
    };
    Ok(k)
}

impl<S: Storage<Elem: Element>, D: Dimension> DeviceArrayBase<S, D> {
    on_legacy_stream! {
        /// The sum of the elements that are not NaN (NumPy's `nansum`; 0 when there are none),
        /// accumulated as [`sum`](Self::sum) accumulates.
        fn nansum(&self) -> Result<S::Elem>;

        /// [`nansum`](Self::nansum) converted to and accumulated in `A` (NumPy's `dtype=`).
        fn nansum_as[A: Element](&self) -> Result<A>;

        /// The sums along an axis of the elements that are not NaN.
        fn nansum_axis(&self, axis: impl Into<ReduceAxis>) -> Result<DeviceArray<S::Elem, IxDyn>>;

        /// The product of the elements that are not NaN (NumPy's `nanprod`; 1 when none).
        fn nanprod(&self) -> Result<S::Elem>;

        /// The products along an axis of the elements that are not NaN.
        fn nanprod_axis(&self, axis: impl Into<ReduceAxis>) -> Result<DeviceArray<S::Elem, IxDyn>>;

        /// The mean of the elements that are not NaN (NumPy's `nanmean`; NaN when none), in
        /// NumPy's type ([`MeanType`]), accumulated in `f64`.
        fn nanmean(&self) -> Result<<S::Elem as MeanType>::Mean> where [S::Elem: MeanType];

        /// The means along an axis of the elements that are not NaN.
        fn nanmean_axis(&self, axis: impl Into<ReduceAxis>)
            -> Result<DeviceArray<<S::Elem as MeanType>::Mean, IxDyn>>
            where [S::Elem: MeanType];

        /// The variance of the elements that are not NaN, divided by `count - ddof` (NumPy's
        /// `nanvar`; NaN when that is not positive), in NumPy's type ([`MeanType`]).
        fn nanvar(&self, ddof: u64) -> Result<<S::Elem as MeanType>::Mean>
            where [S::Elem: MeanType];

        /// The variances along an axis of the elements that are not NaN.
        fn nanvar_axis(&self, axis: impl Into<ReduceAxis>, ddof: u64)
            -> Result<DeviceArray<<S::Elem as MeanType>::Mean, IxDyn>>
            where [S::Elem: MeanType];

        /// The square root of [`nanvar`](Self::nanvar) (NumPy's `nanstd`).
        fn nanstd(&self, ddof: u64) -> Result<<S::Elem as MeanType>::Mean>
            where [S::Elem: MeanType];

        /// The standard deviations along an axis of the elements that are not NaN.
        fn nanstd_axis(&self, axis: impl Into<ReduceAxis>, ddof: u64)
            -> Result<DeviceArray<<S::Elem as MeanType>::Mean, IxDyn>>
            where [S::Elem: MeanType];

        /// The largest element that is not NaN (NumPy's `nanmax`; NaN when every element is);
        /// an error for an empty array.
        fn nanmax(&self) -> Result<S::Elem>;

        /// The smallest element that is not NaN (NumPy's `nanmin`); an error for an empty array.
        fn nanmin(&self) -> Result<S::Elem>;

        /// The largest elements along an axis, NaN skipped; an error when that axis is empty.
        fn nanmax_axis(&self, axis: impl Into<ReduceAxis>) -> Result<DeviceArray<S::Elem, IxDyn>>;

        /// The smallest elements along an axis, NaN skipped; an error when that axis is empty.
        fn nanmin_axis(&self, axis: impl Into<ReduceAxis>) -> Result<DeviceArray<S::Elem, IxDyn>>;

        /// The flat index (C order) of the largest element that is not NaN, the first on a tie
        /// (NumPy's `nanargmax`); [`ArrayShapeError::AllNanReduction`] when every element is NaN,
        /// [`ArrayShapeError::EmptyReduction`] for an empty array.
        fn nanargmax(&self) -> Result<usize>;

        /// The flat index of the smallest element that is not NaN (NumPy's `nanargmin`).
        fn nanargmin(&self) -> Result<usize>;

        /// The index along an axis of the largest element of each lane that is not NaN; -1 for a
        /// lane of NaN only (NumPy raises).
        fn nanargmax_axis(&self, axis: impl Into<ReduceAxis>) -> Result<DeviceArray<i64, IxDyn>>;

        /// The index along an axis of the smallest element of each lane that is not NaN; -1 for
        /// a lane of NaN only.
        fn nanargmin_axis(&self, axis: impl Into<ReduceAxis>) -> Result<DeviceArray<i64, IxDyn>>;
    }
}

/// The NaN-ignoring reductions on a stream (`a.on(&stream).nansum()`): the one body of each;
/// the host waits for the ones that return a value.
impl<S: Storage<Elem: Element>, D: Dimension> OnStream<'_, &DeviceArrayBase<S, D>> {
    /// The index `op` picks over every axis: a lane of NaN only has none.
    fn nan_index(&self, operation: &'static str, op: NanOp) -> Result<usize> {
        let i = self.over_all::<i64>(operation, op)?;
        usize::try_from(i).map_err(|_| ArrayShapeError::AllNanReduction { operation }.into())
    }

    stream_forms! {
        fn nansum() -> S::Elem = over_all(NanOp::Sum);
        fn nansum_as[A: Element]() -> A = over_all(NanOp::Sum);
        fn nansum_axis(axis: impl Into<ReduceAxis>) -> Along<S::Elem> = over_axis(NanOp::Sum, axis);
        fn nanprod() -> S::Elem = over_all(NanOp::Prod);
        fn nanprod_axis(axis: impl Into<ReduceAxis>) -> Along<S::Elem> = over_axis(NanOp::Prod, axis);
        fn nanmean() -> Mean<S> where [S::Elem: MeanType] = over_all(NanOp::Mean);
        fn nanmean_axis(axis: impl Into<ReduceAxis>) -> Along<Mean<S>> where [S::Elem: MeanType] =
            over_axis(NanOp::Mean, axis);
        fn nanvar(ddof: u64) -> Mean<S> where [S::Elem: MeanType] = over_all(NanOp::Var { ddof, root: false });
        fn nanvar_axis(axis: impl Into<ReduceAxis>, ddof: u64) -> Along<Mean<S>> where [S::Elem: MeanType] =
            over_axis(NanOp::Var { ddof, root: false }, axis);
        fn nanstd(ddof: u64) -> Mean<S> where [S::Elem: MeanType] = over_all(NanOp::Var { ddof, root: true });
        fn nanstd_axis(axis: impl Into<ReduceAxis>, ddof: u64) -> Along<Mean<S>> where [S::Elem: MeanType] =
            over_axis(NanOp::Var { ddof, root: true }, axis);
        fn nanmax() -> S::Elem = over_all(NanOp::Max);
        fn nanmin() -> S::Elem = over_all(NanOp::Min);
        fn nanmax_axis(axis: impl Into<ReduceAxis>) -> Along<S::Elem> = over_axis(NanOp::Max, axis);
        fn nanmin_axis(axis: impl Into<ReduceAxis>) -> Along<S::Elem> = over_axis(NanOp::Min, axis);
        fn nanargmax() -> usize = nan_index(NanOp::ArgMax);
        fn nanargmin() -> usize = nan_index(NanOp::ArgMin);
        fn nanargmax_axis(axis: impl Into<ReduceAxis>) -> Along<i64> = over_axis(NanOp::ArgMax, axis);
        fn nanargmin_axis(axis: impl Into<ReduceAxis>) -> Along<i64> = over_axis(NanOp::ArgMin, axis);
    }
}

/// The sources of every NaN-ignoring reduction for every real element type, in `variants`.
#[cfg(test)]
pub(crate) fn test_kernels(
    variants: &[crate::gpuarray::reduce::kernel::ReductionVariant],
) -> Vec<(String, Vec<String>)> {
    fn push<R: Element>(
        name: String,
        k: Arc<ReductionKernel<R>>,
        variants: &[crate::gpuarray::reduce::kernel::ReductionVariant],
        out: &mut Vec<(String, Vec<String>)>,
    ) {
        out.push((name, variants.iter().map(|&v| k.source(v)).collect()));
    }
    fn of<T: MeanType>(
        variants: &[crate::gpuarray::reduce::kernel::ReductionVariant],
        out: &mut Vec<(String, Vec<String>)>,
    ) {
        let name = std::any::type_name::<T>();
        for op in [NanOp::Sum, NanOp::Prod, NanOp::Max, NanOp::Min] {
            push(
                format!("{op:?} {name}"),
                nan_kernel::<T, T>(op, IndexWidth::I64).unwrap(),
                variants,
                out,
            );
        }
        push(
            format!("Sum as i64 {name}"),
            nan_kernel::<T, i64>(NanOp::Sum, IndexWidth::I64).unwrap(),
            variants,
            out,
        );
        for op in [NanOp::Mean, NanOp::Var { ddof: 1, root: true }] {
            push(
                format!("{op:?} {name}"),
                nan_kernel::<T, T::Mean>(op, IndexWidth::I64).unwrap(),
                variants,
                out,
            );
        }
        for op in [NanOp::ArgMax, NanOp::ArgMin] {
            for index in [IndexWidth::I32, IndexWidth::I64] {
                push(
                    format!("{op:?} {index:?} {name}"),
                    nan_kernel::<T, i64>(op, index).unwrap(),
                    variants,
                    out,
                );
            }
        }
    }
    let mut out = Vec::new();
    of::<i8>(variants, &mut out);
    of::<u8>(variants, &mut out);
    of::<i16>(variants, &mut out);
    of::<u16>(variants, &mut out);
    of::<half::f16>(variants, &mut out);
    of::<half::bf16>(variants, &mut out);
    of::<i32>(variants, &mut out);
    of::<u32>(variants, &mut out);
    of::<i64>(variants, &mut out);
    of::<u64>(variants, &mut out);
    of::<f32>(variants, &mut out);
    of::<f64>(variants, &mut out);
    of::<crate::gpuarray::elements::boolean::Bool>(variants, &mut out);
    out
}
