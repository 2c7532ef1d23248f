//! The Rust names of CUDA's vector types (`float4` is `gpu_runtime::types::Float4`), read from
//! the table in `gpu_cuda_source::vectors` that `gpu_runtime::types` is checked against, and of
//! complex numbers (`gpu_runtime::complex<float>` is
//! `gpu_runtime::types::Complex32`, see `gpu_runtime::types`).

/// The Rust type name for a CUDA vector type's C name (or an 8-bit float's, `__nv_fp8_e4m3` is
/// `Fp8E4M3`), or `None` when `c` is not one.
pub fn rust_name(c: &str) -> Option<String> {
    // Complex numbers (`gpu_runtime::complex<float>`, ...) map to gpu_runtime's Complex32/64.
    match gpu_cuda_source::complex_part(c) {
        Some(gpu_cuda_source::Scalar::F32) => return Some("Complex32".to_owned()),
        Some(gpu_cuda_source::Scalar::F64) => return Some("Complex64".to_owned()),
        _ => {}
    }
    gpu_cuda_source::vectors::by_c_name(c)
        .map(|t| t.rust_name)
        .or_else(|| gpu_cuda_source::fp8_by_c_name(c).map(|t| t.rust_name))
        .map(str::to_owned)
}

/// The CUDA C name of a Rust vector type's name (`Float2` is `float2`), or `None` when `rust`
/// is not one: the inverse of [`rust_name`].
pub fn c_name(rust: &str) -> Option<String> {
    match rust {
        "Complex32" => return Some("gpu_runtime::complex<float>".to_owned()),
        "Complex64" => return Some("gpu_runtime::complex<double>".to_owned()),
        _ => {}
    }
    gpu_cuda_source::vectors::by_rust_name(rust)
        .map(|t| t.c_name)
        .or_else(|| gpu_cuda_source::fp8_by_rust_name(rust).map(|t| t.c_name))
        .map(str::to_owned)
}

/// For a name shaped like a CUDA vector type that is not one (`float5`, `double0`): the
/// family's base name (`float`).
pub fn misnamed_family(c: &str) -> Option<&str> {
    gpu_cuda_source::vectors::misnamed_family(c)
}

#[cfg(test)]
mod tests {
    use super::{c_name, misnamed_family, rust_name};

    const FAMILIES: [(&str, &str); 12] = [
        ("char", "Char"),
        ("uchar", "UChar"),
        ("short", "Short"),
        ("ushort", "UShort"),
        ("int", "Int"),
        ("uint", "UInt"),
        ("long", "Long"),
        ("ulong", "ULong"),
        ("longlong", "LongLong"),
        ("ulonglong", "ULongLong"),
        ("float", "Float"),
        ("double", "Double"),
    ];

    #[test]
    fn every_vector_type_maps_both_ways() {
        for (c, rust) in FAMILIES {
            for n in 1..=4 {
                let (c, rust) = (format!("{c}{n}"), format!("{rust}{n}"));
                assert_eq!(rust_name(&c).as_deref(), Some(rust.as_str()), "{c}");
                assert_eq!(c_name(&rust).as_deref(), Some(c.as_str()), "{rust}");
            }
        }
    }

    #[test]
    fn half_bfloat_and_complex_pairs() {
        assert_eq!(rust_name("__half2").as_deref(), Some("Half2"));
        assert_eq!(rust_name("half2").as_deref(), Some("Half2"));
        assert_eq!(rust_name("nv_bfloat162").as_deref(), Some("BFloat162"));
        assert_eq!(c_name("BFloat162").as_deref(), Some("__nv_bfloat162"));
        assert_eq!(
            rust_name("gpu_runtime::complex<float>").as_deref(),
            Some("Complex32")
        );
        assert_eq!(rust_name("pycuda::complex<double>").as_deref(), Some("Complex64"));
        assert_eq!(
            c_name("Complex64").as_deref(),
            Some("gpu_runtime::complex<double>")
        );
    }

    #[test]
    fn other_names_are_not_vector_types() {
        for c in ["float", "float0", "float5", "float44", "Params", "", "4"] {
            assert_eq!(rust_name(c), None, "{c}");
        }
        for rust in ["Float", "Float5", "float4", "f32", ""] {
            assert_eq!(c_name(rust), None, "{rust}");
        }
    }

    #[test]
    fn misnamed_families_are_recognised() {
        assert_eq!(misnamed_family("float5"), Some("float"));
        assert_eq!(misnamed_family("double0"), Some("double"));
        assert_eq!(misnamed_family("__half3"), Some("__half"));
        // Real vector types, plain scalars and other names are not misnamed.
        assert_eq!(misnamed_family("float4"), None);
        assert_eq!(misnamed_family("float"), None);
        assert_eq!(misnamed_family("vec3"), None);
    }
}
