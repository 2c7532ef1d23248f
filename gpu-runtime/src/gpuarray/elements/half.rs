//! `half::f16` and `half::bf16` as array elements (`__half` and `__nv_bfloat16` in C, from
//! `<cuda_fp16.h>` and `<cuda_bf16.h>`, which generated kernels include when they use them).
//! Kept apart from the other elements so that the whole file can be put behind a cargo
//! feature.

use gpu_cdecl::Scalar;
use half::{bf16, f16};

use crate::gpuarray::elements::dtype::DType;
use crate::gpuarray::elements::element::{sealed, Element, Kind};
use crate::launch::Arg;

impl sealed::Sealed for f16 {}
impl Element for f16 {
    const SCALAR: Scalar = Scalar::F16;
    const DTYPE: DType = DType::F16;
    const KIND: Kind = Kind::Float;
    const C_LOWEST: &'static str = "__ushort_as_half((unsigned short)0xfc00u)";
    const C_HIGHEST: &'static str = "__ushort_as_half((unsigned short)0x7c00u)";
    fn to_arg(self) -> Arg<'static> {
        Arg::F16(self)
    }
    fn c_literal(self) -> String {
        // The bits, so that every value (NaN, infinities, -0) round-trips exactly.
        format!("__ushort_as_half((unsigned short){:#x}u)", self.to_bits())
    }
    fn zero() -> Self {
        f16::ZERO
    }
}

impl sealed::Sealed for bf16 {}
impl Element for bf16 {
    const SCALAR: Scalar = Scalar::Bf16;
    const DTYPE: DType = DType::Bf16;
    const KIND: Kind = Kind::Float;
    const C_LOWEST: &'static str = "__ushort_as_bfloat16((unsigned short)0xff80u)";
    const C_HIGHEST: &'static str = "__ushort_as_bfloat16((unsigned short)0x7f80u)";
    fn to_arg(self) -> Arg<'static> {
        Arg::Bf16(self)
    }
    fn c_literal(self) -> String {
        format!("__ushort_as_bfloat16((unsigned short){:#x}u)", self.to_bits())
    }
    fn zero() -> Self {
        bf16::ZERO
    }
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
