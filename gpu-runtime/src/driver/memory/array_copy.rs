//! Whole-array copies of a [`CudaArray`] to and from host and device memory, built on the
//! structured copies (kept apart from the array type so that `structured` can name arrays
//! without the array module naming copies). The copies of `ndarray` arrays are
//! `array_ndcopy.rs`'s.

use crate::driver::memory::cuda_array::{ArrayElement, CudaArray};
use crate::driver::memory::structured::Memcpy3D;
use crate::driver::memory::view::{DeviceRead, DeviceWrite};
use crate::error::Result;

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
}
