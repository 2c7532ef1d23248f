//! CUDA's built-in vector types (`float4`, `uchar2`, `__half2`, ...): the one table of their C
//! names, the Rust types `gpu-runtime` gives them, their scalar, lanes, size and alignment.
//!
//! The macros (which Rust type a C parameter wants, which words an elementwise operation may use
//! as types) and the run time (the `#[repr(C)]` structs of `gpu_runtime::types`, checked against
//! this table when that crate is compiled; the run-time typed launches) all read it here, so a
//! type added or an alignment corrected is changed once.
//!
//! ```
//! use gpu_cuda_source::{vectors, Scalar};
//! let f = vectors::by_c_name("float3").unwrap();
//! assert_eq!((f.rust_name, f.scalar, f.lanes, f.size, f.align), ("Float3", Scalar::F32, 3, 12, 4));
//! assert_eq!(vectors::by_c_name("half2"), vectors::by_rust_name("Half2"));
//! assert!(vectors::by_c_name("float5").is_none());
//! ```

use crate::Scalar;

/// One CUDA vector type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VectorType {
    /// CUDA's name for it (`float4`, `__half2`).
    pub c_name: &'static str,
    /// Another name CUDA's headers give it (`half2` for `__half2`), if any.
    pub alias: Option<&'static str>,
    /// The type's name in `gpu_runtime::types` (`Float4`, `Half2`).
    pub rust_name: &'static str,
    /// The type of each component.
    pub scalar: Scalar,
    /// The number of components, 1 to 4.
    pub lanes: u8,
    /// Its size in bytes.
    pub size: usize,
    /// Its alignment in bytes, as CUDA's `vector_types.h` declares it: two- and four-lane
    /// vectors are aligned to their full size up to 16 bytes, three-lane ones to their scalar.
    pub align: usize,
}

/// An entry whose size is its lanes' bytes rounded up to its alignment (`double4`: 32, aligned
/// to 16), as a C struct's is.
const fn v(
    c_name: &'static str,
    rust_name: &'static str,
    scalar: Scalar,
    lanes: u8,
    align: usize,
) -> VectorType {
    let bytes = scalar.size() * lanes as usize;
    VectorType {
        c_name,
        alias: None,
        rust_name,
        scalar,
        lanes,
        size: bytes.div_ceil(align) * align,
        align,
    }
}

const fn aliased(t: VectorType, alias: &'static str) -> VectorType {
    VectorType {
        alias: Some(alias),
        ..t
    }
}

/// The table's entries: each family's four types (`float1` to `float4`: `Float1` to `Float4`),
/// then the rest as they are.
macro_rules! families {
    ($($c:literal $rust:literal $scalar:ident [$a1:literal $a2:literal $a3:literal $a4:literal],)* ; $($other:expr,)*) => {
        [
            $(
                v(concat!($c, "1"), concat!($rust, "1"), Scalar::$scalar, 1, $a1),
                v(concat!($c, "2"), concat!($rust, "2"), Scalar::$scalar, 2, $a2),
                v(concat!($c, "3"), concat!($rust, "3"), Scalar::$scalar, 3, $a3),
                v(concat!($c, "4"), concat!($rust, "4"), Scalar::$scalar, 4, $a4),
            )*
            $($other,)*
        ]
    };
}

/// Every CUDA vector type, family by family, one to four lanes. The order is part of the table:
/// `gpu_runtime::types::VECTOR_TYPES` lists the same types in the same order.
pub const VECTOR_TYPES: &[VectorType] = &families! {
    // C name, Rust name, scalar, and the alignment of one to four lanes.
    "char" "Char" I8 [1 2 1 4],
    "uchar" "UChar" U8 [1 2 1 4],
    "short" "Short" I16 [2 4 2 8],
    "ushort" "UShort" U16 [2 4 2 8],
    "int" "Int" I32 [4 8 4 16],
    "uint" "UInt" U32 [4 8 4 16],
    "long" "Long" I64 [8 16 8 16],
    "ulong" "ULong" U64 [8 16 8 16],
    "longlong" "LongLong" I64 [8 16 8 16],
    "ulonglong" "ULongLong" U64 [8 16 8 16],
    "float" "Float" F32 [4 8 4 16],
    "double" "Double" F64 [8 16 8 16],
    ;
    aliased(v("__half2", "Half2", Scalar::F16, 2, 4), "half2"),
    aliased(
        v("__nv_bfloat162", "BFloat162", Scalar::Bf16, 2, 4),
        "nv_bfloat162",
    ),
};

/// Byte equality usable in a `const fn`: the lookups here, and `gpu-runtime`'s checks of its
/// structs and tables against this table while it compiles.
pub const fn const_str_eq(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// The vector type CUDA names `name` (`float4`), or that CUDA's headers alias to it (`half2`).
pub const fn by_c_name(name: &str) -> Option<&'static VectorType> {
    let mut i = 0;
    while i < VECTOR_TYPES.len() {
        let t = &VECTOR_TYPES[i];
        let alias_matches = match t.alias {
            Some(a) => const_str_eq(a, name),
            None => false,
        };
        if const_str_eq(t.c_name, name) || alias_matches {
            return Some(t);
        }
        i += 1;
    }
    None
}

/// The vector type `gpu_runtime::types` names `name` (`Float4`).
pub const fn by_rust_name(name: &str) -> Option<&'static VectorType> {
    let mut i = 0;
    while i < VECTOR_TYPES.len() {
        if const_str_eq(VECTOR_TYPES[i].rust_name, name) {
            return Some(&VECTOR_TYPES[i]);
        }
        i += 1;
    }
    None
}

/// For a name shaped like a vector type of a family that is not one of it (`float5`,
/// `double0`, `__half3`): the family's name (`float`), for a message that names it.
pub fn misnamed_family(name: &str) -> Option<&str> {
    let family = name.trim_end_matches(|ch: char| ch.is_ascii_digit());
    let digits = &name[family.len()..];
    if digits.is_empty() || by_c_name(name).is_some() {
        return None;
    }
    // A family is a name the table's names are made of: `float` of `float4`, `__half` of
    // `__half2`, `half` of its alias `half2`.
    let of_family = |n: &str| n.strip_suffix(|c: char| c.is_ascii_digit()) == Some(family);
    VECTOR_TYPES
        .iter()
        .any(|t| of_family(t.c_name) || t.alias.is_some_and(of_family))
        .then_some(family)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_and_alignments_are_cudas() {
        // From CUDA's vector_types.h, independent of the rule `v` computes sizes by.
        for (c, size, align) in [
            ("char3", 3, 1),
            ("char4", 4, 4),
            ("short4", 8, 8),
            ("int3", 12, 4),
            ("int4", 16, 16),
            ("long2", 16, 16),
            ("long3", 24, 8),
            ("longlong4", 32, 16),
            ("float3", 12, 4),
            ("float4", 16, 16),
            ("double1", 8, 8),
            ("double4", 32, 16),
            ("__half2", 4, 4),
            ("__nv_bfloat162", 4, 4),
        ] {
            let t = by_c_name(c).unwrap_or_else(|| panic!("{c} missing"));
            assert_eq!((t.size, t.align), (size, align), "{c}");
        }
    }

    #[test]
    fn every_entry_is_consistent_and_found_both_ways() {
        assert_eq!(VECTOR_TYPES.len(), 50);
        for t in VECTOR_TYPES {
            assert_eq!(by_c_name(t.c_name), Some(t));
            assert_eq!(by_rust_name(t.rust_name), Some(t));
            if let Some(a) = t.alias {
                assert_eq!(by_c_name(a), Some(t));
            }
            // The name ends in the lane count, the size holds every lane.
            assert!(t.c_name.ends_with(char::from(b'0' + t.lanes)), "{}", t.c_name);
            assert!(
                t.rust_name.ends_with(char::from(b'0' + t.lanes)),
                "{}",
                t.rust_name
            );
            assert!(t.size >= t.scalar.size() * usize::from(t.lanes), "{}", t.c_name);
            assert_eq!(t.size % t.align, 0, "{}", t.c_name);
        }
    }

    #[test]
    fn other_names_are_not_vector_types() {
        for n in [
            "float", "float0", "float5", "float44", "Float4", "Params", "", "4", "__half",
        ] {
            assert_eq!(by_c_name(n), None, "{n}");
        }
        for n in ["Float", "Float5", "float4", "f32", ""] {
            assert_eq!(by_rust_name(n), None, "{n}");
        }
    }

    #[test]
    fn misnamed_families_are_recognised() {
        assert_eq!(misnamed_family("float5"), Some("float"));
        assert_eq!(misnamed_family("double0"), Some("double"));
        assert_eq!(misnamed_family("__half3"), Some("__half"));
        assert_eq!(misnamed_family("half4"), Some("half"));
        // Real vector types, plain scalars and other names are not misnamed.
        for n in ["float4", "half2", "float", "vec3", "", "7"] {
            assert_eq!(misnamed_family(n), None, "{n}");
        }
    }
}
