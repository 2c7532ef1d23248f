//! NumPy's bitwise functions: the operators `&`, `|`, `^`, `!` (NumPy's `~`), `<<` and `>>` on
//! arrays and expressions of [`Bitwise`] elements (`bool` and the integers; the shifts the
//! integers only), the same as steps of an [`Expr`] (`bitwise_and`, ..., `left_shift`), and
//! the free functions with NumPy's names (re-exported by [`math`](crate::gpuarray::math)),
//! with `bitwise_count`, `gcd` and `lcm`.
//!
//! The shifts follow NumPy's loops, where C's are undefined: a count that is negative or at
//! least the type's width shifts everything out (`left_shift` gives 0, `right_shift` 0 or -1 by
//! the sign); a left shift of a negative number wraps as the unsigned bits do. `gcd` and `lcm`
//! are non-negative; `lcm` is 0 where either operand is.
//!
//! ```no_run
//! use gpu_runtime::gpuarray::{math, DeviceArray};
//! use gpu_runtime::{ndarray::arr1, Context};
//! let ctx = Context::default()?;
//! let a = DeviceArray::from_ndarray(&ctx, &arr1(&[12u32, 10, 7]))?;
//! let b = DeviceArray::from_ndarray(&ctx, &arr1(&[10u32, 4, 1]))?;
//! assert_eq!((&a & &b).eval()?.to_vec()?, [8, 0, 1]);
//! assert_eq!((&a << 2u32).eval()?.to_vec()?, [48, 40, 28]);
//! assert_eq!(math::gcd(&a, &b)?.to_vec()?, [2, 2, 1]);
//! # Ok::<(), gpu_runtime::Error>(())
//! ```

use std::ops::{BitAnd, BitOr, BitXor, Not, Shl, Shr};

use ndarray::{Dimension, IxDyn};

use crate::error::Result;
use crate::gpuarray::array::core::{DeviceArray, DeviceArrayBase, Storage, StorageMut};
use crate::gpuarray::elements::bitwise::Bitwise;
use crate::gpuarray::elements::index_element::IndexElement;
use crate::gpuarray::expr::core::{call_steps, operand_fns, Expr, Operand};
use crate::gpuarray::expr::func::Func;

impl<'a, T: Bitwise> Expr<'a, T> {
    call_steps! {
        /// `self & rhs`, bit by bit (NumPy's `bitwise_and`; logical for `bool`).
        bitwise_and(rhs: T) -> T = Func::BitAnd;
        /// `self | rhs`, bit by bit (NumPy's `bitwise_or`).
        bitwise_or(rhs: T) -> T = Func::BitOr;
        /// `self ^ rhs`, bit by bit (NumPy's `bitwise_xor`).
        bitwise_xor(rhs: T) -> T = Func::BitXor;
        /// Every bit flipped (NumPy's `invert`, `~`): `!x` of a `bool`.
        invert() -> T = Func::Invert;
    }
}

impl<'a, T: IndexElement> Expr<'a, T> {
    call_steps! {
        /// `self << count` (NumPy's `left_shift`: 0 for a count that is negative or at least
        /// the width).
        left_shift(count: T) -> T = Func::Shl;
        /// `self >> count` (NumPy's `right_shift`: arithmetic for signed types; for a count that
        /// is negative or at least the width, -1 where `self` is negative, else 0).
        right_shift(count: T) -> T = Func::Shr;
        /// The number of one bits of `|self|` (NumPy's `bitwise_count`), a `u8`.
        bitwise_count() -> u8 = Func::BitCount;
        /// The greatest common divisor of `|self|` and `|rhs|` (NumPy's `gcd`; `gcd(0, 0)` is 0).
        gcd(rhs: T) -> T = Func::Gcd;
        /// The least common multiple of `|self|` and `|rhs|` (NumPy's `lcm`; 0 where either is 0;
        /// wraps where it overflows the type).
        lcm(rhs: T) -> T = Func::Lcm;
    }
}

/// `array op rhs` and `expr op rhs` for an operator of two operands.
macro_rules! operators {
    ($bound:ident; $($tr:ident $m:ident $method:ident),*) => {$(
        impl<'a, S: Storage<Elem: $bound>, D: Dimension, R: Operand<'a, S::Elem>> $tr<R> for &'a DeviceArrayBase<S, D> {
            type Output = Expr<'a, S::Elem>;
            fn $m(self, rhs: R) -> Expr<'a, S::Elem> {
                self.into_expr().$method(rhs)
            }
        }
        impl<'a, T: $bound, R: Operand<'a, T>> $tr<R> for Expr<'a, T> {
            type Output = Expr<'a, T>;
            fn $m(self, rhs: R) -> Expr<'a, T> {
                self.$method(rhs)
            }
        }
    )*};
}
operators!(Bitwise; BitAnd bitand bitwise_and, BitOr bitor bitwise_or, BitXor bitxor bitwise_xor);
operators!(IndexElement; Shl shl left_shift, Shr shr right_shift);

// `!a` is NumPy's `~a`: Rust's `!` is bitwise on integers and logical on `bool`, as NumPy's
// `~` is.
impl<'a, S: Storage<Elem: Bitwise>, D: Dimension> Not for &'a DeviceArrayBase<S, D> {
    type Output = Expr<'a, S::Elem>;
    fn not(self) -> Expr<'a, S::Elem> {
        self.into_expr().invert()
    }
}

impl<'a, T: Bitwise> Not for Expr<'a, T> {
    type Output = Expr<'a, T>;
    fn not(self) -> Expr<'a, T> {
        self.invert()
    }
}

/// The free functions of two operands (and their `_into` forms).
macro_rules! binary_fns {
    ($bound:ident; $($name:ident $into:ident $method:ident, $doc:literal;)*) => {$(
        #[doc = concat!($doc, ", element by element, into a new array, on the legacy default stream (each operand an array, an [`Expr`] or a scalar; fuse with [`Expr::", stringify!($method), "`]).")]
        pub fn $name<'a, T: $bound>(x: impl Operand<'a, T>, y: impl Operand<'a, T>) -> Result<DeviceArray<T, IxDyn>> {
            x.into_expr().$method(y).eval()
        }
        #[doc = concat!("[`", stringify!($name), "`] into `out` (NumPy's `out=`; any layout of the operands' shape).")]
        pub fn $into<'a, T: $bound, S: StorageMut<Elem = T>, D: Dimension>(
            x: impl Operand<'a, T>,
            y: impl Operand<'a, T>,
            out: &mut DeviceArrayBase<S, D>,
        ) -> Result<()> {
            x.into_expr().$method(y).eval_into(out)
        }
    )*};
}

binary_fns!(Bitwise;
    bitwise_and bitwise_and_into bitwise_and, "NumPy's `bitwise_and(x, y)` (`x & y`)";
    bitwise_or bitwise_or_into bitwise_or, "NumPy's `bitwise_or(x, y)` (`x | y`)";
    bitwise_xor bitwise_xor_into bitwise_xor, "NumPy's `bitwise_xor(x, y)` (`x ^ y`)";
);

binary_fns!(IndexElement;
    left_shift left_shift_into left_shift, "NumPy's `left_shift(x, y)` (`x << y`)";
    right_shift right_shift_into right_shift, "NumPy's `right_shift(x, y)` (`x >> y`)";
    gcd gcd_into gcd, "NumPy's `gcd(x, y)`";
    lcm lcm_into lcm, "NumPy's `lcm(x, y)`";
);

operand_fns! {
    /// NumPy's `invert(x)` (`~x`; its alias `bitwise_not`): every bit flipped, `!x` of a `bool`,
    /// into a new array, on the legacy default stream.
    invert[T: Bitwise](x: T) -> T = x.into_expr().invert().eval();
    /// [`invert`] into `out` (NumPy's `out=`; any layout of the operand's shape).
    invert_into[T: Bitwise](x: T; out: T) = x.into_expr().invert().eval_into(out);
    /// NumPy's `bitwise_count(x)`: the number of one bits of each `|x|`, a `u8` array, on the
    /// legacy default stream.
    bitwise_count[T: IndexElement](x: T) -> u8 = x.into_expr().bitwise_count().eval();
    /// [`bitwise_count`] into a `u8` array `out` (NumPy's `out=`).
    bitwise_count_into[T: IndexElement](x: T; out: u8) = x.into_expr().bitwise_count().eval_into(out);
}
