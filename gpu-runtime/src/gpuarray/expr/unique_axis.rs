//! NumPy's `unique(a, axis=k)`: the distinct slices along an axis, in lexicographic order. The
//! slices become the rows of a C-order matrix; [`lexsort`](crate::gpuarray::lexsort) of its
//! columns orders them (stably), a comparison of each sorted row with the one before marks
//! where a new one starts, and gathers through those marks give the values, first positions,
//! counts and inverse.

use ndarray::{s, Array1, Dimension, Ix1, IxDyn, SliceInfoElem};

use crate::error::Result;
use crate::gpuarray::array::axes::normalize_axis;
use crate::gpuarray::array::core::{DeviceArray, DeviceArrayBase, Storage};
use crate::gpuarray::array::on_stream::{on_legacy_stream, OnStream};
use crate::gpuarray::copy::gather::IndexMode;
use crate::gpuarray::elements::element::Element;
use crate::gpuarray::expr::core::Operand;
use crate::gpuarray::sort::ops::UniqueOptions;
use crate::gpuarray::sort::radix;

/// The result of [`unique_axis`](DeviceArrayBase::unique_axis): NumPy's `unique(a, axis=k,
/// return_index, return_inverse, return_counts)`.
#[derive(Debug)]
pub struct UniqueAxis<T: Element> {
    /// The distinct slices along the axis, in lexicographic order (of their elements in C
    /// order, NaN last), stacked along that axis.
    pub values: DeviceArray<T, IxDyn>,
    /// With `return_index`: the position along the axis of each slice's first occurrence.
    pub indices: Option<DeviceArray<i64, Ix1>>,
    /// With `return_inverse`: for each slice of the input, the position of its value in
    /// `values`.
    pub inverse: Option<DeviceArray<i64, Ix1>>,
    /// With `return_counts`: how often each slice occurs.
    pub counts: Option<DeviceArray<i64, Ix1>>,
}

impl<S: Storage<Elem: Element>, D: Dimension> DeviceArrayBase<S, D> {
    on_legacy_stream! {
        /// The distinct slices along `axis` (negative: from the end), in lexicographic order,
        /// with the parts `options` asks for (NumPy's `unique(a, axis=k, ...)`). Slices equal
        /// in every element are one value (`-0.0` equals `0.0`); a NaN differs from
        /// everything, so slices holding NaN stay apart, as NumPy's do whatever its
        /// `equal_nan`. Every real element type; complex ones are
        /// [`ArgumentError::UndefinedOnElement`](crate::error::ArgumentError::UndefinedOnElement).
        /// Waits for the count of values. The slices are ordered as
        /// [`lexsort`](crate::gpuarray::lexsort) orders keys, one stable sort per element of a
        /// slice: made for slices of tens or hundreds of elements (the rows of a table), not
        /// for a few slices of millions.
        ///
        /// ```no_run
        /// use gpu_runtime::gpuarray::{DeviceArray, UniqueOptions};
        /// use gpu_runtime::ndarray::arr2;
        /// let ctx = gpu_runtime::Context::default()?;
        /// let a = DeviceArray::from_ndarray(&ctx, &arr2(&[[1, 0], [2, 2], [1, 0]]))?;
        /// let u = a.unique_axis(0, UniqueOptions { return_counts: true, ..Default::default() })?;
        /// assert_eq!(u.values.to_vec()?, [1, 0, 2, 2]);
        /// assert_eq!(u.counts.unwrap().to_vec()?, [2, 1]);
        /// # Ok::<(), gpu_runtime::Error>(())
        /// ```
        fn unique_axis(&self, axis: isize, options: UniqueOptions) -> Result<UniqueAxis<S::Elem>>;
    }
}

impl<S: Storage<Elem: Element>, D: Dimension> OnStream<'_, &DeviceArrayBase<S, D>> {
    /// [`unique_axis`](DeviceArrayBase::unique_axis) on this stream (waits for the count).
    pub fn unique_axis(&self, axis: isize, options: UniqueOptions) -> Result<UniqueAxis<S::Elem>> {
        const OP: &str = "DeviceArray::unique_axis";
        let (a, stream) = (self.target, self.stream);
        let ctx = a.context();
        radix::key_of::<S::Elem>(OP)?;
        let ax = normalize_axis(OP, axis, a.ndim())?;
        let moved = a.view().into_dyn().moveaxis(&[ax as isize], &[0])?;
        let n = moved.shape()[0];
        let rest = moved.shape()[1..].to_vec();
        let m: usize = rest.iter().product();
        let host = |v: Vec<i64>| DeviceArray::from_ndarray(ctx, &Array1::from(v));
        if n == 0 || m == 0 {
            // No slices, or slices without elements: none, or one value that every slice is.
            let k = n.min(1);
            let mut shape = a.shape().to_vec();
            shape[ax] = k;
            return Ok(UniqueAxis {
                values: DeviceArray::empty(ctx, IxDyn(&shape))?,
                indices: options.return_index.then(|| host(vec![0; k])).transpose()?,
                inverse: options.return_inverse.then(|| host(vec![0; n])).transpose()?,
                counts: options
                    .return_counts
                    .then(|| host(vec![n as i64; k]))
                    .transpose()?,
            });
        }
        let rows = OnStream::new(&moved, stream)
            .to_contiguous()?
            .reshape(IxDyn(&[n, m]))?;
        // lexsort's last key is the primary one: the columns last to first.
        let keys = rows.t().slice_move(
            &[
                SliceInfoElem::Slice {
                    start: 0,
                    end: None,
                    step: -1,
                },
                SliceInfoElem::from(..),
            ][..],
        )?;
        let order = OnStream::new(&keys, stream)
            .lexsort()?
            .into_dimensionality::<Ix1>()?;
        let sorted = OnStream::new(&rows, stream).take(&order, 0, IndexMode::Raise)?;
        // 1 where a sorted row starts a new value: the first, and each that differs from the
        // one before in an element.
        let mut starts = DeviceArray::<i64, Ix1>::empty(ctx, n)?;
        OnStream::new(&mut starts.slice_mut(s![..1])?, stream).fill(1)?;
        if n > 1 {
            let (before, after) = (sorted.slice(s![..-1, ..])?, sorted.slice(s![1.., ..])?);
            let differ = OnStream::new((&after).into_expr().ne(&before), stream).eval()?;
            let any = OnStream::new(&differ, stream).any_axis(1)?;
            let any = OnStream::new(&any, stream).astype::<i64>()?;
            OnStream::new(&mut starts.slice_mut(s![1..])?, stream).copy_from(&any)?;
        }
        let first = OnStream::new(&starts, stream).flatnonzero()?;
        let k = first.len();
        let mut shape = vec![k];
        shape.extend(&rest);
        let values = OnStream::new(&sorted, stream)
            .take(&first, 0, IndexMode::Raise)?
            .reshape(IxDyn(&shape))?
            .moveaxis(&[0], &[ax as isize])?;
        let indices = options
            .return_index
            .then(|| {
                OnStream::new(&order, stream)
                    .take(&first, 0, IndexMode::Raise)?
                    .into_dimensionality()
            })
            .transpose()?;
        let counts = options
            .return_counts
            .then(|| {
                let last = host(vec![n as i64])?;
                let ends = OnStream::new(ctx, stream).concatenate(&[&first.view(), &last.view()], 0)?;
                OnStream::new(&ends, stream).diff(1, 0)?.into_dimensionality()
            })
            .transpose()?;
        let inverse = options
            .return_inverse
            .then(|| {
                // The value of sorted row i is its count of starts less one; row i is slice
                // `order[i]` of the input.
                let pos = OnStream::new(&starts, stream).cumsum()?;
                let sorted_inverse = OnStream::new(&pos - 1i64, stream).eval()?;
                let mut inverse = DeviceArray::<i64, Ix1>::empty(ctx, n)?;
                OnStream::new(&mut inverse, stream).put(&order, &sorted_inverse, IndexMode::Raise)?;
                Ok::<_, crate::error::Error>(inverse)
            })
            .transpose()?;
        Ok(UniqueAxis {
            values,
            indices,
            inverse,
            counts,
        })
    }
}
