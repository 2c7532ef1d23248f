//! `half::f16` and `half::bf16` as array elements (`__half` and `__nv_bfloat16` in C, from
//! `<cuda_fp16.h>` and `<cuda_bf16.h>`, which generated kernels include when they use them).
//! Kept apart from the other elements so that the whole file can be put behind a cargo
//! feature.

use gpu_cuda_source::Scalar;
use half::{bf16, f16};

use crate::gpuarray::elements::dtype::DType;
use crate::gpuarray::elements::element::{float_element, sealed, Element, Kind};
use crate::launch::Arg;

float_element! {
    f16: F16, "__ushort_as_half((unsigned short)", "u)", "0xfc00", "0x7c00", f16::ZERO;
    bf16: Bf16, "__ushort_as_bfloat16((unsigned short)", "u)", "0xff80", "0x7f80", bf16::ZERO;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_are_the_infinities() {
        assert_eq!(f16::NEG_INFINITY.to_bits(), 0xfc00);
        assert_eq!(f16::INFINITY.to_bits(), 0x7c00);
        assert_eq!(bf16::NEG_INFINITY.to_bits(), 0xff80);
        assert_eq!(bf16::INFINITY.to_bits(), 0x7f80);
        assert!(f16::C_LOWEST.contains("0xfc00") && bf16::C_HIGHEST.contains("0x7f80"));
    }

    #[test]
    fn literals_keep_the_bits() {
        assert_eq!(
            f16::from_f32(1.0).c_literal(),
            "__ushort_as_half((unsigned short)0x3c00u)"
        );
        assert_eq!(
            bf16::from_f32(-2.0).c_literal(),
            "__ushort_as_bfloat16((unsigned short)0xc000u)"
        );
    }
}
