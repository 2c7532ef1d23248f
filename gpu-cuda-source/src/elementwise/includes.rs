//! The `#include` lines a generated kernel needs for its element types: the 16-bit floats
//! (`__half`, `__nv_bfloat16`) are declared by CUDA's headers, not by the compiler, so a
//! kernel over them includes those headers before its code. The run time puts these lines in
//! front of every kernel it generates (an `ElementwiseKernel`'s preamble, reductions, casts),
//! and `#[elementwise]`'s build-time check in front of the kernel it compiles: one copy, so
//! that the check compiles the text that runs.

use crate::types::Scalar;

/// The `#include` lines (each ending in a newline) a kernel over `scalars` needs: CUDA's
/// header of each 16-bit float type among them, once each, `<cuda_fp16.h>` first; empty when
/// there is none.
///
/// ```
/// use gpu_cuda_source::{elementwise::scalar_includes, Scalar};
/// assert_eq!(scalar_includes([Scalar::F32, Scalar::Bool]), "");
/// assert_eq!(
///     scalar_includes([Scalar::Bf16, Scalar::F16, Scalar::Bf16]),
///     "#include <cuda_fp16.h>\n#include <cuda_bf16.h>\n"
/// );
/// ```
pub fn scalar_includes(scalars: impl IntoIterator<Item = Scalar>) -> String {
    let (mut f16, mut bf16) = (false, false);
    for s in scalars {
        f16 |= s == Scalar::F16;
        bf16 |= s == Scalar::Bf16;
    }
    let mut out = String::new();
    if f16 {
        out.push_str("#include <cuda_fp16.h>\n");
    }
    if bf16 {
        out.push_str("#include <cuda_bf16.h>\n");
    }
    out
}
