// A `Vec` passed for a `T*` parameter of `prepared_async_call`, which takes device memory only.
use gpu_runtime::{kernel, Context, Stream};

#[kernel(r#"__global__ void scale(const float *x, float *y, float s, int n) {}"#)]
fn scale(x: &[f32], y: &mut [f32], s: f32, n: i32);

fn launch(ctx: &Context, stream: &Stream, x: &gpu_runtime::DeviceBuffer<f32>, mut y: Vec<f32>) -> gpu_runtime::Result<()> {
    let k = scale::prepare(ctx)?;
    k.prepared_async_call((1,), (256,), stream, x, &mut y, 2.0, 256)
}

fn main() {}
