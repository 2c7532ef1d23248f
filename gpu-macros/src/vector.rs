//! The Rust names of CUDA's vector types (`float4` is `gpu_runtime::Float4`), mirroring
//! `gpu_runtime::vector`.

/// The Rust type name for a CUDA vector type's C name, or `None` when `c` is not one.
pub fn rust_name(c: &str) -> Option<String> {
    match c {
        "__half2" | "half2" => return Some("Half2".to_owned()),
        "__nv_bfloat162" | "nv_bfloat162" => return Some("BFloat162".to_owned()),
        _ => {}
    }
    let n = c.chars().last().filter(|d| ('1'..='4').contains(d))?;
    let base = match &c[..c.len() - 1] {
        "char" => "Char",
        "uchar" => "UChar",
        "short" => "Short",
        "ushort" => "UShort",
        "int" => "Int",
        "uint" => "UInt",
        "long" => "Long",
        "ulong" => "ULong",
        "longlong" => "LongLong",
        "ulonglong" => "ULongLong",
        "float" => "Float",
        "double" => "Double",
        _ => return None,
    };
    Some(format!("{base}{n}"))
}

#[cfg(test)]
mod tests {
    use super::rust_name;

    #[test]
    fn maps_c_vector_names() {
        assert_eq!(rust_name("float4").as_deref(), Some("Float4"));
        assert_eq!(rust_name("uchar2").as_deref(), Some("UChar2"));
        assert_eq!(rust_name("ulonglong3").as_deref(), Some("ULongLong3"));
        assert_eq!(rust_name("__half2").as_deref(), Some("Half2"));
        assert_eq!(rust_name("float5"), None);
        assert_eq!(rust_name("Particle"), None);
        assert_eq!(rust_name("my_int4"), None);
    }
}
