//! NumPy 2's type promotion as a table of element types: [`result_type`] and [`promote_types`]
//! (with weak scalars, [`PromoteArg`]), [`promote`] on `gpu-cuda-source` scalars, and [`Promote`],
//! the same table for the compiler. Public as [`gpuarray::promote`](crate::gpuarray::promote),
//! whose docs print the table and which adds arithmetic on operands of two element types.

use gpu_cuda_source::Scalar;

use crate::gpuarray::elements::boolean::Bool;
use crate::gpuarray::elements::element::Element;
use crate::types::{Complex32, Complex64};
use half::{bf16, f16};

pub use crate::gpuarray::elements::dtype::DType;

/// An operand of [`result_type`]: an element type (an array's, or a typed Rust value's), or
/// a weak scalar of a kind, as NumPy 2 sees a Python `int`, `float` or `complex`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PromoteArg {
    /// An array of this element type, or a value of exactly this type.
    DType(DType),
    /// A weak integer literal (Python's `int`).
    Int,
    /// A weak floating-point literal (Python's `float`).
    Float,
    /// A weak complex literal (Python's `complex`).
    Complex,
}

impl From<DType> for PromoteArg {
    fn from(d: DType) -> Self {
        PromoteArg::DType(d)
    }
}

/// The kind of a type, in NumPy's order: a weak scalar of a kind takes the type of an operand
/// of that kind or a higher one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum KindRank {
    Bool,
    Int,
    Float,
    Complex,
}

impl DType {
    fn kind(self) -> KindRank {
        match self {
            DType::Bool => KindRank::Bool,
            DType::F16 | DType::Bf16 | DType::F32 | DType::F64 => KindRank::Float,
            DType::Complex32 | DType::Complex64 => KindRank::Complex,
            _ => KindRank::Int,
        }
    }

    /// Whether this is `bool` or an integer type: the types whose `/` is NumPy's true division,
    /// in `f64`.
    pub(crate) fn is_bool_or_integer(self) -> bool {
        self.kind() <= KindRank::Int
    }

    /// For an integer: whether it is signed, and its width in bits.
    fn int_bits(self) -> (bool, u32) {
        match self {
            DType::I8 => (true, 8),
            DType::U8 => (false, 8),
            DType::I16 => (true, 16),
            DType::U16 => (false, 16),
            DType::I32 => (true, 32),
            DType::U32 => (false, 32),
            DType::I64 => (true, 64),
            _ => (false, 64),
        }
    }

    /// For a float: its width in bits.
    fn float_bits(self) -> u32 {
        match self {
            DType::F16 | DType::Bf16 => 16,
            DType::F32 => 32,
            _ => 64,
        }
    }

    /// For a complex type: the float of its parts.
    fn part(self) -> DType {
        match self {
            DType::Complex32 => DType::F32,
            _ => DType::F64,
        }
    }
}

fn signed_int(bits: u32) -> DType {
    match bits {
        8 => DType::I8,
        16 => DType::I16,
        32 => DType::I32,
        _ => DType::I64,
    }
}

fn promote_ints(a: DType, b: DType) -> DType {
    let ((sa, ba), (sb, bb)) = (a.int_bits(), b.int_bits());
    if sa == sb {
        return if ba >= bb { a } else { b };
    }
    let (signed, unsigned) = if sa { (ba, bb) } else { (bb, ba) };
    if unsigned < signed {
        signed_int(signed)
    } else if unsigned < 64 {
        signed_int(2 * unsigned)
    } else {
        DType::F64
    }
}

fn promote_floats(a: DType, b: DType) -> DType {
    if a == b {
        return a;
    }
    match (a.float_bits(), b.float_bits()) {
        // f16 with bf16: neither holds the other.
        (16, 16) => DType::F32,
        (x, y) if x >= y => a,
        _ => b,
    }
}

/// The float that holds every value of the integer `int` and of the float `float`.
fn promote_int_float(int: DType, float: DType) -> DType {
    match int.int_bits().1 {
        8 => float,
        16 => promote_floats(DType::F32, float),
        _ => DType::F64,
    }
}

/// The complex type whose parts are `float`.
fn complex_of(float: DType) -> DType {
    if float == DType::F64 {
        DType::Complex64
    } else {
        DType::Complex32
    }
}

/// NumPy 2's `promote_types(a, b)` (with `bf16` as [`promote`](crate::gpuarray::promote)'s docs say).
pub fn promote_types(a: DType, b: DType) -> DType {
    use KindRank as K;
    if a == b {
        return a;
    }
    match (a.kind(), b.kind()) {
        (K::Bool, _) => b,
        (_, K::Bool) => a,
        (K::Int, K::Int) => promote_ints(a, b),
        (K::Int, K::Float) => promote_int_float(a, b),
        (K::Float, K::Int) => promote_int_float(b, a),
        (K::Float, K::Float) => promote_floats(a, b),
        (K::Complex, K::Complex) => complex_of(promote_floats(a.part(), b.part())),
        (K::Complex, _) => complex_of(promote_types(a.part(), b)),
        (_, K::Complex) => complex_of(promote_types(a, b.part())),
    }
}

/// NumPy's `can_cast(from, to, casting='same_kind')`: a type converts to itself, to any type
/// of its kind, and to the kinds above it, in the order `bool` < unsigned < signed integers <
/// floats < complex (`u8` to `i8` is allowed, `i8` to `u64` is not).
pub(crate) fn can_cast_same_kind(from: DType, to: DType) -> bool {
    fn rank(d: DType) -> u8 {
        match d.kind() {
            KindRank::Bool => 0,
            KindRank::Int if d.int_bits().0 => 2,
            KindRank::Int => 1,
            KindRank::Float => 3,
            KindRank::Complex => 4,
        }
    }
    rank(from) <= rank(to)
}

/// The type a weak scalar of `kind` gives with an operand of type `d`.
fn with_weak(kind: KindRank, d: DType) -> DType {
    if d.kind() >= kind {
        return d;
    }
    match kind {
        KindRank::Int => DType::I64,
        KindRank::Float => DType::F64,
        _ if d.kind() == KindRank::Float => complex_of(d),
        _ => DType::Complex64,
    }
}

fn weak_kind(a: PromoteArg) -> Option<KindRank> {
    match a {
        PromoteArg::DType(_) => None,
        PromoteArg::Int => Some(KindRank::Int),
        PromoteArg::Float => Some(KindRank::Float),
        PromoteArg::Complex => Some(KindRank::Complex),
    }
}

/// The element type of an operation on `a` and `b` by NumPy 2's rules (NEP 50; see
/// [`promote`](crate::gpuarray::promote)'s docs for the rules and the table).
pub fn result_type(a: impl Into<PromoteArg>, b: impl Into<PromoteArg>) -> DType {
    let (a, b) = (a.into(), b.into());
    match (a, b) {
        (PromoteArg::DType(x), PromoteArg::DType(y)) => promote_types(x, y),
        (PromoteArg::DType(d), w) | (w, PromoteArg::DType(d)) => {
            with_weak(weak_kind(w).unwrap_or(KindRank::Int), d)
        }
        (x, y) => match weak_kind(x).max(weak_kind(y)) {
            Some(KindRank::Complex) => DType::Complex64,
            Some(KindRank::Float) => DType::F64,
            _ => DType::I64,
        },
    }
}

/// What NumPy 2 computes `a op b` in, on `gpu-cuda-source` scalars: [`promote_types`] of their
/// [`DType`]s, or `None` for a type arrays do not hold (`size_t`, `ptrdiff_t`).
pub fn promote(a: Scalar, b: Scalar) -> Option<Scalar> {
    promote_types(DType::from_scalar(a)?, DType::from_scalar(b)?).scalar()
}

/// The promoted element type of `Self` with `U`, as [`result_type`] gives it, for the compiler:
/// every pair of element types, complex and half-precision ones included
/// (`<f32 as Promote<Complex64>>::Output` is `Complex64`, `<f16 as Promote<i16>>::Output` is
/// `f32`).
pub trait Promote<U: Element>: Element {
    /// The type `Self op U` is computed in.
    type Output: Element + TrueDivide;
}

/// The type NumPy's true division (`/`) of two values of a type gives: `f64` for `bool` and
/// the integers (`np.int8(1) / np.int8(2)` is a `float64`), the type itself for the floats and
/// the complex types.
pub trait TrueDivide: Element {
    /// The quotient's type.
    type Quotient: Element;
}

macro_rules! true_divide {
    ($($t:ty => $q:ty),*) => {$(
        impl TrueDivide for $t {
            type Quotient = $q;
        }
    )*};
}
true_divide!(
    Bool => f64, i8 => f64, u8 => f64, i16 => f64, u16 => f64, i32 => f64, u32 => f64,
    i64 => f64, u64 => f64, f16 => f16, bf16 => bf16, f32 => f32, f64 => f64,
    Complex32 => Complex32, Complex64 => Complex64
);

/// One row of the table: `$t` with each column type (the columns of [`DType::ALL`]).
macro_rules! promote_row {
    ($t:ty: [$($o:ty),*]) => {
        promote_row!(@ $t;
            [Bool, i8, u8, i16, u16, i32, u32, i64, u64, f16, bf16, f32, f64, Complex32, Complex64];
            [$($o),*]);
    };
    (@ $t:ty; [$($u:ty),*]; [$($o:ty),*]) => {$(
        impl Promote<$u> for $t {
            type Output = $o;
        }
    )*};
}

// The table of `gpuarray::promote`'s docs, row by row (the test `promote_trait_agrees_with_the_function`
// checks each cell against `result_type`).
promote_row!(Bool: [Bool, i8, u8, i16, u16, i32, u32, i64, u64, f16, bf16, f32, f64, Complex32, Complex64]);
promote_row!(i8: [i8, i8, i16, i16, i32, i32, i64, i64, f64, f16, bf16, f32, f64, Complex32, Complex64]);
promote_row!(u8: [u8, i16, u8, i16, u16, i32, u32, i64, u64, f16, bf16, f32, f64, Complex32, Complex64]);
promote_row!(i16: [i16, i16, i16, i16, i32, i32, i64, i64, f64, f32, f32, f32, f64, Complex32, Complex64]);
promote_row!(u16: [u16, i32, u16, i32, u16, i32, u32, i64, u64, f32, f32, f32, f64, Complex32, Complex64]);
promote_row!(i32: [i32, i32, i32, i32, i32, i32, i64, i64, f64, f64, f64, f64, f64, Complex64, Complex64]);
promote_row!(u32: [u32, i64, u32, i64, u32, i64, u32, i64, u64, f64, f64, f64, f64, Complex64, Complex64]);
promote_row!(i64: [i64, i64, i64, i64, i64, i64, i64, i64, f64, f64, f64, f64, f64, Complex64, Complex64]);
promote_row!(u64: [u64, f64, u64, f64, u64, f64, u64, f64, u64, f64, f64, f64, f64, Complex64, Complex64]);
promote_row!(f16: [f16, f16, f16, f32, f32, f64, f64, f64, f64, f16, f32, f32, f64, Complex32, Complex64]);
promote_row!(bf16: [bf16, bf16, bf16, f32, f32, f64, f64, f64, f64, f32, bf16, f32, f64, Complex32, Complex64]);
promote_row!(f32: [f32, f32, f32, f32, f32, f64, f64, f64, f64, f32, f32, f32, f64, Complex32, Complex64]);
promote_row!(f64: [f64, f64, f64, f64, f64, f64, f64, f64, f64, f64, f64, f64, f64, Complex64, Complex64]);
promote_row!(Complex32: [Complex32, Complex32, Complex32, Complex32, Complex32, Complex64, Complex64, Complex64, Complex64, Complex32, Complex32, Complex32, Complex64, Complex32, Complex64]);
promote_row!(Complex64: [Complex64, Complex64, Complex64, Complex64, Complex64, Complex64, Complex64, Complex64, Complex64, Complex64, Complex64, Complex64, Complex64, Complex64, Complex64]);

#[cfg(test)]
mod tests {
    use super::*;

    /// NumPy 2's `np.promote_types` for every pair, written out by hand (rows and columns in
    /// the order of `DType::ALL`), with the `bf16` row and column as `gpuarray::promote`'s docs choose.
    const EXPECTED: [&str; 15] = [
        "bool i8 u8 i16 u16 i32 u32 i64 u64 f16 bf16 f32 f64 c32 c64",
        "i8 i8 i16 i16 i32 i32 i64 i64 f64 f16 bf16 f32 f64 c32 c64",
        "u8 i16 u8 i16 u16 i32 u32 i64 u64 f16 bf16 f32 f64 c32 c64",
        "i16 i16 i16 i16 i32 i32 i64 i64 f64 f32 f32 f32 f64 c32 c64",
        "u16 i32 u16 i32 u16 i32 u32 i64 u64 f32 f32 f32 f64 c32 c64",
        "i32 i32 i32 i32 i32 i32 i64 i64 f64 f64 f64 f64 f64 c64 c64",
        "u32 i64 u32 i64 u32 i64 u32 i64 u64 f64 f64 f64 f64 c64 c64",
        "i64 i64 i64 i64 i64 i64 i64 i64 f64 f64 f64 f64 f64 c64 c64",
        "u64 f64 u64 f64 u64 f64 u64 f64 u64 f64 f64 f64 f64 c64 c64",
        "f16 f16 f16 f32 f32 f64 f64 f64 f64 f16 f32 f32 f64 c32 c64",
        "bf16 bf16 bf16 f32 f32 f64 f64 f64 f64 f32 bf16 f32 f64 c32 c64",
        "f32 f32 f32 f32 f32 f64 f64 f64 f64 f32 f32 f32 f64 c32 c64",
        "f64 f64 f64 f64 f64 f64 f64 f64 f64 f64 f64 f64 f64 c64 c64",
        "c32 c32 c32 c32 c32 c64 c64 c64 c64 c32 c32 c32 c64 c32 c64",
        "c64 c64 c64 c64 c64 c64 c64 c64 c64 c64 c64 c64 c64 c64 c64",
    ];

    /// NumPy 2's result with a Python `int`, `float`, `complex` (NEP 50), per column.
    const EXPECTED_WEAK: [(PromoteArg, &str); 3] = [
        (
            PromoteArg::Int,
            "i64 i8 u8 i16 u16 i32 u32 i64 u64 f16 bf16 f32 f64 c32 c64",
        ),
        (
            PromoteArg::Float,
            "f64 f64 f64 f64 f64 f64 f64 f64 f64 f16 bf16 f32 f64 c32 c64",
        ),
        (
            PromoteArg::Complex,
            "c64 c64 c64 c64 c64 c64 c64 c64 c64 c32 c32 c32 c64 c32 c64",
        ),
    ];

    #[test]
    fn every_pair_promotes_as_numpy_2() {
        for (row, expected) in DType::ALL.iter().zip(EXPECTED) {
            let expected: Vec<&str> = expected.split(' ').collect();
            for (col, want) in DType::ALL.iter().zip(expected) {
                assert_eq!(result_type(*row, *col).short_name(), want, "{row:?} with {col:?}");
            }
        }
    }

    #[test]
    fn weak_scalars_take_the_array_type_of_their_kind_or_higher() {
        for (weak, expected) in EXPECTED_WEAK {
            for (d, want) in DType::ALL.iter().zip(expected.split(' ')) {
                assert_eq!(result_type(weak, *d).short_name(), want, "{weak:?} with {d:?}");
                assert_eq!(result_type(*d, weak).short_name(), want, "{d:?} with {weak:?}");
            }
        }
        assert_eq!(result_type(PromoteArg::Int, PromoteArg::Int), DType::I64);
        assert_eq!(result_type(PromoteArg::Int, PromoteArg::Float), DType::F64);
        assert_eq!(
            result_type(PromoteArg::Float, PromoteArg::Complex),
            DType::Complex64
        );
    }

    /// `np.can_cast(row, column, 'same_kind')` for every pair, as NumPy 2.4 prints it (rows
    /// and columns in the order of `DType::ALL`; `bf16` as `f16`).
    #[test]
    fn same_kind_casting_is_numpy_s() {
        const EXPECTED: [&str; 15] = [
            "111111111111111",
            ".1.1.1.1.111111",
            ".11111111111111",
            ".1.1.1.1.111111",
            ".11111111111111",
            ".1.1.1.1.111111",
            ".11111111111111",
            ".1.1.1.1.111111",
            ".11111111111111",
            ".........111111",
            ".........111111",
            ".........111111",
            ".........111111",
            ".............11",
            ".............11",
        ];
        for (from, row) in DType::ALL.iter().zip(EXPECTED) {
            for (to, c) in DType::ALL.iter().zip(row.chars()) {
                assert_eq!(can_cast_same_kind(*from, *to), c == '1', "{from:?} to {to:?}");
            }
        }
    }

    #[test]
    fn the_brief_examples_hold() {
        assert_eq!(result_type(DType::I8, DType::U8), DType::I16);
        assert_eq!(result_type(DType::I64, DType::U64), DType::F64);
        assert_eq!(result_type(DType::I32, DType::F32), DType::F64);
        assert_eq!(result_type(DType::I16, DType::F16), DType::F32);
        assert_eq!(result_type(DType::U8, DType::F16), DType::F16);
        assert_eq!(result_type(DType::Bool, DType::I8), DType::I8);
        assert_eq!(result_type(DType::F16, DType::Bf16), DType::F32);
        assert_eq!(result_type(DType::Complex32, DType::F64), DType::Complex64);
    }

    #[test]
    fn element_scalars_have_their_dtype() {
        use crate::gpuarray::Element;
        assert_eq!(DType::from_scalar(f32::SCALAR), Some(DType::F32));
        assert_eq!(DType::from_scalar(half::bf16::SCALAR), Some(DType::Bf16));
        assert_eq!(DType::from_scalar(u64::SCALAR), Some(DType::U64));
        assert_eq!(DType::from_scalar(Scalar::Usize), None);
    }
}

#[cfg(test)]
mod arithmetic_tests {
    use super::*;

    /// The trait's table is the function's.
    #[test]
    fn promote_trait_agrees_with_the_function() {
        fn check<T: Promote<U>, U: Element>(checked: &mut usize) {
            assert_eq!(
                <T::Output as Element>::DTYPE,
                result_type(T::DTYPE, U::DTYPE),
                "{:?} with {:?}",
                T::DTYPE,
                U::DTYPE
            );
            *checked += 1;
        }
        let mut checked = 0;
        macro_rules! all {
            ($($t:ty),*) => { $( all!(@ $t; Bool, i8, u8, i16, u16, i32, u32, i64, u64, f16, bf16, f32, f64, Complex32, Complex64); )* };
            (@ $t:ty; $($u:ty),*) => { $( check::<$t, $u>(&mut checked); )* };
        }
        all!(Bool, i8, u8, i16, u16, i32, u32, i64, u64, f16, bf16, f32, f64, Complex32, Complex64);
        assert_eq!(checked, DType::ALL.len() * DType::ALL.len());
    }

    #[test]
    fn scalars_outside_the_table_have_no_promotion() {
        assert_eq!(promote(Scalar::Usize, Scalar::F32), None);
        assert_eq!(promote(Scalar::I8, Scalar::U8), Some(Scalar::I16));
        assert_eq!(promote(Scalar::Bf16, Scalar::F16), Some(Scalar::F32));
    }
}
