//! The reductions of complex arrays that need an order or give a real result, as NumPy
//! defines them: `max`, `min` and `ptp` order complex numbers lexicographically (real part,
//! then imaginary part), a number with a NaN part wins (NumPy's `maximum` propagates it);
//! `var` and `std` are real, the mean of `|x - mean|²` (the real part's squared deviations
//! plus the imaginary part's: two Welford accumulators in `double`, merged by Chan et al.'s
//! rule as the real variance's).
//!
//! The kernels are `complex_kernels`'s. `max`, `min`, `ptp` (and their `_axis` forms) take complex arrays through the methods
//! every element has; the variance and standard deviation, whose type is the part type
//! rather than [`MeanType`](crate::gpuarray::MeanType)'s, are
//! [`complex_var`](DeviceArrayBase::complex_var) and its kin.

use ndarray::{Dimension, IxDyn};

use crate::error::Result;
use crate::gpuarray::array::core::{DeviceArray, DeviceArrayBase, Storage};
use crate::gpuarray::array::on_stream::{on_legacy_stream, stream_forms, OnStream};
use crate::gpuarray::elements::complex::ComplexElement;
use crate::gpuarray::reduce::axis::ReduceAxis;
use crate::gpuarray::reduce::ops::{Along, Op};

impl<T: ComplexElement, S: Storage<Elem = T>, D: Dimension> DeviceArrayBase<S, D> {
    on_legacy_stream! {
        /// The variance of a complex array, `sum(|x - mean|²) / (n - ddof)` (NumPy's `var` of a
        /// complex array: real, of the part type), accumulated in `f64`; NaN for an empty array.
        fn complex_var(&self, ddof: u64) -> Result<T::Part>;

        /// The variances along an axis, of the part type (see [`complex_var`](Self::complex_var)).
        fn complex_var_axis(&self, axis: impl Into<ReduceAxis>, ddof: u64)
            -> Result<DeviceArray<T::Part, IxDyn>>;

        /// The standard deviation of a complex array, the square root of
        /// [`complex_var`](Self::complex_var) (NumPy's `std` of a complex array).
        fn complex_std(&self, ddof: u64) -> Result<T::Part>;

        /// The standard deviations along an axis, of the part type.
        fn complex_std_axis(&self, axis: impl Into<ReduceAxis>, ddof: u64)
            -> Result<DeviceArray<T::Part, IxDyn>>;
    }
}

/// The stream forms (`a.on(&stream).complex_var(0)`).
impl<T: ComplexElement, S: Storage<Elem = T>, D: Dimension> OnStream<'_, &DeviceArrayBase<S, D>> {
    stream_forms! {
        fn complex_var(ddof: u64) -> T::Part = over_all(Op::Var { ddof, root: false });
        fn complex_var_axis(axis: impl Into<ReduceAxis>, ddof: u64) -> Along<T::Part> =
            over_axis(Op::Var { ddof, root: false }, axis);
        fn complex_std(ddof: u64) -> T::Part = over_all(Op::Var { ddof, root: true });
        fn complex_std_axis(axis: impl Into<ReduceAxis>, ddof: u64) -> Along<T::Part> =
            over_axis(Op::Var { ddof, root: true }, axis);
    }
}
