//! Copies of `ndarray` arrays into and out of a [`CudaArray`], in C or Fortran order (PyCUDA's
//! `matrix_to_array`, `np_to_array`): the `gpuarray` feature, which brings `ndarray`.

use ndarray::{ArrayBase, ArrayD, Data, Dimension, IxDyn, Order, ShapeBuilder};

use crate::driver::context::core::Context;
use crate::driver::memory::cuda_array::{
    extents, shape_of, ArrayDescriptor, ArrayElement, ArrayFlags, CudaArray,
};
use crate::driver::memory::slices::elements_in_order;
use crate::error::{CopyError, Result};

impl CudaArray {
    /// An array holding a copy of a 1-, 2- or 3-dimensional `ndarray` array in C order: the
    /// last axis is the array's width, so `tex2D(tex, x, y)` reads `host[[y, x]]` (PyCUDA's
    /// `matrix_to_array(m, "C")` and `np_to_array(a, "C")`). Any memory layout is accepted:
    /// an array not contiguous in C order (Fortran-ordered, a transposed or strided view) is
    /// first copied into C order on the host, as numpy's `asarray(a, order="C")` does. Give
    /// `flags` such as [`ArrayFlags::SURFACE_LDST`] to bind a surface to it later.
    ///
    /// Needs the `gpuarray` feature (on by default), which brings `ndarray`.
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
    ///
    /// Needs the `gpuarray` feature (on by default), which brings `ndarray`.
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
    ///
    /// Needs the `gpuarray` feature (on by default), which brings `ndarray`.
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
    ///
    /// Needs the `gpuarray` feature (on by default), which brings `ndarray`.
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
