//! Copies in a chosen memory order: NumPy's `a.copy(order=)`, `asfortranarray`,
//! `ascontiguousarray`, and `reshape(shape, order="F")` of an array of any layout (which reads
//! and places the elements in Fortran order, copying when the array is not Fortran-contiguous).

use ndarray::{Dimension, IxDyn, Order, ShapeBuilder};

use crate::error::Result;
use crate::gpuarray::array::core::{DeviceArray, DeviceArrayBase, Storage};
use crate::gpuarray::array::on_stream::{on_legacy_stream, OnStream};

impl<S: Storage, D: Dimension> DeviceArrayBase<S, D> {
    on_legacy_stream! {
        /// A copy in new memory in `order`: `Order::C` (row-major, as
        /// [`to_contiguous`](Self::to_contiguous)) or `Order::F` (column-major): NumPy's
        /// `a.copy(order="C"/"F")`.
        fn copy_order(&self, order: Order) -> Result<DeviceArray<S::Elem, D>>;
    }

    /// A copy in Fortran order (NumPy's `asfortranarray`, which copies only when needed: take
    /// a view instead when [`is_fortran_layout`](Self::is_fortran_layout) already holds).
    pub fn asfortranarray(&self) -> Result<DeviceArray<S::Elem, D>> {
        self.copy_order(Order::F)
    }

    on_legacy_stream! {
        /// The elements under `shape`, read and placed in `order` (NumPy's
        /// `reshape(shape, order=)`), in new memory: for `Order::F`, element `k` in Fortran order
        /// of this array is element `k` in Fortran order of the result. A view, with no copy,
        /// is [`reshape`](Self::reshape) (C order) or
        /// [`reshape_infer`](Self::reshape_infer) of a contiguous array.
        fn reshape_order(&self, shape: &[usize], order: Order)
            -> Result<DeviceArray<S::Elem, IxDyn>>;
    }
}

impl<S: Storage, D: Dimension> OnStream<'_, &DeviceArrayBase<S, D>> {
    /// [`copy_order`](DeviceArrayBase::copy_order) on this stream.
    pub fn copy_order(&self, order: Order) -> Result<DeviceArray<S::Elem, D>> {
        let a = self.target;
        if order.is_column_major() {
            let mut out = DeviceArray::<S::Elem, D>::empty(a.context(), a.raw_dim().f())?;
            OnStream::new(&mut out, self.stream).copy_from(a)?;
            Ok(out)
        } else {
            self.to_contiguous()
        }
    }

    /// [`reshape_order`](DeviceArrayBase::reshape_order) on this stream.
    pub fn reshape_order(&self, shape: &[usize], order: Order) -> Result<DeviceArray<S::Elem, IxDyn>> {
        let spec: Vec<Option<usize>> = shape.iter().map(|&l| Some(l)).collect();
        self.copy_order(order)?.into_dyn().reshape_infer(&spec, order)
    }
}
