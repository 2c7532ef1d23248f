//! NumPy's `vander`: the Vandermonde matrix of a vector, its columns the powers of the
//! elements, in NumPy's type (`promote_types(x.dtype, int)`). One kernel, a thread per
//! element, each power by repeated multiplication in the result's type, in the order of
//! NumPy's `multiply.accumulate` (so the rounding is NumPy's).

use ndarray::{Ix1, Ix2};

use crate::driver::context::core::Context;
use crate::error::Result;
use crate::gpuarray::array::core::{DeviceArray, DeviceArrayBase, Storage};
use crate::gpuarray::array::on_stream::{on_legacy_stream, OnStream};
use crate::gpuarray::elements::cast::{convert_c, headers_for};
use crate::gpuarray::elements::dtype::DType;
use crate::gpuarray::elements::element::Element;
use crate::gpuarray::elements::promotion::Promote;
use crate::gpuarray::kernels::registry::{self, BLOCK};
use crate::gpuarray::kernels::source_kernels::SourceKernels;
use crate::launch::{Arg, PreparedFunction};

/// The type of `vander` of `T`: NumPy's `promote_types(T, int64)` (`i64` for `bool` and the
/// integers but `u64`, `f64` for `u64` and every float, `Complex64` for the complex types).
type Powers<T> = <T as Promote<i64>>::Output;

static KERNELS: SourceKernels<(DType, DType)> = SourceKernels::new();

/// `z[r, c] = x[r]^p`, `p` the column's power, for `x` of `t` (contiguous) and `z` of `out`
/// (`rows x cols`, C order).
fn source(t: DType, out: DType) -> String {
    let (tc, oc) = (t.c_name(), out.c_name());
    format!(
        "{headers}extern \"C\" __global__ void gpu_vander(unsigned long long len, const {tc} *__restrict__ x, \
         {oc} *__restrict__ z, long long cols, int increasing) {{\n\
         for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < len;\n\
              i += (unsigned long long)gridDim.x * blockDim.x) {{\n\
             const long long r = (long long)i / cols, c = (long long)i % cols;\n\
             const long long p = increasing ? c : cols - 1 - c;\n\
             const {oc} v = {v};\n\
             {oc} w = {one};\n\
             for (long long k = 0; k < p; ++k) w = k == 0 ? v : w * v;\n\
             z[i] = w;\n\
         }}\n}}\n",
        headers = headers_for([t, out]),
        v = convert_c(t, out, "x[r]"),
        one = convert_c(DType::I32, out, "1"),
    )
}

fn prepared(ctx: &Context, t: DType, out: DType) -> Result<PreparedFunction> {
    KERNELS.prepared(ctx, (t, out), "gpu_vander", || source(t, out))
}

impl<S: Storage<Elem: Promote<i64>>> DeviceArrayBase<S, Ix1> {
    on_legacy_stream! {
        /// The Vandermonde matrix of this vector (NumPy's `vander(x, N, increasing)`): `len` rows
        /// of `columns` (`None`: `len`) columns, column `j` the elements to the power
        /// `columns - 1 - j` (or `j` when `increasing`), in NumPy's type (`promote_types(x.dtype,
        /// int)`: `i64` for integers, `f64` for floats, `Complex64` for complex numbers).
        ///
        /// ```no_run
        /// use gpu_runtime::gpuarray::DeviceArray;
        /// use gpu_runtime::ndarray::arr1;
        /// let ctx = gpu_runtime::Context::default()?;
        /// let x = DeviceArray::from_ndarray(&ctx, &arr1(&[1i32, 2, 3]))?;
        /// assert_eq!(x.vander(None, false)?.to_vec()?, [1i64, 1, 1, 4, 2, 1, 9, 3, 1]);
        /// # Ok::<(), gpu_runtime::Error>(())
        /// ```
        fn vander(&self, columns: Option<usize>, increasing: bool)
            -> Result<DeviceArray<Powers<S::Elem>, Ix2>>;
    }
}

impl<S: Storage<Elem: Promote<i64>>> OnStream<'_, &DeviceArrayBase<S, Ix1>> {
    /// [`vander`](DeviceArrayBase::vander) on this stream.
    pub fn vander(
        &self,
        columns: Option<usize>,
        increasing: bool,
    ) -> Result<DeviceArray<Powers<S::Elem>, Ix2>> {
        let x = self.target;
        let cols = columns.unwrap_or(x.len());
        let mut z = DeviceArray::<Powers<S::Elem>, Ix2>::empty(x.context(), (x.len(), cols))?;
        if z.is_empty() {
            return Ok(z);
        }
        let src = OnStream::new(x, self.stream).c_order()?;
        let src = src.view();
        let ctx = x.context().clone();
        let f = prepared(&ctx, S::Elem::DTYPE, <Powers<S::Elem> as Element>::DTYPE)?;
        let len = z.len() as u64;
        let args = [
            Arg::U64(len),
            Arg::input::<S::Elem, _>(&src),
            Arg::output(&mut z),
            Arg::I64(cols as i64),
            Arg::I32(i32::from(increasing)),
        ];
        registry::launch(&f, registry::grid_for(&ctx, len)?, BLOCK, self.stream, &args)?;
        Ok(z)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kernels_compile_for_every_element_type() {
        for t in DType::ALL {
            let out = crate::gpuarray::elements::promotion::result_type(t, DType::I64);
            let s = source(t, out);
            assert_eq!(
                gpu_cuda_source::find_kernel(&s, "gpu_vander")
                    .unwrap()
                    .params
                    .len(),
                5
            );
            if let Err(e) = registry::compile_check(&s, "sm_90") {
                panic!("vander of {t:?}: {e}");
            }
        }
    }
}
