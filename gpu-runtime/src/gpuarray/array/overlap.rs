//! Whether two arrays stand on the same memory: NumPy's `may_share_memory` (their extents
//! overlap) and `shares_memory` (some byte is an element of both), from the arrays' device
//! addresses, offsets, shapes and strides alone; nothing is launched or read.

use ndarray::Dimension;

use crate::gpuarray::array::core::{DeviceArrayBase, Storage};

/// Where an array's elements lie: its storage's device address, and its offset, shape and
/// strides in elements of `size` bytes.
struct Layout<'a> {
    base: i128,
    offset: i128,
    shape: &'a [usize],
    strides: &'a [isize],
    size: i128,
}

impl Layout<'_> {
    fn of<S: Storage, D: Dimension>(a: &DeviceArrayBase<S, D>) -> Layout<'_> {
        Layout {
            base: i128::from(a.storage().device_view().device_ptr()),
            offset: a.offset() as i128,
            shape: a.shape(),
            strides: a.strides(),
            size: std::mem::size_of::<S::Elem>() as i128,
        }
    }

    fn is_empty(&self) -> bool {
        self.shape.contains(&0)
    }

    /// The byte ranges `[start, end)` of each element, in no order.
    fn element_ranges(&self) -> Vec<(i128, i128)> {
        if self.is_empty() {
            return Vec::new();
        }
        let mut offsets = vec![self.offset];
        for (&n, &s) in self.shape.iter().zip(self.strides) {
            offsets = offsets
                .iter()
                .flat_map(|&o| (0..n as i128).map(move |i| o + i * s as i128))
                .collect();
        }
        offsets
            .into_iter()
            .map(|o| (self.base + o * self.size, self.base + (o + 1) * self.size))
            .collect()
    }

    /// The bytes `[start, end)` from the lowest element to the end of the highest, or `None`
    /// when there is no element.
    fn extent(&self) -> Option<(i128, i128)> {
        if self.is_empty() {
            return None;
        }
        let (mut lo, mut hi) = (self.offset, self.offset);
        for (&n, &s) in self.shape.iter().zip(self.strides) {
            let reach = (n as i128 - 1) * s as i128;
            if reach < 0 {
                lo += reach;
            } else {
                hi += reach;
            }
        }
        Some((self.base + lo * self.size, self.base + (hi + 1) * self.size))
    }
}

fn may_overlap(a: &Layout<'_>, b: &Layout<'_>) -> bool {
    match (a.extent(), b.extent()) {
        (Some((a0, a1)), Some((b0, b1))) => a0 < b1 && b0 < a1,
        _ => false,
    }
}

fn overlap(a: &Layout<'_>, b: &Layout<'_>) -> bool {
    if !may_overlap(a, b) {
        return false;
    }
    let (mut x, mut y) = (a.element_ranges(), b.element_ranges());
    x.sort_unstable();
    y.sort_unstable();
    // Two lists of ranges of one length each, sorted: walk both, as a merge does.
    let (mut i, mut j) = (0, 0);
    while i < x.len() && j < y.len() {
        let ((x0, x1), (y0, y1)) = (x[i], y[j]);
        if x0 < y1 && y0 < x1 {
            return true;
        }
        if x1 <= y1 {
            i += 1;
        } else {
            j += 1;
        }
    }
    false
}

/// Whether the memory from `a`'s lowest element to its highest overlaps `b`'s (NumPy's
/// `may_share_memory(a, b)`): `false` means no element of one is an element of the other;
/// `true` may be two interleaved views (`a[::2]` and `a[1::2]`) that share no byte, which
/// [`shares_memory`] tells apart. Empty arrays share nothing.
///
/// ```no_run
/// use gpu_runtime::gpuarray::{self, DeviceArray};
/// use gpu_runtime::ndarray::s;
/// let ctx = gpu_runtime::Context::default()?;
/// let a = DeviceArray::<f32, _>::zeros(&ctx, 10)?;
/// let (even, odd) = (a.slice(s![..;2])?, a.slice(s![1..;2])?);
/// assert!(gpuarray::may_share_memory(&even, &odd));
/// assert!(!gpuarray::shares_memory(&even, &odd));
/// assert!(gpuarray::shares_memory(&a, &odd));
/// # Ok::<(), gpu_runtime::Error>(())
/// ```
pub fn may_share_memory<S: Storage, D: Dimension, S2: Storage, D2: Dimension>(
    a: &DeviceArrayBase<S, D>,
    b: &DeviceArrayBase<S2, D2>,
) -> bool {
    may_overlap(&Layout::of(a), &Layout::of(b))
}

/// Whether some byte of device memory is part of an element of both `a` and `b` (NumPy's
/// `shares_memory(a, b)`, exactly): where the extents overlap, each array's element
/// addresses are listed on the host and compared, in time and memory linear in the two
/// arrays' element counts (NumPy's exact answer is likewise a search).
pub fn shares_memory<S: Storage, D: Dimension, S2: Storage, D2: Dimension>(
    a: &DeviceArrayBase<S, D>,
    b: &DeviceArrayBase<S2, D2>,
) -> bool {
    overlap(&Layout::of(a), &Layout::of(b))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layout<'a>(offset: i128, shape: &'a [usize], strides: &'a [isize], size: i128) -> Layout<'a> {
        Layout {
            base: 4096,
            offset,
            shape,
            strides,
            size,
        }
    }

    #[test]
    fn overlaps_are_numpys() {
        // a[::2] and a[1::2] of ten: extents overlap, no element does.
        let (even, odd) = (layout(0, &[5], &[2], 4), layout(1, &[5], &[2], 4));
        assert!(may_overlap(&even, &odd) && !overlap(&even, &odd));
        // The whole array and either half.
        let all = layout(0, &[10], &[1], 4);
        assert!(overlap(&all, &odd) && overlap(&even, &all));
        // Reversed, transposed and broadcast views of one matrix.
        let m = layout(0, &[3, 4], &[4, 1], 8);
        let t = layout(0, &[4, 3], &[1, 4], 8);
        let rev = layout(11, &[3, 4], &[-4, -1], 8);
        let row = layout(4, &[5, 4], &[0, 1], 8);
        assert!(overlap(&m, &t) && overlap(&rev, &m) && overlap(&row, &m));
        // The last row against the first two: adjacent, not shared.
        let (top, last) = (layout(0, &[2, 4], &[4, 1], 8), layout(8, &[1, 4], &[4, 1], 8));
        assert!(!may_overlap(&top, &last) && !overlap(&top, &last));
        // One byte in common: elements of 8 bytes against elements of 1 byte.
        let byte = layout(31, &[1], &[1], 1);
        assert!(overlap(&layout(3, &[1], &[1], 8), &byte));
        assert!(!overlap(&layout(4, &[1], &[1], 8), &byte));
        // Empty arrays share nothing.
        assert!(!may_overlap(&layout(0, &[0, 4], &[4, 1], 8), &m));
    }
}
