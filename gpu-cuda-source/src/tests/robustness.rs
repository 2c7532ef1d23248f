//! Real kernels, and inputs that must neither panic nor take more than linear time.

use super::*;

const REAL_KERNELS: &[&str] = &[
    r#"
#include <cuda_fp16.h>
// y = a*x + y
extern "C" __global__ void __launch_bounds__(256)
axpy(const float a, const float* __restrict__ x, float* __restrict__ y, const size_t n)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) { y[i] = a * x[i] + y[i]; }
}
"#,
    r#"
typedef unsigned int uint;
template <typename T, int BLOCK = 128>
__global__ void reduce(const T* in, T* out, uint n) {
    extern __shared__ unsigned char smem_raw[];
    T* smem = reinterpret_cast<T*>(smem_raw);
    for (int s = BLOCK / 2; s > 0; s >>= 1) { if (threadIdx.x < s) smem[threadIdx.x] += smem[threadIdx.x + s]; }
    /* done */ if (threadIdx.x == 0) out[blockIdx.x] = smem[0];
}
__constant__ float weights[16];
extern "C" {
  __global__ void conv(const __half* in, __half* out, int w, int h, const char* name = "x\"y") {}
}
"#,
];

/// Headers for the preprocessor's `#include`s: one that defines macros, one that includes
/// itself, one that includes the other two.
fn fuzz_header(name: &str, _quoted: bool, _from: Option<&str>) -> Option<Header> {
    let text = match name {
        "h.h" => "#pragma once\n#define A(x, ...) __global__ void x(__VA_ARGS__)\n#define B A\n",
        "self.h" => "#include \"self.h\"\nint self_;\n",
        "both.h" => "#include \"h.h\"\n#include \"self.h\"\n#if defined(A) && __CUDA_ARCH__ >= 800\nA(k, int n)\n#endif\n",
        _ => return None,
    };
    Some(Header {
        id: name.to_owned(),
        text: text.to_owned(),
    })
}

fn exercise(src: &str) {
    let _ = find_kernels(src);
    let _ = find_kernel(src, "axpy");
    let _ = find_kernel(src, "k");
    let _ = uses_dynamic_shared_memory(src);
    let _ = find_globals(src);
    // The preprocessor with headers and options, as the macro runs it.
    let pp = Preprocess::from_options(&["-DX=1".to_owned(), "-DF(a)=a##a".to_owned()]).headers(&fuzz_header);
    let d = Declarations::read(src, &pp);
    let _ = d.find_kernels();
    let _ = d.find_kernel("k");
}

#[test]
fn real_kernels_parse() {
    let k = find_kernel(REAL_KERNELS[0], "axpy").unwrap();
    assert!(k.extern_c);
    assert_eq!(k.line, 5);
    assert_eq!(
        k.params.iter().map(|p| p.ty.clone()).collect::<Vec<_>>(),
        vec![
            sc(Scalar::F32),
            ptr(sc(Scalar::F32), true),
            ptr(sc(Scalar::F32), false),
            sc(Scalar::Usize)
        ]
    );
    let ks = find_kernels(REAL_KERNELS[1]).unwrap();
    assert_eq!(ks.len(), 2);
    assert!(ks[0].is_template && !ks[0].extern_c);
    assert_eq!(ks[0].params[2].ty, sc(Scalar::U32));
    assert!(ks[1].extern_c && !ks[1].is_template);
    assert_eq!(ks[1].params[0].ty, ptr(sc(Scalar::F16), true));
    assert_eq!(ks[1].params[4].text, "const char* name = \"x\\\"y\"");
    assert!(uses_dynamic_shared_memory(REAL_KERNELS[1]));
    assert_eq!(find_globals(REAL_KERNELS[1]), vec!["weights"]);
}

#[test]
fn no_panic_on_prefixes() {
    for src in REAL_KERNELS {
        for i in 0..=src.len() {
            if src.is_char_boundary(i) {
                exercise(&src[..i]);
                exercise(&src[i..]);
            }
        }
    }
    let unicode = "__global__ void k(float* é, int ∑) { /* ü */ } // 🦀";
    for i in 0..=unicode.len() {
        if unicode.is_char_boundary(i) {
            exercise(&unicode[..i]);
        }
    }
}

struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

const FUZZ_TOKENS: &[&str] = &[
    "__global__",
    "__device__",
    "__shared__",
    "__constant__",
    "extern",
    "\"C\"",
    "template",
    "typename",
    "typedef",
    "using",
    "struct",
    "void",
    "int",
    "unsigned",
    "long",
    "float",
    "const",
    "__restrict__",
    "__launch_bounds__",
    "__attribute__",
    "namespace",
    "x",
    "y",
    "k",
    "T",
    "size_t",
    "(",
    ")",
    "<",
    ">",
    "[",
    "]",
    "{",
    "}",
    "*",
    "&",
    ",",
    ";",
    "=",
    "::",
    "...",
    "\"",
    "'",
    "/*",
    "*/",
    "//",
    "#",
    "\\",
    "\n",
    " ",
    "0",
    "1.5e-3",
    "R\"(",
    ")\"",
    "é",
    // The preprocessor's.
    "\n#define ",
    "\n#define A(x) ",
    "\n#define B(...) ",
    "\n#if ",
    "\n#ifdef ",
    "\n#ifndef ",
    "\n#elif ",
    "\n#else\n",
    "\n#endif\n",
    "\n#undef ",
    "\n#include \"h.h\"\n",
    "\n#include \"both.h\"\n",
    "\n#include \"self.h\"\n",
    "\n#pragma once\n",
    "defined",
    "##",
    "#",
    "__VA_ARGS__",
    "__VA_OPT__(",
    "__LINE__",
    "__has_include(",
    "A",
    "A(",
    "B(",
    "F(",
    "X",
    "?",
    ":",
    "<<",
    "||",
    "!",
    "0x1",
    "'a'",
];

#[test]
fn no_panic_on_random_token_soup() {
    let mut rng = XorShift(0x9E37_79B9_7F4A_7C15);
    for _ in 0..20_000 {
        let len = rng.below(40);
        let mut src = String::new();
        for _ in 0..len {
            src.push_str(FUZZ_TOKENS[rng.below(FUZZ_TOKENS.len())]);
            if rng.below(3) == 0 {
                src.push(' ');
            }
        }
        exercise(&src);
    }
}

#[test]
fn no_panic_on_random_bytes() {
    let mut rng = XorShift(12345);
    for _ in 0..5_000 {
        let len = rng.below(64);
        let bytes: Vec<u8> = (0..len).map(|_| (rng.below(95) + 32) as u8).collect();
        let src = String::from_utf8(bytes).unwrap_or_default();
        exercise(&src);
    }
}

/// Panics if `exercise` on `make(n)` is both slow (over 5 s, a quadratic scan of these inputs
/// takes minutes) and more than linear: over 24 times its time on `make(n / 8)`, where linear
/// work takes 8 and quadratic 64. The ratio keeps a loaded machine (the whole suite on two cores)
/// from failing a linear parser; the absolute bound alone did (5.5 s once).
fn assert_linear(what: &str, make: impl Fn(usize) -> String, n: usize) {
    let time = |src: &str| {
        let start = std::time::Instant::now();
        exercise(src);
        start.elapsed().as_secs_f64()
    };
    let big = time(&make(n));
    if big < 5.0 {
        return;
    }
    let small = time(&make(n / 8));
    assert!(
        big < 24.0 * small + 0.25,
        "{what}: {big:.2} s for {n} repetitions, {small:.2} s for {}",
        n / 8
    );
}

#[test]
fn linear_time_on_big_inputs() {
    let kernels = |count: usize| {
        (0..count)
            .map(|n| format!("typedef float real{n};\n__global__ void k{n}(const real{n}* __restrict__ x, float* y, int n) {{ y[0] = x[0]; }}\n"))
            .collect::<String>()
    };
    // About 1 MB of source.
    let n = 9_000;
    let big = kernels(n);
    let ks = find_kernels(&big).unwrap();
    assert_eq!(ks.len(), n);
    assert_eq!(ks[n - 1].line, 2 * n);
    assert_linear("many kernels", kernels, n);
    assert_linear(
        "not found in many kernels",
        |count| kernels(count).replace("k1(", "k1x("),
        n,
    );

    let patterns = [
        "__global__ ",
        "__global__ void f(",
        "(",
        "[[",
        "template <",
        "typedef struct { ",
        "typedef ",
        "__device__ ",
        "__device__ int x = (",
        "__device__ x[",
        "__device__ __align__(",
        "__constant__ int a = {",
        "__global__ void f(int a[",
        "__global__ void f(Foo<",
        "typedef int a[",
        "extern __shared__ ",
        "__shared__ ",
        "{",
        "}",
        "extern \"C\" { ",
        "__global__ void f(int x) {} ",
        "__global__ void f(float* x); ",
        "__global__ void f<",
        "__global__ void __launch_bounds__(",
        "__global__ void f(int a = x < y < z, ",
        "/",
        "\"",
        "'",
        // The preprocessor's: directives by the thousand, expansions that grow, nest or recurse.
        "#define A(x) A(x x)\nA(",
        "#define B B B\nB ",
        "\n#if 1\n",
        "\n#if 0\n",
        "\n#ifdef X\n#else\n",
        "\n#endif\n",
        "\n#include \"both.h\"\n",
        "\n#include \"self.h\"\n",
        "#define F(a, ...) F(a, __VA_ARGS__, a) F(",
        "#define S(x) #x\n#define T(x) S(x) S(x)\nT(T(",
        "#define P(a, b) a ## b\nP(P(",
        "\n#if (((((((((",
        "\n#define A(",
        "A(",
    ];
    for p in patterns {
        // 300 KB each keeps the unoptimized test quick; a quadratic scan
        // would still take minutes.
        assert_linear(p, |count| p.repeat(count), 300_000 / p.len());
    }
}

#[test]
fn crlf_and_multiline_signatures() {
    let src = "#define A \\\r\n  __global__ void hidden(int)\r\n\r\n__global__ void\r\nk(\r\n  float* x,\r\n  int n)\r\n{\r\n}\r\n";
    let ks = find_kernels(src).unwrap();
    assert_eq!(ks.len(), 1);
    assert_eq!(ks[0].line, 5);
    assert_eq!(ks[0].params[1].text, "int n");
}

#[test]
fn scalar_c_names() {
    for s in Scalar::ALL {
        let src = format!("__global__ void k({} v) {{}}", s.c_name());
        assert_eq!(find_kernel(&src, "k").unwrap().params[0].ty, sc(s), "{s:?}");
    }
}

/// Found by the fuzzer (fuzz/): a line splice inside a string literal in a parameter list put a
/// newline into the error message. Every rejection must be one line, with a line number inside
/// the source.
#[test]
fn fuzz_regression_messages_stay_on_one_line() {
    for src in [
        "__global__ void k(float *x, \"a\\\nb\" int n) {}",
        "__global__ void k(R\"(a\nb)\" x) {}",
        "__global__ void vy(#\\\nol`fs{)\") {}",
    ] {
        let lines = src.split('\n').count();
        let e = crate::find_kernels(src).unwrap_err();
        let msg = e.to_string();
        assert!(!msg.contains('\n'), "{msg:?}");
        if let DeclError::Syntax { line, .. } | DeclError::UnsupportedParam { line, .. } = e {
            assert!((1..=lines).contains(&line), "{msg}");
        }
    }
}

#[test]
fn global_decls_with_types_and_bounds() {
    let src = r#"
        typedef float real;
        __constant__ float coeffs[16];
        __device__ int counter = 0;
        static __constant__ real table[4][8];
        __constant__ Params params;
        __device__ unsigned long long total;
        __device__ float helper(float x) { return x; }
        __constant__ float bad[N];
        __global__ void k(float *x) { x[0] = coeffs[0]; }
    "#;
    let g = find_global_decls(src);
    let names: Vec<&str> = g.iter().map(|g| g.name.as_str()).collect();
    // `bad[N]` is listed, its bound unresolved (N is defined nowhere in the source).
    assert_eq!(names, ["coeffs", "counter", "table", "params", "total", "bad"]);
    assert_eq!(g[5].unresolved_dim.as_deref(), Some("N"));
    assert!(g[5].dims.is_empty());
    assert!(g[..5].iter().all(|g| g.unresolved_dim.is_none()));
    assert_eq!(g[0].ty, CType::Scalar(Scalar::F32));
    assert_eq!(g[0].dims, [16]);
    assert_eq!(g[0].space, MemorySpace::Constant);
    assert_eq!(g[1].ty, CType::Scalar(Scalar::I32));
    assert!(g[1].dims.is_empty());
    assert_eq!(g[1].space, MemorySpace::Device);
    assert_eq!(g[2].ty, CType::Scalar(Scalar::F32));
    assert_eq!(g[2].dims, [4, 8]);
    assert_eq!(g[3].ty, CType::Named("Params".into()));
    assert_eq!(g[4].ty, CType::Scalar(Scalar::U64));
    assert_eq!(g[0].line, 3);
}

#[test]
fn global_bounds_may_use_the_sources_constants() {
    let src = "#define RADIUS 4\nconstexpr int W = 8;\n__constant__ float taps[2 * RADIUS + 1];\n__device__ int grid[W][W / 2];\n__device__ int bad[0];";
    let g = find_global_decls(src);
    assert_eq!(g[0].dims, [9]);
    assert_eq!(g[1].dims, [8, 4]);
    assert_eq!(
        g[2].unresolved_dim.as_deref(),
        Some("0"),
        "a zero bound is not a usable array"
    );
}

#[test]
fn global_decls_never_fail_on_garbage() {
    assert!(find_global_decls("").is_empty());
    assert!(find_global_decls("__constant__").is_empty());
    assert!(find_global_decls("__device__ float x[").is_empty());
    let _ = find_global_decls("__constant__ __constant__ ( [ = ; __device__ }}} <<<");
}
