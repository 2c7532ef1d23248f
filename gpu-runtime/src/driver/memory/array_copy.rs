//! Whole-array copies of a [`CudaArray`] to and from host and device memory and `ndarray`
//! arrays, built on the structured copies (kept apart from the array type so that
//! `structured` can name arrays without the array module naming copies).

use ndarray::{ArrayBase, ArrayD, Data, Dimension, IxDyn, Order, ShapeBuilder};

use crate::driver::context::core::Context;
use crate::driver::host::slices::elements_in_order;
use crate::driver::memory::cuda_array::{
    extents, shape_of, ArrayDescriptor, ArrayElement, ArrayFlags, CudaArray,
};
use crate::driver::memory::structured::Memcpy3D;
use crate::driver::memory::view::{DeviceRead, DeviceWrite};
use crate::error::{CopyError, Result};

impl CudaArray {
    /// Copies packed host elements (row after row, slice after slice) into the whole array.
    pub fn copy_from_host<T: ArrayElement>(&mut self, host: &[T]) -> Result<()> {
        self.desc.check_element::<T>("CudaArray::copy_from_host")?;
        self.check_len("CudaArray::copy_from_host", host.len())?;
        let (w, h, d) = self.whole();
        Memcpy3D::new(w, h, d)
            .src_host(host, w)
            .src_height(h)
            .dst_array(self)
            .call()
    }

    /// Copies the whole array into packed host elements.
    pub fn copy_to_host<T: ArrayElement>(&self, host: &mut [T]) -> Result<()> {
        self.desc.check_element::<T>("CudaArray::copy_to_host")?;
        self.check_len("CudaArray::copy_to_host", host.len())?;
        let (w, h, d) = self.whole();
        Memcpy3D::new(w, h, d)
            .src_array(self)
            .dst_host(host, w)
            .dst_height(h)
            .call()
    }

    /// Copies packed device elements into the whole array.
    pub fn copy_from_device<T: ArrayElement>(&mut self, src: &impl DeviceRead<T>) -> Result<()> {
        self.desc.check_element::<T>("CudaArray::copy_from_device")?;
        self.check_len("CudaArray::copy_from_device", src.device_view().len())?;
        let (w, h, d) = self.whole();
        Memcpy3D::new(w, h, d)
            .src_device(src, w)
            .src_height(h)
            .dst_array(self)
            .call()
    }

    /// Copies the whole array into packed device elements.
    pub fn copy_to_device<T: ArrayElement>(&self, dst: &mut impl DeviceWrite<T>) -> Result<()> {
        self.desc.check_element::<T>("CudaArray::copy_to_device")?;
        self.check_len("CudaArray::copy_to_device", dst.device_view().len())?;
        let (w, h, d) = self.whole();
        Memcpy3D::new(w, h, d)
            .src_array(self)
            .dst_device(dst, w)
            .dst_height(h)
            .call()
    }

    /// The whole array as a packed `Vec`.
    pub fn to_vec<T: ArrayElement>(&self) -> Result<Vec<T>> {
        self.desc.check_element::<T>("CudaArray::to_vec")?;
        // SAFETY: all zeroes is a valid T: every bit pattern is (DeviceRepr).
        let zero: T = unsafe { std::mem::zeroed() };
        let mut v = vec![zero; self.desc.len()];
        self.copy_to_host(&mut v)?;
        Ok(v)
    }

    /// An array holding a copy of a 1-, 2- or 3-dimensional `ndarray` array in C order: the
    /// last axis is the array's width, so `tex2D(tex, x, y)` reads `host[[y, x]]` (PyCUDA's
    /// `matrix_to_array(m, "C")` and `np_to_array(a, "C")`). Any memory layout is accepted:
    /// an array not contiguous in C order (Fortran-ordered, a transposed or strided view) is
    /// first copied into C order on the host, as numpy's `asarray(a, order="C")` does. Give
    /// `flags` such as [`ArrayFlags::SURFACE_LDST`] to bind a surface to it later.
    pub fn from_ndarray<T, S, D>(
        ctx: &Context,
        host: &ArrayBase<S, D>,
        flags: ArrayFlags,
    ) -> Result<CudaArray>
    where
        T: ArrayElement,
        S: Data<Elem = T>,
        D: Dimension,
    {
        Self::from_ndarray_order(ctx, host, Order::C, flags)
    }

    /// An array holding a copy of a 1-, 2- or 3-dimensional `ndarray` array read in `order`
    /// (PyCUDA's `matrix_to_array(m, order)`): in C order the shape is `[depth, height,
    /// width]` (the last axis is x), in Fortran order `[width, height, depth]` (the first axis
    /// is x, so `tex2D(tex, x, y)` reads `host[[x, y]]`). An array whose memory is already in
    /// `order` is copied as it is; any other is first copied into `order` on the host.
    ///
    /// ```no_run
    /// use gpu_runtime::ndarray::{Array2, Order, ShapeBuilder};
    /// use gpu_runtime::{driver::ArrayFlags, Context, driver::CudaArray};
    /// let ctx = Context::default()?;
    /// // A column-major 100 x 30 matrix, as Fortran code keeps it: x runs down the columns.
    /// let m = Array2::from_shape_fn((100, 30).f(), |(i, j)| (i + 100 * j) as f32);
    /// let array = CudaArray::from_ndarray_order(&ctx, &m, Order::F, ArrayFlags::NONE)?;
    /// assert_eq!((array.descriptor().width, array.descriptor().height), (100, 30));
    /// assert_eq!(array.to_ndarray::<f32>(Order::F)?, m.into_dyn());
    /// # Ok::<(), gpu_runtime::Error>(())
    /// ```
    pub fn from_ndarray_order<T, S, D>(
        ctx: &Context,
        host: &ArrayBase<S, D>,
        order: Order,
        flags: ArrayFlags,
    ) -> Result<CudaArray>
    where
        T: ArrayElement,
        S: Data<Elem = T>,
        D: Dimension,
    {
        let (width, height, depth) = extents(host.shape(), order, "CudaArray::from_ndarray")?;
        let desc = ArrayDescriptor::new_3d::<T>(width, height, depth).with_flags(flags);
        let mut array = CudaArray::new(ctx, desc)?;
        array.copy_from_host(&elements_in_order(host, order))?;
        Ok(array)
    }

    /// Copies an `ndarray` array of the array's shape, read in `order` (see
    /// [`from_ndarray_order`](Self::from_ndarray_order)), into the whole array.
    pub fn copy_from_ndarray<T, S, D>(&mut self, host: &ArrayBase<S, D>, order: Order) -> Result<()>
    where
        T: ArrayElement,
        S: Data<Elem = T>,
        D: Dimension,
    {
        let (w, h, d) = extents(host.shape(), order, "CudaArray::copy_from_ndarray")?;
        let desc = &self.desc;
        if (w, h.max(1), d.max(1)) != (desc.width, desc.height.max(1), desc.depth.max(1)) {
            return Err(CopyError::NdarrayExtent {
                shape: host.shape().to_vec(),
                order,
                host_extent: (w, h.max(1), d.max(1)),
                array_extent: (desc.width, desc.height.max(1), desc.depth.max(1)),
            }
            .into());
        }
        self.copy_from_host(&elements_in_order(host, order))
    }

    /// The whole array as an `ndarray` array read in `order`: of shape `[depth, height,
    /// width]` in C order, `[width, height, depth]` in Fortran order (with the array's missing
    /// axes left out), and laid out in that order in memory, so that it compares equal to
    /// the array it was made from by [`from_ndarray_order`](Self::from_ndarray_order).
    pub fn to_ndarray<T: ArrayElement>(&self, order: Order) -> Result<ArrayD<T>> {
        let v = self.to_vec::<T>()?;
        let shape = IxDyn(&shape_of(&self.desc, order));
        let made = if order.is_column_major() {
            ArrayD::from_shape_vec(shape.f(), v)
        } else {
            ArrayD::from_shape_vec(shape, v)
        };
        // The shape holds the descriptor's len() elements, which to_vec returned.
        made.map_err(|source| {
            CopyError::Ndarray {
                operation: "CudaArray::to_ndarray",
                source,
            }
            .into()
        })
    }
}
