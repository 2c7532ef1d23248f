//! How a generated kernel converts one element type to another (`astype`, `assign`, copies),
//! as a table: each type says how it is read into a wider C type and how it is written from
//! each other type. NumPy's conversions are C's for the built-in C types; the 16-bit floats
//! (`__half`, `__nv_bfloat16`) have no conversion operators NVRTC can pick unambiguously from
//! every type, so they go through CUDA's named, correctly rounded intrinsics (`__double2half`,
//! `__ll2half_rn`, ...): one rounding from the source value, as NumPy rounds.
//!
//! A new element type (`bool`) is one more row in [`read_as_wide`] and [`write_from`].
//!
//! The complex types ([`convert_c`]): a real value becomes the real part (the imaginary part
//! zero); one complex type converts to the other part by part; a complex value converts to a
//! real type as its real part, as NumPy's `astype` does (NumPy also warns, `ComplexWarning`:
//! this crate has no warnings, and documents it instead), except to `bool`, which is true when
//! either part is nonzero (NumPy's truth of a complex number).

use gpu_cuda_source::Scalar;

use crate::gpuarray::elements::dtype::DType;

/// The `#include` lines a kernel whose elements are `types` needs before its code: this
/// crate's complex header, and CUDA's headers of the 16-bit float types, each once.
pub(crate) fn headers_for(types: impl IntoIterator<Item = DType>) -> String {
    let mut complex = false;
    let scalars: Vec<Scalar> = types
        .into_iter()
        .inspect(|d| complex |= d.is_complex())
        .map(DType::part_scalar)
        .collect();
    let mut out = String::new();
    if complex {
        out.push_str("#include <gpu_runtime/complex.h>\n");
    }
    // gpu-cuda-source's, which `#[elementwise]`'s build-time check puts before its kernels too.
    out.push_str(&gpu_cuda_source::elementwise::scalar_includes(scalars));
    out
}

/// The scalar of a 16-bit float type (`F16`, `Bf16`), which the generated code computes in
/// `float` and rounds back once, as NumPy's loops of these types do; `None` for the others.
pub(crate) fn sixteen_bit(t: DType) -> Option<Scalar> {
    matches!(t, DType::F16 | DType::Bf16).then(|| t.part_scalar())
}

/// `x`, a C expression of the 16-bit float `narrow`, as a `float` (exactly).
pub(crate) fn widen(narrow: Scalar, x: &str) -> String {
    cast_c(narrow, Scalar::F32, x)
}

/// `x` (of type `from`) as a C expression of a type that holds every value of `from` exactly,
/// and that C converts to the built-in types as NumPy does: the 16-bit floats as `float`.
fn read_as_wide(from: Scalar, x: &str) -> String {
    match from {
        Scalar::F16 => format!("__half2float({x})"),
        Scalar::Bf16 => format!("__bfloat162float({x})"),
        _ => x.to_owned(),
    }
}

/// The intrinsic that rounds a value of (wide) type `from` to a 16-bit float once, given the
/// intrinsics' names for `double`, `float` and the 16-, 32- and 64-bit integers.
fn round_to_16_bit(from: Scalar, names: &SixteenBit) -> (&'static str, &'static str) {
    // (intrinsic, the C type its argument is converted to first)
    match from {
        Scalar::F64 => (names.from_double, "double"),
        Scalar::F32 | Scalar::F16 | Scalar::Bf16 => (names.from_float, "float"),
        Scalar::I8 | Scalar::I16 => (names.from_short, "short"),
        Scalar::U8 | Scalar::U16 => (names.from_ushort, "unsigned short"),
        Scalar::I32 => (names.from_int, "int"),
        Scalar::U32 => (names.from_uint, "unsigned int"),
        Scalar::I64 | Scalar::Isize => (names.from_ll, "long long"),
        Scalar::U64 | Scalar::Usize => (names.from_ull, "unsigned long long"),
        Scalar::Bool => (names.from_ushort, "unsigned short"),
    }
}

/// CUDA's rounding intrinsics into one 16-bit float type.
struct SixteenBit {
    from_double: &'static str,
    from_float: &'static str,
    from_short: &'static str,
    from_ushort: &'static str,
    from_int: &'static str,
    from_uint: &'static str,
    from_ll: &'static str,
    from_ull: &'static str,
}

const HALF: SixteenBit = SixteenBit {
    from_double: "__double2half",
    from_float: "__float2half_rn",
    from_short: "__short2half_rn",
    from_ushort: "__ushort2half_rn",
    from_int: "__int2half_rn",
    from_uint: "__uint2half_rn",
    from_ll: "__ll2half_rn",
    from_ull: "__ull2half_rn",
};

const BFLOAT16: SixteenBit = SixteenBit {
    from_double: "__double2bfloat16",
    from_float: "__float2bfloat16_rn",
    from_short: "__short2bfloat16_rn",
    from_ushort: "__ushort2bfloat16_rn",
    from_int: "__int2bfloat16_rn",
    from_uint: "__uint2bfloat16_rn",
    from_ll: "__ll2bfloat16_rn",
    from_ull: "__ull2bfloat16_rn",
};

/// `wide` (a C expression of `from`'s wide type, see [`read_as_wide`]) written as a `to`.
fn write_from(from: Scalar, to: Scalar, wide: &str) -> String {
    let names = match to {
        Scalar::F16 => &HALF,
        Scalar::Bf16 => &BFLOAT16,
        _ => return format!("({})({wide})", to.c_name()),
    };
    let (intrinsic, arg) = round_to_16_bit(from, names);
    format!("{intrinsic}(({arg})({wide}))")
}

/// The C expression converting `x`, of element type `from`, to `to`, as NumPy's `astype`
/// does, for any two element types, complex ones included (see the module docs).
pub(crate) fn convert_c(from: DType, to: DType, x: &str) -> String {
    match (from.is_complex(), to.is_complex()) {
        (false, false) => cast_c(from.part_scalar(), to.part_scalar(), x),
        _ if from == to => x.to_owned(),
        (false, true) => format!(
            "{}({})",
            to.c_name(),
            cast_c(from.part_scalar(), to.part_scalar(), x)
        ),
        (true, true) => format!("{}({x})", to.c_name()),
        (true, false) if to == DType::Bool => format!("((bool)(({x}).re != 0 || ({x}).im != 0))"),
        (true, false) => cast_c(from.part_scalar(), to.part_scalar(), &format!("({x}).re")),
    }
}

/// The C expression converting `x`, of element type `from`, to `to`, as NumPy's `astype`
/// does (C's conversion for the built-in types; one correct rounding into the 16-bit floats).
pub(crate) fn cast_c(from: Scalar, to: Scalar, x: &str) -> String {
    if from == to {
        return x.to_owned();
    }
    write_from(from, to, &read_as_wide(from, x))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn built_in_types_convert_as_c_does() {
        assert_eq!(cast_c(Scalar::F32, Scalar::I32, "x"), "(int)(x)");
        assert_eq!(cast_c(Scalar::I64, Scalar::F64, "x"), "(double)(x)");
        assert_eq!(cast_c(Scalar::F32, Scalar::F32, "x"), "x");
    }

    #[test]
    fn sixteen_bit_floats_round_once_from_the_source() {
        for (from, to, want) in [
            (Scalar::F64, Scalar::F16, "__double2half((double)(x))"),
            (Scalar::I64, Scalar::Bf16, "__ll2bfloat16_rn((long long)(x))"),
            (Scalar::U8, Scalar::F16, "__ushort2half_rn((unsigned short)(x))"),
            (
                Scalar::F16,
                Scalar::Bf16,
                "__float2bfloat16_rn((float)(__half2float(x)))",
            ),
            (Scalar::Bf16, Scalar::U32, "(unsigned int)(__bfloat162float(x))"),
        ] {
            assert_eq!(cast_c(from, to, "x"), want, "{from:?} to {to:?}");
        }
    }

    #[test]
    fn complex_conversions_follow_numpy() {
        for (from, to, want) in [
            (
                DType::I32,
                DType::Complex64,
                "gpu_runtime::complex<double>((double)(x))",
            ),
            (
                DType::Complex32,
                DType::Complex64,
                "gpu_runtime::complex<double>(x)",
            ),
            (DType::Complex64, DType::F32, "(float)((x).re)"),
            (
                DType::Complex32,
                DType::Bool,
                "((bool)((x).re != 0 || (x).im != 0))",
            ),
            (DType::Complex32, DType::Complex32, "x"),
        ] {
            assert_eq!(convert_c(from, to, "x"), want, "{from:?} to {to:?}");
        }
        assert_eq!(
            convert_c(DType::F32, DType::I8, "x"),
            cast_c(Scalar::F32, Scalar::I8, "x")
        );
        assert_eq!(
            headers_for([DType::Complex32]),
            "#include <gpu_runtime/complex.h>\n"
        );
    }

    #[test]
    fn headers_name_each_16_bit_type_once() {
        assert_eq!(headers_for([DType::F32, DType::I8]), "");
        assert_eq!(
            headers_for([DType::F16, DType::Bf16, DType::F16]),
            "#include <cuda_fp16.h>\n#include <cuda_bf16.h>\n"
        );
    }
}
