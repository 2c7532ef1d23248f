//! The views the elementwise tests run their kernels on: the whole array, every other element
//! of its last axis (taken from an array twice as long there), or its first axis reversed.

use gpu_runtime::ndarray::{IxDyn, SliceInfo, SliceInfoElem};

/// How a test views an array.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Layout {
    /// The whole array.
    Whole,
    /// Every other element of the last axis (of an array twice as long there).
    Stepped,
    /// The first axis reversed.
    Reversed,
}

/// The view of an array of `ndim` axes in `layout`; a 0-d array has only its whole view.
pub fn info(ndim: usize, layout: Layout) -> SliceInfo<Vec<SliceInfoElem>, IxDyn, IxDyn> {
    let elems: Vec<SliceInfoElem> = (0..ndim)
        .map(|k| SliceInfoElem::Slice {
            start: 0,
            end: None,
            step: match (layout, k) {
                (Layout::Reversed, 0) => -1,
                (Layout::Stepped, k) if k + 1 == ndim => 2,
                _ => 1,
            },
        })
        .collect();
    SliceInfo::try_from(elems).expect("a slice of every axis")
}
