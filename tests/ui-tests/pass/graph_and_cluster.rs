// Graph capture, explicit building, typed node updates and cluster / cooperative handles
// compile (nothing is launched: no GPU needed).
use gpu_runtime::launch::{Capture, GraphBuffer, GraphBuilder, GraphInput};
use gpu_runtime::{kernel, Context, Stream};

#[kernel(r#"__global__ void axpy(float *y, const float *x, float a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] += a * x[i];
}"#)]
fn axpy(y: &mut [f32], #[len = n] x: &[f32], a: f32, n: i32);

#[kernel(cluster = (2, 1, 1), r#"__global__ void pairs(float *y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = 1.0f;
}"#)]
fn pairs(y: &mut [f32], n: i32);

#[kernel(cooperative, r#"__global__ void coop(float *y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = 1.0f;
}"#)]
fn coop(y: &mut [f32], n: i32);

#[allow(dead_code)]
fn run(ctx: &Context) -> gpu_runtime::Result<()> {
    let k = axpy::prepare(ctx)?;
    let x = ctx.to_device(&[1.0f32; 256])?;
    let mut y = ctx.alloc_zeros::<f32>(256)?;
    let xg = GraphInput::new(&x);
    let mut yg = GraphBuffer::new(&mut y);
    let mut cap = Capture::begin(ctx)?;
    let node = k.capture(&mut cap, 1, 256, &mut yg, &xg, 2.0, 256)?;
    k.capture(&mut cap, 1, 256, &mut yg, &xg, 2.0, 256)?;
    cap.memset_d32(&mut yg, 0, 16)?;
    let mut exec = cap.end()?.instantiate()?;
    k.update_node(&mut exec, node, 1, 256, &mut yg, &xg, 3.0, 256)?;
    exec.launch(&Stream::new(ctx)?)?;

    let mut b = GraphBuilder::new(ctx)?;
    let n0 = k.graph_node(&mut b, &[], 1, 256, &mut yg, &xg, 1.0, 256)?;
    b.memcpy_dtod(&[n0], &mut yg, &xg)?;
    drop(b.build());

    let _ = pairs::prepare(ctx)?;
    let _ = coop::prepare(ctx)?;
    let _ = k.with_cluster((2, 1, 1))?.cooperative()?;
    Ok(())
}

fn main() {}
