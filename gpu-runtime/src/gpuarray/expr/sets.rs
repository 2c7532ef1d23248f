//! NumPy's set routines: `isin`, `intersect1d`, `union1d`, `setdiff1d` and `setxor1d`, built
//! as NumPy builds them, on the sort (`unique`, `searchsorted`), the compaction (`masked`) and
//! comparisons of neighbours in a sorted array. Results are 1-d, sorted and unique, as NumPy's.
//!
//! Values compare with `==`: NaN is in no set (NumPy's `isin(nan, [nan])` is false), so
//! `setdiff1d` keeps a NaN and `setxor1d` keeps one of each array. The two arrays have one
//! element type (NumPy would promote; `astype` first). Complex elements have no sort order
//! here: [`ArgumentError::UndefinedOnElement`](crate::error::ArgumentError::UndefinedOnElement).

use ndarray::{s, Dimension, Ix1, IxDyn};

use crate::driver::context::core::Context;
use crate::error::Result;
use crate::gpuarray::array::core::{DeviceArray, DeviceArrayBase, Storage};
use crate::gpuarray::array::on_stream::{context_fns, on_legacy_stream, OnStream};
use crate::gpuarray::copy::gather::IndexMode;
use crate::gpuarray::elements::boolean::Bool;
use crate::gpuarray::elements::element::Element;
use crate::gpuarray::expr::func::CmpOp;
use crate::gpuarray::sort::ops::{Side, UniqueOptions};

impl<S: Storage<Elem: Element>, D: Dimension> DeviceArrayBase<S, D> {
    on_legacy_stream! {
        /// Whether each element is among the elements of `test` (any shape), as an array of
        /// [`Bool`] of this array's shape (NumPy's `isin(a, test, invert=)`; `invert` gives the
        /// opposite). Values compare with `==`, so NaN is never found (NumPy's `isin(nan, [nan])`
        /// is false); complex elements have no sort order here
        /// ([`ArgumentError::UndefinedOnElement`](crate::error::ArgumentError::UndefinedOnElement)).
        ///
        /// ```no_run
        /// use gpu_runtime::gpuarray::{Bool, DeviceArray};
        /// use gpu_runtime::ndarray::arr1;
        /// let ctx = gpu_runtime::Context::default()?;
        /// let a = DeviceArray::from_ndarray(&ctx, &arr1(&[1, 2, 3, 4]))?;
        /// let test = DeviceArray::from_ndarray(&ctx, &arr1(&[4, 2]))?;
        /// let found: Vec<bool> = a.isin(&test, false)?.to_vec()?.into_iter().map(bool::from).collect();
        /// assert_eq!(found, [false, true, false, true]);
        /// # Ok::<(), gpu_runtime::Error>(())
        /// ```
        fn isin[S2: Storage<Elem = S::Elem>, D2: Dimension](
            &self,
            test: &DeviceArrayBase<S2, D2>,
            invert: bool,
        ) -> Result<DeviceArray<Bool, IxDyn>>;
    }
}

impl<S: Storage<Elem: Element>, D: Dimension> OnStream<'_, &DeviceArrayBase<S, D>> {
    /// [`isin`](DeviceArrayBase::isin) on this stream.
    pub fn isin<S2: Storage<Elem = S::Elem>, D2: Dimension>(
        &self,
        test: &DeviceArrayBase<S2, D2>,
        invert: bool,
    ) -> Result<DeviceArray<Bool, IxDyn>> {
        let a = self.target;
        if test.is_empty() || a.is_empty() {
            return OnStream::new(a.context(), self.stream).full(IxDyn(a.shape()), Bool::from(invert));
        }
        // Where each element would go among the sorted test values; the value there (the last
        // one past the end) equals it exactly when it is among them.
        let sorted = OnStream::new(test, self.stream).sort_flat()?;
        let at = OnStream::new(&sorted, self.stream).searchsorted(a, Side::Left)?;
        let found = OnStream::new(&sorted, self.stream).take(&at, 0, IndexMode::Clip)?;
        let op = if invert { CmpOp::Ne } else { CmpOp::Eq };
        found.expr().compare(op, a).eval_stream(self.stream)
    }
}

context_fns! {
    /// The sorted unique values in both `a` and `b` (NumPy's `intersect1d(a, b)`), any shapes, of
    /// one element type (NumPy would promote two; `astype` first). Values compare with `==`: NaN is
    /// in no intersection, `setdiff1d` keeps a NaN of `a`, `setxor1d` one of each array.
    ///
    /// ```no_run
    /// use gpu_runtime::gpuarray::{self, DeviceArray};
    /// use gpu_runtime::ndarray::arr1;
    /// let ctx = gpu_runtime::Context::default()?;
    /// let a = DeviceArray::from_ndarray(&ctx, &arr1(&[1, 3, 4, 3]))?;
    /// let b = DeviceArray::from_ndarray(&ctx, &arr1(&[3, 1, 2, 1]))?;
    /// assert_eq!(gpuarray::intersect1d(&a, &b)?.to_vec()?, [1, 3]);
    /// assert_eq!(gpuarray::union1d(&a, &b)?.to_vec()?, [1, 2, 3, 4]);
    /// assert_eq!(gpuarray::setdiff1d(&a, &b)?.to_vec()?, [4]);
    /// assert_eq!(gpuarray::setxor1d(&a, &b)?.to_vec()?, [2, 4]);
    /// # Ok::<(), gpu_runtime::Error>(())
    /// ```
    fn intersect1d[
        T: Element, S1: Storage<Elem = T>, D1: Dimension, S2: Storage<Elem = T>, D2: Dimension
    ](
        &self, a: &DeviceArrayBase<S1, D1>, b: &DeviceArrayBase<S2, D2>
    ) -> Result<DeviceArray<T, Ix1>> {
        let sorted = self.both_sorted(a, b)?;
        if sorted.len() < 2 {
            return DeviceArray::empty(a.context(), 0);
        }
        // A value in both is there twice, side by side.
        let (lo, hi) = (sorted.slice(s![..-1])?, sorted.slice(s![1..])?);
        let twice = lo.expr().eq(&hi).eval_stream(self.stream)?;
        OnStream::new(&lo, self.stream).masked(&twice)
    }

    /// [`intersect1d`] with the first position of each common value in each array (NumPy's
    /// `intersect1d(a, b, return_indices=True)`).
    ///
    /// ```no_run
    /// use gpu_runtime::gpuarray::{self, DeviceArray};
    /// use gpu_runtime::ndarray::arr1;
    /// let ctx = gpu_runtime::Context::default()?;
    /// let a = DeviceArray::from_ndarray(&ctx, &arr1(&[1, 1, 2, 3, 4]))?;
    /// let b = DeviceArray::from_ndarray(&ctx, &arr1(&[2, 1, 4, 6]))?;
    /// let both = gpuarray::intersect1d_indices(&a, &b)?;
    /// assert_eq!(both.values.to_vec()?, [1, 2, 4]);
    /// assert_eq!(both.indices_a.to_vec()?, [0, 2, 4]);
    /// assert_eq!(both.indices_b.to_vec()?, [1, 0, 2]);
    /// # Ok::<(), gpu_runtime::Error>(())
    /// ```
    fn intersect1d_indices[
        T: Element, S1: Storage<Elem = T>, D1: Dimension, S2: Storage<Elem = T>, D2: Dimension
    ](&self, a: &DeviceArrayBase<S1, D1>, b: &DeviceArrayBase<S2, D2>) -> Result<Intersect1d<T>> {
        // NumPy's: the unique values of each with their first positions, joined, sorted stably
        // (a value in both is there twice, `a`'s first), and the neighbours that are equal.
        let (on_a, on_b) = (OnStream::new(a, self.stream), OnStream::new(b, self.stream));
        let (ua, ub) = (on_a.unique_run(true, true)?, on_b.unique_run(true, true)?);
        let (ia, ib) = (ua.indices()?, ub.indices()?);
        let empty = || DeviceArray::<i64, Ix1>::empty(self.target, 0);
        let joined = self.concatenate(&[&ua.values, &ub.values], 0)?;
        if joined.len() < 2 {
            return Ok(Intersect1d {
                values: DeviceArray::empty(self.target, 0)?,
                indices_a: empty()?,
                indices_b: empty()?,
            });
        }
        let order = OnStream::new(&joined, self.stream).argsort()?;
        let sorted = OnStream::new(&joined, self.stream).take(&order, 0, IndexMode::Raise)?;
        let (lo, hi) = (sorted.slice(s![..-1])?, sorted.slice(s![1..])?);
        let twice = lo.expr().eq(&hi).eval_stream(self.stream)?;
        let values = OnStream::new(&lo, self.stream).masked(&twice)?;
        let in_a = OnStream::new(&order.slice(s![..-1])?, self.stream).masked(&twice)?;
        let in_b = OnStream::new(&order.slice(s![1..])?, self.stream).masked(&twice)?;
        let in_b = (&in_b - ua.values.len() as i64).eval_stream(self.stream)?;
        Ok(Intersect1d {
            values,
            indices_a: OnStream::new(&ia, self.stream)
                .take(&in_a, 0, IndexMode::Raise)?
                .into_dimensionality()?,
            indices_b: OnStream::new(&ib, self.stream)
                .take(&in_b, 0, IndexMode::Raise)?
                .into_dimensionality()?,
        })
    }

    /// The sorted unique values in `a` or `b` (NumPy's `union1d(a, b)`), any shapes.
    fn union1d[
        T: Element, S1: Storage<Elem = T>, D1: Dimension, S2: Storage<Elem = T>, D2: Dimension
    ](
        &self, a: &DeviceArrayBase<S1, D1>, b: &DeviceArrayBase<S2, D2>
    ) -> Result<DeviceArray<T, Ix1>> {
        let (fa, fb) = (
            OnStream::new(a, self.stream).ravel()?,
            OnStream::new(b, self.stream).ravel()?,
        );
        let joined = self.concatenate(&[&fa, &fb], 0)?;
        self.unique(&joined)
    }

    /// The sorted unique values of `a` that are not in `b` (NumPy's `setdiff1d(a, b)`), any
    /// shapes.
    fn setdiff1d[
        T: Element, S1: Storage<Elem = T>, D1: Dimension, S2: Storage<Elem = T>, D2: Dimension
    ](
        &self, a: &DeviceArrayBase<S1, D1>, b: &DeviceArrayBase<S2, D2>
    ) -> Result<DeviceArray<T, Ix1>> {
        let ua = self.unique(a)?;
        let outside = OnStream::new(&ua, self.stream).isin(b, true)?;
        OnStream::new(&ua, self.stream).masked(&outside)
    }

    /// The sorted unique values in exactly one of `a` and `b` (NumPy's `setxor1d(a, b)`), any
    /// shapes.
    fn setxor1d[
        T: Element, S1: Storage<Elem = T>, D1: Dimension, S2: Storage<Elem = T>, D2: Dimension
    ](
        &self, a: &DeviceArrayBase<S1, D1>, b: &DeviceArrayBase<S2, D2>
    ) -> Result<DeviceArray<T, Ix1>> {
        let sorted = self.both_sorted(a, b)?;
        let n = sorted.len();
        if n < 2 {
            return Ok(sorted);
        }
        // A value in one array only differs from both neighbours (NumPy's flags
        // `[True, aux[1:] != aux[:-1], True]`, each element kept where its two flags are).
        let (lo, hi) = (sorted.slice(s![..-1])?, sorted.slice(s![1..])?);
        let differs = lo.expr().ne(&hi).eval_stream(self.stream)?;
        let yes = self.full(1, Bool::from(true))?;
        let flags = self.concatenate(
            &[
                &yes.view(),
                &differs.view().into_dimensionality::<Ix1>()?,
                &yes.view(),
            ],
            0,
        )?;
        let once = flags
            .slice(s![..-1])?
            .expr()
            .logical_and(&flags.slice(s![1..])?)
            .eval_stream(self.stream)?;
        OnStream::new(&sorted, self.stream).masked(&once)
    }
}

/// The result of [`intersect1d_indices`]: NumPy's `intersect1d(a, b, return_indices=True)`.
#[derive(Debug)]
pub struct Intersect1d<T: Element> {
    /// The sorted unique values in both arrays.
    pub values: DeviceArray<T, Ix1>,
    /// Where each value first occurs in `a`, flattened in C order.
    pub indices_a: DeviceArray<i64, Ix1>,
    /// Where each value first occurs in `b`, flattened in C order.
    pub indices_b: DeviceArray<i64, Ix1>,
}

/// The set routines on a stream (`gpuarray::on(&stream).intersect1d(&a, &b)`).
impl OnStream<'_, &Context> {
    /// The unique values of `a` and of `b`, one after the other, sorted.
    fn both_sorted<T: Element, S1: Storage<Elem = T>, D1: Dimension, S2: Storage<Elem = T>, D2: Dimension>(
        &self,
        a: &DeviceArrayBase<S1, D1>,
        b: &DeviceArrayBase<S2, D2>,
    ) -> Result<DeviceArray<T, Ix1>> {
        let ua = self.unique(a)?;
        let ub = self.unique(b)?;
        let joined = self.concatenate(&[&ua, &ub], 0)?;
        OnStream::new(&joined, self.stream).sort()
    }

    fn unique<T: Element, S1: Storage<Elem = T>, D1: Dimension>(
        &self,
        a: &DeviceArrayBase<S1, D1>,
    ) -> Result<DeviceArray<T, Ix1>> {
        Ok(OnStream::new(a, self.stream)
            .unique_with(UniqueOptions::default())?
            .values)
    }
}
