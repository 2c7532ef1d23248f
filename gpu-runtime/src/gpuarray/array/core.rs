//! [`DeviceArrayBase`]: an n-dimensional array in device memory, with the shape and strides of
//! `ndarray`, over any storage this crate tracks (an owned [`DeviceBuffer`], a pool's
//! [`PooledBuffer`], or a borrowed view of either). Views, slices, transposes and reshapes
//! change the layout only; the memory, and its record of the streams that use it, stay the
//! storage's, so the stream-ordered lifetime rules of the crate apply unchanged.

use std::fmt;

use ndarray::{Dimension, IntoDimension, IxDyn, SliceArg};

use crate::driver::context::core::Context;
use crate::driver::memory::buffer::DeviceBuffer;
use crate::driver::memory::view::{DeviceRead, DeviceView, DeviceViewMut, DeviceWrite};
use crate::error::{ArrayShapeError, Result};
use crate::gpuarray::array::debug_fmt;
use crate::gpuarray::array::layout;
use crate::gpuarray::elements::array_element::ArrayElement;
use crate::tools::device_pool::PooledBuffer;

/// Memory a [`DeviceArrayBase`] may stand on: device memory this crate tracks, holding elements
/// of one [`ArrayElement`] type (a number, or a CUDA vector type).
pub trait Storage: DeviceRead<Self::Elem> {
    /// The element type.
    type Elem: ArrayElement;
}

/// Storage a [`DeviceArrayBase`] may be written through.
pub trait StorageMut: Storage + DeviceWrite<Self::Elem> {}

impl<T: ArrayElement> Storage for DeviceBuffer<T> {
    type Elem = T;
}
impl<T: ArrayElement> StorageMut for DeviceBuffer<T> {}
impl<T: ArrayElement> Storage for PooledBuffer<T> {
    type Elem = T;
}
impl<T: ArrayElement> StorageMut for PooledBuffer<T> {}
impl<T: ArrayElement> Storage for DeviceView<'_, T> {
    type Elem = T;
}
impl<T: ArrayElement> Storage for DeviceViewMut<'_, T> {
    type Elem = T;
}
impl<T: ArrayElement> StorageMut for DeviceViewMut<'_, T> {}

/// An n-dimensional array in device memory: `ndarray`'s `ArrayBase` for the GPU.
///
/// `S` is the memory (see [`Storage`]) and `D` the dimension (`Ix1`, `Ix2`, ..., or `IxDyn`).
/// Use the aliases: [`DeviceArray`] (owns its memory), [`PooledArray`] (memory from a
/// [`DeviceMemoryPool`](crate::tools::DeviceMemoryPool)), [`DeviceArrayView`] and
/// [`DeviceArrayViewMut`] (borrowed).
///
/// The layout is a shape, strides in elements (negative or zero allowed, as `ndarray`'s), and
/// the offset of the element at index zero in the storage. Every index of the shape lies
/// inside the storage: the constructors check it, and views only narrow it, which is what the
/// generated kernels rely on.
pub struct DeviceArrayBase<S: Storage, D: Dimension> {
    pub(crate) data: S,
    pub(crate) offset: usize,
    pub(crate) dim: D,
    /// `ndarray`'s convention: `isize` strides stored as `usize`.
    pub(crate) strides: D,
}

/// An array that owns its device memory.
pub type DeviceArray<T, D = IxDyn> = DeviceArrayBase<DeviceBuffer<T>, D>;
/// An array whose memory came from a [`DeviceMemoryPool`](crate::tools::DeviceMemoryPool) and
/// goes back to it when dropped (stream-ordered, like every pooled block).
pub type PooledArray<T, D = IxDyn> = DeviceArrayBase<PooledBuffer<T>, D>;
/// A read-only view of (part of) an array.
pub type DeviceArrayView<'a, T, D = IxDyn> = DeviceArrayBase<DeviceView<'a, T>, D>;
/// A writable view of (part of) an array.
pub type DeviceArrayViewMut<'a, T, D = IxDyn> = DeviceArrayBase<DeviceViewMut<'a, T>, D>;

/// `{:?}` shows the values as `ndarray`'s `Debug` does, long axes elided around `...` with the
/// same limits (arrays under 500 elements whole; then 10 of a row or column, 6 of the axes
/// before), then `ndarray`'s layout line and the element type:
///
/// ```text
/// [[0.5, 1.0, 1.5],
///  [2.0, 2.5, 3.0]], shape=[2, 3], strides=[3, 1], layout=Cc (0x5), const ndim=2, dtype=F32
/// ```
///
/// so `format!("{:?}", a)` is `format!("{:?}, dtype={:?}", a.to_ndarray()?,
/// T::ELEMENT_TYPE)` for a C-order array (for a view, `ndarray`'s text of the same view). The
/// formatter's flags reach the elements (`{:.3?}`). Only the elements shown are read, whatever
/// the array's size (a few runs of memory around them, at most 4 times as many elements;
/// nothing past 32768 shown elements, which only arrays of six axes or more reach: their values
/// are then left out), by the copies [`to_vec`](Self::to_vec) makes, ordered after every use of
/// the memory on any stream. `{:#?}` keeps the limits (`ndarray`'s prints every element) and adds
/// the offset and the storage's length. A failed read (a context in error, say) does not
/// panic: the values read `<values unavailable: {error}>`, and the layout line follows.
impl<S: Storage, D: Dimension> fmt::Debug for DeviceArrayBase<S, D> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let storage = self.data.device_view();
        let described = debug_fmt::Described {
            shape: self.shape(),
            strides: self.strides(),
            offset: self.offset,
            fixed_ndim: D::NDIM,
            dtype: S::Elem::ELEMENT_TYPE,
            storage_len: storage.len(),
        };
        // `DeviceView::to_vec`: the ordered copy of `to_vec`, after the memory's last write.
        debug_fmt::write_debug(f, &described, |range| storage.slice(range)?.to_vec())
    }
}

/// A dimension of type `D` holding `values` (shape, or strides cast as `ndarray` stores them),
/// or an error when `D` has a fixed number of axes and `values` another.
pub(crate) fn dim_of<D: Dimension>(values: impl ExactSizeIterator<Item = usize>) -> Result<D> {
    let n = values.len();
    if D::NDIM.is_some_and(|k| k != n) {
        return Err(ArrayShapeError::Dimension {
            axes: n,
            fixed: D::NDIM.unwrap_or(0),
        }
        .into());
    }
    let mut d = D::zeros(n);
    for (slot, v) in d.slice_mut().iter_mut().zip(values) {
        *slot = v;
    }
    Ok(d)
}

impl<S: Storage, D: Dimension> DeviceArrayBase<S, D> {
    /// An array over `data` with the given layout, after checking that every index lies inside
    /// `data`.
    pub(crate) fn from_parts(data: S, offset: usize, shape: &[usize], strides: &[isize]) -> Result<Self> {
        let len = data.device_view().len();
        layout::checked_size("DeviceArray", shape)?;
        if let Some((lo, hi)) = layout::span(shape, strides) {
            let inside = (offset as isize).checked_add(lo).is_some_and(|l| l >= 0)
                && (offset as isize)
                    .checked_add(hi)
                    .is_some_and(|h| (h as usize) < len);
            if !inside {
                return Err(ArrayShapeError::OutOfBounds {
                    shape: shape.to_vec(),
                    strides: strides.to_vec(),
                    offset,
                    len,
                }
                .into());
            }
        }
        Ok(DeviceArrayBase {
            data,
            offset,
            dim: dim_of(shape.iter().copied())?,
            strides: dim_of(strides.iter().map(|&s| s as usize))?,
        })
    }

    /// The length of each axis.
    pub fn shape(&self) -> &[usize] {
        self.dim.slice()
    }

    /// The shape as a dimension value (`ndarray`'s `raw_dim`).
    pub fn raw_dim(&self) -> D {
        self.dim.clone()
    }

    /// The strides of the axes, in elements.
    pub fn strides(&self) -> &[isize] {
        let s = self.strides.slice();
        // SAFETY: usize and isize have the same size and alignment, and every bit pattern is
        // valid for both; `ndarray` reads its strides the same way.
        unsafe { std::slice::from_raw_parts(s.as_ptr().cast::<isize>(), s.len()) }
    }

    /// The number of axes.
    pub fn ndim(&self) -> usize {
        self.dim.ndim()
    }

    /// The number of elements.
    pub fn len(&self) -> usize {
        self.dim.size()
    }

    /// True when there are no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Where the element at index zero lies in the storage, in elements.
    pub fn offset(&self) -> usize {
        self.offset
    }

    /// The memory the array stands on.
    pub fn storage(&self) -> &S {
        &self.data
    }

    /// The context the memory belongs to.
    pub fn context(&self) -> &Context {
        self.data.device_view().context()
    }

    /// True when the elements lie one after another in C (row-major) order.
    pub fn is_standard_layout(&self) -> bool {
        layout::is_c_contiguous(self.shape(), self.strides())
    }

    /// True when the elements lie one after another in Fortran (column-major) order.
    pub fn is_fortran_layout(&self) -> bool {
        layout::is_f_contiguous(self.shape(), self.strides())
    }

    /// A read-only view of the whole array.
    pub fn view(&self) -> DeviceArrayView<'_, S::Elem, D> {
        DeviceArrayBase {
            data: self.data.device_view(),
            offset: self.offset,
            dim: self.dim.clone(),
            strides: self.strides.clone(),
        }
    }

    /// A writable view of the whole array.
    pub fn view_mut(&mut self) -> DeviceArrayViewMut<'_, S::Elem, D>
    where
        S: StorageMut,
    {
        DeviceArrayBase {
            data: self.data.device_view_mut(),
            offset: self.offset,
            dim: self.dim.clone(),
            strides: self.strides.clone(),
        }
    }

    /// The array with the layout of a slice (`s![..]`), keeping its storage.
    pub fn slice_move<I: SliceArg<D>>(self, info: I) -> Result<DeviceArrayBase<S, I::OutDim>> {
        let sliced = layout::slice(self.shape(), self.strides(), info.as_ref())?;
        // In bounds by construction: the slice's elements are elements of `self`.
        let offset = (self.offset as isize + sliced.offset) as usize;
        DeviceArrayBase::from_parts(self.data, offset, &sliced.shape, &sliced.strides)
    }

    /// A read-only view of a slice: `a.slice(s![1.., ..;2])`, with `ndarray`'s rules (steps,
    /// negative steps and indices, `NewAxis`); out of bounds is an error, not a panic.
    pub fn slice<I: SliceArg<D>>(&self, info: I) -> Result<DeviceArrayView<'_, S::Elem, I::OutDim>> {
        self.view().slice_move(info)
    }

    /// A writable view of a slice.
    pub fn slice_mut<I: SliceArg<D>>(&mut self, info: I) -> Result<DeviceArrayViewMut<'_, S::Elem, I::OutDim>>
    where
        S: StorageMut,
    {
        self.view_mut().slice_move(info)
    }

    /// The array with its axes in reverse order (a transpose, no data moved).
    pub fn reversed_axes(mut self) -> Self {
        self.dim.slice_mut().reverse();
        self.strides.slice_mut().reverse();
        self
    }

    /// A transposed view (`ndarray`'s `t()`).
    pub fn t(&self) -> DeviceArrayView<'_, S::Elem, D> {
        self.view().reversed_axes()
    }

    /// The array with axis `i` of the result being axis `axes[i]` of this one.
    pub fn permuted_axes(self, axes: &[usize]) -> Result<Self> {
        let (shape, strides) = layout::permute(self.shape(), self.strides(), axes)?;
        DeviceArrayBase::from_parts(self.data, self.offset, &shape, &strides)
    }

    /// The same elements, in C order, under a new shape; the array must be C-contiguous (copy
    /// it with [`to_contiguous`](Self::to_contiguous) first otherwise). Take a view first
    /// (`a.view().reshape(..)`) to keep `a`.
    pub fn reshape<E: IntoDimension>(self, shape: E) -> Result<DeviceArrayBase<S, E::Dim>> {
        let shape = shape.into_dimension();
        let strides = layout::reshape(self.shape(), self.strides(), shape.slice())?;
        DeviceArrayBase::from_parts(self.data, self.offset, shape.slice(), &strides)
    }

    /// The array with a dynamic number of axes.
    pub fn into_dyn(self) -> DeviceArrayBase<S, IxDyn> {
        DeviceArrayBase {
            data: self.data,
            offset: self.offset,
            dim: self.dim.into_dyn(),
            strides: self.strides.into_dyn(),
        }
    }

    /// The array with dimension type `D2`, when it has that many axes.
    pub fn into_dimensionality<D2: Dimension>(self) -> Result<DeviceArrayBase<S, D2>> {
        Ok(DeviceArrayBase {
            dim: dim_of(self.dim.slice().iter().copied())?,
            strides: dim_of(self.strides.slice().iter().copied())?,
            data: self.data,
            offset: self.offset,
        })
    }

    /// The range of storage elements the array touches (empty for an empty array).
    pub(crate) fn storage_range(&self) -> std::ops::Range<usize> {
        match layout::span(self.shape(), self.strides()) {
            Some((lo, hi)) => {
                let start = (self.offset as isize + lo) as usize;
                start..(self.offset as isize + hi) as usize + 1
            }
            None => self.offset..self.offset,
        }
    }
}

/// An array passed to a kernel that takes a pointer is the memory it spans, from its lowest
/// address: for a C-contiguous array ([`DeviceArrayBase::is_standard_layout`]), its elements in
/// index order, as PyCUDA passes a `GPUArray`'s `gpudata`. For other layouts the kernel sees
/// the memory order, and must index it with the array's strides itself.
impl<S: Storage, D: Dimension> DeviceRead<S::Elem> for DeviceArrayBase<S, D> {
    fn device_view(&self) -> DeviceView<'_, S::Elem> {
        let all = self.data.device_view();
        // The range lies inside the storage (the invariant of the layout); the whole storage
        // is a safe fallback that cannot be reached.
        all.slice(self.storage_range()).unwrap_or(all)
    }

    /// True when the array's elements fill the memory it spans, in some order (C or Fortran
    /// order, or reversed): no steps, and no axis broadcast with stride 0.
    fn is_contiguous(&self) -> bool {
        self.storage_range().len() == self.len()
    }
}

/// Writable, as [`DeviceRead`] says: the memory the array spans. For a view with steps this
/// includes the elements between, which the borrow of the view keeps from anyone else.
impl<S: StorageMut, D: Dimension> DeviceWrite<S::Elem> for DeviceArrayBase<S, D> {
    fn device_view_mut(&mut self) -> DeviceViewMut<'_, S::Elem> {
        let range = self.storage_range();
        let all = self.data.device_view_mut();
        let len = all.len();
        // Inside the storage by the layout's invariant; clamped all the same.
        let (start, end) = if range.start <= range.end && range.end <= len {
            (range.start, range.end)
        } else {
            (0, len)
        };
        let ptr = all.device_ptr() + (start * std::mem::size_of::<S::Elem>()) as u64;
        let (ctx, uses) = (all.context(), all.uses());
        match uses {
            Some(uses) => DeviceViewMut::tracked(ptr, end - start, ctx, uses),
            // SAFETY: a sub-range of a writable view of untracked memory, for the same
            // lifetime: its owner's promises (`from_raw_parts`) cover every part of it.
            None => unsafe { DeviceViewMut::from_raw_parts(ctx, ptr, end - start) },
        }
    }
}

// cudarc's libraries take an array as the memory it spans, like a kernel does
// (`driver::cudarc_interop`).
crate::driver::cudarc_interop::ptr::cudarc_memory!([S: Storage, D: Dimension] DeviceArrayBase<S, D>, S::Elem);
crate::driver::cudarc_interop::ptr::cudarc_memory!(@mut [S: StorageMut, D: Dimension] DeviceArrayBase<S, D>, S::Elem);
