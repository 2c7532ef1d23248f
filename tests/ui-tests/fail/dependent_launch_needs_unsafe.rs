// A dependent launch runs beside the kernel before it until the kernel calls
// cudaGridDependencySynchronize(), which the macro cannot check: the typed handle is made only
// in `unsafe` code, whose author promises it.
use gpu_runtime::{kernel, Context};

#[kernel(r#"__global__ void fill(float *y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = 1.0f;
}"#)]
fn fill(y: &mut [f32], n: i32);

fn main() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let k = fill::prepare(&ctx)?.dependent_launch()?;
    let mut y = ctx.alloc_zeros::<f32>(256)?;
    k.prepared_call(1, 256, &mut y, 256)
}
