use std::fmt;

/// Declares [`Scalar`] from one table: each variant with its docs, Rust type, size in bytes and
/// C spelling, in the order of [`Scalar::ALL`].
macro_rules! scalars {
    ($($(#[$doc:meta])* $v:ident => $rust:literal, $size:literal, $c:literal;)*) => {
        /// A C scalar type, with LP64 sizes (Linux x86-64 / aarch64, which is what CUDA device code uses).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum Scalar {
            $($(#[$doc])* $v,)*
        }

        impl Scalar {
            /// Every scalar, for callers that want to enumerate them.
            pub const ALL: [Scalar; 15] = [$(Scalar::$v,)*];

            /// The one Rust type this scalar maps to, as written in Rust source: "i8","u8",...,"isize","usize","f32","f64","bool","half::f16","half::bf16".
            pub fn rust_type(self) -> &'static str {
                match self {
                    $(Scalar::$v => $rust,)*
                }
            }

            /// Size in bytes.
            pub const fn size(self) -> usize {
                match self {
                    $(Scalar::$v => $size,)*
                }
            }

            /// A conventional C spelling of this scalar, for messages ("float", "unsigned int", "size_t"...).
            pub const fn c_name(self) -> &'static str {
                match self {
                    $(Scalar::$v => $c,)*
                }
            }
        }
    };
}

scalars! {
    /// `signed char`, `char`, `int8_t`.
    I8 => "i8", 1, "signed char";
    /// `unsigned char`, `uint8_t`.
    U8 => "u8", 1, "unsigned char";
    /// `short`, `int16_t`.
    I16 => "i16", 2, "short";
    /// `unsigned short`, `uint16_t`.
    U16 => "u16", 2, "unsigned short";
    /// `int`, `signed`, `int32_t`.
    I32 => "i32", 4, "int";
    /// `unsigned int`, `unsigned`, `uint32_t`.
    U32 => "u32", 4, "unsigned int";
    /// `long`, `long long`, `int64_t`.
    I64 => "i64", 8, "long long";
    /// `unsigned long`, `unsigned long long`, `uint64_t`.
    U64 => "u64", 8, "unsigned long long";
    /// `ptrdiff_t`, `ssize_t`, `intptr_t`.
    Isize => "isize", 8, "ptrdiff_t";
    /// `size_t`, `uintptr_t`.
    Usize => "usize", 8, "size_t";
    /// `float`.
    F32 => "f32", 4, "float";
    /// `double`.
    F64 => "f64", 8, "double";
    /// `bool`.
    Bool => "bool", 1, "bool";
    /// `half`, `__half`.
    F16 => "half::f16", 2, "__half";
    /// `__nv_bfloat16`, `nv_bfloat16`.
    Bf16 => "half::bf16", 2, "__nv_bfloat16";
}

impl Scalar {
    /// Parse a Rust type name (last path segment: "i32", "f16" (for half::f16), "bf16", "usize"...) back to a scalar; None otherwise.
    ///
    /// A full path such as "half::f16" is accepted too; only its last segment counts.
    pub fn from_rust_name(name: &str) -> Option<Scalar> {
        let last = name.rsplit("::").next().unwrap_or(name).trim();
        // The last segment of each scalar's Rust type (`f16` for `half::f16`).
        Scalar::ALL
            .into_iter()
            .find(|s| s.rust_type().rsplit("::").next() == Some(last))
    }
}

/// A kernel parameter's type.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum CType {
    /// A scalar passed by value.
    Scalar(Scalar),
    /// A struct/class/union/enum or unknown typedef name passed by value, e.g. `Foo`, `struct Foo` → "Foo". CUDA vector types like float4 also come out here as Named("float4").
    ///
    /// `cudaTextureObject_t` and `cudaSurfaceObject_t` (both unsigned long long handles) come out here too.
    Named(String),
    /// A pointer. `pointee_const` is true for `const T*` and `T const*` (constness of the pointee, which is what matters); top-level const on the pointer itself (`T* const p`) is ignored. `void*` has pointee Void.
    Pointer {
        /// What the pointer points to.
        pointee: Box<CType>,
        /// Whether the pointee is `const`.
        pointee_const: bool,
    },
    /// `void` (only valid as a pointee).
    Void,
}

impl CType {
    /// A pointer to `pointee`.
    pub fn pointer(pointee: CType, pointee_const: bool) -> CType {
        CType::Pointer {
            pointee: Box::new(pointee),
            pointee_const,
        }
    }
}

/// C spelling of the type, e.g. `const float*`, `Foo`, `void*`.
impl fmt::Display for CType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CType::Scalar(s) => f.write_str(s.c_name()),
            CType::Named(n) => f.write_str(n),
            CType::Void => f.write_str("void"),
            CType::Pointer {
                pointee,
                pointee_const,
            } => {
                if *pointee_const {
                    f.write_str("const ")?;
                }
                write!(f, "{pointee}*")
            }
        }
    }
}

/// One of CUDA's 8-bit floating-point types (`<cuda_fp8.h>`): a class holding the bits, passed
/// and stored as its bytes, whose Rust type in `gpu_runtime::types` is a `#[repr(transparent)]`
/// or `#[repr(C, align)]` wrapper of the same size and alignment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fp8Type {
    /// CUDA's name for it (`__nv_fp8_e4m3`).
    pub c_name: &'static str,
    /// The type's name in `gpu_runtime::types` (`Fp8E4M3`).
    pub rust_name: &'static str,
    /// The number of 8-bit values, 1, 2 or 4 (`__nv_fp8x2_e4m3` holds two).
    pub lanes: u8,
    /// Its size in bytes.
    pub size: usize,
    /// Its alignment in bytes, as `<cuda_fp8.h>` declares it (`__CUDA_ALIGN__(2)` for two lanes).
    pub align: usize,
}

/// CUDA's 8-bit floats: E4M3 (4 exponent bits, 3 mantissa bits, finite) and E5M2 (5 and 2, with
/// infinities), one, two and four to a value.
pub const FP8_TYPES: &[Fp8Type] = &[
    Fp8Type {
        c_name: "__nv_fp8_e4m3",
        rust_name: "Fp8E4M3",
        lanes: 1,
        size: 1,
        align: 1,
    },
    Fp8Type {
        c_name: "__nv_fp8_e5m2",
        rust_name: "Fp8E5M2",
        lanes: 1,
        size: 1,
        align: 1,
    },
    Fp8Type {
        c_name: "__nv_fp8x2_e4m3",
        rust_name: "Fp8x2E4M3",
        lanes: 2,
        size: 2,
        align: 2,
    },
    Fp8Type {
        c_name: "__nv_fp8x2_e5m2",
        rust_name: "Fp8x2E5M2",
        lanes: 2,
        size: 2,
        align: 2,
    },
    Fp8Type {
        c_name: "__nv_fp8x4_e4m3",
        rust_name: "Fp8x4E4M3",
        lanes: 4,
        size: 4,
        align: 4,
    },
    Fp8Type {
        c_name: "__nv_fp8x4_e5m2",
        rust_name: "Fp8x4E5M2",
        lanes: 4,
        size: 4,
        align: 4,
    },
];

/// The 8-bit float type CUDA names `name` (`__nv_fp8_e4m3`).
pub const fn fp8_by_c_name(name: &str) -> Option<&'static Fp8Type> {
    fp8_by(name, false)
}

/// The 8-bit float type `gpu_runtime::types` names `name` (`Fp8E4M3`).
pub const fn fp8_by_rust_name(name: &str) -> Option<&'static Fp8Type> {
    fp8_by(name, true)
}

/// The 8-bit float type whose Rust name (`rust`) or C name is `name` (a `const fn` takes no
/// field selector, hence the flag).
const fn fp8_by(name: &str, rust: bool) -> Option<&'static Fp8Type> {
    let mut i = 0;
    while i < FP8_TYPES.len() {
        let t = &FP8_TYPES[i];
        if crate::vectors::const_str_eq(if rust { t.rust_name } else { t.c_name }, name) {
            return Some(t);
        }
        i += 1;
    }
    None
}

/// The part type of a complex number type a kernel may take by value or point to: `F32` for
/// `gpu_runtime::complex<float>` (the type of gpu-runtime's `<gpu_runtime/complex.h>`), and
/// the same template of `cuda::std` (libcu++) and `pycuda` (one layout: the real part, then the
/// imaginary part, aligned to the whole), or unqualified after a `using`; `F64` for
/// `complex<double>`; `None` for any other name. `name` is a [`CType::Named`] text: spaces and
/// a leading `::` do not matter.
///
/// ```
/// use gpu_cuda_source::{complex_part, Scalar};
/// assert_eq!(complex_part("gpu_runtime::complex<float>"), Some(Scalar::F32));
/// assert_eq!(complex_part("::cuda::std::complex< double >"), Some(Scalar::F64));
/// assert_eq!(complex_part("complex<int>"), None);
/// ```
pub fn complex_part(name: &str) -> Option<Scalar> {
    let compact: String = name.chars().filter(|c| !c.is_whitespace()).collect();
    let bare = compact.strip_prefix("::").unwrap_or(&compact);
    let unqualified = ["gpu_runtime::", "cuda::std::", "pycuda::"]
        .iter()
        .find_map(|ns| bare.strip_prefix(ns))
        .unwrap_or(bare);
    match unqualified {
        "complex<float>" => Some(Scalar::F32),
        "complex<double>" => Some(Scalar::F64),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn complex_spellings() {
        for (name, want) in [
            ("gpu_runtime::complex<float>", Some(Scalar::F32)),
            ("gpu_runtime :: complex < double >", Some(Scalar::F64)),
            ("pycuda::complex<float>", Some(Scalar::F32)),
            ("pycuda::complex<double>", Some(Scalar::F64)),
            // Not compilable with NVRTC, so not checked against it: a struct name.
            ("thrust::complex<double>", None),
            ("::cuda::std::complex<float>", Some(Scalar::F32)),
            ("complex<double>", Some(Scalar::F64)),
            ("std::complex<float>", None),
            ("other::complex<float>", None),
            ("gpu_runtime::complex<half>", None),
            ("gpu_runtime::complex", None),
            ("float2", None),
            ("", None),
        ] {
            assert_eq!(complex_part(name), want, "{name}");
        }
    }

    #[test]
    fn rust_names_round_trip() {
        for s in Scalar::ALL {
            assert_eq!(Scalar::from_rust_name(s.rust_type()), Some(s));
        }
        assert_eq!(Scalar::from_rust_name("f16"), Some(Scalar::F16));
        assert_eq!(Scalar::from_rust_name("bf16"), Some(Scalar::Bf16));
        assert_eq!(Scalar::from_rust_name("String"), None);
        assert_eq!(Scalar::from_rust_name(""), None);
        assert_eq!(Scalar::from_rust_name("::"), None);
    }

    #[test]
    fn sizes() {
        let total: usize = Scalar::ALL.iter().map(|s| s.size()).sum();
        assert_eq!(total, 1 + 1 + 2 + 2 + 4 + 4 + 8 + 8 + 8 + 8 + 4 + 8 + 1 + 2 + 2);
    }

    #[test]
    fn fp8_types_are_found_both_ways() {
        for t in FP8_TYPES {
            assert_eq!(fp8_by_c_name(t.c_name), Some(t));
            assert_eq!(fp8_by_rust_name(t.rust_name), Some(t));
            assert_eq!(t.size, usize::from(t.lanes));
            assert_eq!(t.align, t.size);
        }
        assert_eq!(
            fp8_by_c_name("__nv_fp8_e4m3").map(|t| t.rust_name),
            Some("Fp8E4M3")
        );
        assert_eq!(fp8_by_c_name("__nv_fp8_e8m0"), None);
        assert_eq!(fp8_by_rust_name("u8"), None);
    }

    #[test]
    fn display() {
        assert_eq!(
            CType::pointer(CType::Scalar(Scalar::F32), true).to_string(),
            "const float*"
        );
        assert_eq!(CType::pointer(CType::Void, false).to_string(), "void*");
        assert_eq!(CType::Named("float4".into()).to_string(), "float4");
    }
}
