//! `sum`, `prod`, `mean`, `var`, `std`, `max`, `min`, `ptp`, `argmax`, `argmin` and `dot` on
//! arrays, over all axes or along one (with NumPy's `keepdims`: [`ReduceAxis`]), and
//! `any_axis`/`all_axis` (as [`Bool`]s), built on [`ReductionKernel`]. Each kernel is defined once per operation, element type and result type
//! for the process, and found again by that small key.
//!
//! NumPy's semantics, with these choices made explicit:
//! - `sum` and `prod` accumulate in the element type (integers wrap; NumPy widens integers
//!   narrower than `int64` to `int64` on Linux): [`sum_as`](DeviceArrayBase::sum_as) and
//!   [`prod_as`](DeviceArrayBase::prod_as) name the accumulator, e.g. `sum_as::<i64>()` for
//!   NumPy's result on `i32`, and [`sum_np`](DeviceArrayBase::sum_np),
//!   [`prod_np`](DeviceArrayBase::prod_np) (`reduce::sum_np`) are NumPy 2's defaults
//!   ([`SumType`](crate::gpuarray::SumType)). An empty sum is 0, an empty product 1.
//! - `mean`, `var` and `std` return NumPy's type ([`MeanType`]: the element type for the
//!   float types, `f64` for the integers and [`Bool`]), accumulated in `f64` for every element
//!   type and rounded once into it; `var` is Welford's (Chan's parallel merge), divided by
//!   `n - ddof` (NaN or infinity when that is not positive, as NumPy's warning case). The mean
//!   of an empty array is NaN.
//! - `max`/`min` propagate NaN; `argmax`/`argmin` give the first NaN's index, else the first
//!   extreme one. On an empty array (or an empty axis with lanes to fill) they are
//!   [`ArrayShapeError::EmptyReduction`], as NumPy raises.

use std::sync::Arc;

use gpu_cuda_source::Scalar;
use ndarray::{Dimension, IxDyn};

use crate::error::{ArgumentError, ArrayShapeError, Error, Result};
use crate::gpuarray::array::core::{DeviceArray, DeviceArrayBase, Storage};
use crate::gpuarray::array::on_stream::{on_legacy_stream, stream_forms, OnStream};
use crate::gpuarray::array::readback::read_back;
use crate::gpuarray::elements::boolean::Bool;
use crate::gpuarray::elements::cast;
use crate::gpuarray::elements::dtype::DType;
use crate::gpuarray::elements::element::Element;
use crate::gpuarray::elements::mean_type::MeanType;
use crate::gpuarray::kernels::args::KernelArg;
use crate::gpuarray::kernels::registry::{AnyDefinition, Definitions};
use crate::gpuarray::reduce::axis::ReduceAxis;
use crate::gpuarray::reduce::complex_kernels::{self, ComplexOp};
use crate::gpuarray::reduce::kernel::ReductionKernel;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Op {
    Sum,
    Prod,
    Dot,
    /// `sum(conj(x) * y)`: [`Op::Dot`] conjugating its first operand when it is complex.
    VDot,
    Max,
    Min,
    ArgMax,
    ArgMin,
    Mean,
    /// The variance with this `ddof`, its square root with `root`.
    Var {
        ddof: u64,
        root: bool,
    },
    /// `max - min` in one pass.
    Ptp,
    /// Whether any element is nonzero (NaN counts), as a [`Bool`].
    Any,
    /// Whether every element is nonzero, as a [`Bool`].
    All,
}

/// A reduction the stream forms run by its kernel: an [`Op`], or a NaN-ignoring one (`nan`).
pub(super) trait ReduceOp: Copy {
    /// Whether the operation has no neutral element, so that it refuses an empty array or
    /// lane (NumPy's "zero-size array to reduction operation ... which has no identity").
    fn needs_elements(self) -> bool;

    /// The kernel on elements of `T`, producing `R`, with `argmax`-style indices of `index`.
    fn kernel<T: Element, R: Element>(self, index: IndexWidth) -> Result<Arc<ReductionKernel<R>>>;
}

impl ReduceOp for Op {
    fn needs_elements(self) -> bool {
        matches!(self, Op::Max | Op::Min | Op::ArgMax | Op::ArgMin | Op::Ptp)
    }

    fn kernel<T: Element, R: Element>(self, index: IndexWidth) -> Result<Arc<ReductionKernel<R>>> {
        kernel_indexed::<T, R>(self, index)
    }
}

/// The C type of the index `argmax`/`argmin` carry with each value: `int` when every index
/// of the reduction fits it (half the accumulator of a 4-byte element, and one register to
/// move per step rather than two), else `long long`. Other operations carry none.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum IndexWidth {
    I32,
    I64,
}

impl IndexWidth {
    /// The narrowest width that holds every index below `count` (and the neutral's index,
    /// the type's maximum, above them all).
    pub(crate) fn for_count(count: usize) -> IndexWidth {
        if count <= i32::MAX as usize {
            IndexWidth::I32
        } else {
            IndexWidth::I64
        }
    }

    pub(crate) fn c_type(self) -> &'static str {
        match self {
            IndexWidth::I32 => "int",
            IndexWidth::I64 => "long long",
        }
    }

    /// The largest index, the neutral's (it loses every tie).
    pub(crate) fn c_max(self) -> &'static str {
        match self {
            IndexWidth::I32 => "2147483647",
            IndexWidth::I64 => "9223372036854775807ll",
        }
    }

    pub(crate) fn bytes(self) -> usize {
        match self {
            IndexWidth::I32 => 4,
            IndexWidth::I64 => 8,
        }
    }
}

/// A builtin kernel's key: the operation, the element type, the result type, and the index
/// width (`I64` for every operation but `argmax`/`argmin`).
/// The mean's type of `S`'s elements.
pub(super) type Mean<S> = <<S as Storage>::Elem as MeanType>::Mean;

/// The array of one reduction per lane along an axis.
pub(super) type Along<R> = DeviceArray<R, IxDyn>;

type OpKey = (Op, DType, DType, IndexWidth);
static KERNELS: Definitions<OpKey, AnyDefinition> = Definitions::new();

/// Welford's running (count, mean, M2) in `double` and Chan et al.'s merge of two of them
/// (`var`, `std` and their NaN-ignoring forms).
pub(super) const WELFORD: &str = "struct gpu_welford { double n; double mean; double m2; };\n\
__device__ __forceinline__ gpu_welford gpu_w(double n, double mean, double m2) { gpu_welford r; r.n = n; r.mean = mean; r.m2 = m2; return r; }\n\
__device__ __forceinline__ gpu_welford gpu_wmerge(gpu_welford a, gpu_welford b) {\n\
if (a.n == 0.0) return b;\nif (b.n == 0.0) return a;\n\
double n = a.n + b.n, d = b.mean - a.mean;\n\
return gpu_w(n, a.mean + d * (b.n / n), a.m2 + b.m2 + d * d * (a.n * (b.n / n))); }\n";

/// Where `argmax`/`argmin` rank NaN among the values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum NanRank {
    /// Before every number: the first NaN's index (NumPy's `argmax`).
    First,
    /// After every number: a NaN's index only where every element is NaN (`nanargmax`, whose
    /// result is -1 then).
    Last,
}

/// The `argmax` (`max`) or `argmin` kernel on `const T *x`: the index of the first extreme
/// element, NaN ranked by `nan`. Each element is read by `read` (an expression of `x`) as the C
/// type `v`, `v_bytes` wide; `neutral` is a value of it that every element beats or ties.
pub(super) fn arg_kernel<T: Element, R: Element>(
    (v, v_bytes, read): (&str, usize, &str),
    neutral: &str,
    max: bool,
    index: IndexWidth,
    nan: NanRank,
) -> Result<ReductionKernel<R>> {
    let (cmp, extreme) = if max { ('>', "max") } else { ('<', "min") };
    // What the rank of NaN changes: the kernel's name; of two values of which one is NaN, which
    // comes first (`bn`: `b` when it is the NaN; `an`: `b` when `a` is), and the same test in
    // a thread's walk in order; and the result.
    let (prefix, nan_first, walk_nan_first, post) = match nan {
        NanRank::First => ("", "bn", "b.v != b.v && a.v == a.v", "a.i"),
        NanRank::Last => (
            "nan",
            "an",
            "a.v != a.v && b.v == b.v",
            "a.v != a.v ? -1ll : (long long)a.i",
        ),
    };
    let ix = index.c_type();
    // The (value, index) and which of two comes first: NaN as ranked, then the extreme value,
    // then the lower index.
    let def = format!(
        "struct gpu_arg {{ {v} v; {ix} i; }};\n\
         __device__ __forceinline__ gpu_arg gpu_mk({v} v, long long i) {{ gpu_arg r; r.v = v; r.i = ({ix})i; return r; }}\n\
         __device__ __forceinline__ bool gpu_first(gpu_arg b, gpu_arg a) {{\n\
         bool bn = b.v != b.v, an = a.v != a.v;\n\
         if (bn != an) return {nan_first};\n\
         if (!bn && b.v != a.v) return b.v {cmp} a.v;\n\
         return b.i < a.i; }}\n"
    );
    let mut k = ReductionKernel::with_accumulator(
        &format!("{prefix}arg{extreme}"),
        &format!("const {} *x", T::c_name()),
        &format!("gpu_mk({read}, i)"),
        "gpu_first(b, a) ? b : a",
        &format!("gpu_mk({neutral}, {})", index.c_max()),
        // The struct's size: its wider member, twice (the other is padded to it).
        ("gpu_arg", &def, 2 * v_bytes.max(index.bytes())),
    )?
    .post_map(post)
    // Along a thread's rows in order: a later element wins only by value, or by its NaN's rank
    // (the lowest index of equals is the one already held).
    .in_order(&format!("(b.v {cmp} a.v || ({walk_nan_first})) ? b : a"));
    k.c_order_index = true;
    Ok(k)
}

/// Whether a sum or product of `T` into `R` is accumulated in `f32` ([`in_f32`]): the 16-bit
/// floats, as NumPy sums `float16`, into a result no wider than `f32` (a wider one, which the
/// caller named, is the accumulator).
pub(super) fn sums_in_f32<T: Element, R: Element>() -> bool {
    matches!(T::DTYPE, DType::F16 | DType::Bf16) && matches!(R::DTYPE, DType::F16 | DType::Bf16 | DType::F32)
}

/// The reduction of `map` over `arguments` combined by `combine` from `neutral` in `float`,
/// rounded once into `R`.
pub(super) fn in_f32<R: Element>(
    arguments: &str,
    map: &str,
    combine: &str,
    neutral: &str,
) -> Result<ReductionKernel<R>> {
    let k =
        ReductionKernel::with_accumulator("reduction", arguments, map, combine, neutral, ("float", "", 4))?;
    Ok(k.post_map(&cast::cast_c(Scalar::F32, R::SCALAR, "a")))
}

/// The kernel of `op` on elements of `T`, producing `R` (and accumulating in `R` for sums
/// and products); `argmax`/`argmin` with `long long` indices (see [`kernel_indexed`]).
pub(crate) fn kernel<T: Element, R: Element>(op: Op) -> Result<Arc<ReductionKernel<R>>> {
    kernel_indexed::<T, R>(op, IndexWidth::I64)
}

/// [`kernel`], with `argmax`/`argmin` carrying indices of `index` (which every index of the
/// reduction must fit: [`IndexWidth::for_count`]); other operations ignore it.
pub(crate) fn kernel_indexed<T: Element, R: Element>(
    op: Op,
    index: IndexWidth,
) -> Result<Arc<ReductionKernel<R>>> {
    let index = match op {
        Op::ArgMax | Op::ArgMin => index,
        _ => IndexWidth::I64,
    };
    KERNELS.get_or_try_insert_typed((op, T::DTYPE, R::DTYPE, index), || define::<T, R>(op, index))
}

/// The kernel of `op` on elements of `T`, producing `R`, with indices of `index`, written anew.
fn define<T: Element, R: Element>(op: Op, index: IndexWidth) -> Result<ReductionKernel<R>> {
    let (t, r) = (T::c_name(), R::c_name());
    // Complex `max`/`min`/`ptp` (lexicographic) and `var`/`std` (real): their own module.
    let complex_op = match op {
        Op::Max => Some(ComplexOp::Max),
        Op::Min => Some(ComplexOp::Min),
        Op::Ptp => Some(ComplexOp::Ptp),
        Op::Var { ddof, root } => Some(ComplexOp::Var { ddof, root }),
        _ => None,
    };
    if let Some(k) = complex_op.and_then(|c| complex_kernels::define::<T, R>(c, WELFORD)) {
        return k;
    }
    refuse_complex::<T, R>(op)?;
    let x = format!("const {t} *x");
    let xy = format!("{x}, const {t} *y");
    let sixteen_bit = matches!(T::DTYPE, DType::F16 | DType::Bf16);
    let wide = |x: &str| cast::cast_c(T::SCALAR, Scalar::F32, x);
    let as_r = cast::convert_c(T::DTYPE, R::DTYPE, "x");
    // Through the conversion table, which spells the 16-bit floats' conversions unambiguously.
    let as_f64 = cast::convert_c(T::DTYPE, DType::F64, "x");
    let nonzero = cast::convert_c(T::DTYPE, DType::Bool, "x");
    // NaN wins max and min, as in numpy (`a != a` is false for integers).
    let k = match op {
        // The 16-bit floats are summed in `f32` and rounded once, as NumPy sums `float16`.
        Op::Sum if sums_in_f32::<T, R>() => in_f32(&x, &wide("x"), "a + b", "0.0f")?,
        Op::Dot | Op::VDot if sixteen_bit => {
            in_f32(&xy, &format!("{} * {}", wide("x"), wide("y")), "a + b", "0.0f")?
        }
        Op::Sum => ReductionKernel::new(&x, &as_r, "a + b", &format!("({r})0"))?,
        Op::Prod => ReductionKernel::new(&x, &as_r, "a * b", &format!("({r})1"))?,
        Op::VDot if T::DTYPE.is_complex() => {
            ReductionKernel::new(&xy, "gpu_runtime::conj(x) * y", "a + b", &format!("({t})0"))?
        }
        // A real vdot is a dot (the same kernel text, kept under both keys).
        Op::Dot | Op::VDot => ReductionKernel::new(&xy, "x * y", "a + b", &format!("({t})0"))?,
        // A complex mean: accumulated in `R`, divided by the count in `R`'s part type. (Real
        // means, below, accumulate in `double` and round once into `R`.)
        Op::Mean if R::DTYPE.is_complex() => ReductionKernel::new(&x, &as_r, "a + b", &format!("({r})0"))?
            .post_map(&format!(
                "a / {}",
                cast::cast_c(Scalar::I64, R::DTYPE.part_scalar(), "n")
            )),
        Op::Max => ReductionKernel::new(&x, "x", "(a != a || a > b) ? a : b", T::C_LOWEST)?,
        Op::Min => ReductionKernel::new(&x, "x", "(a != a || a < b) ? a : b", T::C_HIGHEST)?,
        Op::ArgMax | Op::ArgMin => {
            let (max, start) = match op {
                Op::ArgMax => (true, T::C_LOWEST),
                _ => (false, T::C_HIGHEST),
            };
            let value = (t, std::mem::size_of::<T>(), "x");
            arg_kernel::<T, R>(value, start, max, index, NanRank::First)?
        }
        // Summed in `double` whatever the result type, rounded once into it.
        Op::Mean => {
            ReductionKernel::with_accumulator("reduction", &x, &as_f64, "a + b", "0.0", ("double", "", 8))?
                .post_map(&cast::cast_c(Scalar::F64, R::SCALAR, "a / (double)n"))
        }
        Op::Var { ddof, root } => {
            let var = format!("a.m2 / fmax(a.n - {ddof}.0, 0.0)");
            let post = if root { format!("sqrt({var})") } else { var };
            let post = cast::cast_c(Scalar::F64, R::SCALAR, &post);
            ReductionKernel::with_accumulator(
                "var",
                &x,
                // M2 starts at `x - x`: 0 for a finite element, NaN for NaN or inf, so that a
                // lane holding one (even alone) has a NaN variance as NumPy's.
                &format!("gpu_w(1.0, {as_f64}, ({as_f64}) - ({as_f64}))"),
                "gpu_wmerge(a, b)",
                "gpu_w(0.0, 0.0, 0.0)",
                ("gpu_welford", WELFORD, 24),
            )?
            .post_map(&post)
        }
        Op::Ptp => {
            let def = format!(
                "struct gpu_range {{ {t} lo; {t} hi; }};\n\
                 __device__ __forceinline__ gpu_range gpu_rg({t} lo, {t} hi) {{ gpu_range r; r.lo = lo; r.hi = hi; return r; }}\n"
            );
            ReductionKernel::with_accumulator(
                "ptp",
                &x,
                "gpu_rg(x, x)",
                "gpu_rg((a.lo != a.lo || a.lo < b.lo) ? a.lo : b.lo, (a.hi != a.hi || a.hi > b.hi) ? a.hi : b.hi)",
                &format!("gpu_rg({}, {})", T::C_HIGHEST, T::C_LOWEST),
                ("gpu_range", &def, 2 * std::mem::size_of::<T>()),
            )?
            .post_map(&format!("({t})(a.hi - a.lo)"))
        }
        Op::Any => ReductionKernel::new(&x, &nonzero, "a || b", "false")?,
        Op::All => ReductionKernel::new(&x, &nonzero, "a && b", "true")?,
    };
    Ok(k)
}

/// The reductions of a complex element not defined by `complex_kernels` (`argmax`/`argmin`;
/// `max`, `min`, `ptp` into another type; `var` into other than the part type; `mean`, `sum`,
/// `prod` into a real type): a typed error.
fn refuse_complex<T: Element, R: Element>(op: Op) -> Result<()> {
    let real_result_of_complex = T::DTYPE.is_complex() && !R::DTYPE.is_complex();
    let refused = match op {
        Op::Max | Op::Min | Op::ArgMax | Op::ArgMin | Op::Ptp | Op::Var { .. } => T::DTYPE.is_complex(),
        Op::Mean | Op::Sum | Op::Prod => real_result_of_complex,
        Op::Dot | Op::VDot | Op::Any | Op::All => false,
    };
    if refused {
        return Err(ArgumentError::UndefinedOnElement {
            kernel: "reduction".into(),
            function: format!("{op:?}").into(),
            element: T::c_name(),
        }
        .into());
    }
    Ok(())
}

fn empty_error(operation: &'static str) -> Error {
    ArrayShapeError::EmptyReduction { operation }.into()
}

impl<S: Storage<Elem: Element>, D: Dimension> DeviceArrayBase<S, D> {
    on_legacy_stream! {
        /// The sum of every element (0 for an empty array), accumulated in the element type
        /// (`f16` and `bf16` in `f32`, rounded once at the end), as PyCUDA's `gpuarray.sum`.
        /// [`sum_np`](Self::sum_np) is NumPy 2's `np.sum`, which sums `bool` and the integers
        /// narrower than 64 bits in `i64`/`u64`.
        fn sum(&self) -> Result<S::Elem>;

        /// The sum of every element converted to and accumulated in `A` (NumPy's `sum(dtype=)`;
        /// `sum_as::<i64>()` is NumPy's default for `i32` on Linux).
        fn sum_as[A: Element](&self) -> Result<A>;

        /// The sums along an axis (`usize`, or [`ReduceAxis::keepdims`]), as an array of the other
        /// axes.
        fn sum_axis(&self, axis: impl Into<ReduceAxis>) -> Result<DeviceArray<S::Elem, IxDyn>>;

        /// [`sum_axis`](Self::sum_axis) accumulated in `A`.
        fn sum_axis_as[A: Element](&self, axis: impl Into<ReduceAxis>)
            -> Result<DeviceArray<A, IxDyn>>;

        /// The product of every element (1 for an empty array), in the element type.
        fn prod(&self) -> Result<S::Elem>;

        /// The product of every element converted to and accumulated in `A`.
        fn prod_as[A: Element](&self) -> Result<A>;

        /// The products along an axis.
        fn prod_axis(&self, axis: impl Into<ReduceAxis>) -> Result<DeviceArray<S::Elem, IxDyn>>;

        /// The mean of every element (NaN for an empty array), in NumPy's type
        /// ([`MeanType`]: `f32` for `f32`, `f64` for integers), accumulated in `f64`.
        fn mean(&self) -> Result<<S::Elem as MeanType>::Mean> where [S::Elem: MeanType];

        /// The means along an axis (NaN for lanes of an empty axis), in NumPy's type
        /// ([`MeanType`]).
        fn mean_axis(&self, axis: impl Into<ReduceAxis>)
            -> Result<DeviceArray<<S::Elem as MeanType>::Mean, IxDyn>>
            where [S::Elem: MeanType];

        /// The variance of every element, `sum((x - mean)^2) / (n - ddof)` (NumPy's `var(ddof=)`;
        /// 0 is the population variance, 1 the sample variance), in NumPy's type ([`MeanType`]),
        /// accumulated in `f64`.
        fn var(&self, ddof: u64) -> Result<<S::Elem as MeanType>::Mean> where [S::Elem: MeanType];

        /// The variances along an axis, in NumPy's type ([`MeanType`]).
        fn var_axis(&self, axis: impl Into<ReduceAxis>, ddof: u64)
            -> Result<DeviceArray<<S::Elem as MeanType>::Mean, IxDyn>>
            where [S::Elem: MeanType];

        /// The standard deviation, the square root of [`var`](Self::var) (taken in `f64`), in
        /// NumPy's type ([`MeanType`]).
        fn std(&self, ddof: u64) -> Result<<S::Elem as MeanType>::Mean> where [S::Elem: MeanType];

        /// The standard deviations along an axis, in NumPy's type ([`MeanType`]).
        fn std_axis(&self, axis: impl Into<ReduceAxis>, ddof: u64)
            -> Result<DeviceArray<<S::Elem as MeanType>::Mean, IxDyn>>
            where [S::Elem: MeanType];

        /// The sum of the products of the elements of two arrays of the same shape (any
        /// layouts): the dot product of vectors, `(a * b).sum()` of any arrays.
        fn dot[S2: Storage<Elem = S::Elem>, D2: Dimension](&self, other: &DeviceArrayBase<S2, D2>)
            -> Result<S::Elem>;
    }

    /// The sum of `conj(self) * other` over two arrays of the same shape (any layouts),
    /// conjugating the first operand when the elements are complex: what `vdot` reduces.
    pub(crate) fn conj_dot<S2: Storage<Elem = S::Elem>, D2: Dimension>(
        &self,
        other: &DeviceArrayBase<S2, D2>,
    ) -> Result<S::Elem> {
        let k = kernel::<S::Elem, S::Elem>(Op::VDot)?;
        read_back(self.context(), None, |out| {
            k.reduce_into([KernelArg::input(self), KernelArg::input(other)], out)
        })
    }

    on_legacy_stream! {
        /// The mean of every element returned as an `A` (NumPy's `mean(dtype=)`; a real mean is
        /// accumulated in `f64` and rounded once into `A`, a complex one accumulated in `A`):
        /// `mean_as::<Complex64>()` is the mean of a complex array (complex elements have no
        /// [`MeanType`](crate::gpuarray::MeanType), so [`mean`](Self::mean) does not take
        /// them). NaN parts for an empty array. A complex array's mean into a real `A` is
        /// refused with a typed error.
        fn mean_as[A: Element](&self) -> Result<A>;

        /// The means along an axis, given as `A` (accumulated as [`mean_as`](Self::mean_as)
        /// says).
        fn mean_axis_as[A: Element](&self, axis: impl Into<ReduceAxis>)
            -> Result<DeviceArray<A, IxDyn>>;

        /// The largest element (NaN if there is one); an error for an empty array.
        fn max(&self) -> Result<S::Elem>;

        /// The smallest element (NaN if there is one); an error for an empty array.
        fn min(&self) -> Result<S::Elem>;

        /// The largest elements along an axis; an error when that axis is empty.
        fn max_axis(&self, axis: impl Into<ReduceAxis>) -> Result<DeviceArray<S::Elem, IxDyn>>;

        /// The smallest elements along an axis; an error when that axis is empty.
        fn min_axis(&self, axis: impl Into<ReduceAxis>) -> Result<DeviceArray<S::Elem, IxDyn>>;

        /// The flat index (in C order) of the largest element, the first one on a tie (a NaN
        /// counts as largest, as in numpy); an error for an empty array.
        fn argmax(&self) -> Result<usize>;

        /// The flat index (in C order) of the smallest element, the first one on a tie (a NaN
        /// counts as smallest, as in numpy); an error for an empty array.
        fn argmin(&self) -> Result<usize>;

        /// The index along an axis of the largest element of each lane.
        fn argmax_axis(&self, axis: impl Into<ReduceAxis>) -> Result<DeviceArray<i64, IxDyn>>;

        /// The index along an axis of the smallest element of each lane.
        fn argmin_axis(&self, axis: impl Into<ReduceAxis>) -> Result<DeviceArray<i64, IxDyn>>;

        /// The range of the elements, `max - min` (NumPy's `ptp`; NaN if there is one; integers
        /// wrap, as in NumPy), in one pass; an error for an empty array.
        fn ptp(&self) -> Result<S::Elem>;

        /// The ranges along an axis; an error when that axis is empty.
        fn ptp_axis(&self, axis: impl Into<ReduceAxis>) -> Result<DeviceArray<S::Elem, IxDyn>>;

        /// Whether any element along an axis is nonzero (NaN counts, as in NumPy), as [`Bool`]s;
        /// an empty lane is false.
        fn any_axis(&self, axis: impl Into<ReduceAxis>) -> Result<DeviceArray<Bool, IxDyn>>;

        /// Whether every element along an axis is nonzero, as [`Bool`]s; an empty lane is true.
        fn all_axis(&self, axis: impl Into<ReduceAxis>) -> Result<DeviceArray<Bool, IxDyn>>;
    }
}

/// The reductions on a stream (`a.on(&stream).sum()`): the one body of each; the host waits
/// for the ones that return a value.
impl<S: Storage<Elem: Element>, D: Dimension> OnStream<'_, &DeviceArrayBase<S, D>> {
    /// Reduces over every axis with `op`, producing `R` (`argmax`/`argmin` index every
    /// element: `int` indices when the count fits).
    fn reduce_all<R: Element>(&self, op: impl ReduceOp) -> Result<R> {
        let k = op.kernel::<S::Elem, R>(IndexWidth::for_count(self.target.len()))?;
        read_back(self.target.context(), self.stream, |out| {
            OnStream::new(&*k, self.stream).reduce_into([KernelArg::input(self.target)], out)
        })
    }

    /// Reduces along `axis` with `op`, producing `R`, in the `axis`'s form (`argmax`/`argmin`
    /// index along the axis: `int` indices when its length fits).
    pub(super) fn reduce_along<R: Element>(
        &self,
        op: impl ReduceOp,
        axis: ReduceAxis,
    ) -> Result<DeviceArray<R, IxDyn>> {
        let m = self.target.shape().get(axis.axis).copied().unwrap_or(0);
        let k = op.kernel::<S::Elem, R>(IndexWidth::for_count(m))?;
        let out = OnStream::new(&*k, self.stream).reduce_axis([KernelArg::input(self.target)], axis.axis)?;
        axis.shape_result(out)
    }

    /// Reduces over every axis with `op` for the stream form `name`: the operations with no
    /// neutral element refuse an empty array ([`ArrayShapeError::EmptyReduction`]).
    pub(super) fn over_all<R: Element>(&self, name: &'static str, op: impl ReduceOp) -> Result<R> {
        if op.needs_elements() {
            self.target.nonempty(name)?;
        }
        self.reduce_all(op)
    }

    /// Reduces along `axis` with `op` for the stream form `name`, as [`Self::over_all`].
    pub(super) fn over_axis<R: Element>(
        &self,
        name: &'static str,
        op: impl ReduceOp,
        axis: impl Into<ReduceAxis>,
    ) -> Result<Along<R>> {
        let axis = axis.into();
        if op.needs_elements() {
            self.target.nonempty_axis(name, axis.axis)?;
        }
        self.reduce_along(op, axis)
    }

    /// The index `op` (`ArgMax`, `ArgMin`) picks over every axis, for the stream form `name`.
    fn index_over_all(&self, name: &'static str, op: Op) -> Result<usize> {
        Ok(self.over_all::<i64>(name, op)? as usize)
    }

    stream_forms! {
        fn sum() -> S::Elem = over_all(Op::Sum);
        fn sum_as[A: Element]() -> A = over_all(Op::Sum);
        fn sum_axis(axis: impl Into<ReduceAxis>) -> Along<S::Elem> = over_axis(Op::Sum, axis);
        fn sum_axis_as[A: Element](axis: impl Into<ReduceAxis>) -> Along<A> = over_axis(Op::Sum, axis);
        fn prod() -> S::Elem = over_all(Op::Prod);
        fn prod_as[A: Element]() -> A = over_all(Op::Prod);
        fn prod_axis(axis: impl Into<ReduceAxis>) -> Along<S::Elem> = over_axis(Op::Prod, axis);
        fn mean() -> Mean<S> where [S::Elem: MeanType] = over_all(Op::Mean);
        fn mean_axis(axis: impl Into<ReduceAxis>) -> Along<Mean<S>> where [S::Elem: MeanType] =
            over_axis(Op::Mean, axis);
        fn mean_as[A: Element]() -> A = over_all(Op::Mean);
        fn mean_axis_as[A: Element](axis: impl Into<ReduceAxis>) -> Along<A> = over_axis(Op::Mean, axis);
        fn var(ddof: u64) -> Mean<S> where [S::Elem: MeanType] = over_all(Op::Var { ddof, root: false });
        fn var_axis(axis: impl Into<ReduceAxis>, ddof: u64) -> Along<Mean<S>> where [S::Elem: MeanType] =
            over_axis(Op::Var { ddof, root: false }, axis);
        fn std(ddof: u64) -> Mean<S> where [S::Elem: MeanType] = over_all(Op::Var { ddof, root: true });
        fn std_axis(axis: impl Into<ReduceAxis>, ddof: u64) -> Along<Mean<S>> where [S::Elem: MeanType] =
            over_axis(Op::Var { ddof, root: true }, axis);
        fn max() -> S::Elem = over_all(Op::Max);
        fn min() -> S::Elem = over_all(Op::Min);
        fn max_axis(axis: impl Into<ReduceAxis>) -> Along<S::Elem> = over_axis(Op::Max, axis);
        fn min_axis(axis: impl Into<ReduceAxis>) -> Along<S::Elem> = over_axis(Op::Min, axis);
        fn argmax() -> usize = index_over_all(Op::ArgMax);
        fn argmin() -> usize = index_over_all(Op::ArgMin);
        fn argmax_axis(axis: impl Into<ReduceAxis>) -> Along<i64> = over_axis(Op::ArgMax, axis);
        fn argmin_axis(axis: impl Into<ReduceAxis>) -> Along<i64> = over_axis(Op::ArgMin, axis);
        fn ptp() -> S::Elem = over_all(Op::Ptp);
        fn ptp_axis(axis: impl Into<ReduceAxis>) -> Along<S::Elem> = over_axis(Op::Ptp, axis);
        fn any_axis(axis: impl Into<ReduceAxis>) -> Along<Bool> = over_axis(Op::Any, axis);
        fn all_axis(axis: impl Into<ReduceAxis>) -> Along<Bool> = over_axis(Op::All, axis);
    }

    /// [`dot`](DeviceArrayBase::dot) on this stream.
    pub fn dot<S2: Storage<Elem = S::Elem>, D2: Dimension>(
        &self,
        other: &DeviceArrayBase<S2, D2>,
    ) -> Result<S::Elem> {
        let k = kernel::<S::Elem, S::Elem>(Op::Dot)?;
        read_back(self.target.context(), self.stream, |out| {
            OnStream::new(&*k, self.stream)
                .reduce_into([KernelArg::input(self.target), KernelArg::input(other)], out)
        })
    }
}

impl<S: Storage<Elem: Element>, D: Dimension> DeviceArrayBase<S, D> {
    pub(super) fn nonempty(&self, operation: &'static str) -> Result<()> {
        if self.is_empty() {
            return Err(empty_error(operation));
        }
        Ok(())
    }

    pub(super) fn nonempty_axis(&self, operation: &'static str, axis: usize) -> Result<()> {
        let lanes: usize = self
            .shape()
            .iter()
            .enumerate()
            .filter(|&(k, _)| k != axis)
            .map(|(_, &d)| d)
            .product();
        match self.shape().get(axis) {
            // Lanes with no element and no neutral to give them.
            Some(0) if lanes > 0 => Err(empty_error(operation)),
            _ => Ok(()),
        }
    }
}

/// The sources of every builtin reduction for every element type, in `variants`, named.
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
    fn of<T: Element>(
        variants: &[crate::gpuarray::reduce::kernel::ReductionVariant],
        out: &mut Vec<(String, Vec<String>)>,
    ) {
        let name = std::any::type_name::<T>();
        for op in [Op::Sum, Op::Prod, Op::Dot, Op::Max, Op::Min] {
            push(
                format!("{op:?} {name}"),
                kernel::<T, T>(op).unwrap(),
                variants,
                out,
            );
        }
        push(
            format!("Sum as i64 {name}"),
            kernel::<T, i64>(Op::Sum).unwrap(),
            variants,
            out,
        );
        for op in [Op::ArgMax, Op::ArgMin] {
            for index in [IndexWidth::I32, IndexWidth::I64] {
                push(
                    format!("{op:?} {index:?} {name}"),
                    kernel_indexed::<T, i64>(op, index).unwrap(),
                    variants,
                    out,
                );
            }
        }
        push(
            format!("Ptp {name}"),
            kernel::<T, T>(Op::Ptp).unwrap(),
            variants,
            out,
        );
        for op in [Op::Any, Op::All] {
            push(
                format!("{op:?} {name}"),
                kernel::<T, Bool>(op).unwrap(),
                variants,
                out,
            );
        }
    }
    /// The moments, in NumPy's result type.
    fn moments_of<T: MeanType>(
        variants: &[crate::gpuarray::reduce::kernel::ReductionVariant],
        out: &mut Vec<(String, Vec<String>)>,
    ) {
        let name = std::any::type_name::<T>();
        for op in [Op::Mean, Op::Var { ddof: 1, root: true }] {
            push(
                format!("{op:?} {name}"),
                kernel::<T, T::Mean>(op).unwrap(),
                variants,
                out,
            );
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
    moments_of::<i8>(variants, &mut out);
    moments_of::<u8>(variants, &mut out);
    moments_of::<i16>(variants, &mut out);
    moments_of::<u16>(variants, &mut out);
    moments_of::<half::f16>(variants, &mut out);
    moments_of::<half::bf16>(variants, &mut out);
    moments_of::<i32>(variants, &mut out);
    moments_of::<u32>(variants, &mut out);
    moments_of::<i64>(variants, &mut out);
    moments_of::<u64>(variants, &mut out);
    moments_of::<f32>(variants, &mut out);
    moments_of::<f64>(variants, &mut out);
    moments_of::<Bool>(variants, &mut out);
    out
}
