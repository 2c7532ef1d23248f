//! The `ndarray` arrays in page-locked memory, [`PinnedArray`] and [`RegisteredArray`]: the
//! `gpuarray` feature's part of [`pinned`](super).

use std::ffi::c_void;

use cudarc::driver::sys;

use super::alloc::{alloc_pinned, mapped_device_ptr, HostAllocFlags, HostRegisterFlags, PinnedPoolCore};
use crate::driver::calls;
use crate::driver::context::core::Context;
use crate::driver::ordering::Release;
use crate::error::Result;

use std::sync::Arc;

use ndarray::{Array, ArrayBase, Data, Dimension, ShapeBuilder};

use crate::driver::host::arrays::{host_array_common, shape_bytes, shape_like, RawHost};
use crate::driver::memory::extent::{host_extent, layout_error};
use crate::driver::memory::page_locked::{
    sealed::Sealed, LockedHost, LockedHostMut, PageLocked, PageLockedMut,
};
use crate::driver::memory::pool_core::Block;
use crate::driver::memory::view::{DeviceView, DeviceViewMut};
use crate::driver::ordering::StreamUses;
use crate::types::repr::DeviceRepr;

enum Storage {
    /// Allocated for this array alone; freed with `cuMemFreeHost`.
    Own,
    /// A block of a [`PageLockedMemoryPool`], returned to it on drop.
    Pooled(Arc<PinnedPoolCore>, Block),
}

/// A host array in page-locked memory (PyCUDA's `pagelocked_empty`): copies to and from the
/// device run by DMA at full speed, and asynchronously. Freed (or returned to its pool) when
/// dropped.
///
/// Asynchronous copies ([`memcpy_htod_async`](crate::driver::memcpy_htod_async),
/// [`memcpy_dtoh_async`](crate::driver::memcpy_dtoh_async)) and kernels given its [`mapped`](Self::mapped)
/// memory use it while the host goes on; every host access (`view`, `view_mut`, the slices)
/// first waits for the GPU writes to it to finish (for a writable access, for every GPU use),
/// and its memory is freed only after them.
///
/// ```no_run
/// # fn main() -> gpu_runtime::Result<()> {
/// use gpu_runtime::{Context, driver::HostAllocFlags};
/// let ctx = Context::default()?;
/// let mut a = ctx.pagelocked_zeros::<f32, _>((1024, 1024), HostAllocFlags::NONE)?;
/// a.view_mut().fill(1.5);
/// let d = ctx.to_device(&a)?; // a DMA copy
/// # Ok(()) }
/// ```
///
/// Needs the `gpuarray` feature (on by default), which brings `ndarray`.
pub struct PinnedArray<T: DeviceRepr, D: Dimension> {
    raw: RawHost<T, D>,
    flags: HostAllocFlags,
    ctx: Context,
    storage: Storage,
    /// Boxed, so that a pool hands the record on with the block by moving a pointer.
    uses: Box<StreamUses>,
}

host_array_common!(PinnedArray);

impl<T: DeviceRepr, D: Dimension> PinnedArray<T, D> {
    /// An array over a block of a page-locked pool, with the record of the uses its previous
    /// owners left outstanding; the block goes back to `pool` when the array is dropped.
    pub(crate) fn from_pool_block(
        pool: Arc<PinnedPoolCore>,
        block: Block,
        uses: Box<StreamUses>,
        shape: ndarray::Shape<D>,
        len: usize,
        flags: HostAllocFlags,
        ctx: &Context,
    ) -> PinnedArray<T, D> {
        PinnedArray {
            raw: RawHost::new(block.addr as *mut T, shape, len),
            flags,
            ctx: ctx.clone(),
            storage: Storage::Pooled(pool, block),
            uses,
        }
    }

    fn gpu_done(&self, write: bool) {
        // Errors are a failed context's, whose work has ended.
        let _ = if write {
            self.uses.host_write()
        } else {
            self.uses.host_read()
        };
    }

    /// The flags the memory was allocated with.
    pub fn flags(&self) -> HostAllocFlags {
        self.flags
    }

    /// The device address of mapped memory (PyCUDA's `get_device_pointer`): allocated with
    /// [`HostAllocFlags::DEVICE_MAP`], else [`Error::NotMapped`](crate::error::Error::NotMapped).
    pub fn device_ptr(&self) -> Result<sys::CUdeviceptr> {
        mapped_device_ptr(
            &self.ctx,
            self.flags.contains(HostAllocFlags::DEVICE_MAP),
            self.raw.ptr.as_ptr().cast(),
            self.raw.len,
        )
    }

    /// The mapped memory as a read-only kernel argument: kernels read the host memory over the
    /// bus, with no copy.
    pub fn mapped(&self) -> Result<DeviceView<'_, T>> {
        Ok(DeviceView::tracked(
            self.device_ptr()?,
            self.raw.len,
            &self.ctx,
            &self.uses,
        ))
    }

    /// The mapped memory as a writable kernel argument. The host's next access waits for the
    /// kernels that write it.
    pub fn mapped_mut(&mut self) -> Result<DeviceViewMut<'_, T>> {
        Ok(DeviceViewMut::tracked(
            self.device_ptr()?,
            self.raw.len,
            &self.ctx,
            &self.uses,
        ))
    }
}

impl<T: DeviceRepr, D: Dimension> Sealed for PinnedArray<T, D> {}

impl<T: DeviceRepr, D: Dimension> PageLocked<T> for PinnedArray<T, D> {
    fn locked(&self) -> LockedHost<'_, T> {
        LockedHost {
            ptr: self.raw.ptr.as_ptr(),
            len: self.raw.len,
            uses: &self.uses,
        }
    }
}

impl<T: DeviceRepr, D: Dimension> PageLockedMut<T> for PinnedArray<T, D> {
    fn locked_mut(&mut self) -> LockedHostMut<'_, T> {
        LockedHostMut {
            ptr: self.raw.ptr.as_ptr(),
            len: self.raw.len,
            uses: &self.uses,
        }
    }
}

impl<T: DeviceRepr, D: Dimension> Drop for PinnedArray<T, D> {
    fn drop(&mut self) {
        match &self.storage {
            Storage::Own => {
                if self.raw.len > 0 {
                    // Freed once the copies and kernels that use it have finished.
                    let what = Release::HostMemory(self.raw.ptr.as_ptr().cast());
                    self.ctx.release_after(&mut self.uses, what);
                }
            }
            // SAFETY: the block came from this pool and is returned once, with the uses still
            // outstanding on it.
            Storage::Pooled(pool, block) => unsafe { pool.release(*block, std::mem::take(&mut self.uses)) },
        }
    }
}

impl Context {
    /// A page-locked host array of `shape` (C order, or Fortran with `.f()`), contents
    /// unspecified (PyCUDA's `pagelocked_empty`).
    ///
    /// Needs the `gpuarray` feature (on by default), which brings `ndarray`.
    pub fn pagelocked_empty<T: DeviceRepr, Sh: ShapeBuilder>(
        &self,
        shape: Sh,
        flags: HostAllocFlags,
    ) -> Result<PinnedArray<T, Sh::Dim>>
    where
        Sh::Dim: Dimension,
    {
        let (shape, len, bytes) = shape_bytes::<T, _>(shape, "pagelocked_empty")?;
        let addr = alloc_pinned(self, bytes, flags)?;
        Ok(PinnedArray {
            raw: RawHost::new(addr as *mut T, shape, len),
            flags,
            ctx: self.clone(),
            storage: Storage::Own,
            uses: Box::default(),
        })
    }

    /// A zero-filled page-locked host array of `shape` (PyCUDA's `pagelocked_zeros`).
    ///
    /// Needs the `gpuarray` feature (on by default), which brings `ndarray`.
    pub fn pagelocked_zeros<T: DeviceRepr, Sh: ShapeBuilder>(
        &self,
        shape: Sh,
        flags: HostAllocFlags,
    ) -> Result<PinnedArray<T, Sh::Dim>>
    where
        Sh::Dim: Dimension,
    {
        let mut a = self.pagelocked_empty(shape, flags)?;
        zero(&mut a.raw);
        Ok(a)
    }

    /// A page-locked array with the shape and memory order of `like`, contents unspecified.
    ///
    /// Needs the `gpuarray` feature (on by default), which brings `ndarray`.
    pub fn pagelocked_empty_like<T: DeviceRepr, S: Data, D: Dimension>(
        &self,
        like: &ArrayBase<S, D>,
        flags: HostAllocFlags,
    ) -> Result<PinnedArray<T, D>> {
        self.pagelocked_empty(shape_like(like), flags)
    }

    /// A zero-filled page-locked array with the shape and memory order of `like`.
    ///
    /// Needs the `gpuarray` feature (on by default), which brings `ndarray`.
    pub fn pagelocked_zeros_like<T: DeviceRepr, S: Data, D: Dimension>(
        &self,
        like: &ArrayBase<S, D>,
        flags: HostAllocFlags,
    ) -> Result<PinnedArray<T, D>> {
        self.pagelocked_zeros(shape_like(like), flags)
    }

    /// Page-locks an existing array in place (PyCUDA's `register_host_memory`); it is unlocked
    /// when the returned value is dropped or [`RegisteredArray::into_inner`] gives it back.
    ///
    /// The array must be contiguous in C or Fortran order with positive strides, as numpy's
    /// `c_contiguous` / `f_contiguous` flags that PyCUDA checks: exactly its elements, from its
    /// lowest address, are registered, and asynchronous copies and mapped kernels see them in
    /// that order. Any other layout is refused with
    /// [`CopyError::HostArrayLayout`](crate::CopyError::HostArrayLayout) naming its shape and
    /// strides, before the driver is asked (the array is dropped with the error): among them an
    /// owned array with a reversed axis (`invert_axis`, `slice_move(s![..;-1])`), whose
    /// memory holds its elements backwards and whose `as_ptr()` is its *highest* element,
    /// and a permuted one. Pass `array.as_standard_layout().into_owned()` instead.
    ///
    /// Needs the `gpuarray` feature (on by default), which brings `ndarray`.
    pub fn register_host_memory<T: DeviceRepr, D: Dimension>(
        &self,
        array: Array<T, D>,
        flags: HostRegisterFlags,
    ) -> Result<RegisteredArray<T, D>> {
        let (low, len) = registered_range(&array)?;
        let bytes = len * std::mem::size_of::<T>();
        if bytes > 0 {
            self.bind()?;
            // SAFETY: [low, low + bytes) is exactly the array's elements (C or Fortran order,
            // checked above: its lowest address and its length), live storage the returned
            // value owns, so it is neither freed nor moved while registered.
            unsafe { calls::mem_host_register(low as *mut c_void, bytes, flags.bits()) }?;
        }
        Ok(RegisteredArray {
            array: Some(array),
            flags,
            ctx: self.clone(),
            uses: StreamUses::new(),
        })
    }
}

/// The memory [`Context::register_host_memory`] page-locks for `array`, and every use of a
/// [`RegisteredArray`] takes (copies, mapping, unregistering): its lowest element address and
/// its length in elements. Only a C- or Fortran-contiguous array with positive strides is
/// accepted, whose span is its elements in that order; any other is the typed refusal naming
/// its strides. From the shared [`HostExtent`](crate::driver::memory::extent::HostExtent), never
/// from `as_ptr()` alone, which for a reversed axis is the highest element.
pub(crate) fn registered_range<T, S: Data<Elem = T>, D: Dimension>(
    array: &ArrayBase<S, D>,
) -> Result<(*const T, usize)> {
    let extent = host_extent(array);
    if extent.order().is_none() {
        return Err(layout_error(array, "Context::register_host_memory"));
    }
    debug_assert_eq!(extent.span, extent.len);
    Ok((extent.lowest(array.as_ptr()), extent.span))
}

fn zero<T, D: Dimension>(raw: &mut RawHost<T, D>) {
    // SAFETY: len elements at ptr belong to the array; all-zero bytes are a valid DeviceRepr.
    unsafe { std::ptr::write_bytes(raw.ptr.as_ptr(), 0, raw.len) };
}

/// An `ndarray` array page-locked in place by [`Context::register_host_memory`]; unlocked on
/// drop. Deref gives the array; it is host data like any array, and page-locked memory for
/// asynchronous copies ([`PageLocked`]). Host access, unlocking and giving the array back
/// wait for the GPU's uses of it first.
///
/// The array is C- or Fortran-contiguous with positive strides (others are refused when
/// registering): copies, [`mapped`](Self::mapped) kernels and the registration itself cover
/// exactly its elements, from its lowest address, in that memory order.
///
/// Needs the `gpuarray` feature (on by default), which brings `ndarray`.
pub struct RegisteredArray<T: DeviceRepr, D: Dimension> {
    array: Option<Array<T, D>>,
    flags: HostRegisterFlags,
    ctx: Context,
    uses: StreamUses,
}

impl<T: DeviceRepr, D: Dimension> RegisteredArray<T, D> {
    /// Unlocks the memory and gives the array back, once the GPU has finished with it.
    pub fn into_inner(mut self) -> Array<T, D> {
        self.unregister();
        match self.array.take() {
            Some(a) => a,
            None => unreachable!("the array is only taken here, and this consumes self"),
        }
    }

    /// The device address of the array, when registered with
    /// [`HostRegisterFlags::DEVICE_MAP`].
    pub fn device_ptr(&self) -> Result<sys::CUdeviceptr> {
        let (low, len) = self.range();
        mapped_device_ptr(
            &self.ctx,
            self.flags.bits() & sys::CU_MEMHOSTREGISTER_DEVICEMAP != 0,
            low as *mut c_void,
            len,
        )
    }

    /// The mapped memory as a kernel argument the kernel reads (registered with
    /// [`HostRegisterFlags::DEVICE_MAP`]; else [`Error::NotMapped`](crate::error::Error::NotMapped)).
    pub fn mapped(&self) -> Result<DeviceView<'_, T>> {
        Ok(DeviceView::tracked(
            self.device_ptr()?,
            self.raw_len(),
            &self.ctx,
            &self.uses,
        ))
    }

    /// The mapped memory as a writable kernel argument; the host's next access waits for it.
    pub fn mapped_mut(&mut self) -> Result<DeviceViewMut<'_, T>> {
        Ok(DeviceViewMut::tracked(
            self.device_ptr()?,
            self.raw_len(),
            &self.ctx,
            &self.uses,
        ))
    }

    /// The array, writable (its storage cannot be reallocated through this), once the GPU has
    /// finished with it.
    pub fn view_mut(&mut self) -> ndarray::ArrayViewMut<'_, T, D> {
        let _ = self.uses.host_write();
        self.array
            .as_mut()
            .map(|a| a.view_mut())
            .unwrap_or_else(|| unreachable!())
    }

    fn raw_len(&self) -> usize {
        self.range().1
    }

    /// The registered memory: the array's lowest element address and the span of its
    /// elements, as [`registered_range`] gave them to `cuMemHostRegister` (the array's layout
    /// cannot change while it is registered: only `&` and views of it are lent out).
    fn range(&self) -> (*const T, usize) {
        let a = self.array.as_ref().unwrap_or_else(|| unreachable!());
        let extent = host_extent(a);
        (extent.lowest(a.as_ptr()), extent.span)
    }

    /// The array, once the GPU has finished writing it.
    fn inner(&self) -> &Array<T, D> {
        // Errors are a failed context's, whose work has ended.
        let _ = self.uses.host_read();
        // The array is only taken out in into_inner, which consumes self.
        self.array.as_ref().unwrap_or_else(|| unreachable!())
    }

    fn unregister(&mut self) {
        // The memory stays locked, and the array alive, until the GPU has finished with it.
        let _ = self.uses.host_write();
        if self.array.is_some() {
            let (low, len) = self.range();
            if len > 0 && self.ctx.bind().is_ok() {
                // SAFETY: registered in register_host_memory from this same address, unregistered
                // once (the array is taken or dropped right after).
                let _ = unsafe { calls::mem_host_unregister(low as *mut c_void) };
            }
        }
    }
}

impl<T: DeviceRepr, D: Dimension> std::ops::Deref for RegisteredArray<T, D> {
    type Target = Array<T, D>;
    fn deref(&self) -> &Array<T, D> {
        self.inner()
    }
}

impl<T: DeviceRepr, D: Dimension> Drop for RegisteredArray<T, D> {
    fn drop(&mut self) {
        self.unregister();
    }
}

impl<T: DeviceRepr, D: Dimension> crate::driver::memory::slices::HostSlice<T> for RegisteredArray<T, D> {
    fn host_slice(&self) -> Result<&[T]> {
        self.inner().host_slice()
    }
}

impl<T: DeviceRepr, D: Dimension> crate::driver::memory::slices::HostSliceMut<T> for RegisteredArray<T, D> {
    fn host_slice_mut(&mut self) -> Result<&mut [T]> {
        let _ = self.uses.host_write();
        self.array
            .as_mut()
            .unwrap_or_else(|| unreachable!())
            .host_slice_mut()
    }
}

impl<T: DeviceRepr, D: Dimension> Sealed for RegisteredArray<T, D> {}

impl<T: DeviceRepr, D: Dimension> PageLocked<T> for RegisteredArray<T, D> {
    fn locked(&self) -> LockedHost<'_, T> {
        let (ptr, len) = self.range();
        LockedHost {
            ptr,
            len,
            uses: &self.uses,
        }
    }
}

impl<T: DeviceRepr, D: Dimension> PageLockedMut<T> for RegisteredArray<T, D> {
    fn locked_mut(&mut self) -> LockedHostMut<'_, T> {
        let len = self.range().1;
        let a = self.array.as_mut().unwrap_or_else(|| unreachable!());
        // The lowest address, from the mutable pointer (an owned array's, never reallocated):
        // the first element, for the C or Fortran layouts registered arrays have.
        let first = host_extent(a).first;
        LockedHostMut {
            ptr: a.as_mut_ptr().wrapping_sub(first),
            len,
            uses: &self.uses,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::{CopyError, Error};
    use ndarray::{s, Array1, Array2, Array3, Axis, ShapeBuilder};

    /// The strides of the refusal, or the range registered: what `register_host_memory` decides
    /// before the driver is asked.
    fn decided<T, D: Dimension>(a: &Array<T, D>) -> std::result::Result<(usize, usize), Vec<isize>> {
        match registered_range(a) {
            Ok((low, len)) => Ok((low as usize, len)),
            Err(Error::Copy(CopyError::HostArrayLayout {
                operation: "Context::register_host_memory",
                strides,
                ..
            })) => Err(strides),
            Err(other) => panic!("{other}"),
        }
    }

    #[test]
    fn owned_arrays_with_a_reversed_axis_are_refused_naming_their_strides() {
        // The issue's case: an owned array whose axis was inverted. ndarray counts it
        // contiguous, and its as_ptr() is its highest element, so as_ptr() + len ran past it.
        let mut v = Array1::from_vec((0..100u32).collect());
        v.invert_axis(Axis(0));
        assert!(v.as_slice_memory_order().is_some(), "ndarray calls it contiguous");
        assert_eq!(decided(&v), Err(vec![-1]));
        let mut m = Array2::from_shape_fn((4, 6), |(i, j)| (i * 6 + j) as f32);
        m.invert_axis(Axis(1));
        assert_eq!(decided(&m), Err(vec![6, -1]));
        let back = Array3::<u8>::zeros((2, 3, 4)).slice_move(s![..;-1, .., ..]);
        assert_eq!(decided(&back), Err(vec![-12, 4, 1]));
        // Permuted axes (contiguous in neither C nor Fortran order) and stepped ones too.
        let p = Array3::<u8>::zeros((2, 3, 4)).permuted_axes([1, 0, 2]);
        assert_eq!(decided(&p), Err(vec![4, 12, 1]));
        let stepped = Array1::<u8>::zeros(10).slice_move(s![..;2]);
        assert_eq!(decided(&stepped), Err(vec![2]));
        // The fix the error names registers the elements in the reversed array's order.
        let fixed = m.as_standard_layout().into_owned();
        let (low, len) = decided(&fixed).unwrap();
        assert_eq!((low, len), (fixed.as_ptr() as usize, 24));
        assert_eq!(fixed.as_slice().unwrap()[..6], [5.0, 4.0, 3.0, 2.0, 1.0, 0.0]);
    }

    #[test]
    fn c_and_fortran_arrays_register_exactly_their_elements() {
        let c = Array2::<f64>::zeros((3, 5));
        assert_eq!(decided(&c), Ok((c.as_ptr() as usize, 15)));
        let f = Array2::<f64>::zeros((3, 5).f());
        assert_eq!(decided(&f), Ok((f.as_ptr() as usize, 15)));
        // An owned array that is the middle of a larger allocation: only the middle.
        let whole = Array1::from_vec((0..64i32).collect());
        let base = whole.as_ptr() as usize;
        let middle = whole.slice_move(s![8..40]).into_shape_with_order((4, 8)).unwrap();
        assert_eq!(decided(&middle), Ok((base + 8 * 4, 32)));
        // A reversed axis of length 1 reaches no other element: C order, from as_ptr().
        let mut row = Array2::<i16>::zeros((1, 7));
        row.invert_axis(Axis(0));
        assert_eq!(decided(&row), Ok((row.as_ptr() as usize, 7)));
        // Empty and 0-d arrays.
        let empty = Array2::<f32>::zeros((0, 3));
        assert_eq!(decided(&empty).map(|(_, n)| n), Ok(0));
        let scalar = Array::from_elem((), 3u64);
        assert_eq!(decided(&scalar), Ok((scalar.as_ptr() as usize, 1)));
    }
}
