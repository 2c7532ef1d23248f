// The generated `call_future` and `call_future_on` are futures, awaited with any executor; the
// future is `Send` when its arguments are, so a multi-threaded runtime may move it (nothing is
// launched: no GPU needed).
use std::future::Future;

use gpu_runtime::{kernel, Context, Stream};

#[kernel(r#"__global__ void axpy(float a, const float *x, float *y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] += a * x[i];
}"#)]
fn axpy(a: f32, #[In] x: &[f32], #[InOut] y: &mut [f32], n: i32);

#[kernel(r#"__global__ void fill(float *y, float v, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = v;
}"#)]
fn fill(#[Out] y: &mut [f32], v: f32, n: i32);

#[kernel(r#"__global__ void scale(float *y, float a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] *= a;
}"#)]
fn scale(y: &mut [f32], a: f32, n: i32);

fn send<F: Future<Output = gpu_runtime::Result<()>> + Send>(f: F) -> F {
    f
}

#[allow(dead_code)]
async fn run(ctx: &Context, stream: &Stream) -> gpu_runtime::Result<()> {
    let (x, mut y) = (vec![1.0f32; 256], vec![0.0f32; 256]);
    let k = axpy::prepare(ctx)?;
    k.call_future(1, 256, 2.0, &x, &mut y, 256).await?;
    send(k.call_future_on(1u64, 256usize, stream, 2.0, &x, &mut y, 256)).await?;
    send(fill::prepare(ctx)?.call_future(1, 256, &mut y, 3.0, 256)).await?;
    // Nothing marked: the prepared calls, awaited.
    let mut d = ctx.to_device(&y)?;
    scale::prepare(ctx)?.call_future(1, 256, &mut d, 0.5, 256).await?;
    scale::prepare(ctx)?.call_future_on(1, 256, stream, &mut d, 0.5, 256).await?;
    // The names these had before (`_async` is PyCUDA's "queued on a stream" now): code
    // written against them still builds, with no warning (`deny` below).
    #[deny(deprecated)]
    {
        k.call_async(1, 256, 2.0, &x, &mut y, 256).await?;
        send(k.call_async_on(1, 256, stream, 2.0, &x, &mut y, 256)).await?;
        stream.synchronize_async()?.await?;
        d.to_host_async(stream)?.await?;
    }
    Ok(())
}

fn main() {}
