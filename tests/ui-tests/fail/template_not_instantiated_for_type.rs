//! Calling a template instantiation that `instantiate` does not list.
use gpu_runtime::{kernel, Context};

#[kernel(r#"
template <typename T> __global__ void fill(T *x, T v, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = v;
}
"#, instantiate = [f32, f64])]
fn fill<T>(x: &mut [T], v: T, n: i32);

fn main() {
    let ctx: Context = unimplemented!();
    let _ = fill::prepare::<i32>(&ctx);
}
