//! Global array bounds written with the source's own constants get typed accessors; a bound
//! the macro cannot work out gets an accessor that is deprecated (a warning where it is used)
//! and returns an error saying why.
use gpu_runtime::{kernel, Context, Global};

#[kernel(r#"
#define RADIUS 4
constexpr int ROWS = 2;
__constant__ float taps[2 * RADIUS + 1];
__device__ int table[ROWS][RADIUS];
__device__ int unknown[sizeof(int2) * 2];
__global__ void convolve(float *x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = taps[i % (2 * RADIUS + 1)] + table[1][3] + unknown[0];
}
"#)]
fn convolve(x: &mut [f32], n: i32);

fn typed(ctx: &Context) -> gpu_runtime::Result<()> {
    let _: Global<[f32; 9]> = convolve::globals::taps(ctx)?;
    let _: [[i32; 4]; 2] = convolve::globals::table(ctx)?.get()?;
    #[allow(deprecated)]
    let why = convolve::globals::unknown(ctx).unwrap_err().to_string();
    assert!(why.contains("unknown[sizeof ( int2 ) * 2]"), "{why}");
    Ok(())
}

fn main() {
    let _ = typed;
}
