//! Shapes and strides, without any device memory: the arithmetic of views (slices with
//! steps, transposes, reshapes) and the questions kernels ask (is it contiguous, which memory
//! does it span). Strides are in elements and may be negative or zero, as in `ndarray`.
//!
//! Every function here is pure, so it is unit-tested against `ndarray` on the host.

use ndarray::SliceInfoElem;

use crate::error::{ArrayShapeError, Error, Result};

/// The strides of a dense array of `shape` in C (row-major) order.
pub fn c_strides(shape: &[usize]) -> Vec<isize> {
    let mut strides = vec![0isize; shape.len()];
    let mut acc = 1isize;
    for (s, &d) in strides.iter_mut().zip(shape).rev() {
        *s = acc;
        acc = acc.wrapping_mul(d.max(1) as isize);
    }
    strides
}

/// The strides of a dense array of `shape` in Fortran (column-major) order.
pub fn f_strides(shape: &[usize]) -> Vec<isize> {
    let mut strides = vec![0isize; shape.len()];
    let mut acc = 1isize;
    for (s, &d) in strides.iter_mut().zip(shape) {
        *s = acc;
        acc = acc.wrapping_mul(d.max(1) as isize);
    }
    strides
}

/// The number of elements of `shape`, or an error naming `operation` when it overflows.
pub fn checked_size(operation: &'static str, shape: &[usize]) -> Result<usize> {
    shape
        .iter()
        .try_fold(1usize, |acc, &d| acc.checked_mul(d))
        .filter(|&n| n <= isize::MAX as usize)
        .ok_or_else(|| {
            ArrayShapeError::ElementsOverflow {
                operation,
                shape: shape.to_vec(),
            }
            .into()
        })
}

/// True when the elements lie in C order one after another. Axes of length 1 may have any
/// stride (as in `ndarray`), and an empty array is contiguous.
pub fn is_c_contiguous(shape: &[usize], strides: &[isize]) -> bool {
    dense_in_order(shape.iter().zip(strides).rev())
}

/// True when the elements lie in Fortran order one after another.
pub fn is_f_contiguous(shape: &[usize], strides: &[isize]) -> bool {
    dense_in_order(shape.iter().zip(strides))
}

fn dense_in_order<'a>(axes: impl Iterator<Item = (&'a usize, &'a isize)> + Clone) -> bool {
    if axes.clone().any(|(&d, _)| d == 0) {
        return true;
    }
    let mut expect = 1isize;
    for (&d, &s) in axes {
        if d == 1 {
            continue;
        }
        if s != expect {
            return false;
        }
        expect *= d as isize;
    }
    true
}

/// The lowest and highest element offsets (relative to the element at index zero) that the
/// array touches; `None` for an empty array.
pub fn span(shape: &[usize], strides: &[isize]) -> Option<(isize, isize)> {
    if shape.contains(&0) {
        return None;
    }
    let (mut lo, mut hi) = (0isize, 0isize);
    for (&d, &s) in shape.iter().zip(strides) {
        let far = (d as isize - 1) * s;
        if far < 0 {
            lo += far;
        } else {
            hi += far;
        }
    }
    Some((lo, hi))
}

/// The layout of a view: its shape and strides, and where its first element lies relative to
/// the first element of what it was taken from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sliced {
    /// The view's shape.
    pub shape: Vec<usize>,
    /// The view's strides, in elements.
    pub strides: Vec<isize>,
    /// The offset of the view's first element, in elements.
    pub offset: isize,
}

/// An index that may count from the end (negative), made absolute; `None` when it falls
/// outside `0..=len`.
fn absolute(index: isize, len: usize) -> Option<usize> {
    if index < 0 {
        len.checked_sub(index.unsigned_abs())
    } else {
        Some(index as usize).filter(|&i| i <= len)
    }
}

/// Applies `ndarray`'s slicing rules (`s![..]`: ranges with steps, negative indices counting
/// from the end, single indices that drop an axis, `NewAxis`) to a layout. Where `ndarray`
/// panics (an index out of bounds, a zero step, a wrong number of axes) this returns an error.
pub fn slice(shape: &[usize], strides: &[isize], elems: &[SliceInfoElem]) -> Result<Sliced> {
    let taken = elems
        .iter()
        .filter(|e| !matches!(e, SliceInfoElem::NewAxis))
        .count();
    if taken != shape.len() {
        return Err(ArrayShapeError::SliceAxes {
            taken,
            axes: shape.len(),
        }
        .into());
    }
    let mut out = Sliced {
        shape: Vec::with_capacity(elems.len()),
        strides: Vec::with_capacity(elems.len()),
        offset: 0,
    };
    let mut axis = 0;
    for e in elems {
        match *e {
            SliceInfoElem::NewAxis => {
                out.shape.push(1);
                out.strides.push(0);
            }
            SliceInfoElem::Index(i) => {
                let (d, s) = (shape[axis], strides[axis]);
                let idx = absolute(i, d)
                    .filter(|&x| x < d)
                    .ok_or(ArrayShapeError::SliceIndex {
                        index: i,
                        axis,
                        len: d,
                    })?;
                out.offset += idx as isize * s;
                axis += 1;
            }
            SliceInfoElem::Slice { start, end, step } => {
                let (d, s) = (shape[axis], strides[axis]);
                if step == 0 {
                    return Err(ArrayShapeError::SliceStepZero { axis }.into());
                }
                let bad = || ArrayShapeError::SliceRange {
                    start,
                    end,
                    axis,
                    len: d,
                };
                let begin = absolute(start, d).ok_or_else(bad)?;
                let stop = absolute(end.unwrap_or(d as isize), d).ok_or_else(bad)?.max(begin);
                let m = stop - begin;
                let abs_step = step.unsigned_abs();
                let len = m.div_ceil(abs_step);
                if m > 0 {
                    let first = if step < 0 { stop - 1 } else { begin };
                    out.offset += first as isize * s;
                }
                out.shape.push(len);
                out.strides.push(s * step);
                axis += 1;
            }
        }
    }
    Ok(out)
}

/// The strides of `new_shape` over the elements of an array of `shape` and `strides` taken in
/// C order, without moving any: possible when the array is C-contiguous (`ndarray`'s
/// `into_shape_with_order` asks the same). An error says why not.
pub fn reshape(shape: &[usize], strides: &[isize], new_shape: &[usize]) -> Result<Vec<isize>> {
    let old = checked_size("DeviceArray::reshape", shape)?;
    let new = checked_size("DeviceArray::reshape", new_shape)?;
    if old != new {
        return Err(ArrayShapeError::Reshape {
            shape: shape.to_vec(),
            elements: old,
            new_shape: new_shape.to_vec(),
            new_elements: new,
        }
        .into());
    }
    if !is_c_contiguous(shape, strides) {
        return Err(Error::NotContiguous {
            what: "DeviceArray::reshape of an array not contiguous in C order (copy it first with `to_contiguous`)",
        });
    }
    Ok(c_strides(new_shape))
}

/// `shape` and `strides` with the axes in the order `axes` names (each axis once).
pub fn permute(shape: &[usize], strides: &[isize], axes: &[usize]) -> Result<(Vec<usize>, Vec<isize>)> {
    let mut seen = vec![false; shape.len()];
    if axes.len() != shape.len()
        || axes
            .iter()
            .any(|&a| a >= shape.len() || std::mem::replace(&mut seen[a], true))
    {
        return Err(ArrayShapeError::NotAPermutation {
            axes_given: axes.to_vec(),
            axes: shape.len(),
        }
        .into());
    }
    Ok((
        axes.iter().map(|&a| shape[a]).collect(),
        axes.iter().map(|&a| strides[a]).collect(),
    ))
}

/// The multi-index of the `flat`-th element in C order of `shape`, as an offset with
/// `strides`: what the generated kernels compute for views that are not contiguous, here for
/// the host's tests and gathers.
pub fn offset_of(flat: usize, shape: &[usize], strides: &[isize]) -> isize {
    let mut rest = flat;
    let mut off = 0isize;
    for (&d, &s) in shape.iter().zip(strides).rev() {
        if d == 0 {
            return 0;
        }
        off += (rest % d) as isize * s;
        rest /= d;
    }
    off
}

/// The fewest axes that walk the same elements in the same C order for every array at once:
/// axes of length 1 are dropped, and an axis is merged into the one after it when, for every
/// array, its stride is that axis' stride times its length (so the two count as one). `shape`
/// is the arrays' common shape, `strides` each array's strides over it. Returns the new shape
/// and each array's new strides; an array of one element keeps one axis.
pub fn coalesce(shape: &[usize], strides: &[&[isize]]) -> (Vec<usize>, Vec<Vec<isize>>) {
    let mut out_shape: Vec<usize> = Vec::with_capacity(shape.len());
    let mut out_strides: Vec<Vec<isize>> = vec![Vec::with_capacity(shape.len()); strides.len()];
    // Walk from the last axis, growing the innermost group while the axes merge.
    for k in (0..shape.len()).rev() {
        let d = shape[k];
        if d == 1 {
            continue;
        }
        let merges = out_shape.last().is_some_and(|&inner| {
            strides.iter().zip(&out_strides).all(|(s, o)| {
                o.last()
                    .is_some_and(|&os| s[k] == os.wrapping_mul(inner as isize))
            })
        });
        if merges {
            if let Some(inner) = out_shape.last_mut() {
                *inner *= d;
            }
        } else {
            out_shape.push(d);
            for (s, o) in strides.iter().zip(out_strides.iter_mut()) {
                o.push(s[k]);
            }
        }
    }
    if out_shape.is_empty() {
        out_shape.push(1);
        for o in &mut out_strides {
            o.push(0);
        }
    }
    out_shape.reverse();
    for o in &mut out_strides {
        o.reverse();
    }
    (out_shape, out_strides)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::{s, Array, ArrayView, IxDyn};

    /// The elements a layout names, read from `data` with `base` as the first element.
    fn gather(data: &[i64], base: isize, shape: &[usize], strides: &[isize]) -> Vec<i64> {
        let n: usize = shape.iter().product();
        (0..n)
            .map(|i| data[(base + offset_of(i, shape, strides)) as usize])
            .collect()
    }

    fn host(shape: &[usize]) -> Array<i64, IxDyn> {
        let n: usize = shape.iter().product();
        Array::from_shape_vec(IxDyn(shape), (0..n as i64).collect()).unwrap()
    }

    fn check(a: &ArrayView<'_, i64, IxDyn>, elems: &[SliceInfoElem], expect: ArrayView<'_, i64, IxDyn>) {
        let data = a.as_slice().unwrap();
        let got = slice(a.shape(), a.strides(), elems).unwrap();
        assert_eq!(got.shape, expect.shape());
        assert_eq!(
            gather(data, got.offset, &got.shape, &got.strides),
            expect.iter().copied().collect::<Vec<_>>()
        );
    }

    #[test]
    // `4..1` below: an empty range on purpose, which ndarray takes as empty.
    #[allow(clippy::reversed_empty_ranges)]
    fn slices_match_ndarray() {
        let a = host(&[5, 7, 3]);
        let v = a.view();
        macro_rules! case {
            ($info:expr) => {{
                let info = $info;
                check(&v, info.as_ref(), v.slice(info).into_dyn());
            }};
        }
        case!(s![.., .., ..]);
        case!(s![1..4, ..;2, -1]);
        case!(s![..;-1, 2..;-3, ..]);
        case!(s![-3.., ndarray::NewAxis, 3..3, 1]);
        case!(s![2, -2, ..;-2]);
        case!(s![4..1, .., ..]);
    }

    #[test]
    fn slices_of_slices_match_ndarray() {
        let a = host(&[6, 8]);
        let first = s![..;-2, 1..7;3];
        let l1 = slice(a.shape(), a.strides(), first.as_ref()).unwrap();
        let l2 = slice(&l1.shape, &l1.strides, s![1.., ..;-1].as_ref()).unwrap();
        let expect = a.slice(first).slice_move(s![1.., ..;-1]);
        let got = gather(
            a.as_slice().unwrap(),
            l1.offset + l2.offset,
            &l2.shape,
            &l2.strides,
        );
        assert_eq!(got, expect.iter().copied().collect::<Vec<_>>());
    }

    #[test]
    fn bad_slices_are_errors() {
        let (shape, strides) = ([4usize, 3], [3isize, 1]);
        assert!(slice(&shape, &strides, s![4, ..].as_ref()).is_err());
        assert!(slice(&shape, &strides, s![-5, ..].as_ref()).is_err());
        assert!(slice(&shape, &strides, s![..5, ..].as_ref()).is_err());
        assert!(slice(&shape, &strides, s![..].as_ref()).is_err());
        let zero_step = [
            SliceInfoElem::Slice {
                start: 0,
                end: None,
                step: 0,
            },
            SliceInfoElem::Index(0),
        ];
        assert!(slice(&shape, &strides, &zero_step).is_err());
    }

    #[test]
    fn contiguity_and_span() {
        assert!(is_c_contiguous(&[2, 3], &c_strides(&[2, 3])));
        assert!(!is_c_contiguous(&[2, 3], &f_strides(&[2, 3])));
        assert!(is_f_contiguous(&[2, 3], &f_strides(&[2, 3])));
        assert!(is_c_contiguous(&[2, 1, 3], &[3, 99, 1]));
        assert!(is_c_contiguous(&[0, 5], &[1, 7]));
        assert_eq!(span(&[3, 4], &[-4, 1]), Some((-8, 3)));
        assert_eq!(span(&[3, 0], &[1, 1]), None);
        assert_eq!(c_strides(&[2, 3, 4]), vec![12, 4, 1]);
        assert_eq!(f_strides(&[2, 3, 4]), vec![1, 2, 6]);
    }

    /// Coalesced layouts name the same elements, in the same order, as the layouts they came
    /// from, for every array.
    #[test]
    fn coalesced_axes_walk_the_same_elements() {
        let cases: [(&[usize], &[&[isize]]); 6] = [
            (&[4, 5, 6], &[&[30, 6, 1], &[0, 0, 1]]),
            (&[4, 5, 6], &[&[30, 6, 1], &[1, 4, 20]]),
            (&[2, 1, 3], &[&[3, 99, 1], &[-3, 0, -1]]),
            (&[3, 4], &[&[4, 1], &[0, 1]]),
            (&[3, 4], &[&[4, 1], &[1, 0]]),
            (&[1, 1], &[&[5, 7]]),
        ];
        for (shape, strides) in cases {
            let (sh, st) = coalesce(shape, strides);
            let n: usize = shape.iter().product();
            assert_eq!(sh.iter().product::<usize>(), n);
            for (old, new) in strides.iter().zip(&st) {
                for i in 0..n {
                    assert_eq!(
                        offset_of(i, shape, old),
                        offset_of(i, &sh, new),
                        "{shape:?} {old:?}"
                    );
                }
            }
        }
        assert_eq!(coalesce(&[4, 5, 6], &[&[30, 6, 1], &[0, 0, 1]]).0, vec![20, 6]);
        assert_eq!(coalesce(&[4, 5, 6], &[&[30, 6, 1], &[30, 6, 1]]).0, vec![120]);
        assert_eq!(coalesce(&[2, 1, 3], &[&[3, 99, 1]]), (vec![6], vec![vec![1]]));
        assert_eq!(coalesce(&[1, 1], &[&[5, 7]]), (vec![1], vec![vec![0]]));
    }

    #[test]
    fn reshape_and_permute() {
        assert_eq!(reshape(&[2, 6], &[6, 1], &[3, 4]).unwrap(), vec![4, 1]);
        assert!(reshape(&[2, 6], &[1, 2], &[3, 4]).is_err());
        assert!(reshape(&[2, 6], &[6, 1], &[5, 4]).is_err());
        let a = host(&[2, 3, 4]);
        let (sh, st) = permute(a.shape(), a.strides(), &[2, 0, 1]).unwrap();
        let expect = a.view().permuted_axes(IxDyn(&[2, 0, 1]));
        assert_eq!(
            gather(a.as_slice().unwrap(), 0, &sh, &st),
            expect.iter().copied().collect::<Vec<_>>()
        );
        assert!(permute(a.shape(), a.strides(), &[0, 0, 1]).is_err());
        assert!(checked_size("t", &[usize::MAX, 2]).is_err());
    }
}
