//! `cumsum_np`, `cumprod_np` and their `_axis` forms: the scans in NumPy 2's result type
//! ([`SumType`]: `i64` for `bool` and the signed integers narrower than 64 bits, `u64` for the
//! unsigned ones, the element type otherwise), as `np.cumsum(a)` without `dtype=`.
//!
//! The plain [`cumsum`](DeviceArrayBase::cumsum) keeps the element type (see `reduce::sum_np`
//! for why). Where NumPy's type is the element type the scan reads the array as it is (a view
//! of the same bytes, no copy); where it is wider, the elements are converted first
//! ([`cumsum_as`](DeviceArrayBase::cumsum_as): one pass more).

use ndarray::{Dimension, Ix1, IxDyn};

use crate::error::Result;
use crate::gpuarray::array::core::{DeviceArray, DeviceArrayBase, Storage};
use crate::gpuarray::array::on_stream::{on_legacy_stream, OnStream};
use crate::gpuarray::elements::element::Element;
use crate::gpuarray::elements::sum_type::SumType;

impl<S: Storage<Elem: SumType>, D: Dimension> DeviceArrayBase<S, D> {
    on_legacy_stream! {
        /// The running sums (flattened in C order) in NumPy 2's type ([`SumType`]), as
        /// `np.cumsum(a)`.
        fn cumsum_np(&self) -> Result<DeviceArray<<S::Elem as SumType>::Sum, Ix1>>;

        /// The running products (flattened in C order) in NumPy 2's type ([`SumType`]), as
        /// `np.cumprod(a)`.
        fn cumprod_np(&self) -> Result<DeviceArray<<S::Elem as SumType>::Sum, Ix1>>;

        /// The running sums along `axis` in NumPy 2's type ([`SumType`]).
        fn cumsum_axis_np(&self, axis: usize)
            -> Result<DeviceArray<<S::Elem as SumType>::Sum, IxDyn>>;

        /// The running products along `axis` in NumPy 2's type ([`SumType`]).
        fn cumprod_axis_np(&self, axis: usize)
            -> Result<DeviceArray<<S::Elem as SumType>::Sum, IxDyn>>;
    }
}

/// Whether `T`'s NumPy sum type is `T` itself (then the scan reads the array as it lies).
fn keeps_type<T: SumType>() -> bool {
    T::DTYPE == <T::Sum as Element>::DTYPE
}

/// The NumPy-typed scans on a stream (`a.on(&stream).cumsum_np()`), returning without waiting.
impl<S: Storage<Elem: SumType>, D: Dimension> OnStream<'_, &DeviceArrayBase<S, D>> {
    /// [`cumsum_np`](DeviceArrayBase::cumsum_np) on this stream.
    pub fn cumsum_np(&self) -> Result<DeviceArray<<S::Elem as SumType>::Sum, Ix1>> {
        if keeps_type::<S::Elem>() {
            let same = self.target.view_as::<<S::Elem as SumType>::Sum>()?;
            return OnStream::new(&same, self.stream).cumsum();
        }
        self.cumsum_as()
    }

    /// [`cumprod_np`](DeviceArrayBase::cumprod_np) on this stream.
    pub fn cumprod_np(&self) -> Result<DeviceArray<<S::Elem as SumType>::Sum, Ix1>> {
        if keeps_type::<S::Elem>() {
            let same = self.target.view_as::<<S::Elem as SumType>::Sum>()?;
            return OnStream::new(&same, self.stream).cumprod();
        }
        self.cumprod_as()
    }

    /// [`cumsum_axis_np`](DeviceArrayBase::cumsum_axis_np) on this stream.
    pub fn cumsum_axis_np(&self, axis: usize) -> Result<DeviceArray<<S::Elem as SumType>::Sum, IxDyn>> {
        if keeps_type::<S::Elem>() {
            let same = self.target.view_as::<<S::Elem as SumType>::Sum>()?;
            return OnStream::new(&same, self.stream).cumsum_axis(axis);
        }
        self.cumsum_axis_as(axis)
    }

    /// [`cumprod_axis_np`](DeviceArrayBase::cumprod_axis_np) on this stream.
    pub fn cumprod_axis_np(&self, axis: usize) -> Result<DeviceArray<<S::Elem as SumType>::Sum, IxDyn>> {
        if keeps_type::<S::Elem>() {
            let same = self.target.view_as::<<S::Elem as SumType>::Sum>()?;
            return OnStream::new(&same, self.stream).cumprod_axis(axis);
        }
        self.cumprod_axis_as(axis)
    }
}
