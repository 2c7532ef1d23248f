//! An instance gives no more template arguments than the template takes.
use gpu_runtime::kernel;

#[kernel(r#"
template <typename T> __global__ void fill(T *x, T v, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = v;
}
"#, instantiate = [f32, (f32, i32)])]
fn fill<T>(x: &mut [T], v: T, n: i32);

fn main() {}
