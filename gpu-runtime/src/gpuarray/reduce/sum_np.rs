//! `sum_np`, `prod_np` and their `_axis` forms: `sum` and `prod` in NumPy 2's result type
//! ([`SumType`]: the integers narrower than 64 bits and `bool` accumulate in `i64`/`u64`, as
//! `np.sum` does on Linux; the other types in their own).
//!
//! The plain [`sum`](DeviceArrayBase::sum) keeps the element type (PyCUDA's `gpuarray.sum`):
//! changing its return type would break every caller that takes `a.sum()?` as an `i32` of an
//! `i32` array, and generic code bounded by [`Element`](crate::gpuarray::Element) alone. These are the forms that follow
//! NumPy; each is one pass, the conversion made in the kernel as the elements are read
//! (`sum_as::<T::Sum>()`).

use ndarray::{Dimension, IxDyn};

use crate::error::Result;
use crate::gpuarray::array::core::{DeviceArray, DeviceArrayBase, Storage};
use crate::gpuarray::array::on_stream::{on_legacy_stream, stream_forms, OnStream};
use crate::gpuarray::elements::sum_type::SumType;
use crate::gpuarray::reduce::axis::ReduceAxis;
use crate::gpuarray::reduce::ops::{Along, Op};

impl<S: Storage<Elem: SumType>, D: Dimension> DeviceArrayBase<S, D> {
    on_legacy_stream! {
        /// The sum of every element in NumPy 2's type ([`SumType`]: `i64` for `bool` and the
        /// signed integers, `u64` for the unsigned ones, the element type otherwise), as
        /// `np.sum(a)`; 0 for an empty array. [`sum`](Self::sum) keeps the element type.
        fn sum_np(&self) -> Result<<S::Elem as SumType>::Sum>;

        /// The product of every element in NumPy 2's type ([`SumType`]), as `np.prod(a)`; 1 for
        /// an empty array.
        fn prod_np(&self) -> Result<<S::Elem as SumType>::Sum>;

        /// The sums along an axis in NumPy 2's type ([`SumType`]), as `np.sum(a, axis=k)`.
        fn sum_axis_np(&self, axis: impl Into<ReduceAxis>)
            -> Result<DeviceArray<<S::Elem as SumType>::Sum, IxDyn>>;

        /// The products along an axis in NumPy 2's type ([`SumType`]), as `np.prod(a, axis=k)`.
        fn prod_axis_np(&self, axis: impl Into<ReduceAxis>)
            -> Result<DeviceArray<<S::Elem as SumType>::Sum, IxDyn>>;
    }
}

/// The sum's type of `S`'s elements.
type Sum<S> = <<S as Storage>::Elem as SumType>::Sum;

/// The NumPy-typed sums and products on a stream (`a.on(&stream).sum_np()`).
impl<S: Storage<Elem: SumType>, D: Dimension> OnStream<'_, &DeviceArrayBase<S, D>> {
    stream_forms! {
        fn sum_np() -> Sum<S> = over_all(Op::Sum);
        fn prod_np() -> Sum<S> = over_all(Op::Prod);
        fn sum_axis_np(axis: impl Into<ReduceAxis>) -> Along<Sum<S>> = over_axis(Op::Sum, axis);
        fn prod_axis_np(axis: impl Into<ReduceAxis>) -> Along<Sum<S>> = over_axis(Op::Prod, axis);
    }
}
