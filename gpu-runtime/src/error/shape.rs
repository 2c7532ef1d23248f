//! [`ArrayShapeError`]: shapes, axes and slices of `gpuarray::DeviceArray` that do not fit.

/// A `DeviceArray` shape, axis, slice or layout that does not fit the operation; nothing was
/// launched or copied. Wrapped by [`Error::Shape`](super::Error::Shape).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ArrayShapeError {
    /// A shape whose element count overflows `isize`.
    #[error("size mismatch in {operation}: the shape {shape:?} holds more elements than an isize counts")]
    ElementsOverflow {
        /// The operation, e.g. `DeviceArray::reshape`.
        operation: &'static str,
        /// The shape.
        shape: Vec<usize>,
    },
    /// A number of axes that a fixed-dimension array type cannot hold.
    #[error("size mismatch in DeviceArray dimension: {axes} axes do not fit a dimension of {fixed} axes")]
    Dimension {
        /// The axes given.
        axes: usize,
        /// The axes of the dimension type.
        fixed: usize,
    },
    /// A shape, strides and offset that reach outside the array's memory.
    #[error("size mismatch in DeviceArray: shape {shape:?} with strides {strides:?} at offset {offset} reaches outside {len} elements")]
    OutOfBounds {
        /// The shape.
        shape: Vec<usize>,
        /// The strides, in elements.
        strides: Vec<isize>,
        /// The offset of the first element.
        offset: usize,
        /// Elements the memory holds.
        len: usize,
    },
    /// A slice that names another number of axes than the array has.
    #[error("size mismatch in DeviceArray::slice: the slice names {taken} axes but the array has {axes}")]
    SliceAxes {
        /// Axes the slice names.
        taken: usize,
        /// Axes the array has.
        axes: usize,
    },
    /// A slice index out of bounds for its axis.
    #[error(
        "size mismatch in DeviceArray::slice: index {index} is out of bounds for axis {axis} of length {len}"
    )]
    SliceIndex {
        /// The index given (negative counts from the end).
        index: isize,
        /// The axis.
        axis: usize,
        /// The axis' length.
        len: usize,
    },
    /// A slice range out of bounds for its axis.
    #[error("size mismatch in DeviceArray::slice: the range {start}..{end:?} is out of bounds for axis {axis} of length {len}")]
    SliceRange {
        /// The range's start (negative counts from the end).
        start: isize,
        /// The range's end, if given.
        end: Option<isize>,
        /// The axis.
        axis: usize,
        /// The axis' length.
        len: usize,
    },
    /// A slice step of zero.
    #[error("size mismatch in DeviceArray::slice: the step of axis {axis} is zero")]
    SliceStepZero {
        /// The axis.
        axis: usize,
    },
    /// A range of a buffer outside it (`DeviceBuffer::slice`, `DeviceView::slice`).
    #[error("size mismatch in slice: range {start}..{end} is outside a buffer of {len} elements")]
    RangeOutOfBounds {
        /// The range's start.
        start: usize,
        /// The range's end.
        end: usize,
        /// Elements the buffer holds.
        len: usize,
    },
    /// A reshape to a shape of another number of elements.
    #[error("size mismatch in DeviceArray::reshape: {shape:?} holds {elements} elements but {new_shape:?} holds {new_elements}")]
    Reshape {
        /// The array's shape.
        shape: Vec<usize>,
        /// Its elements.
        elements: usize,
        /// The shape asked for.
        new_shape: Vec<usize>,
        /// Its elements.
        new_elements: usize,
    },
    /// Axes that are not a permutation of the array's.
    #[error(
        "size mismatch in DeviceArray::permuted_axes: {axes_given:?} is not a permutation of the {axes} axes"
    )]
    NotAPermutation {
        /// The axes given.
        axes_given: Vec<usize>,
        /// Axes the array has.
        axes: usize,
    },
    /// Arrays of an elementwise kernel with different shapes.
    #[error(
        "size mismatch in elementwise: `{param}` has shape {shape:?} but the arrays before it {expected:?}"
    )]
    ShapesDiffer {
        /// The kernel parameter.
        param: String,
        /// Its shape.
        shape: Vec<usize>,
        /// The shape of the arrays before it.
        expected: Vec<usize>,
    },
    /// A result array of a full reduction that is not one element.
    #[error("size mismatch in reduce: the result array has shape {shape:?}, not one element")]
    ResultNotScalar {
        /// The result array's shape.
        shape: Vec<usize>,
    },
    /// A reduction axis the array does not have.
    #[error("size mismatch in reduce_axis: axis {axis} of an array of {axes} axes")]
    AxisOutOfRange {
        /// The axis given.
        axis: usize,
        /// Axes the array has.
        axes: usize,
    },
    /// A reduction of an empty array by an operation without a neutral element.
    #[error("size mismatch in {operation}: the array is empty and the operation has no neutral element")]
    EmptyReduction {
        /// The operation, e.g. `min`.
        operation: &'static str,
    },
    /// A scan of an array that is neither 1-D nor C-contiguous.
    #[error("size mismatch in scan: an array of shape {shape:?} and strides {strides:?}: scans take a 1-D array or a C-contiguous one (`to_contiguous` first)")]
    ScanLayout {
        /// The array's shape.
        shape: Vec<usize>,
        /// Its strides, in elements.
        strides: Vec<isize>,
    },
    /// A scan of more elements than one scan takes.
    #[error("size mismatch in scan: {elements} elements are more than one scan takes")]
    ScanTooLong {
        /// Elements to scan.
        elements: usize,
    },
    /// `ndarray` refused the shape (the `gpuarray` feature).
    #[cfg(feature = "gpuarray")]
    #[error("size mismatch in {operation}: {source}")]
    Ndarray {
        /// The operation, e.g. `DeviceArray::to_ndarray`.
        operation: &'static str,
        /// `ndarray`'s error.
        #[source]
        source: ndarray::ShapeError,
    },
}
