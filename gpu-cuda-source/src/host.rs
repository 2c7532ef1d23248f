//! Type names a kernel written for nvcc uses without declaring them: the typedefs nvcc's host
//! headers bring into every translation unit, which NVRTC lacks, and the vector typedefs of the
//! CUDA headers. One table gives both the type a parameter of that name has and the NVRTC
//! prelude that declares the names, so that the two cannot disagree.

use crate::types::Scalar;

macro_rules! host_typedefs {
    ($($name:literal = $c:literal => $scalar:ident,)*) => {
        /// The typedefs of the [`NVRTC_PRELUDE`]: `(name, C type, scalar)`, e.g.
        /// `("uint", "unsigned int", Scalar::U32)`. A kernel parameter of one of these types
        /// is that scalar, with or without the prelude.
        pub const HOST_TYPEDEFS: &[(&str, &str, Scalar)] = &[$(($name, $c, Scalar::$scalar),)*];

        /// A header of device code that declares what nvcc's host headers declare for every
        /// kernel and NVRTC does not: glibc's `<sys/types.h>` integer names (`uint`, `ushort`,
        /// `ulong`, `u_int`, `u_char`, `u_int32_t`, ...), with the types glibc gives them on
        /// LP64 Linux (`ulong` is `unsigned long`). Only typedefs: declaring one of them again
        /// with the same type is valid C++, so a source that has its own
        /// `typedef unsigned int uint;` compiles with or without it. `uchar` is not among
        /// them, as glibc does not declare it either.
        ///
        /// Then the names nvcc's implicit `cuda_runtime.h` gives every kernel through the C and
        /// C++ headers it includes: the built-in `<gpu_runtime/nvcc_implicit.h>` includes the
        /// built-in `<stdio.h>`, `<stdlib.h>`, `<string.h>`, `<math.h>`, `<cmath>`,
        /// `<limits.h>`, `<float.h>` and `<algorithm>` (`FILE`, `INT_MAX`, `FLT_MAX`,
        /// `INFINITY`, `M_PI`, `std::min`, `std::max`, ...), so that a kernel file written for
        /// nvcc that uses them without including anything compiles unchanged.
        pub const NVRTC_PRELUDE: &str = concat!(
            "// gpu_runtime_prelude.h: the typedefs nvcc's host headers (glibc <sys/types.h>)\n",
            "// give every kernel, for NVRTC, and the names of the C and C++ headers nvcc's\n",
            "// implicit cuda_runtime.h includes. Off with SourceModule::prelude(false) or\n",
            "// #[kernel(..., prelude = false)].\n",
            "#pragma once\n",
            $("typedef ", $c, " ", $name, ";\n",)*
            "#include <gpu_runtime/nvcc_implicit.h>\n",
        );
    };
}

host_typedefs! {
    "u_char" = "unsigned char" => U8,
    "u_short" = "unsigned short" => U16,
    "u_int" = "unsigned int" => U32,
    "u_long" = "unsigned long" => U64,
    "quad_t" = "long" => I64,
    "u_quad_t" = "unsigned long" => U64,
    "u_int8_t" = "unsigned char" => U8,
    "u_int16_t" = "unsigned short" => U16,
    "u_int32_t" = "unsigned int" => U32,
    "u_int64_t" = "unsigned long" => U64,
    "ushort" = "unsigned short" => U16,
    "uint" = "unsigned int" => U32,
    "ulong" = "unsigned long" => U64,
    "ssize_t" = "long" => Isize,
    "register_t" = "long" => I64,
}

/// The include name NVRTC knows the [`NVRTC_PRELUDE`] by: errors in a kernel that declares one of its
/// names differently cite it ("declared at line 9 of gpu_runtime_prelude.h").
pub const NVRTC_PRELUDE_NAME: &str = "gpu_runtime_prelude.h";

/// The scalar behind a name of [`HOST_TYPEDEFS`].
pub(crate) fn host_typedef(name: &str) -> Option<Scalar> {
    HOST_TYPEDEFS
        .iter()
        .find(|(n, _, _)| *n == name)
        .map(|(_, _, s)| *s)
}

/// The CUDA vector type behind a typedef of the CUDA headers: `cuFloatComplex` (and
/// `cuComplex`) is `float2`, `cuDoubleComplex` is `double2` (`cuComplex.h`).
pub(crate) fn vector_typedef(name: &str) -> Option<&'static str> {
    match name {
        "cuFloatComplex" | "cuComplex" => Some("float2"),
        "cuDoubleComplex" => Some("double2"),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::find_kernel;
    use crate::types::CType;

    /// The prelude's C spellings are what the table says: each name, declared by the prelude
    /// itself, parses to the table's scalar (and is one line of the prelude).
    #[test]
    fn the_prelude_declares_each_name_with_the_table_type() {
        for (name, c, scalar) in HOST_TYPEDEFS {
            assert!(
                NVRTC_PRELUDE.contains(&format!("\ntypedef {c} {name};\n")),
                "{name}"
            );
            let spelled = format!("__global__ void k({c} x) {{}}");
            let k = find_kernel(&spelled, "k").unwrap();
            // `ssize_t` is `isize` on the Rust side, as everywhere in this crate; in C it is a
            // `long`.
            let want = if *scalar == Scalar::Isize {
                Scalar::I64
            } else {
                *scalar
            };
            assert_eq!(k.params[0].ty, CType::Scalar(want), "{c}");
        }
        assert_eq!(
            NVRTC_PRELUDE
                .lines()
                .filter(|l| l.starts_with("typedef "))
                .count(),
            HOST_TYPEDEFS.len()
        );
        // glibc declares no `uchar`: it stays a name the source must declare.
        assert!(host_typedef("uchar").is_none());
        assert!(!NVRTC_PRELUDE.contains(" uchar;"));
    }
}
