//! [`ReduceAxis`]: the axis a reduction runs along and whether the result keeps it (NumPy's
//! `axis=` and `keepdims=`), taken by every `*_axis` reduction on arrays.

use ndarray::IxDyn;

use crate::error::Result;
use crate::gpuarray::array::core::DeviceArray;
use crate::gpuarray::elements::element::Element;

/// One axis of a reduction and whether the result keeps it as an axis of length 1 (NumPy's
/// `keepdims=True`, so that the result broadcasts against the input). A plain `usize` is the
/// axis without `keepdims`:
///
/// ```no_run
/// use gpu_runtime::gpuarray::{DeviceArray, ReduceAxis};
/// use gpu_runtime::{ndarray::Array2, Context};
/// let ctx = Context::default()?;
/// let a = DeviceArray::from_ndarray(&ctx, &Array2::<f32>::ones((3, 4)))?;
/// assert_eq!(a.sum_axis(0)?.shape(), &[4]);
/// assert_eq!(a.sum_axis(ReduceAxis::keepdims(0))?.shape(), &[1, 4]);
/// # Ok::<(), gpu_runtime::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ReduceAxis {
    /// The axis reduced.
    pub axis: usize,
    /// Whether the result keeps `axis` with length 1.
    pub keepdims: bool,
}

impl ReduceAxis {
    /// `axis`, dropped from the result (NumPy's default).
    pub fn new(axis: usize) -> Self {
        ReduceAxis {
            axis,
            keepdims: false,
        }
    }

    /// `axis`, kept in the result with length 1 (NumPy's `keepdims=True`).
    pub fn keepdims(axis: usize) -> Self {
        ReduceAxis { axis, keepdims: true }
    }

    /// The reduction's result (a C-order array of the other axes) in this form: with
    /// `keepdims`, the axis put back with length 1 (a reshape: no copy).
    pub(crate) fn shape_result<T: Element>(
        self,
        out: DeviceArray<T, IxDyn>,
    ) -> Result<DeviceArray<T, IxDyn>> {
        if !self.keepdims {
            return Ok(out);
        }
        let mut shape = out.shape().to_vec();
        shape.insert(self.axis.min(shape.len()), 1);
        out.reshape(IxDyn(&shape))
    }
}

impl From<usize> for ReduceAxis {
    fn from(axis: usize) -> Self {
        ReduceAxis::new(axis)
    }
}
