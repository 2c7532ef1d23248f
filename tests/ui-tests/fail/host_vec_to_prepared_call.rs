// A `Vec` passed to `prepared_call`, which launches on device memory only.
use gpu_runtime::{kernel, Context};

#[kernel(r#"__global__ void scale(const float *x, float *y, float s, int n) {}"#)]
fn scale(#[In] x: &[f32], #[Out] y: &mut [f32], s: f32, n: i32);

fn launch(ctx: &Context, x: Vec<f32>, y: &mut gpu_runtime::DeviceBuffer<f32>) -> gpu_runtime::Result<()> {
    let k = scale::prepare(ctx)?;
    k.prepared_call((1,), (256,), &x, y, 2.0, 256)
}

fn main() {}
