//! NumPy's `isclose`, `allclose`, `array_equal`, `array_equiv` and `nan_to_num`, written as [`Expr`]essions (so they fuse,
//! broadcast, and run on a stream as any expression does: `isclose_expr(...).on(&s).eval()`).
//!
//! `isclose` is NumPy 2's formula, asymmetric in its operands (`b` is the reference):
//! `|a - b| <= atol + rtol * |b|` where `b` is finite, or `a == b` (so two infinities of one
//! sign are close, an infinity and a number never), and with `equal_nan` two NaNs are close.
//! It is computed in the element type (NumPy 2 keeps `float32` with Python-float tolerances).

use ndarray::{Dimension, IxDyn};

use crate::error::Result;
use crate::gpuarray::array::core::{DeviceArray, DeviceArrayBase, Storage};
use crate::gpuarray::elements::boolean::Bool;
use crate::gpuarray::elements::element::Element;
use crate::gpuarray::expr::core::{Expr, Operand};
use crate::gpuarray::expr::math::Float;
use crate::gpuarray::kernels::broadcast::broadcast_shapes;

/// The largest finite values of a float type: what [`nan_to_num`] puts for an infinity when
/// no value is given (NumPy's default).
pub trait FiniteRange: Float {
    /// The largest finite value.
    const MAX_FINITE: Self;
    /// The most negative finite value.
    const MIN_FINITE: Self;
}

impl FiniteRange for f32 {
    const MAX_FINITE: f32 = f32::MAX;
    const MIN_FINITE: f32 = f32::MIN;
}

impl FiniteRange for f64 {
    const MAX_FINITE: f64 = f64::MAX;
    const MIN_FINITE: f64 = f64::MIN;
}

/// Whether each element of `a` is close to the one of `b` (broadcast), as an expression of
/// [`Bool`]: NumPy's `isclose(a, b, rtol, atol, equal_nan)` (its defaults are `rtol = 1e-5`,
/// `atol = 1e-8`, `equal_nan = false`); see the module documentation for the formula.
pub fn isclose_expr<'a, T, S1, D1, S2, D2>(
    a: &'a DeviceArrayBase<S1, D1>,
    b: &'a DeviceArrayBase<S2, D2>,
    rtol: T,
    atol: T,
    equal_nan: bool,
) -> Expr<'a, Bool>
where
    T: Float + Operand<'a, T>,
    S1: Storage<Elem = T>,
    D1: Dimension,
    S2: Storage<Elem = T>,
    D2: Dimension,
{
    isclose_of(|| a.expr(), || b.expr(), rtol, atol, equal_nan)
}

/// The expression of [`isclose_expr`] over the leaves `a()` and `b()`.
fn isclose_of<'a, T: Float + Operand<'a, T>>(
    a: impl Fn() -> Expr<'a, T>,
    b: impl Fn() -> Expr<'a, T>,
    rtol: T,
    atol: T,
    equal_nan: bool,
) -> Expr<'a, Bool> {
    let within = (a() - b()).abs().le(b().abs() * rtol + atol);
    let close = within.logical_and(b().isfinite()).logical_or(a().eq(b()));
    if equal_nan {
        close.logical_or(a().isnan().logical_and(b().isnan()))
    } else {
        close
    }
}

/// [`isclose_expr`] evaluated into a new array of [`Bool`] (the broadcast shape), on the
/// legacy default stream.
pub fn isclose<'a, T, S1, D1, S2, D2>(
    a: &'a DeviceArrayBase<S1, D1>,
    b: &'a DeviceArrayBase<S2, D2>,
    rtol: T,
    atol: T,
    equal_nan: bool,
) -> Result<DeviceArray<Bool, IxDyn>>
where
    T: Float + Operand<'a, T>,
    S1: Storage<Elem = T>,
    D1: Dimension,
    S2: Storage<Elem = T>,
    D2: Dimension,
{
    isclose_expr(a, b, rtol, atol, equal_nan).eval()
}

/// Whether every element of `a` is close to the one of `b` (broadcast): NumPy's `allclose`,
/// `all(isclose(...))` (true for empty arrays).
pub fn allclose<'a, T, S1, D1, S2, D2>(
    a: &'a DeviceArrayBase<S1, D1>,
    b: &'a DeviceArrayBase<S2, D2>,
    rtol: T,
    atol: T,
    equal_nan: bool,
) -> Result<bool>
where
    T: Float + Operand<'a, T>,
    S1: Storage<Elem = T>,
    D1: Dimension,
    S2: Storage<Elem = T>,
    D2: Dimension,
{
    isclose(a, b, rtol, atol, equal_nan)?.all()
}

/// Whether `a` and `b` have the same shape and equal elements: NumPy's `array_equal(a, b,
/// equal_nan)` (true for two empty arrays of one shape; with `equal_nan`, NaN equals NaN, and a
/// complex number with a NaN part any other such). Every element type; no broadcasting, as
/// NumPy's. Waits for the answer.
pub fn array_equal<'a, T, S1, D1, S2, D2>(
    a: &'a DeviceArrayBase<S1, D1>,
    b: &'a DeviceArrayBase<S2, D2>,
    equal_nan: bool,
) -> Result<bool>
where
    T: Element,
    S1: Storage<Elem = T>,
    D1: Dimension,
    S2: Storage<Elem = T>,
    D2: Dimension,
{
    if a.shape() != b.shape() {
        return Ok(false);
    }
    if a.is_empty() {
        return Ok(true);
    }
    let equal = a.expr().eq(b);
    let e = if equal_nan {
        // `x != x` is NaN-ness (of either part, for complex numbers; never, for the others).
        equal.logical_or(a.expr().ne(a).logical_and(b.expr().ne(b)))
    } else {
        equal
    };
    e.eval()?.all()
}

/// Whether `a` and `b` broadcast to one shape and are equal there (NumPy's `array_equiv`:
/// `[1, 2]` is equivalent to `[[1, 2], [1, 2]]`; shapes that do not broadcast are not
/// equivalent, not an error). Every element type; waits for the answer.
pub fn array_equiv<'a, T, S1, D1, S2, D2>(
    a: &'a DeviceArrayBase<S1, D1>,
    b: &'a DeviceArrayBase<S2, D2>,
) -> Result<bool>
where
    T: Element,
    S1: Storage<Elem = T>,
    D1: Dimension,
    S2: Storage<Elem = T>,
    D2: Dimension,
{
    let Ok(shape) = broadcast_shapes(&[a.shape(), b.shape()]) else {
        return Ok(false);
    };
    if shape.contains(&0) {
        return Ok(true);
    }
    a.expr().eq(b).eval()?.all()
}

/// `x` with NaN replaced by `nan`, positive infinity by `posinf` and negative infinity by
/// `neginf` (NumPy's `nan_to_num`; `None` is NumPy's default, the largest finite value of that
/// sign), as an expression.
pub fn nan_to_num_expr<'a, T, S, D>(
    x: &'a DeviceArrayBase<S, D>,
    nan: T,
    posinf: Option<T>,
    neginf: Option<T>,
) -> Expr<'a, T>
where
    T: FiniteRange + Operand<'a, T>,
    S: Storage<Elem = T>,
    D: Dimension,
{
    nan_to_num_of(|| x.expr(), nan, posinf, neginf)
}

/// The expression of [`nan_to_num_expr`] over the leaf `x()`.
fn nan_to_num_of<'a, T: FiniteRange + Operand<'a, T>>(
    x: impl Fn() -> Expr<'a, T>,
    nan: T,
    posinf: Option<T>,
    neginf: Option<T>,
) -> Expr<'a, T> {
    let posinf = posinf.unwrap_or(T::MAX_FINITE);
    let neginf = neginf.unwrap_or(T::MIN_FINITE);
    let infinity = Expr::where_(x().gt(T::zero()), posinf, neginf);
    let finite_or_inf = Expr::where_(x().isinf(), infinity, x());
    Expr::where_(x().isnan(), nan, finite_or_inf)
}

/// [`nan_to_num_expr`] evaluated into a new array, on the legacy default stream.
pub fn nan_to_num<'a, T, S, D>(
    x: &'a DeviceArrayBase<S, D>,
    nan: T,
    posinf: Option<T>,
    neginf: Option<T>,
) -> Result<DeviceArray<T, IxDyn>>
where
    T: FiniteRange + Operand<'a, T>,
    S: Storage<Elem = T>,
    D: Dimension,
{
    nan_to_num_expr(x, nan, posinf, neginf).eval()
}

/// The expressions' kernels' sources, for the compile tests: `isclose` with and without
/// `equal_nan` and `nan_to_num`, of `f32` and `f64`, over array leaves.
#[cfg(test)]
pub(crate) fn test_sources() -> Vec<(String, String)> {
    use crate::gpuarray::expr::core::{kernel, Node, Store};
    use crate::gpuarray::kernels::elementwise::Variant;
    fn leaf<'a, T: crate::gpuarray::elements::element::Element>() -> Expr<'a, T> {
        Expr {
            node: Node::Array,
            arrays: Vec::new(),
            scalars: Vec::new(),
            elem: std::marker::PhantomData,
        }
    }
    fn of<T: FiniteRange + for<'a> Operand<'a, T>>(one: T, out: &mut Vec<(String, String)>) {
        let name = std::any::type_name::<T>();
        for equal_nan in [false, true] {
            let e = isclose_of(leaf::<T>, leaf::<T>, one, one, equal_nan);
            let k = kernel::<Bool>(&e.node, Store::Assign).unwrap();
            for v in [Variant::Contiguous, Variant::Strided(2)] {
                out.push((format!("isclose {name} {equal_nan} {v:?}"), k.source(v)));
            }
        }
        let e = nan_to_num_of(leaf::<T>, one, None, Some(one));
        let k = kernel::<T>(&e.node, Store::Assign).unwrap();
        out.push((format!("nan_to_num {name}"), k.source(Variant::Contiguous)));
    }
    let mut out = Vec::new();
    of::<f32>(1.0, &mut out);
    of::<f64>(1.0, &mut out);
    out
}
