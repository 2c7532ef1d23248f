//! `instantiate` on a module: each generic `fn` is made for every type listed, beside a plain
//! kernel of the same source.
use gpu_runtime::{kernel, Context, DeviceBuffer};

#[kernel(r#"
template <typename T>
__global__ void scale(T *x, T a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] *= a;
}
template <typename T>
__global__ void copy(const T *x, T *y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i];
}
__global__ void count(int *c) {}
"#, instantiate = [f32, double])]
mod ops {
    fn scale<T>(#[InOut] x: &mut [T], a: T, n: i32);
    pub fn copy<T>(x: &[T], y: &mut [T], n: i32);
    fn count(c: &mut [i32]);
}

#[allow(dead_code)]
fn launch(ctx: &Context, x: &mut Vec<f64>, xd: &DeviceBuffer<f32>, yd: &mut DeviceBuffer<f32>) -> gpu_runtime::Result<()> {
    ops::scale::<f64>(ctx, (1,), (256,), x, 2.0, 256)?;
    ops::copy::prepare::<f32>(ctx)?.prepared_call((1,), (256,), xd, yd, 256)?;
    let _ = ops::count::prepare;
    Ok(())
}

fn main() {}
