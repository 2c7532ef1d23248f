//! NumPy's `diag` and `diagflat`: a vector laid on a diagonal of a new zero matrix, or a
//! matrix's diagonal copied out. The diagonal is a view (`array/diagonal.rs`); these copy into
//! or out of it. And `fill_diagonal` (a `put` at every `step`-th flat position, the positions
//! made on the GPU) and `diag_indices`.

use ndarray::{Dimension, Ix1, Ix2};

use crate::driver::context::core::Context;
use crate::error::{ArrayShapeError, Result};
use crate::gpuarray::array::core::{DeviceArray, DeviceArrayBase, Storage, StorageMut};
use crate::gpuarray::array::on_stream::{on_legacy_stream, OnStream};
use crate::gpuarray::copy::gather::IndexMode;
use crate::gpuarray::elements::element::Element;

impl<S: Storage<Elem: Element>> DeviceArrayBase<S, Ix1> {
    on_legacy_stream! {
        /// A new square matrix of zeros with this vector on diagonal `k` (NumPy's `diag(v, k)` of
        /// a 1-d `v`: above the main diagonal for positive `k`, below for negative; the matrix is
        /// `len + |k|` on a side).
        ///
        /// ```no_run
        /// use gpu_runtime::gpuarray::DeviceArray;
        /// let ctx = gpu_runtime::Context::default()?;
        /// let v = DeviceArray::<i32, _>::arange(&ctx, 1.0, 3.0, 1.0)?;
        /// assert_eq!(v.diag(-1)?.to_vec()?, [0, 0, 0, 1, 0, 0, 0, 2, 0]);
        /// # Ok::<(), gpu_runtime::Error>(())
        /// ```
        fn diag(&self, k: isize) -> Result<DeviceArray<S::Elem, Ix2>>;
    }
}

impl<S: Storage<Elem: Element>> DeviceArrayBase<S, Ix2> {
    on_legacy_stream! {
        /// A copy of the matrix's diagonal `k` (NumPy's `diag(m, k)` of a 2-d `m`; the view
        /// without a copy is [`diagonal`](DeviceArrayBase::diagonal)).
        fn diag(&self, k: isize) -> Result<DeviceArray<S::Elem, Ix1>>;
    }
}

impl<S: Storage<Elem: Element>, D: Dimension> DeviceArrayBase<S, D> {
    on_legacy_stream! {
        /// The elements in C order laid on diagonal `k` of a new square matrix of zeros (NumPy's
        /// `diagflat(v, k)`).
        fn diagflat(&self, k: isize) -> Result<DeviceArray<S::Elem, Ix2>>;
    }
}

impl<S: Storage<Elem: Element>> OnStream<'_, &DeviceArrayBase<S, Ix1>> {
    /// [`diag`](DeviceArrayBase::diag) of a vector on this stream.
    pub fn diag(&self, k: isize) -> Result<DeviceArray<S::Elem, Ix2>> {
        let v = self.target;
        let side =
            v.len()
                .checked_add(k.unsigned_abs())
                .ok_or_else(|| ArrayShapeError::ElementsOverflow {
                    operation: "DeviceArray::diag",
                    shape: v.shape().to_vec(),
                })?;
        let mut m = OnStream::new(v.context(), self.stream).full((side, side), S::Elem::zero())?;
        let mut diagonal = m.view_mut().diagonal(k, 0, 1)?;
        OnStream::new(&mut diagonal, self.stream).copy_from(v)?;
        Ok(m)
    }
}

impl<S: Storage<Elem: Element>> OnStream<'_, &DeviceArrayBase<S, Ix2>> {
    /// [`diag`](DeviceArrayBase::diag) of a matrix on this stream.
    pub fn diag(&self, k: isize) -> Result<DeviceArray<S::Elem, Ix1>> {
        let diagonal = self.target.view().diagonal(k, 0, 1)?;
        OnStream::new(&diagonal, self.stream)
            .copy()?
            .into_dimensionality()
    }
}

impl<S: Storage<Elem: Element>, D: Dimension> OnStream<'_, &DeviceArrayBase<S, D>> {
    /// [`diagflat`](DeviceArrayBase::diagflat) on this stream.
    pub fn diagflat(&self, k: isize) -> Result<DeviceArray<S::Elem, Ix2>> {
        let src = OnStream::new(self.target, self.stream).c_order()?;
        let flat = src.view().reshape(self.target.len())?;
        OnStream::new(&flat, self.stream).diag(k)
    }
}

impl<S: StorageMut<Elem: Element>, D: Dimension> DeviceArrayBase<S, D> {
    on_legacy_stream! {
        /// Sets the main diagonal to `value` in place (NumPy's `fill_diagonal(a, val, wrap)`): the
        /// elements `a[i, i, ..., i]` of an array of at least two axes, all of one length, or of
        /// any 2-d array (else [`ArrayShapeError::NotSquare`]). A 2-d array taller than wide has
        /// its diagonal continue below, a row apart, where `wrap` is true (NumPy's flat stride
        /// `cols + 1`), else it stops at the last column. The array must be contiguous in C order.
        ///
        /// ```no_run
        /// use gpu_runtime::gpuarray::DeviceArray;
        /// let ctx = gpu_runtime::Context::default()?;
        /// let mut a = DeviceArray::<f32, _>::zeros(&ctx, (3, 3))?;
        /// a.fill_diagonal(5.0, false)?;
        /// assert_eq!(a.to_vec()?, [5.0, 0.0, 0.0, 0.0, 5.0, 0.0, 0.0, 0.0, 5.0]);
        /// # Ok::<(), gpu_runtime::Error>(())
        /// ```
        fn fill_diagonal(&mut self, value: S::Elem, wrap: bool) -> Result<()>;

        /// [`fill_diagonal`](Self::fill_diagonal) with the elements of `values` in C order, in
        /// turn and repeated as needed (NumPy's `fill_diagonal` of an array `val`).
        fn fill_diagonal_with[SV: Storage<Elem = S::Elem>, DV: Dimension](
            &mut self,
            values: &DeviceArrayBase<SV, DV>,
            wrap: bool,
        ) -> Result<()>;
    }
}

impl<S: StorageMut<Elem: Element>, D: Dimension> OnStream<'_, &mut DeviceArrayBase<S, D>> {
    /// [`fill_diagonal`](DeviceArrayBase::fill_diagonal) on this stream.
    pub fn fill_diagonal(&mut self, value: S::Elem, wrap: bool) -> Result<()> {
        let one = OnStream::new(self.target.context(), self.stream).full(1, value)?;
        self.fill_diagonal_with(&one, wrap)
    }

    /// [`fill_diagonal_with`](DeviceArrayBase::fill_diagonal_with) on this stream.
    pub fn fill_diagonal_with<SV: Storage<Elem = S::Elem>, DV: Dimension>(
        &mut self,
        values: &DeviceArrayBase<SV, DV>,
        wrap: bool,
    ) -> Result<()> {
        let (step, end) = diagonal_positions(self.target.shape(), wrap)?;
        if end == 0 {
            return Ok(());
        }
        let ctx = self.target.context().clone();
        let at = OnStream::new(&ctx, self.stream).arange::<i64>(0.0, end as f64, step as f64)?;
        OnStream::new(&mut *self.target, self.stream).put(&at, values, IndexMode::Raise)
    }
}

/// The flat C-order stride of the main diagonal of an array of `shape`, and the end of its
/// positions (exclusive), as NumPy's `fill_diagonal` computes them.
fn diagonal_positions(shape: &[usize], wrap: bool) -> Result<(usize, usize)> {
    let square = || ArrayShapeError::NotSquare {
        operation: "DeviceArray::fill_diagonal",
        shape: shape.to_vec(),
    };
    match *shape {
        [rows, cols] => {
            let end = if wrap || rows <= cols {
                rows * cols
            } else {
                cols * cols
            };
            Ok((cols + 1, end))
        }
        [first, ..] if shape.len() > 2 && shape.iter().all(|&d| d == first) => {
            // 1 + the sum of the C strides of every axis but the last.
            let mut step = 1usize;
            let mut stride = 1usize;
            for _ in 1..shape.len() {
                stride = stride.checked_mul(first).ok_or_else(square)?;
                step = step.checked_add(stride).ok_or_else(square)?;
            }
            Ok((step, stride.checked_mul(first).ok_or_else(square)?))
        }
        _ => Err(square().into()),
    }
}

/// The indices of the main diagonal of an array of `ndim` axes of length `n` (NumPy's
/// `diag_indices(n, ndim)`): `ndim` copies of `0..n`, one index array per axis (to
/// [`take`](DeviceArrayBase::take) or `gather` with).
pub fn diag_indices(ctx: &Context, n: usize, ndim: usize) -> Result<Vec<DeviceArray<i64, Ix1>>> {
    (0..ndim)
        .map(|_| DeviceArray::<i64, Ix1>::arange(ctx, 0.0, n as f64, 1.0))
        .collect()
}

/// [`diag_indices`] of `a`'s main diagonal (NumPy's `diag_indices_from(a)`): `a` has at
/// least two axes, all of one length (else [`ArrayShapeError::NotSquare`]).
pub fn diag_indices_from<S: Storage, D: Dimension>(
    a: &DeviceArrayBase<S, D>,
) -> Result<Vec<DeviceArray<i64, Ix1>>> {
    let shape = a.shape();
    if shape.len() < 2 || shape.iter().any(|&d| d != shape[0]) {
        return Err(ArrayShapeError::NotSquare {
            operation: "diag_indices_from",
            shape: shape.to_vec(),
        }
        .into());
    }
    diag_indices(a.context(), shape[0], shape.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn diagonal_positions_are_numpys() {
        // np.fill_diagonal's `step` and `end`.
        assert_eq!(diagonal_positions(&[3, 4], false).unwrap(), (5, 12));
        assert_eq!(diagonal_positions(&[7, 3], false).unwrap(), (4, 9));
        assert_eq!(diagonal_positions(&[7, 3], true).unwrap(), (4, 21));
        assert_eq!(diagonal_positions(&[3, 3, 3], false).unwrap(), (13, 27));
        assert_eq!(diagonal_positions(&[2, 2, 2, 2], true).unwrap(), (15, 16));
        assert!(diagonal_positions(&[3], false).is_err());
        assert!(diagonal_positions(&[3, 3, 2], false).is_err());
        assert!(diagonal_positions(&[usize::MAX, usize::MAX, usize::MAX], false).is_err());
    }
}
