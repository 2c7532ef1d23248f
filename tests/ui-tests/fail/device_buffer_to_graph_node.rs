// Device buffers passed to a graph method directly: graphs take the tokens that hold the
// buffers' borrows for the graph's lifetime (GraphInput, GraphBuffer).
use gpu_runtime::launch::Capture;
use gpu_runtime::{kernel, Context};

#[kernel(r#"__global__ void axpy(float *y, const float *x, float a, int n) {}"#)]
fn axpy(y: &mut [f32], x: &[f32], a: f32, n: i32);

fn run(ctx: &Context) -> gpu_runtime::Result<()> {
    let k = axpy::prepare(ctx)?;
    let x = ctx.to_device(&[1.0f32; 256])?;
    let mut y = ctx.alloc_zeros::<f32>(256)?;
    let mut cap = Capture::begin(ctx)?;
    k.capture(&mut cap, 1, 256, &mut y, &x, 2.0, 256)?;
    Ok(())
}

fn main() {}
