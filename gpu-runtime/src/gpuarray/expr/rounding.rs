//! NumPy's `around` (`round(a, decimals)`): each element rounded to `decimals` decimal places
//! (negative: to tens, hundreds, ...), halves to even, computed as NumPy computes it:
//! `rint(x * 10^d) / 10^d` in the float's own type (`rint(x / 10^-d) * 10^-d` for negative
//! `d`); an integer array is unchanged for `d >= 0` and goes through `f64` for negative `d`,
//! back to its type; a `bool` array becomes `f16`, as NumPy 2's `round` of one (its `rint`).
//! One fused step of an expression, like the math functions.

use ndarray::Dimension;

use crate::error::Result;
use crate::gpuarray::array::core::{DeviceArray, DeviceArrayBase, StorageMut};
use crate::gpuarray::elements::boolean::Bool;
use crate::gpuarray::elements::element::Element;
use crate::gpuarray::expr::core::{BinOp, Expr, Operand};

mod sealed {
    /// Only the crate's float, integer and `bool` types round.
    pub trait Sealed {}
}

/// The element types [`around`] takes, and `floor`, `ceil`, `trunc`, `fix` and `round` (an integer
/// is its own, of its type, as NumPy 2 keeps it): `f16`, `bf16`, `f32`, `f64`, the integers and
/// `Bool` (sealed). `floor`, `ceil`, `trunc` and `fix` give the element type (a `bool` array
/// unchanged, as NumPy 2.4's); `round` and `around` give [`Rounded`](Round::Rounded): the
/// element type, and `f16` for `Bool`, as NumPy 2's `round` of a `bool` array is its `rint`,
/// `float16`.
pub trait Round: Element + sealed::Sealed {
    /// The type `round` and `around` give: `Self`, or `f16` for `Bool`.
    type Rounded: Element;

    /// `x` rounded to `decimals` places, as a step of the expression.
    #[doc(hidden)]
    fn rounded(x: Expr<'_, Self>, decimals: i32) -> Expr<'_, Self::Rounded>;
}

/// `10^|decimals|` as an expression of `T` (NumPy makes the scale a scalar of the array's type).
fn scale<'a, T: Element>(decimals: i32) -> Expr<'a, T> {
    Expr::scalar(10f64.powi(decimals.saturating_abs())).cast::<T>()
}

/// `Round` of each of the types, their own `Rounded`, `rounded(x, decimals)` the body given.
macro_rules! round {
    ($($t:ty),* => |$x:ident, $decimals:ident| $body:block) => {$(
        impl sealed::Sealed for $t {}
        impl Round for $t {
            type Rounded = $t;

            fn rounded($x: Expr<'_, Self>, $decimals: i32) -> Expr<'_, Self> $body
        }
    )*};
}

// NumPy's float rounding, in the type itself (`rint` alone for no decimals: the scale of 1
// changes nothing).
round!(half::f16, half::bf16, f32, f64 => |x, decimals| {
    if decimals == 0 {
        x.rint()
    } else if decimals > 0 {
        x.bin(BinOp::Mul, scale(decimals)).rint().bin(BinOp::Div, scale(decimals))
    } else {
        x.bin(BinOp::Div, scale(decimals)).rint().bin(BinOp::Mul, scale(decimals))
    }
});

round!(i8, u8, i16, u16, i32, u32, i64, u64 => |x, decimals| {
    if decimals >= 0 {
        x
    } else {
        f64::rounded(x.cast::<f64>(), decimals).cast::<Self>()
    }
});

impl sealed::Sealed for Bool {}
impl Round for Bool {
    type Rounded = half::f16;

    // NumPy 2's `round` of a `bool` array is `rint`'s, `float16`: 0 and 1. NumPy refuses other
    // decimals (its `multiply` by `10^d` in `float64` does not cast back to `bool`); here they
    // round the `f16` values 0 and 1 as an `f16` array's (unchanged for `decimals > 0`, 0 for
    // `decimals < 0`).
    fn rounded(x: Expr<'_, Self>, decimals: i32) -> Expr<'_, half::f16> {
        let x = x.cast::<half::f16>();
        if decimals >= 0 {
            x
        } else {
            half::f16::rounded(x, decimals)
        }
    }
}

/// Each element rounded to `decimals` decimal places, halves to even (NumPy's `around`, and
/// `round(a, decimals)`), into a new array of `x`'s shape and type (`f16` for a `bool` array,
/// as NumPy 2's: [`Round::Rounded`]), on the legacy default stream (on a stream:
/// `a.expr().around(d).on(&stream).eval()`). Negative `decimals` round to tens, hundreds, ...:
/// `around(&a, -1)` of `[15, 25]` is `[20, 20]`. NumPy takes a `bool` array only with
/// `decimals = 0`; other decimals here round its `f16` values 0 and 1 as an `f16` array's.
///
/// ```no_run
/// use gpu_runtime::gpuarray::{math, DeviceArray};
/// use gpu_runtime::ndarray::arr1;
/// let ctx = gpu_runtime::Context::default()?;
/// let a = DeviceArray::from_ndarray(&ctx, &arr1(&[0.125f64, 2.675, -1.5]))?;
/// assert_eq!(math::around(&a, 2)?.to_vec()?, [0.12, 2.68, -1.5]);
/// # Ok::<(), gpu_runtime::Error>(())
/// ```
pub fn around<'a, T: Round, X: Operand<'a, T>>(
    x: X,
    decimals: i32,
) -> Result<DeviceArray<T::Rounded, X::Dim>> {
    T::rounded(x.into_expr(), decimals).eval()?.into_dimensionality()
}

/// [`around`] into `out` (of `x`'s shape, any layout; NumPy's `out=`).
pub fn around_into<'a, T: Round, S: StorageMut<Elem = T::Rounded>, D: Dimension>(
    x: impl Operand<'a, T>,
    decimals: i32,
    out: &mut DeviceArrayBase<S, D>,
) -> Result<()> {
    T::rounded(x.into_expr(), decimals).eval_into(out)
}

impl<'a, T: Round> Expr<'a, T> {
    /// Each element rounded to `decimals` places (see [`around`]; `f16` for `bool`), as a
    /// step of this expression.
    pub fn around(self, decimals: i32) -> Expr<'a, T::Rounded> {
        T::rounded(self, decimals)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpuarray::expr::core::{kernel, Node, Store};
    use crate::gpuarray::kernels::elementwise::Variant;
    use crate::gpuarray::kernels::registry::{check_arch, compile_check};

    /// The kernel of `around` on an array of `T` at both signs of `decimals` compiles with
    /// NVRTC; for an integer at `decimals >= 0` the step is the array itself.
    fn compiles<T: Round>(decimals: i32) {
        let x = Expr::<T> {
            node: Node::Array,
            arrays: Vec::new(),
            scalars: Vec::new(),
            elem: std::marker::PhantomData,
        };
        let rounded = T::rounded(x, decimals);
        let src = kernel::<T::Rounded>(&rounded.node, Store::Assign)
            .unwrap()
            .source(Variant::Contiguous);
        if let Err(e) = compile_check(&src, check_arch(&src)) {
            panic!(
                "around of {:?} by {decimals} does not compile: {e}\n{src}",
                T::DTYPE
            );
        }
    }

    #[test]
    fn around_compiles_for_every_type_it_takes() {
        for d in [-2, 0, 3] {
            compiles::<half::f16>(d);
            compiles::<half::bf16>(d);
            compiles::<f32>(d);
            compiles::<f64>(d);
            compiles::<i8>(d);
            compiles::<u8>(d);
            compiles::<i16>(d);
            compiles::<u16>(d);
            compiles::<i32>(d);
            compiles::<u32>(d);
            compiles::<i64>(d);
            compiles::<u64>(d);
            compiles::<Bool>(d);
        }
        // Integers at decimals >= 0 are left as they are.
        let x = Expr::<i32> {
            node: Node::Array,
            arrays: Vec::new(),
            scalars: Vec::new(),
            elem: std::marker::PhantomData,
        };
        assert_eq!(i32::rounded(x, 2).node, Node::Array);
    }

    #[test]
    fn a_bool_rounds_to_f16_as_numpys() {
        let x = || Expr::<Bool> {
            node: Node::Array,
            arrays: Vec::new(),
            scalars: Vec::new(),
            elem: std::marker::PhantomData,
        };
        // NumPy 2: `np.round(bool_array)` is `float16` (its `rint`), the values 0 and 1: a cast.
        let r: Expr<'_, half::f16> = Bool::rounded(x(), 0);
        assert_eq!(r.node, x().cast::<half::f16>().node);
        assert_eq!(x().round().node, r.node);
        assert_eq!(x().around(2).node, r.node);
        // floor, ceil, trunc and fix keep it `bool`, unchanged (NumPy 2.4).
        let kept: Expr<'_, Bool> = x().floor();
        assert_eq!(kept.node, Node::Array);
        assert_eq!(x().ceil().node, Node::Array);
        assert_eq!(x().trunc().node, Node::Array);
        assert_eq!(x().fix().node, Node::Array);
        // Negative decimals round the f16 values as an f16 array's.
        assert_eq!(
            Bool::rounded(x(), -1).node,
            half::f16::rounded(x().cast::<half::f16>(), -1).node
        );
    }
}
