//! The text of `{:?}` of a device array: `ndarray`'s `Debug` text for the same values and
//! layout, with the same limits (an axis too long is shown as its ends around `...`), followed
//! by the element type.
//!
//! Only the elements shown are read from the device: the layout gives their storage offsets
//! ([`Shown::offsets`]), which are read as a few runs of memory ([`runs`]), so a `{:?}` of an
//! array of any size reads at most [`MAX_SHOWN`] elements times [`RUN_DENSITY`]. The reading is
//! a closure, so the whole text is tested on host memory against `ndarray`'s own output.

use std::fmt;
use std::ops::Range;

use crate::error::Result;
use crate::gpuarray::array::layout;

/// `ndarray`'s threshold: arrays of fewer elements are shown whole.
const ARRAY_MANY_ELEMENT_LIMIT: usize = 500;
/// `ndarray`'s limit for the axes before the last two (shown as stacked blocks).
const AXIS_LIMIT_STACKED: usize = 6;
/// `ndarray`'s limit for the next-to-last axis (shown as a column of rows).
const AXIS_LIMIT_COL: usize = 11;
/// `ndarray`'s limit for the last axis (shown as a row).
const AXIS_LIMIT_ROW: usize = 11;
/// `ndarray`'s ellipsis.
const ELLIPSIS: &str = "...";

/// The most elements one `Debug` shows. The limits of `ndarray` bound every axis, but not their
/// number: with six axes or more its text may hold a hundred thousand elements; past this many,
/// the values are left out (the layout line stays) rather than read from the device.
pub(crate) const MAX_SHOWN: usize = 1 << 15;

/// A run of memory read in one copy covers at most this many storage elements per element
/// shown in it, so that gaps between shown elements (a row's two ends, a view's steps) are
/// read across only when short, and the elements read stay within this factor of those shown.
pub(crate) const RUN_DENSITY: usize = 4;

/// One axis as shown: its length and, when it is elided, how many indices are shown at each
/// end.
#[derive(Clone, Copy, Debug, PartialEq)]
struct AxisShown {
    len: usize,
    /// `Some(edge)`: indices `0..edge` and `len - edge..len`; `None`: all.
    edge: Option<usize>,
}

impl AxisShown {
    /// How many indices of the axis are shown.
    fn count(self) -> usize {
        self.edge.map_or(self.len, |e| 2 * e)
    }

    /// The shown indices, in order.
    fn indices(self) -> impl Iterator<Item = usize> {
        let (head, tail) = match self.edge {
            Some(e) => (0..e, self.len - e..self.len),
            None => (0..self.len, self.len..self.len),
        };
        head.chain(tail)
    }

    /// The position of shown index `i` among the shown ones.
    fn position(self, i: usize) -> usize {
        match self.edge {
            Some(e) if i >= e => i - (self.len - 2 * e),
            _ => i,
        }
    }
}

/// The indices `ndarray` shows of an array of `shape`: on each axis all of them, or the ends
/// around an ellipsis when the array has [`ARRAY_MANY_ELEMENT_LIMIT`] elements or more and the
/// axis is longer than its limit (as `ndarray`'s `FormatOptions` and `format_with_overflow`).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Shown {
    axes: Vec<AxisShown>,
}

impl Shown {
    pub(crate) fn new(shape: &[usize]) -> Shown {
        let nelem: usize = shape.iter().product();
        let limited = nelem >= ARRAY_MANY_ELEMENT_LIMIT;
        let n = shape.len();
        let axes = shape
            .iter()
            .enumerate()
            .map(|(k, &len)| {
                let limit = match n - 1 - k {
                    0 => AXIS_LIMIT_ROW,
                    1 => AXIS_LIMIT_COL,
                    _ => AXIS_LIMIT_STACKED,
                };
                let edge = (limited && len > limit).then_some(limit / 2);
                AxisShown { len, edge }
            })
            .collect();
        Shown { axes }
    }

    /// How many elements are shown (1 for a 0-d array, 0 for an empty one).
    pub(crate) fn count(&self) -> usize {
        self.axes.iter().map(|a| a.count()).product()
    }

    /// The storage offsets of the shown elements, in C order of the shown indices, for an
    /// array whose element at index zero lies at `offset` with `strides`.
    pub(crate) fn offsets(&self, offset: usize, strides: &[isize]) -> Vec<usize> {
        let mut out = vec![offset as isize];
        for (axis, &stride) in self.axes.iter().zip(strides) {
            let idx: Vec<usize> = axis.indices().collect();
            out = out
                .iter()
                .flat_map(|&base| idx.iter().map(move |&i| base + i as isize * stride))
                .collect();
        }
        // Every index lies inside the storage (the layout's invariant), so none is negative.
        out.into_iter().map(|o| o.max(0) as usize).collect()
    }
}

/// The ranges of storage to read so as to have every offset in `offsets`: sorted, without
/// overlap, each covering at most [`RUN_DENSITY`] storage elements per offset in it (a single
/// offset is a run of one), so that the elements read are at most `RUN_DENSITY` times the
/// distinct offsets.
pub(crate) fn runs(offsets: &[usize]) -> Vec<Range<usize>> {
    let mut sorted = offsets.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    let mut out: Vec<Range<usize>> = Vec::new();
    let mut in_run = 0;
    for o in sorted {
        match out.last_mut() {
            Some(run) if o + 1 - run.start <= RUN_DENSITY * (in_run + 1) => {
                run.end = o + 1;
                in_run += 1;
            }
            _ => {
                out.push(o..o + 1);
                in_run = 1;
            }
        }
    }
    out
}

/// The values at `offsets`, read through `read` (one call per run of [`runs`]).
fn read_values<T: Copy>(
    offsets: &[usize],
    mut read: impl FnMut(Range<usize>) -> Result<Vec<T>>,
) -> Result<Vec<T>> {
    let runs = runs(offsets);
    let data = runs
        .iter()
        .map(|r| read(r.clone()))
        .collect::<Result<Vec<Vec<T>>>>()?;
    Ok(offsets
        .iter()
        .map(|&o| {
            // The run holding `o`: the last one starting at or before it.
            let k = runs.partition_point(|r| r.start <= o) - 1;
            data[k][o - runs[k].start]
        })
        .collect())
}

/// `ndarray`'s `format_with_overflow`: the items `0..length`, or the ends around an ellipsis
/// when `edge` is given.
fn format_with_overflow(
    f: &mut fmt::Formatter<'_>,
    length: usize,
    edge: Option<usize>,
    separator: &str,
    fmt_elem: &mut dyn FnMut(&mut fmt::Formatter<'_>, usize) -> fmt::Result,
) -> fmt::Result {
    // The first and last `edge` (below `length / 2`: `Shown::new`), or every one.
    let tail = edge.map_or(length, |e| length - e);
    for i in (0..edge.unwrap_or(length)).chain(tail..length) {
        if i > 0 {
            f.write_str(separator)?;
        }
        if i == tail {
            f.write_str(ELLIPSIS)?;
            f.write_str(separator)?;
        }
        fmt_elem(f, i)?;
    }
    Ok(())
}

/// `ndarray`'s `format_array_inner` over the shown values (`values`, in C order of the shown
/// indices): the axes from `depth` on, starting at position `base` of `values`.
fn format_values<T: fmt::Debug>(
    f: &mut fmt::Formatter<'_>,
    axes: &[AxisShown],
    values: &[T],
    depth: usize,
    base: usize,
) -> fmt::Result {
    let rest = &axes[depth..];
    if rest.is_empty() {
        return fmt::Debug::fmt(&values[base], f);
    }
    // How far apart in `values` two shown indices of this axis are.
    let step: usize = rest[1..].iter().map(|a| a.count()).product();
    let axis = rest[0];
    if rest.len() == 1 {
        f.write_str("[")?;
        format_with_overflow(f, axis.len, axis.edge, ", ", &mut |f, i| {
            fmt::Debug::fmt(&values[base + axis.position(i)], f)
        })?;
        return f.write_str("]");
    }
    let separator = format!(",\n{}{}", "\n".repeat(rest.len() - 2), " ".repeat(depth + 1));
    f.write_str("[")?;
    format_with_overflow(f, axis.len, axis.edge, &separator, &mut |f, i| {
        format_values(f, axes, values, depth + 1, base + axis.position(i) * step)
    })?;
    f.write_str("]")
}

/// `ndarray`'s memory layout flags of a shape and strides, as its `Debug` prints them
/// (`Cc (0x5)`, `CFcf (0xf)`, `Custom (0x0)`), from its `array_layout` (whose separate test of
/// `Ix1`, a unit stride or at most one element, is the general test's answer on one axis).
fn layout_text(shape: &[usize], strides: &[isize]) -> String {
    const C: u32 = 0b01;
    const F: u32 = 0b10;
    const CPREFER: u32 = 0b0100;
    const FPREFER: u32 = 0b1000;
    let n = shape.len();
    let bits = if layout::is_c_contiguous(shape, strides) {
        if n <= 1 || shape.iter().filter(|&&l| l > 1).count() <= 1 {
            C | CPREFER | F | FPREFER
        } else {
            C | CPREFER
        }
    } else if n > 1 && layout::is_f_contiguous(shape, strides) {
        F | FPREFER
    } else if n > 1 && shape[0] > 1 && strides[0] == 1 {
        FPREFER
    } else if n > 1 && shape[n - 1] > 1 && strides[n - 1] == 1 {
        CPREFER
    } else {
        0
    };
    let mut text = String::new();
    if bits == 0 {
        text.push_str("Custom");
    } else {
        for (i, name) in ["C", "F", "c", "f"].iter().enumerate() {
            if bits & (1 << i) != 0 {
                text.push_str(name);
            }
        }
    }
    text + &format!(" ({bits:#x})")
}

/// What `{:?}` of a device array shows, apart from the values.
pub(crate) struct Described<'a, E> {
    pub(crate) shape: &'a [usize],
    pub(crate) strides: &'a [isize],
    pub(crate) offset: usize,
    /// `Some(n)` for a dimension type of `n` axes, `None` for `IxDyn`.
    pub(crate) fixed_ndim: Option<usize>,
    pub(crate) dtype: E,
    /// The length of the storage in elements (shown by `{:#?}`).
    pub(crate) storage_len: usize,
}

/// Writes `{:?}` of an array: its values as `ndarray` shows them (read through `read`, which
/// is given storage ranges and is called only for the runs holding shown elements), then
/// `ndarray`'s line `, shape=[..], strides=[..], layout=.., const ndim=2` and `, dtype=..`;
/// `{:#?}` adds the offset and the storage length. When `read` fails, the values are
/// `<values unavailable: {error}>`.
pub(crate) fn write_debug<T: fmt::Debug + Copy, E: fmt::Debug>(
    f: &mut fmt::Formatter<'_>,
    array: &Described<'_, E>,
    read: impl FnMut(Range<usize>) -> Result<Vec<T>>,
) -> fmt::Result {
    let shown = Shown::new(array.shape);
    let ndim = array.shape.len();
    if shown.count() == 0 {
        // `ndarray`'s text of every empty array, whatever its axes.
        write!(f, "{}{}", "[".repeat(ndim), "]".repeat(ndim))?;
    } else if shown.count() > MAX_SHOWN {
        write!(
            f,
            "<values not shown: {} of them would be, more than {MAX_SHOWN}>",
            shown.count()
        )?;
    } else {
        let offsets = shown.offsets(array.offset, array.strides);
        match read_values(&offsets, read) {
            Ok(values) => format_values(f, &shown.axes, &values, 0, 0)?,
            Err(e) => write!(f, "<values unavailable: {e}>")?,
        }
    }
    write!(
        f,
        ", shape={:?}, strides={:?}, layout={}",
        array.shape,
        array.strides,
        layout_text(array.shape, array.strides)
    )?;
    match array.fixed_ndim {
        Some(n) => write!(f, ", const ndim={n}")?,
        None => write!(f, ", dynamic ndim={ndim}")?,
    }
    write!(f, ", dtype={:?}", array.dtype)?;
    if f.alternate() {
        write!(f, ", offset={}, storage_len={}", array.offset, array.storage_len)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;

    use ndarray::{s, Array, ArrayView, Dimension, IxDyn};

    use super::*;
    use crate::error::ArrayShapeError;

    /// A small deterministic generator (xorshift), for values that differ from element to
    /// element.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        fn f32(&mut self) -> f32 {
            (self.next() >> 40) as f32 / (1u64 << 24) as f32 * 200.0 - 100.0
        }
    }

    /// `view`, whose elements lie in `storage`, shown through [`write_debug`] (as a device
    /// array is, with host memory for the device's), counting the storage elements read.
    struct Show<'a, T, D: Dimension> {
        view: &'a ArrayView<'a, T, D>,
        storage: &'a [T],
        read_count: Cell<usize>,
    }

    impl<'a, T, D: Dimension> Show<'a, T, D> {
        fn new(view: &'a ArrayView<'a, T, D>, storage: &'a [T]) -> Self {
            Show {
                view,
                storage,
                read_count: Cell::new(0),
            }
        }
    }

    impl<T: fmt::Debug + Copy, D: Dimension> fmt::Debug for Show<'_, T, D> {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            // SAFETY: the view is a view of `storage`: both pointers are into one allocation.
            let offset = unsafe { self.view.as_ptr().offset_from(self.storage.as_ptr()) };
            let described = Described {
                shape: self.view.shape(),
                strides: self.view.strides(),
                offset: offset as usize,
                fixed_ndim: D::NDIM,
                dtype: "T",
                storage_len: self.storage.len(),
            };
            write_debug(f, &described, |r: Range<usize>| {
                self.read_count.set(self.read_count.get() + r.len());
                Ok(self.storage[r].to_vec())
            })
        }
    }

    /// `{:?}` of `view` and the number of storage elements read.
    fn debug_of<T: fmt::Debug + Copy, D: Dimension>(
        view: &ArrayView<'_, T, D>,
        storage: &[T],
    ) -> (String, usize) {
        let show = Show::new(view, storage);
        let text = format!("{show:?}");
        (text, show.read_count.get())
    }

    /// Checks `{:?}` of `view` against `ndarray`'s, and that it read at most
    /// `RUN_DENSITY` elements per element shown.
    fn check<T: fmt::Debug + Copy, D: Dimension>(view: ArrayView<'_, T, D>, storage: &[T]) {
        let (ours, read) = debug_of(&view, storage);
        let expected = format!("{view:?}, dtype=\"T\"");
        assert_eq!(
            ours,
            expected,
            "shape {:?} strides {:?}",
            view.shape(),
            view.strides()
        );
        let shown = Shown::new(view.shape()).count();
        assert!(read <= RUN_DENSITY * shown, "read {read} for {shown} shown");
    }

    fn random(n: usize, seed: u64) -> Vec<f32> {
        let mut rng = Rng(seed);
        (0..n).map(|_| rng.f32()).collect()
    }

    #[test]
    fn small_arrays_whole_as_ndarray() {
        let data = random(4 * 5 * 6, 1);
        let a = Array::from_shape_vec((4, 5, 6), data.clone()).unwrap();
        let st = a.as_slice().unwrap();
        check(a.view(), st);
        check(a.t(), st);
        check(a.slice(s![1..3, ..;2, 3]), st);
        check(a.slice(s![..;-1, 2, ..]), st);
        check(a.slice(s![0, 0, 0]), st);
        check(a.view().into_dyn(), st);
        let b = Array::from_shape_vec(7, data[..7].to_vec()).unwrap();
        check(b.view(), b.as_slice().unwrap());
    }

    #[test]
    fn large_arrays_elided_as_ndarray_reading_only_what_is_shown() {
        let data = random(300 * 400, 2);
        let a = Array::from_shape_vec((300, 400), data).unwrap();
        let st = a.as_slice().unwrap();
        check(a.view(), st);
        check(a.t(), st);
        check(a.slice(s![..;3, 7]), st);
        check(a.slice(s![5..200;-7, 1..;9]), st);
        check(a.view().into_shape_with_order((2, 3, 4, 5, 1000)).unwrap(), st);
        check(
            a.view()
                .into_shape_with_order((30, 4, 10, 100))
                .unwrap()
                .permuted_axes([2, 0, 3, 1]),
            st,
        );
        check(a.view().into_shape_with_order(120_000).unwrap(), st);
        // Exactly at and below `ndarray`'s threshold of 500 elements.
        check(a.slice(s![..5, ..100]), st);
        check(a.slice(s![..5, ..99]), st);
        let flat = a.view().into_shape_with_order(120_000).unwrap();
        check(flat.slice(s![..499]), st);
        check(flat.slice(s![..500]), st);
        // A transposed view of a large array reads its corners, not its span.
        let (_, read) = debug_of(&a.t(), st);
        assert!(read <= 4 * 100, "{read}");
    }

    #[test]
    fn broadcast_zero_d_and_empty_as_ndarray() {
        let data = random(600, 3);
        let row = Array::from_shape_vec(600, data).unwrap();
        let st = row.as_slice().unwrap();
        check(row.broadcast((700, 600)).unwrap(), st);
        check(row.broadcast((3, 600)).unwrap(), st);
        check(row.broadcast((2, 3, 600)).unwrap().permuted_axes([2, 0, 1]), st);
        let zero_d = row.slice(s![17]);
        check(zero_d, st);
        check(zero_d.into_dyn(), st);
        let empty: [f32; 0] = [];
        for shape in [vec![0], vec![3, 0], vec![0, 4, 5], vec![2, 0, 0]] {
            let e = ArrayView::from_shape(IxDyn(&shape), &empty).unwrap();
            check(e, &empty);
        }
        let e2 = ArrayView::from_shape((4, 0), &empty).unwrap();
        check(e2, &empty);
    }

    #[test]
    fn every_element_type_and_formatter_flag() {
        let bools: Vec<bool> = (0..12).map(|i| i % 3 == 0).collect();
        let a = Array::from_shape_vec((3, 4), bools).unwrap();
        check(a.view(), a.as_slice().unwrap());
        let halves: Vec<half::f16> = random(900, 4).into_iter().map(half::f16::from_f32).collect();
        let h = Array::from_shape_vec((30, 30), halves).unwrap();
        check(h.t(), h.as_slice().unwrap());
        let bh: Vec<half::bf16> = random(20, 5).into_iter().map(half::bf16::from_f32).collect();
        check(ArrayView::from_shape(20, &bh).unwrap(), &bh);
        let cs: Vec<num_complex::Complex32> = random(1200, 6)
            .chunks(2)
            .map(|p| num_complex::Complex32::new(p[0], p[1]))
            .collect();
        let c = Array::from_shape_vec((20, 30), cs).unwrap();
        check(c.view(), c.as_slice().unwrap());
        let ints: Vec<u8> = (0..=255).collect();
        check(ArrayView::from_shape((16, 16), &ints).unwrap(), &ints);
        // The formatter's flags reach the elements, as in `ndarray`.
        let data = random(12, 7);
        let v = ArrayView::from_shape((3, 4), &data).unwrap();
        let show = Show::new(&v, &data);
        assert_eq!(format!("{show:.2?}"), format!("{v:.2?}, dtype=\"T\""));
        assert_eq!(format!("{show:>9.1?}"), format!("{v:>9.1?}, dtype=\"T\""));
    }

    #[test]
    fn alternate_keeps_the_limits_and_adds_the_offset() {
        let data = random(1000, 8);
        let a = ArrayView::from_shape((10, 100), &data).unwrap();
        let view = a.slice(s![1.., 1..]);
        let show = Show::new(&view, &data);
        let alt = format!("{show:#?}");
        let read = show.read_count.get();
        assert!(alt.contains("..."), "{alt}");
        assert!(
            alt.ends_with(", dtype=\"T\", offset=101, storage_len=1000"),
            "{alt}"
        );
        assert!(read <= RUN_DENSITY * 100);
    }

    #[test]
    fn a_failed_read_shows_the_layout_and_the_error() {
        struct Failing;
        impl fmt::Debug for Failing {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                let described = Described {
                    shape: &[2, 3],
                    strides: &[3, 1],
                    offset: 0,
                    fixed_ndim: Some(2),
                    dtype: "T",
                    storage_len: 6,
                };
                write_debug::<f32, _>(f, &described, |_| {
                    Err(ArrayShapeError::Dimension { axes: 2, fixed: 3 }.into())
                })
            }
        }
        let text = format!("{Failing:?}");
        let error = crate::Error::from(ArrayShapeError::Dimension { axes: 2, fixed: 3 });
        assert_eq!(
            text,
            format!(
                "<values unavailable: {error}>, shape=[2, 3], strides=[3, 1], layout=Cc (0x5), \
                 const ndim=2, dtype=\"T\""
            )
        );
    }

    #[test]
    fn too_many_axes_show_the_layout_without_reading() {
        let data = random(1, 9);
        let one = ArrayView::from_shape(1, &data).unwrap();
        let v = one.broadcast(IxDyn(&[7; 8])).unwrap();
        let (text, read) = debug_of(&v, &data);
        assert_eq!(read, 0);
        assert_eq!(
            text,
            format!(
                "<values not shown: {} of them would be, more than {MAX_SHOWN}>, \
                 shape=[7, 7, 7, 7, 7, 7, 7, 7], strides=[0, 0, 0, 0, 0, 0, 0, 0], \
                 layout=Custom (0x0), dynamic ndim=8, dtype=\"T\"",
                6usize.pow(6) * 49
            )
        );
    }

    #[test]
    fn runs_cover_every_offset_within_the_density() {
        assert_eq!(runs(&[5, 0, 1, 2, 3, 4]), vec![0..6]);
        assert_eq!(runs(&[0, 1000, 1]), vec![0..2, 1000..1001]);
        assert_eq!(runs(&[0, 3, 6]), vec![0..7]);
        assert_eq!(runs(&[0, 4, 9]), vec![0..10]);
        assert_eq!(runs(&[0, 4, 13]), vec![0..5, 13..14]);
        assert_eq!(runs(&[7, 7, 7]), vec![7..8]);
        assert_eq!(runs(&[]), Vec::<Range<usize>>::new());
    }
}
