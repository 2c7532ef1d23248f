//! The fn form with every C scalar spelling and its one Rust type.
use gpu_runtime::kernel;

#[kernel(r#"
typedef signed char int8_t;
typedef unsigned char uint8_t;
typedef short int16_t;
typedef unsigned short uint16_t;
typedef int int32_t;
typedef unsigned int uint32_t;
typedef long long int64_t;
typedef unsigned long long uint64_t;
__global__ void every_scalar(
    char a, signed char b, unsigned char c, int8_t d, uint8_t e,
    short f, unsigned short g, int16_t h, uint16_t i,
    int j, unsigned int k, unsigned l, int32_t m, uint32_t n,
    long o, long long p, unsigned long q, unsigned long long r, int64_t s, uint64_t t,
    size_t u, ptrdiff_t v,
    float w, double x, bool y,
    const float *in, float *out, const double xs[], void *raw) {}
"#)]
fn every_scalar(
    a: i8, b: i8, c: u8, d: i8, e: u8,
    f: i16, g: u16, h: i16, i: u16,
    j: i32, k: u32, l: u32, m: i32, n: u32,
    o: i64, p: i64, q: u64, r: u64, s: i64, t: u64,
    u: usize, v: isize,
    w: f32, x: f64, y: bool,
    #[In] input: &[f32], #[Out] out: &mut [f32], xs: &[f64], raw: &mut [u8],
);

fn main() {
    // Type-check the generated API without running it.
    let _ = every_scalar::prepare;
}
