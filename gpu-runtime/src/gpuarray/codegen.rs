//! Pieces of CUDA C that every generated kernel shares: the parameter lists (an array is a
//! pointer and the offset of its first element; a strided one also its strides), the index
//! arithmetic of strided views, the references an operation reads and writes elements
//! through, and the aligned vector type of the contiguous fast path.

use std::fmt::Write as _;

use crate::gpuarray::kernel_args::Param;

/// An aligned chunk of four elements, loaded and stored as one (or two) 128-bit accesses.
pub(crate) const VEC4: &str =
    "template <typename T> struct alignas(4 * sizeof(T) < 16 ? 4 * sizeof(T) : 16) gpu_vec4 { T v[4]; };\n";

/// The alignment `gpu_vec4<T>` needs, in bytes.
pub(crate) fn vec4_align(elem_size: usize) -> u64 {
    (4 * elem_size).min(16) as u64
}

/// True when `name` is a C identifier.
pub(crate) fn is_ident(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// The C type of a parameter's elements.
pub(crate) fn c_type(p: &Param) -> &'static str {
    p.scalar.c_name()
}

/// The user's parameters as kernel parameters: scalars by value, arrays as a `__restrict__`
/// pointer to the storage and the offset of the first element.
pub(crate) fn params_c(params: &[Param]) -> String {
    let mut out = String::new();
    for p in params {
        let t = c_type(p);
        if p.array {
            let konst = if p.mutable { "" } else { "const " };
            let _ = write!(
                out,
                ", {konst}{t} *__restrict__ {n}__p, long long {n}__o",
                n = p.name
            );
        } else {
            let _ = write!(out, ", {t} {}", p.name);
        }
    }
    out
}

/// The shape and every array's strides, for a strided kernel over `ndim` axes.
pub(crate) fn strides_c(params: &[Param], ndim: usize) -> String {
    let mut out = String::new();
    for k in 0..ndim {
        let _ = write!(out, ", long long gpu_d{k}");
    }
    for p in params.iter().filter(|p| p.array) {
        for k in 0..ndim {
            let _ = write!(out, ", long long {}__s{k}", p.name);
        }
    }
    out
}

/// Code that sets `long long NAME__i` for each array to the storage index of the element with
/// C-order flat index `flat` (a `long long` expression), over `ndim` axes.
pub(crate) fn strided_index(params: &[Param], ndim: usize, flat: &str) -> String {
    let arrays: Vec<&Param> = params.iter().filter(|p| p.array).collect();
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
pub(crate) fn bind_refs(params: &[Param], index: impl Fn(&Param) -> String) -> String {
    let mut out = String::new();
    for p in params.iter().filter(|p| p.array) {
        let konst = if p.mutable { "" } else { "const " };
        let _ = write!(out, "{konst}{} &{} = {};", c_type(p), p.name, index(p));
    }
    out
}

/// Whether the C text `code` names the identifier `name` anywhere (as a whole word; a member
/// such as `a.i` counts too, which errs on the safe side).
pub(crate) fn mentions(code: &str, name: &str) -> bool {
    let bytes = code.as_bytes();
    let is_id = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let mut from = 0;
    while let Some(pos) = code[from..].find(name) {
        let (start, end) = (from + pos, from + pos + name.len());
        from = end;
        let before_ok = start == 0 || !is_id(bytes[start - 1]);
        let after_ok = end == bytes.len() || !is_id(bytes[end]);
        // `1e5` or `0x1f`: not an identifier when the word starts with a digit.
        let word_start = code[..start]
            .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .map_or(0, |k| k + 1);
        let in_number = bytes.get(word_start).is_some_and(|b| b.is_ascii_digit());
        if before_ok && after_ok && !in_number {
            return true;
        }
    }
    false
}

/// True when `op` may read `name`, or may leave it unwritten: then the contiguous fast path
/// loads that output before running `op` (it stores the whole chunk back). Only an operation
/// whose first statement is `name = ...`, and that uses `name` nowhere else but in such plain
/// assignments, is known to write it without reading it.
pub(crate) fn may_read(op: &str, name: &str) -> bool {
    let first = op.trim_start();
    let unconditional = first.strip_prefix(name).is_some_and(|rest| {
        let rest = rest.trim_start();
        rest.starts_with('=') && !rest.starts_with("==")
    });
    if !unconditional {
        return true;
    }
    let bytes = op.as_bytes();
    let is_id = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let mut from = 0;
    while let Some(pos) = op[from..].find(name) {
        let start = from + pos;
        let end = start + name.len();
        from = end;
        if (start > 0 && is_id(bytes[start - 1])) || (end < bytes.len() && is_id(bytes[end])) {
            continue;
        }
        let before = op[..start].trim_end();
        let after = op[end..].trim_start();
        let statement_start = before.is_empty() || before.ends_with([';', '{', '}', ')']);
        let plain_assign = after.starts_with('=') && !after.starts_with("==");
        if !(statement_start && plain_assign) {
            return true;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    #[test]
    fn mentions_finds_whole_identifiers_only() {
        assert!(super::mentions("z = x * i", "i"));
        assert!(super::mentions("z = x[i]+1", "i"));
        assert!(
            super::mentions("z = a.i", "i"),
            "a member counts, erring on the safe side"
        );
        assert!(!super::mentions("z = idx + xi + i_2", "i"));
        assert!(!super::mentions("z = 1e5 * x + 0xi", "i"));
        assert!(!super::mentions("z = sin(x)", "i"));
    }

    use super::*;

    #[test]
    fn reads_are_found() {
        assert!(!may_read("z = a * x + y", "z"));
        assert!(may_read("z += x", "z"));
        assert!(may_read("z = z * 2", "z"));
        assert!(may_read("w = z", "z"));
        // A conditional write keeps the old value where it does not write.
        assert!(may_read("if (x > 0) z = 1;", "z"));
        assert!(!may_read("z = 1; if (x > 0) z = 2;", "z"));
        assert!(may_read("z == 1", "z"));
        // Not written at all: the old value stays.
        assert!(may_read("zz = 1", "z"));
        assert!(!may_read("z = zz", "z"));
        assert!(is_ident("x_1") && !is_ident("1x") && !is_ident("a-b") && !is_ident(""));
    }
}
