//! Where the elements of a strided host array lie in memory: the one computation every path
//! that hands an `ndarray` array's memory to the driver (a copy, a registration, a mapping)
//! decides from.
//!
//! An `ndarray` array's `as_ptr()` is the address of its *first* element (index `[0, 0, ..]`),
//! which is its lowest address only while no axis runs backwards. `arr.slice(s![..;-1])` and
//! `invert_axis` give an axis a negative stride, and the first element is then the array's
//! *highest*-addressed one along that axis: `ndarray` still counts such an array contiguous
//! (`as_slice_memory_order` is `Some`, starting at the lowest address), but `as_ptr()` plus
//! `len()` elements runs past the array's end into memory that is not the array's. A zero
//! stride (a broadcast view) makes the memory hold fewer elements than the array has, so
//! `len()` elements from any address would again cover memory outside the array.
//!
//! [`HostExtent`] works out, from the shape and the strides alone, the lowest address (as an
//! offset back from `as_ptr()`), how many elements lie between the lowest and the highest
//! address, and whether that span holds the elements exactly once in C or Fortran order: a
//! pure function, unit-tested without a GPU on reversed, broadcast, stepped, permuted, empty
//! and 0-d layouts.

use ndarray::{ArrayBase, ArrayRef, DataMut, Dimension, Order};

use crate::error::{CopyError, Error, Result};

/// Where the elements of a host array of some shape and strides lie, relative to its first
/// element (the one `as_ptr()` points at). All counts are in elements.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct HostExtent {
    /// The number of elements (the product of the shape).
    pub len: usize,
    /// How many elements the lowest-addressed element lies before the first one: the sum of
    /// `(length - 1) * |stride|` over the axes of negative stride; 0 when no axis longer than 1
    /// runs backwards, or the array is empty.
    pub first: usize,
    /// Elements from the lowest to the highest address, both included: exactly the memory the
    /// array's elements lie in, and all a registration or copy may cover. 0 for an empty
    /// array, 1 for a 0-d one.
    pub span: usize,
    /// The span holds every element exactly once (no gap, no zero or overlapping stride), in
    /// some order: C, Fortran, permuted axes or reversed ones.
    pub dense: bool,
    /// The span holds the elements in C order (the last axis varying fastest, every stride of
    /// an axis longer than 1 positive): `ndarray`'s `is_standard_layout`.
    pub c: bool,
    /// The span holds the elements in Fortran order (the first axis varying fastest, every
    /// stride of an axis longer than 1 positive).
    pub f: bool,
}

impl HostExtent {
    /// The extent of an array of `shape` and `strides` (in elements, as `ndarray`'s
    /// `strides()`). Strides of axes of length 1 are never used to reach an element, so they
    /// do not count, as in `ndarray`.
    pub(crate) fn of(shape: &[usize], strides: &[isize]) -> HostExtent {
        debug_assert_eq!(shape.len(), strides.len());
        if shape.contains(&0) {
            return HostExtent {
                len: 0,
                first: 0,
                span: 0,
                dense: true,
                c: true,
                f: true,
            };
        }
        // A valid `ndarray` array's elements and byte span fit in `isize`, so nothing here
        // saturates for one; saturating keeps a made-up layout from wrapping.
        let len = shape.iter().fold(1usize, |n, &d| n.saturating_mul(d));
        let (mut first, mut last) = (0usize, 0usize);
        for (&d, &s) in shape.iter().zip(strides) {
            let far = (d - 1).saturating_mul(s.unsigned_abs());
            if s < 0 {
                first = first.saturating_add(far);
            } else {
                last = last.saturating_add(far);
            }
        }
        HostExtent {
            len,
            first,
            span: first.saturating_add(last).saturating_add(1),
            dense: dense(shape, strides),
            c: in_order(shape.iter().zip(strides).rev()),
            f: in_order(shape.iter().zip(strides)),
        }
    }

    /// `Some(Order::C)` when the span holds the elements in C order, `Some(Order::F)` when in
    /// Fortran order and not C, `None` when in neither (reversed, broadcast, stepped or
    /// permuted): what [`memory_order`](crate::driver::memory_order) says.
    pub(crate) fn order(&self) -> Option<Order> {
        if self.c {
            Some(Order::C)
        } else if self.f {
            Some(Order::F)
        } else {
            None
        }
    }

    /// True when the span holds the elements in `order`.
    pub(crate) fn is_in(&self, order: Order) -> bool {
        if order.is_column_major() {
            self.f
        } else {
            self.c
        }
    }

    /// The lowest element address of the array whose first element is at `first_ptr`. Wrapping
    /// arithmetic: nothing is read, and for a live array the result is inside its allocation.
    pub(crate) fn lowest<A>(&self, first_ptr: *const A) -> *const A {
        first_ptr.wrapping_sub(self.first)
    }
}

/// True when, visiting the axes in `axes` order (fastest first), each axis longer than 1 has
/// the stride of a dense array: the product of the lengths before it.
fn in_order<'a>(axes: impl Iterator<Item = (&'a usize, &'a isize)>) -> bool {
    let mut expect = 1usize;
    for (&d, &s) in axes {
        if d != 1 && (s < 0 || s as usize != expect) {
            return false;
        }
        expect = expect.saturating_mul(d);
    }
    true
}

/// True when the axes longer than 1, taken by growing `|stride|`, have `|stride|` equal to the
/// product of the lengths before them (`ndarray`'s `is_contiguous`): every element once, no
/// gap, whatever the axes' order and direction. Without allocating: the next axis is the one
/// whose `|stride|` is the expected one (two such axes cannot both fit, and the second one
/// left over fails the test), marked in a bit set. A non-empty array has fewer than 64 axes
/// longer than 1, since its length fits in `usize`.
fn dense(shape: &[usize], strides: &[isize]) -> bool {
    let long = shape.iter().filter(|&&d| d > 1).count();
    if long >= 64 {
        return false;
    }
    let mut used = 0u64;
    let mut expect = 1usize;
    for _ in 0..long {
        let next = shape
            .iter()
            .zip(strides)
            .filter(|(&d, _)| d > 1)
            .enumerate()
            .find(|(k, (_, &s))| used & (1 << k) == 0 && s.unsigned_abs() == expect);
        let Some((k, (&d, _))) = next else {
            return false;
        };
        used |= 1 << k;
        expect = expect.saturating_mul(d);
    }
    true
}

/// The extent of `array` (see [`HostExtent`]).
pub(crate) fn host_extent<A, D: Dimension>(array: &ArrayRef<A, D>) -> HostExtent {
    HostExtent::of(array.shape(), array.strides())
}

/// The refusal of a host array whose memory cannot go to the driver as it is in `operation`:
/// its shape and strides, and (in the message) the fix.
pub(crate) fn layout_error<A, D: Dimension>(array: &ArrayRef<A, D>, operation: &'static str) -> Error {
    CopyError::HostArrayLayout {
        operation,
        shape: array.shape().to_vec(),
        strides: array.strides().to_vec(),
    }
    .into()
}

/// The elements of `array` as one slice in its memory order, from its lowest address, when
/// that order is C or Fortran with positive strides; else the [`layout_error`] naming
/// `operation`. A reversed axis is refused rather than copied in memory order, where the
/// device would see the elements backwards.
pub(crate) fn ordered_slice<'a, A, D: Dimension>(
    array: &'a ArrayRef<A, D>,
    operation: &'static str,
) -> Result<&'a [A]> {
    let extent = host_extent(array);
    if extent.order().is_none() {
        return Err(layout_error(array, operation));
    }
    // `ndarray` hands out the memory from the lowest address; for a C or Fortran array that
    // is the first element, and the span is the elements.
    let slice = array
        .as_slice_memory_order()
        .ok_or_else(|| layout_error(array, operation))?;
    debug_assert_eq!(
        (slice.as_ptr(), slice.len()),
        (extent.lowest(array.as_ptr()), extent.len)
    );
    Ok(slice)
}

/// The memory of a dense array (every element once, in whatever order: C, Fortran, permuted
/// or reversed axes) as one slice from its lowest address, with the offset of its first
/// element (`as_ptr()`) in it; `None` for an array with gaps or repeats (stepped, broadcast).
/// For copies that keep the array's strides, so that the device indexes the copy as the host
/// indexed the original (`DeviceArray::from_ndarray`, `set`).
pub(crate) fn dense_memory<A, D: Dimension>(array: &ArrayRef<A, D>) -> Option<(&[A], usize)> {
    let extent = host_extent(array);
    if !extent.dense {
        return None;
    }
    let slice = array.as_slice_memory_order()?;
    debug_assert_eq!(
        (slice.as_ptr(), slice.len()),
        (extent.lowest(array.as_ptr()), extent.span)
    );
    Some((slice, extent.first))
}

/// [`ordered_slice`], writable. An `ArcArray` shared with another handle is first made
/// unique, as `ndarray`'s own mutable accessors do, so the slice is this array's alone.
pub(crate) fn ordered_slice_mut<'a, A, S: DataMut<Elem = A>, D: Dimension>(
    array: &'a mut ArrayBase<S, D>,
    operation: &'static str,
) -> Result<&'a mut [A]> {
    let extent = host_extent(array);
    if extent.order().is_none() || array.as_slice_memory_order().is_none() {
        return Err(layout_error(array, operation));
    }
    // A C or Fortran array is contiguous, so this is `Some`; the error keeps the success path
    // free of the allocation a shape-naming one would need while `array` is borrowed.
    array
        .as_slice_memory_order_mut()
        .ok_or(Error::NotContiguous { what: operation })
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::{s, Array, Array1, Array2, Array3, ArrayD, ArrayView, Axis, IxDyn, ShapeBuilder};

    /// The lowest and highest element addresses of `a`, and how many distinct ones, walked
    /// element by element: the reference `HostExtent` must agree with.
    fn walked<A, D: Dimension>(a: &ArrayRef<A, D>) -> Option<(usize, usize, usize)> {
        let mut addrs: Vec<usize> = a.iter().map(|x| x as *const A as usize).collect();
        addrs.sort_unstable();
        addrs.dedup();
        Some((*addrs.first()?, *addrs.last()?, addrs.len()))
    }

    /// Checks `HostExtent` of `a` against a walk of its elements and against `ndarray`.
    fn check<A, D: Dimension>(a: &ArrayRef<A, D>, what: &str) -> HostExtent {
        let e = host_extent(a);
        let size = std::mem::size_of::<A>();
        assert_eq!(e.len, a.len(), "{what}");
        match walked(a) {
            None => assert_eq!((e.span, e.first), (0, 0), "{what}"),
            Some((lo, hi, distinct)) => {
                assert_eq!(e.lowest(a.as_ptr()) as usize, lo, "{what}: lowest address");
                assert_eq!(e.span, (hi - lo) / size + 1, "{what}: span");
                assert_eq!(e.dense, distinct == a.len() && e.span == a.len(), "{what}: dense");
                // ndarray's own view of contiguity, and of where memory order starts.
                assert_eq!(e.dense, a.as_slice_memory_order().is_some(), "{what}");
                if let Some(m) = a.as_slice_memory_order() {
                    assert_eq!(m.as_ptr() as usize, lo, "{what}: memory order starts lowest");
                }
            }
        }
        assert_eq!(e.c, a.is_standard_layout(), "{what}: C");
        assert_eq!(e.f, a.t().is_standard_layout(), "{what}: F");
        e
    }

    #[test]
    fn a_reversed_axis_starts_below_as_ptr() {
        let v: Vec<u32> = (0..24).collect();
        let c = Array3::from_shape_vec((2, 3, 4), v).unwrap();
        let r = c.slice(s![.., ..;-1, ..]);
        let e = check(&r, "middle axis reversed");
        // The first element is row 2 of each block: 2 rows of 4 above the lowest address.
        assert_eq!((e.first, e.span, e.dense, e.order()), (8, 24, true, None));
        assert_eq!(r.as_ptr() as usize - e.lowest(r.as_ptr()) as usize, 8 * 4);
        // The bug this guards against: as_ptr() + len() ends 8 elements past the array.
        let end = r.as_ptr() as usize + r.len() * 4;
        assert_eq!(end - (c.as_ptr() as usize + 24 * 4), 8 * 4);
        let mut all = c.clone();
        for ax in 0..3 {
            all.invert_axis(Axis(ax));
        }
        let e = check(&all, "every axis inverted");
        assert_eq!((e.first, e.span, e.dense, e.order()), (23, 24, true, None));
        // A 1-D reversed array: its first element is its last in memory.
        let one = Array1::from_vec((0..10).collect::<Vec<u8>>());
        let back = one.slice(s![..;-1]);
        assert_eq!(back[0], 9);
        let e = check(&back, "1-D reversed");
        assert_eq!((e.first, e.span, e.dense, e.order()), (9, 10, true, None));
        // Reversed and stepped: not dense, the span still from the lowest element.
        let e = check(&one.slice(s![..;-3]), "1-D reversed, step 3");
        assert_eq!((e.len, e.first, e.span, e.dense), (4, 9, 10, false));
    }

    #[test]
    fn a_reversed_axis_of_length_one_changes_nothing() {
        let a = Array2::from_shape_fn((1, 5), |(_, j)| j as i16);
        let r = a.slice(s![..;-1, ..]);
        let e = check(&r, "length-1 axis reversed");
        assert_eq!((e.first, e.span, e.order()), (0, 5, Some(Order::C)));
        let t = a.t();
        let e = check(&t.slice(s![.., ..;-1]), "transposed, length-1 axis reversed");
        assert_eq!((e.first, e.order()), (0, Some(Order::C)));
    }

    #[test]
    fn zero_strides_cover_less_memory_than_elements() {
        let row = Array1::from_vec(vec![1.0f64, 2.0, 3.0]);
        let b = row.broadcast((4, 3)).unwrap();
        let e = check(&b, "broadcast rows");
        assert_eq!(
            (e.len, e.first, e.span, e.dense, e.order()),
            (12, 0, 3, false, None)
        );
        let col = row.view().insert_axis(Axis(1));
        let e = check(&col.broadcast((3, 5)).unwrap(), "broadcast columns");
        assert_eq!((e.len, e.span, e.dense), (15, 3, false));
        let scalar = Array::from_elem((), 7u8);
        let e = check(&scalar.broadcast((2, 2, 2)).unwrap(), "broadcast 0-d");
        assert_eq!((e.len, e.span, e.dense, e.order()), (8, 1, false, None));
        // A broadcast axis of a reversed array: the span still starts at the lowest element.
        let back = row.slice(s![..;-1]);
        let e = check(&back.broadcast((2, 3)).unwrap(), "broadcast of reversed");
        assert_eq!((e.first, e.span, e.dense), (2, 3, false));
    }

    #[test]
    fn empty_and_zero_dimensional_arrays() {
        let empty = Array2::<f32>::zeros((0, 4));
        let e = check(&empty, "0 x 4");
        assert_eq!(
            (e.len, e.first, e.span, e.dense, e.order()),
            (0, 0, 0, true, Some(Order::C))
        );
        let c = Array2::<f32>::zeros((3, 4));
        let e = check(&c.slice(s![..;-1, 0..0]), "reversed, empty");
        assert_eq!((e.len, e.first, e.span, e.order()), (0, 0, 0, Some(Order::C)));
        let zero_d = Array::from_elem((), 5i64);
        let e = check(&zero_d, "0-d");
        assert_eq!(
            (e.len, e.first, e.span, e.dense, e.order()),
            (1, 0, 1, true, Some(Order::C))
        );
        let e = check(&c.slice(s![2, 3]), "0-d view into a matrix");
        assert_eq!((e.len, e.span), (1, 1));
    }

    #[test]
    fn c_fortran_and_permuted_layouts() {
        let c = Array3::<u16>::zeros((2, 3, 4));
        let f = Array3::<u16>::zeros((2, 3, 4).f());
        assert_eq!(check(&c, "C").order(), Some(Order::C));
        assert_eq!(check(&f, "F").order(), Some(Order::F));
        assert_eq!(check(&c.t(), "C transposed").order(), Some(Order::F));
        let p = check(&c.view().permuted_axes([1, 0, 2]), "permuted");
        assert_eq!((p.dense, p.order(), p.first), (true, None, 0));
        let stepped = check(&c.slice(s![.., ..;2, ..]), "stepped");
        assert_eq!((stepped.dense, stepped.span, stepped.len), (false, 24, 16));
        let one = Array1::<u8>::zeros(6);
        let e = check(&one, "1-D");
        assert!(e.c && e.f && e.is_in(Order::F) && e.is_in(Order::C));
    }

    /// A small deterministic generator: layouts from it cover what hand-picked cases miss.
    struct Lcg(u64);
    impl Lcg {
        fn below(&mut self, n: usize) -> usize {
            self.0 = self
                .0
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((self.0 >> 33) as usize) % n
        }
    }

    #[test]
    fn random_views_agree_with_a_walk_of_their_elements() {
        let mut rng = Lcg(41);
        let base =
            ArrayD::<u32>::from_shape_fn(IxDyn(&[5, 4, 6, 3]), |i| i.slice().iter().sum::<usize>() as u32);
        for round in 0..2000 {
            let mut v: ArrayView<'_, u32, IxDyn> = base.view();
            // Random slices: start, end and a step that may be negative, per axis.
            let info: Vec<ndarray::SliceInfoElem> = base
                .shape()
                .iter()
                .map(|&d| {
                    let start = rng.below(d) as isize;
                    let end = start + rng.below(d - start as usize + 1) as isize;
                    let step = [1, 1, -1, -1, 2, -2, 3][rng.below(7)];
                    ndarray::SliceInfoElem::Slice {
                        start,
                        end: Some(end),
                        step,
                    }
                })
                .collect();
            let info = ndarray::SliceInfo::<_, IxDyn, IxDyn>::try_from(info).unwrap();
            v.slice_collapse(info);
            if rng.below(3) == 0 {
                let mut axes: Vec<usize> = (0..4).collect();
                for i in (1..4).rev() {
                    axes.swap(i, rng.below(i + 1));
                }
                v = v.permuted_axes(axes);
            }
            if rng.below(4) == 0 {
                let ax = rng.below(4);
                v.invert_axis(Axis(ax));
            }
            check(
                &v,
                &format!("round {round}: shape {:?} strides {:?}", v.shape(), v.strides()),
            );
        }
    }

    #[test]
    fn slices_are_refused_with_shape_strides_and_the_fix() {
        let mut a = Array2::from_shape_fn((3, 4), |(i, j)| (i * 4 + j) as f32);
        let r = a.slice(s![..;-1, ..]);
        let err = ordered_slice(&r, "a test").unwrap_err();
        match &err {
            Error::Copy(CopyError::HostArrayLayout {
                operation,
                shape,
                strides,
            }) => assert_eq!(
                (*operation, &shape[..], &strides[..]),
                ("a test", &[3, 4][..], &[-4, 1][..])
            ),
            other => panic!("{other:?}"),
        }
        let msg = err.to_string();
        assert!(
            msg.contains("[-4, 1]") && msg.contains("as_standard_layout()"),
            "{msg}"
        );
        // The fix works: a C-ordered copy is accepted, in the reversed array's element order.
        let fixed = r.as_standard_layout();
        let s = ordered_slice(&fixed, "a test").unwrap();
        assert_eq!(&s[..4], &[8.0, 9.0, 10.0, 11.0]);
        // `to_owned()` keeps a contiguous array's memory layout, so it is no fix.
        assert_eq!(r.to_owned().strides(), &[-4, 1]);
        assert!(ordered_slice(&r.to_owned(), "a test").is_err());
        // Writable: refused alike, and nothing written.
        a.invert_axis(Axis(1));
        let err = ordered_slice_mut(&mut a, "a write").unwrap_err();
        assert!(
            matches!(err, Error::Copy(CopyError::HostArrayLayout { .. })),
            "{err}"
        );
        a.invert_axis(Axis(1));
        let s = ordered_slice_mut(&mut a, "a write").unwrap();
        s[0] = -1.0;
        assert_eq!(a[[0, 0]], -1.0);
    }
}
