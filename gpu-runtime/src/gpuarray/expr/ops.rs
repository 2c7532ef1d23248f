//! The operators that build an [`Expr`] (`&a + &b`, `&a * 3.0`, `3.0 * &a`, `-&a`, `&a % &b`
//! (NumPy's `%`: [`BinOp::Rem`]), and the same on expressions), and the array methods that evaluate one at once: `a.add(&b)?`,
//! `a.mul(3.0)?`, and the in-place `a.add_assign(&b)?`, `a.mul_assign(2.0)?` (on a stream:
//! `a.on_mut(&stream).add_assign(&b)?`, through [`OnStream`]).
//!
//! `std::ops::AddAssign` and its kin are not implemented: they cannot return the error of a
//! launch, and this crate does not panic on what its user passes. The `*_assign` methods take
//! their place.

use std::ops::{Add, Div, Mul, Neg, Rem, Sub};

use ndarray::{Dimension, IxDyn};

use crate::error::Result;
use crate::gpuarray::array::core::{DeviceArray, DeviceArrayBase, Storage, StorageMut};
use crate::gpuarray::array::on_stream::OnStream;
use crate::gpuarray::elements::element::Element;
use crate::gpuarray::elements::promotion::TrueDivide;
use crate::gpuarray::expr::core::{BinOp, Expr, Operand, Store};
use crate::types::{Complex32, Complex64};

macro_rules! binary_ops {
    ($($tr:ident $m:ident $op:ident),*) => {$(
        impl<'a, S: Storage<Elem: Element>, D: Dimension, R: Operand<'a, S::Elem>> $tr<R> for &'a DeviceArrayBase<S, D> {
            type Output = Expr<'a, S::Elem>;
            fn $m(self, rhs: R) -> Expr<'a, S::Elem> {
                self.into_expr().bin(BinOp::$op, rhs.into_expr())
            }
        }
        impl<'a, T: Element, R: Operand<'a, T>> $tr<R> for Expr<'a, T> {
            type Output = Expr<'a, T>;
            fn $m(self, rhs: R) -> Expr<'a, T> {
                self.bin(BinOp::$op, rhs.into_expr())
            }
        }
    )*};
}
binary_ops!(Add add Add, Sub sub Sub, Mul mul Mul, Rem rem Rem);

/// NumPy's true division of two expressions of `T`, computed in `T`'s quotient type (`f64`
/// for `bool` and the integers, `T` itself otherwise: no conversion then).
fn true_div<'a, T: TrueDivide>(x: Expr<'a, T>, y: Expr<'a, T>) -> Expr<'a, T::Quotient> {
    let x = Expr::<T::Quotient>::from_untyped(x.promoted::<T::Quotient>());
    let y = Expr::<T::Quotient>::from_untyped(y.promoted::<T::Quotient>());
    x.bin(BinOp::Div, y)
}

// `/` is NumPy's true division: integer (and `bool`) operands give `f64`, as `np.int32(7) /
// np.int32(2)` is `3.5`; `floor_divide` is the integer division.
impl<'a, S: Storage<Elem: TrueDivide>, D: Dimension, R: Operand<'a, S::Elem>> Div<R>
    for &'a DeviceArrayBase<S, D>
{
    type Output = Expr<'a, <S::Elem as TrueDivide>::Quotient>;
    fn div(self, rhs: R) -> Self::Output {
        true_div(self.into_expr(), rhs.into_expr())
    }
}

impl<'a, T: TrueDivide, R: Operand<'a, T>> Div<R> for Expr<'a, T> {
    type Output = Expr<'a, T::Quotient>;
    fn div(self, rhs: R) -> Self::Output {
        true_div(self, rhs.into_expr())
    }
}

/// `scalar op array` and `scalar op expression`, for each element type.
macro_rules! scalar_lhs {
    ($($t:ty),*) => {$(
        scalar_lhs!(@ops $t, Add add Add, Sub sub Sub, Mul mul Mul, Rem rem Rem);
        impl<'a, S: Storage<Elem = $t>, D: Dimension> Div<&'a DeviceArrayBase<S, D>> for $t {
            type Output = Expr<'a, <$t as TrueDivide>::Quotient>;
            fn div(self, rhs: &'a DeviceArrayBase<S, D>) -> Self::Output {
                true_div(Operand::<'a, $t>::into_expr(self), rhs.into_expr())
            }
        }
        impl<'a> Div<Expr<'a, $t>> for $t {
            type Output = Expr<'a, <$t as TrueDivide>::Quotient>;
            fn div(self, rhs: Expr<'a, $t>) -> Self::Output {
                true_div(Operand::<'a, $t>::into_expr(self), rhs)
            }
        }
    )*};
    (@ops $t:ty, $($tr:ident $m:ident $op:ident),*) => {$(
        impl<'a, S: Storage<Elem = $t>, D: Dimension> $tr<&'a DeviceArrayBase<S, D>> for $t {
            type Output = Expr<'a, $t>;
            fn $m(self, rhs: &'a DeviceArrayBase<S, D>) -> Expr<'a, $t> {
                Operand::<'a, $t>::into_expr(self).bin(BinOp::$op, rhs.into_expr())
            }
        }
        impl<'a> $tr<Expr<'a, $t>> for $t {
            type Output = Expr<'a, $t>;
            fn $m(self, rhs: Expr<'a, $t>) -> Expr<'a, $t> {
                Operand::<'a, $t>::into_expr(self).bin(BinOp::$op, rhs)
            }
        }
    )*};
}
scalar_lhs!(i8, u8, i16, u16, i32, u32, i64, u64, f32, f64, Complex32, Complex64);

impl<'a, S: Storage<Elem: Element>, D: Dimension> Neg for &'a DeviceArrayBase<S, D> {
    type Output = Expr<'a, S::Elem>;
    fn neg(self) -> Expr<'a, S::Elem> {
        self.into_expr().neg()
    }
}

impl<'a, T: Element> Neg for Expr<'a, T> {
    type Output = Expr<'a, T>;
    fn neg(self) -> Expr<'a, T> {
        Expr::neg(self)
    }
}

macro_rules! eval_methods {
    ($($m:ident $op:ident $what:literal),*) => {$(
        #[doc = concat!("`self ", $what, " rhs` (an array of the same shape and element type, an [`Expr`], or a scalar) into a new array, as one kernel: [`Expr::eval`].")]
        pub fn $m<'a, R: Operand<'a, S::Elem>>(&'a self, rhs: R) -> Result<DeviceArray<S::Elem, IxDyn>> {
            self.into_expr().bin(BinOp::$op, rhs.into_expr()).eval()
        }
    )*};
}

macro_rules! assign_methods {
    ($($m:ident $op:ident $what:literal),*) => {$(
        #[doc = concat!("`self ", $what, "= rhs` in place, as one kernel (`std::ops::", stringify!($op), "Assign` cannot return the launch's error, so it is this method).")]
        pub fn $m<'a, R: Operand<'a, S::Elem>>(&mut self, rhs: R) -> Result<()>
        where
            S: StorageMut,
        {
            self.op_assign(BinOp::$op, rhs)
        }
    )*};
}

/// The stream forms of `assign_methods!`'s.
macro_rules! assign_methods_on {
    ($($m:ident $op:ident),*) => {$(
        #[doc = concat!("[`", stringify!($m), "`](DeviceArrayBase::", stringify!($m), ") on this stream.")]
        pub fn $m<'a, R: Operand<'a, S::Elem>>(&mut self, rhs: R) -> Result<()> {
            self.op_assign(BinOp::$op, rhs)
        }
    )*};
}

impl<S: Storage<Elem: Element>, D: Dimension> DeviceArrayBase<S, D> {
    /// The array as an [`Expr`], to build on with methods rather than operators.
    pub fn expr(&self) -> Expr<'_, S::Elem> {
        self.into_expr()
    }

    eval_methods!(add Add "+", sub Sub "-", mul Mul "*", rem Rem "%", floor_divide FloorDiv "//");

    /// `self / rhs` (an array of the same shape and element type, an [`Expr`], or a scalar)
    /// into a new array, as one kernel: NumPy's true division, in `f64` for `bool` and
    /// integer elements (`floor_divide` divides integers as integers).
    pub fn div<'a, R: Operand<'a, S::Elem>>(
        &'a self,
        rhs: R,
    ) -> Result<DeviceArray<<S::Elem as TrueDivide>::Quotient, IxDyn>>
    where
        S::Elem: TrueDivide,
    {
        true_div(self.into_expr(), rhs.into_expr()).eval()
    }

    /// `-self` into a new array.
    pub fn neg(&self) -> Result<DeviceArray<S::Elem, IxDyn>> {
        self.into_expr().neg().eval()
    }

    assign_methods!(add_assign Add "+", sub_assign Sub "-", mul_assign Mul "*", div_assign Div "/", rem_assign Rem "%");

    /// Stores `rhs` (an array, an [`Expr`] or a scalar) into this array, as one kernel, on the
    /// legacy default stream.
    pub fn assign_expr<'a, R: Operand<'a, S::Elem>>(&mut self, rhs: R) -> Result<()>
    where
        S: StorageMut,
    {
        rhs.into_expr().store(None, self, Store::Assign)
    }

    /// `self op= rhs` in place, as one kernel, on the legacy default stream:
    /// [`add_assign`](Self::add_assign) and its kin with the operator as a value.
    pub fn op_assign<'a, R: Operand<'a, S::Elem>>(&mut self, op: BinOp, rhs: R) -> Result<()>
    where
        S: StorageMut,
    {
        rhs.into_expr().store(None, self, Store::Compound(op))
    }
}

impl<S: StorageMut<Elem: Element>, D: Dimension> OnStream<'_, &mut DeviceArrayBase<S, D>> {
    /// [`assign_expr`](DeviceArrayBase::assign_expr) on this stream.
    pub fn assign_expr<'a, R: Operand<'a, S::Elem>>(&mut self, rhs: R) -> Result<()> {
        rhs.into_expr().store(self.stream, self.target, Store::Assign)
    }

    /// [`op_assign`](DeviceArrayBase::op_assign) on this stream.
    pub fn op_assign<'a, R: Operand<'a, S::Elem>>(&mut self, op: BinOp, rhs: R) -> Result<()> {
        rhs.into_expr()
            .store(self.stream, self.target, Store::Compound(op))
    }

    assign_methods_on!(add_assign Add, sub_assign Sub, mul_assign Mul, div_assign Div, rem_assign Rem);
}
