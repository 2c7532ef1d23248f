//! The preprocessing a compile needs: the source wrapped in `extern "C"`. (The headers it
//! includes from the include directories, hashed into the cache key, are found by
//! `gpu_cuda_source::include_scan`, which the `#[kernel]` build-time check uses too.)

/// `source` with its code in `extern "C" { … }`, so that kernels keep their C names. The
/// leading preprocessor lines (includes, defines, comments) stay outside the block: C++ headers
/// such as `cuda_fp16.h` do not compile with C linkage. `#line` keeps the compiler's line
/// numbers those of the source as written.
pub(super) fn wrap_extern_c(name: &str, source: &str) -> String {
    let mut prologue = 0; // bytes of leading preprocessor lines
    let mut lines = 0;
    let mut continued = false;
    for line in source.split_inclusive('\n') {
        let t = line.trim();
        let directive = continued || t.is_empty() || t.starts_with('#') || t.starts_with("//");
        if !directive {
            break;
        }
        continued = t.starts_with('#') && t.ends_with('\\') || continued && t.ends_with('\\');
        prologue += line.len();
        lines += 1;
    }
    let (head, body) = source.split_at(prologue);
    let newline = if head.is_empty() || head.ends_with('\n') {
        ""
    } else {
        "\n"
    };
    format!(
        "#line 1 \"{name}\"\n{head}{newline}extern \"C\" {{\n#line {} \"{name}\"\n{body}\n}}\n",
        lines + 1
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leading_preprocessor_lines_stay_outside_extern_c() {
        let src = "// halves\n#include <cuda_fp16.h>\n#define SCALE(x) \\\n  (2 * (x))\n\n__global__ void k(__half *x) {}\n#include \"late.h\"\n";
        let w = wrap_extern_c("k.cu", src);
        assert_eq!(
            w,
            "#line 1 \"k.cu\"\n// halves\n#include <cuda_fp16.h>\n#define SCALE(x) \\\n  (2 * (x))\n\nextern \"C\" {\n#line 6 \"k.cu\"\n__global__ void k(__half *x) {}\n#include \"late.h\"\n\n}\n"
        );
        // No preprocessor lines: everything is inside, numbered from 1.
        assert_eq!(
            wrap_extern_c("a.cu", "__global__ void k() {}"),
            "#line 1 \"a.cu\"\nextern \"C\" {\n#line 1 \"a.cu\"\n__global__ void k() {}\n}\n"
        );
        // Only preprocessor lines, without a final newline.
        assert_eq!(
            wrap_extern_c("b.cu", "#define A 1"),
            "#line 1 \"b.cu\"\n#define A 1\nextern \"C\" {\n#line 2 \"b.cu\"\n\n}\n"
        );
    }
}
