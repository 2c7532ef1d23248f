//! The preprocessor on its own: macro expansion as the C standard's examples spell it,
//! conditionals, includes, and inputs that must neither panic nor take more than linear time.

use std::collections::HashMap;

use super::config::Header;
use super::*;

/// The preprocessed text, tokens joined by one space.
fn pp_with(src: &str, cfg: &Preprocess<'_>) -> String {
    let e = expand(src, cfg);
    e.toks().iter().map(|t| t.text).collect::<Vec<_>>().join(" ")
}

fn pp(src: &str) -> String {
    pp_with(src, &Preprocess::new())
}

#[test]
fn object_and_function_like_macros() {
    assert_eq!(pp("#define N 16\nint a[N];"), "int a [ 16 ] ;");
    assert_eq!(
        pp("#define SQ(x) ((x) * (x))\nSQ(a + 1)"),
        "( ( a + 1 ) * ( a + 1 ) )"
    );
    // A function-like macro's name without `(` is a name.
    assert_eq!(pp("#define F(x) x\nF + F (1)"), "F + 1");
    // `(` after a space in the definition makes an object-like macro.
    assert_eq!(pp("#define G (x) x\nG"), "( x ) x");
    assert_eq!(pp("#define E() 7\nE()"), "7");
    assert_eq!(pp("#define A a\n#undef A\nA"), "A");
}

#[test]
fn stringify_paste_and_varargs() {
    assert_eq!(pp("#define S(x) #x\nS(a  +  \"b\\n\")"), r#""a + \"b\\n\"""#);
    assert_eq!(
        pp("#define CAT(a, b) a ## b\nCAT(u, exp_f32) CAT(, x) CAT(y, )"),
        "uexp_f32 x y"
    );
    assert_eq!(pp("#define CAT(a, b) a ## b\nCAT(1, 2) CAT(<, <)"), "12 < <");
    assert_eq!(
        pp("#define V(fmt, ...) f(fmt, __VA_ARGS__)\nV(a, b, c) V(a)"),
        "f ( a , b , c ) f ( a , )"
    );
    assert_eq!(
        pp("#define G(fmt, ...) f(fmt, ## __VA_ARGS__)\nG(a) G(a, b)"),
        "f ( a ) f ( a , b )"
    );
    assert_eq!(
        pp("#define O(a, ...) f(a __VA_OPT__(,) __VA_ARGS__)\nO(1) O(1, 2)"),
        "f ( 1 ) f ( 1 , 2 )"
    );
    assert_eq!(pp("#define N(args...) g(args)\nN(1, 2)"), "g ( 1 , 2 )");
}

#[test]
fn the_standards_examples_of_rescanning() {
    // C11 6.10.3.5, example 3 (the parts without #x of a string).
    let defs = "#define x 3\n#define f(a) f(x * (a))\n#undef x\n#define x 2\n#define g f\n\
                #define z z[0]\n#define h g(~\n#define m(a) a(w)\n#define w 0,1\n\
                #define t(a) a\n#define p() int\n#define q(x) x\n#define r(x,y) x ## y\n";
    assert_eq!(
        pp(&format!("{defs}f(y+1) + f(f(z)) % t(t(g)(0) + t)(1);")),
        "f ( 2 * ( y + 1 ) ) + f ( 2 * ( f ( 2 * ( z [ 0 ] ) ) ) ) % f ( 2 * ( 0 ) ) + t ( 1 ) ;"
    );
    assert_eq!(
        pp(&format!("{defs}g(x+(3,4)-w) | h 5) & m\n(f)^m(m);")),
        "f ( 2 * ( 2 + ( 3 , 4 ) - 0 , 1 ) ) | f ( 2 * ( ~ 5 ) ) & f ( 2 * ( 0 , 1 ) ) ^ m ( 0 , 1 ) ;"
    );
    assert_eq!(
        pp(&format!(
            "{defs}p() i[q()] = {{ q(1), r(2,3), r(4,), r(,5), r(,) }};"
        )),
        "int i [ ] = { 1 , 23 , 4 , 5 , } ;"
    );
    // A macro does not expand inside itself, however reached.
    assert_eq!(pp("#define A A B\n#define B A\nA"), "A A");
    assert_eq!(pp("#define f(x) g(x)\n#define g(x) f(x)\nf(1)"), "f ( 1 )");
}

#[test]
fn conditionals() {
    let src = "#if 0\nno\n#elif defined(X) || defined Y\nxy\n#elif __CUDA_ARCH__ >= 800 && !defined(__NOPE__)\nnew\n#else\nold\n#endif\nend";
    assert_eq!(pp(src), "new end");
    assert_eq!(pp_with(src, &Preprocess::new().cuda_arch(750)), "old end");
    assert_eq!(pp_with(src, &Preprocess::new().define("Y")), "xy end");
    let nested = "#ifdef A\n#if 1\na\n#else\nb\n#endif\n#else\n#ifndef B\nc\n#endif\n#endif";
    assert_eq!(pp(nested), "c");
    assert_eq!(pp_with(nested, &Preprocess::new().define("A")), "a");
    // The macros NVRTC defines.
    assert_eq!(
        pp("#if defined(__CUDACC__) && defined(__CUDACC_RTC__) && __cplusplus >= 201703L\nyes\n#endif"),
        "yes"
    );
    assert_eq!(
        pp("#ifdef __NVCC__\nnvcc\n#endif\n#ifndef __CUDA_ARCH__\nhost\n#endif\ndevice"),
        "device"
    );
    // Unbalanced directives are survived.
    assert_eq!(pp("#endif\n#else\na\n#if 1\nb"), "a b");
    assert_eq!(pp("#if 1 +\na\n#endif\nb"), "b");
}

#[test]
fn options_define_undefine_and_pick_the_architecture() {
    let opts: Vec<String> = [
        "-DSCALE=2",
        "--define-macro=F(x)=x*x",
        "-U",
        "__CUDACC__",
        "-arch=sm_80",
        "-std=c++20",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let cfg = Preprocess::from_options(&opts);
    assert_eq!(cfg.arch(), 800);
    assert_eq!(
        pp_with(
            "SCALE F(3) __CUDA_ARCH__ __cplusplus\n#ifdef __CUDACC__\nx\n#endif",
            &cfg
        ),
        "2 3 * 3 800 202002L"
    );
    assert_eq!(
        Preprocess::from_options(&["--gpu-architecture=compute_90a".into()]).arch(),
        900
    );
    assert_eq!(
        Preprocess::from_options(&["-arch".into(), "sm_100f".into()]).arch(),
        1000
    );
    assert_eq!(
        Preprocess::from_options(&["-arch=native".into()]).arch(),
        DEFAULT_CUDA_ARCH
    );
}

#[test]
fn includes_come_from_the_header_source() {
    let files: HashMap<&str, &str> = [
        (
            "common.h",
            "#pragma once\n#include \"defs.h\"\n#define K(n) __global__ void n(REAL *x)\n",
        ),
        (
            "defs.h",
            "#ifndef DEFS\n#define DEFS\ntypedef float REAL_T;\n#define REAL REAL_T\n#endif\n",
        ),
        ("loop.h", "#include \"loop.h\"\nloop\n"),
    ]
    .into_iter()
    .collect();
    let find = |name: &str, _quoted: bool, _from: Option<&str>| {
        files.get(name).map(|t| Header {
            id: name.to_owned(),
            text: t.to_string(),
        })
    };
    let cfg = Preprocess::new().headers(&find);
    let src = "#include \"common.h\"\n#include \"common.h\"\n#include <defs.h>\nK(k1)\n#include \"missing.h\"\n#include <cuda_fp16.h>";
    let e = expand(src, &cfg);
    let text: Vec<&str> = e.toks().iter().map(|t| t.text).collect();
    assert_eq!(
        text.join(" "),
        "typedef float REAL_T ; __global__ void k1 ( REAL_T * x )"
    );
    // The header's tokens are on its #include's line; the expansion's on the macro's.
    assert_eq!(e.toks()[0].line, 1);
    assert_eq!(e.toks().last().map(|t| t.line), Some(4));
    assert_eq!(e.report.unopened, ["missing.h"]);
    assert_eq!(e.report.kernel_macros, ["K"]);
    // A line splice in a header's name is gone before the name is read (found by the fuzzer:
    // the name, with its newline, went into a message).
    let e = expand("#include \"mis\\\nsing.h\"\n#include \"a\nb.h\"\n", &cfg);
    assert_eq!(e.report.unopened, ["missing.h"]);
    // A header including itself stops at the depth limit.
    let e = expand("#include \"loop.h\"\n", &cfg);
    assert!(e.toks().iter().all(|t| t.text == "loop"));
    assert!(pp_with("#if __has_include(\"defs.h\") && __has_include(<cuda_bf16.h>) && !__has_include(<nope.h>)\nyes\n#endif", &cfg) == "yes");
}

#[test]
fn builtins_and_odd_directives() {
    assert_eq!(pp("\n\n__LINE__ __COUNTER__ __COUNTER__"), "3 0 1");
    assert_eq!(pp("#define L __LINE__\nL\nL"), "2 3");
    assert_eq!(
        pp("#pragma unroll\n#error no\n#warning w\n#line 7\n# \n#whatever\nx"),
        "x"
    );
    assert_eq!(
        pp("#if __has_builtin(__builtin_expect) || __has_attribute(x)\nno\n#else\nyes\n#endif"),
        "yes"
    );
    // A directive inside a macro's arguments is read, as GCC reads it.
    assert_eq!(
        pp("#define F(a, b) a b\nF(1,\n#ifdef X\n2\n#else\n3\n#endif\n)"),
        "1 3"
    );
    // A call never closed is left as written.
    assert_eq!(pp("#define F(a) a\nF(1, (2"), "F ( 1 , ( 2");
    // The wrong number of arguments is left as written.
    assert_eq!(pp("#define F(a, b) a b\nF(1)"), "F ( 1 )");
}

#[test]
fn lines_of_the_output_are_those_of_the_source() {
    let e = expand(
        "#define A \\\n  1\nx\n/* c\n */ y A\n#if 0\nz\n#endif\nw",
        &Preprocess::new(),
    );
    let lines: Vec<(&str, usize)> = e.toks().iter().map(|t| (t.text, t.line)).collect();
    assert_eq!(lines, [("x", 3), ("y", 5), ("1", 5), ("w", 9)]);
    assert!(e.report.left_out.contains_key("z"));
}

/// Inputs that grow under expansion exponentially, or nest without end: each ends within the
/// budget (the caller then reads the source as written).
#[test]
fn blowups_end_quickly() {
    let mut exp = String::new();
    for i in 0..40 {
        exp.push_str(&format!("#define A{i} A{} A{}\n", i + 1, i + 1));
    }
    exp.push_str("A0\n");
    let start = std::time::Instant::now();
    let e = expand(&exp, &Preprocess::new());
    assert!(e.report.over_budget);
    let nested = format!("#define F(x) x\n{}1{}", "F(".repeat(20_000), ")".repeat(20_000));
    let _ = expand(&nested, &Preprocess::new());
    let chain: String = (0..20_000)
        .map(|i| format!("#define M{i} M{}\n", i + 1))
        .collect::<String>()
        + "M0";
    let _ = expand(&chain, &Preprocess::new());
    let pastes = format!("#define P(a,b) a##b\n{}", "P(P(P(x,y),z),w) ".repeat(20_000));
    let _ = expand(&pastes, &Preprocess::new());
    let strs = format!(
        "#define S(a) #a\n#define T(a) S(a) S(a)\n{}",
        "T(T(T(T(x))))".repeat(2_000)
    );
    let _ = expand(&strs, &Preprocess::new());
    let ifs = "#if 1\n".repeat(50_000) + &"#endif\n".repeat(50_000);
    let _ = expand(&ifs, &Preprocess::new());
    let skipped = "#if 0\n".to_owned() + &"#if 1\n".repeat(50_000) + "x\n";
    let _ = expand(&skipped, &Preprocess::new());
    assert!(start.elapsed().as_secs_f64() < 20.0, "{:?}", start.elapsed());
}
