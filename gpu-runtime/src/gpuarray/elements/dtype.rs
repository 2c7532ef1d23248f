//! [`DType`], the element types by name (re-exported by [`promote`](crate::gpuarray::promote),
//! whose table it indexes), and what generated kernels need to know of one: its C name, its
//! size, and for the complex types their part type. The complex types are no `gpu-cuda-source`
//! scalars (that crate reads C declarations, where `gpu_runtime::complex<float>` is a named type),
//! so the kernels of this module name element types by [`DType`], and by `gpu_cuda_source::Scalar`
//! only where a real type is meant.

use gpu_cuda_source::Scalar;

/// Declares [`DType`] from one table (each variant with its docs, its short name and its
/// `gpu-cuda-source` scalar, which the complex types have not), and what only lists it:
/// [`DType::ALL`], [`DType::short_name`], [`DType::scalar`] and [`DType::from_scalar`].
macro_rules! dtypes {
    ($($(#[$doc:meta])* $v:ident: $short:literal $(, $scalar:ident)?;)*) => {
        /// An element type, as NumPy names the types arrays hold (and `bf16`, which it does not).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum DType {
            $($(#[$doc])* $v,)*
        }

        impl DType {
            /// Every type, in the order of the tables in [`promote`](crate::gpuarray::promote)'s docs.
            pub const ALL: [DType; 15] = [$(DType::$v),*];

            /// The short name the tables use (`i8`, `bf16`, `c32`).
            pub fn short_name(self) -> &'static str {
                match self {
                    $(DType::$v => $short,)*
                }
            }

            /// The type of a `gpu-cuda-source` scalar (the
            /// [`Element::SCALAR`](crate::gpuarray::Element::SCALAR) of array elements), or `None`
            /// for `size_t` and `ptrdiff_t`, which arrays do not hold.
            pub fn from_scalar(s: Scalar) -> Option<DType> {
                Some(match s {
                    $($(Scalar::$scalar => DType::$v,)?)*
                    Scalar::Isize | Scalar::Usize => return None,
                })
            }

            /// The `gpu-cuda-source` scalar of this type, or `None` for the complex types (which are not
            /// scalars there).
            pub const fn scalar(self) -> Option<Scalar> {
                match self {
                    $(DType::$v => dtypes!(@scalar $($scalar)?),)*
                }
            }
        }
    };
    (@scalar $scalar:ident) => { Some(Scalar::$scalar) };
    (@scalar) => { None };
}

dtypes! {
    /// `bool`.
    Bool: "bool", Bool;
    /// `i8` (NumPy's `int8`).
    I8: "i8", I8;
    /// `u8` (`uint8`).
    U8: "u8", U8;
    /// `i16` (`int16`).
    I16: "i16", I16;
    /// `u16` (`uint16`).
    U16: "u16", U16;
    /// `i32` (`int32`).
    I32: "i32", I32;
    /// `u32` (`uint32`).
    U32: "u32", U32;
    /// `i64` (`int64`).
    I64: "i64", I64;
    /// `u64` (`uint64`).
    U64: "u64", U64;
    /// `half::f16` (`float16`).
    F16: "f16", F16;
    /// `half::bf16` (`ml_dtypes.bfloat16`; not a NumPy type).
    Bf16: "bf16", Bf16;
    /// `f32` (`float32`).
    F32: "f32", F32;
    /// `f64` (`float64`).
    F64: "f64", F64;
    /// [`Complex32`](crate::types::Complex32): two `f32` (NumPy's `complex64`).
    Complex32: "c32";
    /// [`Complex64`](crate::types::Complex64): two `f64` (NumPy's `complex128`).
    Complex64: "c64";
}

impl DType {
    /// The C name generated kernels use: `float`, `unsigned long long`, `__half`,
    /// `gpu_runtime::complex<float>` (from `<gpu_runtime/complex.h>`), ...
    pub const fn c_name(self) -> &'static str {
        match self {
            DType::Complex32 => "gpu_runtime::complex<float>",
            DType::Complex64 => "gpu_runtime::complex<double>",
            real => real.part_scalar().c_name(),
        }
    }

    /// The size of one element in bytes.
    pub fn size(self) -> usize {
        match self {
            DType::Complex32 | DType::Complex64 => 2 * self.part_scalar().size(),
            real => real.part_scalar().size(),
        }
    }

    /// Whether this is [`Complex32`](crate::types::Complex32) or
    /// [`Complex64`](crate::types::Complex64).
    pub fn is_complex(self) -> bool {
        matches!(self, DType::Complex32 | DType::Complex64)
    }

    /// The real type of the parts of a complex type (`F32` for `Complex32`), and a real type's
    /// own scalar.
    pub const fn part_scalar(self) -> Scalar {
        match self {
            DType::Complex32 => Scalar::F32,
            DType::Complex64 => Scalar::F64,
            // Every other type is a scalar there.
            real => match real.scalar() {
                Some(s) => s,
                None => Scalar::F64,
            },
        }
    }

    /// The complex type whose parts are `part` (`F32`, `F64`), if there is one.
    pub fn complex_of(part: Scalar) -> Option<DType> {
        match part {
            Scalar::F32 => Some(DType::Complex32),
            Scalar::F64 => Some(DType::Complex64),
            _ => None,
        }
    }

    /// The type of a C name of a parameter declaration: a `gpu-cuda-source` scalar's, or a complex
    /// number's (`gpu_runtime::complex<float>`, `pycuda::complex<double>`, ...).
    pub(crate) fn of_named(name: &str) -> Option<DType> {
        DType::complex_of(gpu_cuda_source::complex_part(name)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_sizes() {
        assert_eq!(DType::Complex32.c_name(), "gpu_runtime::complex<float>");
        assert_eq!(DType::Complex64.size(), 16);
        assert_eq!(DType::F16.c_name(), "__half");
        assert_eq!(DType::U64.size(), 8);
        assert_eq!(DType::Complex64.part_scalar(), Scalar::F64);
        assert_eq!(
            DType::of_named("gpu_runtime::complex<float>"),
            Some(DType::Complex32)
        );
        assert_eq!(DType::of_named("complex<int>"), None);
        for d in DType::ALL {
            assert_eq!(d.is_complex(), d.scalar().is_none(), "{d:?}");
        }
    }
}
