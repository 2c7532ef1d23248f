//! `ndarray` arrays of any dimension, in C or Fortran order, to and from device memory
//! (PyCUDA's `to_device` of any numpy array and `from_device_like`).

use ndarray::{Array, ArrayBase, Data, Dimension, Order, ShapeBuilder};

use crate::driver::context::core::Context;
use crate::driver::memory::buffer::DeviceBuffer;
use crate::driver::memory::extent::ordered_slice;
use crate::driver::memory::slices::memory_order;
use crate::driver::memory::view::DeviceRead;
use crate::error::Result;
use crate::types::repr::DeviceRepr;

impl Context {
    /// Copies an `ndarray` array in C or Fortran order to a new device buffer, elements in
    /// their memory order (as PyCUDA's `to_device` copies a numpy array's buffer). Read it back
    /// with [`Context::from_device_like`] or [`Context::from_device`] with the same order.
    /// Any other layout, a reversed axis included, is refused with
    /// [`CopyError::HostArrayLayout`](crate::CopyError::HostArrayLayout) naming its strides
    /// (`host.as_standard_layout()` is the fix).
    pub fn array_to_device<T, S, D>(&self, host: &ArrayBase<S, D>) -> Result<DeviceBuffer<T>>
    where
        T: DeviceRepr,
        S: Data<Elem = T>,
        D: Dimension,
    {
        self.to_device(ordered_slice(host, "Context::array_to_device")?)
    }

    /// Copies device memory into a new array with the shape and memory order (C or Fortran)
    /// of `like` (PyCUDA's `from_device_like`). The buffer must hold at least as many
    /// elements as `like`.
    ///
    /// Needs the `gpuarray` feature (on by default), which brings `ndarray`.
    pub fn from_device_like<T, S, D>(
        &self,
        buffer: &impl DeviceRead<T>,
        like: &ArrayBase<S, D>,
    ) -> Result<Array<T, D>>
    where
        T: DeviceRepr,
        S: Data,
        D: Dimension,
    {
        let dim = like.raw_dim();
        if memory_order(like) == Some(Order::F) {
            self.from_device(buffer, dim.f())
        } else {
            self.from_device(buffer, dim)
        }
    }
}
