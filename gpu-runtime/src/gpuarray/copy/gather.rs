//! Gathers and scatters through index arrays: NumPy's `take(a, indices, axis, mode=)` and
//! `put(a, indices, values, mode=)`, and PyCUDA's `multi_take` / `multi_put` over several
//! arrays with one index array.
//!
//! Indices are arrays of any integer type ([`IndexElement`]: NumPy takes any integer array;
//! a `u64` above `i64::MAX` is out of range of every axis). What an index outside the axis does is NumPy's
//! `mode=`, an [`IndexMode`]: `Raise` (negative indices count from the end; any other is
//! [`ArrayShapeError::IndexOutOfRange`], which waits for the kernel to know), `Wrap` or
//! `Clip`. The kernels read and write contiguous memory: an operand of another layout is first
//! copied into C order.

use crate::gpuarray::elements::dtype::DType;
use ndarray::{Dimension, Ix1, IxDyn};

use crate::driver::context::core::Context;
use crate::driver::memory::buffer::DeviceBuffer;
use crate::driver::stream::Stream;
use crate::error::{check_counts, ArrayShapeError, Error, Result};
use crate::gpuarray::array::core::{DeviceArray, DeviceArrayBase, Storage, StorageMut};
use crate::gpuarray::array::on_stream::{on_legacy_stream, OnStream};
use crate::gpuarray::elements::element::Element;
use crate::gpuarray::elements::index_element::{read_index, IndexElement};
use crate::gpuarray::kernels::registry::{self, BLOCK};
use crate::gpuarray::kernels::source_kernels::SourceKernels;
use crate::launch::Arg;

/// What an index outside its axis does (NumPy's `mode=` of `take` and `put`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum IndexMode {
    /// Indices from `-len` to `len - 1`, the negative ones counting from the end; any other is
    /// [`ArrayShapeError::IndexOutOfRange`] (NumPy's default, `mode="raise"`). Checking waits
    /// for the kernel to finish.
    #[default]
    Raise,
    /// Taken modulo the length (`mode="wrap"`).
    Wrap,
    /// Clamped to `0..len` (`mode="clip"`; a negative index is 0, not counted from the end).
    Clip,
}

impl IndexMode {
    fn code(self) -> i32 {
        match self {
            IndexMode::Raise => 0,
            IndexMode::Wrap => 1,
            IndexMode::Clip => 2,
        }
    }
}

/// The index arithmetic both kernels share: the element an index names in an axis of `len`,
/// or -1 after recording the first index out of range in `bad` (`bad[0]` set once, `bad[1]`
/// the index).
pub(crate) const INDEX_FN: &str = r#"
__device__ long long gpu_index(long long ix, long long len, int mode, unsigned long long *bad) {
    long long w = -1;
    if (len > 0) {
        if (mode == 1) {
            w = ix % len;
            if (w < 0) w += len;
        } else if (mode == 2) {
            w = ix < 0 ? 0 : (ix >= len ? len - 1 : ix);
        } else {
            w = ix < 0 ? ix + len : ix;
            if (w >= len) w = -1;
        }
    }
    if (w < 0 && atomicCAS(&bad[0], 0ull, 1ull) == 0ull) bad[1] = (unsigned long long)ix;
    return w;
}
"#;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Gather {
    Take,
    Put,
}

impl Gather {
    fn name(self) -> &'static str {
        match self {
            Gather::Take => "gpu_take",
            Gather::Put => "gpu_put",
        }
    }

    fn source(self, t: &str, index: DType) -> String {
        let ic = index.c_name();
        let (read_j, read_t) = (read_index(index, "idx[j]"), read_index(index, "idx[t]"));
        let body = match self {
            // out[o, j, k] = a[o, idx[j], k], over the flat index of `out`.
            Gather::Take => format!(
                "extern \"C\" __global__ void gpu_take(unsigned long long n, const {t} *__restrict__ a, \
                 const {ic} *__restrict__ idx, {t} *__restrict__ out, unsigned long long m, \
                 unsigned long long inner, long long len, int mode, unsigned long long *bad) {{\n\
                 for (unsigned long long t = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; t < n;\n\
                      t += (unsigned long long)gridDim.x * blockDim.x) {{\n\
                     unsigned long long k = t % inner, r = t / inner, j = r % m, o = r / m;\n\
                     long long ix = gpu_index({read_j}, len, mode, bad);\n\
                     if (ix >= 0) out[t] = a[(o * (unsigned long long)len + (unsigned long long)ix) * inner + k];\n\
                 }}\n}}\n"
            ),
            // a.flat[idx[j]] = v[j % vlen].
            Gather::Put => format!(
                "extern \"C\" __global__ void gpu_put(unsigned long long m, {t} *a, const {ic} *__restrict__ idx, \
                 const {t} *__restrict__ v, unsigned long long vlen, long long len, int mode, \
                 unsigned long long *bad) {{\n\
                 for (unsigned long long t = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; t < m;\n\
                      t += (unsigned long long)gridDim.x * blockDim.x) {{\n\
                     long long ix = gpu_index({read_t}, len, mode, bad);\n\
                     if (ix >= 0) a[ix] = v[t % vlen];\n\
                 }}\n}}\n"
            ),
        };
        format!("{INDEX_FN}{body}")
    }
}

/// The kernel of each (gather, element type, index type).
static KERNELS: SourceKernels<(Gather, DType, DType)> = SourceKernels::new();

fn prepared(ctx: &Context, g: Gather, t: DType, index: DType) -> Result<crate::launch::PreparedFunction> {
    KERNELS.prepared(ctx, (g, t, index), g.name(), || {
        crate::gpuarray::elements::cast::headers_for([t]) + &g.source(t.c_name(), index)
    })
}

/// After a launch in `Raise` mode: the first index out of range, as an error.
pub(super) fn check_bad(bad: &DeviceBuffer<u64>, operation: &'static str, len: usize) -> Result<()> {
    let v = bad.to_vec()?;
    if v[0] != 0 {
        return Err(ArrayShapeError::IndexOutOfRange {
            operation,
            index: v[1] as i64,
            len,
        }
        .into());
    }
    Ok(())
}

/// Launches `g` of elements `T` and indices `I` over `work` threads.
fn launch<T: Element, I: IndexElement>(
    ctx: &Context,
    stream: Option<&Stream>,
    g: Gather,
    work: u64,
    args: &[Arg<'_>],
) -> Result<()> {
    let f = prepared(ctx, g, T::DTYPE, I::DTYPE)?;
    let grid = registry::grid_for(ctx, work)?;
    registry::launch(&f, grid, BLOCK, stream, args)
}

impl<S: Storage<Elem: Element>, D: Dimension> DeviceArrayBase<S, D> {
    on_legacy_stream! {
        /// The elements at `indices` along `axis` (NumPy's `take(a, indices, axis, mode)`): the
        /// result's shape is this array's with axis `axis` replaced by the shape of `indices`. The
        /// result is a new C-order array. For NumPy's `axis=None`, take from
        /// [`ravel`](Self::ravel)`()` with axis 0.
        ///
        /// ```no_run
        /// use gpu_runtime::gpuarray::{DeviceArray, IndexMode};
        /// let ctx = gpu_runtime::Context::default()?;
        /// let a = DeviceArray::<f32, _>::arange(&ctx, 0.0, 6.0, 1.0)?.reshape((2, 3))?;
        /// let idx = DeviceArray::from_ndarray(&ctx, &gpu_runtime::ndarray::arr1(&[2i64, -3]))?;
        /// let t = a.take(&idx, 1, IndexMode::Raise)?; // [[2, 0], [5, 3]]
        /// assert_eq!(t.to_vec()?, [2.0, 0.0, 5.0, 3.0]);
        /// # Ok::<(), gpu_runtime::Error>(())
        /// ```
        fn take[SI, DI](&self, indices: &DeviceArrayBase<SI, DI>, axis: usize, mode: IndexMode)
            -> Result<DeviceArray<S::Elem, IxDyn>>
            where [SI: Storage<Elem: IndexElement>, DI: Dimension];

        /// Writes `values` at the flat C-order positions `indices` of this array (NumPy's
        /// `put(a, indices, values, mode)`): `a.flat[indices[j]] = values[j % values.len()]`,
        /// `values` repeated as NumPy repeats it (none: nothing is written). The array must be
        /// C-contiguous, since it is written in place. Where an index appears twice, which value
        /// stays is unspecified (NumPy: the last).
        fn put[SI, DI, SV, DV](
            &mut self, indices: &DeviceArrayBase<SI, DI>, values: &DeviceArrayBase<SV, DV>, mode: IndexMode,
        ) -> Result<()>
            where [
                S: StorageMut,
                SI: Storage<Elem: IndexElement>, DI: Dimension,
                SV: Storage<Elem = S::Elem>, DV: Dimension,
            ];
    }
}

impl<S: Storage<Elem: Element>, D: Dimension> OnStream<'_, &DeviceArrayBase<S, D>> {
    /// [`take`](DeviceArrayBase::take) on this stream.
    pub fn take<SI, DI>(
        &self,
        indices: &DeviceArrayBase<SI, DI>,
        axis: usize,
        mode: IndexMode,
    ) -> Result<DeviceArray<S::Elem, IxDyn>>
    where
        SI: Storage<Elem: IndexElement>,
        DI: Dimension,
    {
        let (a, stream) = (self.target, self.stream);
        let shape = a.shape();
        let Some(&len) = shape.get(axis) else {
            return Err(ArrayShapeError::NoSuchAxis {
                operation: "DeviceArray::take",
                axis,
                axes: shape.len(),
            }
            .into());
        };
        let mut out_shape = shape[..axis].to_vec();
        out_shape.extend_from_slice(indices.shape());
        out_shape.extend_from_slice(&shape[axis + 1..]);
        let ctx = a.context();
        let mut out = DeviceArray::<S::Elem, IxDyn>::empty(ctx, IxDyn(&out_shape))?;
        let n = out.len() as u64;
        if n == 0 {
            return Ok(out);
        }
        let a_copy = OnStream::new(a, stream).c_order()?;
        let i_copy = OnStream::new(indices, stream).c_order()?;
        let inner: usize = shape[axis + 1..].iter().product();
        let mut bad = DeviceBuffer::<u64>::zeros(ctx, 2)?;
        {
            let (a_view, i_view) = (a_copy.view(), i_copy.view());
            let args = [
                Arg::U64(n),
                Arg::input::<S::Elem, _>(&a_view),
                Arg::input::<SI::Elem, _>(&i_view),
                Arg::output(&mut out),
                Arg::U64(indices.len() as u64),
                Arg::U64(inner as u64),
                Arg::I64(len as i64),
                Arg::I32(mode.code()),
                Arg::output(&mut bad),
            ];
            launch::<S::Elem, SI::Elem>(ctx, stream, Gather::Take, n, &args)?;
        }
        check_bad(&bad, "DeviceArray::take", len)?;
        Ok(out)
    }
}

impl<S: StorageMut<Elem: Element>, D: Dimension> OnStream<'_, &mut DeviceArrayBase<S, D>> {
    /// [`put`](DeviceArrayBase::put) on this stream.
    pub fn put<SI, DI, SV, DV>(
        &mut self,
        indices: &DeviceArrayBase<SI, DI>,
        values: &DeviceArrayBase<SV, DV>,
        mode: IndexMode,
    ) -> Result<()>
    where
        SI: Storage<Elem: IndexElement>,
        DI: Dimension,
        SV: Storage<Elem = S::Elem>,
        DV: Dimension,
    {
        let (a, stream) = (&mut *self.target, self.stream);
        if !a.is_standard_layout() {
            return Err(Error::NotContiguous {
                what: "DeviceArray::put into an array not contiguous in C order",
            });
        }
        let m = indices.len() as u64;
        if m == 0 || values.is_empty() {
            return Ok(());
        }
        let len = a.len();
        let ctx = a.context().clone();
        let i_copy = OnStream::new(indices, stream).c_order()?;
        let v_copy = OnStream::new(values, stream).c_order()?;
        let mut bad = DeviceBuffer::<u64>::zeros(&ctx, 2)?;
        {
            let (i_view, v_view) = (i_copy.view(), v_copy.view());
            let args = [
                Arg::U64(m),
                Arg::output::<S::Elem, _>(a),
                Arg::input::<SI::Elem, _>(&i_view),
                Arg::input::<S::Elem, _>(&v_view),
                Arg::U64(values.len() as u64),
                Arg::I64(len as i64),
                Arg::I32(mode.code()),
                Arg::output(&mut bad),
            ];
            launch::<S::Elem, SI::Elem>(&ctx, stream, Gather::Put, m, &args)?;
        }
        check_bad(&bad, "DeviceArray::put", len)
    }
}

/// The elements at `indices` of each of `arrays` (PyCUDA's `multi_take(arrays, indices)`):
/// `take(indices, 0, Raise)` of each, one launch per array.
pub fn multi_take<S, D, SI, DI>(
    arrays: &[&DeviceArrayBase<S, D>],
    indices: &DeviceArrayBase<SI, DI>,
) -> Result<Vec<DeviceArray<S::Elem, IxDyn>>>
where
    S: Storage<Elem: Element>,
    D: Dimension,
    SI: Storage<Elem: IndexElement>,
    DI: Dimension,
{
    arrays
        .iter()
        .map(|a| a.take(indices, 0, IndexMode::Raise))
        .collect()
}

/// Scatters each of `arrays` into a new zeroed vector of `dest_len` elements at
/// `dest_indices` (PyCUDA's `multi_put(arrays, dest_indices, dest_shape)`):
/// `out[k][dest_indices[j]] = arrays[k].flat[j]`. Each array holds as many elements as there
/// are indices ([`ArrayShapeError::ElementCounts`]); indices out of range are
/// [`ArrayShapeError::IndexOutOfRange`].
pub fn multi_put<S, D, SI, DI>(
    arrays: &[&DeviceArrayBase<S, D>],
    dest_indices: &DeviceArrayBase<SI, DI>,
    dest_len: usize,
) -> Result<Vec<DeviceArray<S::Elem, Ix1>>>
where
    S: Storage<Elem: Element>,
    D: Dimension,
    SI: Storage<Elem: IndexElement>,
    DI: Dimension,
{
    arrays
        .iter()
        .map(|a| {
            check_counts("multi_put", a.len(), dest_indices.len())?;
            let mut out = DeviceArray::<S::Elem, Ix1>::zeros(a.context(), dest_len)?;
            out.put(dest_indices, *a, IndexMode::Raise)?;
            Ok(out)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_gather_kernels_compile_for_each_element_type() {
        // NVRTC on the host, no GPU: the text and its declaration are what a launch prepares.
        for g in [Gather::Take, Gather::Put] {
            for t in [
                DType::F32,
                DType::F64,
                DType::I64,
                DType::U8,
                DType::I16,
                DType::Complex64,
            ] {
                let index = if t == DType::U8 { DType::U64 } else { DType::I32 };
                let source = crate::gpuarray::elements::cast::headers_for([t]) + &g.source(t.c_name(), index);
                if let Err(e) = registry::compile_check(&source, "sm_90") {
                    panic!("{} of {}: {e}\n{source}", g.name(), t.c_name());
                }
                // The declaration the launch checks its arguments against: one per `Arg` given.
                let decl = gpu_cuda_source::find_kernel(&source, g.name()).unwrap();
                let args = match g {
                    Gather::Take => 9,
                    Gather::Put => 8,
                };
                assert_eq!((decl.params.len(), decl.extern_c), (args, true), "{}", g.name());
            }
        }
    }

    #[test]
    fn modes_are_numpys_codes_in_the_kernel() {
        assert_eq!(
            [IndexMode::Raise, IndexMode::Wrap, IndexMode::Clip].map(IndexMode::code),
            [0, 1, 2]
        );
        assert_eq!(IndexMode::default(), IndexMode::Raise);
    }
}
