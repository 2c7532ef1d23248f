//! Declarations: spellings, qualifiers, aliases, templates, and what is found where.

use crate::*;

fn sc(s: Scalar) -> CType {
    CType::Scalar(s)
}

fn ptr(t: CType, c: bool) -> CType {
    CType::pointer(t, c)
}

fn named(n: &str) -> CType {
    CType::Named(n.to_string())
}

/// The type of the single parameter of `k` in `__global__ void k(<param>)`.
fn param_ty(param: &str) -> CType {
    let src = format!("__global__ void k({param}) {{}}");
    let k = find_kernel(&src, "k").unwrap_or_else(|e| panic!("{param}: {e}"));
    assert_eq!(k.params.len(), 1, "{param}");
    k.params[0].ty.clone()
}

fn param_err(param: &str) -> DeclError {
    let src = format!("__global__ void k({param}) {{}}");
    find_kernel(&src, "k").expect_err(param)
}

fn reason(param: &str) -> String {
    match param_err(param) {
        DeclError::UnsupportedParam { reason, .. } => reason,
        e => panic!("{param}: expected UnsupportedParam, got {e:?}"),
    }
}

#[test]
fn scalar_spellings() {
    use Scalar::*;
    let cases: &[(&str, Scalar)] = &[
        ("char c", I8),
        ("signed char c", I8),
        ("unsigned char c", U8),
        ("short s", I16),
        ("short int s", I16),
        ("signed short s", I16),
        ("unsigned short s", U16),
        ("unsigned short int s", U16),
        ("int n", I32),
        ("signed n", I32),
        ("signed int n", I32),
        ("unsigned n", U32),
        ("unsigned int n", U32),
        ("int unsigned n", U32),
        ("long l", I64),
        ("long int l", I64),
        ("unsigned long l", U64),
        ("long long k", I64),
        ("long long int k", I64),
        ("unsigned long long k", U64),
        ("unsigned long long int k", U64),
        ("size_t n", Usize),
        ("std::size_t n", Usize),
        ("ptrdiff_t d", Isize),
        ("ssize_t d", Isize),
        ("intptr_t p", Isize),
        ("uintptr_t p", Usize),
        ("int8_t a", I8),
        ("int16_t a", I16),
        ("int32_t a", I32),
        ("int64_t a", I64),
        ("uint8_t a", U8),
        ("uint16_t a", U16),
        ("uint32_t a", U32),
        ("uint64_t a", U64),
        ("std::int32_t a", I32),
        ("std::uint64_t a", U64),
        ("::int8_t a", I8),
        ("float x", F32),
        ("double x", F64),
        ("bool b", Bool),
        ("half h", F16),
        ("__half h", F16),
        ("__nv_bfloat16 b", Bf16),
        ("nv_bfloat16 b", Bf16),
        ("const int n", I32),
        ("int const n", I32),
        ("volatile int n", I32),
        ("const unsigned int n", U32),
        ("int n = 4", I32),
        ("int", I32),
        ("unsigned", U32),
        ("const __grid_constant__ int n", I32),
    ];
    for &(p, s) in cases {
        assert_eq!(param_ty(p), sc(s), "{p}");
    }
}

#[test]
fn pointer_constness_and_restrict() {
    let f = || sc(Scalar::F32);
    assert_eq!(param_ty("float *x"), ptr(f(), false));
    assert_eq!(param_ty("const float *x"), ptr(f(), true));
    assert_eq!(param_ty("float const* x"), ptr(f(), true));
    assert_eq!(param_ty("const float* const x"), ptr(f(), true));
    assert_eq!(param_ty("float* const x"), ptr(f(), false));
    assert_eq!(param_ty("float *__restrict__ y"), ptr(f(), false));
    assert_eq!(param_ty("float* __restrict y"), ptr(f(), false));
    assert_eq!(param_ty("const float *__restrict__ x"), ptr(f(), true));
    assert_eq!(param_ty("float *restrict y"), ptr(f(), false));
    assert_eq!(param_ty("void *p"), ptr(CType::Void, false));
    assert_eq!(param_ty("const void *p"), ptr(CType::Void, true));
    assert_eq!(param_ty("volatile int *p"), ptr(sc(Scalar::I32), false));
    assert_eq!(param_ty("float*"), ptr(f(), false));
}

#[test]
fn arrays_are_pointers() {
    assert_eq!(param_ty("float x[]"), ptr(sc(Scalar::F32), false));
    assert_eq!(param_ty("const int x[16]"), ptr(sc(Scalar::I32), true));
    assert_eq!(param_ty("int x[N * 2]"), ptr(sc(Scalar::I32), false));
    assert_eq!(
        reason("float x[4][4]"),
        "multi-dimensional arrays are not supported"
    );
    assert_eq!(reason("float* x[4]"), "pointers to pointers are not supported");
}

#[test]
fn named_types() {
    assert_eq!(param_ty("Foo s"), named("Foo"));
    assert_eq!(param_ty("struct Foo s"), named("Foo"));
    assert_eq!(param_ty("const struct Foo s"), named("Foo"));
    assert_eq!(param_ty("union U u"), named("U"));
    assert_eq!(param_ty("enum Mode m"), named("Mode"));
    assert_eq!(param_ty("float4 v"), named("float4"));
    assert_eq!(param_ty("cudaTextureObject_t tex"), named("cudaTextureObject_t"));
    assert_eq!(param_ty("Foo* s"), ptr(named("Foo"), false));
    assert_eq!(param_ty("ns::Vec3 v"), named("ns::Vec3"));
    assert_eq!(param_ty("Pair<int, float> p"), named("Pair<int, float>"));
    assert_eq!(param_ty("const Foo* __restrict__ s"), ptr(named("Foo"), true));
}

#[test]
fn names_and_text() {
    let src =
        "__global__ void k(const float /* in */ *__restrict__   x,\n  unsigned int n = 4, int, float*) {}";
    let k = find_kernel(src, "k").unwrap();
    let texts: Vec<&str> = k.params.iter().map(|p| p.text.as_str()).collect();
    assert_eq!(
        texts,
        vec![
            "const float *__restrict__ x",
            "unsigned int n = 4",
            "int",
            "float*"
        ]
    );
    let names: Vec<Option<&str>> = k.params.iter().map(|p| p.name.as_deref()).collect();
    assert_eq!(names, vec![Some("x"), Some("n"), None, None]);
    assert_eq!(k.line, 1);
    assert!(!k.extern_c);
    assert!(!k.is_template);
}

#[test]
fn empty_and_void_params() {
    assert!(find_kernel("__global__ void k() {}", "k")
        .unwrap()
        .params
        .is_empty());
    assert!(find_kernel("__global__ void k(void) {}", "k")
        .unwrap()
        .params
        .is_empty());
    assert_eq!(reason("void x"), "a parameter cannot have type `void`");
    let e = find_kernel("__global__ void k(void, int) {}", "k").unwrap_err();
    assert!(matches!(e, DeclError::UnsupportedParam { .. }), "{e:?}");
}

#[test]
fn unsupported_params() {
    assert_eq!(reason("float **pp"), "pointers to pointers are not supported");
    assert_eq!(
        reason("const float * const * pp"),
        "pointers to pointers are not supported"
    );
    assert_eq!(reason("float &r"), "references are not supported");
    assert_eq!(reason("const Foo& s"), "references are not supported");
    assert_eq!(reason("float &&r"), "references are not supported");
    assert_eq!(reason("void (*fn)(int)"), "function pointers are not supported");
    assert_eq!(reason("int (&arr)[4]"), "references are not supported");
    assert_eq!(reason("float (*a)[4]"), "pointers to arrays are not supported");
    assert_eq!(
        reason("int n, ..."),
        "variadic parameters (`...`) are not supported"
    );
    assert_eq!(reason("long double x"), "`long double` has no Rust equivalent");
    assert_eq!(
        reason("auto x"),
        "deduced types (`auto`, `decltype`) are not supported"
    );
    assert_eq!(
        reason("float x y"),
        "the parser does not understand this parameter"
    );
    assert_eq!(
        reason("unsigned float x"),
        "its type is not a valid combination of C type words"
    );
    let e = param_err("float **pp");
    assert_eq!(
        e.to_string(),
        "kernel `k`, line 1: parameter `float **pp` cannot be passed from Rust: pointers to pointers are not supported"
    );
    let src = "\n\n__global__ void f(int n,\n   float **pp) {}";
    assert_eq!(
        find_kernel(src, "f").unwrap_err(),
        DeclError::UnsupportedParam {
            kernel: "f".into(),
            param: "float **pp".into(),
            line: 4,
            reason: "pointers to pointers are not supported".into(),
        }
    );
}

#[test]
fn qualifiers_and_attributes() {
    let srcs = [
        "static __global__ void k(int n) {}",
        "__global__ static void k(int n) {}",
        "inline __global__ void k(int n) {}",
        "__global__ __forceinline__ void k(int n) {}",
        "__global__ __noinline__ void k(int n) {}",
        "__global__ void __launch_bounds__(256) k(int n) {}",
        "__global__ void __launch_bounds__(MAX_THREADS, (MIN_BLOCKS + 1)) k(int n) {}",
        "__launch_bounds__(128, 4) __global__ void k(int n) {}",
        "__global__ void __attribute__((noinline, used)) k(int n) {}",
        "__attribute__((visibility(\"default\"))) __global__ void k(int n) {}",
        "[[nodiscard]] __global__ void k(int n) {}",
        "__global__ void [[gnu::used]] k(int n) {}",
        "__global__ void k(int n [[maybe_unused]]) {}",
        "__global__ void k(int n __attribute__((unused))) {}",
        "void __global__ k(int n) {}",
        "__global__ void k(int n) noexcept {}",
        "__global__ auto k(int n) -> void {}",
    ];
    for src in srcs {
        let k = find_kernel(src, "k").unwrap_or_else(|e| panic!("{src}: {e}"));
        assert_eq!(k.params.len(), 1, "{src}");
        assert_eq!(k.params[0].ty, sc(Scalar::I32), "{src}");
        assert_eq!(k.params[0].name.as_deref(), Some("n"), "{src}");
    }
}

#[test]
fn templates() {
    let src = "template <typename T, int N = 4>\n__global__ void scale(T* x, T a, int n) {}";
    let k = find_kernel(src, "scale").unwrap();
    assert!(k.is_template);
    let param = |name: &str, kind: TemplateParamKind, default: Option<&str>| TemplateParam {
        name: Some(name.to_owned()),
        kind,
        default: default.map(str::to_owned),
    };
    assert_eq!(
        k.template_params,
        [
            param("T", TemplateParamKind::Type, None),
            param("N", TemplateParamKind::Value("int".into()), Some("4"))
        ]
    );
    let src = "template <int block_size, unsigned int sortDir, bool B = (1 > 0), class U = Pair<int, float>, typename...>\n\
               __global__ void v(float *x) {}";
    assert_eq!(
        find_kernel(src, "v").unwrap().template_params,
        [
            param("block_size", TemplateParamKind::Value("int".into()), None),
            param("sortDir", TemplateParamKind::Value("unsigned int".into()), None),
            param("B", TemplateParamKind::Value("bool".into()), Some("(1 > 0)")),
            param("U", TemplateParamKind::Type, Some("Pair<int, float>")),
            TemplateParam {
                name: None,
                kind: TemplateParamKind::Type,
                default: None
            },
        ]
    );
    assert_eq!(k.line, 2);
    assert_eq!(k.params[0].ty, ptr(named("T"), false));
    assert_eq!(k.params[1].ty, named("T"));
    assert_eq!(k.params[2].ty, sc(Scalar::I32));

    let src = "template <typename T, template <class> class C, typename U = Pair<int, Pair<T, T>>>\n\
               __global__ void f(const U* u) {}";
    let k = find_kernel(src, "f").unwrap();
    assert!(k.is_template);
    assert_eq!(k.params[0].ty, ptr(named("U"), true));

    // A template parameter shadows a typedef of the same name.
    let src = "typedef float T;\ntemplate <class T> __global__ void g(T x) {}\n__global__ void h(T x) {}";
    assert_eq!(find_kernel(src, "g").unwrap().params[0].ty, named("T"));
    assert_eq!(find_kernel(src, "h").unwrap().params[0].ty, sc(Scalar::F32));

    // Explicit instantiations declare nothing new.
    let src = "template <typename T> __global__ void f(T* x) {}\n\
               template __global__ void f<float>(float*);\n\
               extern template __global__ void f<int>(int*);";
    let ks = find_kernels(src).unwrap();
    assert_eq!(ks.len(), 1);

    // An explicit specialization is a template-id.
    let src = "template <> __global__ void f<float>(float* x) {}";
    let k = find_kernel(src, "f").unwrap();
    assert!(k.is_template);
    assert!(k.template_params.is_empty());
    assert_eq!(k.params[0].ty, ptr(sc(Scalar::F32), false));
}

#[test]
fn extern_c() {
    let src = r#"
extern "C" {
__global__ void a(int n) {}
namespace inner { __global__ void b(int n); }
}
extern "C" __global__ void c(int n) {}
__global__ void d(int n) {}
extern "C++" { __global__ void e(int n) {} }
extern "C" { extern "C++" { __global__ void f(int n) {} } __global__ void g() {} }
struct S { int x; };
"#;
    let ks = find_kernels(src).unwrap();
    let got: Vec<(&str, bool, usize)> = ks.iter().map(|k| (k.name.as_str(), k.extern_c, k.line)).collect();
    assert_eq!(
        got,
        vec![
            ("a", true, 3),
            ("b", true, 4),
            ("c", true, 6),
            ("d", false, 7),
            ("e", false, 8),
            ("f", false, 9),
            ("g", true, 9),
        ]
    );
}

#[test]
fn namespaces_and_qualified_names() {
    let src = "namespace foo { namespace bar {\n__global__ void k(float* x) {}\n} }\n\
               __global__ void foo::bar::q(int n) {}";
    assert_eq!(find_kernel(src, "k").unwrap().line, 2);
    assert_eq!(find_kernel(src, "q").unwrap().params.len(), 1);
}

#[test]
fn ignores_comments_strings_and_preprocessor() {
    let src = r#"
// __global__ void c1(int);
/* __global__ void c2(int); */
#define K __global__
#define LONG_MACRO(x) \
   __global__ void m(x)
const char* s = "__global__ void s1(int)";
char q = '"';
auto r = R"raw( __global__ void r1(int) )raw";
__device__ float helper(float x) { return x; }
__global__ void real(float* x) { x[0] = helper(1.0f); }
"#;
    let ks = find_kernels(src).unwrap();
    assert_eq!(ks.len(), 1);
    assert_eq!(ks[0].name, "real");
    assert_eq!(ks[0].line, 11);
}

#[test]
fn typedefs_and_using() {
    let src = r#"
typedef float real;
typedef unsigned int uint;
using dbl = double;
typedef float* floatptr;
typedef const float* cfloatptr;
typedef const float cfloat;
typedef struct Foo Foo2;
typedef Foo2 Foo3;
typedef struct { int a; float b; } Anon;
typedef struct Tagged { int a; } Tagged_t, *TaggedPtr;
typedef int i_a, *i_ptr;
typedef void (*callback)(int);
typedef real real2;
typedef real* realptr;
typedef floatptr* floatptrptr;
typedef long double ld;
using vptr = void*;
namespace ns { typedef int idx; }
__global__ void k(real a, uint b, dbl c, floatptr d, cfloatptr e, cfloat* f, Foo2 g, Foo3 h,
                  Anon i, Tagged_t j, TaggedPtr l, i_a m, i_ptr o, real2 p, realptr q,
                  const floatptr r, const real* s, vptr t, ns::idx u) {}
__global__ void bad1(callback cb) {}
__global__ void bad2(floatptrptr pp) {}
__global__ void bad3(ld x) {}
__global__ void bad4(floatptr* pp) {}
"#;
    let k = find_kernel(src, "k").unwrap();
    let f32p = |c| ptr(sc(Scalar::F32), c);
    let want = vec![
        sc(Scalar::F32),
        sc(Scalar::U32),
        sc(Scalar::F64),
        f32p(false),
        f32p(true),
        f32p(true),
        named("Foo"),
        named("Foo"),
        named("Anon"),
        named("Tagged"),
        ptr(named("Tagged"), false),
        sc(Scalar::I32),
        ptr(sc(Scalar::I32), false),
        sc(Scalar::F32),
        f32p(false),
        f32p(false),
        f32p(true),
        ptr(CType::Void, false),
        sc(Scalar::I32),
    ];
    let got: Vec<CType> = k.params.iter().map(|p| p.ty.clone()).collect();
    assert_eq!(got, want);
    let r = |name| match find_kernel(src, name).unwrap_err() {
        DeclError::UnsupportedParam { reason, .. } => reason,
        e => panic!("{e:?}"),
    };
    assert_eq!(r("bad1"), "function pointers are not supported");
    assert_eq!(r("bad2"), "pointers to pointers are not supported");
    assert_eq!(r("bad3"), "`long double` has no Rust equivalent");
    assert_eq!(r("bad4"), "pointers to pointers are not supported");
}

#[test]
fn typedef_after_kernel_is_used() {
    let src = "__global__ void k(real x) {}\ntypedef double real;";
    assert_eq!(find_kernel(src, "k").unwrap().params[0].ty, sc(Scalar::F64));
}

#[test]
fn prototype_and_definition_dedupe() {
    let src = r#"
extern "C" __global__ void axpy(float, const float*, float*, int);
__global__ void scale(float a, float* x);
extern "C" __global__ void axpy(float a, const float* __restrict__ x, float* y, int n) {
}
__global__ void scale(float a, float* x) {}
__global__ void scale(float a, float* x);
"#;
    let ks = find_kernels(src).unwrap();
    assert_eq!(ks.len(), 2);
    assert_eq!(ks[0].name, "axpy");
    assert_eq!(ks[0].line, 4);
    assert_eq!(ks[0].params[1].name.as_deref(), Some("x"));
    assert_eq!(ks[1].name, "scale");
    assert_eq!(ks[1].line, 6);
    // Linkage from the prototype carries over to the definition.
    let src = "extern \"C\" __global__ void f(int);\n__global__ void f(int n) {}";
    let k = find_kernel(src, "f").unwrap();
    assert!(k.extern_c);
    assert_eq!(k.line, 2);
    // Two prototypes only: the first is kept.
    let src = "__global__ void f(int a);\n__global__ void f(int b);";
    let k = find_kernel(src, "f").unwrap();
    assert_eq!(k.params[0].name.as_deref(), Some("a"));
}

#[test]
fn overloads_are_ambiguous() {
    let src = "__global__ void f(float* x) {}\n__global__ void g() {}\n__global__ void f(double* x) {}";
    let e = find_kernel(src, "f").unwrap_err();
    assert_eq!(
        e,
        DeclError::Ambiguous {
            name: "f".into(),
            lines: vec![1, 3]
        }
    );
    assert!(e.to_string().contains("lines 1, 3"), "{e}");
    assert_eq!(find_kernels(src).unwrap().len(), 3);
    assert!(find_kernel(src, "g").is_ok());
}

#[test]
fn not_found_lists_kernels() {
    let src = "__global__ void axpy() {}\n__global__ void scale() {}\n__global__ void axpy();";
    let e = find_kernel(src, "foo").unwrap_err();
    assert_eq!(
        e,
        DeclError::NotFound {
            name: "foo".into(),
            available: vec!["axpy".into(), "scale".into()],
            hint: Box::default(),
        }
    );
    assert_eq!(
        e.to_string(),
        "no __global__ function named `foo` in the CUDA source; it declares: `axpy`, `scale`"
    );
    let e = find_kernel("__device__ void foo() {}", "foo").unwrap_err();
    assert_eq!(
        e.to_string(),
        "no __global__ function named `foo` in the CUDA source; it declares no __global__ function"
    );
    assert_eq!(find_kernels("").unwrap(), vec![]);
}

#[test]
fn not_found_says_what_fits() {
    let src = "#define K(T, N) extern \"C\" __global__ void N(const T *x, T *y) {}\n\
               K(float, copy_f32)\n\
               #if __CUDA_ARCH__ >= 800\nK(double, copy_f64)\n#endif\n\
               #include \"extra.cuh\"\n";
    let d = Declarations::read(src, &Preprocess::new().cuda_arch(700));
    let e = d.find_kernel("copy_f64").unwrap_err();
    let DeclError::NotFound { hint, .. } = &e else {
        panic!("{e}")
    };
    assert_eq!(hint.near, ["copy_f32"]);
    assert_eq!(hint.macros, ["K"]);
    assert_eq!(hint.unopened, ["extra.cuh"]);
    assert_eq!(
        hint.left_out,
        Some(LeftOut {
            line: 4,
            directive_line: 3,
            arch: 700
        })
    );
    assert_eq!(
        e.to_string(),
        "no __global__ function named `copy_f64` in the CUDA source; it declares: `copy_f32`; \
         `copy_f64` appears at line 4, in a part of the source the preprocessor leaves out: the \
         conditional at line 3 is false when compiling with `__CUDA_ARCH__` 700 (the architecture of \
         `-arch=…` in `options`, else the newest) and the `-D` options given; the macros `K` declare \
         kernels, and were read expanded, as NVRTC expands them; the included header `extra.cuh` \
         could not be read, so what it declares is not known; did you mean `copy_f32`?"
    );
    assert!(!hint.is_empty());
    // Many kernels: a dozen named, the count of the rest.
    let many: String = (0..20)
        .map(|i| format!("__global__ void k{i}() {{}}\n"))
        .collect();
    let e = find_kernel(&many, "q").unwrap_err().to_string();
    assert!(
        e.ends_with("it declares 20 kernels: `k0`, `k1`, `k2`, `k3`, `k4`, `k5`, `k6`, `k7`, `k8`, `k9`, `k10`, `k11`, … (8 more)"),
        "{e}"
    );
}

mod errors;
mod host_names;
mod robustness;
