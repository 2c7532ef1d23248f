//! Errors, lookups, shared memory and globals.

use super::*;

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
