//! Math on arrays: every function of PyCUDA's `cumath` (and NumPy's float ufuncs of one or two
//! operands), as array functions and as steps of a fused [`Expr`].
//!
//! Each function comes in three forms, generated from one table:
//! - `math::sin(x)?`: a new array (`x` an array, an [`Expr`] or a scalar: any [`Operand`]);
//! - `math::sin_into(x, &mut out)?`: into an existing array (NumPy's `out=`; `out` may be
//!   `x` itself through [`DeviceArrayBase::assign_expr`] for in place);
//! - `expr.sin()`: a step of an expression, fused with the rest into one kernel:
//!   `(&a * 2.0).sin().eval()?` runs `sinf(x0 * s0)` once over the elements.
//!
//! The first two run on the legacy default stream. On a stream, a function is a step of an
//! expression evaluated there (see [`OnStream`](crate::gpuarray::OnStream)):
//! `a.expr().sin().on(&stream).eval()?`, `.eval_into(&mut out)`; `frexp` and `modf`, of two
//! results, are `gpuarray::on(&stream).frexp(&a)?`.
//!
//! `f32` arrays use the `float` functions of CUDA (`sinf`, not `sin` in double), `f64` arrays
//! the `double` ones; both keep CUDA's documented error bounds (a few ulps); `f16` and `bf16`
//! arrays the `float` ones, each result rounded once to the 16-bit type (NumPy's `float16`
//! loops). The functions are defined on [`Float`] elements, and take integers and `bool` as
//! NumPy 2 does ([`ToInexact`], [`ToFloat`]): converted, in the same kernel, to `f16` (`bool`,
//! 8-bit integers), `f32` (16-bit) or `f64` (32- and 64-bit): `math::sqrt(&a_i32)?` is an `f64`
//! array. `floor`, `ceil`, `trunc`, `fix` and `round` take the floats, the integers and `bool`
//! ([`Round`]), an integer array unchanged, of its type, as NumPy 2's (`round` of a `bool` array
//! is `f16`, the others keep it `bool`, as NumPy 2.4's). `exp`, `log`, `log10`, `sqrt`, `sin`, `cos`, `tan`,
//! `sinh`, `cosh` and `tanh` are also defined on the complex types ([`Inexact`] elements, the
//! functions of `<gpu_runtime/complex.h>`), with `pow`, `==`/`!=`, `where_`, and the complex
//! functions [`conj`], [`real`], [`imag`], [`angle`] and [`complex_abs`] (`math_complex.rs`).
//!
//! `round` is NumPy's `round` with no decimals, which rounds halves to even: the same as
//! `rint`; [`around`] takes the decimals (and integers, as NumPy's does). `frexp` and `modf` give two arrays, as PyCUDA's give a tuple.
//!
//! Comparisons, logic, `where_`, `maximum`/`minimum`, `abs`, `pow`, `sign`, `clip`,
//! `remainder` and `floor_divide` are here too (written in `compare.rs`), and the bitwise
//! functions of `bool` and integer arrays, the shifts, `bitwise_count`, `gcd` and `lcm`
//! (written in `bitwise.rs`). `nextafter`, `sinc` (complex numbers too) and `i0` are NumPy's.
//!
//! ```no_run
//! use gpu_runtime::gpuarray::{math, DeviceArray};
//! use gpu_runtime::{ndarray::Array1, Context};
//! let ctx = Context::default()?;
//! let a = DeviceArray::from_ndarray(&ctx, &Array1::<f32>::linspace(0.0, 1.0, 1000))?;
//! let s = math::sin(&a)?;
//! let fused = (&a * 2.0).exp().eval()?;
//! let (mantissa, exponent) = math::frexp(&a)?;
//! # Ok::<(), gpu_runtime::Error>(())
//! ```

use std::sync::Arc;

use gpu_cuda_source::Scalar;
use ndarray::{Dimension, IxDyn};

use crate::driver::context::core::Context;
use crate::driver::stream::Stream;
use crate::error::Result;
use crate::gpuarray::array::core::{DeviceArray, DeviceArrayBase, Storage, StorageMut};
use crate::gpuarray::array::on_stream::OnStream;
use crate::gpuarray::elements::boolean::Bool;
use crate::gpuarray::elements::cast;
use crate::gpuarray::elements::dtype::DType;
use crate::gpuarray::elements::element::Element;
use crate::gpuarray::elements::promotion::Promote;
use crate::gpuarray::expr::core::{call_steps, operand_fns, BinOp, Expr, Operand};
use crate::gpuarray::expr::func::{Func, Math2Fn, MathFn};
use crate::gpuarray::kernels::args::KernelArg;
use crate::gpuarray::kernels::elementwise::ElementwiseKernel;
use crate::gpuarray::kernels::registry::Definitions;

pub use crate::gpuarray::elements::inexact::{Inexact, ToInexact};
pub use crate::gpuarray::expr::bitwise::{
    bitwise_and, bitwise_and_into, bitwise_count, bitwise_count_into, bitwise_or, bitwise_or_into,
    bitwise_xor, bitwise_xor_into, gcd, gcd_into, invert, invert_into, lcm, lcm_into, left_shift,
    left_shift_into, right_shift, right_shift_into,
};
pub use crate::gpuarray::expr::compare::{
    abs, absolute, clip, divmod, equal, floor_divide, fmax, fmin, greater, greater_equal, less, less_equal,
    logical_and, logical_not, logical_or, logical_xor, maximum, minimum, not_equal, pow, power, remainder,
    sign, where_,
};
pub use crate::gpuarray::expr::math_complex::{
    angle, angle_into, complex_abs, complex_abs_into, conj, conj_into, imag, imag_into, real, real_if_close,
    real_into, ComplexElement,
};
pub use crate::gpuarray::expr::rounding::{around, around_into, Round};
pub use crate::gpuarray::reduce::logic::{all, any};

/// The floating-point elements the math functions are defined on: `f16` and `bf16` (each
/// computed in `float` and rounded once to the 16-bit type, as NumPy's `float16` loops do),
/// `f32` and `f64`.
///
/// Sealed: each type's C functions are named in the crate's table.
pub trait Float: Inexact + Round<Rounded = Self> {}

impl Float for half::f16 {}
impl Float for half::bf16 {}
impl Float for f32 {}
impl Float for f64 {}

/// An element type the float-only math functions take (`expm1`, `log2`, `asin`, `rint`, ...),
/// and the [`Float`] NumPy 2 computes them in: a float itself; `bool` and the 8-bit integers
/// `f16`; the 16-bit integers `f32`; the 32- and 64-bit ones `f64` (`expm1` of an `i16`
/// array is an `f32` array, as `np.expm1` gives). `floor`, `ceil`, `trunc`, `fix` and `round`
/// are not among them: NumPy 2 keeps an integer array's type there ([`Round`]).
pub trait ToFloat: ToInexact {
    /// The type the function computes in and returns.
    type Float: Float;
}

impl<T: Float> ToFloat for T {
    type Float = T;
}

/// `ToInexact` and `ToFloat` of the integers and `bool`: NumPy 2's loop types.
macro_rules! to_float {
    ($($t:ty => $f:ty),*) => {$(
        impl ToInexact for $t {
            type Inexact = $f;
        }
        impl ToFloat for $t {
            type Float = $f;
        }
    )*};
}
to_float!(
    Bool => half::f16, i8 => half::f16, u8 => half::f16, i16 => f32, u16 => f32,
    i32 => f64, u32 => f64, i64 => f64, u64 => f64
);

/// An element type `sinc` takes, and the type NumPy's `sinc` returns for it: a float or
/// complex type itself; `f64` for every integer type and `bool` (NumPy's `sinc` is written in
/// Python, `sin(y) / y` with `y = pi * x`, which makes any integer a `float64`).
pub trait SincType: Element {
    /// The type `sinc` computes in and returns.
    type Sinc: Inexact;
}

impl<T: Inexact> SincType for T {
    type Sinc = T;
}

macro_rules! sinc_f64 {
    ($($t:ty),*) => {$(
        impl SincType for $t {
            type Sinc = f64;
        }
    )*};
}
sinc_f64!(Bool, i8, u8, i16, u16, i32, u32, i64, u64);

/// The array forms of each function of one operand (see the module documentation).
macro_rules! unary_fns {
    ($bound:ident; $($name:ident $into:ident => $out:ty, $doc:literal;)*) => {$(
        #[doc = concat!($doc, " of each element, into a new array (the shape of `x`'s arrays; of an array's own dimension type, so that `a = ", stringify!($name), "(&a)?` type-checks, `IxDyn` for an expression or a scalar), on the legacy default stream (on a stream: `a.expr().", stringify!($name), "().on(&stream).eval()`).")]
        pub fn $name<'a, T: $bound, X: Operand<'a, T>>(x: X) -> Result<DeviceArray<$out, X::Dim>> {
            x.into_expr().$name().eval()?.into_dimensionality()
        }
        #[doc = concat!("[`", stringify!($name), "`] into `out` (of `x`'s shape, any layout; NumPy's `out=`), on the legacy default stream.")]
        pub fn $into<'a, T: $bound, S: StorageMut<Elem = $out>, D: Dimension>(
            x: impl Operand<'a, T>,
            out: &mut DeviceArrayBase<S, D>,
        ) -> Result<()> {
            x.into_expr().$name().eval_into(out)
        }
    )*};
}

/// The array forms of each function of two operands of one type.
macro_rules! binary_fns {
    ($($name:ident $into:ident, $doc:literal;)*) => {$(
        #[doc = concat!($doc, ", element by element, into a new array, on the legacy default stream. Each operand is an array, an [`Expr`] or a scalar.")]
        pub fn $name<'a, T: Float>(x: impl Operand<'a, T>, y: impl Operand<'a, T>) -> Result<DeviceArray<T, IxDyn>> {
            x.into_expr().$name(y).eval()
        }
        #[doc = concat!("[`", stringify!($name), "`] into `out` (NumPy's `out=`).")]
        pub fn $into<'a, T: Float, S: StorageMut<Elem = T>, D: Dimension>(
            x: impl Operand<'a, T>,
            y: impl Operand<'a, T>,
            out: &mut DeviceArrayBase<S, D>,
        ) -> Result<()> {
            x.into_expr().$name(y).eval_into(out)
        }
    )*};
}

/// The expression steps of one operand: `Expr::sin`, ... (`$out` the type computed in, and
/// each operand converted to it first).
macro_rules! unary_methods {
    ($out:ty; $($name:ident $f:ident $doc:literal;)*) => {$(
        #[doc = concat!($doc, " of each element, as a step of this expression (no kernel of its own; an integer or `bool` operand is converted to the float NumPy 2 computes it in, in the same kernel).")]
        pub fn $name(self) -> Expr<'a, $out> {
            Expr::call(Func::Math(MathFn::$f), vec![self.promoted::<$out>()])
        }
    )*};
}

impl<'a, T: ToInexact> Expr<'a, T> {
    unary_methods!(T::Inexact;
        exp Exp "`e^x`"; log Log "The natural logarithm (principal branch for complex numbers)";
        log10 Log10 "The base-10 logarithm"; sqrt Sqrt "The square root (principal branch for complex numbers)";
        sin Sin "The sine"; cos Cos "The cosine"; tan Tan "The tangent";
        sinh Sinh "The hyperbolic sine"; cosh Cosh "The hyperbolic cosine";
        tanh Tanh "The hyperbolic tangent";
        expm1 Expm1 "`e^x - 1`, exact near 0 (complex too: `(expm1(x) cos y - 2 sin²(y/2)) + i e^x sin y`)";
        exp2 Exp2 "`2^x` (complex: `exp(x ln 2)`)";
        log1p Log1p "`ln(1 + x)`, exact near 0 (complex too)";
        log2 Log2 "The base-2 logarithm (principal branch for complex numbers)";
    );

    /// Whether each element is NaN (a complex number: either part; an integer: never), as a
    /// step of this expression.
    pub fn isnan(self) -> Expr<'a, Bool> {
        Expr::call(Func::Predicate("isnan"), vec![self.promoted::<T::Inexact>()])
    }

    /// Whether each element is an infinity (a complex number: either part, as NumPy's).
    pub fn isinf(self) -> Expr<'a, Bool> {
        Expr::call(Func::Predicate("isinf"), vec![self.promoted::<T::Inexact>()])
    }

    /// Whether each element is neither NaN nor an infinity (a complex number: both parts).
    pub fn isfinite(self) -> Expr<'a, Bool> {
        Expr::call(Func::Predicate("isfinite"), vec![self.promoted::<T::Inexact>()])
    }
}

impl<'a, T: ToFloat> Expr<'a, T> {
    unary_methods!(T::Float;
        fabs Fabs "`|x|`";
        cbrt Cbrt "The cube root";
        asin Asin "The arc sine";
        acos Acos "The arc cosine"; atan Atan "The arc tangent";
        asinh Asinh "The inverse hyperbolic sine"; acosh Acosh "The inverse hyperbolic cosine";
        atanh Atanh "The inverse hyperbolic tangent";
        rint Rint "The nearest integer, halves to even";
    );

    /// Whether each element's sign bit is set (true for `-0.0` and negative NaNs; for an
    /// integer, whether it is negative).
    pub fn signbit(self) -> Expr<'a, Bool> {
        Expr::call(Func::Predicate("signbit"), vec![self.promoted::<T::Float>()])
    }

    /// Degrees to radians, `x * (π / 180)` (NumPy's `deg2rad`, `radians`), as a step of this
    /// expression.
    pub fn deg2rad(self) -> Expr<'a, T::Float> {
        self.scaled(std::f64::consts::PI / 180.0)
    }

    /// Radians to degrees, `x * (180 / π)` (NumPy's `rad2deg`, `degrees`).
    pub fn rad2deg(self) -> Expr<'a, T::Float> {
        self.scaled(180.0 / std::f64::consts::PI)
    }

    /// `x * factor` in `T::Float`; for `f16` and `bf16` in `float` and rounded once, as
    /// NumPy's `float16` loops compute (the factor rounded to 16 bits first would be off by
    /// an ulp of the result for about a third of the inputs).
    fn scaled(self, factor: f64) -> Expr<'a, T::Float> {
        let x = Expr::<T::Float>::from_untyped(self.promoted::<T::Float>());
        if matches!(<T::Float as Element>::DTYPE, DType::F16 | DType::Bf16) {
            (x.cast::<f32>() * Expr::scalar(factor).cast::<f32>()).cast::<T::Float>()
        } else {
            x * Expr::scalar(factor).cast::<T::Float>()
        }
    }
}

impl<'a, T: Element> Expr<'a, T> {
    /// `1 / x` in `x`'s own type (NumPy's `reciprocal`): integers divide toward zero, as
    /// NumPy's C loop does (`reciprocal(2)` is 0, of `-1` is `-1`; of 0 it is 0 here, where
    /// NumPy's is undefined).
    pub fn reciprocal(self) -> Expr<'a, T> {
        Expr::scalar(1.0f64).cast::<T>().bin(BinOp::Div, self)
    }

    /// `-x` (NumPy's `negative`; unsigned integers wrap), as [`Neg`](std::ops::Neg).
    pub fn negative(self) -> Expr<'a, T> {
        -self
    }

    /// `x` itself (NumPy's `positive`, `+x`).
    pub fn positive(self) -> Expr<'a, T> {
        self
    }
}

impl<'a, T: SincType> Expr<'a, T> {
    /// NumPy's normalized `sinc`: `sin(πx) / (πx)`, exactly 1 at 0 (complex numbers too), as
    /// a step of this expression; an integer or `bool` operand is converted to `f64`, as
    /// NumPy's `sinc` gives.
    pub fn sinc(self) -> Expr<'a, T::Sinc> {
        Expr::call(Func::Math(MathFn::Sinc), vec![self.promoted::<T::Sinc>()])
    }
}

impl<'a, T: Round> Expr<'a, T> {
    /// `f` of a float; an integer is its own ceiling, floor, ... (NumPy 2 keeps its type).
    fn integral_step(self, f: MathFn) -> Expr<'a, T> {
        if T::DTYPE.is_bool_or_integer() {
            self
        } else {
            Expr::call(Func::Math(f), vec![self.untyped()])
        }
    }

    /// The ceiling of each element (an integer's is itself), as a step of this expression.
    pub fn ceil(self) -> Expr<'a, T> {
        self.integral_step(MathFn::Ceil)
    }

    /// The floor of each element (an integer's is itself), as a step of this expression.
    pub fn floor(self) -> Expr<'a, T> {
        self.integral_step(MathFn::Floor)
    }

    /// NumPy's `round` (no decimals) of each element: the nearest integer, halves to even, as
    /// `rint` (an integer is itself; a `bool` becomes `f16`, as NumPy 2's), as a step of this
    /// expression.
    pub fn round(self) -> Expr<'a, T::Rounded> {
        T::rounded(self, 0)
    }

    /// The integer part of each element, toward zero (an integer's is itself), as a step of
    /// this expression.
    pub fn trunc(self) -> Expr<'a, T> {
        self.integral_step(MathFn::Trunc)
    }

    /// NumPy's `fix`, rounding toward zero: [`trunc`](Self::trunc).
    pub fn fix(self) -> Expr<'a, T> {
        self.trunc()
    }
}

impl<'a, T: Float> Expr<'a, T> {
    unary_methods!(T;
        i0 I0 "The modified Bessel function of the first kind and order 0 (NumPy's `i0`)";
    );

    call_steps! {
        /// C's `fmod(self, y)`: the remainder with the sign of `self` (PyCUDA's `cumath.fmod`;
        /// NumPy's `%` is [`remainder`](Self::remainder)).
        fmod(y: T) -> T = Func::Math2(Math2Fn::Fmod);
        /// `atan2(self, x)`: the angle of the point `(x, self)`.
        atan2(x: T) -> T = Func::Math2(Math2Fn::Atan2);
        /// `sqrt(self² + y²)` without intermediate overflow.
        hypot(y: T) -> T = Func::Math2(Math2Fn::Hypot);
        /// The magnitude of `self` with the sign of `y`.
        copysign(y: T) -> T = Func::Math2(Math2Fn::Copysign);
        /// `ln(e^self + e^y)`, without overflow or underflow (NumPy's `logaddexp`: equal operands
        /// give `self + ln 2`, so two infinities of one sign stay that infinity).
        logaddexp(y: T) -> T = Func::Math2(Math2Fn::Logaddexp);
        /// `log2(2^self + 2^y)`, without overflow or underflow (NumPy's `logaddexp2`).
        logaddexp2(y: T) -> T = Func::Math2(Math2Fn::Logaddexp2);
        /// The Heaviside step: 0 where `self` is negative, `h0` where it is zero, 1 where it is
        /// positive, NaN where it is NaN (NumPy's `heaviside(x, h0)`).
        heaviside(h0: T) -> T = Func::Math2(Math2Fn::Heaviside);
        /// The next number of `T` after `self` toward `y` (NumPy's `nextafter`; `f16` and `bf16`
        /// step by their own spacing).
        nextafter(y: T) -> T = Func::Math2(Math2Fn::Nextafter);
        /// `self * 2^e`, `e` an `i32` array, expression or scalar (PyCUDA's `cumath.ldexp`).
        ldexp(e: i32) -> T = Func::Ldexp;
    }
}

unary_fns!(ToInexact;
    exp exp_into => <T as ToInexact>::Inexact, "`e^x`";
    log log_into => <T as ToInexact>::Inexact, "The natural logarithm";
    log10 log10_into => <T as ToInexact>::Inexact, "The base-10 logarithm";
    sqrt sqrt_into => <T as ToInexact>::Inexact, "The square root";
    sin sin_into => <T as ToInexact>::Inexact, "The sine";
    cos cos_into => <T as ToInexact>::Inexact, "The cosine";
    tan tan_into => <T as ToInexact>::Inexact, "The tangent";
    sinh sinh_into => <T as ToInexact>::Inexact, "The hyperbolic sine";
    cosh cosh_into => <T as ToInexact>::Inexact, "The hyperbolic cosine";
    tanh tanh_into => <T as ToInexact>::Inexact, "The hyperbolic tangent";
    expm1 expm1_into => <T as ToInexact>::Inexact, "`e^x - 1`";
    exp2 exp2_into => <T as ToInexact>::Inexact, "`2^x`";
    log1p log1p_into => <T as ToInexact>::Inexact, "`ln(1 + x)`";
    log2 log2_into => <T as ToInexact>::Inexact, "The base-2 logarithm";
    isnan isnan_into => Bool, "Whether it is NaN,";
    isinf isinf_into => Bool, "Whether it is an infinity,";
    isfinite isfinite_into => Bool, "Whether it is finite,";
);

unary_fns!(ToFloat;
    fabs fabs_into => <T as ToFloat>::Float, "`|x|`";
    cbrt cbrt_into => <T as ToFloat>::Float, "The cube root";
    asin asin_into => <T as ToFloat>::Float, "The arc sine";
    acos acos_into => <T as ToFloat>::Float, "The arc cosine";
    atan atan_into => <T as ToFloat>::Float, "The arc tangent";
    asinh asinh_into => <T as ToFloat>::Float, "The inverse hyperbolic sine";
    acosh acosh_into => <T as ToFloat>::Float, "The inverse hyperbolic cosine";
    atanh atanh_into => <T as ToFloat>::Float, "The inverse hyperbolic tangent";
    rint rint_into => <T as ToFloat>::Float, "The nearest integer (halves to even)";
    signbit signbit_into => Bool, "Whether its sign bit is set,";
    deg2rad deg2rad_into => <T as ToFloat>::Float, "Degrees to radians (NumPy's `deg2rad`, `radians`)";
    rad2deg rad2deg_into => <T as ToFloat>::Float, "Radians to degrees (NumPy's `rad2deg`, `degrees`)";
);

unary_fns!(Element;
    reciprocal reciprocal_into => T, "`1 / x` in `x`'s type (NumPy's `reciprocal`; integers toward zero)";
    negative negative_into => T, "`-x` (NumPy's `negative`)";
    positive positive_into => T, "`x` (NumPy's `positive`)";
);

operand_fns! {
    /// `x ** y` computed in `f64` (complex numbers in `Complex64`) whatever the operands' type
    /// (NumPy's `float_power`), into a new array: `float_power(&a_i32, 0.5)` is an `f64` array.
    float_power[T: Promote<f64>](x: T, y: T) -> T::Output =
        x.into_expr().cast::<T::Output>().pow(y.into_expr().cast::<T::Output>()).eval();
}

unary_fns!(Round;
    ceil ceil_into => T, "The ceiling (an integer's is itself, of its type, as NumPy 2's)";
    floor floor_into => T, "The floor (an integer's is itself, of its type, as NumPy 2's)";
    round round_into => <T as Round>::Rounded, "NumPy's `round` with no decimals (halves to even, as `rint`; an integer is itself; `f16` of a `bool`, as NumPy 2's)";
    trunc trunc_into => T, "The integer part, toward zero (an integer's is itself)";
    fix fix_into => T, "NumPy's `fix`, rounding toward zero: the same as `trunc`";
);

unary_fns!(Float;
    i0 i0_into => T, "The modified Bessel function of the first kind and order 0 (NumPy's `i0`)";
);

unary_fns!(SincType;
    sinc sinc_into => T::Sinc, "NumPy's normalized `sinc`, `sin(πx) / (πx)` (1 at 0; complex numbers too; `f64` of integers and `bool`),";
);

binary_fns!(
    fmod fmod_into, "C's `fmod(x, y)` (the sign of `x`)";
    atan2 atan2_into, "`atan2(x, y)`: the angle of the point `(y, x)`";
    hypot hypot_into, "`sqrt(x² + y²)`";
    copysign copysign_into, "The magnitude of `x` with the sign of `y`";
    logaddexp logaddexp_into, "`ln(e^x + e^y)` without overflow (NumPy's `logaddexp`)";
    logaddexp2 logaddexp2_into, "`log2(2^x + 2^y)` without overflow (NumPy's `logaddexp2`)";
    heaviside heaviside_into, "The Heaviside step of `x`, `y` where `x` is zero (NumPy's `heaviside(x, h0)`)";
    nextafter nextafter_into, "The next number after `x` toward `y` (NumPy's `nextafter`; `f16` and `bf16` by their own spacing)";
);

operand_fns! {
    /// `x * 2^e` element by element (PyCUDA's `cumath.ldexp`), into a new array.
    ldexp[T: Float](x: T, e: i32) -> T = x.into_expr().ldexp(e).eval();
    /// [`ldexp`] into `out`.
    ldexp_into[T: Float](x: T, e: i32; out: T) = x.into_expr().ldexp(e).eval_into(out);
}

/// The kernels of two results (`frexp`, `modf`), one per function and type for the process.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Split {
    Frexp,
    Modf,
}

/// The kernels made so far, by function and element type.
static SPLIT_KERNELS: Definitions<(Split, Scalar), Arc<ElementwiseKernel>> = Definitions::new();

/// The kernel splitting elements of `s` as `op` does.
fn split_kernel(op: Split, s: Scalar) -> Result<Arc<ElementwiseKernel>> {
    SPLIT_KERNELS.get_or_try_insert_with((op, s), || {
        let t = s.c_name();
        // The 16-bit floats in `float`, each result rounded back once (exact: a mantissa and
        // the parts of a 16-bit value are 16-bit values).
        let sixteen = matches!(s, Scalar::F16 | Scalar::Bf16);
        let (w, x) = if sixteen {
            ("float", cast::cast_c(s, Scalar::F32, "x"))
        } else {
            (t, "x".to_owned())
        };
        let back = |v: &str| {
            if sixteen {
                cast::cast_c(Scalar::F32, s, v)
            } else {
                v.to_owned()
            }
        };
        let f = s != Scalar::F64;
        Ok(Arc::new(match op {
            Split::Frexp => ElementwiseKernel::with_name(
                "gpu_frexp",
                &format!("const {t} *x, {t} *mantissa, int *exponent"),
                &format!(
                    "int e = 0; mantissa = {}; exponent = e",
                    back(&format!("{}({x}, &e)", if f { "frexpf" } else { "frexp" }))
                ),
            )?,
            Split::Modf => ElementwiseKernel::with_name(
                "gpu_modf",
                &format!("const {t} *x, {t} *fraction, {t} *integer"),
                &format!(
                    "{w} v = 0; fraction = {}; integer = {}",
                    back(&format!("{}({x}, &v)", if f { "modff" } else { "modf" })),
                    back("v")
                ),
            )?,
        }))
    })
}

fn split<T: Float, U: Element, S: Storage<Elem = T>, D: Dimension>(
    op: Split,
    x: &DeviceArrayBase<S, D>,
    stream: Option<&Stream>,
) -> Result<(DeviceArray<T, D>, DeviceArray<U, D>)> {
    let mut first = DeviceArray::<T, D>::empty(x.context(), x.raw_dim())?;
    let mut second = DeviceArray::<U, D>::empty(x.context(), x.raw_dim())?;
    let k = split_kernel(op, T::SCALAR)?;
    let args = [
        KernelArg::input(x),
        KernelArg::output(&mut first),
        KernelArg::output(&mut second),
    ];
    OnStream::new(&*k, stream).launch(args)?;
    Ok((first, second))
}

/// Each element as `mantissa * 2^exponent`, the mantissa's magnitude in `[0.5, 1)` (0 for 0;
/// NaN and infinities are returned as the mantissa, with exponent 0): PyCUDA's
/// `cumath.frexp`, which returns the two arrays as a tuple.
pub fn frexp<T: Float, S: Storage<Elem = T>, D: Dimension>(
    x: &DeviceArrayBase<S, D>,
) -> Result<(DeviceArray<T, D>, DeviceArray<i32, D>)> {
    split(Split::Frexp, x, None)
}

/// Each element's fractional and integral parts, both with its sign: PyCUDA's
/// `cumath.modf` (the fraction first, as PyCUDA and NumPy return them).
pub fn modf<T: Float, S: Storage<Elem = T>, D: Dimension>(
    x: &DeviceArrayBase<S, D>,
) -> Result<(DeviceArray<T, D>, DeviceArray<T, D>)> {
    split(Split::Modf, x, None)
}

impl OnStream<'_, &Context> {
    /// [`math::frexp`](frexp) on this stream.
    pub fn frexp<T: Float, S: Storage<Elem = T>, D: Dimension>(
        &self,
        x: &DeviceArrayBase<S, D>,
    ) -> Result<(DeviceArray<T, D>, DeviceArray<i32, D>)> {
        split(Split::Frexp, x, self.stream)
    }

    /// [`math::modf`](modf) on this stream.
    pub fn modf<T: Float, S: Storage<Elem = T>, D: Dimension>(
        &self,
        x: &DeviceArrayBase<S, D>,
    ) -> Result<(DeviceArray<T, D>, DeviceArray<T, D>)> {
        split(Split::Modf, x, self.stream)
    }
}

#[cfg(test)]
pub(crate) fn test_split_kernels() -> Vec<Arc<ElementwiseKernel>> {
    [Split::Frexp, Split::Modf]
        .into_iter()
        .flat_map(|op| {
            [Scalar::F16, Scalar::Bf16, Scalar::F32, Scalar::F64].map(|s| split_kernel(op, s).unwrap())
        })
        .collect()
}
