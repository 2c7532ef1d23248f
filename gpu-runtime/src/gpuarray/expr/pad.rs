//! NumPy's `pad`: an array grown by a border along each axis. A constant border is a filled
//! array with the source copied into its middle; the modes that repeat elements take, along
//! each padded axis in turn, the source index each result index reads (an index map made on
//! the host, NumPy's definition of the mode, unit-tested here). The modes that compute their
//! border (`linear_ramp`, constants per side, the statistics) are in `pad_fill`.

use ndarray::{Dimension, IxDyn, SliceInfoElem};

use crate::error::{counts_error, ArrayShapeError, Result};
use crate::gpuarray::array::core::{DeviceArray, DeviceArrayBase, Storage};
use crate::gpuarray::array::layout;
use crate::gpuarray::array::on_stream::{on_legacy_stream, OnStream};
use crate::gpuarray::copy::gather::IndexMode;
use crate::gpuarray::elements::element::Element;

/// How [`pad`](DeviceArrayBase::pad) fills the border (NumPy's `mode=`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum PadMode<T> {
    /// Every new element is the value (`'constant'` with `constant_values=value`; NumPy's
    /// default is `Constant(0)`).
    Constant(T),
    /// The edge element repeated (`'edge'`).
    Edge,
    /// The axis mirrored about its edge element, which is not repeated (`'reflect'`):
    /// `[1, 2, 3]` padded by 2 on each side is `[3, 2, 1, 2, 3, 2, 1]`.
    Reflect,
    /// The axis mirrored with its edge element repeated (`'symmetric'`):
    /// `[1, 2, 3]` by 2 is `[2, 1, 1, 2, 3, 3, 2]`.
    Symmetric,
    /// `'reflect'` with `reflect_type='odd'`: each border element is twice the edge element
    /// less its mirror image, `[1, 2, 3]` by 2 is `[-1, 0, 1, 2, 3, 4, 5]` (a border wider
    /// than the axis mirrors what was padded before, as NumPy's rounds do). Not on `Bool`.
    ReflectOdd,
    /// `'symmetric'` with `reflect_type='odd'`: `[1, 2, 3]` by 2 is `[0, 1, 1, 2, 3, 3, 4]`.
    SymmetricOdd,
    /// The axis repeated, its end before its start (`'wrap'`): `[1, 2, 3]` by 2 is
    /// `[2, 3, 1, 2, 3, 1, 2]`.
    Wrap,
    /// A straight line from the value at the outer edge to the edge element
    /// (`'linear_ramp'` with `end_values=value`): `[1, 2, 3]` by 2 with 5 is
    /// `[5, 3, 1, 2, 3, 4, 5]`. Other values per side:
    /// [`pad_linear_ramp`](DeviceArrayBase::pad_linear_ramp).
    LinearRamp(T),
    /// The border left unset (`'empty'`): its elements are whatever the memory held.
    Empty,
}

const OP: &str = "DeviceArray::pad";

/// An axis of `len` padded by `before` and `after`, or [`ArrayShapeError::ElementsOverflow`]
/// of padding an array of `shape`.
pub(crate) fn grown(len: usize, (before, after): (usize, usize), shape: &[usize]) -> Result<usize> {
    len.checked_add(before)
        .and_then(|l| l.checked_add(after))
        .ok_or_else(|| {
            ArrayShapeError::ElementsOverflow {
                operation: OP,
                shape: shape.to_vec(),
            }
            .into()
        })
}

/// `pairs` for each of `ndim` axes: one pair for all of them, or one per axis (NumPy's
/// `pad_width`, `constant_values`, `end_values` and `stat_length` as `((b, a),)` or
/// `((b0, a0), (b1, a1), ...)`).
pub(crate) fn axis_widths<T: Copy>(pairs: &[(T, T)], ndim: usize) -> Result<Vec<(T, T)>> {
    match pairs {
        [one] => Ok(vec![*one; ndim]),
        w if w.len() == ndim => Ok(w.to_vec()),
        w => Err(counts_error(OP, ndim, w.len())),
    }
}

/// The source index along an axis of `len` elements of each of the `before + len + after`
/// result indices, by NumPy's definition of `mode`. The modes that compute their border
/// (`Constant`, `LinearRamp`, `Empty`) read the edge element here; the odd reflections never
/// come here (`pad` computes them in `pad_fill`) and are matched with their even forms only to
/// keep the match whole. An empty axis has no element to repeat: `None` when it is padded.
pub(crate) fn source_indices<T>(
    mode: &PadMode<T>,
    len: usize,
    before: usize,
    after: usize,
) -> Option<Vec<i64>> {
    let total = before + len + after;
    if len == 0 {
        return (total == 0).then(Vec::new);
    }
    let n = len as i64;
    let map = |i: usize| -> i64 {
        let j = i as i64 - before as i64;
        match mode {
            // The modes that compute their border read the edge element here.
            PadMode::Edge | PadMode::Constant(_) | PadMode::LinearRamp(_) | PadMode::Empty => {
                j.clamp(0, n - 1)
            }
            PadMode::Wrap => j.rem_euclid(n),
            PadMode::Reflect | PadMode::ReflectOdd if n == 1 => 0,
            PadMode::Reflect | PadMode::ReflectOdd => {
                let period = 2 * (n - 1);
                let k = j.rem_euclid(period);
                if k < n {
                    k
                } else {
                    period - k
                }
            }
            PadMode::Symmetric | PadMode::SymmetricOdd => {
                let k = j.rem_euclid(2 * n);
                if k < n {
                    k
                } else {
                    2 * n - 1 - k
                }
            }
        }
    };
    Some((0..total).map(map).collect())
}

/// The slices of the source's elements in an array padded by `widths`.
fn middle_of(shape: &[usize], widths: &[(usize, usize)]) -> Vec<SliceInfoElem> {
    shape
        .iter()
        .zip(widths)
        .map(|(&len, &(before, _))| SliceInfoElem::Slice {
            start: before as isize,
            end: Some((before + len) as isize),
            step: 1,
        })
        .collect()
}

impl<S: Storage<Elem: Element>, D: Dimension> DeviceArrayBase<S, D> {
    on_legacy_stream! {
        /// A new C-order array with `widths[k].0` elements before and `widths[k].1` after each
        /// axis `k` (one pair for every axis, or one per axis), filled as `mode` says (NumPy's
        /// `pad(a, pad_width, mode)`). An empty axis can only be padded with
        /// [`PadMode::Constant`] or [`PadMode::Empty`] ([`ArrayShapeError::PadEmptyAxis`],
        /// NumPy's `ValueError`). Constants per side:
        /// [`pad_constant_values`](Self::pad_constant_values); the statistics (NumPy's
        /// `'maximum'`, `'minimum'`, `'mean'`, `'median'`): [`pad_stat`](Self::pad_stat).
        ///
        /// ```no_run
        /// use gpu_runtime::gpuarray::{DeviceArray, PadMode};
        /// let ctx = gpu_runtime::Context::default()?;
        /// let a = DeviceArray::<i32, _>::arange(&ctx, 1.0, 4.0, 1.0)?;
        /// assert_eq!(a.pad(&[(1, 2)], PadMode::Constant(0))?.to_vec()?, [0, 1, 2, 3, 0, 0]);
        /// assert_eq!(a.pad(&[(2, 2)], PadMode::Reflect)?.to_vec()?, [3, 2, 1, 2, 3, 2, 1]);
        /// # Ok::<(), gpu_runtime::Error>(())
        /// ```
        fn pad(&self, widths: &[(usize, usize)], mode: PadMode<S::Elem>)
            -> Result<DeviceArray<S::Elem, D>>;
    }
}

impl<S: Storage<Elem: Element>, D: Dimension> OnStream<'_, &DeviceArrayBase<S, D>> {
    /// [`pad`](DeviceArrayBase::pad) on this stream.
    pub fn pad(&self, widths: &[(usize, usize)], mode: PadMode<S::Elem>) -> Result<DeviceArray<S::Elem, D>> {
        let a = self.target;
        let widths = axis_widths(widths, a.ndim())?;
        let mut shape = Vec::with_capacity(a.ndim());
        for (&len, &w) in a.shape().iter().zip(&widths) {
            shape.push(grown(len, w, a.shape())?);
        }
        layout::checked_size(OP, &shape)?;
        match mode {
            // The border filled (or left as it is), then the elements copied into the middle.
            PadMode::Constant(_) | PadMode::Empty => {
                let mut out = DeviceArray::<S::Elem, IxDyn>::empty(a.context(), IxDyn(&shape))?;
                if let PadMode::Constant(value) = mode {
                    OnStream::new(&mut out, self.stream).fill(value)?;
                }
                let middle = middle_of(a.shape(), &widths);
                let mut inside = out.view_mut().slice_move(&middle[..])?;
                OnStream::new(&mut inside, self.stream).copy_from(a)?;
                return out.into_dimensionality();
            }
            PadMode::LinearRamp(end) => return self.pad_linear_ramp(&widths, &[(end, end)]),
            PadMode::ReflectOdd => return self.pad_reflect_odd(&widths, false),
            PadMode::SymmetricOdd => return self.pad_reflect_odd(&widths, true),
            _ => {}
        }
        // One gather per padded axis, each reading what the one before made.
        let mut padded: Option<DeviceArray<S::Elem, IxDyn>> = None;
        for (k, (&len, &(before, after))) in a.shape().iter().zip(&widths).enumerate() {
            if before == 0 && after == 0 {
                continue;
            }
            let indices =
                source_indices(&mode, len, before, after).ok_or(ArrayShapeError::PadEmptyAxis { axis: k })?;
            let indices = DeviceArray::from_ndarray(a.context(), &ndarray::Array1::from(indices))?;
            padded = Some(match &padded {
                None => OnStream::new(a, self.stream).take(&indices, k, IndexMode::Clip)?,
                Some(p) => OnStream::new(p, self.stream).take(&indices, k, IndexMode::Clip)?,
            });
        }
        match padded {
            Some(p) => p.into_dimensionality(),
            None => OnStream::new(a, self.stream).copy(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;

    fn padded(mode: PadMode<i32>, a: &[i32], before: usize, after: usize) -> Vec<i32> {
        source_indices(&mode, a.len(), before, after)
            .unwrap()
            .iter()
            .map(|&i| a[i as usize])
            .collect()
    }

    /// NumPy's results, from `numpy.pad` (2.x).
    #[test]
    fn the_modes_are_numpys() {
        let a = [1, 2, 3];
        assert_eq!(padded(PadMode::Edge, &a, 2, 3), [1, 1, 1, 2, 3, 3, 3, 3]);
        assert_eq!(padded(PadMode::Wrap, &a, 2, 4), [2, 3, 1, 2, 3, 1, 2, 3, 1]);
        assert_eq!(padded(PadMode::Reflect, &a, 2, 2), [3, 2, 1, 2, 3, 2, 1]);
        // Past one period: np.pad([1, 2, 3], (5, 6), 'reflect').
        assert_eq!(
            padded(PadMode::Reflect, &a, 5, 6),
            [2, 1, 2, 3, 2, 1, 2, 3, 2, 1, 2, 3, 2, 1]
        );
        assert_eq!(padded(PadMode::Symmetric, &a, 2, 2), [2, 1, 1, 2, 3, 3, 2]);
        // np.pad([1, 2, 3], (4, 5), 'symmetric').
        assert_eq!(
            padded(PadMode::Symmetric, &a, 4, 5),
            [3, 3, 2, 1, 1, 2, 3, 3, 2, 1, 1, 2]
        );
        // One element: every mode repeats it.
        for mode in [PadMode::Edge, PadMode::Wrap, PadMode::Reflect, PadMode::Symmetric] {
            assert_eq!(padded(mode, &[7], 2, 1), [7, 7, 7, 7]);
        }
        assert_eq!(padded(PadMode::Wrap, &a, 0, 0), a);
        // An empty axis: nothing to repeat, unless it is not padded.
        assert_eq!(source_indices(&PadMode::<i32>::Edge, 0, 1, 0), None);
        assert_eq!(source_indices(&PadMode::<i32>::Edge, 0, 0, 0), Some(vec![]));
    }

    #[test]
    fn one_pair_is_every_axis_pair() {
        assert_eq!(axis_widths(&[(1, 2)], 3).unwrap(), [(1, 2); 3]);
        assert_eq!(axis_widths(&[(1, 2), (0, 3)], 2).unwrap(), [(1, 2), (0, 3)]);
        assert_eq!(axis_widths(&[(1, 2)], 0).unwrap(), []);
        let e = axis_widths(&[(1, 2), (0, 3)], 3).unwrap_err();
        assert!(
            matches!(
                e,
                Error::Shape(ArrayShapeError::ElementCounts {
                    first: 3,
                    second: 2,
                    ..
                })
            ),
            "{e}"
        );
    }
}
