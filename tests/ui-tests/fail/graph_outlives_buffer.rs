// A graph keeps using the buffers it was captured with, at every launch: a buffer must outlive
// every graph that uses it.
use gpu_runtime::launch::{Capture, GraphBuffer};
use gpu_runtime::{kernel, Context, Stream};

#[kernel(r#"__global__ void fill(float *y, float v, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = v;
}"#)]
fn fill(y: &mut [f32], v: f32, n: i32);

fn main() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let k = fill::prepare(&ctx)?;
    let mut cap = Capture::begin(&ctx)?;
    {
        let mut y = ctx.alloc_zeros::<f32>(256)?;
        let mut yg = GraphBuffer::new(&mut y);
        k.capture(&mut cap, 1, 256, &mut yg, 1.0, 256)?;
    }
    let mut exec = cap.end()?.instantiate()?;
    exec.launch(&Stream::new(&ctx)?)?;
    Ok(())
}
