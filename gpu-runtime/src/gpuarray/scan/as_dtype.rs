//! NumPy's `dtype=` on `cumsum`/`cumprod`: `cumsum_as::<A>()` converts the elements to `A`
//! and scans in `A` (`cumsum_as::<i64>()` of `i32` is NumPy 2's default accumulation of the
//! small integers, whose plain `cumsum` here wraps in the element type). The conversion is its
//! own pass (an `astype` into a temporary, then the scan of it): one read and write more than
//! a scan in the element type.

use ndarray::{Dimension, Ix1, IxDyn};

use crate::error::Result;
use crate::gpuarray::array::core::{DeviceArray, DeviceArrayBase, Storage};
use crate::gpuarray::array::on_stream::{on_legacy_stream, OnStream};
use crate::gpuarray::elements::element::Element;

impl<S: Storage<Elem: Element>, D: Dimension> DeviceArrayBase<S, D> {
    on_legacy_stream! {
        /// The running sums (flattened in C order) of the elements converted to `A` (NumPy's
        /// `cumsum(dtype=A)`).
        fn cumsum_as[A: Element](&self) -> Result<DeviceArray<A, Ix1>>;

        /// The running products of the elements converted to `A` (NumPy's `cumprod(dtype=A)`).
        fn cumprod_as[A: Element](&self) -> Result<DeviceArray<A, Ix1>>;

        /// The running sums along `axis` of the elements converted to `A`.
        fn cumsum_axis_as[A: Element](&self, axis: usize) -> Result<DeviceArray<A, IxDyn>>;

        /// The running products along `axis` of the elements converted to `A`.
        fn cumprod_axis_as[A: Element](&self, axis: usize) -> Result<DeviceArray<A, IxDyn>>;
    }
}

/// The scans in another type on a stream (`a.on(&stream).cumsum_as::<i64>()`).
impl<S: Storage<Elem: Element>, D: Dimension> OnStream<'_, &DeviceArrayBase<S, D>> {
    /// The elements as `A`, on this stream.
    fn converted<A: Element>(&self) -> Result<DeviceArray<A, D>> {
        self.astype::<A>()
    }

    /// [`cumsum_as`](DeviceArrayBase::cumsum_as) on this stream.
    pub fn cumsum_as<A: Element>(&self) -> Result<DeviceArray<A, Ix1>> {
        OnStream::new(&self.converted::<A>()?, self.stream).cumsum()
    }

    /// [`cumprod_as`](DeviceArrayBase::cumprod_as) on this stream.
    pub fn cumprod_as<A: Element>(&self) -> Result<DeviceArray<A, Ix1>> {
        OnStream::new(&self.converted::<A>()?, self.stream).cumprod()
    }

    /// [`cumsum_axis_as`](DeviceArrayBase::cumsum_axis_as) on this stream.
    pub fn cumsum_axis_as<A: Element>(&self, axis: usize) -> Result<DeviceArray<A, IxDyn>> {
        OnStream::new(&self.converted::<A>()?, self.stream).cumsum_axis(axis)
    }

    /// [`cumprod_axis_as`](DeviceArrayBase::cumprod_axis_as) on this stream.
    pub fn cumprod_axis_as<A: Element>(&self, axis: usize) -> Result<DeviceArray<A, IxDyn>> {
        OnStream::new(&self.converted::<A>()?, self.stream).cumprod_axis(axis)
    }
}
