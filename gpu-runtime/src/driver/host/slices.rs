//! Host data that can be copied to and from the device: slices, `Vec`s, arrays and contiguous
//! `ndarray` arrays.

use ndarray::{ArrayBase, Data, DataMut, Dimension};

use crate::error::{Error, Result};

/// Host memory that can be read as one contiguous `[T]` (C order for `ndarray`).
pub trait HostSlice<T> {
    /// The elements, or [`Error::NotContiguous`] for an `ndarray` view that is not contiguous
    /// in C order.
    fn host_slice(&self) -> Result<&[T]>;
}

/// Host memory that can be written as one contiguous `[T]` (C order for `ndarray`).
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
impl<T, S: Data<Elem = T>, D: Dimension> HostSlice<T> for ArrayBase<S, D> {
    fn host_slice(&self) -> Result<&[T]> {
        self.as_slice().ok_or(Error::NotContiguous {
            what: "a copy to the device",
        })
    }
}
impl<T, S: DataMut<Elem = T>, D: Dimension> HostSliceMut<T> for ArrayBase<S, D> {
    fn host_slice_mut(&mut self) -> Result<&mut [T]> {
        self.as_slice_mut().ok_or(Error::NotContiguous {
            what: "a copy from the device",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::{s, Array2};

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
    fn non_contiguous_views_are_refused_with_advice() {
        let a = Array2::from_shape_fn((4, 4), |(i, j)| i * 4 + j);
        let col = a.slice(s![.., 1]);
        let err = col.host_slice().unwrap_err();
        assert!(err.to_string().contains("as_standard_layout"), "{err}");
        let t = a.t();
        assert!(t.host_slice().is_err());
        let mut b = a.clone();
        let mut col = b.slice_mut(s![.., 2]);
        assert!(col.host_slice_mut().is_err());
    }
}
