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
