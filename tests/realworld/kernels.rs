//! Kernels written as for nvcc: vector types, structs, standard headers, several linked
//! sources, large shared memory. Shared by realworld_compile.rs (NVRTC) and realworld_gpu.rs.
#![allow(dead_code)]

use gpu_runtime::types::Float3;
use gpu_runtime::{kernel, DeviceRepr};

/// `out[i] = a[i] * s + v`, componentwise, with `float3` by value and in buffers.
#[kernel(
    r#"
__global__ void fma3(float3 v, float s, const float3 *a, float3 *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = make_float3(a[i].x * s + v.x, a[i].y * s + v.y, a[i].z * s + v.z);
}"#
)]
pub fn fma3(v: Float3, s: f32, a: &[Float3], out: &mut [Float3], n: i32);

/// Several vector types at once: `uchar4` and `int2` in, `float4` and `double2` out.
#[kernel(
    r#"
__global__ void mix(const uchar4 *c, const int2 *p, float4 *f, double2 *d, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        f[i] = make_float4(c[i].x, c[i].y, c[i].z, c[i].w);
        d[i] = make_double2((double)p[i].x * 0.5, (double)p[i].y * 0.25);
    }
}"#
)]
pub fn mix(
    c: &[gpu_runtime::types::UChar4],
    p: &[gpu_runtime::types::Int2],
    f: &mut [gpu_runtime::types::Float4],
    d: &mut [gpu_runtime::types::Double2],
    n: i32,
);

pub const PARAMS_C: &str = "struct Params { float scale; int offset; double bias; char flag; };";

/// The C `struct Params` of `apply_params`.
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C)]
pub struct Params {
    pub scale: f32,
    pub offset: i32,
    pub bias: f64,
    pub flag: i8,
}
// SAFETY: repr(C), plain numbers only (every bit pattern valid); layout checked against the C
// struct with gpu_runtime::compiler::layout::check_layout in the tests.
unsafe impl DeviceRepr for Params {}

#[kernel(
    r#"
struct Params { float scale; int offset; double bias; char flag; };
__global__ void apply_params(Params p, const float *x, double *y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = p.flag ? (double)(x[i] * p.scale) + p.bias + p.offset : 0.0;
}"#
)]
pub fn apply_params(p: Params, #[In] x: &[f32], #[Out] y: &mut [f64], n: i32);

/// Standard headers as nvcc users write them.
#[kernel(
    r#"
#include <stdio.h>
#include <cstdio>
#include <math.h>
#include <cmath>
#include <stdint.h>
#include <cstdint>
#include <stddef.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
__global__ void headers(const __half *h, const __nv_bfloat16 *b, float *out, int32_t n) {
    int32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        uint64_t k = (uint64_t)i;
        size_t s = sizeof(k) + (size_t)(k - k);
        out[i] = __half2float(h[i]) + __bfloat162float(b[i]) + (float)std::sqrt(4.0) + sinf(0.0f)
                 + (float)(s - 8) + (float)M_PI * 0.0f;
        if (i == 0 && n < 0) printf("unreachable %d\n", n);
    }
}"#
)]
pub fn headers(h: &[gpu_runtime::half::f16], b: &[gpu_runtime::half::bf16], out: &mut [f32], n: i32);

/// `<math.h>`'s INFINITY, NAN, HUGE_VAL and HUGE_VALF, which a host header spells with compiler
/// builtins NVRTC lacks: in code and as initializers of `constexpr`, `__constant__` and
/// `__device__` variables. `f[i]` is +inf above 0.75, -HUGE_VALF above 0.5, NAN above 0.25, else
/// `x[i]`; `d[i]` is HUGE_VAL above 0.5, else `x[i]`.
#[kernel(
    r#"
#include <math.h>
constexpr float k_inf = INFINITY;
__constant__ double huge = HUGE_VAL;
__device__ float nan_init = NAN;
__global__ void math_constants(const float *x, float *f, double *d, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v = x[i];
        f[i] = v > 0.75f ? k_inf : v > 0.5f ? -HUGE_VALF : v > 0.25f ? nan_init : v;
        d[i] = v > 0.5f ? huge : (isinf(INFINITY) && isnan(NAN) ? (double)v : 0.0);
    }
}"#
)]
pub fn math_constants(#[In] x: &[f32], #[Out] f: &mut [f32], #[Out] d: &mut [f64], n: i32);

/// Kernel templates in one module, as in a real kernel file: `instantiate` on the module makes
/// each generic `fn` for every type listed, and the plain kernel stays plain.
#[kernel(
    r#"
template <typename T>
__global__ void axpby(T a, const T *x, T b, T *y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + b * y[i];
}
template <typename T>
__global__ void square_sum(const T *x, T *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = x[i] * x[i] + out[i];
}
__global__ void fill(int *c, int v, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = v;
}"#,
    instantiate = [f32, f64]
)]
pub mod templates {
    fn axpby<T>(a: T, #[In] x: &[T], b: T, #[InOut] y: &mut [T], n: i32);
    fn square_sum<T>(#[In] x: &[T], #[InOut] out: &mut [T], n: i32);
    fn fill(#[Out] c: &mut [i32], v: i32, n: i32);
}

/// Device printf, for the stdout capture test.
#[kernel(
    r#"
#include <cstdio>
__global__ void say(int tag, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) printf("gpu-printf tag=%d thread=%d square=%d\n", tag, i, i * i);
}"#
)]
pub fn say(tag: i32, n: i32);

/// Two sources linked into one module; `parent` (first source) launches `child` (second).
#[kernel(sources = [r#"
extern "C" __global__ void child(float *x, float k, int n);
extern "C" __global__ void parent(float *x, float k, int n) {
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        child<<<(n + 255) / 256, 256>>>(x, k, n);
    }
}"#, r#"
__device__ float step(float v, float k) { return v * k + 1.0f; }
extern "C" __global__ void child(float *x, float k, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = step(x[i], k);
}"#])]
pub mod dynpar {
    fn parent(x: &mut [f32], k: f32, n: i32);
    fn child(x: &mut [f32], k: f32, n: i32);
}

/// 4000 ints of static shared memory (16000 bytes): reverses each 4000-element chunk.
#[kernel(
    r#"
__global__ void reverse4000(const int *in, int *out) {
    __shared__ int s[4000];
    const int *src = in + blockIdx.x * 4000;
    for (int i = threadIdx.x; i < 4000; i += blockDim.x) s[i] = src[i];
    __syncthreads();
    for (int i = threadIdx.x; i < 4000; i += blockDim.x) out[blockIdx.x * 4000 + i] = s[3999 - i] * 2;
}"#
)]
pub fn reverse4000(input: &[i32], out: &mut [i32]);

/// Dynamic shared memory of whatever size the launch asks for: reverses each `m`-float chunk.
#[kernel(
    r#"
__global__ void reverse_dyn(const float *in, float *out, int m) {
    extern __shared__ float buf[];
    const float *src = in + (size_t)blockIdx.x * m;
    for (int i = threadIdx.x; i < m; i += blockDim.x) buf[i] = src[i];
    __syncthreads();
    for (int i = threadIdx.x; i < m; i += blockDim.x) out[(size_t)blockIdx.x * m + i] = buf[m - 1 - i] + 1.0f;
}"#
)]
pub fn reverse_dyn(input: &[f32], out: &mut [f32], m: i32);

/// llm.c's `layernorm_forward_kernel3` (cooperative groups), declared from its file as written:
/// the file also holds its launchers (`<<<…>>>`), a CPU reference and `main()`, and includes
/// `<stdio.h>`, `<stdlib.h>`, `<cuda_runtime.h>` and, through `common.h`, `<cublas_v2.h>`. Its
/// device part is compiled (issue 42, part 7).
#[kernel(file = "tests/realworld/llm.c/dev/cuda/layernorm_forward.cu")]
pub fn layernorm_forward_kernel3(
    out: &mut [f32],
    mean: &mut [f32],
    rstd: &mut [f32],
    inp: &[f32],
    weight: &[f32],
    bias: &[f32],
    n: i32,
    c: i32,
);
