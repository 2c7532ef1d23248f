//! CUDA's 8-bit floats (`<cuda_fp8.h>`), documented in the [`types`](super) module.

use crate::types::repr::DeviceRepr;

/// The layout of one encoding: exponent and mantissa bits, and whether the largest exponent is
/// infinities and NaNs (E5M2, as IEEE 754) or ordinary values but for one NaN (E4M3).
struct Format {
    exp_bits: u32,
    man_bits: u32,
    ieee_top: bool,
}

const E4M3: Format = Format {
    exp_bits: 4,
    man_bits: 3,
    ieee_top: false,
};
const E5M2: Format = Format {
    exp_bits: 5,
    man_bits: 2,
    ieee_top: true,
};

impl Format {
    const fn bias(&self) -> i32 {
        (1 << (self.exp_bits - 1)) - 1
    }

    /// The largest finite value's bits (sign clear): E4M3 `0x7e` (448), E5M2 `0x7b` (57344).
    const fn max_bits(&self) -> u8 {
        if self.ieee_top {
            (((1u32 << self.exp_bits) - 2) << self.man_bits | ((1 << self.man_bits) - 1)) as u8
        } else {
            (((1u32 << self.exp_bits) - 1) << self.man_bits | ((1 << self.man_bits) - 2)) as u8
        }
    }

    /// The NaN CUDA's conversions give (sign clear): all ones.
    const fn nan_bits(&self) -> u8 {
        0x7f
    }

    fn decode(&self, bits: u8) -> f32 {
        let sign = if bits & 0x80 != 0 { -1.0 } else { 1.0 };
        let e = i32::from((bits >> self.man_bits) & ((1 << self.exp_bits) - 1) as u8);
        let m = i32::from(bits & ((1 << self.man_bits) - 1) as u8);
        let top = (1 << self.exp_bits) - 1;
        if e == top && self.ieee_top {
            return if m == 0 { sign * f32::INFINITY } else { f32::NAN };
        }
        if e == top && m == (1 << self.man_bits) - 1 {
            return f32::NAN;
        }
        let scale = |p: i32| 2f32.powi(p);
        let v = if e == 0 {
            // Subnormal: m / 2^man_bits * 2^(1 - bias).
            m as f32 * scale(1 - self.bias() - self.man_bits as i32)
        } else {
            (1.0 + m as f32 * scale(-(self.man_bits as i32))) * scale(e - self.bias())
        };
        sign * v
    }

    fn encode(&self, x: f32) -> u8 {
        if x.is_nan() {
            return self.nan_bits();
        }
        let sign: u8 = if x.is_sign_negative() { 0x80 } else { 0 };
        let a = f64::from(x).abs();
        let max = f64::from(self.decode(self.max_bits()));
        if a >= max {
            // Saturated to the largest finite value (`__NV_SATFINITE`), infinities too.
            return sign | self.max_bits();
        }
        if a == 0.0 {
            return sign;
        }
        // The exponent of `a` (a normal f64: every f32 is), and the spacing of the fp8 values
        // around it, subnormals below the smallest normal exponent.
        let e = ((a.to_bits() >> 52) & 0x7ff) as i32 - 1023;
        let emin = 1 - self.bias();
        let quantum = 2f64.powi(e.max(emin) - self.man_bits as i32);
        let v = (a / quantum).round_ties_even() * quantum;
        if v >= max {
            return sign | self.max_bits();
        }
        let smallest_normal = 2f64.powi(emin);
        let bits = if v < smallest_normal {
            (v / 2f64.powi(emin - self.man_bits as i32)) as u32
        } else {
            let ve = ((v.to_bits() >> 52) & 0x7ff) as i32 - 1023;
            let m = (v / 2f64.powi(ve - self.man_bits as i32)) as u32 - (1 << self.man_bits);
            (((ve + self.bias()) as u32) << self.man_bits) | m
        };
        sign | bits as u8
    }
}

macro_rules! fp8 {
    ($(#[$doc:meta])* $name:ident, $c:literal, $format:ident) => {
        $(#[$doc])*
        ///
        /// Equality compares the bits (a NaN equals itself, `+0` is not `-0`).
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
        #[repr(transparent)]
        pub struct $name(pub u8);

        impl $name {
            /// The CUDA C name of this type.
            pub const C_NAME: &'static str = $c;

            /// The value nearest `x`, as CUDA's constructor from `float` rounds it: to nearest,
            /// ties to even, values beyond the largest finite one (infinities too) saturated to
            /// it, NaN to NaN.
            pub fn from_f32(x: f32) -> $name {
                $name($format.encode(x))
            }

            /// The value as an `f32`, exactly.
            pub fn to_f32(self) -> f32 {
                $format.decode(self.0)
            }
        }

        // SAFETY: repr(transparent) over u8, as CUDA's class is one byte of bits: every bit
        // pattern is a valid value. Checked against gpu-cuda-source's table below, and that against
        // NVRTC in the test suite.
        unsafe impl DeviceRepr for $name {}

        const _: () = layout_matches::<$name>($c, stringify!($name));
    };
}

macro_rules! fp8_lanes {
    ($(#[$doc:meta])* $name:ident, $c:literal, $scalar:ident, $n:literal, $align:literal) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
        #[repr(C, align($align))]
        pub struct $name(pub [$scalar; $n]);

        impl $name {
            /// The CUDA C name of this type.
            pub const C_NAME: &'static str = $c;
        }

        // SAFETY: repr(C) over an array of one-byte values with every bit pattern valid, aligned
        // as `<cuda_fp8.h>` aligns the C struct (`__CUDA_ALIGN__`); checked against
        // gpu-cuda-source's table below.
        unsafe impl DeviceRepr for $name {}

        const _: () = layout_matches::<$name>($c, stringify!($name));
    };
}

/// The struct and gpu-cuda-source's table (which the macros read) agree: a difference fails this
/// crate's build.
const fn layout_matches<T>(c: &str, rust: &str) {
    let Some(t) = gpu_cuda_source::fp8_by_c_name(c) else {
        panic!("an 8-bit float type missing from gpu_cuda_source::FP8_TYPES")
    };
    assert!(
        t.size == std::mem::size_of::<T>() && t.align == std::mem::align_of::<T>(),
        "an 8-bit float type's layout differs from gpu-cuda-source's"
    );
    assert!(
        gpu_cuda_source::vectors::const_str_eq(t.rust_name, rust),
        "gpu-cuda-source names an 8-bit float type otherwise"
    );
}

fp8!(
    /// CUDA's `__nv_fp8_e4m3`: 1 sign, 4 exponent and 3 mantissa bits; no infinities, one NaN
    /// (`0x7f`/`0xff`), largest finite value 448.
    Fp8E4M3,
    "__nv_fp8_e4m3",
    E4M3
);
fp8!(
    /// CUDA's `__nv_fp8_e5m2`: 1 sign, 5 exponent and 2 mantissa bits, with infinities and NaNs
    /// as in IEEE 754; largest finite value 57344.
    Fp8E5M2,
    "__nv_fp8_e5m2",
    E5M2
);
fp8_lanes!(
    /// CUDA's `__nv_fp8x2_e4m3`: two [`Fp8E4M3`], aligned to 2 bytes.
    Fp8x2E4M3,
    "__nv_fp8x2_e4m3",
    Fp8E4M3,
    2,
    2
);
fp8_lanes!(
    /// CUDA's `__nv_fp8x2_e5m2`: two [`Fp8E5M2`], aligned to 2 bytes.
    Fp8x2E5M2,
    "__nv_fp8x2_e5m2",
    Fp8E5M2,
    2,
    2
);
fp8_lanes!(
    /// CUDA's `__nv_fp8x4_e4m3`: four [`Fp8E4M3`], aligned to 4 bytes.
    Fp8x4E4M3,
    "__nv_fp8x4_e4m3",
    Fp8E4M3,
    4,
    4
);
fp8_lanes!(
    /// CUDA's `__nv_fp8x4_e5m2`: four [`Fp8E5M2`], aligned to 4 bytes.
    Fp8x4E5M2,
    "__nv_fp8x4_e5m2",
    Fp8E5M2,
    4,
    4
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_encodings() {
        for (x, e4m3, e5m2) in [
            (0.0f32, 0x00u8, 0x00u8),
            (-0.0, 0x80, 0x80),
            (1.0, 0x38, 0x3c),
            (-2.0, 0xc0, 0xc0),
            (0.5, 0x30, 0x38),
            (1.125, 0x39, 0x3c), // E5M2 has no 1.125: ties to even, 1.0
            (1.375, 0x3b, 0x3e), // E5M2: between 1.25 and 1.5, ties to even: 1.5
            (448.0, 0x7e, 0x5f),
            (1000.0, 0x7e, 0x64), // E5M2: 1024
            (57344.0, 0x7e, 0x7b),
            (1e9, 0x7e, 0x7b),
            (f32::INFINITY, 0x7e, 0x7b),
            (f32::NEG_INFINITY, 0xfe, 0xfb),
            (2f32.powi(-9), 0x01, 0x18), // E4M3's smallest subnormal; normal in E5M2
            (2f32.powi(-16), 0x00, 0x01), // E5M2's smallest subnormal
            (2f32.powi(-10), 0x00, 0x14), // half E4M3's smallest: ties to even, 0
            (3.0 * 2f32.powi(-10), 0x02, 0x1a),
        ] {
            assert_eq!(Fp8E4M3::from_f32(x).0, e4m3, "E4M3 {x}");
            assert_eq!(Fp8E5M2::from_f32(x).0, e5m2, "E5M2 {x}");
        }
        assert_eq!(Fp8E4M3::from_f32(f32::NAN).0, 0x7f);
        assert!(Fp8E5M2::from_f32(f32::NAN).to_f32().is_nan());
        assert_eq!(Fp8E5M2(0x7c).to_f32(), f32::INFINITY);
        assert_eq!(Fp8E4M3(0x7e).to_f32(), 448.0);
        assert_eq!(Fp8E5M2(0x7b).to_f32(), 57344.0);
    }

    #[test]
    fn every_value_round_trips_and_rounding_is_to_nearest() {
        for b in 0..=255u8 {
            for (v, back) in [
                (Fp8E4M3(b).to_f32(), Fp8E4M3::from_f32(Fp8E4M3(b).to_f32()).0),
                (Fp8E5M2(b).to_f32(), Fp8E5M2::from_f32(Fp8E5M2(b).to_f32()).0),
            ] {
                if v.is_finite() {
                    assert_eq!(back, b, "{b:#x} = {v}");
                }
            }
        }
        // Between each pair of neighbours: the nearer one, the even one at the midpoint.
        let finite: Vec<(u8, f32)> = (0..0x7eu8).map(|b| (b, Fp8E4M3(b).to_f32())).collect();
        for w in finite.windows(2) {
            let ((lo, a), (hi, b)) = (w[0], w[1]);
            let mid = (a + b) / 2.0;
            assert_eq!(Fp8E4M3::from_f32(mid - (b - a) / 8.0).0, lo);
            assert_eq!(Fp8E4M3::from_f32(mid + (b - a) / 8.0).0, hi);
            assert_eq!(
                Fp8E4M3::from_f32(mid).0,
                if lo % 2 == 0 { lo } else { hi },
                "{a} {b}"
            );
        }
    }

    #[test]
    fn layouts_are_cudas() {
        assert_eq!(std::mem::size_of::<Fp8x2E4M3>(), 2);
        assert_eq!(std::mem::align_of::<Fp8x4E5M2>(), 4);
        assert_eq!(Fp8x2E5M2::C_NAME, "__nv_fp8x2_e5m2");
    }
}
