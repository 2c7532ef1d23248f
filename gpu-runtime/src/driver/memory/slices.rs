//! Host data that can be copied to and from the device: slices, `Vec`s, arrays and `ndarray`
//! arrays contiguous in C or Fortran order.
//!
//! An `ndarray` array is copied as its memory holds it, like PyCUDA copies a numpy array's
//! buffer for `In`, `Out` and `InOut`: a C-ordered (row-major) array reaches the kernel row
//! after row, a Fortran-ordered (column-major) one column after column, so the kernel indexes
//! an `m x n` F-ordered matrix as `a[i + j * m]`. [`memory_order`] says which of the two an
//! array is.

#[cfg(feature = "gpuarray")]
use std::borrow::Cow;

#[cfg(feature = "gpuarray")]
use ndarray::{ArrayBase, ArrayRef, Data, DataMut, Dimension, Order};

#[cfg(feature = "gpuarray")]
use crate::driver::memory::extent::{host_extent, ordered_slice, ordered_slice_mut};
use crate::error::Result;

#[cfg(feature = "gpuarray")]
/// The memory order of an `ndarray` array: `Some(Order::C)` when its elements are contiguous
/// in C (row-major) order, `Some(Order::F)` when contiguous in Fortran (column-major) order
/// and not in C order, `None` when neither (a strided slice, axes permuted some other way, a
/// broadcast axis, or a reversed one: `ndarray` counts a reversed array contiguous, but its
/// memory holds the elements backwards, and its first element is not its lowest address).
///
/// An array that is both (one dimension, or every axis but one of length 1) is C. The host
/// data of copies ([`HostSlice`], [`HostSliceMut`]) and page-locked arrays
/// ([`Context::register_host_memory`](crate::Context::register_host_memory)) must have one of
/// the two orders.
///
/// ```
/// use gpu_runtime::driver::memory_order;
/// use gpu_runtime::ndarray::{s, Array2, Order, ShapeBuilder};
/// let c = Array2::<f32>::zeros((3, 4));
/// let f = Array2::<f32>::zeros((3, 4).f());
/// assert_eq!(memory_order(&c), Some(Order::C));
/// assert_eq!(memory_order(&f), Some(Order::F));
/// assert_eq!(memory_order(&c.t()), Some(Order::F));
/// assert_eq!(memory_order(&c.slice(s![.., 1..3])), None);
/// assert_eq!(memory_order(&c.slice(s![..;-1, ..])), None); // reversed
/// ```
///
/// Needs the `gpuarray` feature (on by default), which brings `ndarray`.
pub fn memory_order<A, D: Dimension>(array: &ArrayRef<A, D>) -> Option<Order> {
    host_extent(array).order()
}

#[cfg(feature = "gpuarray")]
/// The elements of `array` in `order` (the last axis varying fastest for C, the first for
/// F): borrowed when the array's memory holds them in that order (from its lowest address),
/// else copied into that order, as for a reversed or strided view.
pub(crate) fn elements_in_order<A: Clone, D: Dimension>(
    array: &ArrayRef<A, D>,
    order: Order,
) -> Cow<'_, [A]> {
    if host_extent(array).is_in(order) {
        if let Ok(s) = ordered_slice(array, "elements_in_order") {
            return Cow::Borrowed(s);
        }
    }
    Cow::Owned(if order.is_column_major() {
        array.t().iter().cloned().collect()
    } else {
        array.iter().cloned().collect()
    })
}

/// Host memory that can be read as one contiguous `[T]`: slices, `Vec`s and arrays as they
/// are, `ndarray` arrays in their memory order, C or Fortran (see [`memory_order`]): like
/// PyCUDA copying a numpy array's buffer, a Fortran-ordered `m x n` matrix reaches the kernel
/// column after column, element `(i, j)` at `i + j * m`.
// The message names the fixes for device memory passed where host data is expected (issue 28):
// the usual cause is a `DeviceBuffer` given to the convenience call for an `#[In]` parameter.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not host data: this argument is copied from host memory holding `{T}`s",
    label = "expected host data (a slice, `Vec`, array or `ndarray` array of `{T}`)",
    note = "device memory goes to a kernel as it is through `prepared_call(..)` or `prepared_async_call(..)` of the handle `name::prepare(&ctx)?` returns; the convenience call `name(&ctx, grid, block, ..)` and `call(..)` copy the arguments marked `#[In]`, `#[Out]` or `#[InOut]` from the host",
    note = "or remove the `#[In]`/`#[Out]`/`#[InOut]` mark from the kernel's parameter: an unmarked slice parameter takes device memory in every call"
)]
pub trait HostSlice<T> {
    /// The elements, or [`CopyError::HostArrayLayout`](crate::CopyError::HostArrayLayout)
    /// for an `ndarray` array contiguous in neither C nor Fortran order with positive strides
    /// (a reversed axis, a broadcast, stepped or permuted view).
    fn host_slice(&self) -> Result<&[T]>;
}

/// Host memory that can be written as one contiguous `[T]` (an `ndarray` array in its memory
/// order, C or Fortran, as for [`HostSlice`]).
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not writable host data: this argument is copied back into host memory holding `{T}`s",
    label = "expected `&mut` host data (a slice, `Vec`, array or `ndarray` array of `{T}`)",
    note = "device memory goes to a kernel as it is through `prepared_call(..)` or `prepared_async_call(..)` of the handle `name::prepare(&ctx)?` returns; the convenience call `name(&ctx, grid, block, ..)` and `call(..)` copy the arguments marked `#[Out]` or `#[InOut]` back to the host",
    note = "or remove the `#[Out]`/`#[InOut]` mark from the kernel's parameter: an unmarked slice parameter takes device memory in every call"
)]
pub trait HostSliceMut<T>: HostSlice<T> {
    /// The elements, writable.
    fn host_slice_mut(&mut self) -> Result<&mut [T]>;
}

impl<T> HostSlice<T> for [T] {
    fn host_slice(&self) -> Result<&[T]> {
        Ok(self)
    }
}
impl<T> HostSliceMut<T> for [T] {
    fn host_slice_mut(&mut self) -> Result<&mut [T]> {
        Ok(self)
    }
}
impl<T> HostSlice<T> for Vec<T> {
    fn host_slice(&self) -> Result<&[T]> {
        Ok(self)
    }
}
impl<T> HostSliceMut<T> for Vec<T> {
    fn host_slice_mut(&mut self) -> Result<&mut [T]> {
        Ok(self)
    }
}
impl<T, const N: usize> HostSlice<T> for [T; N] {
    fn host_slice(&self) -> Result<&[T]> {
        Ok(self)
    }
}
impl<T, const N: usize> HostSliceMut<T> for [T; N] {
    fn host_slice_mut(&mut self) -> Result<&mut [T]> {
        Ok(self)
    }
}
#[cfg(feature = "gpuarray")]
impl<T, S: Data<Elem = T>, D: Dimension> HostSlice<T> for ArrayBase<S, D> {
    /// The elements in memory order, from the lowest address, when the array is C- or
    /// Fortran-contiguous; else [`CopyError::HostArrayLayout`](crate::CopyError::HostArrayLayout)
    /// with its shape and strides (a reversed axis included: its memory holds the elements
    /// backwards).
    fn host_slice(&self) -> Result<&[T]> {
        ordered_slice(self, "a copy from host memory")
    }
}
#[cfg(feature = "gpuarray")]
impl<T, S: DataMut<Elem = T>, D: Dimension> HostSliceMut<T> for ArrayBase<S, D> {
    /// As [`host_slice`](HostSlice::host_slice), writable.
    fn host_slice_mut(&mut self) -> Result<&mut [T]> {
        ordered_slice_mut(self, "a copy into host memory")
    }
}

#[cfg(feature = "gpuarray")]
#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::{s, Array2, Array3, ShapeBuilder};

    #[test]
    fn every_container_gives_its_elements_in_order() {
        let v = vec![1, 2, 3];
        assert_eq!(v.host_slice().unwrap(), &[1, 2, 3]);
        assert_eq!([4, 5].host_slice().unwrap(), &[4, 5]);
        assert_eq!(v[1..].host_slice().unwrap(), &[2, 3]);
        let a = Array2::from_shape_fn((2, 3), |(i, j)| i * 3 + j);
        assert_eq!(a.host_slice().unwrap(), &[0, 1, 2, 3, 4, 5]);
        assert_eq!(a.view().host_slice().unwrap(), &[0, 1, 2, 3, 4, 5]);
    }

    #[test]
    fn views_contiguous_in_neither_order_are_refused_with_advice() {
        let a = Array2::from_shape_fn((4, 4), |(i, j)| i * 4 + j);
        let col = a.slice(s![.., 1]);
        let err = col.host_slice().unwrap_err();
        assert!(err.to_string().contains("as_standard_layout"), "{err}");
        assert!(a.slice(s![.., 1..3]).host_slice().is_err());
        assert!(a.slice(s![..;-1, ..]).host_slice().is_err());
        let cube = Array3::from_shape_fn((2, 3, 4), |(i, j, k)| i * 12 + j * 4 + k);
        let permuted = cube.view().permuted_axes([1, 0, 2]);
        assert_eq!(memory_order(&permuted), None);
        assert!(permuted.host_slice().is_err());
        let mut b = a.clone();
        let mut col = b.slice_mut(s![.., 2]);
        assert!(col.host_slice_mut().is_err());
    }

    /// Pseudo-random values, so that no index mix-up can give the right element by chance.
    fn noise(n: usize, seed: u64) -> Vec<u64> {
        let mut x = seed | 1;
        (0..n)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x
            })
            .collect()
    }

    #[test]
    fn fortran_ordered_arrays_are_passed_in_memory_order() {
        let (m, n) = (5, 7);
        let f = Array2::from_shape_vec((m, n).f(), noise(m * n, 3)).unwrap();
        assert_eq!(memory_order(&f), Some(Order::F));
        let s = f.host_slice().unwrap();
        // Column-major: a kernel reads element (i, j) at i + j * m.
        for i in 0..m {
            for j in 0..n {
                assert_eq!(s[i + j * m], f[[i, j]]);
            }
        }
        // A transposed C array is F-ordered, and its memory is the C array's.
        let c = Array2::from_shape_vec((m, n), noise(m * n, 4)).unwrap();
        assert_eq!(c.t().host_slice().unwrap(), c.as_slice().unwrap());
        let mut g = f.clone();
        g.host_slice_mut().unwrap()[1 + 2 * m] = 42;
        assert_eq!(g[[1, 2]], 42);
    }

    #[test]
    fn elements_in_order_follow_c_and_fortran_index_math() {
        let (a0, a1, a2) = (3, 4, 5);
        let c = Array3::from_shape_vec((a0, a1, a2), noise(a0 * a1 * a2, 9)).unwrap();
        let f = Array3::from_shape_vec((a0, a1, a2).f(), noise(a0 * a1 * a2, 10)).unwrap();
        let reversed = Array3::from_shape_vec((a2, a1, a0), noise(a0 * a1 * a2, 11)).unwrap();
        let strided = Array3::from_shape_vec((a0, a1, 2 * a2), noise(2 * a0 * a1 * a2, 12)).unwrap();
        let views = [
            c.view(),
            f.view(),
            reversed.view().reversed_axes(),
            strided.slice(s![.., .., ..;2]),
            c.slice(s![..;-1, .., ..]),
        ];
        for (k, v) in views.iter().enumerate() {
            let in_c = elements_in_order(v, Order::C);
            let in_f = elements_in_order(v, Order::F);
            for i in 0..a0 {
                for j in 0..a1 {
                    for l in 0..a2 {
                        assert_eq!(in_c[l + a2 * (j + a1 * i)], v[[i, j, l]], "view {k}, C");
                        assert_eq!(in_f[i + a0 * (j + a1 * l)], v[[i, j, l]], "view {k}, F");
                    }
                }
            }
            // Borrowed exactly when the memory is already in that order.
            assert_eq!(matches!(in_c, Cow::Borrowed(_)), k == 0, "view {k}");
            assert_eq!(matches!(in_f, Cow::Borrowed(_)), k == 1 || k == 2, "view {k}");
        }
    }
}
