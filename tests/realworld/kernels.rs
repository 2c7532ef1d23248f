//! Kernels written as for nvcc: vector types, structs, standard headers, several linked
//! sources, large shared memory. Shared by realworld_compile.rs (NVRTC) and realworld_run.rs.
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
#[kernel(file = "realworld/llm.c/dev/cuda/layernorm_forward.cu")]
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
/// Pointers that may be null, as `Option`s: `y[i] = x[i] * (w ? w[i] : 1) + (b ? b[i] : 0)`,
/// and when `sum` is not null, `sum[0] += y[i]` over all `i`. `w` and `sum` are host data in
/// the convenience call (staged when `Some`), `b` device memory in every call.
#[kernel(
    r#"
__global__ void scale_bias(const float *x, const float *w, const float *b, float *y, float *sum, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v = x[i] * (w ? w[i] : 1.0f) + (b != nullptr ? b[i] : 0.0f);
        y[i] = v;
        if (sum) atomicAdd(sum, v);
    }
}"#
)]
pub fn scale_bias(
    #[In] x: &[f32],
    #[In] w: Option<&[f32]>,
    #[len = n] b: Option<&[f32]>,
    #[Out] y: &mut [f32],
    #[InOut] sum: Option<&mut [f32]>,
    n: i32,
);

/// CUDA's own conversions of `float` to 8-bit floats and back, to compare `Fp8E4M3::from_f32`
/// and `to_f32` (and E5M2's) with: `e4[i]`, `e5[i]` from `x[i]`; `back4[i]`, `back5[i]` from
/// `bits4[i]`, `bits5[i]`.
#[kernel(
    r#"
#include <cuda_fp8.h>
__global__ void fp8_convert(const float *x, __nv_fp8_e4m3 *e4, __nv_fp8_e5m2 *e5,
                            const __nv_fp8_e4m3 *bits4, const __nv_fp8_e5m2 *bits5,
                            float *back4, float *back5, __nv_fp8x2_e4m3 pair, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        e4[i] = __nv_fp8_e4m3(x[i]);
        e5[i] = __nv_fp8_e5m2(x[i]);
        back4[i] = float(bits4[i]);
        back5[i] = float(bits5[i]);
        if (i == 0) back4[n] = float(float2(pair).x) + float(float2(pair).y);
    }
}"#
)]
pub fn fp8_convert(
    x: &[f32],
    e4: &mut [gpu_runtime::types::Fp8E4M3],
    e5: &mut [gpu_runtime::types::Fp8E5M2],
    bits4: &[gpu_runtime::types::Fp8E4M3],
    bits5: &[gpu_runtime::types::Fp8E5M2],
    back4: &mut [f32],
    back5: &mut [f32],
    pair: gpu_runtime::types::Fp8x2E4M3,
    n: i32,
);

/// Templates over values, as llama.cpp's CUDA backend writes its norms: `row_sum` sums each
/// row of an `ncols`-wide matrix (squared, when `squared`) with `block_size` threads.
/// `row_sum<256, true>`: launched with 256 threads a row.
#[kernel(
    r#"
template <int block_size, bool squared>
__global__ void row_sum(const float *x, float *out, int ncols) {
    __shared__ float s[block_size];
    int row = blockIdx.x;
    float acc = 0.0f;
    for (int c = threadIdx.x; c < ncols; c += block_size) {
        float v = x[row * ncols + c];
        acc += squared ? v * v : v;
    }
    s[threadIdx.x] = acc;
    __syncthreads();
    for (int k = block_size / 2; k > 0; k >>= 1) {
        if (threadIdx.x < k) s[threadIdx.x] += s[threadIdx.x + k];
        __syncthreads();
    }
    if (threadIdx.x == 0) out[row] = s[0];
}"#,
    name = "row_sum",
    instantiate = [(256, true)]
)]
pub fn row_sum_sq_256(#[In] x: &[f32], #[Out] out: &mut [f32], ncols: i32);

/// `row_sum<32, false>`, the same template's other instance.
#[kernel(
    r#"
template <int block_size, bool squared>
__global__ void row_sum(const float *x, float *out, int ncols) {
    __shared__ float s[block_size];
    int row = blockIdx.x;
    float acc = 0.0f;
    for (int c = threadIdx.x; c < ncols; c += block_size) {
        float v = x[row * ncols + c];
        acc += squared ? v * v : v;
    }
    s[threadIdx.x] = acc;
    __syncthreads();
    for (int k = block_size / 2; k > 0; k >>= 1) {
        if (threadIdx.x < k) s[threadIdx.x] += s[threadIdx.x + k];
        __syncthreads();
    }
    if (threadIdx.x == 0) out[row] = s[0];
}"#,
    name = "row_sum",
    instantiate = [(32, false)]
)]
pub fn row_sum_32(#[In] x: &[f32], #[Out] out: &mut [f32], ncols: i32);

/// A template over a type and a value: `scaled_copy<float, 128>` and `scaled_copy<double, 64>`,
/// each launched with its `block_size` threads a block.
#[kernel(
    r#"
template <typename T, int block_size>
__global__ void scaled_copy(const T *x, T *y, T a, int n) {
    int i = blockIdx.x * block_size + threadIdx.x;
    if (i < n) y[i] = a * x[i];
}"#,
    instantiate = [(f32, 128), (f64, 64)]
)]
pub fn scaled_copy<T>(#[In] x: &[T], #[Out] y: &mut [T], a: T, n: i32);
