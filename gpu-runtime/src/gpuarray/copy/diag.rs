//! NumPy's `diag` and `diagflat`: a vector laid on a diagonal of a new zero matrix, or a
//! matrix's diagonal copied out. The diagonal is a view (`array/diagonal.rs`); these copy into
//! or out of it.

use ndarray::{Dimension, Ix1, Ix2};

use crate::error::{ArrayShapeError, Result};
use crate::gpuarray::array::core::{DeviceArray, DeviceArrayBase, Storage};
use crate::gpuarray::array::on_stream::OnStream;
use crate::gpuarray::elements::element::Element;

impl<S: Storage<Elem: Element>> DeviceArrayBase<S, Ix1> {
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
    pub fn diag(&self, k: isize) -> Result<DeviceArray<S::Elem, Ix2>> {
        OnStream::legacy(self).diag(k)
    }
}

impl<S: Storage<Elem: Element>> DeviceArrayBase<S, Ix2> {
    /// A copy of the matrix's diagonal `k` (NumPy's `diag(m, k)` of a 2-d `m`; the view
    /// without a copy is [`diagonal`](DeviceArrayBase::diagonal)).
    pub fn diag(&self, k: isize) -> Result<DeviceArray<S::Elem, Ix1>> {
        OnStream::legacy(self).diag(k)
    }
}

impl<S: Storage<Elem: Element>, D: Dimension> DeviceArrayBase<S, D> {
    /// The elements in C order laid on diagonal `k` of a new square matrix of zeros (NumPy's
    /// `diagflat(v, k)`).
    pub fn diagflat(&self, k: isize) -> Result<DeviceArray<S::Elem, Ix2>> {
        OnStream::legacy(self).diagflat(k)
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
