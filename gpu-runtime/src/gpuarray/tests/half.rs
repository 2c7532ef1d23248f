//! The kernels of `fill` and `astype` for the 16-bit float elements, compiled with NVRTC for
//! sm_90 on the host (no GPU): every conversion into and out of `__half` and `__nv_bfloat16`,
//! with CUDA's headers found as every compile finds them.

use gpu_cuda_source::Scalar;
use half::{bf16, f16};

use super::{builtin_source, compiles, scalars};
use crate::gpuarray::copy::builtin::{kernel, Builtin};
use crate::gpuarray::kernels::elementwise::{ElementwiseKernel, Variant};

#[test]
fn conversions_into_and_out_of_16_bit_floats_compile() {
    for half in [Scalar::F16, Scalar::Bf16] {
        compiles(
            "fill",
            &builtin_source(Builtin::Fill, half, half, Variant::Contiguous),
        );
        for other in scalars(true, false) {
            for (from, to) in [(half, other), (other, half)] {
                let k = kernel(
                    Builtin::Convert,
                    crate::gpuarray::tests::dt(from),
                    crate::gpuarray::tests::dt(to),
                )
                .unwrap();
                compiles(
                    &format!("convert {from:?} -> {to:?}"),
                    &k.source(Variant::Contiguous),
                );
            }
        }
        compiles(
            "convert strided",
            &builtin_source(Builtin::Convert, Scalar::F32, half, Variant::Strided(3)),
        );
    }
}

#[test]
fn user_kernels_of_16_bit_floats_get_their_headers() {
    let k = ElementwiseKernel::new(
        "__half a, const __half *x, __nv_bfloat16 *z",
        "z = __float2bfloat16(__half2float(a * x))",
    )
    .unwrap()
    .preamble("__device__ int gpu_unused_helper() { return 1; }");
    let source = k.source(Variant::Contiguous);
    assert!(source.contains("#include <cuda_fp16.h>") && source.contains("#include <cuda_bf16.h>"));
    compiles("a user kernel of __half and __nv_bfloat16", &source);
}

#[test]
fn random_fills_of_16_bit_floats_compile() {
    use crate::gpuarray::random::philox::random_source;
    use crate::gpuarray::Distribution;
    for dist in [Distribution::Uniform, Distribution::Normal] {
        compiles("philox f16", &random_source::<f16>(dist).unwrap());
        compiles("philox bf16", &random_source::<bf16>(dist).unwrap());
    }
    // The other types still compile after the drawn-type change.
    compiles("philox f32", &random_source::<f32>(Distribution::Normal).unwrap());
    compiles(
        "philox u32",
        &random_source::<u32>(Distribution::Uniform).unwrap(),
    );
    assert!(random_source::<i8>(Distribution::Uniform).is_err());
}
