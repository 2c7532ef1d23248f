// `update_node` is typed like the kernel: a wrong argument type does not compile.
use gpu_runtime::launch::{Capture, GraphBuffer};
use gpu_runtime::{kernel, Context};

#[kernel(r#"__global__ void fill(float *y, float v, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = v;
}"#)]
fn fill(y: &mut [f32], v: f32, n: i32);

fn main() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let k = fill::prepare(&ctx)?;
    let mut y = ctx.alloc_zeros::<f32>(256)?;
    let mut yg = GraphBuffer::new(&mut y);
    let mut cap = Capture::begin(&ctx)?;
    let node = k.capture(&mut cap, 1, 256, &mut yg, 1.0, 256)?;
    let mut exec = cap.end()?.instantiate()?;
    k.update_node(&mut exec, node, 1, 256, &mut yg, 2.0f64, 256)?;
    Ok(())
}
