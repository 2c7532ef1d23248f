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
    /// An axis given twice to a reduction over several axes (NumPy's "duplicate value in
    /// 'axis'").
    #[error("size mismatch in a reduction over several axes: axis {axis} is given twice")]
    DuplicateAxis {
        /// The axis given again, as given (negative counts from the end).
        axis: isize,
    },
    /// One axis given for two roles that must differ (NumPy's `rot90` "Axes must be
    /// different").
    #[error("size mismatch in {operation}: axis {axis} is given twice; name two different axes")]
    RepeatedAxis {
        /// The operation, e.g. `DeviceArray::rot90`.
        operation: &'static str,
        /// The axis (counted from the start).
        axis: usize,
    },
    /// `nanargmax`/`nanargmin` over elements that are all NaN (NumPy's "All-NaN slice
    /// encountered"): no index to give.
    #[error("size mismatch in {operation}: every element is NaN, there is no index to give")]
    AllNanReduction {
        /// The operation, e.g. `nanargmax`.
        operation: &'static str,
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
    /// Indices of a gathered reduction (`sum_at`, ...) outside `-len..len` (NumPy's
    /// `IndexError`); counted on the device, so the reduction ran and its result is not given.
    /// (`take`/`put` report the first such index instead: [`IndexOutOfRange`](Self::IndexOutOfRange).)
    #[error("size mismatch in {operation}: {count} of the indices are outside -{len}..{len}")]
    IndicesOutOfRange {
        /// The operation, e.g. `sum_at`.
        operation: &'static str,
        /// How many indices were out of range.
        count: u32,
        /// Elements of the indexed array.
        len: usize,
    },
    /// Shapes that do not broadcast together by NumPy's rules (aligned on the last axis, each
    /// axis of equal lengths or one of them 1).
    #[error("size mismatch in broadcast: shapes {shape:?} and {other:?} cannot be broadcast together")]
    Broadcast {
        /// The shape of the arrays before (their broadcast), or the array's.
        shape: Vec<usize>,
        /// The shape that does not fit it.
        other: Vec<usize>,
    },
    /// An array an elementwise kernel writes whose shape is not the broadcast shape of the
    /// arrays (outputs are not broadcast: an in-place result cannot grow).
    #[error("size mismatch in elementwise: the output `{param}` has shape {shape:?} but the arrays broadcast to {broadcast:?}")]
    OutputShape {
        /// The kernel parameter.
        param: String,
        /// Its shape.
        shape: Vec<usize>,
        /// The shape the arrays broadcast to.
        broadcast: Vec<usize>,
    },
    /// An array an elementwise kernel writes whose elements overlap each other (a stride 0 on
    /// an axis longer than 1, as a broadcast view has): threads would race on one element.
    #[error("size mismatch in elementwise: the output `{param}` (shape {shape:?}, strides {strides:?}) names one element at several indices; write to a contiguous array")]
    OutputOverlapsItself {
        /// The kernel parameter.
        param: String,
        /// Its shape.
        shape: Vec<usize>,
        /// Its strides, in elements.
        strides: Vec<isize>,
    },
    /// `arange` bounds that give no finite count of elements: a step of zero, a bound or step
    /// that is not finite, or more elements than a `usize` counts.
    #[error("size mismatch in DeviceArray::arange: start {start}, stop {stop} and step {step} give no finite number of elements (the step must be finite and not zero, the bounds finite)")]
    ArangeStep {
        /// The first value.
        start: f64,
        /// The bound, excluded.
        stop: f64,
        /// The step.
        step: f64,
    },
    /// An axis that the array (or, for a new axis, the result) does not have.
    #[error("size mismatch in {operation}: axis {axis} of an array of {axes} axes")]
    NoSuchAxis {
        /// The operation, e.g. `DeviceArray::squeeze_axis`.
        operation: &'static str,
        /// The axis asked for.
        axis: usize,
        /// The number of axes there are.
        axes: usize,
    },
    /// `squeeze_axis` of an axis whose length is not 1.
    #[error("size mismatch in DeviceArray::squeeze_axis: axis {axis} has length {len}, not 1")]
    SqueezeLength {
        /// The axis asked for.
        axis: usize,
        /// Its length.
        len: usize,
    },
    /// A `reshape_infer` shape with more than one inferred axis, or whose given axes do not
    /// divide the elements.
    #[error("size mismatch in DeviceArray::reshape_infer: {elements} elements do not fit the shape {shape:?} (`None` is the one inferred axis)")]
    ReshapeInfer {
        /// The shape asked for.
        shape: Vec<Option<usize>>,
        /// The elements the array holds.
        elements: usize,
    },
    /// Arrays joined by `concatenate` or `stack` whose shapes differ where they must agree.
    #[error("size mismatch in {operation} along axis {axis}: array {index} has shape {shape:?}, array 0 has {first:?}")]
    JoinShapes {
        /// `concatenate` or `stack`.
        operation: &'static str,
        /// The axis joined along.
        axis: usize,
        /// The first array's shape.
        first: Vec<usize>,
        /// The position of the array that differs.
        index: usize,
        /// Its shape.
        shape: Vec<usize>,
    },
    /// `concatenate` or `stack` of no arrays (the result has no shape), `lexsort` of no keys,
    /// `select` of no pairs.
    #[error("size mismatch in {operation}: no arrays given; at least one is needed")]
    NoArrays {
        /// `concatenate`, `stack`, `lexsort` or `select`.
        operation: &'static str,
    },
    /// Fewer arrays than the operation takes (NumPy's `ValueError` of `linalg.multi_dot`:
    /// "Expecting at least two arrays").
    #[error("size mismatch in {operation}: {given} arrays given; it takes at least {least}")]
    TooFewArrays {
        /// The operation, e.g. `multi_dot`.
        operation: &'static str,
        /// The arrays given.
        given: usize,
        /// The fewest it takes.
        least: usize,
    },
    /// Nested lists of `block` whose arrays sit at different depths (NumPy's `ValueError`:
    /// "List depths are mismatched"), or an empty list ("Lists cannot be empty").
    #[error("size mismatch in block: {problem}; every array must sit under the same number of lists, and no list may be empty")]
    BlockLists {
        /// What was found, e.g. `an array at depth 1 and another at depth 2`.
        problem: String,
    },
    /// Two arrays read as flat vectors (`vdot`) of different numbers of elements.
    #[error("size mismatch in {operation}: {first} elements against {second}")]
    ElementCounts {
        /// The operation, e.g. `DeviceArray::vdot`.
        operation: &'static str,
        /// The elements of the first array.
        first: usize,
        /// The elements of the second.
        second: usize,
    },
    /// A host array of another shape than the device array it is copied into
    /// (`DeviceArray::set`).
    #[error(
        "size mismatch in {operation}: the host array has shape {host:?} but the device array {device:?}"
    )]
    HostShape {
        /// The operation, e.g. `DeviceArray::set`.
        operation: &'static str,
        /// The host array's shape.
        host: Vec<usize>,
        /// The device array's shape.
        device: Vec<usize>,
    },
    /// An index outside its axis in `IndexMode::Raise` (`take`, `put`, `multi_put`).
    #[error("size mismatch in {operation}: index {index} is out of bounds for an axis of length {len}")]
    IndexOutOfRange {
        /// The operation, e.g. `DeviceArray::take`.
        operation: &'static str,
        /// The first index found outside (which one, when there are several, is unspecified).
        index: i64,
        /// The length of the axis.
        len: usize,
    },
    /// A device view reinterpreted as another element type ([`DeviceView::cast`](crate::DeviceView::cast)),
    /// whose bytes are not a whole number of the new elements or whose address is not aligned
    /// for them.
    #[error("a view of {bytes} bytes at {address:#x} cannot be reinterpreted as `{to}` ({size} bytes, aligned to {align}): its length must be a multiple of the size and its address of the alignment")]
    ViewCast {
        /// The view's device address.
        address: u64,
        /// The view's length in bytes.
        bytes: usize,
        /// The element type asked for.
        to: &'static str,
        /// Its size in bytes.
        size: usize,
        /// Its alignment in bytes.
        align: usize,
    },
    /// A sort (or an operation built on one: `argsort`, `unique`, `median`, ...) of more
    /// elements than one sort takes (its tile counts are 30-bit words).
    #[error("size mismatch in {operation}: {elements} elements are more than one sort takes ({max})")]
    SortTooLong {
        /// The operation, e.g. `DeviceArray::sort`.
        operation: &'static str,
        /// The elements asked for.
        elements: usize,
        /// The most a sort takes.
        max: usize,
    },
    /// An axis (negative: counted from the end, as NumPy's) that the array does not have.
    #[error("size mismatch in {operation}: axis {axis} is out of bounds for an array of {axes} axes")]
    AxisOutOfBounds {
        /// The operation, e.g. `DeviceArray::sort_axis`.
        operation: &'static str,
        /// The axis asked for.
        axis: isize,
        /// The number of axes there are.
        axes: usize,
    },
    /// A quantile outside `0..=1` (or a percentile outside `0..=100`), or NaN.
    #[error("size mismatch in {operation}: {q} is outside {range}")]
    QuantileOutOfRange {
        /// The operation, e.g. `DeviceArray::percentile`.
        operation: &'static str,
        /// The quantile or percentile given.
        q: f64,
        /// The range it must lie in (`0..=1`, `0..=100`).
        range: &'static str,
    },
    /// An operation NumPy refuses on a 0-d array (`nonzero`, a view as a type of another
    /// size).
    #[error("size mismatch in {operation}: not allowed on a 0-d array (use a 1-d array of one element)")]
    ZeroDimensional {
        /// The operation, e.g. `DeviceArray::nonzero`.
        operation: &'static str,
    },
    /// A boolean mask whose shape is not the array's (`masked`, `set_masked`).
    #[error("size mismatch in {operation}: the mask has shape {mask:?} but the array {shape:?}")]
    MaskShape {
        /// The operation, e.g. `DeviceArray::masked`.
        operation: &'static str,
        /// The array's shape.
        shape: Vec<usize>,
        /// The mask's shape.
        mask: Vec<usize>,
    },
    /// Arrays that must have as many axes and do not (`take_along_axis`).
    #[error("size mismatch in {operation}: the array has {axes} axes but the indices {index_axes}")]
    AxesDiffer {
        /// The operation, e.g. `DeviceArray::take_along_axis`.
        operation: &'static str,
        /// Axes of the array.
        axes: usize,
        /// Axes of the index array.
        index_axes: usize,
    },
    /// A negative value where only non-negative ones count (`bincount`).
    #[error("size mismatch in {operation}: the input holds the negative value {value}")]
    NegativeValue {
        /// The operation, e.g. `DeviceArray::bincount`.
        operation: &'static str,
        /// The smallest value found.
        value: i64,
    },
    /// A value too large for the operation's counts (`bincount` of `u64` above `i64::MAX`).
    #[error("size mismatch in {operation}: the input holds the value {value}, more bins than memory holds")]
    ValueTooLarge {
        /// The operation, e.g. `DeviceArray::bincount`.
        operation: &'static str,
        /// The largest value found.
        value: u64,
    },
    /// Weights of an average that sum to zero (NumPy's `average` raises `ZeroDivisionError`).
    #[error("size mismatch in {operation}: the weights sum to zero{}, so the average is undefined", if *.lanes > 1 { format!(" in {} lanes", .lanes) } else { String::new() })]
    WeightsSumToZero {
        /// The operation, e.g. `DeviceArray::average_weighted`.
        operation: &'static str,
        /// How many averages (lanes) have weights summing to zero.
        lanes: usize,
    },
    /// Bins of a histogram that are not `bins >= 1` over a finite range `low <= high`.
    #[error("size mismatch in histogram: {bins} bins over the range [{low}, {high}] (need at least one bin and a finite range with low <= high)")]
    HistogramRange {
        /// The number of bins asked for.
        bins: usize,
        /// The range's lower end (the data's minimum when no range was given).
        low: f64,
        /// The range's upper end.
        high: f64,
    },
    /// Explicit histogram edges that are fewer than two or do not increase.
    #[error("size mismatch in histogram: the bin edges must be at least two and increase monotonically; edge {index} is {value}")]
    HistogramEdges {
        /// The first edge out of order (0 when there are fewer than two).
        index: usize,
        /// Its value (NaN when there is none).
        value: f64,
    },
    /// Bins of `digitize` that neither rise nor fall all the way (NumPy's `ValueError`).
    #[error("size mismatch in digitize: the bins must be monotonically increasing or decreasing (they rise and fall); sort them first")]
    BinsNotMonotonic,
    /// A view as an element type of another size that NumPy's rules refuse: the last axis must
    /// be contiguous, its bytes a multiple of the new size, the other strides and the start
    /// aligned to it.
    #[error("size mismatch in DeviceArray::view_as from elements of {from} bytes to {to}: {why} (shape {shape:?})")]
    ViewElementSize {
        /// The size of the array's element type, in bytes.
        from: usize,
        /// The size of the element type asked for.
        to: usize,
        /// What rule fails.
        why: &'static str,
        /// The array's shape.
        shape: Vec<usize>,
    },
    /// Random integers from an empty range (`randint` with `low >= high`).
    #[error("size mismatch in randint: low {low} is not below high {high} (high is exclusive)")]
    EmptyRange {
        /// The lower end, included, in decimal (a number of any integer type).
        low: String,
        /// The upper end, excluded.
        high: String,
    },
    /// A split NumPy's `split` refuses: into no sections, or into sections that do not divide
    /// the axis equally (`array_split` takes unequal ones).
    #[error("size mismatch in {operation}: an axis of length {len} does not split into {sections} equal sections (the number must be at least 1 and divide the length; array_split makes unequal ones)")]
    SplitSections {
        /// The operation, e.g. `DeviceArray::split`.
        operation: &'static str,
        /// The length of the axis split.
        len: usize,
        /// The number of sections asked for.
        sections: usize,
    },
    /// An empty axis padded by a mode that repeats its elements (NumPy's `ValueError`: only a
    /// constant border can extend an axis of no elements).
    #[error("size mismatch in DeviceArray::pad: axis {axis} is empty, so there is no element to repeat; pad it with PadMode::Constant or not at all")]
    PadEmptyAxis {
        /// The empty axis.
        axis: usize,
    },
    /// A numerical gradient NumPy's `gradient` refuses: an `edge_order` other than 1 or 2, or
    /// an axis shorter than `edge_order + 1` elements.
    #[error("size mismatch in DeviceArray::gradient: axis {axis} has {len} elements and edge_order is {edge_order}; the edge order must be 1 or 2 and the axis at least edge_order + 1 long")]
    Gradient {
        /// The axis differentiated along.
        axis: usize,
        /// Its length.
        len: usize,
        /// The edge order asked for.
        edge_order: usize,
    },
    /// An empty array where the operation needs elements (NumPy's `ValueError`, e.g.
    /// `convolve` of an empty array).
    #[error("size mismatch in {operation}: `{operand}` is empty; it needs at least one element")]
    EmptyOperand {
        /// The operation, e.g. `convolve`.
        operation: &'static str,
        /// The empty operand's name in the operation's signature.
        operand: &'static str,
    },
    /// `apply_along_axis` over an array whose other axes hold no element (NumPy's
    /// `ValueError`): the function would never be called, so the result's shape is unknown.
    #[error("size mismatch in {operation}: shape {shape:?} has no element along the axes other than {axis}, so the function is never called and the result's shape is unknown")]
    NoLanes {
        /// The operation, `apply_along_axis`.
        operation: &'static str,
        /// The array's shape.
        shape: Vec<usize>,
        /// The axis the function is applied along.
        axis: usize,
    },
    /// Results of a function applied along an axis (`apply_along_axis`) whose shapes differ.
    #[error("size mismatch in {operation}: the function returned shape {first:?} for the first lane and {other:?} for lane {lane}; every call must return one shape")]
    LaneShapes {
        /// The operation, `apply_along_axis`.
        operation: &'static str,
        /// The first result's shape.
        first: Vec<usize>,
        /// The differing result's shape.
        other: Vec<usize>,
        /// The lane (its index in C order over the other axes).
        lane: usize,
    },
    /// An array without the square diagonal an operation needs (NumPy's `ValueError` of
    /// `fill_diagonal` and `diag_indices_from`): fewer than two axes, or axes of different
    /// lengths (`fill_diagonal` takes any 2-d shape).
    #[error("size mismatch in {operation}: the array has shape {shape:?}; it needs at least 2 axes, all of one length (fill_diagonal also takes any 2-d shape)")]
    NotSquare {
        /// The operation, e.g. `DeviceArray::fill_diagonal`.
        operation: &'static str,
        /// The array's shape.
        shape: Vec<usize>,
    },
    /// Subscripts of `einsum` that do not fit its operands (NumPy's `ValueError`): a term per
    /// operand, a label per axis (`...` for the rest), output labels once each and from the
    /// inputs, and one length per label (or 1, which broadcasts).
    #[error("size mismatch in einsum: subscripts {subscripts:?}: {problem}")]
    Einsum {
        /// The subscripts given.
        subscripts: String,
        /// What does not fit, and where.
        problem: String,
    },
    /// Vectors of `cross` with other than 2 or 3 components (NumPy's `ValueError`).
    #[error("size mismatch in cross: vectors of {a} and {b} components; each must have 2 or 3 (pick their axes with cross_axes)")]
    CrossDimension {
        /// The components of `a`'s vectors (the length of its axis `axisa`).
        a: usize,
        /// The components of `b`'s vectors.
        b: usize,
    },
    /// An array of more axes than the operation takes (NumPy's `ValueError` of `cov` of a
    /// 3-d array).
    #[error("size mismatch in {operation}: an array of {axes} axes; it takes at most {most}")]
    TooManyAxes {
        /// The operation, e.g. `cov`.
        operation: &'static str,
        /// The array's number of axes.
        axes: usize,
        /// The most it takes.
        most: usize,
    },
    /// An `out=` array of a reduction (`sum_into`, `max_axis_into`, ...) whose shape is not the
    /// result's (NumPy's `ValueError`; `matmul_into`'s is `GemmError::OutputShape`).
    #[error("size mismatch in {operation}: the out array has shape {shape:?}, the result {expected:?}")]
    OutShape {
        /// The operation, e.g. `sum_axis_into`.
        operation: &'static str,
        /// The out array's shape.
        shape: Vec<usize>,
        /// The result's shape.
        expected: Vec<usize>,
    },
}
