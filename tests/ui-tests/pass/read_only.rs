//! A pointer the C source leaves writable but the kernel only reads (`float *x`), taken by
//! shared borrow because the Rust signature says `#[read_only]`: in the prepared calls, the
//! convenience call with #[In] host data, and a module.
use gpu_runtime::{kernel, Context, DeviceBuffer, Stream};

#[kernel(r#"
__global__ void axpy(float a, float *x, float *y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] += a * x[i];
}"#)]
fn axpy(a: f32, #[In] #[read_only] x: &[f32], #[InOut] y: &mut [f32], n: i32);

#[kernel(r#"
__global__ void copy(float *dst, float *src, int n) { if (threadIdx.x < n) dst[threadIdx.x] = src[threadIdx.x]; }
__global__ void add(float *dst, float *a, float *b, int n) { if (threadIdx.x < n) dst[threadIdx.x] = a[threadIdx.x] + b[threadIdx.x]; }
"#)]
mod ops {
    fn copy(dst: &mut [f32], #[read_only] src: &[f32], n: i32);
    fn add(#[Out] dst: &mut [f32], #[read_only] #[In] a: &[f32], #[In] #[read_only] b: &[f32], n: i32);
}

fn uses(ctx: &Context, stream: &Stream) -> gpu_runtime::Result<()> {
    let x: DeviceBuffer<f32> = ctx.to_device(&[1.0, 2.0])?;
    let mut y: DeviceBuffer<f32> = ctx.alloc_zeros(2)?;
    let k = axpy::prepare(ctx)?;
    // Shared borrows of `x`: two launches may read it while it is borrowed elsewhere.
    let x_again = &x;
    k.prepared_call(1, 2, 2.0, &x, &mut y, 2)?;
    k.prepared_async_call(1, 2, stream, 2.0, x_again, &mut y, 2)?;
    axpy(ctx, 1, 2, 0.5, &[1.0f32, 2.0], &mut [0.0f32; 2], 2)?;
    ops::copy::prepare(ctx)?.prepared_call(1, 2, &mut y, &x, 2)?;
    ops::add(ctx, 1, 2, &mut [0.0f32; 2], &[1.0f32; 2], &vec![2.0f32; 2], 2)?;
    Ok(())
}

fn main() {
    let _ = uses;
}
