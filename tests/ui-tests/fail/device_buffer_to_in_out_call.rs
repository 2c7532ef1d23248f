// Device buffers passed to the convenience call for `#[In]` and `#[Out]` parameters, which copy
// host data: device memory goes to `prepared_call`.
use gpu_runtime::{kernel, Context, DeviceBuffer};

#[kernel(r#"__global__ void scale(const float *x, float *y, float s, int n) {}"#)]
fn scale(#[In] x: &[f32], #[Out] y: &mut [f32], s: f32, n: i32);

fn launch(ctx: &Context, x: &DeviceBuffer<f32>, y: &mut DeviceBuffer<f32>) -> gpu_runtime::Result<()> {
    scale(ctx, (1,), (256,), x, y, 2.0, 256)
}

fn main() {}
