// A buffer a graph writes is the graph's until the graph is dropped: the host cannot read it
// (or launch other work writing it) in between, since a launch of the graph may be writing it.
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
    let stream = Stream::new(&ctx)?;
    let mut y = ctx.alloc_zeros::<f32>(256)?;
    let mut yg = GraphBuffer::new(&mut y);
    let mut cap = Capture::begin(&ctx)?;
    k.capture(&mut cap, 1, 256, &mut yg, 1.0, 256)?;
    let mut exec = cap.end()?.instantiate()?;
    exec.launch(&stream)?;
    let host = y.to_vec()?;
    exec.launch(&stream)?;
    drop(host);
    Ok(())
}
