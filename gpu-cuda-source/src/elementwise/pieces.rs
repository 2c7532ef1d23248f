//! Pieces of CUDA C that every generated array kernel shares (elementwise kernels, and the
//! run time's reductions): the parameter lists (an array is a pointer and the offset of its
//! first element; a strided one also its strides), the index arithmetic of strided views, the
//! references an operation reads and writes elements through, and the aligned vector type of
//! the contiguous fast path.

use std::fmt::Write as _;

use crate::elementwise::param::{Param, Role};

/// An aligned chunk of four elements, loaded and stored as one (or two) 128-bit accesses.
/// Aligned to four times the largest power of two dividing the element's size, at most 16:
/// the chunk's size stays four elements (12 bytes of `char3` aligned to 4, not padded to 16),
/// and the alignment a power of two, for elements of any size (CUDA's three-lane vector types).
pub const VEC4: &str = "template <typename T> struct alignas(4 * (sizeof(T) & (0 - sizeof(T))) < 16 ? \
     4 * (sizeof(T) & (0 - sizeof(T))) : 16) gpu_vec4 { T v[4]; };\n";

/// The alignment `gpu_vec4<T>` needs, in bytes, for elements of `elem_size` bytes.
pub fn vec4_align(elem_size: usize) -> u64 {
    // The largest power of two dividing the size, as `VEC4` computes it in C.
    let low_bit = elem_size & elem_size.wrapping_neg();
    (4 * low_bit).min(16) as u64
}

/// The user's parameters as kernel parameters: scalars by value, arrays as a `__restrict__`
/// pointer to the storage and the offset of the first element.
pub fn params_c(params: &[Param<'_>]) -> String {
    let mut out = String::new();
    for p in params {
        let t = p.c_type;
        match p.role {
            Role::Scalar => {
                let _ = write!(out, ", {t} {}", p.name);
            }
            Role::Input | Role::Output => {
                let _ = write!(
                    out,
                    ", {konst}{t} *__restrict__ {n}__p, long long {n}__o",
                    konst = konst(p),
                    n = p.name
                );
            }
        }
    }
    out
}

/// The shape and every array's strides, for a strided kernel over `ndim` axes.
pub fn strides_c(params: &[Param<'_>], ndim: usize) -> String {
    let mut out = String::new();
    for k in 0..ndim {
        let _ = write!(out, ", long long gpu_d{k}");
    }
    for p in params.iter().filter(|p| p.is_array()) {
        for k in 0..ndim {
            let _ = write!(out, ", long long {}__s{k}", p.name);
        }
    }
    out
}

/// Code that sets `long long NAME__i` for each array to the storage index of the element with
/// C-order flat index `flat` (a `long long` expression), over `ndim` axes.
pub fn strided_index(params: &[Param<'_>], ndim: usize, flat: &str) -> String {
    let arrays: Vec<&Param<'_>> = params.iter().filter(|p| p.is_array()).collect();
    let mut out = String::new();
    let _ = write!(out, "long long gpu_r = {flat};");
    for p in &arrays {
        let _ = write!(out, " long long {n}__i = {n}__o;", n = p.name);
    }
    for k in (0..ndim).rev() {
        if k == 0 {
            out.push_str(" { long long gpu_c = gpu_r;");
        } else {
            let _ = write!(out, " {{ long long gpu_c = gpu_r % gpu_d{k}; gpu_r /= gpu_d{k};");
        }
        for p in &arrays {
            let _ = write!(out, " {n}__i += gpu_c * {n}__s{k};", n = p.name);
        }
        out.push_str(" }");
    }
    out.push('\n');
    out
}

/// References named as the arrays, bound to element `index(param)` of each: what the
/// operation reads and writes. Read-only arrays are `const`.
pub fn bind_refs(params: &[Param<'_>], index: impl Fn(&Param<'_>) -> String) -> String {
    let mut out = String::new();
    for p in params.iter().filter(|p| p.is_array()) {
        let _ = write!(out, "{}{} &{} = {};", konst(p), p.c_type, p.name, index(p));
    }
    out
}

/// `const ` for what the kernel only reads.
fn konst(p: &Param<'_>) -> &'static str {
    if p.role == Role::Output {
        ""
    } else {
        "const "
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PARAMS: [Param<'static>; 3] = [
        Param::new("a", "float", Role::Scalar),
        Param::new("x", "const_t", Role::Input),
        Param::new("z", "double", Role::Output),
    ];

    #[test]
    fn parameters_are_pointers_and_offsets() {
        assert_eq!(
            params_c(&PARAMS),
            ", float a, const const_t *__restrict__ x__p, long long x__o, double *__restrict__ z__p, long long z__o"
        );
        assert_eq!(
            strides_c(&PARAMS, 2),
            ", long long gpu_d0, long long gpu_d1, long long x__s0, long long x__s1, long long z__s0, long long z__s1"
        );
        assert_eq!(
            bind_refs(&PARAMS, |p| format!("{}__p[i]", p.name)),
            "const const_t &x = x__p[i];double &z = z__p[i];"
        );
        assert_eq!((vec4_align(1), vec4_align(4), vec4_align(8)), (4, 16, 16));
        // Three-lane vector types: a chunk of four is never padded (`char3`: 12 bytes, aligned
        // to 4; `short3`: 24, aligned to 8; `float3`: 48, aligned to 16).
        assert_eq!(
            (vec4_align(3), vec4_align(6), vec4_align(12), vec4_align(24)),
            (4, 8, 16, 16)
        );
    }

    #[test]
    fn strided_index_walks_axes_last_first() {
        assert_eq!(
            strided_index(&PARAMS[..2], 2, "i"),
            "long long gpu_r = i; long long x__i = x__o; \
             { long long gpu_c = gpu_r % gpu_d1; gpu_r /= gpu_d1; x__i += gpu_c * x__s1; } \
             { long long gpu_c = gpu_r; x__i += gpu_c * x__s0; }\n"
        );
    }
}
