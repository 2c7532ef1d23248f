// A buffer the graph only reads is borrowed shared: its token cannot be passed where the
// kernel writes.
use gpu_runtime::launch::{Capture, GraphInput};
use gpu_runtime::{kernel, Context};

#[kernel(r#"__global__ void fill(float *y, float v, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = v;
}"#)]
fn fill(y: &mut [f32], v: f32, n: i32);

fn main() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let k = fill::prepare(&ctx)?;
    let y = ctx.alloc_zeros::<f32>(256)?;
    let mut yg = GraphInput::new(&y);
    let mut cap = Capture::begin(&ctx)?;
    k.capture(&mut cap, 1, 256, &mut yg, 1.0, 256)?;
    Ok(())
}
