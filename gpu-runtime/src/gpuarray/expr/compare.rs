//! Comparisons, logic and NumPy's elementwise functions of any number type: `gt`..`ne`
//! (giving [`Bool`] arrays), `logical_and/or/xor/not`, `where_`, `maximum`/`minimum` (NaN
//! propagates) and `fmax`/`fmin` (NaN ignored), `abs`, `pow`, `sign`, `clip`, `remainder` and
//! `floor_divide`: as steps of an [`Expr`], as array methods (comparisons), and as free
//! functions with NumPy's names (re-exported by [`math`](crate::gpuarray::math)).
//!
//! Rust's `>` cannot return an array (`PartialOrd` gives one `bool`), so comparisons are
//! methods: `a.gt(&b)?`, `(&a * 2.0).le(1.0)`.
//!
//! Integer rules, as NumPy's: `abs(MIN)` wraps to `MIN`; `pow` on integers is exact repeated
//! squaring that wraps on overflow, and a negative exponent (NumPy raises an error, which a
//! kernel cannot) gives what `1 / x^|e|` gives in integers: 1 for `x == 1`, ±1 for
//! `x == -1`, else 0. Division and remainder by zero give 0 (NumPy warns and gives 0).

use ndarray::{Dimension, IxDyn};

use crate::error::Result;
use crate::gpuarray::array::core::{DeviceArray, DeviceArrayBase, Storage};
use crate::gpuarray::elements::boolean::Bool;
use crate::gpuarray::elements::element::Element;
use crate::gpuarray::expr::core::{call_steps, operand_fns, BinOp, Expr, Operand};
use crate::gpuarray::expr::func::{CmpOp, Func};

impl<'a, T: Element> Expr<'a, T> {
    /// `self op rhs` for a comparison `op`, as a step of this expression.
    pub fn compare(self, op: CmpOp, rhs: impl Operand<'a, T>) -> Expr<'a, Bool> {
        Expr::call(Func::Compare(op), vec![self.untyped(), rhs.into_expr().untyped()])
    }

    call_steps! {
        /// `self > rhs` (NumPy's `greater`), each element a [`Bool`].
        gt(rhs: T) -> Bool = Func::Compare(CmpOp::Gt);
        /// `self < rhs` (`less`).
        lt(rhs: T) -> Bool = Func::Compare(CmpOp::Lt);
        /// `self >= rhs` (`greater_equal`).
        ge(rhs: T) -> Bool = Func::Compare(CmpOp::Ge);
        /// `self <= rhs` (`less_equal`).
        le(rhs: T) -> Bool = Func::Compare(CmpOp::Le);
        /// `self == rhs` (`equal`; NaN equals nothing).
        eq(rhs: T) -> Bool = Func::Compare(CmpOp::Eq);
        /// `self != rhs` (`not_equal`; NaN differs from everything).
        ne(rhs: T) -> Bool = Func::Compare(CmpOp::Ne);
        /// Logical and of the truth values (nonzero is true) of `self` and `rhs`, of any type.
        logical_and<U: Element>(rhs: U) -> Bool = Func::And;
        /// Logical or; see [`logical_and`](Self::logical_and).
        logical_or<U: Element>(rhs: U) -> Bool = Func::Or;
        /// Logical exclusive or; see [`logical_and`](Self::logical_and).
        logical_xor<U: Element>(rhs: U) -> Bool = Func::Xor;
        /// Logical not (true where the element is zero).
        logical_not() -> Bool = Func::Not;
        /// NumPy's `maximum`: the larger of the two; NaN if either is NaN.
        maximum(rhs: T) -> T = Func::Maximum;
        /// NumPy's `minimum`: the smaller of the two; NaN if either is NaN.
        minimum(rhs: T) -> T = Func::Minimum;
        /// NumPy's `fmax`: the larger, ignoring a NaN (NaN only if both are).
        fmax(rhs: T) -> T = Func::Fmax;
        /// NumPy's `fmin`: the smaller, ignoring a NaN.
        fmin(rhs: T) -> T = Func::Fmin;
        /// `|self|` (NumPy's `abs`/`absolute`; for integers `MIN` stays `MIN`, as NumPy's wraps).
        abs() -> T = Func::Abs;
        /// -1, 0 or 1 by the sign (NumPy's `sign`; NaN gives NaN, `-0.0` gives 0).
        sign() -> T = Func::Sign;
        /// `self ** exponent` (NumPy's `power`): `powf`/`pow` for floats; for integers exact
        /// repeated squaring, wrapping on overflow (negative exponents: see the module docs).
        pow(exponent: T) -> T = Func::Pow;
    }

    /// `cond ? a : b` element by element (NumPy's `where(cond, a, b)`; `where` is a Rust
    /// keyword). The branches are arrays, expressions or scalars of `T`.
    pub fn where_(
        cond: impl Operand<'a, Bool>,
        a: impl Operand<'a, T>,
        b: impl Operand<'a, T>,
    ) -> Expr<'a, T> {
        Expr::call(
            Func::Where,
            vec![
                cond.into_expr().untyped(),
                a.into_expr().untyped(),
                b.into_expr().untyped(),
            ],
        )
    }

    /// NumPy's `clip(self, lo, hi)`: `minimum(maximum(self, lo), hi)`, in that order (so
    /// `hi` wins when `lo > hi`; NaN propagates).
    pub fn clip(self, lo: impl Operand<'a, T>, hi: impl Operand<'a, T>) -> Expr<'a, T> {
        self.maximum(lo).minimum(hi)
    }

    /// NumPy's `%` (`remainder`; also the `%` operator): the sign of the divisor; integers by
    /// zero give 0.
    pub fn remainder(self, rhs: impl Operand<'a, T>) -> Expr<'a, T> {
        self.bin(BinOp::Rem, rhs.into_expr())
    }

    /// NumPy's `//` (`floor_divide`): rounded toward minus infinity; integers by zero give 0.
    pub fn floor_divide(self, rhs: impl Operand<'a, T>) -> Expr<'a, T> {
        self.bin(BinOp::FloorDiv, rhs.into_expr())
    }
}

/// The comparisons of arrays, evaluated at once into a [`Bool`] array.
macro_rules! compare_methods {
    ($($m:ident $what:literal),*) => {$(
        #[doc = concat!("`self ", $what, " rhs` (an array, an [`Expr`] or a scalar of the same element type) into a new [`Bool`] array, as one kernel.")]
        pub fn $m<'a, R: Operand<'a, S::Elem>>(&'a self, rhs: R) -> Result<DeviceArray<Bool, IxDyn>> {
            self.into_expr().$m(rhs).eval()
        }
    )*};
}

impl<S: Storage<Elem: Element>, D: Dimension> DeviceArrayBase<S, D> {
    compare_methods!(gt ">", lt "<", ge ">=", le "<=", eq "==", ne "!=");
}

/// Free functions of two operands of one type, evaluated into a new array.
macro_rules! binary_free {
    ($($name:ident $m:ident => $out:ty, $doc:literal;)*) => {$(
        #[doc = concat!($doc, ", element by element, into a new array (each operand an array, an [`Expr`] or a scalar; fuse with [`Expr::", stringify!($m), "`]).")]
        pub fn $name<'a, T: Element>(x: impl Operand<'a, T>, y: impl Operand<'a, T>) -> Result<DeviceArray<$out, IxDyn>> {
            x.into_expr().$m(y).eval()
        }
    )*};
}

binary_free!(
    greater gt => Bool, "`x > y`";
    less lt => Bool, "`x < y`";
    greater_equal ge => Bool, "`x >= y`";
    less_equal le => Bool, "`x <= y`";
    equal eq => Bool, "`x == y`";
    not_equal ne => Bool, "`x != y`";
    maximum maximum => T, "NumPy's `maximum` (NaN propagates)";
    minimum minimum => T, "NumPy's `minimum` (NaN propagates)";
    fmax fmax => T, "NumPy's `fmax` (NaN ignored)";
    fmin fmin => T, "NumPy's `fmin` (NaN ignored)";
    power pow => T, "NumPy's `power`: `x ** y`";
    remainder remainder => T, "NumPy's `remainder` (`%`: the sign of `y`)";
    floor_divide floor_divide => T, "NumPy's `floor_divide` (`//`)";
);

/// NumPy's `divmod(x, y)`: the pair `(floor_divide(x, y), remainder(x, y))`, each into a new
/// array (two kernels; each operand an array or a scalar, read by both).
pub fn divmod<'a, T: Element, X: Operand<'a, T> + Copy, Y: Operand<'a, T> + Copy>(
    x: X,
    y: Y,
) -> Result<(DeviceArray<T, IxDyn>, DeviceArray<T, IxDyn>)> {
    Ok((floor_divide(x, y)?, remainder(x, y)?))
}

operand_fns! {
    /// Logical and of `x` and `y` (any element types; nonzero is true) into a new [`Bool`] array.
    logical_and[T: Element, U: Element](x: T, y: U) -> Bool = x.into_expr().logical_and(y).eval();
    /// Logical or; see [`logical_and`].
    logical_or[T: Element, U: Element](x: T, y: U) -> Bool = x.into_expr().logical_or(y).eval();
    /// Logical exclusive or; see [`logical_and`].
    logical_xor[T: Element, U: Element](x: T, y: U) -> Bool = x.into_expr().logical_xor(y).eval();
    /// Logical not (true where `x` is zero) into a new [`Bool`] array.
    logical_not[T: Element](x: T) -> Bool = x.into_expr().logical_not().eval();
    /// NumPy's `where(cond, a, b)`: `a` where `cond` is true, else `b`, into a new array (`where`
    /// is a Rust keyword; fuse with [`Expr::where_`]).
    where_[T: Element](cond: Bool, a: T, b: T) -> T = Expr::where_(cond, a, b).eval();
    /// `|x|` (NumPy's `absolute`; integers wrap at `MIN`) into a new array.
    absolute[T: Element](x: T) -> T = x.into_expr().abs().eval();
    /// NumPy's `sign` (NaN gives NaN) into a new array.
    sign[T: Element](x: T) -> T = x.into_expr().sign().eval();
    /// NumPy's `clip(x, lo, hi)` (`minimum(maximum(x, lo), hi)`) into a new array.
    clip[T: Element](x: T, lo: T, hi: T) -> T = x.into_expr().clip(lo, hi).eval();
    /// NumPy's `abs`: [`absolute`] (integers wrap at `MIN`).
    abs[T: Element](x: T) -> T = absolute(x);
    /// NumPy 2's `pow`: [`power`] (`x ** y`; PyCUDA's `a ** b` on arrays and scalars).
    pow[T: Element](x: T, y: T) -> T = power(x, y);
}
