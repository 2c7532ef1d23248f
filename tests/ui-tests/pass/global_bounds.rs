//! Global array bounds written with the source's own constants get typed accessors; a bound
//! the macro cannot work out gets an accessor that is deprecated (a warning where it is used)
//! and returns an error saying why. A CUDA vector type is its Rust type; a C struct is the
//! caller's `#[repr(C)]` type, checked by size when looked up.
use gpu_runtime::{kernel, Context, types::Float4, driver::Global};

#[derive(Clone, Copy)]
#[repr(C)]
struct Params {
    scale: f32,
    count: i32,
}
// SAFETY: repr(C) with the C struct's fields; any bits are a valid Params.
unsafe impl gpu_runtime::DeviceRepr for Params {}

#[kernel(r#"
#define RADIUS 4
constexpr int ROWS = 2;
__constant__ float taps[2 * RADIUS + 1];
__device__ int table[ROWS][RADIUS];
__device__ int unknown[sizeof(int2) * 2];
__constant__ float4 corners[2];
struct Params { float scale; int count; };
__constant__ Params params;
__global__ void convolve(float *x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = taps[i % (2 * RADIUS + 1)] + table[1][3] + unknown[0] + corners[1].w + params.scale;
}
"#)]
fn convolve(x: &mut [f32], n: i32);

fn typed(ctx: &Context) -> gpu_runtime::Result<()> {
    let _: Global<[f32; 9]> = convolve::globals::taps(ctx)?;
    let _: [[i32; 4]; 2] = convolve::globals::table(ctx)?.get()?;
    let _: Global<[Float4; 2]> = convolve::globals::corners(ctx)?;
    let _: Global<Params> = convolve::globals::params::<Params>(ctx)?;
    #[allow(deprecated)]
    let e = convolve::globals::unknown(ctx).unwrap_err();
    assert!(
        matches!(e, gpu_runtime::Error::GlobalBoundUnknown { name: "unknown", bound: "sizeof ( int2 ) * 2", .. }),
        "{e}"
    );
    Ok(())
}

fn main() {
    let _ = typed;
}
