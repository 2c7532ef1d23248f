//! Names kernels written for nvcc use without declaring them, under real NVRTC (no GPU): the
//! prelude (`uint`, `ushort`, ... as glibc's `<sys/types.h>` declares them), its opt-out and
//! cache key, and CUDA type names in `instantiate` and in signatures (`float2`,
//! `cuFloatComplex`).
#![allow(dead_code)]

use gpu_runtime::compiler::{Target, NVRTC_PRELUDE};
use gpu_runtime::types::{Double2, Float2, Float4};
use gpu_runtime::{kernel, Error, SourceModule};

const SM90: Target = Target::Cubin { major: 9, minor: 0 };

/// Every parameter spelled with a host typedef, none declared: `uint n` is `n: u32`.
#[kernel(
    r#"
__global__ void host_names(const uint *keys, ushort *lo, ulong *wide, u_char *bytes,
                           u_int32_t salt, u_long big, ssize_t step, uint n) {
    uint i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        u_short half = (u_short)(keys[i] ^ salt);
        lo[i] = half;
        wide[i] = (ulong)keys[i] * big + (ulong)step;
        bytes[i] = (u_char)(keys[i] & 0xffu);
    }
}"#
)]
pub fn host_names(
    keys: &[u32],
    lo: &mut [u16],
    wide: &mut [u64],
    bytes: &mut [u8],
    salt: u32,
    big: u64,
    step: isize,
    n: u32,
);

/// A source that declares `uint` itself, the same way, as many nvcc kernels do.
#[kernel(
    r#"
typedef unsigned int uint;
typedef unsigned char uchar;
__global__ void own_typedef(uint *x, const uchar *c, uint n) {
    uint i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] += c[i];
}"#
)]
pub fn own_typedef(x: &mut [u32], c: &[u8], n: u32);

/// A source that gives `uint` another type needs the prelude off, and is checked as its own
/// typedef says.
#[kernel(
    r#"
typedef int uint;
__global__ void signed_uint(uint *x, uint n) {
    uint i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = -x[i];
}"#,
    prelude = false
)]
pub fn signed_uint(x: &mut [i32], n: i32);

/// `cuComplex.h`'s typedefs are the vector types they name.
#[kernel(
    r#"
#include <cuComplex.h>
typedef float4 vec4;
__global__ void cmul(const cuFloatComplex *a, const cuFloatComplex *b, cuFloatComplex *c,
                     cuDoubleComplex scale, cuDoubleComplex *d, vec4 *v, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        c[i] = cuCmulf(a[i], b[i]);
        d[i] = cuCmul(scale, cuComplexFloatToDouble(c[i]));
        v[i] = make_float4(c[i].x, c[i].y, (float)d[i].x, (float)d[i].y);
    }
}"#
)]
pub fn cmul(
    #[In] a: &[Float2],
    #[In] b: &[Float2],
    #[Out] c: &mut [Float2],
    scale: Double2,
    #[Out] d: &mut [Double2],
    #[Out] v: &mut [Float4],
    n: i32,
);

/// A template instantiated for CUDA names and Rust names alike.
#[kernel(
    r#"
template <typename T>
__global__ void take(const T *src, const int *idx, T *dst, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) dst[i] = src[idx[i]];
}"#,
    instantiate = [float, uint, float2, cuDoubleComplex, Float4, u8, ushort]
)]
pub fn take<T>(#[In] src: &[T], #[In] idx: &[i32], #[Out] dst: &mut [T], n: i32);

fn compile_err(m: SourceModule) -> String {
    match m.arch("sm_90").cache_dir(None::<&str>).compile_report() {
        Err(Error::Compile(e)) => e.to_string(),
        other => panic!("expected a compile error, got {other:?}"),
    }
}

#[test]
fn kernels_using_host_names_compile() {
    for source in [host_names::source(), own_typedef::source(), cmul::source()] {
        assert!(source.prelude());
        let out = source.compile(SM90).unwrap_or_else(|e| panic!("{e}"));
        assert!(out.image.starts_with(b"\x7fELF"));
    }
    assert!(!signed_uint::source().prelude());
    signed_uint::source().compile(SM90).unwrap();
}

#[test]
fn the_prelude_is_what_glibc_declares() {
    for line in [
        "typedef unsigned int uint;",
        "typedef unsigned short ushort;",
        "typedef unsigned long ulong;",
        "typedef unsigned char u_char;",
        "typedef unsigned long u_int64_t;",
    ] {
        assert!(NVRTC_PRELUDE.lines().any(|l| l == line), "{line}");
    }
    // Typedefs, and the names nvcc's implicit headers give every kernel (the built-in
    // <gpu_runtime/nvcc_implicit.h>): nothing else.
    for l in NVRTC_PRELUDE.lines() {
        assert!(
            l.starts_with("typedef ")
                || l.starts_with("//")
                || l == "#pragma once"
                || l == "#include <gpu_runtime/nvcc_implicit.h>",
            "{l}"
        );
    }
}

#[test]
fn source_modules_get_the_prelude_unless_told_not_to() {
    let src = "__global__ void k(uint *x, ushort y) { x[threadIdx.x] = y; }\n";
    let on = SourceModule::new(src)
        .arch("sm_90")
        .cache_dir(None::<&str>)
        .kernels(["k"])
        .compile_report()
        .unwrap();
    assert_eq!(on.module.lowered_names, ["k"]);
    let off = compile_err(SourceModule::new(src).prelude(false).kernels(["k"]));
    assert!(off.contains("identifier \"uint\" is undefined"), "{off}");
}

#[test]
fn the_prelude_keeps_line_numbers_and_explains_a_clash() {
    // Line 4 has the error; the prelude before the source must not shift it.
    let src = "\n\n__global__ void k(uint *x) {\n    x[0] = undefined_name;\n}\n";
    let e = compile_err(SourceModule::new(src).name("lines.cu"));
    assert!(e.contains("lines.cu(4): error"), "{e}");
    // No note about the prelude where it has nothing to do with the error.
    assert!(!e.contains("SourceModule::prelude(false)"), "{e}");

    let clash = "typedef int uint;\n__global__ void k(uint *x) { x[0] = -1; }\n";
    let e = compile_err(SourceModule::new(clash).name("clash.cu"));
    assert!(e.contains("clash.cu(1): error"), "{e}");
    assert!(e.contains("gpu_runtime_prelude.h"), "{e}");
    assert!(e.contains("SourceModule::prelude(false)"), "{e}");
    SourceModule::new(clash)
        .prelude(false)
        .arch("sm_90")
        .cache_dir(None::<&str>)
        .compile_report()
        .unwrap();
}

#[test]
fn the_prelude_is_part_of_the_cache_key() {
    let dir = std::env::temp_dir().join(format!("gpu-suite-prelude-key-{}", std::process::id()));
    let src = "typedef unsigned int uint;\n__global__ void k(uint *x) { x[0] = 1u; }\n";
    let build = |prelude: bool| {
        SourceModule::new(src)
            .prelude(prelude)
            .arch("sm_90")
            .cache_dir(Some(&dir))
            .compile_report()
            .unwrap()
    };
    let (on, off) = (build(true), build(false));
    assert_ne!(on.key, off.key);
    // Each setting finds its own entry again.
    assert_eq!(build(true).key, on.key);
    assert_eq!(build(false).key, off.key);
    assert_eq!(
        format!("{:?}", build(false).status),
        format!("{:?}", gpu_runtime::compiler::CacheStatus::Hit)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn templates_take_cuda_names_and_rust_names() {
    assert_eq!(
        take::source().kernels(),
        [
            "take<float>",
            "take<unsigned int>",
            "take<float2>",
            "take<double2>",
            "take<float4>",
            "take<unsigned char>",
            "take<unsigned short>",
        ]
    );
    let out = take::source().compile(SM90).unwrap();
    assert_eq!(out.lowered_names.len(), 7);
    // The CUDA names are the Rust types: the typed kernels exist for exactly these.
    let _ = take::prepare::<f32>;
    let _ = take::prepare::<u32>;
    let _ = take::prepare::<Float2>;
    let _ = take::prepare::<Double2>;
    let _ = take::prepare::<Float4>;
    let _ = take::prepare::<u8>;
    let _ = take::prepare::<u16>;
}

#[test]
fn names_nvcc_gives_every_kernel_compile_without_an_include() {
    // nvcc's implicit cuda_runtime.h brings <stdio.h>, <stdlib.h>, <math.h>, <cmath>, the limits
    // and std::min/std::max into every kernel; so does the prelude.
    let src = "__global__ void k(float *x, int n) {\n\
               int i = threadIdx.x;\n\
               if (i < n) x[i] = std::min(x[i], FLT_MAX) + std::max(i, 0) + (n < INT_MAX ? 0.0f : INFINITY) + (float)M_PI;\n\
               }\n";
    let on = SourceModule::new(src)
        .arch("sm_90")
        .cache_dir(None::<&str>)
        .kernels(["k"])
        .compile_report()
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(on.module.lowered_names, ["k"]);
    let off = compile_err(SourceModule::new(src).prelude(false).kernels(["k"]));
    assert!(off.contains("namespace \"std\" has no member \"min\""), "{off}");
}
