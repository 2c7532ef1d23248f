//! Arrays in and out: from and to `ndarray` (C order, Fortran order, any strides), into an
//! existing array (`set`), and the constructors that allocate (`empty`, `zeros`, `*_like`,
//! from a pool).
//!
//! The host side of each transfer is a pure function of the layout (`host_parts`,
//! `gather`), unit-tested without a GPU.

use std::borrow::Cow;

use ndarray::{Array, ArrayBase, Data, Dimension, Shape, ShapeBuilder, StrideShape};

use crate::driver::context::core::Context;
use crate::driver::memory::buffer::DeviceBuffer;
use crate::driver::memory::extent::dense_memory;
use crate::driver::memory::view::copy_htod;
use crate::error::{ArrayShapeError, Error, Result};
use crate::gpuarray::array::core::{DeviceArray, DeviceArrayBase, PooledArray, Storage, StorageMut};
use crate::gpuarray::array::layout;
use crate::gpuarray::elements::array_element::ArrayElement;
use crate::tools::device_pool::DeviceMemoryPool;

/// The elements of a host array to upload, in memory order, with the offset of its first
/// element among them and its strides: the array's own memory, from its lowest address, when
/// it is contiguous in any order (C, Fortran, transposed, reversed: a reversed array's first
/// element lies `first` elements above the lowest, and the device array keeps the negative
/// strides), else a copy in C order.
pub(crate) fn host_parts<'a, T: Clone, S: Data<Elem = T>, D: Dimension>(
    host: &'a ArrayBase<S, D>,
) -> (Cow<'a, [T]>, usize, Vec<isize>) {
    if let Some((slice, first)) = dense_memory(host) {
        return (Cow::Borrowed(slice), first, host.strides().to_vec());
    }
    let data: Vec<T> = host.iter().cloned().collect();
    (Cow::Owned(data), 0, layout::c_strides(host.shape()))
}

/// The elements of a layout, in C order, read from `span` (the memory it covers, with the
/// element at index zero at `first`).
pub(crate) fn gather<T: Copy>(span: &[T], first: usize, shape: &[usize], strides: &[isize]) -> Vec<T> {
    let n: usize = shape.iter().product();
    (0..n)
        .map(|i| span[(first as isize + layout::offset_of(i, shape, strides)) as usize])
        .collect()
}

/// A shape (C order, `.f()` for Fortran order) as a dimension and its strides.
fn shape_layout<D: Dimension>(shape: impl Into<StrideShape<D>>) -> Result<(D, Vec<isize>)> {
    let shape: StrideShape<D> = shape.into();
    let dim = shape.raw_dim().clone();
    layout::checked_size("DeviceArray shape", dim.slice())?;
    // Zero-sized elements: `ndarray` works out the strides the shape asks for, with no memory.
    let probe =
        Array::from_shape_vec(shape, vec![(); dim.size()]).map_err(|source| ArrayShapeError::Ndarray {
            operation: "DeviceArray shape",
            source,
        })?;
    Ok((dim, probe.strides().to_vec()))
}

/// The shape of `other` in its order (numpy's `empty_like`): Fortran order when `other` is
/// Fortran- and not C-contiguous, else C order.
fn like_shape<S: Storage, D: Dimension>(other: &DeviceArrayBase<S, D>) -> Shape<D> {
    let dim = other.raw_dim();
    if other.is_fortran_layout() && !other.is_standard_layout() {
        dim.f()
    } else {
        dim.into_shape_with_order()
    }
}

impl<T: ArrayElement, D: Dimension> DeviceArray<T, D> {
    /// A copy of a host array of any layout (PyCUDA's `to_gpu`): the same shape and, when the
    /// array is contiguous in some order (C, Fortran, transposed), the same strides; else a C
    /// order copy.
    pub fn from_ndarray<S: Data<Elem = T>>(ctx: &Context, host: &ArrayBase<S, D>) -> Result<Self> {
        let (data, first, strides) = host_parts(host);
        let buf = DeviceBuffer::from_host_reusing(ctx, &data[..])?;
        DeviceArrayBase::from_parts(buf, first, host.shape(), &strides)
    }

    /// An array of `shape` (`(2, 3)`, or `(2, 3).f()` for Fortran order) whose elements are
    /// whatever the memory held (PyCUDA's `empty`).
    pub fn empty<Sh: ShapeBuilder<Dim = D>>(ctx: &Context, shape: Sh) -> Result<Self> {
        let (dim, strides) = shape_layout(shape.into_shape_with_order())?;
        let buf = DeviceBuffer::uninit_reusing(ctx, dim.size())?;
        DeviceArrayBase::from_parts(buf, 0, dim.slice(), &strides)
    }

    /// An array of `shape` filled with zeros.
    pub fn zeros<Sh: ShapeBuilder<Dim = D>>(ctx: &Context, shape: Sh) -> Result<Self> {
        let (dim, strides) = shape_layout(shape.into_shape_with_order())?;
        let buf = DeviceBuffer::zeros_reusing(ctx, dim.size())?;
        DeviceArrayBase::from_parts(buf, 0, dim.slice(), &strides)
    }

    /// An uninitialised array of the shape of `other`, in Fortran order when `other` is
    /// Fortran- and not C-contiguous, else in C order (numpy's `empty_like`). `other` may hold
    /// another element type: `DeviceArray::<f64, _>::empty_like(&a)` is numpy's
    /// `empty_like(a, dtype=float64)`; the same holds for the other `_like` constructors.
    pub fn empty_like<S: Storage>(other: &DeviceArrayBase<S, D>) -> Result<Self> {
        Self::empty(other.context(), like_shape(other))
    }

    /// Zeros in the shape (and order, as [`empty_like`](Self::empty_like)) of `other`.
    pub fn zeros_like<S: Storage>(other: &DeviceArrayBase<S, D>) -> Result<Self> {
        Self::zeros(other.context(), like_shape(other))
    }
}

impl<T: ArrayElement, D: Dimension> PooledArray<T, D> {
    /// An uninitialised array of `shape` in memory from `pool` (returned to it, stream-ordered,
    /// when the array is dropped).
    pub fn empty_in<Sh: ShapeBuilder<Dim = D>>(pool: &DeviceMemoryPool, shape: Sh) -> Result<Self> {
        let (dim, strides) = shape_layout(shape.into_shape_with_order())?;
        let buf = pool.alloc::<T>(dim.size())?;
        DeviceArrayBase::from_parts(buf, 0, dim.slice(), &strides)
    }

    /// A copy of a host array in memory from `pool` (as [`DeviceArray::from_ndarray`]).
    pub fn from_ndarray_in<S: Data<Elem = T>>(
        pool: &DeviceMemoryPool,
        host: &ArrayBase<S, D>,
    ) -> Result<Self> {
        let (data, first, strides) = host_parts(host);
        let buf = pool.to_device(&data[..])?;
        DeviceArrayBase::from_parts(buf, first, host.shape(), &strides)
    }
}

impl<S: StorageMut, D: Dimension> DeviceArrayBase<S, D> {
    /// Copies a host array of the same shape (any layout) into this array, in place (PyCUDA's
    /// and CuPy's `a.set(host)`; NumPy's `a[...] = host`). When both lay their elements out
    /// alike in one run of memory (both C-contiguous, say), the copy goes straight into the
    /// array's memory; otherwise through a device copy of `host` and a kernel that writes this
    /// array's layout. Ordered on the legacy default stream after every use of the array.
    pub fn set<S2: Data<Elem = S::Elem>, D2: Dimension>(&mut self, host: &ArrayBase<S2, D2>) -> Result<()> {
        if host.shape() != self.shape() {
            return Err(ArrayShapeError::HostShape {
                operation: "DeviceArray::set",
                host: host.shape().to_vec(),
                device: self.shape().to_vec(),
            }
            .into());
        }
        if self.is_empty() {
            return Ok(());
        }
        let range = self.storage_range();
        let strides_match = host.strides() == self.strides();
        // The same dense layout on both sides (a reversed one too): the host's memory from its
        // lowest address lands on the device's from its lowest, element for element.
        if let Some((memory, _)) = dense_memory(host).filter(|_| strides_match && range.len() == self.len()) {
            let mut dst = self.data.device_view_mut().into_slice(range)?;
            return copy_htod(&mut dst, memory);
        }
        let staged = DeviceArray::from_ndarray(self.context(), host)?;
        self.copy_from(&staged)
    }
}

impl<S: Storage, D: Dimension> DeviceArrayBase<S, D> {
    /// A copy on the host, with the shape (PyCUDA's `get`): in Fortran order when the array is
    /// Fortran-contiguous, else in C order. A view with large gaps between its elements is
    /// first made contiguous on the device, so that only its elements cross the bus.
    pub fn to_ndarray(&self) -> Result<Array<S::Elem, D>> {
        let shape_err = |source: ndarray::ShapeError| {
            Error::from(ArrayShapeError::Ndarray {
                operation: "DeviceArray::to_ndarray",
                source,
            })
        };
        let range = self.storage_range();
        let n = self.len();
        if n == 0 {
            return Array::from_shape_vec(self.raw_dim(), Vec::new()).map_err(shape_err);
        }
        if range.len() > 4 * n {
            return self.to_contiguous()?.to_ndarray();
        }
        let span = self.data.device_view().slice(range.clone())?.to_vec()?;
        if self.is_standard_layout() {
            return Array::from_shape_vec(self.raw_dim(), span).map_err(shape_err);
        }
        if self.is_fortran_layout() {
            return Array::from_shape_vec(self.raw_dim().f(), span).map_err(shape_err);
        }
        let first = self.offset - range.start;
        let data = gather(&span, first, self.shape(), self.strides());
        Array::from_shape_vec(self.raw_dim(), data).map_err(shape_err)
    }

    /// The elements in C order as a `Vec`.
    pub fn to_vec(&self) -> Result<Vec<S::Elem>> {
        Ok(self.to_ndarray()?.iter().copied().collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::{s, Array3, Axis, ShapeBuilder};

    /// Upload's host side, then download's: the round trip of every layout.
    fn round_trip<S: Data<Elem = i32>, D: Dimension>(a: &ArrayBase<S, D>) {
        let (data, first, strides) = host_parts(a);
        let got = gather(&data, first, a.shape(), &strides);
        assert_eq!(
            got,
            a.iter().copied().collect::<Vec<_>>(),
            "shape {:?} strides {:?}",
            a.shape(),
            a.strides()
        );
    }

    #[test]
    fn host_layouts_round_trip() {
        let c = Array3::from_shape_fn((3, 4, 5), |(i, j, k)| (i * 100 + j * 10 + k) as i32);
        let f = Array3::from_shape_fn((3, 4, 5).f(), |(i, j, k)| (i * 100 + j * 10 + k) as i32);
        round_trip(&c);
        round_trip(&f);
        round_trip(&c.t());
        round_trip(&c.slice(s![..;-1, .., ..]));
        round_trip(&c.slice(s![1.., ..;2, ..;-3]));
        round_trip(&f.slice(s![.., 1, ..]));
        round_trip(&c.slice(s![.., 0..0, ..]));
        let mut p = c.clone();
        p.invert_axis(Axis(2));
        round_trip(&p);
        // Memory order is used as it is: no copy for a reversed, contiguous array.
        assert!(matches!(host_parts(&p).0, Cow::Borrowed(_)));
        assert!(matches!(host_parts(&c.slice(s![.., ..;2, ..])).0, Cow::Owned(_)));
    }

    #[test]
    fn shapes_in_c_and_f_order() {
        let (d, s) = shape_layout::<ndarray::Ix2>((2, 3).into_shape_with_order()).unwrap();
        assert_eq!((d.slice(), s), (&[2usize, 3][..], vec![3, 1]));
        let (_, s) = shape_layout::<ndarray::Ix2>((2, 3).f()).unwrap();
        assert_eq!(s, vec![1, 2]);
    }
}
