//! NumPy's `linalg.pinv`, `linalg.matrix_rank` and `linalg.lstsq`, as NumPy computes them:
//! from the singular value decomposition (`svd`), the singular values below a cutoff
//! relative to the largest taken as zero; the products as one `einsum` kernel.

use ndarray::{Dimension, Ix1, IxDyn};

use crate::error::{LinAlgError, Result};
use crate::gpuarray::array::core::{DeviceArray, DeviceArrayBase, Storage};
use crate::gpuarray::array::on_stream::{context_fns, OnStream};
use crate::gpuarray::elements::dtype::DType;
use crate::gpuarray::elements::element::Element;
use crate::gpuarray::elements::mean_type::MeanType;
use crate::gpuarray::expr::core::Expr;
use crate::gpuarray::expr::math::Float;
use crate::gpuarray::linalg::stack::{work_type, Stack};

/// NumPy's `lstsq`: the least-squares solution and its diagnostics ([`lstsq`]).
#[derive(Debug)]
pub struct Lstsq<T: Element, D: Dimension> {
    /// The solution `x` minimizing `|b - a x|`, of least norm when `a` has deficient rank:
    /// `(N,)` for `b` of `(M,)`, `(N, K)` for `(M, K)`.
    pub x: DeviceArray<T, D>,
    /// The sums of squared residuals of each column of `b` (`(1,)` for a vector `b`) when
    /// `a` has full rank `N` and `M > N`; else empty, as NumPy's.
    pub residuals: DeviceArray<T, Ix1>,
    /// The rank of `a`: its singular values above `rcond` times the largest.
    pub rank: usize,
    /// The singular values of `a`, descending.
    pub s: DeviceArray<T, Ix1>,
}

/// The machine epsilon of the type `T`'s matrices are factored in (`f32` for `f32`, `f16`
/// and `bf16`; `f64` else).
fn epsilon(t: DType) -> f64 {
    if work_type(t) == DType::F32 {
        f64::from(f32::EPSILON)
    } else {
        f64::EPSILON
    }
}

context_fns! {
    /// The Moore-Penrose pseudo-inverse of each matrix of `a` (NumPy's and CuPy's
    /// `linalg.pinv(a, rcond)`; NumPy's default `rcond` is `1e-15`): `(..., N, M)` for `(...,
    /// M, N)`, `vᵀ diag(1/s) uᵀ` from [`svd`](crate::gpuarray::svd) with the singular values
    /// at or below `rcond` times each matrix's largest taken as zero. In [`MeanType`]'s
    /// result type. Waits for the factorization (its convergence flag). Errors as `svd`'s.
    ///
    /// ```no_run
    /// use gpu_runtime::gpuarray::{self, DeviceArray};
    /// use gpu_runtime::ndarray::arr2;
    /// let ctx = gpu_runtime::Context::default()?;
    /// let a = DeviceArray::from_ndarray(&ctx, &arr2(&[[2.0f64, 0.0], [0.0, 0.0]]))?;
    /// let p = gpuarray::pinv(&a, 1e-15)?.to_vec()?;
    /// assert!((p[0] - 0.5).abs() < 1e-12 && p[1..].iter().all(|&x| x.abs() < 1e-12));
    /// # Ok::<(), gpu_runtime::Error>(())
    /// ```
    fn pinv[T: MeanType<Mean: Float>, S: Storage<Elem = T>, D: Dimension](
        &self, a: &DeviceArrayBase<S, D>, rcond: f64
    ) -> Result<DeviceArray<T::Mean, IxDyn>> {
        let stack = Stack::of("pinv", a.shape())?;
        let out_shape = stack.shape_with(&[stack.cols, stack.rows]);
        if stack.count == 0 || stack.rows.min(stack.cols) == 0 {
            return DeviceArray::zeros(a.context(), IxDyn(&out_shape));
        }
        let r = self.svd(a, false)?;
        let s = r.s.view().into_dyn();
        let largest = OnStream::new(&s, self.stream).max_axes(&[-1], true)?;
        let cutoff = OnStream::new(largest.expr() * Expr::scalar(rcond).cast::<T::Mean>(), self.stream).eval()?;
        let zero = Expr::scalar(0.0f64).cast::<T::Mean>();
        let s_inv = OnStream::new(Expr::where_(s.expr().gt(&cutoff), s.expr().reciprocal(), zero), self.stream).eval()?;
        let (u, vh) = (r.u.view().into_dyn(), r.vh.view().into_dyn());
        self.einsum("...ji,...j,...kj->...ik", &[&vh, &s_inv.view(), &u])
    }

    /// The rank of each matrix of `a` (NumPy's and CuPy's `linalg.matrix_rank(a, tol)`): the
    /// number of its singular values above `tol`, by default NumPy's `s.max() * max(M, N) *
    /// eps` (`eps` of `f32` for `f32`, `f16` and `bf16`, of `f64` else), an array of the
    /// leading axes (0-d for one matrix). Waits for the factorization. Errors as
    /// [`svdvals`](crate::gpuarray::svdvals)'s (a 1-d `a`, which NumPy takes, is
    /// [`LinAlgError::TooFewAxes`]).
    fn matrix_rank[T: MeanType<Mean: Float>, S: Storage<Elem = T>, D: Dimension](
        &self, a: &DeviceArrayBase<S, D>, tol: Option<f64>
    ) -> Result<DeviceArray<i64, <D::Smaller as Dimension>::Smaller>> {
        let stack = Stack::of("matrix_rank", a.shape())?;
        if stack.count == 0 || stack.rows.min(stack.cols) == 0 {
            return DeviceArray::<i64, IxDyn>::zeros(a.context(), IxDyn(&stack.batch))?.into_dimensionality();
        }
        let s = self.svdvals(a)?.into_dyn();
        let above = match tol {
            Some(t) => OnStream::new(s.expr().gt(Expr::scalar(t).cast::<T::Mean>()), self.stream).eval()?,
            None => {
                let scale = stack.rows.max(stack.cols) as f64 * epsilon(T::DTYPE);
                let largest = OnStream::new(&s, self.stream).max_axes(&[-1], true)?;
                let cutoff = OnStream::new(largest.expr() * Expr::scalar(scale).cast::<T::Mean>(), self.stream).eval()?;
                OnStream::new(s.expr().gt(&cutoff), self.stream).eval()?
            }
        };
        OnStream::new(&above, self.stream).count_nonzero_axes(&[-1], false)?.into_dimensionality()
    }

    /// The least-squares solution of `a x = b` (NumPy's and CuPy's `linalg.lstsq(a, b,
    /// rcond)`) for one matrix `a` of `(M, N)` and `b` of `(M,)` or `(M, K)`: the `x` of
    /// least norm minimizing `|b - a x|`, with the residuals, the rank and the singular values
    /// as NumPy gives them ([`Lstsq`]). Singular values at or below `rcond` times the
    /// largest are taken as zero (`None`: NumPy's `eps * max(M, N)`). In [`MeanType`]'s result
    /// type (`b` converted to it). Waits for the factorization and reads the singular values
    /// back (for the rank). Errors: `a` not of 2 axes ([`LinAlgError::TooFewAxes`], or
    /// [`LinAlgError::RightHandSide`] for more), `b` of other rows
    /// ([`LinAlgError::RightHandSide`]); `svd`'s.
    ///
    /// ```no_run
    /// use gpu_runtime::gpuarray::{self, DeviceArray};
    /// use gpu_runtime::ndarray::{arr1, arr2};
    /// let ctx = gpu_runtime::Context::default()?;
    /// // The line through (0, -1), (1, 0.2), (2, 0.9), (3, 2.1): NumPy's example.
    /// let a = DeviceArray::from_ndarray(&ctx, &arr2(&[[0.0f64, 1.0], [1.0, 1.0], [2.0, 1.0], [3.0, 1.0]]))?;
    /// let y = DeviceArray::from_ndarray(&ctx, &arr1(&[-1.0f64, 0.2, 0.9, 2.1]))?;
    /// let fit = gpuarray::lstsq(&a, &y, None)?;
    /// let m_c = fit.x.to_vec()?; // [1.0, -0.95]
    /// assert!((m_c[0] - 1.0).abs() < 1e-12 && (m_c[1] + 0.95).abs() < 1e-12 && fit.rank == 2);
    /// # Ok::<(), gpu_runtime::Error>(())
    /// ```
    fn lstsq[T: MeanType<Mean: Float>, SA: Storage<Elem = T>, DA: Dimension, SB: Storage<Elem = T>, DB: Dimension](
        &self, a: &DeviceArrayBase<SA, DA>, b: &DeviceArrayBase<SB, DB>, rcond: Option<f64>
    ) -> Result<Lstsq<T::Mean, DB>> {
        const OP: &str = "lstsq";
        let stack = Stack::of(OP, a.shape())?;
        let (m, n) = (stack.rows, stack.cols);
        if a.ndim() != 2 || b.ndim() == 0 || b.ndim() > 2 || b.shape()[0] != m {
            return Err(LinAlgError::RightHandSide {
                operation: OP,
                a: a.shape().to_vec(),
                b: b.shape().to_vec(),
            }
            .into());
        }
        let rcond = rcond.unwrap_or(epsilon(T::DTYPE) * m.max(n) as f64);
        let ctx = a.context();
        let bm = OnStream::new(b, self.stream).astype::<T::Mean>()?.into_dyn();
        let k = m.min(n);
        let s: DeviceArray<T::Mean, Ix1> = if k == 0 {
            DeviceArray::zeros(ctx, 0)?
        } else {
            self.svdvals(a)?.into_dyn().into_dimensionality()?
        };
        let host_s: Vec<f64> = OnStream::new(&s.view(), self.stream)
            .astype::<f64>()?
            .to_vec()?;
        let largest = host_s.first().copied().unwrap_or(0.0);
        let rank = host_s.iter().filter(|&&v| v > rcond * largest).count();
        let p = self.pinv(a, rcond)?;
        let (solve, product) = if b.ndim() == 1 { ("ij,j->i", "ij,j->i") } else { ("ij,jk->ik", "ij,jk->ik") };
        let x = self.einsum(solve, &[&p.view(), &bm.view()])?;
        let residuals = if rank == n && m > n {
            let am = OnStream::new(a, self.stream).astype::<T::Mean>()?.into_dyn();
            let ax = self.einsum(product, &[&am.view(), &x.view()])?;
            let d = OnStream::new(ax.expr() - &bm, self.stream).eval()?;
            let squares = OnStream::new(d.expr() * &d, self.stream).eval()?;
            let sums = OnStream::new(&squares, self.stream).sum_axes(&[0], false)?;
            let len = sums.len();
            sums.reshape(IxDyn(&[len]))?.into_dimensionality()?
        } else {
            DeviceArray::zeros(ctx, 0)?
        };
        Ok(Lstsq {
            x: x.into_dimensionality()?,
            residuals,
            rank,
            s,
        })
    }
}
