//! What the test crates share: the default context, the names a child process runs a test by,
//! and the kernels of the compile tests (CI, real NVRTC) and the GPU tests.
#![allow(dead_code)]

use gpu_runtime::cudarc::driver::sys;
use gpu_runtime::{kernel, Device};

#[kernel(
    r#"
__global__ void axpy(float a, const float *x, float *y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}"#
)]
pub fn axpy(a: f32, #[In] x: &[f32], #[InOut] y: &mut [f32], n: i32);

/// y = a * x + b for every C scalar spelling, each with its one Rust type.
#[kernel(r#"
// NVRTC has no <stdint.h> without the CUDA toolkit's headers; these are its LP64 definitions.
typedef signed char int8_t;
typedef unsigned short uint16_t;
typedef unsigned int uint32_t;
typedef long long int64_t;
__global__ void affine_signed_char(const signed char *x, signed char *y, signed char a, signed char b, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = (signed char)(a * x[i] + b);
}
__global__ void affine_unsigned_char(const unsigned char *x, unsigned char *y, unsigned char a, unsigned char b, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = (unsigned char)(a * x[i] + b);
}
__global__ void affine_short(const short *x, short *y, short a, short b, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = (short)(a * x[i] + b);
}
__global__ void affine_unsigned_short(const unsigned short *x, unsigned short *y, unsigned short a, unsigned short b, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = (unsigned short)(a * x[i] + b);
}
__global__ void affine_int(const int *x, int *y, int a, int b, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = (int)(a * x[i] + b);
}
__global__ void affine_unsigned_int(const unsigned int *x, unsigned int *y, unsigned int a, unsigned int b, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = (unsigned int)(a * x[i] + b);
}
__global__ void affine_long(const long *x, long *y, long a, long b, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = (long)(a * x[i] + b);
}
__global__ void affine_unsigned_long(const unsigned long *x, unsigned long *y, unsigned long a, unsigned long b, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = (unsigned long)(a * x[i] + b);
}
__global__ void affine_long_long(const long long *x, long long *y, long long a, long long b, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = (long long)(a * x[i] + b);
}
__global__ void affine_unsigned_long_long(const unsigned long long *x, unsigned long long *y, unsigned long long a, unsigned long long b, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = (unsigned long long)(a * x[i] + b);
}
__global__ void affine_size_t(const size_t *x, size_t *y, size_t a, size_t b, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = (size_t)(a * x[i] + b);
}
__global__ void affine_ptrdiff_t(const ptrdiff_t *x, ptrdiff_t *y, ptrdiff_t a, ptrdiff_t b, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = (ptrdiff_t)(a * x[i] + b);
}
__global__ void affine_float(const float *x, float *y, float a, float b, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = (float)(a * x[i] + b);
}
__global__ void affine_double(const double *x, double *y, double a, double b, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = (double)(a * x[i] + b);
}
__global__ void affine_int8_t(const int8_t *x, int8_t *y, int8_t a, int8_t b, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = (int8_t)(a * x[i] + b);
}
__global__ void affine_uint16_t(const uint16_t *x, uint16_t *y, uint16_t a, uint16_t b, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = (uint16_t)(a * x[i] + b);
}
__global__ void affine_int64_t(const int64_t *x, int64_t *y, int64_t a, int64_t b, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = (int64_t)(a * x[i] + b);
}
__global__ void affine_uint32_t(const uint32_t *x, uint32_t *y, uint32_t a, uint32_t b, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = (uint32_t)(a * x[i] + b);
}
"#)]
pub mod affine {
    fn affine_signed_char(#[In] x: &[i8], #[Out] y: &mut [i8], a: i8, b: i8, n: i32);
    fn affine_unsigned_char(#[In] x: &[u8], #[Out] y: &mut [u8], a: u8, b: u8, n: i32);
    fn affine_short(#[In] x: &[i16], #[Out] y: &mut [i16], a: i16, b: i16, n: i32);
    fn affine_unsigned_short(#[In] x: &[u16], #[Out] y: &mut [u16], a: u16, b: u16, n: i32);
    fn affine_int(#[In] x: &[i32], #[Out] y: &mut [i32], a: i32, b: i32, n: i32);
    fn affine_unsigned_int(#[In] x: &[u32], #[Out] y: &mut [u32], a: u32, b: u32, n: i32);
    fn affine_long(#[In] x: &[i64], #[Out] y: &mut [i64], a: i64, b: i64, n: i32);
    fn affine_unsigned_long(#[In] x: &[u64], #[Out] y: &mut [u64], a: u64, b: u64, n: i32);
    fn affine_long_long(#[In] x: &[i64], #[Out] y: &mut [i64], a: i64, b: i64, n: i32);
    fn affine_unsigned_long_long(#[In] x: &[u64], #[Out] y: &mut [u64], a: u64, b: u64, n: i32);
    fn affine_size_t(#[In] x: &[usize], #[Out] y: &mut [usize], a: usize, b: usize, n: i32);
    fn affine_ptrdiff_t(#[In] x: &[isize], #[Out] y: &mut [isize], a: isize, b: isize, n: i32);
    fn affine_float(#[In] x: &[f32], #[Out] y: &mut [f32], a: f32, b: f32, n: i32);
    fn affine_double(#[In] x: &[f64], #[Out] y: &mut [f64], a: f64, b: f64, n: i32);
    fn affine_int8_t(#[In] x: &[i8], #[Out] y: &mut [i8], a: i8, b: i8, n: i32);
    fn affine_uint16_t(#[In] x: &[u16], #[Out] y: &mut [u16], a: u16, b: u16, n: i32);
    fn affine_int64_t(#[In] x: &[i64], #[Out] y: &mut [i64], a: i64, b: i64, n: i32);
    fn affine_uint32_t(#[In] x: &[u32], #[Out] y: &mut [u32], a: u32, b: u32, n: i32);
}

/// Every scalar kind in one signature, echoed back widened so the host can check each value
/// arrived intact (width, signedness, order).
#[kernel(
    r#"
extern "C" __global__ void echo_scalars(signed char a, unsigned char b, short c, unsigned short d,
        int e, unsigned int f, long long g, unsigned long long h, float x, double y, bool t,
        size_t s, ptrdiff_t p, long long *ints, double *reals) {
    ints[0] = a; ints[1] = b; ints[2] = c; ints[3] = d; ints[4] = e; ints[5] = f;
    ints[6] = g; ints[7] = (long long)h; ints[8] = t ? 1 : 0; ints[9] = (long long)s; ints[10] = p;
    reals[0] = x; reals[1] = y;
}"#
)]
pub fn echo_scalars(
    a: i8,
    b: u8,
    c: i16,
    d: u16,
    e: i32,
    f: u32,
    g: i64,
    h: u64,
    x: f32,
    y: f64,
    t: bool,
    s: usize,
    p: isize,
    ints: &mut [i64],
    reals: &mut [f64],
);

/// A 2D grid over a row-major matrix.
#[kernel(
    r#"
__global__ void __launch_bounds__(256) add2d(const float *__restrict__ a, const float *__restrict__ b,
                                             float *__restrict__ c, int width, int height) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < width && y < height) c[y * width + x] = a[y * width + x] - 2.0f * b[y * width + x];
}"#
)]
pub fn add2d(#[In] a: &[f32], #[In] b: &[f32], #[Out] c: &mut [f32], width: i32, height: i32);

/// Reverses each block's chunk through dynamic shared memory (`extern __shared__`).
#[kernel(
    r#"
__global__ void block_reverse(const float *in, float *out, int n) {
    extern __shared__ float tile[];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    tile[threadIdx.x] = i < n ? in[i] : 0.0f;
    __syncthreads();
    int j = blockIdx.x * blockDim.x + (blockDim.x - 1 - threadIdx.x);
    if (j < n) out[j] = tile[threadIdx.x];
}"#
)]
pub fn block_reverse(#[In] input: &[f32], #[Out] output: &mut [f32], n: i32);

/// A struct passed by value.
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C)]
pub struct Affine {
    pub scale: f32,
    pub offset: f32,
    pub stride: i32,
}
// SAFETY: repr(C) with the same fields as the C struct below; any bits are a valid Affine.
unsafe impl gpu_runtime::DeviceRepr for Affine {}

#[kernel(
    r#"
struct Affine { float scale; float offset; int stride; };
__global__ void apply_affine(Affine p, const float *x, float *y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i * p.stride < n) y[i] = p.scale * x[i * p.stride] + p.offset;
}"#
)]
pub fn apply_affine(p: Affine, #[In] x: &[f32], #[Out] y: &mut [f32], n: i32);

/// Two kernels from one source, sharing one compiled module and a `__device__` helper.
#[kernel(
    r#"
__device__ float square(float v) { return v * v; }

extern "C" {
__global__ void squares(const float *x, float *y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = square(x[i]);
}
}

__global__ void sum_rows(const float *m, float *sums, int rows, int cols) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    float s = 0.0f;
    for (int c = 0; c < cols; ++c) s += m[r * cols + c];
    sums[r] = s;
}
"#
)]
pub mod pair {
    fn squares(#[In] x: &[f32], #[Out] y: &mut [f32], n: i32);
    fn sum_rows(#[In] m: &[f32], #[Out] sums: &mut [f32], rows: i32, cols: i32);
}

/// A source in a file next to Cargo.toml.
#[kernel(file = "kernels/scale.cu", name = "scale_in_place")]
pub fn scale(v: &mut [f64], factor: f64, n: u32);

/// Allocates 4 bytes in the context `raw` straight through the driver, bypassing this crate's
/// refusal, and returns the driver's answer (0 for success).
pub fn raw_alloc_in(raw: sys::CUcontext) -> u32 {
    let mut ptr = 0;
    // SAFETY: `raw` is a live context (its handle is held by the caller); valid out-pointer.
    unsafe {
        let set = sys::cuCtxSetCurrent(raw);
        if set != sys::CUresult::CUDA_SUCCESS {
            return set as u32;
        }
        let code = sys::cuMemAlloc_v2(&mut ptr, 4);
        if code == sys::CUresult::CUDA_SUCCESS {
            sys::cuMemFree_v2(ptr);
        }
        code as u32
    }
}

/// Creates a context on `dev` straight through the driver and allocates in it; returns the
/// first failure's code (0 when both work).
pub fn raw_new_context_alloc(dev: Device) -> u32 {
    let mut raw = std::ptr::null_mut();
    // SAFETY: valid out-pointer; null creation parameters are allowed.
    let code = unsafe { sys::cuCtxCreate_v4(&mut raw, std::ptr::null_mut(), 0, dev.raw()) };
    if code != sys::CUresult::CUDA_SUCCESS {
        return code as u32;
    }
    let code = raw_alloc_in(raw);
    // SAFETY: made above, used by nothing else.
    unsafe {
        sys::cuCtxDestroy_v2(raw);
    }
    code
}

/// The default context: every test that calls this needs a GPU (it is ignored without one).
pub fn ctx() -> gpu_runtime::Context {
    gpu_runtime::Context::default().expect("these tests need a CUDA GPU")
}

/// The name libtest knows the test `name` of a module by, given that module's
/// `module_path!()`: its path below the crate's root (`soundness::name`), which a child process
/// that runs one test of this binary again must pass with `--exact`.
pub fn test_path(module_path: &str, name: &str) -> String {
    match module_path.split_once("::") {
        Some((_crate, module)) => format!("{module}::{name}"),
        None => name.to_owned(),
    }
}
