//! The functions an [`Expr`](crate::gpuarray::Expr) node may apply beyond `+ - * /`: the math functions
//! of PyCUDA's `cumath` (one table, [`MathFn`], keyed by the element's kind), comparisons,
//! logic, `where`, and NumPy's integer division rules. Each renders to C here; the templates
//! some of them call are the preamble [`HELPERS`], added to a kernel only when its expression
//! uses one.
//!
//! Complex elements extend the table in one place: [`MathFn::c_function`] (and
//! [`Math2Fn::c_function`]) name the C function per element type, and return `None` for a type
//! the function is not defined on. The complex functions are `<gpu_runtime/complex.h>`'s
//! (`gpu_runtime::exp`, ...), where NumPy defines them on complex numbers; comparisons other
//! than `==`/`!=`, `maximum`/`minimum`, `sign`, and the float-only functions have no result
//! type on complex operands, which [`Expr`](crate::gpuarray::Expr) reports as an error.

use gpu_cuda_source::Scalar;

use crate::gpuarray::elements::cast::{self, sixteen_bit, widen};
use crate::gpuarray::elements::dtype::DType;

/// The C function of a [`MathFn`] or [`Math2Fn`] per float type, from a table of
/// `Variant "float form" "double form"`; `None` for the other types and variants.
macro_rules! float_names {
    ($e:ident, $f:expr, $s:expr; $($v:ident $single:literal $double:literal),*) => {
        match ($f, $s) {
            $(($e::$v, Scalar::F32) => Some($single), ($e::$v, Scalar::F64) => Some($double),)*
            _ => None,
        }
    };
}

/// A function of one floating-point operand, giving the operand's type (PyCUDA's `cumath`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum MathFn {
    /// `|x|` (`fabs`).
    Fabs,
    /// Smallest integer not less than `x`.
    Ceil,
    /// Largest integer not greater than `x`.
    Floor,
    /// `e^x`.
    Exp,
    /// `e^x - 1`, exact near 0.
    Expm1,
    /// `2^x`.
    Exp2,
    /// Natural logarithm.
    Log,
    /// `ln(1 + x)`, exact near 0.
    Log1p,
    /// Base-10 logarithm.
    Log10,
    /// Base-2 logarithm.
    Log2,
    /// Square root.
    Sqrt,
    /// Cube root.
    Cbrt,
    /// Sine.
    Sin,
    /// Cosine.
    Cos,
    /// Tangent.
    Tan,
    /// Arc sine.
    Asin,
    /// Arc cosine.
    Acos,
    /// Arc tangent.
    Atan,
    /// Hyperbolic sine.
    Sinh,
    /// Hyperbolic cosine.
    Cosh,
    /// Hyperbolic tangent.
    Tanh,
    /// Inverse hyperbolic sine.
    Asinh,
    /// Inverse hyperbolic cosine.
    Acosh,
    /// Inverse hyperbolic tangent.
    Atanh,
    /// Nearest integer, halves to even (NumPy's `rint`, and its `round` with no decimals).
    Rint,
    /// Toward zero.
    Trunc,
    /// `sin(πx) / (πx)`, 1 at 0 (NumPy's `sinc`; complex numbers too).
    Sinc,
    /// The modified Bessel function of the first kind, order 0 (NumPy's `i0`).
    I0,
}

impl MathFn {
    /// The C function computing this on elements of `s`: the `f` form for `float` (`sinf`,
    /// never the `double` one), the plain one for `double`; `None` where it is not defined.
    pub(crate) fn c_function(self, d: DType) -> Option<&'static str> {
        if d.is_complex() {
            return self.complex_function();
        }
        let s = d.scalar()?;
        float_names!(MathFn, self, s;
            Fabs "fabsf" "fabs", Ceil "ceilf" "ceil", Floor "floorf" "floor", Exp "expf" "exp",
            Expm1 "expm1f" "expm1", Exp2 "exp2f" "exp2", Log "logf" "log", Log1p "log1pf" "log1p",
            Log10 "log10f" "log10", Log2 "log2f" "log2", Sqrt "sqrtf" "sqrt", Cbrt "cbrtf" "cbrt",
            Sin "sinf" "sin", Cos "cosf" "cos", Tan "tanf" "tan", Asin "asinf" "asin",
            Acos "acosf" "acos", Atan "atanf" "atan", Sinh "sinhf" "sinh", Cosh "coshf" "cosh",
            Tanh "tanhf" "tanh", Asinh "asinhf" "asinh", Acosh "acoshf" "acosh",
            Atanh "atanhf" "atanh", Rint "rintf" "rint", Trunc "truncf" "trunc",
            // The helpers' overloads (see [`HELPERS`]); CUDA's own Bessel function.
            Sinc "gpu_sinc" "gpu_sinc", I0 "cyl_bessel_i0f" "cyl_bessel_i0"
        )
    }

    /// The function of `<gpu_runtime/complex.h>` computing this on a complex number, where
    /// NumPy defines it on complex numbers and the header has it.
    fn complex_function(self) -> Option<&'static str> {
        Some(match self {
            MathFn::Exp => "gpu_runtime::exp",
            MathFn::Log => "gpu_runtime::log",
            MathFn::Log10 => "gpu_runtime::log10",
            MathFn::Expm1 => "gpu_runtime::expm1",
            MathFn::Exp2 => "gpu_runtime::exp2",
            MathFn::Log2 => "gpu_runtime::log2",
            MathFn::Log1p => "gpu_runtime::log1p",
            MathFn::Sqrt => "gpu_runtime::sqrt",
            MathFn::Sin => "gpu_runtime::sin",
            MathFn::Cos => "gpu_runtime::cos",
            MathFn::Tan => "gpu_runtime::tan",
            MathFn::Sinh => "gpu_runtime::sinh",
            MathFn::Cosh => "gpu_runtime::cosh",
            MathFn::Tanh => "gpu_runtime::tanh",
            MathFn::Sinc => "gpu_csinc",
            _ => return None,
        })
    }
}

/// A function of two floating-point operands of one type, giving that type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Math2Fn {
    /// C's `fmod`: the remainder with the sign of the dividend.
    Fmod,
    /// `atan2(y, x)`.
    Atan2,
    /// `sqrt(x² + y²)` without overflow.
    Hypot,
    /// The magnitude of the first, the sign of the second.
    Copysign,
    /// `ln(e^x + e^y)` without overflow (NumPy's `logaddexp`).
    Logaddexp,
    /// `log2(2^x + 2^y)` without overflow (NumPy's `logaddexp2`).
    Logaddexp2,
    /// 0 below zero, the second operand at zero, 1 above; NaN stays NaN (NumPy's `heaviside`).
    Heaviside,
    /// The next number of the type after the first toward the second (NumPy's `nextafter`;
    /// the 16-bit floats step by their own spacing, see [`render`]).
    Nextafter,
}

impl Math2Fn {
    /// The C function on elements of `s`, as [`MathFn::c_function`].
    pub(crate) fn c_function(self, d: DType) -> Option<&'static str> {
        let s = d.scalar()?;
        float_names!(Math2Fn, self, s;
            Fmod "fmodf" "fmod", Atan2 "atan2f" "atan2", Hypot "hypotf" "hypot",
            Copysign "copysignf" "copysign", Nextafter "nextafterf" "nextafter",
            // The helpers' overloads for `float` and `double` (see [`HELPERS`]).
            Logaddexp "gpu_logaddexp" "gpu_logaddexp", Logaddexp2 "gpu_logaddexp2" "gpu_logaddexp2",
            Heaviside "gpu_heaviside" "gpu_heaviside"
        )
    }
}

/// A comparison, giving [`Bool`](crate::gpuarray::Bool) (C's, so any comparison with NaN is false but
/// `!=`, as NumPy's).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CmpOp {
    /// `>` (NumPy's `greater`).
    Gt,
    /// `<` (`less`).
    Lt,
    /// `>=` (`greater_equal`).
    Ge,
    /// `<=` (`less_equal`).
    Le,
    /// `==` (`equal`).
    Eq,
    /// `!=` (`not_equal`).
    Ne,
}

impl CmpOp {
    fn c(self) -> &'static str {
        match self {
            CmpOp::Gt => ">",
            CmpOp::Lt => "<",
            CmpOp::Ge => ">=",
            CmpOp::Le => "<=",
            CmpOp::Eq => "==",
            CmpOp::Ne => "!=",
        }
    }
}

/// What a function node computes; its operands are the node's children, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Func {
    /// A [`MathFn`] of a float.
    Math(MathFn),
    /// A [`Math2Fn`] of two floats.
    Math2(Math2Fn),
    /// `isnan`, `isinf`, `isfinite`, `signbit` of a float: a `bool`.
    Predicate(&'static str),
    /// `ldexp(x, e)`: a float and an `int`.
    Ldexp,
    /// A comparison of two operands of one type: a `bool`.
    Compare(CmpOp),
    /// Logical and, or, xor of two operands of any types (nonzero is true): a `bool`.
    And,
    /// See [`Func::And`].
    Or,
    /// See [`Func::And`].
    Xor,
    /// Logical not: a `bool`.
    Not,
    /// `cond ? a : b`, the condition a `bool`.
    Where,
    /// NumPy's `maximum` (NaN propagates).
    Maximum,
    /// NumPy's `minimum` (NaN propagates).
    Minimum,
    /// NumPy's `fmax` (NaN ignored).
    Fmax,
    /// NumPy's `fmin` (NaN ignored).
    Fmin,
    /// `|x|`; integers wrap (`abs(i32::MIN) == i32::MIN`).
    Abs,
    /// -1, 0 or 1; NaN stays NaN.
    Sign,
    /// `x ** y`.
    Pow,
    /// A conversion to the element type, as C converts (to `bool`: `x != 0`; see
    /// `elements/cast.rs` for the complex types).
    Cast(DType),
    /// The complex conjugate of a complex number.
    Conj,
    /// The real part of a complex number: its part type.
    Real,
    /// The imaginary part of a complex number.
    Imag,
    /// The angle of a complex number (`atan2(im, re)`, NumPy's `angle`).
    Angle,
    /// The magnitude of a complex number (`hypot(re, im)`, NumPy's `abs` on complex).
    ComplexAbs,
    /// Bitwise and of two operands of one `bool` or integer type (NumPy's `bitwise_and`).
    BitAnd,
    /// Bitwise or (`bitwise_or`), as [`Func::BitAnd`].
    BitOr,
    /// Bitwise exclusive or (`bitwise_xor`), as [`Func::BitAnd`].
    BitXor,
    /// `~x` of an integer, `!x` of a `bool` (NumPy's `invert`).
    Invert,
    /// NumPy's `left_shift` of integers: 0 where the count is negative or at least the width.
    Shl,
    /// NumPy's `right_shift` of integers: arithmetic for the signed types; where the count is
    /// negative or at least the width, -1 for a negative operand and 0 otherwise.
    Shr,
    /// The number of one bits of `|x|`, an integer's (NumPy's `bitwise_count`): a `u8`.
    BitCount,
    /// The greatest common divisor of two integers, non-negative (NumPy's `gcd`).
    Gcd,
    /// The least common multiple of two integers, non-negative, 0 when either is (`lcm`).
    Lcm,
}

/// Templates the rendered expressions call: NumPy's integer division (zero for a zero divisor,
/// `MIN / -1` wraps), Python's remainder and floor division, integer powers by squaring, NaN
/// aware `maximum`/`minimum`, and `abs`/`sign`. Unsigned arithmetic where a signed one could
/// overflow (undefined in C++): the result wraps as NumPy's does.
pub(crate) const HELPERS: &str = r#"
template <typename T> __device__ __forceinline__ bool gpu_signed() { return (T)-1 < (T)0; }
template <typename T> __device__ __forceinline__ T gpu_neg_wrap(T a) { return (T)(0ull - (unsigned long long)a); }
template <typename T> __device__ __forceinline__ T gpu_div(T a, T b) {
    if (b == (T)0) return (T)0;
    if (gpu_signed<T>() && b == (T)-1) return gpu_neg_wrap(a);
    return (T)(a / b);
}
__device__ __forceinline__ float gpu_div(float a, float b) { return a / b; }
__device__ __forceinline__ double gpu_div(double a, double b) { return a / b; }
template <typename T> __device__ __forceinline__ T gpu_rem(T a, T b) {
    if (b == (T)0 || (gpu_signed<T>() && b == (T)-1)) return (T)0;
    T r = (T)(a % b);
    if (r != (T)0 && gpu_signed<T>() && ((r < (T)0) != (b < (T)0))) r = (T)(r + b);
    return r;
}
template <typename F> __device__ __forceinline__ F gpu_frem(F a, F b) {
    F r = fmod(a, b);
    if (b == (F)0) return r;
    if (r != (F)0) { if ((b < (F)0) != (r < (F)0)) r += b; }
    else r = copysign((F)0, b);
    return r;
}
__device__ __forceinline__ float gpu_rem(float a, float b) { return gpu_frem<float>(a, b); }
__device__ __forceinline__ double gpu_rem(double a, double b) { return gpu_frem<double>(a, b); }
template <typename T> __device__ __forceinline__ T gpu_floordiv(T a, T b) {
    if (b == (T)0) return (T)0;
    if (gpu_signed<T>() && b == (T)-1) return gpu_neg_wrap(a);
    T q = (T)(a / b);
    if (gpu_signed<T>() && (T)(a % b) != (T)0 && ((a < (T)0) != (b < (T)0))) q = (T)(q - (T)1);
    return q;
}
template <typename F> __device__ __forceinline__ F gpu_ffloordiv(F a, F b) {
    if (b == (F)0) return a / b;
    F m = fmod(a, b);
    F d = (a - m) / b;
    if (m != (F)0 && ((b < (F)0) != (m < (F)0))) d -= (F)1;
    if (d == (F)0) return copysign((F)0, a / b);
    F f = floor(d);
    if (d - f > (F)0.5) f += (F)1;
    return f;
}
__device__ __forceinline__ float gpu_floordiv(float a, float b) { return gpu_ffloordiv<float>(a, b); }
__device__ __forceinline__ double gpu_floordiv(double a, double b) { return gpu_ffloordiv<double>(a, b); }
template <typename T> __device__ __forceinline__ T gpu_pow(T a, T b) {
    if (gpu_signed<T>() && b < (T)0) {
        if (a == (T)1) return (T)1;
        if (gpu_signed<T>() && a == (T)-1) return ((unsigned long long)b & 1ull) ? a : (T)1;
        return (T)0;
    }
    unsigned long long r = 1, x = (unsigned long long)a, e = (unsigned long long)b;
    while (e) { if (e & 1ull) r *= x; x *= x; e >>= 1; }
    return (T)r;
}
__device__ __forceinline__ float gpu_pow(float a, float b) { return powf(a, b); }
__device__ __forceinline__ double gpu_pow(double a, double b) { return pow(a, b); }
template <typename F> __device__ __forceinline__ F gpu_flogaddexp(F x, F y, F ln2, bool base2) {
    if (x == y) return base2 ? x + (F)1 : x + ln2;
    const F d = x - y;
    const F m = d > (F)0 ? x : y;
    const F t = d > (F)0 ? -d : d;
    if (!(d > (F)0) && !(d <= (F)0)) return d;
    return base2 ? m + log1p(exp2(t)) / ln2 : m + log1p(exp(t));
}
__device__ __forceinline__ float gpu_logaddexp(float x, float y) { return gpu_flogaddexp<float>(x, y, 0.693147180559945309f, false); }
__device__ __forceinline__ double gpu_logaddexp(double x, double y) { return gpu_flogaddexp<double>(x, y, 0.693147180559945309, false); }
__device__ __forceinline__ float gpu_logaddexp2(float x, float y) { return gpu_flogaddexp<float>(x, y, 0.693147180559945309f, true); }
__device__ __forceinline__ double gpu_logaddexp2(double x, double y) { return gpu_flogaddexp<double>(x, y, 0.693147180559945309, true); }
template <typename F> __device__ __forceinline__ F gpu_heaviside(F x, F h0) {
    return x != x ? x : (x == (F)0 ? h0 : (x < (F)0 ? (F)0 : (F)1));
}
__device__ __forceinline__ float gpu_sinc(float x) {
    if (x == 0.0f) return 1.0f;
    const float y = 3.14159265358979323846f * x;
    return sinf(y) / y;
}
__device__ __forceinline__ double gpu_sinc(double x) {
    if (x == 0.0) return 1.0;
    const double y = 3.14159265358979323846 * x;
    return sin(y) / y;
}
template <typename C> __device__ __forceinline__ C gpu_csinc(C z) {
    typedef decltype(z.re) T;
    if (z.re == (T)0 && z.im == (T)0) { C one = z; one.re = (T)1; return one; }
    C y = z;
    y *= (T)3.14159265358979323846;
    return sin(y) / y;
}
__device__ __forceinline__ float gpu_nextafter16(float x, float y, int mant, int emin, float maxf) {
    if (x != x || y != y) return x + y;
    if (x == y) return y;
    if (x == 0.0f) return copysignf(ldexpf(1.0f, emin - mant), y);
    const float ax = fabsf(x);
    if (isinf(ax)) return copysignf(maxf, x);
    const bool away = (y > x) == (x > 0.0f);
    int e;
    frexpf(ax, &e);
    float ulp = ldexpf(1.0f, max(e - 1, emin) - mant);
    if (!away && e - 1 > emin && ax == ldexpf(1.0f, e - 1)) ulp *= 0.5f;
    return copysignf(away ? ax + ulp : ax - ulp, x);
}
template <typename T> __device__ __forceinline__ unsigned long long gpu_magnitude(T a) {
    return (gpu_signed<T>() && a < (T)0) ? 0ull - (unsigned long long)(long long)a : (unsigned long long)a;
}
template <typename T> __device__ __forceinline__ T gpu_lshift(T a, T b) {
    return (unsigned long long)b < sizeof(T) * 8 ? (T)((unsigned long long)a << (unsigned long long)b) : (T)0;
}
template <typename T> __device__ __forceinline__ T gpu_rshift(T a, T b) {
    if ((unsigned long long)b < sizeof(T) * 8) return (T)(a >> b);
    return (gpu_signed<T>() && a < (T)0) ? (T)-1 : (T)0;
}
template <typename T> __device__ __forceinline__ unsigned char gpu_bitcount(T a) {
    return (unsigned char)__popcll(gpu_magnitude(a));
}
__device__ __forceinline__ unsigned long long gpu_gcd_u(unsigned long long x, unsigned long long y) {
    while (y != 0ull) { const unsigned long long r = x % y; x = y; y = r; }
    return x;
}
template <typename T> __device__ __forceinline__ T gpu_gcd(T a, T b) {
    return (T)gpu_gcd_u(gpu_magnitude(a), gpu_magnitude(b));
}
template <typename T> __device__ __forceinline__ T gpu_lcm(T a, T b) {
    const unsigned long long x = gpu_magnitude(a), y = gpu_magnitude(b), g = gpu_gcd_u(x, y);
    return g == 0ull ? (T)0 : (T)(x / g * y);
}
template <typename T> __device__ __forceinline__ T gpu_maximum(T a, T b) { return (a >= b || a != a) ? a : b; }
template <typename T> __device__ __forceinline__ T gpu_minimum(T a, T b) { return (a <= b || a != a) ? a : b; }
template <typename T> __device__ __forceinline__ T gpu_fmax(T a, T b) { return gpu_maximum(a, b); }
template <typename T> __device__ __forceinline__ T gpu_fmin(T a, T b) { return gpu_minimum(a, b); }
__device__ __forceinline__ float gpu_fmax(float a, float b) { return fmaxf(a, b); }
__device__ __forceinline__ double gpu_fmax(double a, double b) { return fmax(a, b); }
__device__ __forceinline__ float gpu_fmin(float a, float b) { return fminf(a, b); }
__device__ __forceinline__ double gpu_fmin(double a, double b) { return fmin(a, b); }
template <typename T> __device__ __forceinline__ T gpu_abs(T a) { return (gpu_signed<T>() && a < (T)0) ? gpu_neg_wrap(a) : a; }
__device__ __forceinline__ float gpu_abs(float a) { return fabsf(a); }
__device__ __forceinline__ double gpu_abs(double a) { return fabs(a); }
template <typename T> __device__ __forceinline__ T gpu_sign(T a) {
    return a > (T)0 ? (T)1 : (a < (T)0 ? (T)-1 : (a == (T)0 ? (T)0 : a));
}
"#;

/// The result type of `func` on operands of `args` types, or `None` when the function is not
/// defined on them.
pub(crate) fn result_type(func: Func, args: &[DType]) -> Option<DType> {
    let first = *args.first()?;
    // The 16-bit floats have every function `float` has, computed in it (see `render`).
    let float = matches!(first, DType::F16 | DType::Bf16 | DType::F32 | DType::F64);
    let named = if sixteen_bit(first).is_some() {
        DType::F32
    } else {
        first
    };
    let complex = first.is_complex();
    let part = DType::from_scalar(first.part_scalar());
    let integer = first.is_bool_or_integer() && first != DType::Bool;
    match func {
        Func::Math(f) => f.c_function(named).map(|_| first),
        Func::Math2(f) => f.c_function(named).map(|_| first),
        // NumPy's `isnan`, `isinf`, `isfinite` of a complex number look at both parts.
        Func::Predicate("isnan" | "isinf" | "isfinite") if complex => Some(DType::Bool),
        Func::Predicate(_) => float.then_some(DType::Bool),
        Func::Ldexp => float.then_some(first),
        // Complex numbers have no order: only `==` and `!=`.
        Func::Compare(CmpOp::Eq | CmpOp::Ne) => Some(DType::Bool),
        Func::Compare(_) => (!complex).then_some(DType::Bool),
        Func::And | Func::Or | Func::Xor | Func::Not => Some(DType::Bool),
        Func::Where => args.get(1).copied(),
        Func::Cast(to) => Some(to),
        Func::Pow => Some(first),
        Func::Maximum | Func::Minimum | Func::Fmax | Func::Fmin | Func::Abs | Func::Sign => {
            (!complex).then_some(first)
        }
        Func::Conj => complex.then_some(first),
        Func::BitAnd | Func::BitOr | Func::BitXor | Func::Invert => {
            first.is_bool_or_integer().then_some(first)
        }
        Func::Shl | Func::Shr | Func::Gcd | Func::Lcm => integer.then_some(first),
        Func::BitCount => integer.then_some(DType::U8),
        Func::Real | Func::Imag | Func::Angle | Func::ComplexAbs => part.filter(|_| complex),
    }
}

/// The C expression of `func` of result type `t` on the rendered operands `args` (each
/// parenthesised by its own rendering).
pub(crate) fn render(func: Func, t: DType, arg_types: &[DType], args: &[String]) -> String {
    let first = arg_types.first().copied().unwrap_or(t);
    if sixteen_bit(first).is_some() && computes_in_float(func) {
        // NumPy's loops of `float16` compute in `float` and round the result once: each
        // 16-bit operand is widened (exactly), the `float` form rendered, and a 16-bit result
        // rounded back. CUDA's own `__half` operators and functions are not used: some are
        // ambiguous (`%`, `!=` against an integer) and `fmax` has no NaN rule of NumPy's.
        let wide = |d: DType| if sixteen_bit(d).is_some() { DType::F32 } else { d };
        let types: Vec<DType> = arg_types.iter().map(|&d| wide(d)).collect();
        let rendered: Vec<String> = arg_types
            .iter()
            .zip(args)
            .map(|(&d, x)| match sixteen_bit(d) {
                Some(narrow) => widen(narrow, x),
                None => x.clone(),
            })
            .collect();
        let f = match (func, sixteen_bit(first)) {
            // NumPy's `nextafter` of a 16-bit float steps by that type's spacing, not
            // `float`'s: its mantissa bits, least normal exponent and largest finite value.
            (Func::Math2(Math2Fn::Nextafter), Some(narrow)) => {
                let (mant, emin, max) = if narrow == Scalar::F16 {
                    (10, -14, "65504.0f")
                } else {
                    (7, -126, "3.38953139e38f")
                };
                format!(
                    "gpu_nextafter16({}, {}, {mant}, {emin}, {max})",
                    rendered[0], rendered[1]
                )
            }
            _ => render(func, wide(t), &types, &rendered),
        };
        return match sixteen_bit(t) {
            Some(narrow) => cast::cast_c(Scalar::F32, narrow, &f),
            None => f,
        };
    }
    let t_c = t.c_name();
    let a = |k: usize| args.get(k).map_or("", String::as_str);
    // An operand as a truth value: C's conversion, or for a complex one either part nonzero
    // (a 16-bit float through `float`: `(bool)` of one is ambiguous).
    let truth = |k: usize| match arg_types.get(k) {
        Some(&d) if d.is_complex() || sixteen_bit(d).is_some() => cast::convert_c(d, DType::Bool, a(k)),
        _ => format!("(bool)({})", a(k)),
    };
    match func {
        Func::Math(f) => format!("{}({})", f.c_function(first).unwrap_or("gpu_undefined"), a(0)),
        Func::Math2(f) => format!(
            "{}({}, {})",
            f.c_function(first).unwrap_or("gpu_undefined"),
            a(0),
            a(1)
        ),
        Func::Predicate(name) if first.is_complex() => format!("((bool)gpu_runtime::{name}({}))", a(0)),
        Func::Predicate(name) => format!("((bool){name}({}))", a(0)),
        Func::Ldexp => {
            let name = if first == DType::F32 { "ldexpf" } else { "ldexp" };
            format!("{name}({}, (int)({}))", a(0), a(1))
        }
        Func::Compare(op) => format!("((bool)({} {} {}))", a(0), op.c(), a(1)),
        Func::And => format!("((bool)({} && {}))", truth(0), truth(1)),
        Func::Or => format!("((bool)({} || {}))", truth(0), truth(1)),
        Func::Xor => format!("((bool)({} != {}))", truth(0), truth(1)),
        Func::Not => format!("((bool)!{})", truth(0)),
        Func::Where => format!("(({t_c})({} ? {} : {}))", a(0), a(1), a(2)),
        // The table of `elements/cast.rs`: `(__half)(x)` of an integer is ambiguous in C++.
        Func::Cast(to) => format!("({})", cast::convert_c(first, to, a(0))),
        Func::Pow if t.is_complex() => format!("gpu_runtime::pow(({t_c})({}), ({t_c})({}))", a(0), a(1)),
        Func::Conj => format!("gpu_runtime::conj({})", a(0)),
        Func::Real => format!("(({}).re)", a(0)),
        Func::Imag => format!("(({}).im)", a(0)),
        Func::Angle => format!("gpu_runtime::arg({})", a(0)),
        Func::ComplexAbs => format!("gpu_runtime::abs({})", a(0)),
        Func::Maximum => format!("gpu_maximum<{t_c}>({}, {})", a(0), a(1)),
        Func::Minimum => format!("gpu_minimum<{t_c}>({}, {})", a(0), a(1)),
        Func::Fmax => format!("gpu_fmax(({t_c})({}), ({t_c})({}))", a(0), a(1)),
        Func::Fmin => format!("gpu_fmin(({t_c})({}), ({t_c})({}))", a(0), a(1)),
        Func::Abs => format!("gpu_abs(({t_c})({}))", a(0)),
        Func::Sign => format!("gpu_sign<{t_c}>({})", a(0)),
        Func::Pow => format!("gpu_pow(({t_c})({}), ({t_c})({}))", a(0), a(1)),
        Func::BitAnd => format!("(({t_c})({} & {}))", a(0), a(1)),
        Func::BitOr => format!("(({t_c})({} | {}))", a(0), a(1)),
        Func::BitXor => format!("(({t_c})({} ^ {}))", a(0), a(1)),
        Func::Invert if first == DType::Bool => format!("((bool)!{})", a(0)),
        Func::Invert => format!("(({t_c})(~{}))", a(0)),
        Func::Shl => format!("gpu_lshift<{t_c}>({}, {})", a(0), a(1)),
        Func::Shr => format!("gpu_rshift<{t_c}>({}, {})", a(0), a(1)),
        Func::BitCount => format!("gpu_bitcount<{}>({})", first.c_name(), a(0)),
        Func::Gcd => format!("gpu_gcd<{t_c}>({}, {})", a(0), a(1)),
        Func::Lcm => format!("gpu_lcm<{t_c}>({}, {})", a(0), a(1)),
    }
}

/// Whether `func` on 16-bit float operands is computed in `float` (see [`render`]): every
/// function but the ones that only move values (`where`, casts) or take their truth.
fn computes_in_float(func: Func) -> bool {
    !matches!(
        func,
        Func::Where | Func::Cast(_) | Func::And | Func::Or | Func::Xor | Func::Not
    )
}

/// Whether `func` calls a template of [`HELPERS`].
pub(crate) fn needs_helpers(func: Func) -> bool {
    // A complex `pow` calls the header's, and needs none; the helpers compile with it anyway.
    matches!(
        func,
        Func::Maximum
            | Func::Minimum
            | Func::Fmax
            | Func::Fmin
            | Func::Abs
            | Func::Sign
            | Func::Pow
            | Func::Math2(Math2Fn::Logaddexp | Math2Fn::Logaddexp2 | Math2Fn::Heaviside | Math2Fn::Nextafter)
            | Func::Math(MathFn::Sinc)
            | Func::Shl
            | Func::Shr
            | Func::BitCount
            | Func::Gcd
            | Func::Lcm
    )
}
