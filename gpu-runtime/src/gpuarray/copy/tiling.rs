//! Copies that rearrange or repeat elements: NumPy's `roll`, `repeat` and `tile`.
//!
//! `roll` along one axis of a C-order array is one kernel (`word_moves.rs`); along several, or
//! of another layout, it copies the two pieces of each rolled axis to their places (2^k copies
//! between views for k rolled axes). `repeat` and `tile` are one kernel per repeated axis
//! (`word_moves.rs`: a copy of a view with a new axis of stride 0 measured a third of the
//! copy's speed for `repeat` along the last axis); `repeat_each` (a count per element) gathers
//! through an index array made on the host.

use ndarray::{Array1, Dimension, IxDyn, SliceInfoElem};

use crate::driver::memory::view::{DeviceRead, DeviceWrite};
use crate::error::{check_counts, counts_error, ArrayShapeError, Result};
use crate::gpuarray::array::axes::normalize_axis;
use crate::gpuarray::array::core::{DeviceArray, DeviceArrayBase, Storage};
use crate::gpuarray::array::layout;
use crate::gpuarray::array::on_stream::{on_legacy_stream, OnStream};
use crate::gpuarray::copy::gather::IndexMode;
use crate::gpuarray::copy::word_moves;
use crate::gpuarray::elements::element::Element;

/// The net shift of each of `ndim` axes (of `shape`) after rolling each of `axes` by its shift
/// in `shifts` (NumPy's `roll`: the two lists broadcast against each other, an axis named
/// twice rolls by the sum), each in `0..len`.
pub(crate) fn net_shifts(shape: &[usize], shifts: &[isize], axes: &[isize]) -> Result<Vec<usize>> {
    const OP: &str = "DeviceArray::roll_axes";
    let n = match (shifts.len(), axes.len()) {
        (a, b) if a == b => a,
        (1, b) => b,
        (a, 1) => a,
        (a, b) => return Err(counts_error(OP, a, b)),
    };
    let mut net = vec![0i128; shape.len()];
    for j in 0..n {
        let shift = shifts[if shifts.len() == 1 { 0 } else { j }];
        let axis = axes[if axes.len() == 1 { 0 } else { j }];
        net[normalize_axis(OP, axis, shape.len())?] += shift as i128;
    }
    Ok(net
        .iter()
        .zip(shape)
        .map(|(&s, &len)| {
            if len == 0 {
                0
            } else {
                s.rem_euclid(len as i128) as usize
            }
        })
        .collect())
}

/// The pieces of an axis of length `len` rolled by `shift` (in `0..len`): `(to, from, count)`,
/// the elements `from..from + count` going to `to..to + count`.
pub(crate) fn roll_pieces(len: usize, shift: usize) -> Vec<(usize, usize, usize)> {
    if shift == 0 {
        vec![(0, 0, len)]
    } else {
        vec![(shift, 0, len - shift), (0, len - shift, shift)]
    }
}

/// `reps` padded with leading ones to `ndim` axes (NumPy's `tile` pads the shorter of the
/// array's shape and `reps`).
pub(crate) fn padded_reps(reps: &[usize], ndim: usize) -> Vec<usize> {
    std::iter::repeat_n(1, ndim.saturating_sub(reps.len()))
        .chain(reps.iter().copied())
        .collect()
}

/// The flat index of each element of the result of repeating element `i` of an axis
/// `counts[i]` times (NumPy's `repeat(a, counts, axis)`).
pub(crate) fn repeated_indices(counts: &[usize]) -> Vec<i64> {
    counts
        .iter()
        .enumerate()
        .flat_map(|(i, &c)| std::iter::repeat_n(i as i64, c))
        .collect()
}

fn range(start: usize, count: usize) -> SliceInfoElem {
    SliceInfoElem::Slice {
        start: start as isize,
        end: Some((start + count) as isize),
        step: 1,
    }
}

impl<S: Storage, D: Dimension> DeviceArrayBase<S, D> {
    on_legacy_stream! {
        /// A copy with the elements shifted `shift` places along `axis` (negative: from the end),
        /// those pushed past the end coming back at the start (NumPy's `roll(a, shift, axis)`);
        /// `axis: None` rolls the elements in C order and keeps the shape (NumPy's `axis=None`).
        ///
        /// ```no_run
        /// use gpu_runtime::gpuarray::DeviceArray;
        /// let ctx = gpu_runtime::Context::default()?;
        /// let a = DeviceArray::<f32, _>::arange(&ctx, 0.0, 5.0, 1.0)?;
        /// assert_eq!(a.roll(2, None)?.to_vec()?, [3.0, 4.0, 0.0, 1.0, 2.0]);
        /// # Ok::<(), gpu_runtime::Error>(())
        /// ```
        fn roll(&self, shift: isize, axis: Option<isize>) -> Result<DeviceArray<S::Elem, D>>;

        /// A copy rolled along several axes at once (NumPy's `roll(a, shifts, axes)` with tuples:
        /// `shifts` and `axes` of one length, or either of length 1 and used for all; an axis
        /// named twice rolls by the sum of its shifts).
        fn roll_axes(&self, shifts: &[isize], axes: &[isize]) -> Result<DeviceArray<S::Elem, D>>;

        /// A copy with each element repeated `repeats` times along `axis` (negative: from the
        /// end), so that axis is `repeats` times longer (NumPy's `repeat(a, repeats, axis)`);
        /// `axis: None` repeats the elements in C order into a 1-d array.
        ///
        /// ```no_run
        /// use gpu_runtime::gpuarray::DeviceArray;
        /// let ctx = gpu_runtime::Context::default()?;
        /// let a = DeviceArray::<i32, _>::arange(&ctx, 1.0, 4.0, 1.0)?;
        /// assert_eq!(a.repeat(2, Some(0))?.to_vec()?, [1, 1, 2, 2, 3, 3]);
        /// # Ok::<(), gpu_runtime::Error>(())
        /// ```
        fn repeat(&self, repeats: usize, axis: Option<isize>) -> Result<DeviceArray<S::Elem, IxDyn>>;

        /// A copy of the array repeated `reps[k]` times along each axis `k` (NumPy's
        /// `tile(a, reps)`): the shorter of the shape and `reps` is padded with leading ones, so the
        /// result has as many axes as the longer.
        ///
        /// ```no_run
        /// use gpu_runtime::gpuarray::DeviceArray;
        /// let ctx = gpu_runtime::Context::default()?;
        /// let a = DeviceArray::<i32, _>::arange(&ctx, 1.0, 3.0, 1.0)?;
        /// let t = a.tile(&[2, 2])?;
        /// assert_eq!(t.shape(), [2, 4]);
        /// assert_eq!(t.to_vec()?, [1, 2, 1, 2, 1, 2, 1, 2]);
        /// # Ok::<(), gpu_runtime::Error>(())
        /// ```
        fn tile(&self, reps: &[usize]) -> Result<DeviceArray<S::Elem, IxDyn>>;
    }
}

impl<S: Storage<Elem: Element>, D: Dimension> DeviceArrayBase<S, D> {
    on_legacy_stream! {
        /// A copy with element `i` along `axis` repeated `counts[i]` times (NumPy's
        /// `repeat(a, counts, axis)` with a list of counts; one count is
        /// [`repeat`](Self::repeat)); `axis: None` counts the elements in C order and gives a 1-d
        /// array. Counts of another number than the axis' length are
        /// [`ArrayShapeError::ElementCounts`].
        fn repeat_each(&self, counts: &[usize], axis: Option<isize>)
            -> Result<DeviceArray<S::Elem, IxDyn>>;
    }
}

impl<S: Storage, D: Dimension> OnStream<'_, &DeviceArrayBase<S, D>> {
    /// [`roll`](DeviceArrayBase::roll) on this stream.
    pub fn roll(&self, shift: isize, axis: Option<isize>) -> Result<DeviceArray<S::Elem, D>> {
        let a = self.target;
        match axis {
            Some(axis) => self.roll_axes(&[shift], &[axis]),
            None => {
                // A C-order array is its own flat view; others are copied first.
                let src = OnStream::new(a, self.stream).c_order()?;
                let flat = src.view().reshape(IxDyn(&[a.len()]))?;
                let net = net_shifts(flat.shape(), &[shift], &[0])?;
                let rolled = self.rolled(&flat, &net)?;
                rolled.reshape(IxDyn(a.shape()))?.into_dimensionality()
            }
        }
    }

    /// [`roll_axes`](DeviceArrayBase::roll_axes) on this stream.
    pub fn roll_axes(&self, shifts: &[isize], axes: &[isize]) -> Result<DeviceArray<S::Elem, D>> {
        let net = net_shifts(self.target.shape(), shifts, axes)?;
        self.rolled(self.target, &net)?.into_dimensionality()
    }

    /// [`repeat`](DeviceArrayBase::repeat) on this stream.
    pub fn repeat(&self, repeats: usize, axis: Option<isize>) -> Result<DeviceArray<S::Elem, IxDyn>> {
        match axis {
            None => {
                let src = OnStream::new(self.target, self.stream).c_order()?;
                let flat = src.view().reshape(IxDyn(&[self.target.len()]))?;
                self.stretched(&flat, 0, repeats, false)
            }
            Some(axis) => {
                let k = normalize_axis("DeviceArray::repeat", axis, self.target.ndim())?;
                self.stretched(self.target, k, repeats, false)
            }
        }
    }

    /// [`tile`](DeviceArrayBase::tile) on this stream.
    pub fn tile(&self, reps: &[usize]) -> Result<DeviceArray<S::Elem, IxDyn>> {
        let mut view = self.target.view().into_dyn();
        let ndim = view.ndim().max(reps.len());
        while view.ndim() < ndim {
            view = view.expand_dims(0)?;
        }
        let reps = padded_reps(reps, ndim);
        // One copy per axis repeated: each reads what the one before wrote.
        let mut tiled: Option<DeviceArray<S::Elem, IxDyn>> = None;
        for (k, &r) in reps.iter().enumerate().filter(|&(_, &r)| r != 1) {
            tiled = Some(match &tiled {
                None => self.stretched(&view, k, r, true)?,
                Some(t) => self.stretched(t, k, r, true)?,
            });
        }
        match tiled {
            Some(t) => Ok(t),
            None => OnStream::new(&view, self.stream).copy(),
        }
    }

    /// `a` with axis `axis` made `r` times longer: each element `r` times over (`whole`
    /// false: `repeat`) or the whole axis `r` times over (`whole`: `tile`), one kernel that
    /// reads each element of `a` (in C order; a copy first when it is not) once and writes it
    /// `r` times.
    fn stretched<S2: Storage<Elem = S::Elem>, D2: Dimension>(
        &self,
        a: &DeviceArrayBase<S2, D2>,
        axis: usize,
        r: usize,
        whole: bool,
    ) -> Result<DeviceArray<S::Elem, IxDyn>> {
        const OP: &str = "DeviceArray::repeat";
        let mut merged = a.shape().to_vec();
        merged[axis] = merged[axis]
            .checked_mul(r)
            .ok_or_else(|| ArrayShapeError::ElementsOverflow {
                operation: OP,
                shape: a.shape().to_vec(),
            })?;
        layout::checked_size(OP, &merged)?;
        let mut out = DeviceArray::<S::Elem, IxDyn>::empty(a.context(), IxDyn(&merged))?;
        if out.is_empty() {
            return Ok(out);
        }
        // The run of elements written `r` times in a row: the elements after the axis (one
        // element's worth, for `repeat`), or the axis with them (`tile`).
        let inner: usize = a.shape()[axis + 1..].iter().product();
        let unit = if whole { inner * a.shape()[axis] } else { inner };
        let src = OnStream::new(a, self.stream).c_order()?;
        let view = src.view();
        let x = DeviceRead::device_view(&view);
        word_moves::stretch(x, out.device_view_mut(), unit, r, self.stream)?;
        Ok(out)
    }

    /// `a` rolled by `net[k]` (in `0..len`) along each axis `k`: one copy per combination of
    /// the rolled axes' two pieces.
    fn rolled<S2: Storage<Elem = S::Elem>, D2: Dimension>(
        &self,
        a: &DeviceArrayBase<S2, D2>,
        net: &[usize],
    ) -> Result<DeviceArray<S::Elem, IxDyn>> {
        let shape = a.shape().to_vec();
        let mut out = DeviceArray::<S::Elem, IxDyn>::empty(a.context(), IxDyn(&shape))?;
        if out.is_empty() {
            return Ok(out);
        }
        let rolled: Vec<usize> = (0..shape.len()).filter(|&k| net[k] != 0).collect();
        match rolled[..] {
            [] => {
                OnStream::new(&mut out, self.stream).copy_from(a)?;
                return Ok(out);
            }
            // One axis of a C-order array: one kernel for both pieces.
            [k] if a.is_standard_layout() => {
                let inner: usize = shape[k + 1..].iter().product();
                let x = DeviceRead::device_view(a);
                word_moves::roll(x, out.device_view_mut(), inner, shape[k], net[k], self.stream)?;
                return Ok(out);
            }
            _ => {}
        }
        let pieces: Vec<_> = shape
            .iter()
            .zip(net)
            .map(|(&len, &s)| roll_pieces(len, s))
            .collect();
        let src = a.view().into_dyn();
        // Each combination of one piece per axis, counted as a number in mixed radix.
        let mut pick = vec![0usize; shape.len()];
        loop {
            let (mut to, mut from) = (Vec::with_capacity(pick.len()), Vec::with_capacity(pick.len()));
            for (k, &p) in pick.iter().enumerate() {
                let (t, f, count) = pieces[k][p];
                to.push(range(t, count));
                from.push(range(f, count));
            }
            let part = src.slice(&from[..])?;
            let mut dst = out.view_mut().slice_move(&to[..])?;
            OnStream::new(&mut dst, self.stream).copy_from(&part)?;
            let Some(k) = (0..pick.len()).rev().find(|&k| pick[k] + 1 < pieces[k].len()) else {
                break;
            };
            pick[k] += 1;
            pick[k + 1..].fill(0);
        }
        Ok(out)
    }
}

impl<S: Storage<Elem: Element>, D: Dimension> OnStream<'_, &DeviceArrayBase<S, D>> {
    /// [`repeat_each`](DeviceArrayBase::repeat_each) on this stream.
    pub fn repeat_each(&self, counts: &[usize], axis: Option<isize>) -> Result<DeviceArray<S::Elem, IxDyn>> {
        if let [count] = counts {
            return self.repeat(*count, axis);
        }
        match axis {
            None => {
                let flat = self.ravel()?;
                self.gathered(&flat, counts, 0)
            }
            Some(axis) => {
                let k = normalize_axis("DeviceArray::repeat_each", axis, self.target.ndim())?;
                self.gathered(self.target, counts, k)
            }
        }
    }

    /// `a` with element `i` of axis `k` taken `counts[i]` times.
    fn gathered<S2: Storage<Elem = S::Elem>, D2: Dimension>(
        &self,
        a: &DeviceArrayBase<S2, D2>,
        counts: &[usize],
        k: usize,
    ) -> Result<DeviceArray<S::Elem, IxDyn>> {
        const OP: &str = "DeviceArray::repeat_each";
        check_counts(OP, a.shape()[k], counts.len())?;
        let mut shape = a.shape().to_vec();
        shape[k] = counts
            .iter()
            .try_fold(0usize, |acc, &c| acc.checked_add(c))
            .ok_or_else(|| ArrayShapeError::ElementsOverflow {
                operation: OP,
                shape: a.shape().to_vec(),
            })?;
        layout::checked_size(OP, &shape)?;
        if shape[k] == 0 {
            return DeviceArray::empty(a.context(), IxDyn(&shape));
        }
        let indices = DeviceArray::from_ndarray(a.context(), &Array1::from(repeated_indices(counts)))?;
        OnStream::new(a, self.stream).take(&indices, k, IndexMode::Raise)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;

    #[test]
    fn shifts_add_up_per_axis_and_wrap_as_numpys() {
        assert_eq!(net_shifts(&[5, 2], &[1], &[0]).unwrap(), [1, 0]);
        assert_eq!(net_shifts(&[5, 2], &[11], &[0]).unwrap(), [1, 0]);
        assert_eq!(net_shifts(&[5, 2], &[-2], &[-2]).unwrap(), [3, 0]);
        // One shift for both axes; one axis for three shifts (their sum).
        assert_eq!(net_shifts(&[5, 2], &[1], &[0, 1]).unwrap(), [1, 1]);
        assert_eq!(net_shifts(&[5, 2], &[2, 1, 3], &[0]).unwrap(), [1, 0]);
        assert_eq!(net_shifts(&[5, 2], &[1], &[0, 0]).unwrap(), [2, 0]);
        assert_eq!(net_shifts(&[5, 2], &[2, 1], &[1, -1]).unwrap(), [0, 1]);
        assert_eq!(net_shifts(&[0, 2], &[3], &[0]).unwrap(), [0, 0]);
        let e = net_shifts(&[5, 2, 2], &[1, 0], &[0, 1, 2]).unwrap_err();
        assert!(
            matches!(
                e,
                Error::Shape(ArrayShapeError::ElementCounts {
                    first: 2,
                    second: 3,
                    ..
                })
            ),
            "{e}"
        );
        let e = net_shifts(&[5, 2], &[1], &[2]).unwrap_err();
        assert!(
            matches!(
                e,
                Error::Shape(ArrayShapeError::NoSuchAxis { axis: 2, axes: 2, .. })
            ),
            "{e}"
        );
        assert!(net_shifts(&[5, 2], &[1], &[-3]).is_err());
    }

    #[test]
    fn the_pieces_of_a_rolled_axis_cover_it_once() {
        for len in 1..7usize {
            for shift in 0..len {
                let mut dest = vec![usize::MAX; len];
                for (to, from, count) in roll_pieces(len, shift) {
                    for j in 0..count {
                        assert_eq!(dest[to + j], usize::MAX);
                        dest[to + j] = from + j;
                    }
                }
                let expected: Vec<usize> = (0..len).map(|i| (i + len - shift) % len).collect();
                assert_eq!(dest, expected, "len {len} shift {shift}");
            }
        }
    }

    #[test]
    fn reps_and_counts_follow_numpy() {
        assert_eq!(padded_reps(&[2], 3), [1, 1, 2]);
        assert_eq!(padded_reps(&[2, 3], 1), [2, 3]);
        assert_eq!(padded_reps(&[], 0), Vec::<usize>::new());
        assert_eq!(repeated_indices(&[2, 0, 3]), [0, 0, 2, 2, 2]);
        assert_eq!(repeated_indices(&[]), Vec::<i64>::new());
    }
}
