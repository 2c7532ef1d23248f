//! NumPy's vector products: `inner` and `outer`, written as the
//! [`tensordot_axes`](crate::gpuarray::tensordot_axes) they are
//! (over the last axis of each, and over none), and `cross`, one elementwise expression per
//! component of the result.

use ndarray::{Dimension, Ix2, IxDyn, SliceInfoElem};

use crate::error::{ArrayShapeError, Result};
use crate::gpuarray::array::axes::index_along;
use crate::gpuarray::array::core::{DeviceArray, DeviceArrayBase, Storage};
use crate::gpuarray::array::on_stream::{context_fns, OnStream};
use crate::gpuarray::elements::dtype::DType;
use crate::gpuarray::elements::element::Element;
use crate::gpuarray::expr::core::undefined_error;
use crate::gpuarray::kernels::broadcast::broadcast_shapes;

context_fns! {
    /// NumPy's `inner(a, b)`: the sums of products over the last axis of each, an array of `a`'s
    /// other axes then `b`'s (no complex conjugate); a 0-d operand multiplies the other. Last axes
    /// of different lengths are [`ArrayShapeError::Einsum`]. The kernel is
    /// [`einsum`](crate::gpuarray::einsum)'s.
    ///
    /// ```no_run
    /// use gpu_runtime::gpuarray::{self, DeviceArray};
    /// use gpu_runtime::ndarray::{arr1, arr2};
    /// let ctx = gpu_runtime::Context::default()?;
    /// let a = DeviceArray::from_ndarray(&ctx, &arr2(&[[1.0f32, 2.0], [3.0, 4.0]]))?;
    /// let v = DeviceArray::from_ndarray(&ctx, &arr1(&[1.0f32, 10.0]))?;
    /// assert_eq!(gpuarray::inner(&a, &v)?.to_vec()?, [21.0, 43.0]);
    /// # Ok::<(), gpu_runtime::Error>(())
    /// ```
    fn inner[T: Element, S: Storage<Elem = T>, D: Dimension, SB: Storage<Elem = T>, DB: Dimension](
        &self, a: &DeviceArrayBase<S, D>, b: &DeviceArrayBase<SB, DB>
    ) -> Result<DeviceArray<T, IxDyn>> {
        if a.ndim() == 0 || b.ndim() == 0 {
            return self.tensordot_axes(a, b, &[], &[]);
        }
        self.tensordot_axes(a, b, &[-1], &[-1])
    }

    /// NumPy's `outer(a, b)`: `out[i, j] = a[i] * b[j]` of the flattened operands (C order), an
    /// array of `a.len()` rows and `b.len()` columns.
    ///
    /// ```no_run
    /// use gpu_runtime::gpuarray::{self, DeviceArray};
    /// use gpu_runtime::ndarray::arr1;
    /// let ctx = gpu_runtime::Context::default()?;
    /// let a = DeviceArray::from_ndarray(&ctx, &arr1(&[1, 2]))?;
    /// let b = DeviceArray::from_ndarray(&ctx, &arr1(&[1, 10, 100]))?;
    /// assert_eq!(gpuarray::outer(&a, &b)?.to_vec()?, [1, 10, 100, 2, 20, 200]);
    /// # Ok::<(), gpu_runtime::Error>(())
    /// ```
    fn outer[T: Element, S: Storage<Elem = T>, D: Dimension, SB: Storage<Elem = T>, DB: Dimension](
        &self, a: &DeviceArrayBase<S, D>, b: &DeviceArrayBase<SB, DB>
    ) -> Result<DeviceArray<T, Ix2>> {
        // The product over no summed axes has `a`'s axes then `b`'s, in C order: reshaped, the
        // rows are `a`'s elements and the columns `b`'s.
        self.tensordot_axes(a, b, &[], &[])?.reshape((a.len(), b.len()))
    }

    /// NumPy's `cross(a, b)`: the cross products of the vectors along the last axis of each (of 2
    /// or 3 components; a third component of 0 where one has 2), the other axes broadcast
    /// together. Two 2-vectors give the `z` component alone (no vector axis), as NumPy. Vectors of
    /// another length are [`ArrayShapeError::CrossDimension`], `bool` elements
    /// [`ArgumentError::UndefinedOnElement`](crate::error::ArgumentError::UndefinedOnElement)
    /// (NumPy refuses their `-`).
    ///
    /// ```no_run
    /// use gpu_runtime::gpuarray::{self, DeviceArray};
    /// use gpu_runtime::ndarray::arr1;
    /// let ctx = gpu_runtime::Context::default()?;
    /// let x = DeviceArray::from_ndarray(&ctx, &arr1(&[1.0f64, 0.0, 0.0]))?;
    /// let y = DeviceArray::from_ndarray(&ctx, &arr1(&[0.0f64, 1.0, 0.0]))?;
    /// assert_eq!(gpuarray::cross(&x, &y)?.to_vec()?, [0.0, 0.0, 1.0]);
    /// # Ok::<(), gpu_runtime::Error>(())
    /// ```
    fn cross[T: Element, S: Storage<Elem = T>, D: Dimension, SB: Storage<Elem = T>, DB: Dimension](
        &self,
        a: &DeviceArrayBase<S, D>,
        b: &DeviceArrayBase<SB, DB>,
    ) -> Result<DeviceArray<T, IxDyn>> {
        self.cross_axes(a, b, -1, -1, -1)
    }

    /// NumPy's `cross(a, b, axisa, axisb, axisc)`: [`cross`] of the vectors along axis `axisa` of
    /// `a` and `axisb` of `b`, the result's vectors along its axis `axisc` (each negative from the
    /// end; `axisc` is unused when both vectors have 2 components).
    fn cross_axes[
        T: Element, S: Storage<Elem = T>, D: Dimension, SB: Storage<Elem = T>, DB: Dimension
    ](
        &self, a: &DeviceArrayBase<S, D>, b: &DeviceArrayBase<SB, DB>, axisa: isize, axisb: isize,
        axisc: isize
    ) -> Result<DeviceArray<T, IxDyn>> {
        if T::DTYPE == DType::Bool {
            return Err(undefined_error("cross", "Sub", T::c_name()));
        }
        let va = a.view().into_dyn().moveaxis(&[axisa], &[-1])?;
        let vb = b.view().into_dyn().moveaxis(&[axisb], &[-1])?;
        let (la, lb) = (va.shape()[va.ndim() - 1], vb.shape()[vb.ndim() - 1]);
        if !(2..=3).contains(&la) || !(2..=3).contains(&lb) {
            return Err(ArrayShapeError::CrossDimension { a: la, b: lb }.into());
        }
        let a_: Vec<_> = (0..la)
            .map(|i| va.slice(&component(va.ndim(), i)[..]))
            .collect::<Result<_>>()?;
        let b_: Vec<_> = (0..lb)
            .map(|i| vb.slice(&component(vb.ndim(), i)[..]))
            .collect::<Result<_>>()?;
        let (a0, a1, b0, b1) = (&a_[0], &a_[1], &b_[0], &b_[1]);
        // NumPy's components, a missing third one 0: the terms it multiplies drop out.
        let (first, second) = match (a_.get(2), b_.get(2)) {
            (Some(a2), Some(b2)) => (a1 * b2 - a2 * b1, a2 * b0 - a0 * b2),
            (None, Some(b2)) => (a1 * b2, -(a0 * b2)),
            (Some(a2), None) => (-(a2 * b1), a2 * b0),
            (None, None) => return OnStream::new(a0 * b1 - a1 * b0, self.stream).eval(),
        };
        let mut shape = broadcast_shapes(&[a_[0].shape(), b_[0].shape()])?;
        shape.push(3);
        let mut out = DeviceArray::<T, IxDyn>::empty(self.target, IxDyn(&shape))?;
        let mut part = out.view_mut().slice_move(&component(shape.len(), 0)[..])?;
        OnStream::new(first, self.stream).eval_into(&mut part)?;
        let mut part = out.view_mut().slice_move(&component(shape.len(), 1)[..])?;
        OnStream::new(second, self.stream).eval_into(&mut part)?;
        let mut part = out.view_mut().slice_move(&component(shape.len(), 2)[..])?;
        OnStream::new(a0 * b1 - a1 * b0, self.stream).eval_into(&mut part)?;
        out.moveaxis(&[-1], &[axisc])
    }
}

/// The slice of component `i` of the vectors along the last of `nd` axes (that axis dropped).
fn component(nd: usize, i: usize) -> Vec<SliceInfoElem> {
    index_along(nd, nd - 1, i)
}
