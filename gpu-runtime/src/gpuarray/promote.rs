//! Mixed element types by NumPy 2's promotion rules: [`promote`] (the table, as a function of
//! two scalar types), [`Promote`] (the same table for the compiler: `<i8 as Promote<u8>>::Output`
//! is `i16`), and arithmetic between operands of two element types ([`add`], [`sub`], [`mul`],
//! [`div`]), each operand converted to the promoted type inside the one kernel of the
//! expression ([`Expr::cast`]).
//!
//! The table, for the element types of this crate (NumPy 2's `np.promote_types`; `bool` is
//! [`Bool`]):
//!
//! |       | bool | i8  | u8  | i16 | u16 | i32 | u32 | i64 | u64 | f32 | f64 |
//! |-------|------|-----|-----|-----|-----|-----|-----|-----|-----|-----|-----|
//! | bool  | bool | i8  | u8  | i16 | u16 | i32 | u32 | i64 | u64 | f32 | f64 |
//! | i8    | i8   | i8  | i16 | i16 | i32 | i32 | i64 | i64 | f64 | f32 | f64 |
//! | u8    | u8   | i16 | u8  | i16 | u16 | i32 | u32 | i64 | u64 | f32 | f64 |
//! | i16   | i16  | i16 | i16 | i16 | i32 | i32 | i64 | i64 | f64 | f32 | f64 |
//! | u16   | u16  | i32 | u16 | i32 | u16 | i32 | u32 | i64 | u64 | f32 | f64 |
//! | i32   | i32  | i32 | i32 | i32 | i32 | i32 | i64 | i64 | f64 | f64 | f64 |
//! | u32   | u32  | i64 | u32 | i64 | u32 | i64 | u32 | i64 | u64 | f64 | f64 |
//! | i64   | i64  | i64 | i64 | i64 | i64 | i64 | i64 | i64 | f64 | f64 | f64 |
//! | u64   | u64  | f64 | u64 | f64 | u64 | f64 | u64 | f64 | u64 | f64 | f64 |
//! | f32   | f32  | f32 | f32 | f32 | f32 | f64 | f64 | f64 | f64 | f32 | f64 |
//! | f64   | f64  | f64 | f64 | f64 | f64 | f64 | f64 | f64 | f64 | f64 | f64 |
//!
//! [`promote`] also knows `f16` (`u8 + f16 -> f16`, `i16 + f16 -> f32`), for the element types
//! to come. Scalars of the array's own type keep it (`&a_f32 * 2.0f32` is `f32`), as NumPy 2's
//! Python scalars do.
//!
//! ```no_run
//! use gpu_runtime::gpuarray::{promote, DeviceArray};
//! use gpu_runtime::{ndarray::Array1, Context};
//! let ctx = Context::default()?;
//! let a = DeviceArray::from_ndarray(&ctx, &Array1::<i32>::from_elem(4, 3).into_dyn())?;
//! let b = DeviceArray::from_ndarray(&ctx, &Array1::<f32>::from_elem(4, 0.5).into_dyn())?;
//! let c = promote::add(&a, &b).eval()?; // i32 + f32 -> f64, as NumPy 2
//! assert_eq!(c.to_vec()?, vec![3.5f64; 4]);
//! # Ok::<(), gpu_runtime::Error>(())
//! ```

use gpu_cdecl::Scalar;

use crate::gpuarray::boolean::Bool;
use crate::gpuarray::element::Element;
use crate::gpuarray::expr::{BinOp, Expr, Operand};

/// What NumPy 2 computes `a op b` in: the promoted type of two scalar types, or `None` for
/// a type outside the table (`size_t`, `ptrdiff_t`, `__nv_bfloat16`).
pub fn promote(a: Scalar, b: Scalar) -> Option<Scalar> {
    use Scalar::*;
    // (is a float, is signed, bits); bool below every number.
    let info = |s: Scalar| -> Option<(bool, bool, u32)> {
        Some(match s {
            I8 => (false, true, 8),
            U8 => (false, false, 8),
            I16 => (false, true, 16),
            U16 => (false, false, 16),
            I32 => (false, true, 32),
            U32 => (false, false, 32),
            I64 => (false, true, 64),
            U64 => (false, false, 64),
            F16 => (true, true, 16),
            F32 => (true, true, 32),
            F64 => (true, true, 64),
            _ => return None,
        })
    };
    let float = |bits: u32| match bits {
        16 => F16,
        32 => F32,
        _ => F64,
    };
    let int = |signed: bool, bits: u32| match (signed, bits) {
        (true, 8) => I8,
        (true, 16) => I16,
        (true, 32) => I32,
        (true, _) => I64,
        (false, 8) => U8,
        (false, 16) => U16,
        (false, 32) => U32,
        (false, _) => U64,
    };
    match (a, b) {
        (Bool, Bool) => return Some(Bool),
        (Bool, x) | (x, Bool) => return info(x).map(|_| x),
        _ => {}
    }
    let ((fa, sa, ba), (fb, sb, bb)) = (info(a)?, info(b)?);
    Some(match (fa, fb) {
        (true, true) => float(ba.max(bb)),
        (true, false) | (false, true) => {
            let (fbits, ibits) = if fa { (ba, bb) } else { (bb, ba) };
            // The smallest float holding every value of the integer exactly enough, as NumPy.
            let needed = match ibits {
                8 => 16,
                16 => 32,
                _ => 64,
            };
            float(fbits.max(needed))
        }
        (false, false) if sa == sb => int(sa, ba.max(bb)),
        (false, false) => {
            let (sbits, ubits) = if sa { (ba, bb) } else { (bb, ba) };
            if ubits < sbits {
                int(true, sbits)
            } else if 2 * ubits <= 64 {
                int(true, 2 * ubits)
            } else {
                F64
            }
        }
    })
}

/// The promoted element type of `Self` with `U`, as [`promote`] gives it, for the compiler.
pub trait Promote<U: Element>: Element {
    /// The type `Self op U` is computed in.
    type Output: Element;
}

/// One row of the table: `$t` with each column type.
macro_rules! promote_row {
    ($t:ty: [$($o:ty),*]) => {
        promote_row!(@ $t; [Bool, i8, u8, i16, u16, i32, u32, i64, u64, f32, f64]; [$($o),*]);
    };
    (@ $t:ty; [$($u:ty),*]; [$($o:ty),*]) => {$(
        impl Promote<$u> for $t {
            type Output = $o;
        }
    )*};
}

promote_row!(Bool: [Bool, i8, u8, i16, u16, i32, u32, i64, u64, f32, f64]);
promote_row!(i8: [i8, i8, i16, i16, i32, i32, i64, i64, f64, f32, f64]);
promote_row!(u8: [u8, i16, u8, i16, u16, i32, u32, i64, u64, f32, f64]);
promote_row!(i16: [i16, i16, i16, i16, i32, i32, i64, i64, f64, f32, f64]);
promote_row!(u16: [u16, i32, u16, i32, u16, i32, u32, i64, u64, f32, f64]);
promote_row!(i32: [i32, i32, i32, i32, i32, i32, i64, i64, f64, f64, f64]);
promote_row!(u32: [u32, i64, u32, i64, u32, i64, u32, i64, u64, f64, f64]);
promote_row!(i64: [i64, i64, i64, i64, i64, i64, i64, i64, f64, f64, f64]);
promote_row!(u64: [u64, f64, u64, f64, u64, f64, u64, f64, u64, f64, f64]);
promote_row!(f32: [f32, f32, f32, f32, f32, f64, f64, f64, f64, f32, f64]);
promote_row!(f64: [f64, f64, f64, f64, f64, f64, f64, f64, f64, f64, f64]);

/// `x op y` with both converted to their promoted type.
fn mixed<'a, T: Promote<U>, U: Element>(
    op: BinOp,
    x: impl Operand<'a, T>,
    y: impl Operand<'a, U>,
) -> Expr<'a, T::Output> {
    let x = x.into_expr().cast::<T::Output>();
    let y = y.into_expr().cast::<T::Output>();
    x.bin(op, y)
}

/// `x + y` for operands of two element types, in their promoted type (an expression: one
/// kernel when evaluated).
pub fn add<'a, T: Promote<U>, U: Element>(
    x: impl Operand<'a, T>,
    y: impl Operand<'a, U>,
) -> Expr<'a, T::Output> {
    mixed(BinOp::Add, x, y)
}

/// `x - y` in the promoted type; see [`add`].
pub fn sub<'a, T: Promote<U>, U: Element>(
    x: impl Operand<'a, T>,
    y: impl Operand<'a, U>,
) -> Expr<'a, T::Output> {
    mixed(BinOp::Sub, x, y)
}

/// `x * y` in the promoted type; see [`add`].
pub fn mul<'a, T: Promote<U>, U: Element>(
    x: impl Operand<'a, T>,
    y: impl Operand<'a, U>,
) -> Expr<'a, T::Output> {
    mixed(BinOp::Mul, x, y)
}

/// `x / y` in the promoted type (NumPy's `/` on two integer arrays gives `f64`: convert with
/// [`Expr::cast`] first for that); see [`add`].
pub fn div<'a, T: Promote<U>, U: Element>(
    x: impl Operand<'a, T>,
    y: impl Operand<'a, U>,
) -> Expr<'a, T::Output> {
    mixed(BinOp::Div, x, y)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// NumPy 2's `np.promote_types`, written down row by row.
    #[test]
    fn promotion_table_is_numpy_2s() {
        use Scalar::*;
        let cols = [Bool, I8, U8, I16, U16, I32, U32, I64, U64, F16, F32, F64];
        let table: [(Scalar, [Scalar; 12]); 12] = [
            (Bool, [Bool, I8, U8, I16, U16, I32, U32, I64, U64, F16, F32, F64]),
            (I8, [I8, I8, I16, I16, I32, I32, I64, I64, F64, F16, F32, F64]),
            (U8, [U8, I16, U8, I16, U16, I32, U32, I64, U64, F16, F32, F64]),
            (I16, [I16, I16, I16, I16, I32, I32, I64, I64, F64, F32, F32, F64]),
            (U16, [U16, I32, U16, I32, U16, I32, U32, I64, U64, F32, F32, F64]),
            (I32, [I32, I32, I32, I32, I32, I32, I64, I64, F64, F64, F64, F64]),
            (U32, [U32, I64, U32, I64, U32, I64, U32, I64, U64, F64, F64, F64]),
            (I64, [I64, I64, I64, I64, I64, I64, I64, I64, F64, F64, F64, F64]),
            (U64, [U64, F64, U64, F64, U64, F64, U64, F64, U64, F64, F64, F64]),
            (F16, [F16, F16, F16, F32, F32, F64, F64, F64, F64, F16, F32, F64]),
            (F32, [F32, F32, F32, F32, F32, F64, F64, F64, F64, F32, F32, F64]),
            (F64, [F64, F64, F64, F64, F64, F64, F64, F64, F64, F64, F64, F64]),
        ];
        for (row, outs) in table {
            for (col, want) in cols.iter().zip(outs) {
                assert_eq!(promote(row, *col), Some(want), "{row:?} + {col:?}");
            }
        }
        assert_eq!(promote(Scalar::Usize, Scalar::F32), None);
        assert_eq!(promote(Scalar::Bf16, Scalar::Bool), None);
    }

    /// The trait's table is the function's.
    #[test]
    fn promote_trait_agrees_with_the_function() {
        fn check<T: Promote<U>, U: Element>() {
            assert_eq!(
                Some(<T::Output as Element>::SCALAR),
                promote(T::SCALAR, U::SCALAR),
                "{:?} + {:?}",
                T::SCALAR,
                U::SCALAR
            );
        }
        macro_rules! all {
            ($($t:ty),*) => { $( all!(@ $t; Bool, i8, u8, i16, u16, i32, u32, i64, u64, f32, f64); )* };
            (@ $t:ty; $($u:ty),*) => { $( check::<$t, $u>(); )* };
        }
        all!(Bool, i8, u8, i16, u16, i32, u32, i64, u64, f32, f64);
    }

    #[test]
    fn mixed_operands_are_cast_in_the_kernel() {
        let e = add(Operand::<i32>::into_expr(3), 0.5f32);
        assert_eq!(e.operation(), "out = ((double)(((double)(s0)) + ((double)(s1))))");
        let e = mul(Operand::<u8>::into_expr(3), -2i8);
        assert_eq!(e.operation(), "out = ((short)(((short)(s0)) * ((short)(s1))))");
    }
}
