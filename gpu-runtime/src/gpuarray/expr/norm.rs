//! NumPy's `linalg.norm`, `linalg.vector_norm` and `linalg.matrix_norm`: the magnitudes as an
//! expression in the result type, reduced over the axes (`sum_axes`, `max_axes`, ...), the
//! root taken of the reduction; the spectral and nuclear norms from the singular values.

use ndarray::{Dimension, IxDyn};

use crate::error::Result;
use crate::gpuarray::array::core::{DeviceArray, DeviceArrayBase, Storage};
use crate::gpuarray::array::on_stream::{context_fns, OnStream};
use crate::gpuarray::elements::mean_type::MeanType;
use crate::gpuarray::expr::core::{empty_error, Expr};
use crate::gpuarray::expr::math::Float;
use crate::gpuarray::linalg::stack::Stack;
use crate::gpuarray::reduce::axes::normalize_axes;

/// A norm of matrices ([`matrix_norm`]), NumPy's `ord=` of `linalg.matrix_norm`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MatrixOrd {
    /// `'fro'`: the square root of the sum of squares (NumPy's default).
    Fro,
    /// `'nuc'`: the sum of the singular values.
    Nuc,
    /// `inf`: the largest sum of magnitudes of a row.
    Inf,
    /// `-inf`: the smallest sum of magnitudes of a row.
    NegInf,
    /// `1`: the largest sum of magnitudes of a column.
    One,
    /// `-1`: the smallest sum of magnitudes of a column.
    NegOne,
    /// `2`: the largest singular value.
    Two,
    /// `-2`: the smallest singular value.
    NegTwo,
}

/// The magnitudes of `x`'s elements in `M`.
fn magnitudes<'a, T: MeanType<Mean: Float>, S: Storage<Elem = T>, D: Dimension>(
    x: &'a DeviceArrayBase<S, D>,
) -> Expr<'a, T::Mean> {
    x.expr().cast::<T::Mean>().abs()
}

/// `a`'s shape with the axes `axes` (normalized) of length 1 (NumPy's `keepdims`).
fn kept(shape: &[usize], axes: &[usize]) -> Vec<usize> {
    shape
        .iter()
        .enumerate()
        .map(|(k, &d)| if axes.contains(&k) { 1 } else { d })
        .collect()
}

context_fns! {
    /// The `ord`-norm of the vectors of `x` along `axes` (NumPy 2's `linalg.vector_norm(x,
    /// axis, keepdims, ord)`; `None`: all axes, a 0-d result): `ord = 2` the square root of
    /// the sum of squares, `1` the sum of magnitudes, `f64::INFINITY` the largest magnitude,
    /// `-f64::INFINITY` the smallest, `0` the number of nonzero elements, any other `p` the
    /// sum of `|x|^p` to the power `1/p`. In [`MeanType`]'s result type (`f64` for integers
    /// and `bool`, NumPy's; a float's own). The largest and smallest magnitude along an
    /// empty axis are [`ArrayShapeError::EmptyOperand`](crate::ArrayShapeError::EmptyOperand), as
    /// NumPy's `ValueError`; axes out of range or named twice as `sum_axes`'s.
    ///
    /// ```no_run
    /// use gpu_runtime::gpuarray::{self, DeviceArray};
    /// use gpu_runtime::ndarray::arr2;
    /// let ctx = gpu_runtime::Context::default()?;
    /// let a = DeviceArray::from_ndarray(&ctx, &arr2(&[[3.0f32, 4.0], [-6.0, 8.0]]))?;
    /// assert_eq!(gpuarray::vector_norm(&a, 2.0, Some(&[1]), false)?.to_vec()?, [5.0, 10.0]);
    /// assert_eq!(gpuarray::vector_norm(&a, f64::INFINITY, None, false)?.to_vec()?, [8.0]);
    /// # Ok::<(), gpu_runtime::Error>(())
    /// ```
    fn vector_norm[T: MeanType<Mean: Float>, S: Storage<Elem = T>, D: Dimension](
        &self, x: &DeviceArrayBase<S, D>, ord: f64, axes: Option<&[isize]>, keepdims: bool
    ) -> Result<DeviceArray<T::Mean, IxDyn>> {
        let all: Vec<isize> = (0..x.ndim() as isize).collect();
        let axes = axes.unwrap_or(&all);
        let on = |e: Expr<'_, T::Mean>| OnStream::new(e, self.stream).eval();
        let reduce = |a: &DeviceArray<T::Mean, IxDyn>| OnStream::new(a, self.stream).sum_axes(axes, keepdims);
        if ord.is_infinite() {
            let reduced = normalize_axes(axes, x.ndim())?;
            if reduced.iter().any(|&k| x.shape()[k] == 0) {
                return Err(empty_error("vector_norm", "x"));
            }
            let m = on(magnitudes(x))?;
            let m = OnStream::new(&m, self.stream);
            return if ord > 0.0 { m.max_axes(axes, keepdims) } else { m.min_axes(axes, keepdims) };
        }
        if ord == 0.0 {
            let nonzero = x.expr().cast::<T::Mean>().ne(Expr::scalar(0.0f64).cast::<T::Mean>());
            return reduce(&on(nonzero.cast::<T::Mean>())?);
        }
        if ord == 1.0 {
            return reduce(&on(magnitudes(x))?);
        }
        if ord == 2.0 {
            let squares = on(magnitudes(x) * magnitudes(x))?;
            return on(reduce(&squares)?.expr().sqrt());
        }
        let p = || Expr::scalar(ord).cast::<T::Mean>();
        let powers = on(magnitudes(x).pow(p()))?;
        on(reduce(&powers)?.expr().pow(Expr::scalar(1.0 / ord).cast::<T::Mean>()))
    }

    /// The 2-norm of all of `x`'s elements as one vector (NumPy's `linalg.norm(x)` with its
    /// defaults, the Frobenius norm of a matrix), as a 0-d array in [`MeanType`]'s result
    /// type. [`vector_norm`] and [`matrix_norm`] take NumPy's `ord=`, `axis=` and `keepdims=`.
    fn norm[T: MeanType<Mean: Float>, S: Storage<Elem = T>, D: Dimension](
        &self, x: &DeviceArrayBase<S, D>
    ) -> Result<DeviceArray<T::Mean, IxDyn>> {
        self.vector_norm(x, 2.0, None, false)
    }

    /// The `ord`-norm of each matrix of `x` (its last two axes; NumPy 2's
    /// `linalg.matrix_norm(x, keepdims, ord)`), an array of the leading axes (with the two
    /// axes of length 1 for `keepdims`), in [`MeanType`]'s result type: see [`MatrixOrd`].
    /// The norms of singular values ([`MatrixOrd::Two`], `NegTwo`, `Nuc`) go through
    /// [`svdvals`](crate::gpuarray::svdvals), which waits for its factorization. Errors: fewer
    /// than two axes ([`LinAlgError::TooFewAxes`](crate::LinAlgError::TooFewAxes)); the
    /// largest or smallest of no element as [`vector_norm`]'s.
    fn matrix_norm[T: MeanType<Mean: Float>, S: Storage<Elem = T>, D: Dimension](
        &self, x: &DeviceArrayBase<S, D>, ord: MatrixOrd, keepdims: bool
    ) -> Result<DeviceArray<T::Mean, IxDyn>> {
        Stack::of("matrix_norm", x.shape())?;
        let n = x.ndim();
        let kept_shape = kept(x.shape(), &[n - 2, n - 1]);
        let extreme = |a: &DeviceArray<T::Mean, IxDyn>, largest: bool| {
            if a.shape().last() == Some(&0) {
                return Err(empty_error("matrix_norm", "x"));
            }
            let a = OnStream::new(a, self.stream);
            if largest { a.max_axes(&[-1], false) } else { a.min_axes(&[-1], false) }
        };
        let out = match ord {
            MatrixOrd::Fro => self.vector_norm(x, 2.0, Some(&[-2, -1]), false)?,
            MatrixOrd::Inf | MatrixOrd::NegInf | MatrixOrd::One | MatrixOrd::NegOne => {
                // Sums of magnitudes along each row (the last axis) for inf, each column for 1.
                let along = if matches!(ord, MatrixOrd::Inf | MatrixOrd::NegInf) { -1 } else { -2 };
                let sums = self.vector_norm(x, 1.0, Some(&[along]), false)?;
                extreme(&sums, matches!(ord, MatrixOrd::Inf | MatrixOrd::One))?
            }
            MatrixOrd::Two | MatrixOrd::NegTwo | MatrixOrd::Nuc => {
                let s = self.svdvals(x)?.into_dyn();
                match ord {
                    MatrixOrd::Nuc => OnStream::new(&s, self.stream).sum_axes(&[-1], false)?,
                    _ => extreme(&s, ord == MatrixOrd::Two)?,
                }
            }
        };
        if keepdims {
            out.reshape(IxDyn(&kept_shape))
        } else {
            Ok(out)
        }
    }

    /// The condition number of each matrix of `x` in the 2-norm (NumPy's and CuPy's
    /// `linalg.cond(x)` with its default `p=None`): the largest singular value over the
    /// smallest, an array of the leading axes in [`MeanType`]'s result type; infinity (or a
    /// huge number, as NumPy's) for a singular matrix, NaN for a zero one. Through
    /// [`svdvals`](crate::gpuarray::svdvals) (which waits for its factorization). Errors:
    /// `svdvals`'s, and a matrix without elements
    /// ([`ArrayShapeError::EmptyOperand`](crate::ArrayShapeError::EmptyOperand), NumPy's
    /// `LinAlgError`).
    ///
    /// ```no_run
    /// use gpu_runtime::gpuarray::{self, DeviceArray};
    /// use gpu_runtime::ndarray::arr2;
    /// let ctx = gpu_runtime::Context::default()?;
    /// let a = DeviceArray::from_ndarray(&ctx, &arr2(&[[2.0f64, 0.0], [0.0, 0.5]]))?;
    /// assert_eq!(gpuarray::cond(&a)?.to_vec()?, [4.0]);
    /// # Ok::<(), gpu_runtime::Error>(())
    /// ```
    fn cond[T: MeanType<Mean: Float>, S: Storage<Elem = T>, D: Dimension](
        &self, x: &DeviceArrayBase<S, D>
    ) -> Result<DeviceArray<T::Mean, IxDyn>> {
        let stack = Stack::of("cond", x.shape())?;
        if stack.rows.min(stack.cols) == 0 {
            return Err(empty_error("cond", "x"));
        }
        let s = self.svdvals(x)?.into_dyn();
        let on = OnStream::new(&s, self.stream);
        let (largest, smallest) = (on.max_axes(&[-1], false)?, on.min_axes(&[-1], false)?);
        OnStream::new(largest.expr() / &smallest, self.stream).eval()
    }
}
