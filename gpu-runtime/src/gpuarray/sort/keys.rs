//! Sort keys: each real element type's bits as an unsigned integer of its size whose order is
//! NumPy's order of the values (NaN last, all NaNs equal; `-0.0` equal to `0.0`), the C of
//! that transform and its inverse for the generated kernels, and the same transform on the
//! host (what the tests check the kernels' order against).
//!
//! - `bool`: 0 or 1.
//! - unsigned integers: their bits.
//! - signed integers: their bits with the sign bit flipped (two's complement then orders as
//!   unsigned).
//! - floats (`f16`, `bf16`, `f32`, `f64`): a positive number gets its sign bit set, a negative
//!   one all bits flipped (larger magnitudes then order lower); every NaN becomes all ones (the
//!   largest key: NaN last, and NaNs equal to each other, so a stable sort keeps their order, as
//!   NumPy does), and `-0.0` becomes `+0.0` first (equal to it, as NumPy compares them). The
//!   inverse maps keys back to bits, so a sorted float array holds one NaN (all mantissa bits
//!   set, sign clear) for every NaN and `0.0` for every zero: NumPy keeps each NaN's bits and
//!   each zero's sign, which compare equal to these.

use crate::gpuarray::elements::dtype::DType;

/// How an element type's bits become a key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum KeyKind {
    /// `bool`: any nonzero byte is 1.
    Bool,
    /// The bits themselves.
    Unsigned,
    /// The sign bit flipped.
    Signed,
    /// IEEE 754, with the bits of `+inf` (without sign) given: NaNs are the larger magnitudes.
    Float { inf: u64 },
}

/// The key of an element type: its kind and its size in bytes (1, 2, 4 or 8).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct KeyType {
    pub kind: KeyKind,
    pub bytes: u32,
}

impl KeyType {
    /// The key of `dtype`; `None` for the complex types (no order).
    pub(crate) fn of(dtype: DType) -> Option<KeyType> {
        let (kind, bytes) = match dtype {
            DType::Bool => (KeyKind::Bool, 1),
            DType::U8 => (KeyKind::Unsigned, 1),
            DType::I8 => (KeyKind::Signed, 1),
            DType::U16 => (KeyKind::Unsigned, 2),
            DType::I16 => (KeyKind::Signed, 2),
            DType::U32 => (KeyKind::Unsigned, 4),
            DType::I32 => (KeyKind::Signed, 4),
            DType::U64 => (KeyKind::Unsigned, 8),
            DType::I64 => (KeyKind::Signed, 8),
            DType::F16 => (KeyKind::Float { inf: 0x7C00 }, 2),
            DType::Bf16 => (KeyKind::Float { inf: 0x7F80 }, 2),
            DType::F32 => (KeyKind::Float { inf: 0x7F80_0000 }, 4),
            DType::F64 => (
                KeyKind::Float {
                    inf: 0x7FF0_0000_0000_0000,
                },
                8,
            ),
            DType::Complex32 | DType::Complex64 => return None,
        };
        Some(KeyType { kind, bytes })
    }

    /// The key of the segment numbers of a sort along an axis: `u32`.
    pub(crate) const SEGMENT: KeyType = KeyType {
        kind: KeyKind::Unsigned,
        bytes: 4,
    };

    /// The unsigned C type of the key (and of the element's bits).
    pub(crate) fn c_type(self) -> &'static str {
        match self.bytes {
            1 => "unsigned char",
            2 => "unsigned short",
            4 => "unsigned int",
            _ => "unsigned long long",
        }
    }

    /// The key's bits: all ones.
    fn ones(self) -> u64 {
        if self.bytes == 8 {
            u64::MAX
        } else {
            (1u64 << (8 * self.bytes)) - 1
        }
    }

    fn sign(self) -> u64 {
        1u64 << (8 * self.bytes - 1)
    }

    /// A short name, for kernel keys.
    pub(crate) fn tag(self) -> String {
        format!("{:?}{}", self.kind, self.bytes)
    }

    /// The key of an element's bits, on the host (what the tests check the kernels against;
    /// `bits` holds the element's bytes, little-endian, zero
    /// above them).
    #[cfg(test)]
    pub(crate) fn to_key(self, bits: u64) -> u64 {
        let (sign, ones) = (self.sign(), self.ones());
        match self.kind {
            KeyKind::Bool => u64::from(bits & 0xFF != 0),
            KeyKind::Unsigned => bits,
            KeyKind::Signed => bits ^ sign,
            KeyKind::Float { inf } => {
                if bits & !sign & ones > inf {
                    return ones;
                }
                let b = if bits == sign { 0 } else { bits };
                if b & sign != 0 {
                    !b & ones
                } else {
                    b | sign
                }
            }
        }
    }

    /// The element's bits of a key ([`to_key`](Self::to_key)'s inverse on its image).
    #[cfg(test)]
    pub(crate) fn bits_of_key(self, key: u64) -> u64 {
        let (sign, ones) = (self.sign(), self.ones());
        match self.kind {
            KeyKind::Bool | KeyKind::Unsigned => key,
            KeyKind::Signed => key ^ sign,
            KeyKind::Float { .. } => {
                if key & sign != 0 {
                    key & !sign
                } else {
                    !key & ones
                }
            }
        }
    }

    /// The C of `gpu_to_key(KEY b)` and `gpu_from_key(KEY k)` and `gpu_key_to_double(KEY b)`
    /// (the element's value of its bits, for the quantiles), with the key type `KEY`
    /// (`typedef`'d first).
    pub(crate) fn c_functions(self, dtype_for_double: Option<DType>) -> String {
        let k = self.c_type();
        let ones = format!("(({k})0x{:X}ull)", self.ones());
        let sign = format!("(({k})0x{:X}ull)", self.sign());
        let (to, from) = match self.kind {
            KeyKind::Bool => ("return (KEY)(b != 0);".to_owned(), "return k;".to_owned()),
            KeyKind::Unsigned => ("return b;".to_owned(), "return k;".to_owned()),
            KeyKind::Signed => (
                format!("return (KEY)(b ^ {sign});"),
                format!("return (KEY)(k ^ {sign});"),
            ),
            KeyKind::Float { inf } => (
                format!(
                    "if ((KEY)(b & (KEY)~{sign}) > (({k})0x{inf:X}ull)) return {ones};\n\
                     if (b == {sign}) b = 0;\n\
                     return (b & {sign}) ? (KEY)(~b) : (KEY)(b | {sign});"
                ),
                format!("return (k & {sign}) ? (KEY)(k & (KEY)~{sign}) : (KEY)(~k);"),
            ),
        };
        let mut c = format!(
            "typedef {k} KEY;\n\
             __device__ __forceinline__ KEY gpu_to_key(KEY b) {{ {to} }}\n\
             __device__ __forceinline__ KEY gpu_from_key(KEY k) {{ {from} }}\n"
        );
        if let Some(d) = dtype_for_double {
            let body = match d {
                DType::Bool => "return b != 0 ? 1.0 : 0.0;",
                DType::I8 => "return (double)(signed char)b;",
                DType::I16 => "return (double)(short)b;",
                DType::I32 => "return (double)(int)b;",
                DType::I64 => "return (double)(long long)b;",
                DType::U8 | DType::U16 | DType::U32 | DType::U64 => "return (double)b;",
                DType::F32 => "return (double)__uint_as_float(b);",
                DType::F64 => "return __longlong_as_double((long long)b);",
                DType::Bf16 => "return (double)__uint_as_float(((unsigned int)b) << 16);",
                // f16 by hand, so that no CUDA header is needed.
                DType::F16 => {
                    "unsigned int h = b, s = (h & 0x8000u) << 16, e = (h >> 10) & 0x1Fu, m = h & 0x3FFu;\n\
                     if (e == 0) { double v = (double)m * 5.9604644775390625e-8; return s ? -v : v; }\n\
                     if (e == 31) return (double)__uint_as_float(s | 0x7F800000u | (m << 13));\n\
                     return (double)__uint_as_float(s | ((e + 112u) << 23) | (m << 13));"
                }
                DType::Complex32 | DType::Complex64 => "return 0.0;",
            };
            c.push_str(&format!(
                "__device__ __forceinline__ double gpu_key_to_double(KEY b) {{ {body} }}\n"
            ));
        }
        c
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use half::{bf16, f16};

    fn key_f32(x: f32) -> u64 {
        KeyType::of(DType::F32).unwrap().to_key(u64::from(x.to_bits()))
    }

    #[test]
    fn float_keys_order_as_numpy_with_nan_last_and_zeros_equal() {
        let xs = [
            f32::NEG_INFINITY,
            -3.5,
            -1e-40,
            -0.0,
            0.0,
            1e-40,
            2.0,
            f32::INFINITY,
        ];
        for w in xs.windows(2) {
            let (a, b) = (key_f32(w[0]), key_f32(w[1]));
            if w[0] == w[1] {
                assert_eq!(a, b, "{} and {}", w[0], w[1]);
            } else {
                assert!(a < b, "{} and {}", w[0], w[1]);
            }
        }
        let nans = [
            f32::NAN,
            -f32::NAN,
            f32::from_bits(0x7F80_0001),
            f32::from_bits(0xFFC0_1234),
        ];
        for n in nans {
            assert_eq!(key_f32(n), u64::from(u32::MAX));
            assert!(key_f32(n) > key_f32(f32::INFINITY));
        }
    }

    #[test]
    fn every_16_bit_key_round_trips_and_keeps_the_order() {
        for (dtype, to_f64) in [
            (
                DType::F16,
                (|b: u16| f16::from_bits(b).to_f64()) as fn(u16) -> f64,
            ),
            (DType::Bf16, |b: u16| bf16::from_bits(b).to_f64()),
        ] {
            let kt = KeyType::of(dtype).unwrap();
            let mut all: Vec<u16> = (0..=u16::MAX).collect();
            all.sort_by_key(|&b| kt.to_key(u64::from(b)));
            for w in all.windows(2) {
                let (a, b) = (to_f64(w[0]), to_f64(w[1]));
                assert!(a <= b || b.is_nan(), "{dtype:?}: {a} before {b}");
            }
            for b in 0..=u16::MAX {
                let k = kt.to_key(u64::from(b));
                let back = kt.bits_of_key(k);
                let (x, y) = (to_f64(b), to_f64(back as u16));
                assert!(x == y || (x.is_nan() && y.is_nan()), "{dtype:?}: {b:#x}");
                assert_eq!(kt.to_key(back), k);
            }
        }
    }

    #[test]
    fn integer_keys_order_as_the_values() {
        let kt = KeyType::of(DType::I8).unwrap();
        let mut all: Vec<i8> = (i8::MIN..=i8::MAX).collect();
        all.reverse();
        all.sort_by_key(|&v| kt.to_key(u64::from(v as u8)));
        assert!(all.windows(2).all(|w| w[0] < w[1]));
        let k64 = KeyType::of(DType::I64).unwrap();
        let vals = [i64::MIN, -1, 0, 1, i64::MAX];
        for w in vals.windows(2) {
            assert!(k64.to_key(w[0] as u64) < k64.to_key(w[1] as u64));
            assert_eq!(k64.bits_of_key(k64.to_key(w[0] as u64)), w[0] as u64);
        }
        let kf = KeyType::of(DType::F64).unwrap();
        let fs = [f64::NEG_INFINITY, -1.0, 0.0, 5e-324, 1.0, f64::INFINITY];
        for w in fs.windows(2) {
            assert!(kf.to_key(w[0].to_bits()) < kf.to_key(w[1].to_bits()));
        }
        assert_eq!(kf.to_key(f64::NAN.to_bits()), u64::MAX);
        assert_eq!(kf.to_key((-0.0f64).to_bits()), kf.to_key(0.0f64.to_bits()));
        let kb = KeyType::of(DType::Bool).unwrap();
        assert_eq!((kb.to_key(0), kb.to_key(1), kb.to_key(7)), (0, 1, 1));
        assert!(KeyType::of(DType::Complex64).is_none());
    }
}
