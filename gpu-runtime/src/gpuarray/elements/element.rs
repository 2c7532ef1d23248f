//! The element types a [`DeviceArray`](crate::gpuarray::DeviceArray) holds and generated kernels compute
//! with: each knows its C name, its kind (for the checks of expressions and reductions), how to
//! be passed by value, and the limits that are the neutral elements of `max` and `min`.

use gpu_cuda_source::Scalar;

use crate::gpuarray::elements::boolean::Bool;
use crate::gpuarray::elements::dtype::DType;
use crate::launch::Arg;
use crate::types::repr::DeviceRepr;

/// What kind of number an [`Element`] is: decides which operators and reductions apply.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// A signed integer.
    Int,
    /// An unsigned integer.
    UInt,
    /// A floating-point number.
    Float,
    /// A truth value ([`Bool`](crate::gpuarray::Bool): C's `bool`).
    Bool,
    /// A complex number ([`Complex32`](crate::types::Complex32),
    /// [`Complex64`](crate::types::Complex64)): no order, so no `<`, `max`, `argmax`, ...
    Complex,
}

/// A scalar type that device arrays hold: `f32`, `f64`, the 8- to 64-bit integers, and
/// [`Bool`](crate::gpuarray::Bool), `half::f16` and `half::bf16` (`__half`, `__nv_bfloat16`),
/// and the complex numbers [`Complex32`](crate::types::Complex32) and
/// [`Complex64`](crate::types::Complex64) (`gpu_runtime::complex<float>` and `<double>` of
/// `<gpu_runtime/complex.h>`, which generated kernels include when they use them).
///
/// Sealed: the generated kernels spell each type in C, and a wrong spelling would make them
/// read garbage.
///
/// Arrays may also hold CUDA's vector types ([`ArrayElement`](crate::gpuarray::ArrayElement)),
/// which are no numbers: what needs an `Element` (arithmetic, math, comparisons, reductions,
/// random fills, `astype`, matmul) is a compile error on them.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a number element type (`gpu_runtime::gpuarray::Element`)",
    label = "arithmetic, math, comparisons, reductions, random fills, `astype` and matmul need numbers",
    note = "arrays of CUDA vector types (`Float3`, ...) are made, copied, viewed, filled and passed to elementwise kernels, which compute on their components (`z = v.x + v.y`)"
)]
pub trait Element:
    DeviceRepr + Copy + Send + Sync + PartialEq + std::fmt::Debug + 'static + sealed::Sealed
{
    /// The scalar in `gpu-cuda-source`'s terms; for the complex types, which are no scalars there,
    /// the type of their parts (`F32` for `Complex32`). [`DTYPE`](Self::DTYPE) tells them apart.
    const SCALAR: Scalar;
    /// The element type: what declared C parameters are compared with, and what generated
    /// kernels are keyed by.
    const DTYPE: DType;
    /// The kind of number.
    const KIND: Kind;
    /// The C expression of the smallest value (`-inf` for floats): the neutral of `max`
    /// (complex numbers have no order: NaN parts, and `max` refuses them).
    const C_LOWEST: &'static str;
    /// The C expression of the largest value (`+inf` for floats): the neutral of `min`.
    const C_HIGHEST: &'static str;
    /// The type's C name, e.g. `float`, `unsigned long long`, `gpu_runtime::complex<float>`.
    fn c_name() -> &'static str {
        Self::DTYPE.c_name()
    }
    /// The value as a kernel argument by value.
    fn to_arg(self) -> Arg<'static>;
    /// The value as a C literal of exactly this type (`1.5f`, `3ll`), for generated sources.
    fn c_literal(self) -> String;
    /// Zero.
    fn zero() -> Self;
}

pub(super) mod sealed {
    /// Implemented only in this crate: see [`Element`](crate::gpuarray::Element).
    pub trait Sealed {}
}

/// `Element` for each integer type of the table: its scalar (and `DType` and `Arg`) name, its
/// kind, its lowest and highest values in C, and the suffix of its C literals.
macro_rules! int_element {
    ($($t:ty: $scalar:ident, $kind:ident, $lo:expr, $hi:expr, $suffix:expr;)*) => {$(
        impl sealed::Sealed for $t {}
        impl Element for $t {
            const SCALAR: Scalar = Scalar::$scalar;
            const DTYPE: DType = DType::$scalar;
            const KIND: Kind = Kind::$kind;
            const C_LOWEST: &'static str = $lo;
            const C_HIGHEST: &'static str = $hi;
            fn to_arg(self) -> Arg<'static> {
                Arg::$scalar(self)
            }
            fn c_literal(self) -> String {
                // A cast, not a suffix, for the narrow types: C has no `short` literals.
                format!("(({}){}{})", Self::c_name(), self, $suffix)
            }
            fn zero() -> Self {
                0
            }
        }
    )*};
}

int_element! {
    i8: I8, Int, "((signed char)-128)", "((signed char)127)", "";
    u8: U8, UInt, "((unsigned char)0)", "((unsigned char)255)", "u";
    i16: I16, Int, "((short)-32768)", "((short)32767)", "";
    u16: U16, UInt, "((unsigned short)0)", "((unsigned short)65535)", "u";
    i32: I32, Int, "(-2147483647 - 1)", "2147483647", "";
    u32: U32, UInt, "0u", "4294967295u", "u";
    i64: I64, Int, "(-9223372036854775807ll - 1ll)", "9223372036854775807ll", "ll";
    u64: U64, UInt, "0ull", "18446744073709551615ull", "ull";
}

/// `Element` for each float type of the table: its C literals are its bits in `$pre ... $post`
/// (a reinterpreting intrinsic), so that every value (NaN, infinities, -0) round-trips exactly,
/// and its limits are the infinities, `$neg_inf` and `$inf` in bits.
macro_rules! float_element {
    ($(
        $t:ty: $scalar:ident, $pre:literal, $post:literal, $neg_inf:literal, $inf:literal, $zero:expr;
    )*) => {$(
        impl sealed::Sealed for $t {}
        impl Element for $t {
            const SCALAR: Scalar = Scalar::$scalar;
            const DTYPE: DType = DType::$scalar;
            const KIND: Kind = Kind::Float;
            const C_LOWEST: &'static str = concat!($pre, $neg_inf, $post);
            const C_HIGHEST: &'static str = concat!($pre, $inf, $post);
            fn to_arg(self) -> Arg<'static> {
                Arg::$scalar(self)
            }
            fn c_literal(self) -> String {
                format!(concat!($pre, "{:#x}", $post), self.to_bits())
            }
            fn zero() -> Self {
                $zero
            }
        }
    )*};
}
pub(super) use float_element;

float_element! {
    f32: F32, "__int_as_float(", ")", "0xff800000", "0x7f800000", 0.0;
    f64: F64, "__longlong_as_double(", "ll)", "0xfff0000000000000", "0x7ff0000000000000", 0.0;
}

impl sealed::Sealed for Bool {}
impl Element for Bool {
    const SCALAR: Scalar = Scalar::Bool;
    const DTYPE: DType = DType::Bool;
    const KIND: Kind = Kind::Bool;
    const C_LOWEST: &'static str = "false";
    const C_HIGHEST: &'static str = "true";
    fn to_arg(self) -> Arg<'static> {
        Arg::Bool(self.get())
    }
    fn c_literal(self) -> String {
        if self.get() { "true" } else { "false" }.to_owned()
    }
    fn zero() -> Self {
        Bool::FALSE
    }
}
