//! NumPy's `take_along_axis(arr, indices, axis)`: `out[..., j, ...] = arr[..., indices[..., j,
//! ...], ...]` along `axis`, the other axes of `arr` and `indices` broadcast against each
//! other. Indices of any integer type; negative ones count from the end; one outside the axis
//! is [`ArrayShapeError::IndexOutOfRange`] (NumPy's `IndexError`), which waits for the kernel.
//!
//! The kernel reads both operands through their strides (a broadcast axis has stride 0), so
//! no operand is copied first; it writes a new C-order array.
//!
//! NumPy's `put_along_axis(arr, indices, values, axis)` is the same walk the other way:
//! `arr[..., indices[..., j, ...], ...] = values[..., j, ...]`, `values` broadcast to the
//! walk's shape, `arr` written in place through its strides. Its indices are checked by a first
//! launch of the kernel that writes nothing, so that an index out of range is refused with
//! `arr` unchanged.

use ndarray::{Dimension, IxDyn};

use crate::driver::context::core::Context;
use crate::driver::memory::buffer::DeviceBuffer;
use crate::error::{ArrayShapeError, Result};
use crate::gpuarray::array::axes::normalize_axis;
use crate::gpuarray::array::core::{DeviceArray, DeviceArrayBase, Storage, StorageMut};
use crate::gpuarray::array::layout;
use crate::gpuarray::array::on_stream::{on_legacy_stream, OnStream};
use crate::gpuarray::copy::gather::{check_bad, INDEX_FN};
use crate::gpuarray::elements::cast::headers_for;
use crate::gpuarray::elements::dtype::DType;
use crate::gpuarray::elements::element::Element;
use crate::gpuarray::elements::index_element::{read_index, IndexElement};
use crate::gpuarray::kernels::broadcast::broadcast_strides;
use crate::gpuarray::kernels::registry::{self, BLOCK};
use crate::gpuarray::kernels::source_kernels::SourceKernels;
use crate::launch::Arg;

const NAME: &str = "gpu_take_along";
const PUT_NAME: &str = "gpu_put_along";

/// The gather's source for elements `t` and indices `index`. `dims` holds the result's shape,
/// then the strides of `arr` and of `indices` for each of its axes (0 where broadcast).
fn take_source(t: DType, index: DType) -> String {
    let (tc, ic) = (t.c_name(), index.c_name());
    let read = read_index(index, "idx[io]");
    format!(
        "{headers}{INDEX_FN}extern \"C\" __global__ void {NAME}(unsigned long long n, const {tc} *__restrict__ a, \
         const {ic} *__restrict__ idx, {tc} *__restrict__ out, const long long *__restrict__ dims, int ndim, \
         int axis, long long a_base, long long i_base, long long len, unsigned long long *bad) {{\n\
         for (unsigned long long t = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; t < n;\n\
              t += (unsigned long long)gridDim.x * blockDim.x) {{\n\
             unsigned long long rem = t;\n\
             long long ao = a_base, io = i_base;\n\
             for (int d = ndim - 1; d >= 0; --d) {{\n\
                 const unsigned long long l = (unsigned long long)dims[d];\n\
                 const long long c = (long long)(rem % l);\n\
                 rem /= l;\n\
                 io += c * dims[2 * ndim + d];\n\
                 if (d != axis) ao += c * dims[ndim + d];\n\
             }}\n\
             const long long ix = gpu_index({read}, len, 0, bad);\n\
             if (ix >= 0) out[t] = a[ao + ix * dims[ndim + axis]];\n\
         }}\n}}\n",
        headers = headers_for([t, index]),
    )
}

/// The scatter's source: `dims` holds the walk's shape, then the strides of `arr`, of
/// `indices` and of `values` along it; with `write == 0` it only checks the indices.
fn put_source(t: DType, index: DType) -> String {
    let (tc, ic) = (t.c_name(), index.c_name());
    let read = read_index(index, "idx[io]");
    format!(
        "{headers}{INDEX_FN}extern \"C\" __global__ void {PUT_NAME}(unsigned long long n, {tc} *__restrict__ a, \
         const {ic} *__restrict__ idx, const {tc} *__restrict__ v, const long long *__restrict__ dims, int ndim, \
         int axis, long long a_base, long long i_base, long long v_base, long long len, int write, \
         unsigned long long *bad) {{\n\
         for (unsigned long long t = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; t < n;\n\
              t += (unsigned long long)gridDim.x * blockDim.x) {{\n\
             unsigned long long rem = t;\n\
             long long ao = a_base, io = i_base, vo = v_base;\n\
             for (int d = ndim - 1; d >= 0; --d) {{\n\
                 const unsigned long long l = (unsigned long long)dims[d];\n\
                 const long long c = (long long)(rem % l);\n\
                 rem /= l;\n\
                 io += c * dims[2 * ndim + d];\n\
                 vo += c * dims[3 * ndim + d];\n\
                 if (d != axis) ao += c * dims[ndim + d];\n\
             }}\n\
             const long long ix = gpu_index({read}, len, 0, bad);\n\
             if (write && ix >= 0) a[ao + ix * dims[ndim + axis]] = v[vo];\n\
         }}\n}}\n",
        headers = headers_for([t, index]),
    )
}

/// The gathers and the scatters, in one cache keyed by `put` (the scatter), element type and
/// index type.
static KERNELS: SourceKernels<(bool, DType, DType)> = SourceKernels::new();

fn prepared(ctx: &Context, t: DType, index: DType, put: bool) -> Result<crate::launch::PreparedFunction> {
    if put {
        KERNELS.prepared(ctx, (put, t, index), PUT_NAME, || put_source(t, index))
    } else {
        KERNELS.prepared(ctx, (put, t, index), NAME, || take_source(t, index))
    }
}

/// The result's shape and each operand's strides along it (0 where broadcast), NumPy's rule:
/// the axes other than `axis` broadcast, the result's `axis` is the indices'.
pub(crate) fn along_layout(
    shape: &[usize],
    strides: &[isize],
    ishape: &[usize],
    istrides: &[isize],
    axis: usize,
) -> Result<(Vec<usize>, Vec<isize>, Vec<isize>)> {
    let mut out = Vec::with_capacity(shape.len());
    let (mut sa, mut si) = (Vec::new(), Vec::new());
    for d in 0..shape.len() {
        if d == axis {
            out.push(ishape[d]);
            sa.push(strides[d]);
            si.push(if ishape[d] == 1 { 0 } else { istrides[d] });
            continue;
        }
        let (l, li) = (shape[d], ishape[d]);
        let len = if l == li || li == 1 {
            l
        } else if l == 1 {
            li
        } else {
            return Err(ArrayShapeError::Broadcast {
                shape: shape.to_vec(),
                other: ishape.to_vec(),
            }
            .into());
        };
        out.push(len);
        sa.push(if l == 1 { 0 } else { strides[d] });
        si.push(if li == 1 { 0 } else { istrides[d] });
    }
    Ok((out, sa, si))
}

impl<S: Storage<Elem: Element>, D: Dimension> DeviceArrayBase<S, D> {
    on_legacy_stream! {
        /// The elements at `indices` along `axis` (NumPy's `take_along_axis(a, indices, axis)`;
        /// negative `axis` counts from the end): `indices` has as many axes as this array
        /// ([`ArrayShapeError::AxesDiffer`]), its other axes broadcast against this array's, and
        /// the result (a new C-order array) has the broadcast shape with `indices`' length along
        /// `axis`. Indices of any integer type, negative ones counting from the end.
        ///
        /// ```no_run
        /// use gpu_runtime::gpuarray::DeviceArray;
        /// use gpu_runtime::ndarray::arr2;
        /// let ctx = gpu_runtime::Context::default()?;
        /// let a = DeviceArray::from_ndarray(&ctx, &arr2(&[[10.0f32, 30.0, 20.0], [60.0, 40.0, 50.0]]))?;
        /// let i = DeviceArray::from_ndarray(&ctx, &arr2(&[[0i32], [-2]]))?;
        /// assert_eq!(a.take_along_axis(&i, 1)?.to_vec()?, [10.0, 40.0]);
        /// # Ok::<(), gpu_runtime::Error>(())
        /// ```
        fn take_along_axis[SI: Storage<Elem: IndexElement>, DI: Dimension](
            &self,
            indices: &DeviceArrayBase<SI, DI>,
            axis: isize,
        ) -> Result<DeviceArray<S::Elem, IxDyn>>;
    }
}

impl<S: Storage<Elem: Element>, D: Dimension> OnStream<'_, &DeviceArrayBase<S, D>> {
    /// [`take_along_axis`](DeviceArrayBase::take_along_axis) on this stream.
    pub fn take_along_axis<SI: Storage<Elem: IndexElement>, DI: Dimension>(
        &self,
        indices: &DeviceArrayBase<SI, DI>,
        axis: isize,
    ) -> Result<DeviceArray<S::Elem, IxDyn>> {
        const OP: &str = "DeviceArray::take_along_axis";
        let (a, stream) = (self.target, self.stream);
        let axis = along_axis(OP, a, indices, axis)?;
        let (shape, sa, si) = along_layout(a.shape(), a.strides(), indices.shape(), indices.strides(), axis)?;
        let ctx = a.context();
        let mut out = DeviceArray::<S::Elem, IxDyn>::empty(ctx, IxDyn(&shape))?;
        let n = out.len() as u64;
        if n == 0 {
            return Ok(out);
        }
        let len = a.shape()[axis];
        // Offsets from the lowest address each operand's pointer starts at.
        let a_base = span_base(a.shape(), a.strides());
        let i_base = span_base(indices.shape(), indices.strides());
        let dims = walk_dims(ctx, &shape, &[&sa, &si])?;
        let mut bad = DeviceBuffer::<u64>::zeros(ctx, 2)?;
        let f = prepared(ctx, S::Elem::DTYPE, SI::Elem::DTYPE, false)?;
        let grid = registry::grid_for(ctx, n)?;
        let args = [
            Arg::U64(n),
            Arg::input::<S::Elem, _>(a),
            Arg::input::<SI::Elem, _>(indices),
            Arg::output(&mut out),
            Arg::input::<i64, _>(&dims),
            Arg::I32(shape.len() as i32),
            Arg::I32(axis as i32),
            Arg::I64(a_base),
            Arg::I64(i_base),
            Arg::I64(len as i64),
            Arg::output(&mut bad),
        ];
        registry::launch(&f, grid, BLOCK, stream, &args)?;
        check_bad(&bad, OP, len)?;
        Ok(out)
    }
}

impl<S: StorageMut<Elem: Element>, D: Dimension> DeviceArrayBase<S, D> {
    on_legacy_stream! {
        /// Writes `values` at `indices` along `axis` of this array, in place (NumPy's
        /// `put_along_axis(a, indices, values, axis)`; negative `axis` counts from the end):
        /// `indices` has as many axes as this array ([`ArrayShapeError::AxesDiffer`]), its other
        /// axes broadcast against this array's, and `values` broadcasts to that walk's shape
        /// ([`ArrayShapeError::Broadcast`]). Indices of any integer type, negative ones counting
        /// from the end; one out of range is [`ArrayShapeError::IndexOutOfRange`] with nothing
        /// written (waits for the check). Where two indices meet, which value stays is unspecified
        /// (NumPy: the last).
        ///
        /// ```no_run
        /// use gpu_runtime::gpuarray::DeviceArray;
        /// use gpu_runtime::ndarray::arr2;
        /// let ctx = gpu_runtime::Context::default()?;
        /// let mut a = DeviceArray::from_ndarray(&ctx, &arr2(&[[10.0f32, 30.0, 20.0], [60.0, 40.0, 50.0]]))?;
        /// let i = DeviceArray::from_ndarray(&ctx, &arr2(&[[1i64], [-1]]))?;
        /// let v = DeviceArray::from_ndarray(&ctx, &arr2(&[[0.0f32]]))?;
        /// a.put_along_axis(&i, &v, 1)?;
        /// assert_eq!(a.to_vec()?, [10.0, 0.0, 20.0, 60.0, 40.0, 0.0]);
        /// # Ok::<(), gpu_runtime::Error>(())
        /// ```
        fn put_along_axis[SI, DI, SV, DV](
            &mut self, indices: &DeviceArrayBase<SI, DI>, values: &DeviceArrayBase<SV, DV>, axis: isize,
        ) -> Result<()>
            where [
                SI: Storage<Elem: IndexElement>, DI: Dimension,
                SV: Storage<Elem = S::Elem>, DV: Dimension,
            ];
    }
}

impl<S: StorageMut<Elem: Element>, D: Dimension> OnStream<'_, &mut DeviceArrayBase<S, D>> {
    /// [`put_along_axis`](DeviceArrayBase::put_along_axis) on this stream.
    pub fn put_along_axis<SI, DI, SV, DV>(
        &mut self,
        indices: &DeviceArrayBase<SI, DI>,
        values: &DeviceArrayBase<SV, DV>,
        axis: isize,
    ) -> Result<()>
    where
        SI: Storage<Elem: IndexElement>,
        DI: Dimension,
        SV: Storage<Elem = S::Elem>,
        DV: Dimension,
    {
        const OP: &str = "DeviceArray::put_along_axis";
        let (a, stream) = (&mut *self.target, self.stream);
        let axis = along_axis(OP, a, indices, axis)?;
        let (shape, sa, si) = along_layout(a.shape(), a.strides(), indices.shape(), indices.strides(), axis)?;
        let sv = broadcast_strides(values.shape(), values.strides(), &shape).ok_or_else(|| {
            ArrayShapeError::Broadcast {
                shape: values.shape().to_vec(),
                other: shape.clone(),
            }
        })?;
        let n = shape.iter().product::<usize>() as u64;
        if n == 0 {
            return Ok(());
        }
        let len = a.shape()[axis];
        let a_base = span_base(a.shape(), a.strides());
        let i_base = span_base(indices.shape(), indices.strides());
        let v_base = span_base(values.shape(), values.strides());
        let ctx = a.context().clone();
        let dims = walk_dims(&ctx, &shape, &[&sa, &si, &sv])?;
        let mut bad = DeviceBuffer::<u64>::zeros(&ctx, 2)?;
        let f = prepared(&ctx, S::Elem::DTYPE, SI::Elem::DTYPE, true)?;
        let grid = registry::grid_for(&ctx, n)?;
        // The check, then (every index in range) the writes.
        for write in [0, 1] {
            let args = [
                Arg::U64(n),
                Arg::output(a),
                Arg::input::<SI::Elem, _>(indices),
                Arg::input::<S::Elem, _>(values),
                Arg::input::<i64, _>(&dims),
                Arg::I32(shape.len() as i32),
                Arg::I32(axis as i32),
                Arg::I64(a_base),
                Arg::I64(i_base),
                Arg::I64(v_base),
                Arg::I64(len as i64),
                Arg::I32(write),
                Arg::output(&mut bad),
            ];
            registry::launch(&f, grid, BLOCK, stream, &args)?;
            if write == 0 {
                check_bad(&bad, OP, len)?;
            }
        }
        Ok(())
    }
}

/// The offset of an operand's element 0 from the lowest address it spans (where its kernel
/// pointer starts), in elements.
fn span_base(shape: &[usize], strides: &[isize]) -> i64 {
    layout::span(shape, strides).map_or(0, |(lo, _)| -lo) as i64
}

/// The kernels' `dims`: the walk's shape, then each operand's strides along it, on the device.
fn walk_dims(ctx: &Context, shape: &[usize], strides: &[&[isize]]) -> Result<DeviceBuffer<i64>> {
    let dims: Vec<i64> = shape
        .iter()
        .map(|&l| l as i64)
        .chain(strides.iter().flat_map(|s| s.iter().map(|&x| x as i64)))
        .collect();
    DeviceBuffer::from_host(ctx, &dims[..])
}

/// The axis that `take_along_axis` and `put_along_axis` (`operation`, for errors) walk `a`
/// along at `indices` (negative counts from the end), once `indices` is found to have as many
/// axes as `a` ([`ArrayShapeError::AxesDiffer`]).
fn along_axis<S: Storage, D: Dimension, SI: Storage, DI: Dimension>(
    operation: &'static str,
    a: &DeviceArrayBase<S, D>,
    indices: &DeviceArrayBase<SI, DI>,
    axis: isize,
) -> Result<usize> {
    if a.ndim() != indices.ndim() {
        return Err(ArrayShapeError::AxesDiffer {
            operation,
            axes: a.ndim(),
            index_axes: indices.ndim(),
        }
        .into());
    }
    normalize_axis(operation, axis, a.ndim())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kernel_compiles_for_each_element_and_index_type() {
        let mut all = String::new();
        let pairs = [
            (DType::F32, DType::I64),
            (DType::F64, DType::I32),
            (DType::F16, DType::U8),
            (DType::Bf16, DType::I8),
            (DType::Bool, DType::U16),
            (DType::Complex64, DType::U64),
            (DType::I16, DType::U32),
            (DType::U64, DType::I16),
        ];
        for (k, (t, i)) in pairs.into_iter().enumerate() {
            let s = take_source(t, i);
            let decl = gpu_cuda_source::find_kernel(&s, NAME).unwrap();
            assert_eq!(decl.params.len(), 11);
            let p = put_source(t, i);
            assert_eq!(
                gpu_cuda_source::find_kernel(&p, PUT_NAME).unwrap().params.len(),
                13
            );
            if let Err(e) = registry::compile_check(&p, "sm_90") {
                panic!("put_along_axis of {t:?} at {i:?}: {e}");
            }
            // One translation unit: each kernel and its index helper renamed apart.
            all.push_str(
                &s.replace(NAME, &format!("{NAME}{k}"))
                    .replace("gpu_index", &format!("gpu_index{k}")),
            );
        }
        if let Err(e) = registry::compile_check(&all, registry::check_arch(&all)) {
            panic!("{e}");
        }
    }

    #[test]
    fn the_other_axes_broadcast_as_numpys() {
        // arr (2, 3), indices (2, 1) along 1: out (2, 1).
        let (s, sa, si) = along_layout(&[2, 3], &[3, 1], &[2, 1], &[1, 1], 1).unwrap();
        assert_eq!((s, sa, si), (vec![2, 1], vec![3, 1], vec![1, 0]));
        // arr (1, 3), indices (4, 2) along 1: out (4, 2), arr's axis 0 broadcast.
        let (s, sa, si) = along_layout(&[1, 3], &[3, 1], &[4, 2], &[2, 1], 1).unwrap();
        assert_eq!((s, sa, si), (vec![4, 2], vec![0, 1], vec![2, 1]));
        // arr (5, 3), indices (1, 3) along 0: out (1, 3).
        let (s, _, si) = along_layout(&[5, 3], &[3, 1], &[1, 3], &[3, 1], 0).unwrap();
        assert_eq!((s, si), (vec![1, 3], vec![0, 1]));
        assert!(along_layout(&[2, 3], &[3, 1], &[3, 1], &[1, 1], 1).is_err());
        // A transposed (6, 5, 4) view of a C-order (4, 5, 6) array, indices (1, 1, 1) along 0:
        // NumPy broadcasts the indices over the other axes, out (1, 5, 4), not (1, 1, 1).
        let (s, sa, si) = along_layout(&[6, 5, 4], &[1, 6, 30], &[1, 1, 1], &[1, 1, 1], 0).unwrap();
        assert_eq!((s, sa, si), (vec![1, 5, 4], vec![1, 6, 30], vec![0, 0, 0]));
    }
}
