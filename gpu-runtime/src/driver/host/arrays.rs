//! Host arrays over special allocations (page-locked, managed, aligned): what they share, and
//! the aligned kind.
//!
//! `ndarray` arrays cannot own foreign storage, so each kind is an owning type that frees its
//! allocation when dropped and lends `ndarray` views of it (`view`, `view_mut`). Each is also a
//! [`HostSlice`](crate::HostSlice) / [`HostSliceMut`](crate::HostSliceMut), so it goes wherever
//! host data is accepted.

use std::alloc::Layout;
use std::ptr::NonNull;

use ndarray::{ArrayBase, ArrayView, ArrayViewMut, Data, Dimension, Shape, ShapeBuilder};

use crate::error::{MemoryError, Result};

/// The shape and the element pointer of a host array, whatever owns the memory.
pub(crate) struct RawHost<T, D: Dimension> {
    pub ptr: NonNull<T>,
    pub shape: Shape<D>,
    pub len: usize,
}

// SAFETY: the owner of the memory decides thread-safety; RawHost is a pointer plus a shape and
// is only ever used inside owners that are Send/Sync exactly when T is.
unsafe impl<T: Send, D: Dimension> Send for RawHost<T, D> {}
// SAFETY: as above; shared access only reads.
unsafe impl<T: Sync, D: Dimension> Sync for RawHost<T, D> {}

/// The elements and bytes of `shape`, or a typed error when they overflow.
pub(crate) fn shape_bytes<T, Sh: ShapeBuilder>(
    shape: Sh,
    operation: &'static str,
) -> Result<(Shape<Sh::Dim>, usize, usize)>
where
    Sh::Dim: Dimension,
{
    let shape = shape.into_shape_with_order();
    let len = shape
        .raw_dim()
        .slice()
        .iter()
        .try_fold(1usize, |acc, &d| acc.checked_mul(d));
    let bytes = len.and_then(|n| n.checked_mul(std::mem::size_of::<T>()));
    match (len, bytes) {
        (Some(len), Some(bytes)) if bytes <= isize::MAX as usize => Ok((shape, len, bytes)),
        _ => Err(MemoryError::ShapeTooLarge {
            operation,
            shape: shape.raw_dim().slice().to_vec(),
            element_bytes: std::mem::size_of::<T>(),
        }
        .into()),
    }
}

/// `like`'s shape, in Fortran order when `like` is laid out that way (and not also C order);
/// C order for any other layout, a reversed one included.
pub(crate) fn shape_like<S: Data, D: Dimension>(like: &ArrayBase<S, D>) -> Shape<D> {
    let fortran = crate::driver::memory::extent::host_extent(like).order() == Some(ndarray::Order::F);
    like.raw_dim().set_f(fortran)
}

impl<T, D: Dimension> RawHost<T, D> {
    /// `addr` as the array's memory; a zero-length array gets a dangling, aligned pointer.
    pub fn new(addr: *mut T, shape: Shape<D>, len: usize) -> Self {
        let ptr = if len == 0 {
            NonNull::dangling()
        } else {
            NonNull::new(addr).unwrap_or(NonNull::dangling())
        };
        RawHost { ptr, shape, len }
    }

    pub fn view(&self) -> ArrayView<'_, T, D> {
        // SAFETY: the owner keeps len elements at ptr alive and initialised for its lifetime,
        // laid out contiguously in the shape's order.
        unsafe { ArrayView::from_shape_ptr(self.shape.clone(), self.ptr.as_ptr()) }
    }

    pub fn view_mut(&mut self) -> ArrayViewMut<'_, T, D> {
        // SAFETY: as in view; &mut self makes the access exclusive.
        unsafe { ArrayViewMut::from_shape_ptr(self.shape.clone(), self.ptr.as_ptr()) }
    }

    pub fn as_slice_memory_order(&self) -> &[T] {
        // SAFETY: len initialised elements at ptr, alive for the owner's lifetime.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }

    pub fn as_mut_slice_memory_order(&mut self) -> &mut [T] {
        // SAFETY: as above, exclusively borrowed.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

/// The accessors every host array type has, and its `HostSlice` impls: the elements as one
/// slice in memory order (C or Fortran), as for `ndarray` arrays.
///
/// The type provides `fn gpu_done(&self, write: bool)`: it returns once the GPU no longer
/// writes the memory (and, with `write`, no longer reads it either), so that the host may read
/// (or write) it. Host memory the GPU uses asynchronously (page-locked, managed) waits there;
/// its errors are a failed context's, whose work never runs on, so they are not reported.
macro_rules! host_array_common {
    ($ty:ident) => {
        impl<T: $crate::types::repr::DeviceRepr, D: ::ndarray::Dimension> $ty<T, D> {
            /// A read-only `ndarray` view of the elements (after GPU writes to them have
            /// finished).
            pub fn view(&self) -> ::ndarray::ArrayView<'_, T, D> {
                self.gpu_done(false);
                self.raw.view()
            }
            /// A writable `ndarray` view of the elements (after GPU uses of them have finished).
            pub fn view_mut(&mut self) -> ::ndarray::ArrayViewMut<'_, T, D> {
                self.gpu_done(true);
                self.raw.view_mut()
            }
            /// The elements in memory order.
            pub fn as_slice_memory_order(&self) -> &[T] {
                self.gpu_done(false);
                self.raw.as_slice_memory_order()
            }
            /// The elements in memory order, writable.
            pub fn as_slice_memory_order_mut(&mut self) -> &mut [T] {
                self.gpu_done(true);
                self.raw.as_mut_slice_memory_order()
            }
            /// The number of elements.
            pub fn len(&self) -> usize {
                self.raw.len
            }
            /// True when there are no elements.
            pub fn is_empty(&self) -> bool {
                self.raw.len == 0
            }
            /// The lengths of the axes.
            pub fn shape(&self) -> &[usize] {
                self.raw.shape.raw_dim().slice()
            }
            /// The host address of the first element.
            pub fn as_ptr(&self) -> *const T {
                self.raw.ptr.as_ptr()
            }
        }

        impl<T: $crate::types::repr::DeviceRepr, D: ::ndarray::Dimension>
            $crate::driver::memory::slices::HostSlice<T> for $ty<T, D>
        {
            fn host_slice(&self) -> $crate::error::Result<&[T]> {
                // Always contiguous, in C or Fortran order: copied in memory order, as
                // `ndarray` arrays are.
                Ok(self.as_slice_memory_order())
            }
        }

        impl<T: $crate::types::repr::DeviceRepr, D: ::ndarray::Dimension>
            $crate::driver::memory::slices::HostSliceMut<T> for $ty<T, D>
        {
            fn host_slice_mut(&mut self) -> $crate::error::Result<&mut [T]> {
                Ok(self.as_slice_memory_order_mut())
            }
        }

        impl<T: $crate::types::repr::DeviceRepr + ::std::fmt::Debug, D: ::ndarray::Dimension>
            ::std::fmt::Debug for $ty<T, D>
        {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                write!(f, "{}({:?})", stringify!($ty), self.view())
            }
        }
    };
}
pub(crate) use host_array_common;

/// A host array whose first element is aligned to a chosen power of two (PyCUDA's
/// `aligned_empty`), e.g. to a page for `register_host_memory` or to 64 bytes for vector loads.
///
/// ```
/// let mut a = gpu_runtime::driver::aligned_zeros::<f32, _>((3, 5), 4096)?;
/// assert_eq!(a.as_ptr() as usize % 4096, 0);
/// a.view_mut()[[1, 2]] = 7.0;
/// assert_eq!(a.view().sum(), 7.0);
/// # Ok::<(), gpu_runtime::Error>(())
/// ```
///
/// Needs the `gpuarray` feature (on by default), which brings `ndarray`.
pub struct AlignedArray<T: crate::types::repr::DeviceRepr, D: Dimension> {
    raw: RawHost<T, D>,
    layout: Option<Layout>,
}

host_array_common!(AlignedArray);

impl<T: crate::types::repr::DeviceRepr, D: Dimension> AlignedArray<T, D> {
    /// Ordinary host memory: the GPU uses it only through synchronous copies.
    fn gpu_done(&self, _write: bool) {}

    /// The alignment of the first element, in bytes.
    pub fn alignment(&self) -> usize {
        self.layout.map_or(std::mem::align_of::<T>(), |l| l.align())
    }
}

impl<T: crate::types::repr::DeviceRepr, D: Dimension> Drop for AlignedArray<T, D> {
    fn drop(&mut self) {
        if let Some(layout) = self.layout {
            // SAFETY: allocated in aligned_zeros with this layout, freed once.
            unsafe { std::alloc::dealloc(self.raw.ptr.as_ptr().cast(), layout) };
        }
    }
}

/// The alignment of [`aligned_zeros`] and [`aligned_empty`] given `None`: 4096 bytes, a page,
/// as PyCUDA's `aligned_empty` defaults to (what `register_host_memory` wants).
pub const DEFAULT_ALIGNMENT: usize = 4096;

/// A zero-filled host array of `shape` whose first element is aligned to `alignment` bytes (a
/// power of two; at least the element's own alignment is always used), or to
/// [`DEFAULT_ALIGNMENT`] for `None`:
///
/// ```
/// use gpu_runtime::driver::aligned_zeros;
/// let page_aligned = aligned_zeros::<f32, _>((480, 640), None)?; // PyCUDA's default, 4096
/// let line_aligned = aligned_zeros::<f32, _>(1000, 64)?;
/// assert_eq!(page_aligned.as_ptr() as usize % 4096, 0);
/// assert_eq!(line_aligned.as_ptr() as usize % 64, 0);
/// # Ok::<(), gpu_runtime::Error>(())
/// ```
///
/// Needs the `gpuarray` feature (on by default), which brings `ndarray`.
pub fn aligned_zeros<T: crate::types::repr::DeviceRepr, Sh: ShapeBuilder>(
    shape: Sh,
    alignment: impl Into<Option<usize>>,
) -> Result<AlignedArray<T, Sh::Dim>>
where
    Sh::Dim: Dimension,
{
    let alignment = alignment.into().unwrap_or(DEFAULT_ALIGNMENT);
    let (shape, len, bytes) = shape_bytes::<T, _>(shape, "aligned_zeros")?;
    if !alignment.is_power_of_two() {
        return Err(MemoryError::AlignmentNotPowerOfTwo { alignment }.into());
    }
    let align = alignment.max(std::mem::align_of::<T>());
    if bytes == 0 {
        return Ok(AlignedArray {
            raw: RawHost::new(std::ptr::null_mut(), shape, len),
            layout: None,
        });
    }
    let layout = Layout::from_size_align(bytes, align).map_err(|source| MemoryError::HostLayout {
        bytes,
        align,
        source,
    })?;
    // SAFETY: the layout has a non-zero size.
    let ptr = unsafe { std::alloc::alloc_zeroed(layout) };
    if ptr.is_null() {
        std::alloc::handle_alloc_error(layout);
    }
    Ok(AlignedArray {
        raw: RawHost::new(ptr.cast(), shape, len),
        layout: Some(layout),
    })
}

/// An aligned host array of `shape` (PyCUDA's `aligned_empty`). Rust forbids reading
/// uninitialised memory, so the elements are zero, as with [`aligned_zeros`]; the zeroing is
/// nearly free for large arrays, whose pages the OS hands out zeroed.
///
/// Needs the `gpuarray` feature (on by default), which brings `ndarray`.
pub fn aligned_empty<T: crate::types::repr::DeviceRepr, Sh: ShapeBuilder>(
    shape: Sh,
    alignment: impl Into<Option<usize>>,
) -> Result<AlignedArray<T, Sh::Dim>>
where
    Sh::Dim: Dimension,
{
    aligned_zeros(shape, alignment)
}

/// An aligned zeroed array with the shape and memory order of `like`.
///
/// Needs the `gpuarray` feature (on by default), which brings `ndarray`.
pub fn aligned_zeros_like<T: crate::types::repr::DeviceRepr, S: Data, D: Dimension>(
    like: &ArrayBase<S, D>,
    alignment: impl Into<Option<usize>>,
) -> Result<AlignedArray<T, D>> {
    aligned_zeros(shape_like(like), alignment)
}

/// An aligned array with the shape and memory order of `like` (see [`aligned_empty`]).
///
/// Needs the `gpuarray` feature (on by default), which brings `ndarray`.
pub fn aligned_empty_like<T: crate::types::repr::DeviceRepr, S: Data, D: Dimension>(
    like: &ArrayBase<S, D>,
    alignment: impl Into<Option<usize>>,
) -> Result<AlignedArray<T, D>> {
    aligned_zeros(shape_like(like), alignment)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;
    use crate::{HostSlice, HostSliceMut};
    use ndarray::{Array2, ShapeBuilder};

    #[test]
    fn aligned_arrays_are_aligned_zeroed_and_usable_as_host_data() {
        for align in [1, 16, 64, 4096] {
            let mut a = aligned_empty::<f64, _>((7, 9), align).unwrap();
            assert_eq!(a.as_ptr() as usize % align.max(8), 0);
            assert_eq!(a.shape(), &[7, 9]);
            assert!(a.view().iter().all(|&x| x == 0.0));
            a.view_mut()[[6, 8]] = 2.5;
            assert_eq!(a.host_slice().unwrap()[62], 2.5);
            a.host_slice_mut().unwrap()[0] = 1.0;
            assert_eq!(a.view()[[0, 0]], 1.0);
            // No alignment given: PyCUDA's default, a page.
            let d = aligned_empty::<u8, _>(3 + align, None).unwrap();
            assert_eq!(d.as_ptr() as usize % DEFAULT_ALIGNMENT, 0);
        }
        let e = aligned_zeros::<f32, _>(4, 3).unwrap_err();
        assert!(
            matches!(
                e,
                Error::Memory(MemoryError::AlignmentNotPowerOfTwo { alignment: 3 })
            ),
            "{e}"
        );
        let e = aligned_zeros::<f32, _>((usize::MAX, 2), 8).unwrap_err();
        assert!(
            matches!(
                e,
                Error::Memory(MemoryError::ShapeTooLarge { element_bytes: 4, .. })
            ),
            "{e}"
        );
        let empty = aligned_zeros::<f32, _>((0, 5), 64).unwrap();
        assert!(empty.is_empty() && empty.host_slice().unwrap().is_empty());
    }

    #[test]
    fn like_keeps_shape_and_fortran_order() {
        let c = Array2::<f32>::zeros((3, 4));
        let f = Array2::<f32>::zeros((3, 4).f());
        let a = aligned_zeros_like::<f32, _, _>(&c, 64).unwrap();
        assert!(a.view().is_standard_layout());
        let mut b = aligned_empty_like::<f32, _, _>(&f, 64).unwrap();
        assert_eq!(b.shape(), &[3, 4]);
        assert!(!b.view().is_standard_layout());
        b.view_mut()[[1, 0]] = 3.0;
        assert_eq!(
            b.as_slice_memory_order()[1],
            3.0,
            "Fortran order: (1, 0) is the second element"
        );
        assert_eq!(
            b.host_slice().unwrap()[1],
            3.0,
            "copied in memory order, as PyCUDA copies an F-ordered numpy array"
        );
    }
}
