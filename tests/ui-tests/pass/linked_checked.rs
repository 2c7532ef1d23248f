//! A module linked from two sources, checked like a single source: each kernel's signature
//! against the source that declares it (a `const` pointer in the second source is `&[T]`),
//! typed globals from both sources, the typed launches without `unsafe`, the convenience call
//! on a stream, and a kernel of the first source calling a device function of the second.
use gpu_runtime::{kernel, Context, DeviceBuffer, driver::Global, Stream};

#[kernel(sources = [r#"
__constant__ float gain[2];
__device__ float shaped(float v);
extern "C" __global__ void shape(float *y, const float *x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = gain[0] * shaped(x[i]) + gain[1];
}
"#, r#"
__device__ unsigned int calls;
__device__ float shaped(float v) { return v * v; }
extern "C" __global__ void count(const float *x, float limit, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && x[i] > limit) atomicAdd(&calls, 1u);
}
"#])]
mod filters {
    fn shape(#[Out] y: &mut [f32], #[In] x: &[f32], n: i32);
    fn count(x: &[f32], limit: f32, n: i32);
}

#[kernel(sources = [r#"
__device__ float twice(float v);
extern "C" __global__ void doubled(float *x, int n) { if (threadIdx.x < n) x[threadIdx.x] = twice(x[threadIdx.x]); }
"#, r#"
__device__ float twice(float v) { return 2.0f * v; }
"#])]
fn doubled(#[InOut] x: &mut [f32], n: i32);

fn uses(ctx: &Context, stream: &Stream) -> gpu_runtime::Result<()> {
    let gain: Global<[f32; 2]> = filters::globals::gain(ctx)?;
    gain.set([2.0, 1.0])?;
    let calls: Global<u32> = filters::globals::calls(ctx)?;
    calls.set(0)?;
    let x = [1.0f32, -2.0, 3.0];
    let mut y = [0.0f32; 3];
    filters::shape(ctx, 1, 3, &mut y, &x, 3)?;
    filters::shape::prepare(ctx)?.call_on(1, 3, stream, &mut y, &x[..], 3)?;
    let xd: DeviceBuffer<f32> = ctx.to_device(&x)?;
    let count = filters::count::prepare(ctx)?;
    count.prepared_async_call(1, 3, stream, &xd, 0.5, 3)?;
    let _ = count.prepared_timed_call(1, 3, &xd, 0.5, 3)?;
    let _: u32 = calls.get()?;
    doubled(ctx, 1, 3, &mut y, 3)?;
    doubled::prepare(ctx)?.with_shared_mem(0).call_on(1, 3, stream, &mut y, 3)?;
    Ok(())
}

fn main() {
    let _ = uses;
    assert_eq!(filters::shape::source().kernels(), ["shape", "count"]);
}
