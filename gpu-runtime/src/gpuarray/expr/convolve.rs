//! NumPy's `convolve` and `correlate` of two 1-d arrays, directly: one thread per element of
//! the result, each summing the products of the overlap in order (as NumPy's loop sums
//! them), in the element type (16-bit floats in `float`, rounded once). The three modes are
//! windows of the full result, at the offsets NumPy takes (`correlate` of a shorter first
//! array centres its `same` window half an element later, as NumPy's swap and reversal do).

use ndarray::Ix1;

use crate::driver::context::core::Context;
use crate::driver::stream::Stream;
use crate::error::{ArrayShapeError, Result};
use crate::gpuarray::array::core::{DeviceArray, DeviceArrayBase, Storage};
use crate::gpuarray::array::on_stream::{context_fns, OnStream};
use crate::gpuarray::elements::cast::{convert_c, headers_for};
use crate::gpuarray::elements::dtype::DType;
use crate::gpuarray::elements::element::Element;
use crate::gpuarray::kernels::codegen::Arith;
use crate::gpuarray::kernels::registry::{self, BLOCK};
use crate::gpuarray::kernels::source_kernels::SourceKernels;
use crate::launch::{Arg, PreparedFunction};

/// Which part of the full result [`convolve`] and [`correlate`] return (NumPy's `mode=`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ConvolveMode {
    /// Every overlap, `n + m - 1` elements (`convolve`'s default).
    Full,
    /// `max(n, m)` elements, centred on the full result.
    Same,
    /// Only the complete overlaps, `max(n, m) - min(n, m) + 1` elements (`correlate`'s
    /// default).
    Valid,
}

/// Convolution or correlation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Kind {
    /// `z[k] = sum_j a[j] v[k - j]`.
    Convolve,
    /// `z[k] = sum_n a[n + k - (m - 1)] conj(v[n])`.
    Correlate,
}

static KERNELS: SourceKernels<(Kind, DType)> = SourceKernels::new();

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Convolve => "gpu_convolve",
            Kind::Correlate => "gpu_correlate",
        }
    }
}

/// The kernel writing elements `off..off + len` of the full result, one per thread, of
/// arrays `a` (`na` elements) and `v` (`m`), both contiguous.
fn source(kind: Kind, t: DType) -> String {
    let tc = t.c_name();
    let acc = Arith::of(t).acc;
    let ac = acc.c_name();
    let read = |x: &str| convert_c(t, acc, x);
    let other = match kind {
        Kind::Convolve => read("v[m - 1 - n]"),
        Kind::Correlate if t.is_complex() => format!("gpu_runtime::conj({})", read("v[n]")),
        Kind::Correlate => read("v[n]"),
    };
    format!(
        "{headers}extern \"C\" __global__ void {name}(unsigned long long len, const {tc} *__restrict__ a, \
         const {tc} *__restrict__ v, {tc} *__restrict__ z, long long na, long long m, long long off) {{\n\
         for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < len;\n\
              i += (unsigned long long)gridDim.x * blockDim.x) {{\n\
             const long long k = (long long)i + off;\n\
             const long long lo = m - 1 - k > 0 ? m - 1 - k : 0;\n\
             const long long hi = na + m - 1 - k < m ? na + m - 1 - k : m;\n\
             {ac} s = {zero};\n\
             for (long long n = lo; n < hi; ++n) s = s + {x} * {other};\n\
             z[i] = {out};\n\
         }}\n}}\n",
        headers = headers_for([t]),
        name = kind.name(),
        zero = convert_c(DType::I32, acc, "0"),
        x = read("a[n + k - (m - 1)]"),
        out = convert_c(acc, t, "s"),
    )
}

fn prepared(ctx: &Context, kind: Kind, t: DType) -> Result<PreparedFunction> {
    KERNELS.prepared(ctx, (kind, t), kind.name(), || source(kind, t))
}

context_fns! {
    /// The discrete linear convolution of two 1-d arrays (NumPy's `convolve(a, v, mode)`):
    /// `z[k] = sum_j a[j] * v[k - j]` over the full overlap, or the window `mode` names. Integers
    /// wrap as NumPy's do; `f16` and `bf16` sum in `f32`. An empty array is
    /// [`ArrayShapeError::EmptyOperand`], as NumPy refuses it.
    ///
    /// ```no_run
    /// use gpu_runtime::gpuarray::{self, ConvolveMode, DeviceArray};
    /// use gpu_runtime::ndarray::arr1;
    /// let ctx = gpu_runtime::Context::default()?;
    /// let a = DeviceArray::from_ndarray(&ctx, &arr1(&[1.0f32, 2.0, 3.0]))?;
    /// let v = DeviceArray::from_ndarray(&ctx, &arr1(&[0.0f32, 1.0, 0.5]))?;
    /// assert_eq!(gpuarray::convolve(&a, &v, ConvolveMode::Full)?.to_vec()?, [0.0, 1.0, 2.5, 4.0, 1.5]);
    /// assert_eq!(gpuarray::convolve(&a, &v, ConvolveMode::Same)?.to_vec()?, [1.0, 2.5, 4.0]);
    /// # Ok::<(), gpu_runtime::Error>(())
    /// ```
    fn convolve[T: Element, S1: Storage<Elem = T>, S2: Storage<Elem = T>](
        &self, a: &DeviceArrayBase<S1, Ix1>, v: &DeviceArrayBase<S2, Ix1>, mode: ConvolveMode
    ) -> Result<DeviceArray<T, Ix1>> {
        run(Kind::Convolve, a, v, mode, self.stream)
    }

    /// The cross-correlation of two 1-d arrays (NumPy's `correlate(a, v, mode)`, whose default
    /// is [`ConvolveMode::Valid`]): `z[k] = sum_n a[n + k - (m - 1)] * conj(v[n])` for the full
    /// result, `v` conjugated where it is complex. Otherwise as [`convolve`].
    ///
    /// ```no_run
    /// use gpu_runtime::gpuarray::{self, ConvolveMode, DeviceArray};
    /// use gpu_runtime::ndarray::arr1;
    /// let ctx = gpu_runtime::Context::default()?;
    /// let a = DeviceArray::from_ndarray(&ctx, &arr1(&[1.0f64, 2.0, 3.0]))?;
    /// let v = DeviceArray::from_ndarray(&ctx, &arr1(&[0.0f64, 1.0, 0.5]))?;
    /// assert_eq!(gpuarray::correlate(&a, &v, ConvolveMode::Valid)?.to_vec()?, [3.5]);
    /// assert_eq!(gpuarray::correlate(&a, &v, ConvolveMode::Full)?.to_vec()?, [0.5, 2.0, 3.5, 3.0, 0.0]);
    /// # Ok::<(), gpu_runtime::Error>(())
    /// ```
    fn correlate[T: Element, S1: Storage<Elem = T>, S2: Storage<Elem = T>](
        &self, a: &DeviceArrayBase<S1, Ix1>, v: &DeviceArrayBase<S2, Ix1>, mode: ConvolveMode
    ) -> Result<DeviceArray<T, Ix1>> {
        run(Kind::Correlate, a, v, mode, self.stream)
    }
}

/// The offset and length of `mode`'s window of the full result of arrays of `na` and `m`
/// elements (both at least 1), as NumPy takes them.
fn window(kind: Kind, mode: ConvolveMode, na: usize, m: usize) -> (usize, usize) {
    let (long, short) = (na.max(m), na.min(m));
    match mode {
        ConvolveMode::Full => (0, na + m - 1),
        ConvolveMode::Valid => (short - 1, long - short + 1),
        // NumPy's `correlate` swaps a shorter first array and reverses the result, which
        // moves an even overlap's centre up by one.
        ConvolveMode::Same if kind == Kind::Correlate && na < m => ((short - 1) - (short - 1) / 2, long),
        ConvolveMode::Same => ((short - 1) / 2, long),
    }
}

fn run<T: Element, S1: Storage<Elem = T>, S2: Storage<Elem = T>>(
    kind: Kind,
    a: &DeviceArrayBase<S1, Ix1>,
    v: &DeviceArrayBase<S2, Ix1>,
    mode: ConvolveMode,
    stream: Option<&Stream>,
) -> Result<DeviceArray<T, Ix1>> {
    let operation = match kind {
        Kind::Convolve => "convolve",
        Kind::Correlate => "correlate",
    };
    for (x, operand) in [(a.len(), "a"), (v.len(), "v")] {
        if x == 0 {
            return Err(ArrayShapeError::EmptyOperand { operation, operand }.into());
        }
    }
    let (na, m) = (a.len(), v.len());
    let (off, len) = window(kind, mode, na, m);
    let ctx = a.context().clone();
    let mut z = DeviceArray::<T, Ix1>::empty(&ctx, len)?;
    let (a, v) = (
        OnStream::new(a, stream).c_order()?,
        OnStream::new(v, stream).c_order()?,
    );
    let (a, v) = (a.view(), v.view());
    let f = prepared(&ctx, kind, T::DTYPE)?;
    let args = [
        Arg::U64(len as u64),
        Arg::input::<T, _>(&a),
        Arg::input::<T, _>(&v),
        Arg::output(&mut z),
        Arg::I64(na as i64),
        Arg::I64(m as i64),
        Arg::I64(off as i64),
    ];
    registry::launch(&f, registry::grid_for(&ctx, len as u64)?, BLOCK, stream, &args)?;
    Ok(z)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_windows_are_numpys() {
        // np.convolve/np.correlate of lengths (na, m), each window against the full result
        // (found with NumPy 2.4 over na, m in 1..8).
        assert_eq!(window(Kind::Convolve, ConvolveMode::Same, 3, 3), (1, 3));
        assert_eq!(window(Kind::Convolve, ConvolveMode::Same, 2, 5), (0, 5));
        assert_eq!(window(Kind::Correlate, ConvolveMode::Same, 2, 5), (1, 5));
        assert_eq!(window(Kind::Correlate, ConvolveMode::Same, 5, 2), (0, 5));
        assert_eq!(window(Kind::Correlate, ConvolveMode::Same, 4, 7), (2, 7));
        assert_eq!(window(Kind::Convolve, ConvolveMode::Same, 4, 7), (1, 7));
        assert_eq!(window(Kind::Correlate, ConvolveMode::Valid, 3, 7), (2, 5));
        assert_eq!(window(Kind::Convolve, ConvolveMode::Full, 3, 7), (0, 9));
    }

    #[test]
    fn the_kernels_compile_for_every_element_type() {
        for t in DType::ALL {
            for kind in [Kind::Convolve, Kind::Correlate] {
                let s = source(kind, t);
                assert_eq!(
                    gpu_cuda_source::find_kernel(&s, kind.name())
                        .unwrap()
                        .params
                        .len(),
                    7
                );
                if let Err(e) = registry::compile_check(&s, "sm_90") {
                    panic!("{kind:?} of {t:?}: {e}");
                }
            }
        }
    }
}
