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
            available: vec!["axpy".into(), "scale".into()]
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

fn syntax_line(src: &str) -> (usize, String) {
    match find_kernels(src).unwrap_err() {
        DeclError::Syntax { line, message } => (line, message),
        e => panic!("{src}: expected Syntax, got {e:?}"),
    }
}

#[test]
fn syntax_errors() {
    assert_eq!(
        syntax_line("int a;\n/* never closed\n__global__ void k() {}").0,
        2
    );
    assert_eq!(syntax_line("__global__ void k(int n\n{ }").0, 1);
    assert_eq!(syntax_line("\n__global__ void k(int n;").0, 2);
    assert_eq!(syntax_line("__global__ void k(int n, (float x) {}").0, 1);
    assert_eq!(syntax_line("__global__ void k(int n").0, 1);
    assert_eq!(syntax_line("__global__ void k(int n,) {}").0, 1);
    assert_eq!(syntax_line("__global__ void k(, int n) {}").0, 1);
    assert_eq!(syntax_line("__global__ void k(int a, = 3) {}").0, 1);
    assert_eq!(syntax_line("__global__;").0, 1);
    assert_eq!(syntax_line("__global__").0, 1);
    assert_eq!(syntax_line("__global__ void (int n) {}").0, 1);
    assert_eq!(
        syntax_line("__global__ void __launch_bounds__(256 k(int n) {}").0,
        1
    );
    assert_eq!(syntax_line("__global__ void k(const char* s = \"abc) {}").0, 1);
    assert_eq!(syntax_line("x = R\"d(never closed").0, 1);
    let (line, msg) = syntax_line("\n__global__ int k(int n) {}");
    assert_eq!(line, 2);
    assert_eq!(msg, "__global__ function `k` must return void");
    let (_, msg) = syntax_line("__device__ __global__ void k() {}");
    assert!(msg.contains("both __device__ and __global__"), "{msg}");
    let (_, msg) = syntax_line("__global__ __device__ void k() {}");
    assert!(msg.contains("both __device__ and __global__"), "{msg}");
    let e = find_kernels("__global__ void k(int n").unwrap_err();
    assert_eq!(
        e.to_string(),
        "CUDA source, line 1: the parentheses of __global__ function `k` are not balanced"
    );
}

#[test]
fn find_kernel_ignores_errors_elsewhere() {
    let src = "__global__ void good(int n) {}\n__global__ void bad(float** p) {}";
    assert!(find_kernel(src, "good").is_ok());
    assert!(matches!(
        find_kernel(src, "bad"),
        Err(DeclError::UnsupportedParam { .. })
    ));
    assert!(find_kernels(src).is_err());
    // A declaration too broken to name is reported instead of NotFound.
    let src = "__global__ void good(int n) {}\n__global__ void (int n) {}";
    assert!(matches!(
        find_kernel(src, "other"),
        Err(DeclError::Syntax { line: 2, .. })
    ));
    assert!(find_kernel(src, "good").is_ok());
    // Apostrophes in disabled code do not matter.
    let src = "#if 0\ndon't\n#endif\n__global__ void k(int n) {}";
    assert_eq!(find_kernel(src, "k").unwrap().line, 4);
}

#[test]
fn errors_are_errors() {
    fn takes_error(_: &dyn std::error::Error) {}
    takes_error(&DeclError::Syntax {
        line: 1,
        message: "x".into(),
    });
}

#[test]
fn dynamic_shared_memory() {
    assert!(uses_dynamic_shared_memory(
        "__global__ void k() { extern __shared__ float smem[]; }"
    ));
    assert!(uses_dynamic_shared_memory(
        "extern __shared__ __align__(16) unsigned char buf[];"
    ));
    assert!(uses_dynamic_shared_memory("__shared__ extern int s[];"));
    assert!(!uses_dynamic_shared_memory(
        "__global__ void k() { __shared__ float tile[32][33]; extern int x; }"
    ));
    assert!(!uses_dynamic_shared_memory("// extern __shared__ float s[];\n"));
    assert!(!uses_dynamic_shared_memory("/* extern __shared__ float s[]; */"));
    assert!(!uses_dynamic_shared_memory(
        "const char* s = \"extern __shared__ float s[];\";"
    ));
    assert!(!uses_dynamic_shared_memory(
        "#define SMEM extern __shared__ float s[]\n"
    ));
    assert!(!uses_dynamic_shared_memory("extern int a; __shared__ int b;"));
    assert!(!uses_dynamic_shared_memory(""));
}

#[test]
fn globals() {
    let src = r#"
__constant__ float coeffs[16];
__device__ int counter = 0;
__device__ __constant__ double scale;
static __device__ float a = 1.0f, b[4] = {1, 2, 3, 4}, c{3};
__device__ float helper(float x) { __shared__ float t; return x; }
__host__ __device__ inline int both(int x) { return x; }
__device__ __managed__ int managed_count;
extern __device__ const float* __restrict__ table;
__device__ Pair<int, float> pairs[8];
template <typename T> __device__ T typed_val;
__device__ float2 operator+(float2 a, float2 b);
__global__ void k(int n) { auto f = [] __device__ (int i) { return i; }; }
__device__ int counter;
// __constant__ float hidden;
__constant__ int last
"#;
    assert_eq!(
        find_globals(src),
        vec![
            "coeffs",
            "counter",
            "scale",
            "a",
            "b",
            "c",
            "managed_count",
            "table",
            "pairs",
            "typed_val",
            "last"
        ]
    );
    assert!(find_globals("").is_empty());
}

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

fn exercise(src: &str) {
    let _ = find_kernels(src);
    let _ = find_kernel(src, "axpy");
    let _ = find_kernel(src, "k");
    let _ = uses_dynamic_shared_memory(src);
    let _ = find_globals(src);
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

fn assert_fast(what: &str, src: &str) {
    let start = std::time::Instant::now();
    exercise(src);
    let took = start.elapsed();
    // Generous because tests run unoptimized; release builds are ~20x faster.
    assert!(took.as_secs_f64() < 5.0, "{what}: {took:?}");
}

#[test]
fn linear_time_on_big_inputs() {
    let mut big = String::new();
    let mut n = 0;
    while big.len() < 1_000_000 {
        big.push_str(&format!(
            "typedef float real{n};\n__global__ void k{n}(const real{n}* __restrict__ x, float* y, int n) {{ y[0] = x[0]; }}\n"
        ));
        n += 1;
    }
    let start = std::time::Instant::now();
    let ks = find_kernels(&big).unwrap();
    assert_eq!(ks.len(), n);
    assert_eq!(ks[n - 1].line, 2 * n);
    assert!(start.elapsed().as_secs_f64() < 2.0);
    assert_fast("many kernels", &big);
    assert_fast("not found in many kernels", &big.replace("k1(", "k1x("));

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
    ];
    for p in patterns {
        // 300 KB each keeps the unoptimized test quick; a quadratic scan
        // would still take minutes.
        let src = p.repeat(300_000 / p.len());
        assert_fast(p, &src);
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
