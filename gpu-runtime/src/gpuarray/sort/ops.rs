//! The sorts on arrays (NumPy's `sort`, `argsort`, `unique`, `searchsorted`), on every real
//! element type, built on the radix sort ([`radix`](crate::gpuarray::sort::radix)); the
//! medians and quantiles are in [`quantile`](crate::gpuarray::sort::quantile). Each has its
//! plain form on the legacy default stream and its stream form on `a.on(&stream)`.

use ndarray::{Dimension, Ix1, IxDyn};

use crate::driver::memory::buffer::DeviceBuffer;
use crate::driver::stream::Stream;
use crate::error::{ArrayShapeError, Result};
use crate::gpuarray::array::core::{DeviceArray, DeviceArrayBase, DeviceArrayView, Storage};
use crate::gpuarray::array::on_stream::{on_legacy_stream, OnStream};
use crate::gpuarray::copy::gather::IndexMode;
use crate::gpuarray::elements::element::Element;
use crate::gpuarray::elements::index_element::IndexElement;
use crate::gpuarray::kernels::registry::{self, BLOCK};
use crate::gpuarray::sort::keys::{KeyKind, KeyType};
use crate::gpuarray::sort::radix::{self, Indices};
use crate::gpuarray::sort::source;
use crate::launch::Arg;

/// Which end of a run of equal values [`searchsorted`](DeviceArrayBase::searchsorted) finds
/// (NumPy's `side`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Side {
    /// The first place `v` could go keeping the order: `a[i-1] < v <= a[i]`.
    #[default]
    Left,
    /// The last such place: `a[i-1] <= v < a[i]`.
    Right,
}

/// What [`unique_with`](DeviceArrayBase::unique_with) returns besides the values (NumPy's
/// `return_index`, `return_inverse`, `return_counts`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct UniqueOptions {
    /// The position (in C order) of each unique value's first occurrence.
    pub return_index: bool,
    /// For each element, the position of its value among the unique values.
    pub return_inverse: bool,
    /// How many times each unique value occurs.
    pub return_counts: bool,
}

/// The result of [`unique_with`](DeviceArrayBase::unique_with).
#[derive(Debug)]
pub struct Unique<T: Element> {
    /// The sorted unique values.
    pub values: DeviceArray<T, Ix1>,
    /// With `return_index`: each value's first position in the input, flattened in C order.
    pub indices: Option<DeviceArray<i64, Ix1>>,
    /// With `return_inverse`: for each element, the position of its value in `values`, in
    /// the input's shape (NumPy 2's `unique` with `axis=None`).
    pub inverse: Option<DeviceArray<i64, IxDyn>>,
    /// With `return_counts`: how often each value occurs.
    pub counts: Option<DeviceArray<i64, Ix1>>,
}

/// The result of [`unique_all`](DeviceArrayBase::unique_all) (NumPy 2's `UniqueAllResult`).
#[derive(Debug)]
pub struct UniqueAll<T: Element> {
    /// The sorted unique values.
    pub values: DeviceArray<T, Ix1>,
    /// Each value's first position in the input, flattened in C order.
    pub indices: DeviceArray<i64, Ix1>,
    /// For each element, the position of its value in `values`, in the input's shape.
    pub inverse_indices: DeviceArray<i64, IxDyn>,
    /// How often each value occurs.
    pub counts: DeviceArray<i64, Ix1>,
}

/// The result of [`unique_counts`](DeviceArrayBase::unique_counts) (NumPy 2's
/// `UniqueCountsResult`).
#[derive(Debug)]
pub struct UniqueCounts<T: Element> {
    /// The sorted unique values.
    pub values: DeviceArray<T, Ix1>,
    /// How often each value occurs.
    pub counts: DeviceArray<i64, Ix1>,
}

/// The result of [`unique_inverse`](DeviceArrayBase::unique_inverse) (NumPy 2's
/// `UniqueInverseResult`).
#[derive(Debug)]
pub struct UniqueInverse<T: Element> {
    /// The sorted unique values.
    pub values: DeviceArray<T, Ix1>,
    /// For each element, the position of its value in `values`, in the input's shape.
    pub inverse_indices: DeviceArray<i64, IxDyn>,
}

/// [`ArrayShapeError::Dimension`] unless the sorted array of `searchsorted` has one axis
/// (`axes`).
fn one_axis(axes: usize) -> Result<()> {
    if axes != 1 {
        return Err(ArrayShapeError::Dimension { axes, fixed: 1 }.into());
    }
    Ok(())
}

/// `axis` (negative: from the end) as an axis of an array of `ndim` axes.
pub(crate) fn normalize_axis(operation: &'static str, axis: isize, ndim: usize) -> Result<usize> {
    let a = if axis < 0 { axis + ndim as isize } else { axis };
    if a < 0 || a as usize >= ndim {
        return Err(ArrayShapeError::AxisOutOfBounds {
            operation,
            axis,
            axes: ndim,
        }
        .into());
    }
    Ok(a as usize)
}

/// The axes with `axis` moved last.
fn axis_last(ndim: usize, axis: usize) -> Vec<usize> {
    (0..ndim).filter(|&k| k != axis).chain([axis]).collect()
}

/// The inverse of the permutation `perm`.
fn inverse(perm: &[usize]) -> Vec<usize> {
    let mut inv = vec![0; perm.len()];
    for (i, &p) in perm.iter().enumerate() {
        inv[p] = i;
    }
    inv
}

/// `x` with `axis` moved last, C-contiguous: a copy unless it already is.
fn rows_copy<S: Storage<Elem: Element>, D: Dimension>(
    x: &DeviceArrayBase<S, D>,
    stream: Option<&Stream>,
    axis: usize,
) -> Result<Option<DeviceArray<S::Elem, D>>> {
    if axis + 1 == x.ndim() && x.is_standard_layout() {
        return Ok(None);
    }
    let moved = x.view().permuted_axes(&axis_last(x.ndim(), axis))?;
    OnStream::new(&moved, stream).to_contiguous().map(Some)
}

impl<S: Storage<Elem: Element>, D: Dimension> DeviceArrayBase<S, D> {
    on_legacy_stream! {
        /// A sorted copy along the last axis (NumPy's `sort(a)`), stable, in NumPy's order: NaN
        /// last, `-0.0` equal to `0.0`. Every real element type; complex ones are
        /// [`ArgumentError::UndefinedOnElement`](crate::error::ArgumentError::UndefinedOnElement),
        /// a 0-d array [`ArrayShapeError::AxisOutOfBounds`]. NaNs come back as one NaN and zeros
        /// as `0.0` (they compare equal to NumPy's).
        fn sort(&self) -> Result<DeviceArray<S::Elem, D>>;

        /// A sorted copy along `axis` (negative: from the end; NumPy's `sort(a, axis)`), as
        /// [`sort`](Self::sort).
        fn sort_axis(&self, axis: isize) -> Result<DeviceArray<S::Elem, D>>;

        /// The elements in C order, sorted (NumPy's `sort(a, axis=None)`).
        fn sort_flat(&self) -> Result<DeviceArray<S::Elem, Ix1>>;

        /// The positions along the last axis that sort it (NumPy's `argsort(a, kind="stable")`):
        /// equal values keep their order, NaN last.
        fn argsort(&self) -> Result<DeviceArray<i64, D>>;

        /// [`argsort`](Self::argsort) along `axis` (negative: from the end).
        fn argsort_axis(&self, axis: isize) -> Result<DeviceArray<i64, D>>;

        /// The positions (in C order) that sort the flattened array (NumPy's `argsort(a,
        /// axis=None)`).
        fn argsort_flat(&self) -> Result<DeviceArray<i64, Ix1>>;
    }

    /// The sorted unique values (NumPy's `unique(a)`): NaNs are one value (NumPy 2's
    /// `equal_nan=True`), and so are `-0.0` and `0.0`. Waits for the count of values.
    pub fn unique(&self) -> Result<DeviceArray<S::Elem, Ix1>> {
        OnStream::legacy(self)
            .unique_with(UniqueOptions::default())
            .map(|u| u.values)
    }

    on_legacy_stream! {
        /// [`unique`](Self::unique) with the first positions, the inverse and the counts that
        /// `options` asks for.
        fn unique_with(&self, options: UniqueOptions) -> Result<Unique<S::Elem>>;

        /// [`unique_with`](Self::unique_with) with NumPy's `equal_nan`: `false` counts each NaN
        /// as a value of its own (each with its count of 1 and its own first position), as
        /// NumPy's `unique(a, equal_nan=False)` and the array API's `unique_*` functions.
        fn unique_equal_nan(&self, options: UniqueOptions, equal_nan: bool) -> Result<Unique<S::Elem>>;

        /// NumPy 2's `unique_all(a)`: the sorted unique values, each one's first position, the
        /// inverse and the counts, each NaN a value of its own (`equal_nan=False`).
        fn unique_all(&self) -> Result<UniqueAll<S::Elem>>;

        /// NumPy 2's `unique_counts(a)`: the sorted unique values and their counts, each NaN a
        /// value of its own.
        fn unique_counts(&self) -> Result<UniqueCounts<S::Elem>>;

        /// NumPy 2's `unique_inverse(a)`: the sorted unique values and, in the array's shape,
        /// each element's position among them, each NaN a value of its own.
        fn unique_inverse(&self) -> Result<UniqueInverse<S::Elem>>;

        /// NumPy 2's `unique_values(a)`: the unique values, sorted (NumPy 2.3 may leave them
        /// unsorted), each NaN a value of its own.
        fn unique_values(&self) -> Result<DeviceArray<S::Elem, Ix1>>;

        /// Where each element of `v` would go in this sorted 1-D array to keep it sorted (NumPy's
        /// `searchsorted(a, v, side)`), in NumPy's order (NaN last), as an array of `v`'s shape.
        /// An array of other than one axis is [`ArrayShapeError::Dimension`].
        fn searchsorted[S2: Storage<Elem = S::Elem>, D2: Dimension](
            &self,
            v: &DeviceArrayBase<S2, D2>,
            side: Side,
        ) -> Result<DeviceArray<i64, D2>>;

        /// [`searchsorted`](Self::searchsorted) in this 1-D array read in the order `sorter`
        /// gives (NumPy's `searchsorted(a, v, side, sorter)`, `sorter` typically
        /// [`argsort`](Self::argsort)`()`): the positions are into `a[sorter]`. `sorter` must have
        /// one index per element ([`ArrayShapeError::ElementCounts`] otherwise) and each in
        /// range as [`take`](Self::take)'s [`IndexMode::Raise`] reads it (a negative one counts
        /// from the end, where NumPy raises), else [`ArrayShapeError::IndexOutOfRange`]. Waits
        /// for that range check, as `take` does.
        fn searchsorted_sorter[S2: Storage<Elem = S::Elem>, D2: Dimension, SI: Storage<Elem: IndexElement>](
            &self,
            v: &DeviceArrayBase<S2, D2>,
            side: Side,
            sorter: &DeviceArrayBase<SI, Ix1>,
        ) -> Result<DeviceArray<i64, D2>>;
    }
}

/// The sorts on a stream (`a.on(&stream).sort()`): the one body of each.
impl<S: Storage<Elem: Element>, D: Dimension> OnStream<'_, &DeviceArrayBase<S, D>> {
    /// [`sort`](DeviceArrayBase::sort) on this stream.
    pub fn sort(&self) -> Result<DeviceArray<S::Elem, D>> {
        self.sort_axis(-1)
    }

    /// [`sort_axis`](DeviceArrayBase::sort_axis) on this stream.
    pub fn sort_axis(&self, axis: isize) -> Result<DeviceArray<S::Elem, D>> {
        self.by_rows("DeviceArray::sort", axis, |out| {
            (Some(&mut out.data), Indices::None)
        })
    }

    /// Sorts the rows of the array along `axis` (`operation` names it in errors), each row
    /// contiguous (copied so first when it is not): `to` says where the sorted elements and
    /// their positions go in the result, of the rows' shape, whose axes are then put back.
    fn by_rows<R: Element>(
        &self,
        operation: &'static str,
        axis: isize,
        to: impl for<'o> FnOnce(&'o mut DeviceArray<R, D>) -> (Option<&'o mut DeviceBuffer<S::Elem>>, Indices<'o>),
    ) -> Result<DeviceArray<R, D>> {
        let x = self.target;
        radix::key_of::<S::Elem>(operation)?;
        let axis = normalize_axis(operation, axis, x.ndim())?;
        let copy = rows_copy(x, self.stream, axis)?;
        let src: DeviceArrayView<'_, S::Elem, D> = match &copy {
            Some(c) => c.view(),
            None => x.view(),
        };
        let mut out = DeviceArray::<R, D>::empty(x.context(), src.raw_dim())?;
        let (sorted, indices) = to(&mut out);
        radix::sort_rows::<S::Elem, _, DeviceBuffer<S::Elem>>(
            x.context(),
            self.stream,
            (src.storage(), src.offset() as i64),
            src.len(),
            src.shape()[x.ndim() - 1],
            sorted,
            indices,
            operation,
        )?;
        out.permuted_axes(&inverse(&axis_last(x.ndim(), axis)))
    }

    /// [`sort_flat`](DeviceArrayBase::sort_flat) on this stream.
    pub fn sort_flat(&self) -> Result<DeviceArray<S::Elem, Ix1>> {
        self.flat("DeviceArray::sort_flat", |out| {
            (Some(&mut out.data), Indices::None)
        })
    }

    /// Sorts the elements in C order (`operation` names it in errors; an array not in C order
    /// is copied so first) into a new 1-D result: `to` says where the sorted elements and their
    /// positions go in it.
    fn flat<R: Element>(
        &self,
        operation: &'static str,
        to: impl for<'o> FnOnce(
            &'o mut DeviceArray<R, Ix1>,
        ) -> (Option<&'o mut DeviceBuffer<S::Elem>>, Indices<'o>),
    ) -> Result<DeviceArray<R, Ix1>> {
        let x = self.target;
        radix::key_of::<S::Elem>(operation)?;
        let copy = (!x.is_standard_layout())
            .then(|| OnStream::new(x, self.stream).to_contiguous())
            .transpose()?;
        let mut out = DeviceArray::<R, Ix1>::empty(x.context(), x.len())?;
        let (data, offset) = match &copy {
            Some(c) => (c.view().data, c.offset()),
            None => (x.view().data, x.offset()),
        };
        let (sorted, indices) = to(&mut out);
        radix::sort_rows::<S::Elem, _, DeviceBuffer<S::Elem>>(
            x.context(),
            self.stream,
            (&data, offset as i64),
            x.len(),
            x.len(),
            sorted,
            indices,
            operation,
        )?;
        Ok(out)
    }

    /// [`argsort`](DeviceArrayBase::argsort) on this stream.
    pub fn argsort(&self) -> Result<DeviceArray<i64, D>> {
        self.argsort_axis(-1)
    }

    /// [`argsort_axis`](DeviceArrayBase::argsort_axis) on this stream.
    pub fn argsort_axis(&self, axis: isize) -> Result<DeviceArray<i64, D>> {
        self.by_rows("DeviceArray::argsort", axis, |out| {
            (None, Indices::I64(&mut out.data))
        })
    }

    /// [`argsort_flat`](DeviceArrayBase::argsort_flat) on this stream.
    pub fn argsort_flat(&self) -> Result<DeviceArray<i64, Ix1>> {
        self.flat("DeviceArray::argsort_flat", |out| {
            (None, Indices::I64(&mut out.data))
        })
    }

    /// [`unique_with`](DeviceArrayBase::unique_with) on this stream (waits for the count).
    pub fn unique_with(&self, options: UniqueOptions) -> Result<Unique<S::Elem>> {
        self.unique_nans(options, true)
    }

    /// [`unique_equal_nan`](DeviceArrayBase::unique_equal_nan) on this stream (waits for the
    /// count).
    pub fn unique_equal_nan(&self, options: UniqueOptions, equal_nan: bool) -> Result<Unique<S::Elem>> {
        self.unique_nans(options, equal_nan)
    }

    /// [`unique_all`](DeviceArrayBase::unique_all) on this stream (waits for the count).
    pub fn unique_all(&self) -> Result<UniqueAll<S::Elem>> {
        let run = self.unique_run(true, false)?;
        Ok(UniqueAll {
            indices: run.indices()?,
            inverse_indices: run.inverse()?,
            counts: run.counts()?,
            values: run.values,
        })
    }

    /// [`unique_counts`](DeviceArrayBase::unique_counts) on this stream (waits for the count).
    pub fn unique_counts(&self) -> Result<UniqueCounts<S::Elem>> {
        let run = self.unique_run(false, false)?;
        Ok(UniqueCounts {
            counts: run.counts()?,
            values: run.values,
        })
    }

    /// [`unique_inverse`](DeviceArrayBase::unique_inverse) on this stream (waits for the
    /// count).
    pub fn unique_inverse(&self) -> Result<UniqueInverse<S::Elem>> {
        let run = self.unique_run(true, false)?;
        Ok(UniqueInverse {
            inverse_indices: run.inverse()?,
            values: run.values,
        })
    }

    /// [`unique_values`](DeviceArrayBase::unique_values) on this stream (waits for the count).
    pub fn unique_values(&self) -> Result<DeviceArray<S::Elem, Ix1>> {
        Ok(self.unique_run(false, false)?.values)
    }

    /// NumPy's `unique(a, return_index, return_inverse, return_counts, equal_nan)`.
    fn unique_nans(&self, options: UniqueOptions, equal_nan: bool) -> Result<Unique<S::Elem>> {
        let run = self.unique_run(options.return_index || options.return_inverse, equal_nan)?;
        Ok(Unique {
            indices: options.return_index.then(|| run.indices()).transpose()?,
            inverse: options.return_inverse.then(|| run.inverse()).transpose()?,
            counts: options.return_counts.then(|| run.counts()).transpose()?,
            values: run.values,
        })
    }

    /// The sort of the elements and the unique values' places in it, from which
    /// [`UniqueRun`]'s methods compute the other parts of NumPy's `unique` (with the sort's
    /// permutation when `with_perm`).
    pub(crate) fn unique_run(&self, with_perm: bool, equal_nan: bool) -> Result<UniqueRun<'_, S::Elem>> {
        const OP: &str = "DeviceArray::unique";
        let x = self.target;
        let ctx = x.context();
        let stream = self.stream;
        let key = radix::key_of::<S::Elem>(OP)?;
        let n = x.len();
        radix::check_len(OP, n)?;
        let pool = ctx.device_pool()?;
        let mut run = UniqueRun {
            stream,
            shape: x.shape().to_vec(),
            values: DeviceArray::empty(ctx, 0)?,
            first: DeviceArray::empty(ctx, 0)?,
            pos: DeviceArray::empty(ctx, 0)?,
            perm: pool.alloc::<u32>(if with_perm { n.max(1) } else { 1 })?,
            bits: KeyType {
                kind: KeyKind::Unsigned,
                bytes: key.bytes,
            },
        };
        if n == 0 {
            return Ok(run);
        }
        let copy = (!x.is_standard_layout())
            .then(|| OnStream::new(x, stream).to_contiguous())
            .transpose()?;
        let (data, offset) = match &copy {
            Some(c) => (c.view().data, c.offset()),
            None => (x.view().data, x.offset()),
        };
        let mut sorted = pool.alloc::<S::Elem>(n)?;
        radix::sort_rows::<S::Elem, _, _>(
            ctx,
            stream,
            (&data, offset as i64),
            n,
            n,
            Some(&mut sorted),
            if with_perm {
                Indices::U32(&mut run.perm)
            } else {
                Indices::None
            },
            OP,
        )?;
        // Equal values have equal bits after the sort (one NaN, one zero). The bits of the
        // sort's one NaN (all but the sign bit) count as a value at each place when NaNs are
        // not equal.
        let (nan, nans_distinct) = match key.kind {
            KeyKind::Float { .. } if !equal_nan => (u64::MAX >> (65 - 8 * key.bytes), 1),
            _ => (0, 0),
        };
        let mut flags = DeviceArray::<u32, Ix1>::empty(ctx, n)?;
        run.run(
            "gpu_unique_flags",
            n,
            &[
                Arg::input::<S::Elem, _>(&sorted),
                Arg::output::<u32, _>(&mut flags.data),
                Arg::I64(n as i64),
                Arg::U64(nan),
                Arg::I32(nans_distinct),
            ],
        )?;
        run.pos = OnStream::new(&flags, stream).cumsum()?;
        let count = run.pos.slice(ndarray::s![n - 1..])?.to_vec()?[0] as usize;
        let mut values = DeviceArray::<S::Elem, Ix1>::empty(ctx, count)?;
        let mut first = DeviceArray::<i64, Ix1>::empty(ctx, count)?;
        run.run(
            "gpu_unique_scatter",
            n,
            &[
                Arg::input::<S::Elem, _>(&sorted),
                Arg::input::<u32, _>(&run.pos.data),
                Arg::output::<S::Elem, _>(&mut values.data),
                Arg::output::<i64, _>(&mut first.data),
                Arg::I64(n as i64),
                Arg::U64(nan),
                Arg::I32(nans_distinct),
            ],
        )?;
        (run.values, run.first) = (values, first);
        Ok(run)
    }

    /// [`searchsorted_sorter`](DeviceArrayBase::searchsorted_sorter) on this stream.
    pub fn searchsorted_sorter<S2, D2, SI>(
        &self,
        v: &DeviceArrayBase<S2, D2>,
        side: Side,
        sorter: &DeviceArrayBase<SI, Ix1>,
    ) -> Result<DeviceArray<i64, D2>>
    where
        S2: Storage<Elem = S::Elem>,
        D2: Dimension,
        SI: Storage<Elem: IndexElement>,
    {
        let a = self.target;
        radix::key_of::<S::Elem>("DeviceArray::searchsorted_sorter")?;
        one_axis(a.ndim())?;
        if sorter.len() != a.len() {
            return Err(ArrayShapeError::ElementCounts {
                operation: "DeviceArray::searchsorted_sorter",
                first: a.len(),
                second: sorter.len(),
            }
            .into());
        }
        // `a[sorter]`, gathered once: the search then reads it in order, as NumPy's does
        // through the indices.
        let sorted = self.take(sorter, 0, IndexMode::Raise)?;
        OnStream::new(&sorted, self.stream).searchsorted(v, side)
    }

    /// [`searchsorted`](DeviceArrayBase::searchsorted) on this stream.
    pub fn searchsorted<S2: Storage<Elem = S::Elem>, D2: Dimension>(
        &self,
        v: &DeviceArrayBase<S2, D2>,
        side: Side,
    ) -> Result<DeviceArray<i64, D2>> {
        const OP: &str = "DeviceArray::searchsorted";
        let a = self.target;
        let key = radix::key_of::<S::Elem>(OP)?;
        one_axis(a.ndim())?;
        let ctx = a.context();
        let mut out = DeviceArray::<i64, D2>::empty(ctx, v.raw_dim())?;
        let nv = v.len();
        if nv == 0 {
            return Ok(out);
        }
        let copy = (!v.is_standard_layout())
            .then(|| OnStream::new(v, self.stream).to_contiguous())
            .transpose()?;
        let (vdata, voff) = match &copy {
            Some(c) => (c.view().data, c.offset()),
            None => (v.view().data, v.offset()),
        };
        let f = radix::kernel(
            ctx,
            "gpu_searchsorted",
            &["gpu_searchsorted", &key.tag()],
            0,
            || source::searchsorted_source(key),
        )?;
        let step = if a.len() > 1 { a.strides()[0] as i64 } else { 1 };
        registry::launch(
            &f,
            registry::grid_for(ctx, nv as u64)?,
            BLOCK,
            self.stream,
            &[
                Arg::input::<S::Elem, _>(a.storage()),
                Arg::I64(a.offset() as i64),
                Arg::I64(step),
                Arg::I64(a.len() as i64),
                Arg::input::<S::Elem, _>(&vdata),
                Arg::I64(voff as i64),
                Arg::I64(nv as i64),
                Arg::output::<i64, _>(&mut out.data),
                Arg::I32((side == Side::Right) as i32),
            ],
        )?;
        Ok(out)
    }
}

/// The quantiles on a stream (`a.on(&stream).median()`).
/// The sorted unique values of an array and where each starts in its sort (`first`), the
/// running count of values at each sorted element (`pos`, from 1) and the sort's permutation,
/// from which NumPy's `unique` computes its other parts on `stream`.
pub(crate) struct UniqueRun<'s, T: Element> {
    stream: Option<&'s Stream>,
    /// The input's shape (the inverse's).
    shape: Vec<usize>,
    pub(crate) values: DeviceArray<T, Ix1>,
    first: DeviceArray<i64, Ix1>,
    pos: DeviceArray<u32, Ix1>,
    perm: crate::tools::device_pool::PooledBuffer<u32>,
    /// The elements' bits as the kernels read them.
    bits: KeyType,
}

impl<T: Element> UniqueRun<'_, T> {
    fn kernel(
        &self,
        ctx: &crate::driver::context::core::Context,
        name: &'static str,
    ) -> Result<crate::launch::PreparedFunction> {
        radix::kernel(ctx, name, &["gpu_unique", &self.bits.tag()], 0, || {
            source::unique_source(self.bits)
        })
    }

    /// Runs the unique kernel `name` over `threads` elements with `args`; nothing when there
    /// are none.
    fn run(&self, name: &'static str, threads: usize, args: &[Arg<'_>]) -> Result<()> {
        if threads > 0 {
            let ctx = self.values.context();
            let grid = registry::grid_for(ctx, threads as u64)?;
            registry::launch(&self.kernel(ctx, name)?, grid, BLOCK, self.stream, args)?;
        }
        Ok(())
    }

    /// How often each value occurs.
    fn counts(&self) -> Result<DeviceArray<i64, Ix1>> {
        let (count, n) = (self.values.len(), self.pos.len());
        let mut c = DeviceArray::<i64, Ix1>::empty(self.values.context(), count)?;
        let out = Arg::output::<i64, _>(&mut c.data);
        let first = Arg::input::<i64, _>(&self.first.data);
        self.run(
            "gpu_unique_counts",
            count,
            &[first, out, Arg::I64(count as i64), Arg::I64(n as i64)],
        )?;
        Ok(c)
    }

    /// Each value's first position in the input (the run built with the permutation).
    pub(crate) fn indices(&self) -> Result<DeviceArray<i64, Ix1>> {
        let count = self.values.len();
        let mut c = DeviceArray::<i64, Ix1>::empty(self.values.context(), count)?;
        let (first, perm) = (
            Arg::input::<i64, _>(&self.first.data),
            Arg::input::<u32, _>(&self.perm),
        );
        let out = Arg::output::<i64, _>(&mut c.data);
        self.run(
            "gpu_unique_index",
            count,
            &[first, perm, out, Arg::I64(count as i64)],
        )?;
        Ok(c)
    }

    /// Each element's position among the values, in the input's shape (the run built with
    /// the permutation).
    fn inverse(&self) -> Result<DeviceArray<i64, IxDyn>> {
        let n = self.pos.len();
        let mut c = DeviceArray::<i64, IxDyn>::empty(self.values.context(), IxDyn(&self.shape))?;
        let (pos, perm) = (
            Arg::input::<u32, _>(&self.pos.data),
            Arg::input::<u32, _>(&self.perm),
        );
        let out = Arg::output::<i64, _>(&mut c.data);
        self.run("gpu_unique_inverse", n, &[pos, perm, out, Arg::I64(n as i64)])?;
        Ok(c)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn axes_count_from_the_end_and_out_of_range_is_an_error() {
        assert_eq!(normalize_axis("t", -1, 3).unwrap(), 2);
        assert_eq!(normalize_axis("t", 0, 3).unwrap(), 0);
        assert!(normalize_axis("t", 3, 3).is_err());
        assert!(normalize_axis("t", -4, 3).is_err());
        assert!(normalize_axis("t", -1, 0).is_err());
        assert_eq!(axis_last(3, 0), vec![1, 2, 0]);
        assert_eq!(inverse(&[1, 2, 0]), vec![2, 0, 1]);
    }
}
