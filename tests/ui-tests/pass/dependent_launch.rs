// A kernel's typed dependent-launch handle (`unsafe`: the kernel waits in every thread)
// launches on streams and in graphs with the kernel's own typed calls (nothing is launched:
// no GPU needed).
use gpu_runtime::launch::{Capture, GraphBuffer, GraphBuilder, GraphInput};
use gpu_runtime::{kernel, Context, Stream};

#[kernel(r#"
#include <gpu_runtime/graph.h>
__global__ void link(float *y, const float *x, float a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    cudaGridDependencySynchronize();
    if (i < n) y[i] = a * x[i] + 1.0f;
    cudaTriggerProgrammaticLaunchCompletion();
}"#)]
fn link(y: &mut [f32], #[len = n] x: &[f32], a: f32, n: i32);

#[allow(dead_code)]
fn run(ctx: &Context) -> gpu_runtime::Result<()> {
    // SAFETY: `link` calls cudaGridDependencySynchronize() in every thread, first.
    let k: link::Kernel = unsafe { link::prepare(ctx)?.dependent_launch() }?;
    let x = ctx.to_device(&[1.0f32; 256])?;
    let mut y = ctx.alloc_zeros::<f32>(256)?;
    let stream = Stream::new(ctx)?;
    k.prepared_async_call(1, 256, &stream, &mut y, &x, 2.0, 256)?;
    let xg = GraphInput::new(&x);
    let mut yg = GraphBuffer::new(&mut y);
    let mut cap = Capture::begin(ctx)?;
    k.capture(&mut cap, 1, 256, &mut yg, &xg, 2.0, 256)?;
    drop(cap.end()?);
    let mut b = GraphBuilder::new(ctx)?;
    let n0 = k.graph_node(&mut b, &[], 1, 256, &mut yg, &xg, 1.0, 256)?;
    k.graph_node(&mut b, &[n0], 1, 256, &mut yg, &xg, 1.0, 256)?;
    drop(b.build());
    Ok(())
}

fn main() {}
