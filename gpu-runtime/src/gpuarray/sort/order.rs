//! Orders built on the stable sort: NumPy's `lexsort` (an argsort per key, the first key
//! first and the primary one last, each applied to the order so far) and
//! `partition`/`argpartition` (a full sort is one valid partition: NumPy leaves the order
//! inside each part unspecified).

use ndarray::{Dimension, IxDyn};

use crate::error::{ArrayShapeError, Result};
use crate::gpuarray::array::axes::index_along;
use crate::gpuarray::array::axes::normalize_axis;
use crate::gpuarray::array::core::{DeviceArray, DeviceArrayBase, Storage};
use crate::gpuarray::array::on_stream::{on_legacy_stream, OnStream};
use crate::gpuarray::elements::element::Element;

/// Checks each of `kth` (negative: from the end) against an axis of length `len`.
fn check_kth(operation: &'static str, kth: &[isize], len: usize) -> Result<()> {
    for &k in kth {
        let inside = if k < 0 {
            k.unsigned_abs() <= len
        } else {
            (k as usize) < len
        };
        if !inside {
            return Err(ArrayShapeError::IndexOutOfRange {
                operation,
                index: k as i64,
                len,
            }
            .into());
        }
    }
    Ok(())
}

/// The positions that sort by several keys (NumPy's `lexsort(keys)`): `keys[i]` is the i-th
/// key (the first axis counts them), the last key the primary one, ties broken by the key
/// before it, and so on; equal in every key, the first position first. The keys are sorted
/// along their last axis: a 2-d array of `(k, n)` gives `n` positions, one of more axes a
/// set of positions per row (`keys.shape()[1..]`); a 1-d array is one key (its `argsort`).
/// NaN last in each key. A 0-d array is [`ArrayShapeError::ZeroDimensional`], no keys (a
/// first axis of 0) [`ArrayShapeError::NoArrays`].
///
/// ```no_run
/// use gpu_runtime::gpuarray::{self, DeviceArray};
/// use gpu_runtime::ndarray::arr2;
/// let ctx = gpu_runtime::Context::default()?;
/// // NumPy's example: sort by the second row, then the first.
/// let keys = DeviceArray::from_ndarray(&ctx, &arr2(&[[9, 4, 0, 4, 0, 2, 1], [1, 5, 1, 4, 3, 4, 4]]))?;
/// assert_eq!(gpuarray::lexsort(&keys)?.to_vec()?, [2, 0, 4, 6, 5, 3, 1]);
/// # Ok::<(), gpu_runtime::Error>(())
/// ```
pub fn lexsort<S: Storage<Elem: Element>, D: Dimension>(
    keys: &DeviceArrayBase<S, D>,
) -> Result<DeviceArray<i64, IxDyn>> {
    OnStream::legacy(keys).lexsort()
}

impl<S: Storage<Elem: Element>, D: Dimension> OnStream<'_, &DeviceArrayBase<S, D>> {
    /// [`lexsort`] of these keys on this stream.
    pub fn lexsort(&self) -> Result<DeviceArray<i64, IxDyn>> {
        const OP: &str = "lexsort";
        let keys = self.target.view().into_dyn();
        match keys.ndim() {
            0 => return Err(ArrayShapeError::ZeroDimensional { operation: OP }.into()),
            1 => return OnStream::new(&keys, self.stream).argsort(),
            _ => {}
        }
        let count = keys.shape()[0];
        if count == 0 {
            return Err(ArrayShapeError::NoArrays { operation: OP }.into());
        }
        let key = |i: usize| keys.slice(&index_along(keys.ndim(), 0, i)[..]);
        // Least significant first (the first key), the primary last: each stable sort keeps
        // the order of the sorts before it among its ties.
        let mut order = OnStream::new(&key(0)?, self.stream).argsort()?;
        for i in 1..count {
            // The key in the order so far, sorted stably: ties keep that order.
            let permuted = OnStream::new(&key(i)?, self.stream).take_along_axis(&order, -1)?;
            let by_key = OnStream::new(&permuted, self.stream).argsort()?;
            order = OnStream::new(&order, self.stream).take_along_axis(&by_key, -1)?;
        }
        Ok(order)
    }

    /// [`partition`](DeviceArrayBase::partition) on this stream.
    pub fn partition(&self, kth: &[isize], axis: isize) -> Result<DeviceArray<S::Elem, D>> {
        let a = self.target;
        let k = normalize_axis("DeviceArray::partition", axis, a.ndim())?;
        check_kth("DeviceArray::partition", kth, a.shape()[k])?;
        self.sort_axis(axis)
    }

    /// [`argpartition`](DeviceArrayBase::argpartition) on this stream.
    pub fn argpartition(&self, kth: &[isize], axis: isize) -> Result<DeviceArray<i64, D>> {
        let a = self.target;
        let k = normalize_axis("DeviceArray::argpartition", axis, a.ndim())?;
        check_kth("DeviceArray::argpartition", kth, a.shape()[k])?;
        self.argsort_axis(axis)
    }
}

impl<S: Storage<Elem: Element>, D: Dimension> DeviceArrayBase<S, D> {
    on_legacy_stream! {
        /// A copy in which the element at each position of `kth` along `axis` (negative: from
        /// the end) is the one a sort would put there, the smaller ones before it and the larger
        /// after (NumPy's `partition(a, kth, axis)`; NaN last). NumPy leaves the order inside each
        /// part unspecified: here it is sorted (a stable sort is one valid partition, and costs
        /// about what a selection does on a GPU). A position outside the axis is
        /// [`ArrayShapeError::IndexOutOfRange`].
        fn partition(&self, kth: &[isize], axis: isize) -> Result<DeviceArray<S::Elem, D>>;

        /// The positions that [`partition`](Self::partition) the array (NumPy's
        /// `argpartition(a, kth, axis)`): here the stable sort's, as `argsort_axis`.
        fn argpartition(&self, kth: &[isize], axis: isize) -> Result<DeviceArray<i64, D>>;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kth_counts_from_either_end_as_numpys() {
        assert!(check_kth("p", &[0, 4, -1, -5], 5).is_ok());
        assert!(check_kth("p", &[], 0).is_ok());
        for bad in [5isize, -6] {
            let e = check_kth("p", &[0, bad], 5).unwrap_err();
            assert!(
                matches!(e, crate::Error::Shape(ArrayShapeError::IndexOutOfRange { index, len: 5, .. }) if index == bad as i64),
                "{e}"
            );
        }
    }
}
