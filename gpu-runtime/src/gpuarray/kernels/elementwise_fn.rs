//! [`ElementwiseFn`]: an [`ElementwiseKernel`] declared at compile time by
//! `#[elementwise("…")]`, built once per process on its first use and then launched like the
//! run-time form (compiled once per context, through the same per-context cache).

use std::sync::OnceLock;

use crate::driver::stream::Stream;
use crate::error::Result;
use crate::gpuarray::array::on_stream::OnStream;
use crate::gpuarray::elements::element::Element;
use crate::gpuarray::kernels::args::KernelArg;
use crate::gpuarray::kernels::elementwise::ElementwiseKernel;
use crate::launch::CudaVector;

/// The kernel of one `#[elementwise]` function: its name, C arguments and operation, as the
/// macro wrote them, and the [`ElementwiseKernel`] made from them on first use (once per
/// process; each context then compiles it once, as any `ElementwiseKernel`).
///
/// The macro emits one `static` of this type per declared function, reachable as
/// `name::KERNEL`; [`kernel`](Self::kernel) gives the run-time kernel, e.g. to read its
/// [`source`](ElementwiseKernel::source).
#[derive(Debug)]
pub struct ElementwiseFn {
    name: &'static str,
    arguments: &'static str,
    operation: &'static str,
    kernel: OnceLock<ElementwiseKernel>,
}

impl ElementwiseFn {
    /// The kernel `name` with C `arguments` (`"float a, const float *x, float *z"`) and
    /// `operation` (`"z = a * x"`); nothing is read until the first use.
    pub const fn new(name: &'static str, arguments: &'static str, operation: &'static str) -> Self {
        ElementwiseFn {
            name,
            arguments,
            operation,
            kernel: OnceLock::new(),
        }
    }

    /// The C argument list.
    pub fn arguments(&self) -> &'static str {
        self.arguments
    }

    /// The operation on elements.
    pub fn operation(&self) -> &'static str {
        self.operation
    }

    /// The run-time kernel, made on the first call (the macro checked the arguments at build
    /// time, so this fails only where the two disagree, which would be a bug of the macro).
    pub fn kernel(&self) -> Result<&ElementwiseKernel> {
        if let Some(k) = self.kernel.get() {
            return Ok(k);
        }
        let k = ElementwiseKernel::with_name(self.name, self.arguments, self.operation)?;
        // Two threads may both make it; the first stored wins, and both are the same kernel.
        Ok(self.kernel.get_or_init(|| k))
    }

    /// Launches the kernel over `args` (one per declared argument, in order) on `stream`, or on
    /// the legacy default stream: [`ElementwiseKernel::on`]`(stream).launch(args)` /
    /// [`launch`](ElementwiseKernel::launch).
    pub fn launch<'a>(
        &self,
        stream: Option<&Stream>,
        args: impl IntoIterator<Item = KernelArg<'a>>,
    ) -> Result<()> {
        let k = self.kernel()?;
        OnStream::new(k, stream).launch(args)
    }
}

/// Whether the element type `T` is the C type `c_name`: `#[elementwise]` reads `f16`, `bf16`,
/// `Bool`, `Complex32` and `Complex64` by their names and asserts this of each, in a constant, so that a type of that
/// name that is another (an alias) is a compile error rather than a launch's
/// [`ArgumentError::KindDiffers`](crate::ArgumentError::KindDiffers).
pub const fn c_name_is<T: Element>(c_name: &str) -> bool {
    // The type's C name as generated kernels declare it (a complex type's `SCALAR` is its
    // parts': its own name is `<gpu_runtime/complex.h>`'s).
    let (have, want) = (T::DTYPE.c_name().as_bytes(), c_name.as_bytes());
    if have.len() != want.len() {
        return false;
    }
    let mut k = 0;
    while k < have.len() {
        if have[k] != want[k] {
            return false;
        }
        k += 1;
    }
    true
}

/// Whether the vector type `V` is the C type `c_name` (`Float3` is `float3`): what
/// `#[elementwise]` asserts of each vector element type it read by its name, as
/// [`c_name_is`] of the numbers.
pub const fn vector_c_name_is<V: CudaVector>(c_name: &str) -> bool {
    gpu_cuda_source::vectors::const_str_eq(V::TYPE.c_name(), c_name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn c_names_are_compared_whole() {
        assert!(c_name_is::<f32>("float"));
        assert!(c_name_is::<half::f16>("__half"));
        assert!(c_name_is::<crate::gpuarray::Bool>("bool"));
        assert!(c_name_is::<crate::types::Complex32>(
            "gpu_runtime::complex<float>"
        ));
        assert!(c_name_is::<crate::types::Complex64>(
            "gpu_runtime::complex<double>"
        ));
        assert!(!c_name_is::<crate::types::Complex32>("float"));
        assert!(!c_name_is::<f32>("gpu_runtime::complex<float>"));
        assert!(!c_name_is::<u16>("__half"));
        assert!(!c_name_is::<f32>("floa"));
        assert!(!c_name_is::<f32>("float "));
        // Usable where the macro uses it: in a constant.
        const { assert!(c_name_is::<i64>("long long")) };
        const { assert!(vector_c_name_is::<crate::types::Float3>("float3")) };
        assert!(!vector_c_name_is::<crate::types::Float4>("float3"));
        assert!(vector_c_name_is::<crate::types::Half2>("__half2"));
    }
}
