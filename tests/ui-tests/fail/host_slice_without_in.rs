// Host data passed to the convenience call for parameters marked neither `#[In]` nor `#[Out]`:
// without a mark, the call takes device memory.
use gpu_runtime::{kernel, Context};

#[kernel(r#"__global__ void scale(const float *x, float *y, float s, int n) {}"#)]
fn scale(x: &[f32], y: &mut [f32], s: f32, n: i32);

fn launch(ctx: &Context, x: &[f32], y: &mut [f32]) -> gpu_runtime::Result<()> {
    scale(ctx, (1,), (256,), x, y, 2.0, 256)
}

fn main() {}
