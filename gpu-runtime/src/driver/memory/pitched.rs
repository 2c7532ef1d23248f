//! Pitched 2D device allocations (PyCUDA's `mem_alloc_pitch`): rows padded so that each
//! starts at an address the hardware accesses efficiently.

use cudarc::driver::sys;

use crate::driver::calls;
use crate::driver::context::core::Context;
use crate::driver::memory::buffer::DeviceBuffer;
use crate::driver::memory::slices::{HostSlice, HostSliceMut};
use crate::driver::memory::structured::Memcpy2D;
use crate::driver::memory::view::{DeviceRead, DeviceView, DeviceViewMut, DeviceWrite};
use crate::error::{CopyError, MemoryError, Result};
use crate::types::repr::DeviceRepr;

/// `height` rows of `width` elements of `T`, each row starting [`pitch`](Self::pitch) bytes
/// after the previous one. As kernel memory it is `pitch / size_of::<T>() * height` elements,
/// padding included: index element `(x, y)` as `y * row_len + x`.
///
/// ```no_run
/// use gpu_runtime::{kernel, Context};
///
/// #[kernel(r#"
/// __global__ void add_x(float *img, int row_len, int w, int h) {
///     int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
///     if (x < w && y < h) img[y * row_len + x] += x;
/// }"#)]
/// fn add_x(img: &mut [f32], row_len: i32, w: i32, h: i32);
///
/// # fn main() -> gpu_runtime::Result<()> {
/// let ctx = Context::default()?;
/// let (w, h) = (100, 50);
/// let mut img = ctx.alloc_pitch::<f32>(w, h)?;
/// img.copy_from_host(&vec![1.0f32; w * h])?; // packed rows in, padded rows on the device
/// // Rows start `row_len` elements apart, not `w`: the padding aligns each row.
/// let row_len = img.row_len() as i32;
/// let k = add_x::prepare(&ctx)?;
/// k.prepared_call((1, h), 128, &mut img, row_len, w as i32, h as i32)?;
/// let out = img.to_array()?; // (h, w), padding dropped
/// assert_eq!((out[[0, 0]], out[[49, 99]]), (1.0, 100.0));
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct PitchedBuffer<T: DeviceRepr> {
    buf: DeviceBuffer<T>,
    pitch: usize,
    width: usize,
    height: usize,
}

impl Context {
    /// Allocates `height` rows of `width` elements with padded rows (PyCUDA's
    /// `mem_alloc_pitch`). `T` must be 1, 2, 4, 8 or 16 bytes wide.
    pub fn alloc_pitch<T: DeviceRepr>(&self, width: usize, height: usize) -> Result<PitchedBuffer<T>> {
        let size = std::mem::size_of::<T>();
        if !matches!(size, 1 | 2 | 4 | 8 | 16) {
            return Err(MemoryError::PitchElement { element_bytes: size }.into());
        }
        let width_bytes = width.checked_mul(size).ok_or(MemoryError::PitchRowOverflow {
            width,
            element_bytes: size,
        })?;
        if width == 0 || height == 0 {
            return Ok(PitchedBuffer {
                buf: DeviceBuffer::uninit(self, 0)?,
                pitch: width_bytes,
                width,
                height,
            });
        }
        // The element size is 4, 8 or 16.
        let (ptr, pitch) = self.bound(|| calls::mem_alloc_pitch(width_bytes, height, size.max(4) as u32))?;
        // The pitch is a multiple of the hardware's alignment (at least 32 bytes), so a whole
        // number of elements.
        let len = pitch / size * height;
        Ok(PitchedBuffer {
            buf: DeviceBuffer::from_raw_parts(self, ptr, len),
            pitch,
            width,
            height,
        })
    }
}

impl<T: DeviceRepr> PitchedBuffer<T> {
    /// Bytes from the start of one row to the start of the next.
    pub fn pitch(&self) -> usize {
        self.pitch
    }

    /// Elements from the start of one row to the start of the next (`pitch / size_of::<T>()`).
    pub fn row_len(&self) -> usize {
        self.pitch / std::mem::size_of::<T>()
    }

    /// Elements per row, padding excluded.
    pub fn width(&self) -> usize {
        self.width
    }

    /// Number of rows.
    pub fn height(&self) -> usize {
        self.height
    }

    /// The number of elements as kernel memory, padding included (`row_len * height`).
    pub fn len(&self) -> usize {
        self.buf.len()
    }

    /// True when there are no elements.
    pub fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }

    /// The device address of the first row.
    pub fn device_ptr(&self) -> sys::CUdeviceptr {
        self.buf.device_ptr()
    }

    /// The context the memory was allocated in.
    pub fn context(&self) -> &Context {
        self.buf.context()
    }

    /// A read-only view of `range`, in elements of the padded layout (`y * row_len + x`).
    pub fn slice(&self, range: impl std::ops::RangeBounds<usize>) -> Result<DeviceView<'_, T>> {
        self.buf.slice(range)
    }

    /// A writable view of `range`, in elements of the padded layout (`y * row_len + x`).
    pub fn slice_mut(&mut self, range: impl std::ops::RangeBounds<usize>) -> Result<DeviceViewMut<'_, T>> {
        self.buf.slice_mut(range)
    }

    /// Copies `width * height` packed host elements (row after row) into the rows.
    pub fn copy_from_host(&mut self, host: &(impl HostSlice<T> + ?Sized)) -> Result<()> {
        let host = host.host_slice()?;
        let (w, h, pitch) = (self.width, self.height, self.pitch);
        if host.len() != w * h {
            return Err(CopyError::PitchedHostLength {
                operation: "PitchedBuffer::copy_from_host",
                host: host.len(),
                rows: h,
                row_elements: w,
            }
            .into());
        }
        Memcpy2D::new(w * std::mem::size_of::<T>(), h)
            .src_host(host, w * std::mem::size_of::<T>())
            .dst_device(self, pitch)
            .call()
    }

    /// Copies the rows into `width * height` packed host elements.
    pub fn copy_to_host(&self, host: &mut (impl HostSliceMut<T> + ?Sized)) -> Result<()> {
        let host = host.host_slice_mut()?;
        let (w, h) = (self.width, self.height);
        if host.len() != w * h {
            return Err(CopyError::PitchedHostLength {
                operation: "PitchedBuffer::copy_to_host",
                host: host.len(),
                rows: h,
                row_elements: w,
            }
            .into());
        }
        Memcpy2D::new(w * std::mem::size_of::<T>(), h)
            .src_device(self, self.pitch)
            .dst_host(host, w * std::mem::size_of::<T>())
            .call()
    }

    #[cfg(feature = "gpuarray")]
    /// The rows, packed, as an `ndarray` array of shape `(height, width)`.
    ///
    /// Needs the `gpuarray` feature (on by default), which brings `ndarray`.
    pub fn to_array(&self) -> Result<ndarray::Array2<T>> {
        let n = self.width * self.height;
        // SAFETY: T is DeviceRepr, for which every bit pattern (all zeros included) is valid.
        let mut v: Vec<T> = (0..n).map(|_| unsafe { std::mem::zeroed() }).collect();
        // A 2D copy reads only the rows, never the padding between them.
        self.copy_to_host(&mut v)?;
        ndarray::Array2::from_shape_vec((self.height, self.width), v).map_err(|source| {
            CopyError::Ndarray {
                operation: "PitchedBuffer::to_array",
                source,
            }
            .into()
        })
    }
}

impl<T: DeviceRepr> DeviceRead<T> for PitchedBuffer<T> {
    #[inline]
    fn device_view(&self) -> DeviceView<'_, T> {
        self.buf.device_view()
    }

    /// True when the rows have no padding (the view spans the padding after the last row
    /// too, so one row counts like many).
    fn is_contiguous(&self) -> bool {
        self.height == 0 || self.pitch == self.width * std::mem::size_of::<T>()
    }
}
impl<T: DeviceRepr> DeviceWrite<T> for PitchedBuffer<T> {
    #[inline]
    fn device_view_mut(&mut self) -> DeviceViewMut<'_, T> {
        self.buf.device_view_mut()
    }
}
