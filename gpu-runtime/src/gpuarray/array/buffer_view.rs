//! 1-D array views of whole device buffers: memory from `ctx.to_device(&data)` or
//! `ctx.alloc` (a [`DeviceBuffer`], which kernels written with `#[kernel]` take) passed to the
//! array functions (`linear_combination`, the expressions, the reductions) without a copy,
//! as PyCUDA's `GPUArray(..., gpudata=)` wraps an allocation.

use ndarray::Ix1;

use crate::driver::memory::buffer::DeviceBuffer;
use crate::driver::memory::view::{DeviceRead, DeviceWrite};
use crate::gpuarray::array::core::{DeviceArrayBase, DeviceArrayView, DeviceArrayViewMut, Storage};
use crate::gpuarray::elements::array_element::ArrayElement;

impl<'a, T: ArrayElement> DeviceArrayView<'a, T, Ix1> {
    /// A read-only 1-D view of every element of `buffer` (its length, step 1): a buffer from
    /// `ctx.to_device` as an array operand.
    ///
    /// ```no_run
    /// use gpu_runtime::gpuarray::{linear_combination, DeviceArray, DeviceArrayView};
    /// use gpu_runtime::Context;
    /// let ctx = Context::default()?;
    /// let x = ctx.to_device(&[1.0f32, 2.0, 3.0])?;
    /// let mut z = DeviceArray::<f32, _>::zeros(&ctx, 3)?;
    /// linear_combination(&[(2.0f32.into(), &DeviceArrayView::from_buffer(&x))], &mut z)?;
    /// assert_eq!(z.to_vec()?, vec![2.0, 4.0, 6.0]);
    /// # Ok::<(), gpu_runtime::Error>(())
    /// ```
    pub fn from_buffer(buffer: &'a DeviceBuffer<T>) -> Self {
        let len = buffer.len();
        whole(buffer.device_view(), len)
    }
}

impl<'a, T: ArrayElement> DeviceArrayViewMut<'a, T, Ix1> {
    /// A writable 1-D view of every element of `buffer` (an `out` of the array functions);
    /// the `&mut` borrow keeps anything else from using the buffer meanwhile.
    pub fn from_buffer_mut(buffer: &'a mut DeviceBuffer<T>) -> Self {
        let len = buffer.len();
        whole(buffer.device_view_mut(), len)
    }
}

/// A 1-D array of all `len` elements of `data`. A whole buffer is contiguous: every index
/// below `len` lies inside it.
fn whole<S: Storage>(data: S, len: usize) -> DeviceArrayBase<S, Ix1> {
    DeviceArrayBase {
        data,
        offset: 0,
        dim: Ix1(len),
        strides: Ix1(1),
    }
}
